//! **Half precision in, `f32` inside**: a row softmax and a layer norm over
//! `f16` data, the way neural-network inference keeps activations.
//!
//!     cargo run --example softmax_f16            # check on every device
//!     cargo run --example softmax_f16 -- --wgsl  # print the kernels' WGSL
//!
//! `f16` halves the memory traffic, but it has 11 bits of precision and a
//! largest value of 65504: a sum of a few thousand terms, or `exp` of 12, is
//! already wrong or infinite in `f16`. So each kernel reads `f16`, converts
//! with `to_f32()`, does every sum, `exp` and square root in `f32`, and
//! rounds once at the end with `f16::from_f32`. The kernels need the
//! device's `SHADER_F16` (`KERNEL.features` says so); a device without it
//! gets `LaunchError::MissingFeature`, and the CPU executor runs them
//! always.
//!
//! Both kernels use one block of 64 threads per row (as `row_sum.rs`): a
//! strided loop gives each thread a private `f32` value, and a tree in
//! shared memory combines the 64 of them.

mod common;

use onekernel::prelude::*;

/// `y[r][c] = exp(x[r][c] - max_r) / Σ exp(x[r][..] - max_r)`, row by row,
/// for a row-major `rows × cols` matrix. Launch with `Grid::blocks(rows)`.
#[kernel(workgroup_size = 64)]
fn softmax(x: &[f16], y: &mut [f16], cols: u32) {
    let partial = shared::<[f32; 64]>();
    let t = thread_id().x;
    let cols = cols as usize;
    let start = block_id().x * cols;

    // The row's maximum, so that `exp` never overflows.
    let mut m = f32::NEG_INFINITY;
    for c in (t..cols).step_by(64) {
        m = m.max(x[start + c].to_f32());
    }
    partial[t] = m;
    workgroup_barrier();
    let mut stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] = partial[t].max(partial[t + stride]);
        }
        workgroup_barrier();
        stride /= 2;
    }
    let row_max = partial[0];
    // Every thread has read the maximum before the sums overwrite it.
    workgroup_barrier();

    // The sum of the exponentials, in f32.
    let mut sum = 0.0f32;
    for c in (t..cols).step_by(64) {
        sum += (x[start + c].to_f32() - row_max).exp();
    }
    partial[t] = sum;
    workgroup_barrier();
    stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    let total = partial[0];

    for c in (t..cols).step_by(64) {
        y[start + c] = f16::from_f32((x[start + c].to_f32() - row_max).exp() / total);
    }
}

/// `y[r][c] = (x[r][c] - mean_r) / sqrt(var_r + eps) * gamma[c] + beta[c]`,
/// row by row, with the mean and the variance computed in `f32` (two
/// passes: the variance of `x - mean`, which loses nothing to cancellation).
/// Launch with `Grid::blocks(rows)`.
#[kernel(workgroup_size = 64)]
fn layer_norm(x: &[f16], gamma: &[f16], beta: &[f16], y: &mut [f16], cols: u32, eps: f32) {
    let partial = shared::<[f32; 64]>();
    let t = thread_id().x;
    let n = cols as usize;
    let start = block_id().x * n;

    let mut sum = 0.0f32;
    for c in (t..n).step_by(64) {
        sum += x[start + c].to_f32();
    }
    partial[t] = sum;
    workgroup_barrier();
    let mut stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    let mean = partial[0] / cols as f32;
    workgroup_barrier();

    let mut squares = 0.0f32;
    for c in (t..n).step_by(64) {
        let d = x[start + c].to_f32() - mean;
        squares += d * d;
    }
    partial[t] = squares;
    workgroup_barrier();
    stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    let inv_std = (partial[0] / cols as f32 + eps).sqrt().recip();

    for c in (t..n).step_by(64) {
        let normalized = (x[start + c].to_f32() - mean) * inv_std;
        y[start + c] = f16::from_f32(normalized * gamma[c].to_f32() + beta[c].to_f32());
    }
}

/// Plain Rust: the softmax of each row, in `f32`, rounded to `f16`.
fn softmax_reference(x: &[f16], cols: usize) -> Vec<f16> {
    let mut y = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let max = row.iter().map(|v| v.to_f32()).fold(f32::NEG_INFINITY, f32::max);
        let total: f32 = row.iter().map(|v| (v.to_f32() - max).exp()).sum();
        y.extend(row.iter().map(|v| f16::from_f32((v.to_f32() - max).exp() / total)));
    }
    y
}

/// Plain Rust: the layer norm of each row, in `f32`, rounded to `f16`.
fn layer_norm_reference(x: &[f16], gamma: &[f16], beta: &[f16], cols: usize, eps: f32) -> Vec<f16> {
    let mut y = Vec::with_capacity(x.len());
    for row in x.chunks(cols) {
        let mean = row.iter().map(|v| v.to_f32()).sum::<f32>() / cols as f32;
        let var = row.iter().map(|v| (v.to_f32() - mean) * (v.to_f32() - mean)).sum::<f32>() / cols as f32;
        let inv_std = (var + eps).sqrt().recip();
        y.extend(
            row.iter()
                .enumerate()
                .map(|(c, v)| f16::from_f32((v.to_f32() - mean) * inv_std * gamma[c].to_f32() + beta[c].to_f32())),
        );
    }
    y
}

/// `v` padded to a whole number of 4-byte words: a GPU buffer of `f16`
/// must be (wgpu copies whole words).
fn even(v: &[f16]) -> Vec<f16> {
    let mut v = v.to_vec();
    v.resize(v.len().next_multiple_of(2), f16::ZERO);
    v
}

/// Runs both kernels on `device`; returns (softmax, layer norm).
fn run(
    device: &Device,
    x: &[f16],
    gamma: &[f16],
    beta: &[f16],
    rows: usize,
    cols: usize,
    eps: f32,
) -> Result<(Vec<f16>, Vec<f16>), Box<dyn std::error::Error>> {
    let xb = Buffer::from_slice(device, &even(x))?;
    let (g, b) = (Buffer::from_slice(device, &even(gamma))?, Buffer::from_slice(device, &even(beta))?);
    let n = (rows * cols).next_multiple_of(2);
    let mut soft = Buffer::<f16>::zeroed(device, n)?;
    let mut norm = Buffer::<f16>::zeroed(device, n)?;
    softmax::launch(device, Grid::blocks(rows), &xb, &mut soft, cols as u32)?;
    layer_norm::launch(device, Grid::blocks(rows), &xb, &g, &b, &mut norm, cols as u32, eps)?;
    let (mut soft, mut norm) = (soft.read()?, norm.read()?);
    soft.truncate(rows * cols);
    norm.truncate(rows * cols);
    Ok((soft, norm))
}

/// Activations in about -8..8, and per-column scales and shifts, as `f16`.
fn data(rows: usize, cols: usize) -> (Vec<f16>, Vec<f16>, Vec<f16>) {
    let x = (0..rows * cols).map(|i| f16::from_f32(((i * 37) % 101) as f32 / 6.0 - 8.0)).collect();
    let gamma = (0..cols).map(|c| f16::from_f32(0.5 + (c % 7) as f32 / 4.0)).collect();
    let beta = (0..cols).map(|c| f16::from_f32((c % 5) as f32 / 8.0 - 0.25)).collect();
    (x, gamma, beta)
}

/// `got` and `want` agree within `ulps` units in the last place of `f16`
/// (the GPU's `exp` and its order of additions differ from Rust's in the
/// last bits of `f32`, which can move the rounded `f16` by one).
fn check(what: &str, got: &[f16], want: &[f16], ulps: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (gf, wf) = (g.to_f32(), w.to_f32());
        let ulp = (wf.abs() * 2f32.powi(-10)).max(2f32.powi(-24));
        assert!((gf - wf).abs() <= ulps * ulp, "{what}[{i}]: got {g}, want {w}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}\n{}", softmax::WGSL, layer_norm::WGSL);
        return Ok(());
    }
    let (rows, cols, eps) = (512, 1000, 1e-5);
    let (x, gamma, beta) = data(rows, cols);
    let (want_soft, want_norm) = (softmax_reference(&x, cols), layer_norm_reference(&x, &gamma, &beta, cols, eps));
    println!("the kernels need {:?}", softmax::KERNEL.features.names().collect::<Vec<_>>());
    for device in common::devices(false) {
        match run(&device, &x, &gamma, &beta, rows, cols, eps) {
            Ok((soft, norm)) => {
                check("softmax", &soft, &want_soft, 2.0);
                check("layer norm", &norm, &want_norm, 2.0);
                println!("{}: softmax and layer norm of {rows}x{cols} f16 agree with plain Rust", device.name());
            }
            Err(e) => println!("{}: {e}", device.name()),
        }
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    assert_eq!(softmax::KERNEL.features, onekernel::abi::Features::F16);
    assert_eq!(layer_norm::KERNEL.features, onekernel::abi::Features::F16);
    for device in common::devices(true) {
        // A single value; rows shorter than a block; odd lengths; rows of
        // several strides.
        for (rows, cols) in [(1, 1), (3, 5), (4, 64), (7, 333), (2, 2050)] {
            let (x, gamma, beta) = data(rows, cols);
            let (soft, norm) = run(&device, &x, &gamma, &beta, rows, cols, 1e-5).unwrap();
            let what = format!("{} {rows}x{cols}", device.name());
            // The CPU adds in the tree's order too (one f16 ulp); the GPU's
            // `exp` is an approximation as well (two).
            let ulps = if device.is_cpu() { 1.0 } else { 2.0 };
            check(&format!("softmax on {what}"), &soft, &softmax_reference(&x, cols), ulps);
            let want = layer_norm_reference(&x, &gamma, &beta, cols, 1e-5);
            check(&format!("layer norm on {what}"), &norm, &want, ulps);
            // Each softmax row sums to 1, within f16 rounding.
            for row in soft.chunks(cols) {
                let s: f32 = row.iter().map(|v| v.to_f32()).sum();
                assert!((s - 1.0).abs() < 1e-3 * cols as f32, "{what}: a row sums to {s}");
            }
        }
    }
}
