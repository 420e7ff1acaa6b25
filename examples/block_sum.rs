//! Learning path, step 12: **one sum per block** (a *reduction*).
//!
//!     cargo run --example block_sum            # check on every device
//!     cargo run --example block_sum -- --wgsl  # print the kernel's WGSL
//!
//! So far every thread has produced its own output. A *reduction* goes the
//! other way: many inputs, one output. Here each block of 256 threads adds up
//! its 256 elements of `input` and writes one number, `sums[block]`:
//!
//! ```text
//! input:  [ 0 .. 255 | 256 .. 511 | 512 .. 767 | ... ]
//!              |            |            |
//! sums:   [ block 0,     block 1,     block 2,    ... ]
//! ```
//!
//! The threads of a block cooperate through **shared memory** (WGSL's
//! `var<workgroup>`, CUDA's `__shared__`): a small array that every thread
//! of the block can read and write, and that lives only as long as the block.
//! The sum is a **tree**: 256 numbers → 128 → 64 → ... → 1, halving the
//! number of busy threads each level, so it takes log2(256) = 8 steps
//! instead of 255 additions by one thread.
//!
//! Between two levels every thread must wait for all the others to finish
//! the level before: that is what `workgroup_barrier()` does.

mod common;

use onekernel::prelude::*;

/// `sums[b]` = the sum of block `b`'s 256 elements of `input` (elements past
/// the end of `input` count as 0). Launch with one thread per element.
#[kernel(workgroup_size = 256)]
fn block_sum(input: &[f32], sums: &mut [f32]) {
    // 256 floats (1 KiB) shared by the 256 threads of this block. Each block
    // gets its own copy; blocks never see each other's.
    let partial = shared::<[f32; 256]>();

    // Thread → data: thread `t` of block `b` loads element `b * 256 + t`.
    let t = thread_id().x; // 0..256, position inside the block
    let i = global_id().x; // position in the whole grid

    // Step 1: every thread puts its element into shared memory. The last
    // block may hang over the end of `input`: its extra threads store 0, the
    // neutral element of `+`, instead of returning early, because *every*
    // thread of the block has to reach the barriers below.
    partial[t] = if i < input.len() { input[i] } else { 0.0 };

    // Barrier 1: wait until all 256 elements are in `partial` before anyone
    // reads a neighbour's slot.
    workgroup_barrier();

    // Step 2: the tree. With stride 128, threads 0..128 add the upper half
    // onto the lower half (`partial[t] += partial[t + 128]`); then stride 64
    // folds 128 values into 64; ... until stride 1 leaves the total in
    // `partial[0]`.
    //
    //   stride 128:  p[0] += p[128], p[1] += p[129], ..., p[127] += p[255]
    //   stride  64:  p[0] += p[64],  ...,                p[63]  += p[127]
    //   ...
    //   stride   1:  p[0] += p[1]
    let mut stride = 128;
    // `stride` is the same in every thread (it does not depend on `t` or on
    // the data), so every thread runs the same number of iterations and
    // meets the barrier inside the loop the same number of times: the
    // compiler accepts a barrier in this loop.
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        // Barrier 2 (once per level): the next level reads the values this
        // level wrote, so wait for every thread to finish writing them.
        // Without it a thread could read `p[t + stride]` before its owner
        // had added into it: a *race*, giving wrong sums now and then.
        workgroup_barrier();
        stride /= 2;
    }

    // Step 3: one thread per block writes the block's result.
    if t == 0 {
        sums[block_id().x] = partial[0];
    }
}

/// The plain Rust answer: the sum of each chunk of 256 elements.
fn reference(input: &[f32]) -> Vec<f32> {
    input.chunks(256).map(|c| c.iter().sum()).collect()
}

/// Uploads `input`, launches one thread per element and reads back the
/// `ceil(n / 256)` block sums.
fn run(device: &Device, input: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let blocks = input.len().div_ceil(256);
    let input = Buffer::from_slice(device, input)?;
    let mut sums = Buffer::<f32>::zeroed(device, blocks)?;
    // `n` threads, rounded up to whole blocks of 256: exactly `blocks` blocks.
    block_sum::launch(device, input.len(), &input, &mut sums)?;
    Ok(sums.read()?)
}

/// Small whole numbers: every partial sum is a whole number below 2^24, so
/// it is exact in `f32` whatever the order of the additions, and the GPU's
/// tree must match plain Rust's left-to-right sum *exactly*. A race (a
/// missing barrier) would show up as a mismatch, not hide in a tolerance.
fn data(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7) % 17) as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", block_sum::WGSL);
        return Ok(());
    }
    let n = 1_000_000;
    let input = data(n);
    let want = reference(&input);
    for device in common::devices(false) {
        let got = run(&device, &input)?;
        common::check("block sums", &got, &want, 0.0);
        println!("{}: {} block sums of {n} elements agree with plain Rust", device.name(), got.len());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        // One element; a partial block; exactly one block; non-multiples of
        // 256; many blocks.
        for n in [1, 100, 256, 257, 1000, 256 * 300 + 7] {
            let input = data(n);
            let got = run(&device, &input).unwrap();
            common::check(&format!("{} n={n}", device.name()), &got, &reference(&input), 0.0);
        }
        // About a million elements (3907 blocks), several times: a race
        // would make some run differ.
        let n = 1 << 20;
        let input = data(n);
        let want = reference(&input);
        for run_no in 0..5 {
            let got = run(&device, &input).unwrap();
            common::check(&format!("{} n={n} run {run_no}", device.name()), &got, &want, 0.0);
        }
    }
}
