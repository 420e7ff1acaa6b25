//! Learning path, step 9: **sliding-window sum** (sum pooling) through
//! shared memory, with a *halo*.
//!
//!     cargo run --example pooling            # check on every device
//!     cargo run --example pooling -- --wgsl  # print the kernel's WGSL
//!
//! `out[i] = x[i] + x[i+1] + ... + x[i+7]`: the sum of a window of 8
//! elements starting at `i` (elements past the end of `x` count as 0, so
//! `out` is as long as `x`).
//!
//! The naive kernel reads 8 elements of `x` per output, so every element is
//! read 8 times from global memory. Here a block of 256 threads first copies
//! the part of `x` it needs into **shared memory**, once, and then every
//! thread reads its window from there.
//!
//! Which part does a block need? Its 256 outputs start at `x[start]`
//! (`start = block * 256`), and the last one, `out[start + 255]`, reaches up
//! to `x[start + 262]`. So the block loads 256 + 7 = 263 elements: its own
//! 256 plus a **halo** of the 7 elements that belong to the next block.
//!
//! ```text
//! x:     ... | start ............................ start+255 | +256 .. +262 | ...
//! tile:        [0] .................................. [255]    [256 .. 262]
//!              loaded by threads 0..256, one each              halo: threads 0..7
//! ```

mod common;

use onekernel::prelude::*;

/// `out[i]` = Σ x[i + k] for k in 0..8 (0 past the end). One thread per
/// output, blocks of 256.
#[kernel(workgroup_size = 256)]
fn window_sum(x: &[f32], out: &mut [f32]) {
    // The block's slice of `x` and its halo: 256 + 7 floats.
    let tile = shared::<[f32; 263]>();
    let t = thread_id().x;
    let i = global_id().x;
    let n = x.len();
    // The first element of `x` this block works on.
    let start = block_id().x * 256;

    // Stage: thread `t` copies `x[start + t]` into `tile[t]`...
    tile[t] = if i < n { x[i] } else { 0.0 };
    // ...and the first 7 threads also copy one halo element each, from the
    // start of the next block's slice. Past the end of `x`, 0 (the padding).
    if t < 7 {
        let h = start + 256 + t;
        tile[256 + t] = if h < n { x[h] } else { 0.0 };
    }
    // Every slot of `tile` must be written before any thread reads its
    // window: thread 255 reads `tile[255..263]`, most of which threads 0 to
    // 6 wrote as the halo.
    // (The `if t < 7` above is fine: the barrier is *after* it, where all
    // threads are together again.)
    workgroup_barrier();

    // Sum the window from shared memory.
    let mut sum = 0.0;
    for k in 0..8 {
        sum += tile[t + k];
    }
    // Threads past the end of `out` have helped stage the tile but write
    // nothing. (No barrier follows, so guarding here is fine.)
    if i < out.len() {
        out[i] = sum;
    }
}

/// The plain Rust answer.
fn reference(x: &[f32]) -> Vec<f32> {
    (0..x.len()).map(|i| x[i..(i + 8).min(x.len())].iter().sum()).collect()
}

/// Uploads `x`, launches one thread per output and reads `out` back.
fn run(device: &Device, x: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let x = Buffer::from_slice(device, x)?;
    let mut out = Buffer::<f32>::zeroed(device, x.len())?;
    window_sum::launch(device, x.len(), &x, &mut out)?;
    Ok(out.read()?)
}

fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 13) % 29) as f32 * 0.125 - 1.0).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", window_sum::WGSL);
        return Ok(());
    }
    let n = 100_000;
    let x = data(n);
    let want = reference(&x);
    for device in common::devices(false) {
        let got = run(&device, &x)?;
        // Sums of a few multiples of 1/8 are exact in f32; the tolerance is
        // the usual one for float sums added in a different order.
        common::check("window sums", &got, &want, 1e-4);
        println!("{}: {n} sums of windows of 8 agree with plain Rust", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        // 1 element (a window hanging 7 past the end); windows across one
        // block boundary (257, 263, 264); non-multiples of 256; many blocks.
        for n in [1, 7, 8, 255, 256, 257, 263, 264, 1000, 256 * 300 + 5] {
            let x = data(n);
            let got = run(&device, &x).unwrap();
            common::check(&format!("{} n={n}", device.name()), &got, &reference(&x), 1e-4);
        }
    }
}
