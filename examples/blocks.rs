//! Learning path, step 6: **blocks** (docs/learning-path.md).
//!
//! What is `global_id()` made of? The grid is a row of *blocks* (WGSL
//! workgroups), each of `block_dim().x` threads. A thread knows
//!
//! - `block_id().x`: which block it is in (0, 1, 2, ...),
//! - `block_dim().x`: how many threads a block has (here 64),
//! - `thread_id().x`: its position inside its block (0..64),
//!
//! and its global index is `block_id().x * block_dim().x + thread_id().x`:
//! block 2, thread 5 handles element 2 * 64 + 5 = 133. That is exactly what
//! `global_id().x` computes; this kernel spells it out. Threads of one block
//! run together on one GPU compute unit and can cooperate (step 8); different blocks
//! are independent and may run in any order.
//!
//!     cargo run --example blocks              # run and check on every device
//!     cargo run --example blocks -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// Threads per block: small, so that even small inputs need several blocks.
const BLOCK: usize = 64;

/// `out[i] = a[i] + 10`, and `block_of[i]` = the block that handled element
/// `i`, to see the thread → data mapping in the result.
#[kernel(workgroup_size = 64)]
fn blocks(a: &[f32], out: &mut [f32], block_of: &mut [u32]) {
    // The global index, from its parts.
    let i = block_id().x * block_dim().x + thread_id().x;
    // The last block may be only partly used: guard as always.
    if i < out.len() {
        out[i] = a[i] + 10.0;
        block_of[i] = block_id().x as u32;
    }
}

/// Plain Rust: the value, and the block that owns element `i` (`i / 64`).
fn blocks_reference(a: &[f32]) -> (Vec<f32>, Vec<u32>) {
    let out = a.iter().map(|x| x + 10.0).collect();
    let block_of = (0..a.len()).map(|i| (i / BLOCK) as u32).collect();
    (out, block_of)
}

/// Launches `blocks` on exactly `ceil(n / 64)` blocks, reads both outputs.
fn run(device: &Device, a: &[f32]) -> Result<(Vec<f32>, Vec<u32>), Box<dyn std::error::Error>> {
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    let mut block_of = Buffer::<u32>::zeroed(device, a.len())?;
    // Thinking in blocks: ask for the number of blocks, not of threads.
    // `blocks::launch(device, a.len(), ..)` would launch the same grid.
    let grid = Grid::blocks(a.len().div_ceil(BLOCK));
    blocks::launch(device, grid, &a_buf, &mut out, &mut block_of)?;
    Ok((out.read()?, block_of.read()?))
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", blocks::WGSL);
        return Ok(());
    }
    let a = input(200); // 4 blocks of 64: the last one has 8 elements
    let (want, want_blocks) = blocks_reference(&a);
    for device in common::devices(false) {
        let (got, got_blocks) = run(&device, &a)?;
        common::check("blocks: out", &got, &want, 0.0);
        common::check("blocks: block_of", &got_blocks, &want_blocks, 0.0);
        println!("ok on {}", device.name());
    }
    println!("element 133 was handled by block {}, thread {}", want_blocks[133], 133 % BLOCK);
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 element (1 block); 100 (not a multiple of 64); 64 * 30 + 9 (31 blocks).
    for n in [1, 100, 64 * 30 + 9] {
        let a = input(n);
        let (want, want_blocks) = blocks_reference(&a);
        for device in common::devices(true) {
            let (got, got_blocks) = run(&device, &a).unwrap();
            common::check(&format!("blocks n={n} on {}: out", device.name()), &got, &want, 0.0);
            common::check(&format!("blocks n={n} on {}: block_of", device.name()), &got_blocks, &want_blocks, 0.0);
        }
    }
}
