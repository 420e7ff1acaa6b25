//! Test data and CPU references.
//!
//! Inputs are a pure function of (seed, index), so that a check at full size
//! can recompute any input element without keeping the input on the host.

/// A value in [-1, 1) determined by `(seed, i)` (splitmix64 of both).
pub fn val(seed: u64, i: usize) -> f32 {
    let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    // 24 random bits → [0, 1) → [-1, 1).
    ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// `n` values `f(val(seed, i))`.
pub fn fill(seed: u64, n: usize, f: impl Fn(f32) -> f32) -> Vec<f32> {
    (0..n).map(|i| f(val(seed, i))).collect()
}

/// Indices to check in an output of `n` elements: all of them when `n` is
/// small, else about `samples` spread over it, always with the last one.
pub fn sample_indices(n: usize, samples: usize) -> Vec<usize> {
    if n <= samples {
        return (0..n).collect();
    }
    let step = n / samples;
    let mut v: Vec<usize> = (0..samples).map(|j| j * step + (j * 7919) % step).collect();
    v.push(n - 1);
    v
}

/// Compares `got[i]` with `want(i)` at `indices`: `|got - want| <= tol(i, want)`.
pub fn compare(
    what: &str,
    got: &[f32],
    indices: &[usize],
    want: impl Fn(usize) -> f64,
    tol: impl Fn(usize, f64) -> f64,
) -> Result<(), String> {
    let mut worst: Option<(usize, f64, f64)> = None;
    let mut bad = 0usize;
    for &i in indices {
        let w = want(i);
        let g = f64::from(got[i]);
        let err = (g - w).abs();
        // NaN compares as not within tolerance.
        let within = err <= tol(i, w);
        if !within {
            bad += 1;
            if worst.is_none_or(|(_, _, e)| err > e || err.is_nan()) {
                worst = Some((i, g, w));
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((i, g, w)) => {
            Err(format!("{what}: {bad} of {} checked values wrong, e.g. [{i}] = {g} instead of {w}", indices.len()))
        }
    }
}

/// One entry of `A · B` (row-major A m×k, B k×n, inputs from `val`):
/// (value, Σ|a·b|), in f64; the second is the scale for the tolerance.
pub fn matmul_entry(seed_a: u64, seed_b: u64, n: usize, k: usize, i: usize, j: usize) -> (f64, f64) {
    let (mut s, mut abs) = (0.0f64, 0.0f64);
    for q in 0..k {
        let p = f64::from(val(seed_a, i * k + q)) * f64::from(val(seed_b, q * n + j));
        s += p;
        abs += p.abs();
    }
    (s, abs)
}

/// Row softmax of one row, in f64.
pub fn softmax_row(x: &[f32]) -> Vec<f64> {
    let m = x.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
    let e: Vec<f64> = x.iter().map(|&v| (f64::from(v) - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.into_iter().map(|v| v / s).collect()
}

/// Layer norm of one row (biased variance, eps 1e-5, weight and bias), in f64.
pub fn layernorm_row(x: &[f32], gamma: &[f32], beta: &[f32]) -> Vec<f64> {
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = x.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
    let rstd = 1.0 / (var + 1e-5).sqrt();
    x.iter()
        .zip(gamma.iter().zip(beta))
        .map(|(&v, (&g, &b))| (f64::from(v) - mean) * rstd * f64::from(g) + f64::from(b))
        .collect()
}
