//! **Attention scores on tensor cores**: `S = softmax(Q·Kᵀ · scale)`, row
//! by row, the first half of a transformer's attention.
//!
//!     cargo run --release --example attention_scores             # check on every device
//!     cargo run --release --example attention_scores -- --wgsl   # print the WGSL
//!
//! `Q` and `K` hold one row per token (`len` tokens of `dim` features, in
//! `f16`). Row `i` of `S` says how much token `i` attends to each token:
//! the dot products of its query with every key, scaled by `1/√dim`, turned
//! into weights that sum to 1 by a softmax.
//!
//! A block of 32 threads (one subgroup) computes 16 rows of `S` in two
//! steps:
//!
//! 1. the scores, 16 × 16 at a time on tensor cores: a `MatrixA` of 16
//!    queries × 16 features, a `MatrixB` of 16 features × 16 keys, which
//!    is `Kᵀ`: `K` stored row by row *is* `Kᵀ` stored column by column, so
//!    `load_col_major` reads it without a transpose;
//! 2. the softmax of each of the 16 rows, one thread per row, after a
//!    barrier that makes the tiles' stores visible to the other threads.
//!
//! `len` and `dim` must be multiples of 16.

mod common;

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::LaunchError;

// ANCHOR: kernel
#[onekernel::kernels]
mod attention {
    use onekernel::half::f16;
    use onekernel::prelude::*;
    use onekernel::tile::{mma, Accumulator, MatrixA, MatrixB};

    /// The side of a tensor-core tile.
    pub const T: usize = 16;

    /// `s = softmax(q · kᵀ · scale)` by rows, for `q` and `k` of `len × dim`
    /// (row-major) and `s` of `len × len`. Launch with
    /// `Grid::blocks(len / 16)`.
    #[kernel(workgroup_size = 32)]
    pub fn attention_scores(q: &[f16], k: &[f16], s: &mut [f32], len: u32, dim: u32, scale: f32) {
        let (len, dim) = (len as usize, dim as usize);
        let row0 = block_id().x * T;

        // Step 1: the raw scores of rows row0..row0 + 16, a 16 × 16 tile
        // at a time: keys key0..key0 + 16, summed over the features.
        let mut key0 = 0;
        while key0 < len {
            let mut scores = Accumulator::<f32, T, T>::zeros();
            let mut f0 = 0;
            while f0 < dim {
                let queries = MatrixA::<T, T>::load(&q, row0 * dim + f0, dim);
                // Element (f, j) is k[(key0 + j) * dim + f0 + f]: Kᵀ.
                let keys_t = MatrixB::<T, T>::load_col_major(&k, key0 * dim + f0, dim);
                scores = mma(queries, keys_t, scores);
                f0 += T;
            }
            scores.store(&mut s, row0 * len + key0, len);
            key0 += T;
        }
        // The tiles were stored by every lane: wait for all of them.
        storage_barrier();

        // Step 2: a softmax per row, one thread per row. Subtracting the
        // row's maximum first keeps `exp` from overflowing.
        let t = thread_id().x;
        if t < T {
            let row = (row0 + t) * len;
            let mut max = f32::NEG_INFINITY;
            for j in 0..len {
                max = max.max(s[row + j] * scale);
            }
            let mut sum = 0.0f32;
            for j in 0..len {
                let e = (s[row + j] * scale - max).exp();
                s[row + j] = e;
                sum += e;
            }
            for j in 0..len {
                s[row + j] /= sum;
            }
        }
    }
}
// ANCHOR_END: kernel

/// The plain Rust answer, in `f64`.
fn reference(q: &[f16], k: &[f16], len: usize, dim: usize) -> Vec<f64> {
    let scale = 1.0 / (dim as f64).sqrt();
    let mut s = vec![0.0f64; len * len];
    for i in 0..len {
        let row = &mut s[i * len..(i + 1) * len];
        for (j, x) in row.iter_mut().enumerate() {
            *x = (0..dim).map(|f| q[i * dim + f].to_f64() * k[j * dim + f].to_f64()).sum::<f64>() * scale;
        }
        let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|x| (x - max).exp()).sum();
        row.iter_mut().for_each(|x| *x = (*x - max).exp() / sum);
    }
    s
}

/// Queries and keys in [-1, 1), exact in `f16`.
fn data(len: usize, seed: usize) -> Vec<f16> {
    (0..len).map(|i| f16::from_f32(((i * 13 + seed * 5) % 29) as f32 / 14.5 - 1.0)).collect()
}

fn run(device: &Device, q: &[f16], k: &[f16], len: usize, dim: usize) -> Result<Vec<f32>, LaunchError> {
    assert!(len % 16 == 0 && dim % 16 == 0, "len and dim must be multiples of 16");
    let q = Buffer::from_slice(device, q).expect("buffer");
    let k = Buffer::from_slice(device, k).expect("buffer");
    let mut s = Buffer::<f32>::zeroed(device, len * len).expect("buffer");
    let scale = 1.0 / (dim as f32).sqrt();
    attention::attention_scores::launch(device, Grid::blocks(len / 16), &q, &k, &mut s, len as u32, dim as u32, scale)?;
    Ok(s.read().expect("read"))
}

/// Weights within 1e-5 of the f64 answer (f32 sums of exact products and
/// `exp` within a few ulps).
fn check(what: &str, got: &[f32], want: &[f64]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((f64::from(*g) - w).abs() <= 1e-5, "{what}: s[{i}] = {g}, want {w}");
    }
}

/// Whether `e` is a GPU's honest refusal: `MissingFeature` from a GPU
/// without cooperative matrices. The CPU executor runs every tile kernel:
/// any error from it is a failure.
fn cannot_run(device: &Device, e: &LaunchError) -> bool {
    let coop = onekernel::abi::Features::COOPERATIVE_MATRIX;
    device.is_gpu()
        && !device.features().contains(coop)
        && matches!(e, LaunchError::MissingFeature { kernel: "attention_scores", missing, .. } if missing.contains(coop))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", attention::attention_scores::WGSL);
        return Ok(());
    }
    let (len, dim) = (64, 32);
    let (q, k) = (data(len * dim, 1), data(len * dim, 2));
    let want = reference(&q, &k, len, dim);
    for device in common::devices(false) {
        match run(&device, &q, &k, len, dim) {
            Ok(got) => {
                check("attention_scores", &got, &want);
                println!("{}: {len} tokens of {dim} features agree with f64", device.name());
            }
            Err(e) if cannot_run(&device, &e) => println!("{}: {e}", device.name()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_f64() {
    let (len, dim) = (48, 32);
    let (q, k) = (data(len * dim, 3), data(len * dim, 4));
    let want = reference(&q, &k, len, dim);
    for device in common::devices(true) {
        match run(&device, &q, &k, len, dim) {
            Ok(got) => {
                check(&format!("attention_scores on {}", device.name()), &got, &want);
                // Every row is a probability distribution.
                for row in got.chunks(len) {
                    assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                }
            }
            // Lavapipe has no cooperative matrices: the launch says so.
            Err(e) if cannot_run(&device, &e) => {}
            Err(e) => panic!("{}: {e}", device.name()),
        }
    }
}
