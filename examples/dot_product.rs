//! Learning path, step 10: **dot product**, `a · b = Σ a[i] * b[i]`.
//!
//!     cargo run --example dot_product            # check on every device
//!     cargo run --example dot_product -- --wgsl  # print the kernel's WGSL
//!
//! A dot product is a map (`a[i] * b[i]`, one thread per element) followed by
//! a reduction (add everything up). The map is easy; the reduction needs the
//! threads to cooperate. It is done in two stages:
//!
//! 1. On the GPU, each block of 256 threads multiplies its 256 pairs, puts
//!    the products in **shared memory** and adds them up with a **tree
//!    reduction**, then writes one *partial sum* per block.
//! 2. On the host, the few thousand partial sums are added up (a loop in
//!    plain Rust; a second launch of a reduction kernel would also do).
//!
//! Why not let every thread add its product straight into one global total?
//! Because thousands of threads would then all read-modify-write the same
//! number at once: a race (and the GPU has no atomic add on `f32` here).
//! Within a block, shared memory plus barriers lets the threads take turns
//! in an orderly way.

mod common;

use onekernel::prelude::*;

/// `partials[b]` = Σ a[i] * b[i] over block `b`'s 256 indices `i` (indices
/// past the end count as 0). Launch with one thread per element.
#[kernel(workgroup_size = 256)]
fn dot_partial(a: &[f32], b: &[f32], partials: &mut [f32]) {
    // One slot per thread of the block (256 × 4 bytes = 1 KiB).
    let partial = shared::<[f32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;

    // The map: thread `t` of block `blk` multiplies pair `blk * 256 + t`.
    // Threads past the end of the data contribute 0 rather than returning:
    // they still have to take part in every barrier below.
    partial[t] = if i < a.len() { a[i] * b[i] } else { 0.0 };
    // All 256 products must be stored before anyone starts adding them.
    workgroup_barrier();

    // The tree: each level, the lower half of the still-active slots adds
    // in the upper half, and the number of active slots halves:
    //
    //   stride 128: partial[0..128] += partial[128..256]
    //   stride  64: partial[0..64]  += partial[64..128]
    //   ...
    //   stride   1: partial[0]      += partial[1]       → the block's sum
    //
    // `stride` depends on nothing thread-specific, so all threads loop the
    // same number of times and all meet each barrier: a barrier inside this
    // loop is allowed (a loop bound that depended on `t` or on loaded data
    // would be a compile error).
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        // The next level reads slots that this level just wrote: wait for
        // every thread to finish this level first.
        workgroup_barrier();
        stride /= 2;
    }

    if t == 0 {
        partials[block_id().x] = partial[0];
    }
}

/// The plain Rust answer, accumulated in `f64` so that it is accurate.
fn reference(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (*x as f64) * (*y as f64)).sum::<f64>() as f32
}

/// Uploads `a` and `b`, launches one thread per element, reads back one
/// partial sum per block and adds them up on the host (stage 2).
fn run(device: &Device, a: &[f32], b: &[f32]) -> Result<f32, Box<dyn std::error::Error>> {
    let blocks = a.len().div_ceil(256);
    let a = Buffer::from_slice(device, a)?;
    let b = Buffer::from_slice(device, b)?;
    let mut partials = Buffer::<f32>::zeroed(device, blocks)?;
    dot_partial::launch(device, a.len(), &a, &b, &mut partials)?;
    // Stage 2, on the host: a few thousand numbers at most. Summing them in
    // f64 keeps the result accurate for long vectors.
    Ok(partials.read()?.iter().map(|p| *p as f64).sum::<f64>() as f32)
}

/// Positive values, so that the sum does not cancel and a relative
/// tolerance is meaningful.
fn data(n: usize) -> (Vec<f32>, Vec<f32>) {
    let a = (0..n).map(|i| ((i % 7) + 1) as f32 * 0.25).collect();
    let b = (0..n).map(|i| ((i % 5) + 1) as f32 * 0.5).collect();
    (a, b)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", dot_partial::WGSL);
        return Ok(());
    }
    let n = 1_000_000;
    let (a, b) = data(n);
    let want = reference(&a, &b);
    for device in common::devices(false) {
        let got = run(&device, &a, &b)?;
        // The GPU adds in a different order than plain Rust: allow a small
        // relative difference.
        common::check("dot product", &[got], &[want], 1e-4);
        println!("{}: a · b over {n} elements = {got} (plain Rust: {want})", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        for n in [1, 5, 255, 256, 257, 1000, 256 * 300 + 7] {
            let (a, b) = data(n);
            let got = run(&device, &a, &b).unwrap();
            common::check(&format!("{} n={n}", device.name()), &[got], &[reference(&a, &b)], 1e-4);
        }
        // About a million elements, five times. The tree adds in a fixed
        // order, so every run must give the *same bits*; a race (a missing
        // or misplaced barrier) would make some run differ.
        let n = 1 << 20;
        let (a, b) = data(n);
        let want = reference(&a, &b);
        let first = run(&device, &a, &b).unwrap();
        common::check(&format!("{} n={n}", device.name()), &[first], &[want], 1e-4);
        for run_no in 1..5 {
            let again = run(&device, &a, &b).unwrap();
            assert_eq!(
                again.to_bits(),
                first.to_bits(),
                "{} n={n}: run {run_no} gave {again}, run 0 gave {first}",
                device.name()
            );
        }
    }
}
