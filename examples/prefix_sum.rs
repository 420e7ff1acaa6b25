//! Learning path, step 15: **prefix sum** (scan) across many blocks.
//!
//!     cargo run --example prefix_sum            # check on every device
//!     cargo run --example prefix_sum -- --wgsl  # print both kernels' WGSL
//!
//! The inclusive prefix sum of `x` is `out[i] = x[0] + x[1] + ... + x[i]`:
//!
//! ```text
//! x:   3 1 4 1 5  9  2  6
//! out: 3 4 8 9 14 23 25 31
//! ```
//!
//! It looks sequential (each output needs the one before), yet it
//! parallelises well, and it is a building block of many GPU algorithms
//! (stream compaction, radix sort, allocating output space per thread...).
//!
//! Blocks cannot wait for each other inside one launch, so a scan of more
//! than one block takes several launches:
//!
//! 1. `scan_blocks`: each block scans its own 256 elements in shared memory,
//!    and writes its total (its last scanned value) to `block_totals`.
//! 2. Scan `block_totals`. This is the same problem again, only 256 times
//!    smaller, so `scan` calls itself on it (**recursively**, on the
//!    device, with no trip through the host): 1 Mi elements → 4096 block
//!    totals → 16 → 1 (a single block, where the recursion stops).
//! 3. `add_offsets`: block `b` adds the scanned total of blocks `0..b`
//!    (the scanned `block_totals[b - 1]`) to each of its elements.
//!
//! ```text
//! x (blocks of 4 for the picture): [3 1 4 1] [5 9 2 6] [5 3 5 8]
//! 1. scan each block:              [3 4 8 9] [5 14 16 22] [5 8 13 21]   totals: 9 22 21
//! 2. scan the totals:                                                   9 31 52
//! 3. add the previous block's:     [3 4 8 9] [14 23 25 31] [36 39 44 52]
//!                                   +0        +9             +31
//! ```
//!
//! Values are `u32`, so results compare exactly: a race (a missing barrier)
//! shows up as a wrong number.

mod common;

use onekernel::prelude::*;

/// Stage 1: inclusive scan of each block of 256 elements (Hillis–Steele),
/// and each block's total. One thread per element.
#[kernel(workgroup_size = 256)]
fn scan_blocks(input: &[u32], output: &mut [u32], block_totals: &mut [u32]) {
    let tile = shared::<[u32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;
    let n = input.len();

    // Thread `t` loads element `block * 256 + t`; past the end, 0 (adding 0
    // changes no prefix sum).
    tile[t] = if i < n { input[i] } else { 0 };
    workgroup_barrier(); // the whole tile is loaded

    // Hillis–Steele: after the level with `offset`, tile[t] holds the sum of
    // the (up to) 2 * offset elements ending at t. Offsets 1, 2, 4, ..., 128:
    // 8 levels for 256 elements.
    //
    //   start:     x0  x1     x2     x3     ...
    //   offset 1:  x0  x0..1  x1..2  x2..3  ...
    //   offset 2:  x0  x0..1  x0..2  x0..3  ...
    //
    // `offset` is the same in every thread, so the barriers inside the loop
    // are met by all threads.
    let mut offset = 1;
    while offset < 256 {
        // Read the value `offset` places to the left (if there is one)...
        let add = if t >= offset { tile[t - offset] } else { 0 };
        // ...and wait until *every* thread has read, because the next line
        // overwrites tile[t], which thread t + offset is reading.
        workgroup_barrier();
        tile[t] += add;
        // Wait until every thread has written before the next level reads.
        workgroup_barrier();
        offset *= 2;
    }

    if i < n {
        output[i] = tile[t];
    }
    // The last slot holds the sum of the whole block (0s past the end of
    // `input` do not change it).
    if t == 255 {
        block_totals[block_id().x] = tile[255];
    }
}

/// Stage 3: adds to each element of block `b` the sum of all the blocks
/// before it, `scanned_totals[b - 1]`. One thread per element, blocks of 256
/// (the same blocks as `scan_blocks`). No cooperation needed here.
#[kernel(workgroup_size = 256)]
fn add_offsets(data: &mut [u32], scanned_totals: &[u32]) {
    let i = global_id().x;
    let b = block_id().x;
    if b > 0 && i < data.len() {
        data[i] += scanned_totals[b - 1];
    }
}

/// The plain Rust answer.
fn reference(x: &[u32]) -> Vec<u32> {
    x.iter()
        .scan(0u32, |sum, v| {
            *sum += v;
            Some(*sum)
        })
        .collect()
}

/// Inclusive scan of `input` (already on `device`), as a new buffer.
/// Recursive: the block totals are scanned by `scan` itself.
fn scan(device: &Device, input: &Buffer<u32>) -> Result<Buffer<u32>, Box<dyn std::error::Error>> {
    let n = input.len();
    let blocks = n.div_ceil(256);
    let mut output = Buffer::<u32>::zeroed(device, n)?;
    let mut block_totals = Buffer::<u32>::zeroed(device, blocks)?;
    // 1. Scan each block.
    scan_blocks::launch(device, n, input, &mut output, &mut block_totals)?;
    if blocks > 1 {
        // 2. Scan the block totals (recursively; one block ends it).
        let scanned_totals = scan(device, &block_totals)?;
        // 3. Add each block's offset.
        add_offsets::launch(device, n, &mut output, &scanned_totals)?;
    }
    Ok(output)
}

/// Uploads `x`, scans it on `device` and reads the result back.
fn run(device: &Device, x: &[u32]) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
    let input = Buffer::from_slice(device, x)?;
    Ok(scan(device, &input)?.read()?)
}

/// Small values, so that even a million of them add up to well below 2^32.
fn data(n: usize) -> Vec<u32> {
    (0..n).map(|i| ((i * 2_654_435_761) >> 13) as u32 % 10).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", scan_blocks::WGSL);
        println!("{}", add_offsets::WGSL);
        return Ok(());
    }
    let n = 1_000_000;
    let x = data(n);
    let want = reference(&x);
    for device in common::devices(false) {
        let got = run(&device, &x)?;
        common::check("prefix sum", &got, &want, 0.0);
        println!("{}: inclusive prefix sum of {n} elements agrees with plain Rust", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        // 1 element; one partial block; exactly one block; two blocks; 256
        // blocks (their totals fill exactly one block); 257 blocks (three
        // levels of recursion); about a million elements (4097 blocks).
        for n in [1, 5, 255, 256, 257, 1000, 65_536, 65_537, (1 << 20) + 3] {
            let x = data(n);
            let want = reference(&x);
            // Repeat the larger runs: a race would make some run differ.
            let repeats = if n > 60_000 { 5 } else { 1 };
            for run_no in 0..repeats {
                let got = run(&device, &x).unwrap();
                common::check(&format!("{} n={n} run {run_no}", device.name()), &got, &want, 0.0);
            }
        }
    }
}
