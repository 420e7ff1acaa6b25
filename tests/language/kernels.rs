//! Test kernels: together they exercise every construct of the supported
//! subset. Each has a plain-Rust reference in `reference.rs`, generated
//! from its own body when it is one (`kernels_with_references!`, below).

use onekernel::prelude::*;

/// Builtins on a 2-D grid: every value an invocation sees.
#[kernel(workgroup_size = (8, 4))]
pub fn builtins_2d(out: &mut [u32], width: u32) {
    let g = global_id();
    let t = thread_id();
    let b = block_id();
    let d = block_dim();
    let n = grid_dim();
    let height = n.y * d.y;
    let idx = ((g.z * height + g.y) * width as usize + g.x) * 8;
    if g.x < width as usize && idx < out.len() {
        out[idx] = g.x as u32;
        out[idx + 1] = g.y as u32;
        out[idx + 2] = (t.x + t.y * 100) as u32;
        out[idx + 3] = (b.x + b.y * 1000) as u32;
        out[idx + 4] = (d.x * 10 + d.y + d.z * 100) as u32;
        out[idx + 5] = (n.x * 1000 + n.y + n.z * 7) as u32;
        out[idx + 6] = g.z as u32 + t.z as u32 + b.z as u32;
        out[idx + 7] = 1;
    }
}

/// A tiny workgroup, so that a modest grid needs more than 65535 of them
/// (the runtime folds it into 2-D).
#[kernel(workgroup_size = 2)]
pub fn folded_ids(out: &mut [u32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = (block_id().x * 2 + thread_id().x) as u32 ^ (grid_dim().x as u32);
    }
}

#[helper]
pub fn smoothstep(edge0: f32, edge1: f32, x: f32) -> f32 {
    let t = clamp01((x - edge0) / (edge1 - edge0));
    t * t * (3.0 - 2.0 * t)
}

#[helper]
pub fn clamp01(x: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    x.min(1.0)
}

#[helper]
pub fn collatz_steps(mut n: u32) -> u32 {
    let mut steps = 0;
    while n != 1 && steps < 1000 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

/// Helpers, helpers calling helpers, uniform scalars, a `mut` scalar.
#[kernel(workgroup_size = 64)]
pub fn helpers_and_scalars(
    a: &[f32],
    out: &mut [f32],
    steps: &mut [u32],
    lo: f32,
    hi: f32,
    offset: i32,
    mut scale: u32,
) {
    let i = global_id().x;
    if i < a.len() {
        scale += 1;
        out[i] = smoothstep(lo, hi, a[i]) * scale as f32 + offset as f32;
        steps[i] = collatz_steps(i as u32 + 1);
    }
}

#[helper]
pub fn rotated(v: [f32; 8]) -> [f32; 8] {
    let mut r = [0.0f32; 8];
    for j in 0..8 {
        r[j] = v[(j + 1) % 8];
    }
    r
}

#[helper]
pub fn divmod(a: i32, b: i32) -> (i32, i32) {
    if b == 0 {
        (0, 0)
    } else {
        (a.wrapping_div(b), a.wrapping_rem(b))
    }
}

/// Unrolled loops: `#[unroll]` over constant ranges (stepped, inclusive,
/// reversed, nested, a `mut` loop variable), and a small constant loop
/// that indexes an array, unrolled without asking.
#[kernel(workgroup_size = 64)]
pub fn unrolled(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() {
        return;
    }
    const T: usize = 4;
    let mut tile = [[0.0f32; T]; T];
    #[unroll]
    for r in 0..T {
        #[unroll]
        for c in 0..=3 {
            tile[r][c] = a[i] * (r * T + c) as f32;
        }
    }
    let mut s = 0.0f32;
    for k in (0..T).rev() {
        s = s * 0.5 + tile[k][k];
    }
    #[unroll]
    for mut k in (1..8).step_by(3) {
        k += 1;
        s += tile[k % T][(k + 1) % T];
    }
    out[i] = s;
}

/// A helper with an unrolled loop: the kernels that call it get one copy
/// of the body per iteration (no loop in their WGSL, the coefficients in
/// registers); the host function, which the CPU executor and the reference
/// call, keeps the loop.
#[helper]
#[allow(clippy::needless_range_loop)] // the index is the point: it unrolls
pub fn horner4(x: f32) -> f32 {
    let mut c = [0.0f32; 4];
    let mut s = 0.0f32;
    #[unroll]
    for j in 0..4 {
        c[j] = (j * 2 + 1) as f32;
        s = s * x + c[j];
    }
    s
}

/// [`horner4`] of each element.
#[kernel(workgroup_size = 64)]
pub fn unrolled_in_helper(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < a.len() {
        out[i] = horner4(a[i]);
    }
}

/// Local arrays indexed only by constants (in unrolled loops), which the
/// shader holds as one variable per element (`lower/split_arrays.rs`):
/// a non-zero initialiser, vectors and their lanes, nested arrays (zeroed
/// and listed), a listed initialiser, and a copy of an array that is read
/// whole.
#[kernel(workgroup_size = 64)]
pub fn split_arrays(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= a.len() {
        return;
    }
    let x = a[i];
    let mut p = [1.5f32; 4];
    let mut v = [Vec2::ZERO; 3];
    let mut m = [[0.0f32; 2]; 2];
    let mut l = [x, 2.0 * x, -x];
    #[unroll]
    for j in 0..4 {
        p[j] = p[j] * x + j as f32;
    }
    #[unroll]
    for j in 0..3 {
        v[j] = Vec2::new(p[j], l[2 - j]);
        v[j].y += p[j + 1];
        l[j] -= 0.25;
    }
    #[unroll]
    for r in 0..2 {
        #[unroll]
        for c in 0..2 {
            m[r][c] = v[r + c].x - v[c].y;
        }
    }
    // `p` is read whole by the copy: it stays an array, `q` splits.
    let mut q = p;
    q[0] += m[1][1];
    out[i * 3] = q[0] + q[3] * l[1];
    let mut g = [[x, 1.0f32], [2.0, 0.5 * x]];
    g[1][0] += m[0][0];
    out[i * 3 + 1] = m[0][1] * v[2].y + g[0][0] * g[1][1] + g[1][0] - g[0][1];
    out[i * 3 + 2] = p[2] + l[0] + l[2];
}

/// A helper taking and returning vectors.
#[helper]
pub fn reflect_y(v: Vec4, floor: f32) -> Vec4 {
    let mut r = v;
    if r.y < floor {
        r.y = floor + (floor - r.y);
    }
    r
}

/// Vectors in memory: `Vec3A` and `Vec2` buffers, a shared tile of
/// `Vec4`, a local array of `Vec4` with lane writes (by name and by
/// index), a lane read by an index known only at run time, a `Vec3` local.
#[kernel(workgroup_size = 64)]
pub fn vectors_in_memory(p: &[Vec3A], q: &[Vec2], out: &mut [Vec3A], totals: &mut [Vec4]) {
    let tile = shared::<[Vec4; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    let n = p.len();
    let here = if i < n { p[i] } else { Vec3A::ZERO };
    let uv = if i < n { q[i] } else { Vec2::ZERO };
    tile[t] = here.extend(uv.x + uv.y);
    workgroup_barrier();
    let mut acc = [Vec4::ZERO; 4];
    for j in 0..4 {
        acc[j] = tile[(t + j) % 64];
        acc[j].w *= 2.0;
        // A lane by index (glam's `Index`/`IndexMut`): the diagonal.
        acc[j][j] += 1.0;
    }
    acc[1].x += 1.0;
    let corner: Vec3 = acc[0].xyz() + acc[3].truncate();
    // A lane chosen at run time.
    let pick = acc[2][t % 4];
    if i < n {
        out[i] = Vec3A::new(corner.x, corner.y, corner.z + pick) + here.zyx() * vec3a(1.0, 0.5, 0.25);
    }
    if t == 0 {
        totals[block_id().x] = acc[0] + acc[1] + acc[2] + acc[3];
    }
}

/// onekernel's `f16` vectors (WGSL `vec4<f16>`/`vec2<f16>`, `SHADER_F16`):
/// lane-wise arithmetic with vectors and `f16` scalars, compound
/// assignments, lanes by name and by index (read and written), `ZERO`,
/// `ONE`, `new`, `splat`, `dot`, `min`, `max` and the conversions to and
/// from glam's `f32` vectors, through buffers, a uniform, a shared array of
/// `F16Vec4` and a local kept across a barrier.
#[kernel(workgroup_size = 64)]
pub fn f16_vectors(
    a: &[F16Vec4],
    b: &[F16Vec2],
    s: f16,
    k: F16Vec4,
    out: &mut [F16Vec4],
    out2: &mut [F16Vec2],
    wide: &mut [Vec4],
    dots: &mut [f16],
) {
    let tile = shared::<[F16Vec4; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    // Kept across the barrier (per invocation on the CPU's phase executor).
    let mut scaled = F16Vec4::ZERO;
    if i < a.len() {
        tile[t] = a[i];
        scaled = s * a[i];
    }
    workgroup_barrier();
    if i < a.len() {
        let x = a[i];
        let y = tile[(t + 1) % 64];
        let o = i * 4;
        let mut v = x + y * s - F16Vec4::ONE;
        v.x = v.y * s;
        v[3] = -v[3] + x[i % 4];
        v += k;
        v /= s;
        out[o] = v;
        out[o + 1] = (x * y - k) / F16Vec4::splat(s) + scaled;
        out[o + 2] = x.min(y).max(F16Vec4::ZERO) + F16Vec4::new(x.w, x.z, x.y, x.x) - s / (x * x + F16Vec4::ONE);
        out[o + 3] = F16Vec4::from_vec4(x.to_vec4() * 0.3 + Vec4::new(0.1, 0.2, 0.3, 0.4));
        let p = b[i];
        let mut q = F16Vec2::ZERO;
        q.y = p.x;
        q[0] = p[1];
        out2[i * 2] = p * p - F16Vec2::splat(s) + q;
        out2[i * 2 + 1] = F16Vec2::from_vec2(p.to_vec2() * 1.5).min(p).max(-p) - F16Vec2::new(s, s * s);
        wide[i] = x.to_vec4() + y.to_vec4() * 0.5;
        // Whole numbers: the products and sums are exact in `f16`.
        let (xr, yr) = (F16Vec4::from_vec4(x.to_vec4().round()), F16Vec4::from_vec4(y.to_vec4().round()));
        let pr = F16Vec2::from_vec2(p.to_vec2().round());
        dots[i] = xr.dot(yr) - F16Vec2::dot(pr, pr) + if x == y || p != q { f16::ONE } else { f16::ZERO };
    }
}

/// Shared arrays of the wide types: each workgroup reverses its block of
/// `f64`, `i64` and `f16` values through shared memory.
#[kernel(workgroup_size = 64)]
pub fn wide_shared(a: &[f64], q: &[i64], h: &[f16], out: &mut [f64], qout: &mut [i64], hout: &mut [f16]) {
    let tile = shared::<[f64; 64]>();
    let qtile = shared::<[i64; 64]>();
    let htile = shared::<[f16; 65]>();
    let t = thread_id().x;
    let i = global_id().x;
    if i < a.len() {
        tile[t] = a[i];
        qtile[t] = q[i];
        htile[t + 1] = h[i];
    }
    workgroup_barrier();
    let j = block_id().x * 64 + 63 - t;
    if i < a.len() && j < a.len() {
        out[i] = tile[63 - t] * 2.0;
        qout[i] = qtile[63 - t] - 1;
        hout[i] = htile[64 - t] + f16::ONE;
    }
}

/// Constant expressions WGSL's constant evaluation rejects, which Rust
/// computes (an infinite quotient, the square root of a negative constant,
/// a shift that drops bits): the GPU computes them at run time, to the
/// values the CPU gets. (A division by a constant zero, which rustc denies
/// where it would run, is in the compiler's smoke test.)
#[kernel(workgroup_size = 64)]
pub fn rejected_constants(out: &mut [f32], bits: &mut [u32]) {
    let i = global_id().x;
    if i == 0 {
        out[0] = 0.5f32 / 0.0f32;
        out[1] = -1.0f32 / 0.0;
        out[2] = if out.len() > 9 { 0.5f32 / 0.0f32 } else { 1.5 };
        bits[0] = u32::from((-1.75f32).ceil().sqrt().is_nan());
        bits[1] = 21u32.max(65536u32) << 25;
        bits[2] = 21u32.max(65535u32) << 4;
    }
}

/// A generic kernel: one body for every type of `Num`, each instantiation
/// a kernel of its own (`generic_num::for_f32`, ..., `for_u64`). Operators,
/// compound assignment, comparisons, `min`/`max`/`clamp` and the bound's
/// constants, which differ per type (`T::MIN` is `0` for `u32`).
#[kernel(workgroup_size = 64)]
pub fn generic_num<T: Num>(a: &[T], b: &[T], s: T, out: &mut [T]) {
    let i = global_id().x;
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        let o = i * 4;
        let mut acc: T = x * s + y;
        acc -= x.min(y);
        out[o] = acc;
        out[o + 1] = if x < y { y - x } else { x - y } + T::ONE;
        out[o + 2] = x.max(y).clamp(T::ZERO, s * s) + x % y;
        out[o + 3] = if x == y { T::MIN } else { T::MAX };
    }
}

/// A generic kernel over `Float` (`f32`, `f64`): its math methods and
/// unary minus.
#[kernel(workgroup_size = 64)]
pub fn generic_float<T: Float>(a: &[T], out: &mut [T], flags: &mut [u32]) {
    let i = global_id().x;
    if i < a.len() {
        let x = a[i];
        let o = i * 3;
        out[o] = -x.abs().sqrt() + x.floor() + x.ceil() * (T::ONE + T::ONE) + x.round() + x.trunc();
        out[o + 1] = x.mul_add(x, T::ONE).recip() + x.signum() + x.fract();
        out[o + 2] = x.max(-T::ONE).min(T::ONE);
        flags[i] = x.is_nan() as u32 + x.is_finite() as u32 * 2 + x.is_infinite() as u32 * 4;
    }
}

/// A generic kernel over `Int` (`i32`, `u32`, `i64`, `u64`): bit
/// operators, shifts by a `u32`, wrapping arithmetic, `/` and `%`.
#[kernel(workgroup_size = 64)]
pub fn generic_int<T: Int>(a: &[T], b: &[T], out: &mut [T]) {
    let i = global_id().x;
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        let o = i * 4;
        out[o] = (x & y) | (x ^ !y);
        let mut z = x << 3u32;
        z >>= 1u32;
        out[o + 1] = z;
        out[o + 2] = x.wrapping_mul(y).wrapping_add(T::MAX).wrapping_sub(y);
        out[o + 3] = if y != T::ZERO { x / y + x % y } else { T::MIN };
    }
}

/// A generic cooperative kernel: a shared array of `T`, reversed within
/// each workgroup.
#[kernel(workgroup_size = 64)]
pub fn generic_reverse<T: Num>(a: &[T], out: &mut [T]) {
    let tile = shared::<[T; 64]>();
    let (g, t) = (global_id().x, thread_id().x);
    tile[t] = if g < a.len() { a[g] } else { T::ZERO };
    workgroup_barrier();
    if g < out.len() {
        out[g] = tile[63 - t];
    }
}

/// Every buffer element is the invocation's own (`global_id().x`): on the
/// CPU a chunk that every buffer covers runs as one loop over plain slices
/// (`cpu_chunk`), with an early `return`, a compound assignment, a `mut`
/// scalar that each invocation starts afresh, and `global_id()` whole.
#[kernel(workgroup_size = 64)]
pub fn own_elements(a: &[f32], b: &[u32], mut s: f32, out: &mut [f32], flags: &mut [u32]) {
    let i = global_id().x;
    if i >= out.len() {
        return;
    }
    s *= 2.0;
    out[i] += a[i] * s + i as f32;
    if b[i] % 3 == 0 {
        flags[i] = b[i] + global_id().y as u32 + flags.len() as u32;
    } else {
        flags[i] ^= 1;
    }
}

/// The same with `Vec4` elements.
#[kernel(workgroup_size = 64)]
pub fn own_elements_vec4(a: &[Vec4], out: &mut [Vec4]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] * 2.0 + out[i];
    }
}

/// Reads a neighbour (`a[i + 1]`): its outputs are its own, its inputs not,
/// so the CPU runs it per invocation on windows.
#[kernel(workgroup_size = 64)]
pub fn neighbour_sum(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i + 1 < a.len() && i < out.len() {
        out[i] = a[i] + a[i + 1];
    }
}

/// Uses `thread_id()`, which the chunk loop does not have.
#[kernel(workgroup_size = 64)]
pub fn own_with_thread_id(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a[i] + thread_id().x as f32;
    }
}

/// Own elements with a scalar bound (`i < n as usize`): on the CPU the
/// chunk loop is split at `n`, each side with the comparisons decided.
#[kernel(workgroup_size = 64)]
pub fn own_below(n: u32, a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i >= out.len() {
        return;
    }
    if i < n as usize {
        out[i] = a[i] * 2.0;
    } else {
        out[i] = -a[i];
    }
    if n as usize <= i {
        out[i] += 1.0;
    }
    if i + 1 == n as usize {
        out[i] += 10.0;
    }
}

/// The subgroup values: on every device the subgroups partition the block
/// (`subgroup_id() < num_subgroups()`, as many as `subgroup_size()` needs,
/// consecutive threads), 48 threads so that the CPU's last subgroup of 32
/// is partial. Per thread: the facts as bits, `subgroup_id() + 1000 *
/// num_subgroups()`, and `subgroup_size()`.
#[kernel(workgroup_size = 48)]
pub fn subgroup_ids(out: &mut [u32]) {
    let i = global_id().x;
    let t = thread_id().x as u32;
    let size = subgroup_size();
    let id = subgroup_id();
    let count = num_subgroups();
    if i * 3 + 2 < out.len() {
        let mut facts = 0u32;
        if id < count {
            facts |= 1;
        }
        if count == (48 + size - 1) / size {
            facts |= 2;
        }
        if id * size + subgroup_invocation_id() == t {
            facts |= 4;
        }
        out[i * 3] = facts;
        out[i * 3 + 1] = id + 1000 * count;
        out[i * 3 + 2] = size;
    }
}

/// Kernels whose plain-Rust reference is their own body: each is emitted as
/// written, and its reference (in `generated_reference`, re-exported by
/// `reference.rs`) is the same body run as a sequential loop over the
/// thread index `i` with ordinary slices, `let i = global_id().x;` replaced
/// by the loop (so no reference is a hand-made copy of its kernel).
macro_rules! kernels_with_references {
    ($(
        $(#[doc = $doc:literal])*
        #[kernel($($attr:tt)*)]
        pub fn $name:ident($($params:tt)*) {
            let $i:ident = global_id().x;
            $($body:tt)*
        }
    )*) => {
        $(
            $(#[doc = $doc])*
            #[kernel($($attr)*)]
            pub fn $name($($params)*) {
                let $i = global_id().x;
                $($body)*
            }
        )*

        /// The references of the kernels of [`kernels_with_references!`].
        #[allow(clippy::all, unused_parens, unused_mut)]
        pub mod generated_reference {
            use super::*;
            $(
                pub fn $name(count: usize, $($params)*) {
                    for $i in 0..count {
                        (|| {
                            $($body)*
                        })();
                    }
                }
            )*
        }
    };
}

kernels_with_references! {
    #[kernel(workgroup_size = 256)]
    pub fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
        let i = global_id().x;
        if i < out.len() {
            out[i] = a[i] + b[i];
        }
    }

    /// Every integer operator on i32, compound assignments, unary minus/not.
    #[kernel(workgroup_size = 64)]
    pub fn int_ops(a: &[i32], b: &[i32], out: &mut [i32]) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let x = a[i];
        let y = b[i];
        let o = i * 12;
        out[o] = x.wrapping_add(y);
        out[o + 1] = x.wrapping_sub(y);
        out[o + 2] = x.wrapping_mul(y);
        out[o + 3] = if y != 0 { x / y } else { 0 };
        out[o + 4] = if y != 0 { x % y } else { 0 };
        out[o + 5] = x & y;
        out[o + 6] = x | y;
        out[o + 7] = x ^ y;
        out[o + 8] = x << (y & 31);
        out[o + 9] = x >> ((y as u32) & 31u32);
        out[o + 10] = -(x / 2) + !y;
        let mut acc = x;
        acc += 3;
        acc -= y / 4;
        acc *= 2;
        acc /= 3;
        acc %= 1000;
        acc &= 0x7fff;
        acc |= 1;
        acc ^= 0x55;
        acc <<= 2;
        acc >>= 1;
        out[o + 11] = acc;
    }

    /// Every integer operator on u32 and usize.
    #[kernel(workgroup_size = 64)]
    pub fn uint_ops(a: &[u32], b: &[u32], out: &mut [u32]) {
        let i = global_id().x;
        if i < a.len() {
            let x = a[i];
            let y = b[i];
            let o = i * 8;
            out[o] = x.wrapping_add(y).wrapping_mul(3);
            out[o + 1] = x.wrapping_sub(y);
            out[o + 2] = if y > 0 { x / y + x % y } else { 7 };
            out[o + 3] = (x & y) | (x ^ y);
            out[o + 4] = x >> (y % 32) << 1u32;
            out[o + 5] = !x;
            let n: usize = (x as usize) % 100 + i;
            out[o + 6] = (n * 3 + 1) as u32;
            out[o + 7] = 0xffff_ffffu32 - (i as u32);
        }
    }

    /// Float arithmetic, comparisons, bools and logic.
    #[kernel(workgroup_size = 64)]
    pub fn float_ops(a: &[f32], b: &[f32], out: &mut [f32], flags: &mut [u32]) {
        let i = global_id().x;
        if i < a.len() {
            let x = a[i];
            let y = b[i];
            let o = i * 6;
            out[o] = x + y;
            out[o + 1] = x - y * 2.0;
            out[o + 2] = x * y;
            out[o + 3] = x / (y.abs() + 1.0);
            out[o + 4] = x % 3.0;
            let mut t = -x;
            t += 1.5;
            t *= 0.5;
            t -= y;
            t /= 4.0;
            out[o + 5] = t;
            let bigger: bool = x > y;
            let close = (x - y).abs() < 0.5;
            let both = bigger && close;
            let either = bigger || close;
            let not = !bigger;
            let xor = bigger ^ close;
            let and = bigger & close;
            let or = bigger | close;
            let eq =
                (x == y) as u32 + (x != y) as u32 * 2 + (x <= y) as u32 * 4 + (x >= y) as u32 * 8 + (x < y) as u32 * 16;
            flags[i] = both as u32
                + either as u32 * 2
                + not as u32 * 4
                + xor as u32 * 8
                + and as u32 * 16
                + or as u32 * 32
                + eq * 64;
        }
    }

    /// `as` casts with Rust's semantics (saturating float → int, NaN → 0).
    #[kernel(workgroup_size = 64)]
    pub fn casts(f: &[f32], n: &[i32], ints: &mut [i32], uints: &mut [u32], floats: &mut [f32]) {
        let i = global_id().x;
        if i < f.len() {
            let x = f[i];
            let k = n[i];
            ints[i * 3] = x as i32;
            ints[i * 3 + 1] = (x as u32) as i32;
            ints[i * 3 + 2] = (k as u32 >> 1) as i32;
            uints[i * 3] = x as u32;
            uints[i * 3 + 1] = k as u32;
            uints[i * 3 + 2] = (x > 0.0) as u32 + (k < 0) as u32 * 2;
            floats[i * 3] = k as f32;
            floats[i * 3 + 1] = (k as u32) as f32;
            floats[i * 3 + 2] = (i as f32) * 0.5 + (i as u32 as f32);
        }
    }

    /// The f32 methods.
    #[kernel(workgroup_size = 64)]
    pub fn float_math(a: &[f32], b: &[f32], out: &mut [f32]) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let x = a[i];
        let y = b[i];
        let p = x.abs() + 0.25;
        let o = i * 30;
        out[o] = x.abs();
        out[o + 1] = p.sqrt();
        out[o + 2] = (x * 0.1).exp();
        out[o + 3] = (x * 0.1).exp2();
        out[o + 4] = p.ln();
        out[o + 5] = p.log2();
        out[o + 6] = p.powf(0.75);
        out[o + 7] = x.powi(3);
        out[o + 8] = x.sin();
        out[o + 9] = x.cos();
        out[o + 10] = (x * 0.1).tan();
        out[o + 11] = x.tanh();
        out[o + 12] = x.floor();
        out[o + 13] = x.ceil();
        out[o + 14] = x.round();
        out[o + 15] = x.trunc();
        out[o + 16] = x.min(y);
        out[o + 17] = x.max(y);
        out[o + 18] = x.clamp(-1.0, 2.0);
        out[o + 19] = x.mul_add(y, 0.5);
        out[o + 20] = x.signum();
        out[o + 21] = x.fract();
        out[o + 22] = (x * 0.01).atan2(y + 0.5);
        out[o + 23] = p.recip();
        out[o + 24] = f32::sqrt(p) + f32::max(x, 0.0);
        out[o + 25] = (x * 0.01).asin() + (y * 0.01).acos() + x.atan();
        out[o + 26] = (x * 0.1).sinh() + (x * 0.1).cosh();
        out[o + 27] = p.log10();
        out[o + 28] = x.to_radians() + y.to_degrees() * 0.001;
        out[o + 29] = p.powi(-2) + std::f32::consts::PI + f32::EPSILON;
    }

    /// The integer methods.
    #[kernel(workgroup_size = 64)]
    pub fn int_math(a: &[i32], b: &[u32], out: &mut [i32], uout: &mut [u32]) {
        let i = global_id().x;
        if i < a.len() {
            let x = a[i];
            let y = b[i];
            out[i * 6] = x.abs();
            out[i * 6 + 1] = x.min(7).max(-7);
            out[i * 6 + 2] = x.clamp(-100, 100);
            out[i * 6 + 3] = x.signum();
            out[i * 6 + 4] = (x % 5).pow(3);
            out[i * 6 + 5] = i32::MAX - x.abs() / 2 + i32::MIN / 2;
            uout[i * 6] = y.count_ones() + x.count_ones();
            uout[i * 6 + 1] = y.leading_zeros() + x.leading_zeros();
            uout[i * 6 + 2] = y.trailing_zeros();
            uout[i * 6 + 3] = y.reverse_bits();
            uout[i * 6 + 4] = (y % 7).pow(5).min(u32::MAX);
            uout[i * 6 + 5] = y.max(1000) - y.min(1000);
        }
    }

    /// if/else-if/else as statements and expressions, while, loop with a
    /// value, for with step_by and ..=, labelled break/continue, early return,
    /// shadowing and block expressions.
    #[kernel(workgroup_size = 32)]
    pub fn control_flow(a: &[i32], out: &mut [i32]) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let x = a[i];
        let class = if x < -100 {
            -1
        } else if x < 100 {
            0
        } else {
            1
        };
        let mut sum = 0;
        let mut k = 0;
        while k < 10 {
            k += 1;
            if k % 3 == 0 {
                continue;
            }
            sum += k;
        }
        let first_big = loop {
            sum += 1;
            if sum > 50 {
                break sum * 2;
            }
        };
        let mut stepped = 0;
        for j in (0..20).step_by(3) {
            stepped += j;
        }
        for j in 1..=4 {
            stepped *= j;
        }
        let mut pairs = 0;
        'outer: for p in 0..8 {
            for q in 0..8 {
                if q > p {
                    continue 'outer;
                }
                if p * q > (x & 31) {
                    break 'outer;
                }
                pairs += 1;
            }
        }
        let x = x / 2; // shadowing
        let block = {
            let t = x * 3;
            t + 1
        };
        if x == 12345 {
            out[i] = -1;
            return;
        }
        out[i] = class + sum + first_big + stepped + pairs * 1000 + block;
    }

    /// Literal typing: unsuffixed literals take their type from use.
    #[kernel(workgroup_size = 64)]
    pub fn literals(out: &mut [u32], fout: &mut [f32]) {
        let i = global_id().x;
        if i < out.len() {
            let mut n = 0;
            while n < i {
                n += 7;
            }
            let big = 4_000_000_000;
            let neg = -2147483648i32;
            let wrapped = 3_000_000_000u32.wrapping_add(2_000_000_000);
            out[i] = n as u32 + big / 1000 + (neg == i32::MIN) as u32 + wrapped % 1000;
            let f = 2.5;
            let g = 1e-3f32;
            fout[i] = f * 2.0 + g + 0x10 as f32 + 1_000.25 + f32::MAX / 1e38;
        }
    }

    /// Local arrays: an accumulator sized by a constant, a 2-D array, literals,
    /// `len()`, element assignment, an array through a helper.
    #[kernel(workgroup_size = 64)]
    pub fn local_arrays(a: &[f32], out: &mut [f32]) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        const N: usize = 8;
        let mut acc = [0.0f32; N];
        for j in 0..acc.len() {
            acc[j] = a[i] * j as f32;
        }
        let mut m = [[1.0f32, 2.0], [3.0, 4.0]];
        m[i % 2][(i + 1) % 2] += acc[N - 1];
        let w = [a[i], 0.5, -2.0];
        let mut s = 0.0;
        for j in (0..N).rev() {
            s += acc[j] * w[j % 3];
        }
        out[i * 4] = s;
        out[i * 4 + 1] = m[0][1] + m[1][0];
        out[i * 4 + 2] = w[i % 3] + [1.0f32; 3][i % 3];
        out[i * 4 + 3] = rotated(acc)[i % N];
    }

    /// Tuples (from a helper, destructured, fields) and `match` on integers.
    #[kernel(workgroup_size = 64)]
    pub fn tuples_and_match(a: &[i32], out: &mut [i32]) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let x = a[i];
        let (q, r) = divmod(x, 7);
        let mut t = (q, r as u32);
        t.1 = t.1.wrapping_add(1);
        let class = match x {
            0 => 100,
            1 | 2 | 3 => 200,
            -5..=-1 => 300,
            10..20 => 400,
            i32::MIN..=-1000 => 500,
            n => n % 17,
        };
        let mut steps = 0;
        for j in 0..10u32 {
            match (x as u32).wrapping_add(j) % 4 {
                0 => continue,
                3 => break,
                _ => steps += 1,
            }
        }
        let kind = match i % 3 {
            0 => 1,
            1 => 2,
            _ => 3,
        };
        out[i * 4] = t.0.wrapping_add(t.1 as i32);
        out[i * 4 + 1] = class;
        out[i * 4 + 2] = steps;
        out[i * 4 + 3] = kind;
    }

    /// The methods users reached for, on edge values (NaN, infinities, `i32::MIN`).
    #[kernel(workgroup_size = 64)]
    pub fn more_methods(f: &[f32], n: &[i32], fout: &mut [f32], iout: &mut [u32]) {
        let i = global_id().x;
        if i >= f.len() {
            return;
        }
        let x = f[i];
        let k = n[i];
        iout[i * 8] = u32::from(x.is_nan()) | u32::from(x.is_finite()) << 1 | u32::from(x.is_infinite()) << 2;
        iout[i * 8 + 1] = x.to_bits();
        iout[i * 8 + 2] = k.wrapping_div(-1).wrapping_rem(7).wrapping_neg().wrapping_abs() as u32;
        iout[i * 8 + 3] = (k >> 1).rem_euclid(13) as u32 + (k as u32).rem_euclid(10);
        iout[i * 8 + 4] = k.abs_diff(-1000).wrapping_add((k as u32).abs_diff(7));
        iout[i * 8 + 5] = (k.rotate_left(i as u32) as u32) ^ (k as u32).rotate_right(5);
        iout[i * 8 + 6] = std::cmp::min(k, 5) as u32 ^ std::cmp::max(k as u32, 9) ^ (k as u32).leading_zeros();
        iout[i * 8 + 7] = f32::from_bits(x.to_bits() ^ 0x8000_0000).to_bits();
        fout[i * 2] = x.cbrt();
        fout[i * 2 + 1] = x.rem_euclid(2.5);
    }

    /// Ranges: reversed, inclusive up to the type's last value, stepping near it.
    #[kernel(workgroup_size = 64)]
    pub fn ranges(out: &mut [u32], n: u32) {
        let i = global_id().x;
        if i >= out.len() {
            return;
        }
        let mut s = 0u32;
        for j in (0..n).rev() {
            s = s.wrapping_mul(31).wrapping_add(j);
        }
        for j in (1..=n).rev() {
            s = s.wrapping_mul(31).wrapping_add(j);
        }
        for j in (u32::MAX - 3)..=u32::MAX {
            s = s.wrapping_add(j);
        }
        for j in ((u32::MAX - 20)..u32::MAX).step_by(7) {
            s = s.wrapping_add(j);
        }
        for j in (-7..=7i32).step_by(3) {
            s = s.wrapping_add(j as u32);
        }
        for j in (i32::MAX - 2)..=i32::MAX {
            s = s.wrapping_add(j as u32);
        }
        for j in (0..=u32::MAX).step_by(1 << 30) {
            s = s.wrapping_add(j);
        }
        out[i] = s ^ i as u32;
    }

    /// glam float vectors: constructors and constants, lanes and swizzles,
    /// operators with vectors and scalars (both orders), compound assignment,
    /// glam's methods, a uniform `Vec4`, a helper, `Vec3` and `Vec2` locals.
    #[kernel(workgroup_size = 64)]
    pub fn float_vectors(a: &[Vec4], b: &[Vec4], out: &mut [Vec4], sums: &mut [f32], k: Vec4, t: f32, off: Vec3) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let (x, y) = (a[i], b[i]);
        let mut v = x + y * 2.0 - Vec4::ONE;
        v *= 0.5;
        v += k;
        v.w = x.x * 3.0;
        let w = 2.0 * -v / Vec4::splat(4.0) + vec4(1.0, 2.0, 3.0, 4.0) % 3.0;
        let o = i * 4;
        out[o] = w;
        out[o + 1] = x.min(y).max(Vec4::NEG_ONE).abs() + x.clamp(Vec4::ZERO, Vec4::splat(t)) + x.mul_add(y, k);
        out[o + 2] = x.floor() + y.ceil() * Vec4::X + x.round() * Vec4::new(0.0, 1.0, 0.0, 1.0) + y.trunc() + x.fract();
        let p: Vec3 = x.xyz();
        let q = Vec3::new(y.z, y.x, y.y) + off;
        let c = p.cross(q);
        let uv: Vec2 = y.zw() + x.yx();
        out[o + 3] = reflect_y(x.lerp(y, t), 0.25) + c.extend(uv.x) * 0.5 + x.truncate().extend(uv.y);
        let s = i * 8;
        sums[s] = x.dot(y) + Vec4::dot(y, x) * 0.5;
        sums[s + 1] = x.length() + y.length_squared();
        sums[s + 2] = x.distance(y) + x.distance_squared(y);
        sums[s + 3] = x.element_sum() + y.element_product() + x.min_element() - y.max_element();
        sums[s + 4] = (x.abs() + Vec4::ONE).normalize().dot(Vec4::W) + (x.abs() + 1.0).sqrt().x;
        sums[s + 5] = uv.dot(uv.yx()) + p.length() + q.xy().x + c.zyx().z;
        sums[s + 6] = (x == y) as u32 as f32 + (x != y) as u32 as f32 * 2.0 + (x == x) as u32 as f32 * 4.0;
        sums[s + 7] = v.x + v.y + v.z + v.w + y.recip().wzyx().x;
    }

    /// glam integer vectors: operators (lane-wise division and remainder as
    /// Rust's), methods, constants, lanes, swizzles; `UVec2` elements.
    #[kernel(workgroup_size = 64)]
    pub fn int_vectors(a: &[IVec4], b: &[IVec4], u: &[UVec2], out: &mut [IVec4], uout: &mut [UVec2], d: IVec4) {
        let i = global_id().x;
        if i >= a.len() {
            return;
        }
        let (x, y) = (a[i], b[i]);
        let mut v = x * 3 - y + IVec4::ONE;
        v /= d;
        v.z %= 7;
        let o = i * 4;
        out[o] = v;
        out[o + 1] = x / y.abs().max(IVec4::ONE) + x % IVec4::new(5, -5, 3, -3) + -x + 100 / d;
        out[o + 2] = x.min(y).clamp(IVec4::splat(-50), IVec4::splat(50))
            + ivec4(x.dot(y), x.element_sum(), x.min_element(), y.max_element());
        out[o + 3] = IVec4::NEG_ONE * x.wzyx() + IVec4::Z * i as i32 + ivec4(x.x, x.y, x.z, x.w).abs();
        let w = u[i];
        let mut r = w * 2 + UVec2::new(1, 2) - UVec2::ONE;
        r.y = r.x / (w.y % 9 + 1);
        uout[i * 2] = r + w.yx() / UVec2::splat(3);
        uout[i * 2 + 1] =
            uvec2(w.element_product() % 1000, (w == r) as u32 + (w != r) as u32 * 2) + w.max(r).min(UVec2::MAX);
    }

    /// 64-bit integers (`SHADER_INT64`): operators, methods, a `match`, and
    /// casts to and from the 32-bit types.
    #[kernel(workgroup_size = 64)]
    pub fn wide_ints(a: &[i64], b: &[u64], k: i32, out: &mut [i64], uout: &mut [u64]) {
        let i = global_id().x;
        if i < a.len() {
            let x = a[i];
            let y = b[i];
            let o = i * 8;
            out[o] = x.wrapping_mul(3).wrapping_add(k as i64);
            out[o + 1] = if x != 0 { (y as i64) / x } else { i64::MAX };
            out[o + 2] = if x != 0 { (y as i64) % x } else { i64::MIN };
            out[o + 3] = (x << 7) ^ (x >> 3) | 0x1_0000_0000i64;
            out[o + 4] = x.abs().min(1 << 40).max(-5) + x.signum() - x.wrapping_neg();
            out[o + 5] = (x as i32) as i64 + (x as u32) as i64 + (k as u32) as i64;
            out[o + 6] = x.rem_euclid(1000) - i64::from(k) + (x < 0) as i64 * 2 + (x >= -7) as i64;
            out[o + 7] = match x {
                0 => 1,
                1..=100 => 2,
                -3_000_000_000 => 3,
                _ => 4,
            };
            uout[o] = y.wrapping_sub(x as u64);
            uout[o + 1] = y >> 40u32 | y << 24;
            uout[o + 2] = if y > 0 { y / 3 + y % 7 } else { u64::MAX };
            uout[o + 3] = x.abs_diff(-x / 2);
            uout[o + 4] = u64::from(k as u32) * 0x1_0000_0001 + (i as u64);
            uout[o + 5] = y.max(1 << 63).min(u64::MAX - 1).clamp(3, u64::MAX - 2);
            uout[o + 6] = (x as u64).wrapping_neg() ^ ((y as u32) as u64);
            uout[o + 7] = ((y as i32) as u64).wrapping_add(y >> 1);
        }
    }

    /// `f64` (`SHADER_F64`) and `half::f16` (`SHADER_F16`): arithmetic,
    /// literals, constants, conversions and the methods the GPU has.
    #[kernel(workgroup_size = 64)]
    pub fn wide_floats(a: &[f64], h: &[f16], s: f64, t: f16, out: &mut [f64], hout: &mut [f16], flags: &mut [u32]) {
        let i = global_id().x;
        if i < a.len() {
            let x = a[i];
            let hh = h[i];
            let o = i * 10;
            out[o] = x * s + 0.1;
            out[o + 1] = x / 3.0 - x * 1e-300 + 2.5e10f64;
            out[o + 2] = x.abs().sqrt() + std::f64::consts::PI;
            out[o + 3] = x.floor() + x.ceil() * 2.0 + x.trunc() * 4.0;
            out[o + 4] = x.round() + x.fract() * 8.0;
            out[o + 5] = x.mul_add(s, 1.0).min(1e300).max(-1e300).clamp(-1e9, 1e9);
            out[o + 6] = x.signum() + x.recip() + x.rem_euclid(2.5) + (-x).rem_euclid(0.5);
            out[o + 7] = f64::from(hh) + hh.to_f64() * 2.0 + (x as f32) as f64 + f64::from(x as f32);
            out[o + 8] = (x as i64) as f64 + (x as i32) as f64 * 2.0 + (x as u32) as f64 * 4.0 + (x as u64) as f64;
            out[o + 9] = f64::from_bits(x.to_bits() ^ (1u64 << 63)) + f64::EPSILON + f64::from(i as u32);
            let m = i * 4;
            hout[m] = hh * hh + f16::ONE - hh / t;
            hout[m + 1] = hh.max(f16::ZERO).min(f16::from_f32(2.5)).clamp(f16::NEG_ONE, f16::MAX);
            hout[m + 2] = f16::from_f64(x) - f16::from_f32(hh.to_f32() * 0.5);
            hout[m + 3] = -hh.signum() * t % f16::from_f32(0.75) + f16::PI;
            flags[i] = hh.is_nan() as u32
                + hh.is_infinite() as u32 * 2
                + hh.is_finite() as u32 * 4
                + x.is_nan() as u32 * 8
                + x.is_infinite() as u32 * 16
                + x.is_finite() as u32 * 32
                + (hh < t) as u32 * 64
                + (x >= s) as u32 * 128;
        }
    }
}
