// Polyfills for Rust methods that WGSL has no builtin for, written in the
// kernel language itself: the compiler parses these functions like
// `#[helper]`s and lowers each into a module that uses its method. (This
// file is read as text by `lower::polyfill`; it is not compiled by rustc.)
//
// `powi` and integer `pow` square and multiply the way compiler-rt's
// `__powisf2` (what `f32::powi` calls) does, so that the GPU's result
// matches the CPU's bit for bit. Integer overflow wraps, as in a release
// build of the CPU path.

fn powi(pow_base: f32, pow_exp: i32) -> f32 {
    let mut result = 1.0f32;
    let mut square = pow_base;
    let mut bits = pow_exp.abs() as u32;
    loop {
        if bits & 1 != 0 {
            result *= square;
        }
        bits >>= 1u32;
        if bits == 0 {
            break;
        }
        square *= square;
    }
    if pow_exp < 0 { 1.0 / result } else { result }
}

fn pow_i32(pow_base: i32, pow_exp: u32) -> i32 {
    let mut result = 1i32;
    let mut square = pow_base;
    let mut bits = pow_exp;
    loop {
        if bits & 1 != 0 {
            result *= square;
        }
        bits >>= 1u32;
        if bits == 0 {
            break;
        }
        square *= square;
    }
    result
}

fn pow_u32(pow_base: u32, pow_exp: u32) -> u32 {
    let mut result = 1u32;
    let mut square = pow_base;
    let mut bits = pow_exp;
    loop {
        if bits & 1 != 0 {
            result *= square;
        }
        bits >>= 1u32;
        if bits == 0 {
            break;
        }
        square *= square;
    }
    result
}

// `cbrt`: WGSL has no cube root. pow(|x|, 1/3) refined by one Newton step,
// with the sign of x put back (so cbrt(-8.0) is -2.0, where powf gives NaN);
// zeros, infinities and NaN are their own cube roots.
fn cbrt(x: f32) -> f32 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let a = x.abs();
    let r = a.powf(1.0 / 3.0);
    let r = r - (r * r * r - a) / (3.0 * r * r);
    if x < 0.0 { -r } else { r }
}
