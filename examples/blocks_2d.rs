//! Learning path, step 7: **blocks_2d** (docs/learning-path.md).
//!
//! Step 6 in two dimensions. With `workgroup_size = (8, 4)` a block is a
//! tile of 8 x 4 threads, and the grid is a 2-D arrangement of tiles. Per
//! axis, a thread's position is block * block size + position in the block:
//!
//!     x = block_id().x * block_dim().x + thread_id().x
//!     y = block_id().y * block_dim().y + thread_id().y
//!
//! `grid_dim()` is the number of blocks per axis, so the blocks can also be
//! numbered row by row: `block_id().y * grid_dim().x + block_id().x`.
//!
//!     cargo run --example blocks_2d              # run and check on every device
//!     cargo run --example blocks_2d -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// Block width and height, as in `workgroup_size` below. The tile need not
/// be square.
const BW: usize = 8;
const BH: usize = 4;

/// On a `width` x `height` matrix: `out[y][x] = a[y][x] + 10`, and
/// `block_of[y][x]` = the number of the block that handled the element.
#[kernel(workgroup_size = (8, 4))]
fn blocks_2d(a: &[f32], out: &mut [f32], block_of: &mut [u32], width: u32, height: u32) {
    let x = block_id().x * block_dim().x + thread_id().x;
    let y = block_id().y * block_dim().y + thread_id().y;
    // Blocks on the right and bottom edges may stick out of the matrix.
    if x < width as usize && y < height as usize {
        let i = y * width as usize + x;
        out[i] = a[i] + 10.0;
        block_of[i] = (block_id().y * grid_dim().x + block_id().x) as u32;
    }
}

/// Plain Rust: element `(x, y)` belongs to block `(x / 8, y / 4)`.
fn blocks_2d_reference(a: &[f32], width: usize, height: usize) -> (Vec<f32>, Vec<u32>) {
    let out = a.iter().map(|v| v + 10.0).collect();
    let blocks_x = width.div_ceil(BW);
    let mut block_of = vec![0; width * height];
    for y in 0..height {
        for x in 0..width {
            block_of[y * width + x] = ((y / BH) * blocks_x + x / BW) as u32;
        }
    }
    (out, block_of)
}

/// Launches an explicit 2-D grid of blocks covering the matrix.
fn run(
    device: &Device,
    a: &[f32],
    width: usize,
    height: usize,
) -> Result<(Vec<f32>, Vec<u32>), Box<dyn std::error::Error>> {
    assert_eq!(a.len(), width * height);
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    let mut block_of = Buffer::<u32>::zeroed(device, a.len())?;
    // Blocks per axis, rounded up: a 20 x 10 matrix needs 3 x 3 blocks of
    // 8 x 4 (24 x 12 threads). Same as `Grid::threads([width, height])`.
    let grid = Grid::blocks([width.div_ceil(BW), height.div_ceil(BH)]);
    blocks_2d::launch(device, grid, &a_buf, &mut out, &mut block_of, width as u32, height as u32)?;
    Ok((out.read()?, block_of.read()?))
}

fn input(width: usize, height: usize) -> Vec<f32> {
    (0..width * height).map(|i| i as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", blocks_2d::WGSL);
        return Ok(());
    }
    let (width, height) = (20, 10);
    let a = input(width, height);
    let (want, want_blocks) = blocks_2d_reference(&a, width, height);
    for device in common::devices(false) {
        let (got, got_blocks) = run(&device, &a, width, height)?;
        common::check("blocks_2d: out", &got, &want, 0.0);
        common::check("blocks_2d: block_of", &got_blocks, &want_blocks, 0.0);
        println!("ok on {}", device.name());
    }
    // The block numbers form 8 x 4 tiles.
    println!("which block handled each element of the {width} x {height} matrix:");
    for line in want_blocks.chunks(width) {
        println!("  {}", line.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(" "));
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 x 1; 13 x 7 (multiples of the tile on neither axis); 50 x 30
    // (7 x 8 blocks); 1 x 9 and 9 x 1.
    for (width, height) in [(1, 1), (13, 7), (50, 30), (1, 9), (9, 1)] {
        let a = input(width, height);
        let (want, want_blocks) = blocks_2d_reference(&a, width, height);
        for device in common::devices(true) {
            let (got, got_blocks) = run(&device, &a, width, height).unwrap();
            let what = format!("blocks_2d {width}x{height} on {}", device.name());
            common::check(&format!("{what}: out"), &got, &want, 0.0);
            common::check(&format!("{what}: block_of"), &got_blocks, &want_blocks, 0.0);
        }
    }
}
