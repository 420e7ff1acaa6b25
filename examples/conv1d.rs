//! Learning path, step 11: **1-D convolution** with a halo on both sides.
//!
//!     cargo run --example conv1d            # check on every device
//!     cargo run --example conv1d -- --wgsl  # print the kernel's WGSL
//!
//! With 5 weights `w[0..5]` centred on the output position:
//!
//! ```text
//! out[i] = w[0]*x[i-2] + w[1]*x[i-1] + w[2]*x[i] + w[3]*x[i+1] + w[4]*x[i+2]
//! ```
//!
//! where `x` outside `0..n` counts as 0 ("zero padding"), so `out` is as long
//! as `x`. This is the building block of blurs, edge detectors and
//! convolutional networks.
//!
//! Each input is read by 5 different outputs. As in `pooling`, a block first
//! copies the inputs it needs into **shared memory**, once, and then reads
//! them from there 5 times. A block's 256 outputs need 256 + 4 inputs: its
//! own 256 plus a **halo** of 2 on the left (from the previous block's
//! slice) and 2 on the right (from the next block's slice):
//!
//! ```text
//! x:    ... start-2 start-1 | start ............ start+255 | start+256 start+257 ...
//! tile:     [0]     [1]     | [2] .................. [257] | [258]     [259]
//!           left halo       | one per thread, tile[t + 2] = x[start + t] | right halo
//! ```

mod common;

use onekernel::prelude::*;

/// `out[i]` = Σ w[k] * x[i + k - 2] for k in 0..5 (`x` is 0 outside its
/// bounds). `w` must have 5 elements. One thread per output, blocks of 256.
#[kernel(workgroup_size = 256)]
fn conv1d(x: &[f32], w: &[f32], out: &mut [f32]) {
    // 2 + 256 + 2 floats.
    let tile = shared::<[f32; 260]>();
    let t = thread_id().x;
    let i = global_id().x;
    let n = x.len();
    let start = block_id().x * 256;

    // The middle: thread `t` copies its own element, shifted right by the
    // 2 slots of the left halo.
    tile[t + 2] = if i < n { x[i] } else { 0.0 };
    // The halos: threads 0 and 1 each load one element on each side.
    if t < 2 {
        // Left: x[start - 2 + t]. In block 0 that is before x[0]: padding.
        // (Compare before subtracting: `usize` cannot go below 0.)
        tile[t] = if start + t >= 2 { x[start + t - 2] } else { 0.0 };
        // Right: x[start + 256 + t], padding past the end.
        let r = start + 256 + t;
        tile[258 + t] = if r < n { x[r] } else { 0.0 };
    }
    // Wait until the whole tile (middle and both halos) is loaded: thread 0
    // reads tile[0..5], written by threads 0 and 1 (the left halo) and by
    // threads 0, 1 and 2 (the middle).
    workgroup_barrier();

    // Output `i` is centred on tile[t + 2], so its window is tile[t..t + 5].
    let mut acc = 0.0;
    for k in 0..5 {
        acc += w[k] * tile[t + k];
    }
    if i < out.len() {
        out[i] = acc;
    }
}

/// The plain Rust answer.
fn reference(x: &[f32], w: &[f32]) -> Vec<f32> {
    let n = x.len() as isize;
    (0..n)
        .map(|i| {
            let mut acc = 0.0f32;
            for k in 0..5 {
                let j = i + k - 2;
                if (0..n).contains(&j) {
                    acc += w[k as usize] * x[j as usize];
                }
            }
            acc
        })
        .collect()
}

/// Uploads `x` and the 5 weights, launches one thread per output and reads
/// `out` back.
fn run(device: &Device, x: &[f32], w: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    assert_eq!(w.len(), 5, "the kernel's halo is sized for 5 weights");
    let x = Buffer::from_slice(device, x)?;
    let w = Buffer::from_slice(device, w)?;
    let mut out = Buffer::<f32>::zeroed(device, x.len())?;
    conv1d::launch(device, x.len(), &x, &w, &mut out)?;
    Ok(out.read()?)
}

/// A smoothing kernel (weights sum to 1) and a wavy signal.
const WEIGHTS: [f32; 5] = [0.0625, 0.25, 0.375, 0.25, 0.0625];

fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.1).sin() + ((i * 31) % 7) as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", conv1d::WGSL);
        return Ok(());
    }
    let n = 100_000;
    let x = data(n);
    let want = reference(&x, &WEIGHTS);
    for device in common::devices(false) {
        let got = run(&device, &x, &WEIGHTS)?;
        // A GPU may fuse `acc + w * x` into one fused multiply-add, which
        // rounds once instead of twice: allow a small relative difference.
        common::check("conv1d", &got, &want, 1e-4);
        println!("{}: {n} outputs of a 5-tap convolution agree with plain Rust", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // Asymmetric weights, so that a halo on the wrong side shows up.
    let w = [1.0, -2.0, 3.0, 0.5, 0.25];
    for device in common::devices(true) {
        for n in [1, 2, 3, 5, 255, 256, 257, 258, 1000, 256 * 300 + 3] {
            let x = data(n);
            let got = run(&device, &x, &w).unwrap();
            common::check(&format!("{} n={n}", device.name()), &got, &reference(&x, &w), 1e-4);
        }
    }
}
