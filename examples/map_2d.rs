//! Learning path, step 4: **map_2d** (docs/learning-path.md).
//!
//! Many problems are 2-D: images, matrices. The data is still one flat
//! buffer (row-major: element `(x, y)` of a `width`-wide matrix is at
//! `y * width + x`), but the threads can be laid out in 2-D too: each thread
//! gets an `(x, y)` position from `global_id().x` and `global_id().y`.
//!
//! Blocks become 2-D as well: `workgroup_size = (16, 16)` is a tile of
//! 16 x 16 = 256 threads, and `Grid::threads([width, height])` launches enough
//! tiles to cover the matrix, rounding up separately along x and along y.
//!
//!     cargo run --example map_2d              # run and check on every device
//!     cargo run --example map_2d -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// `out[y][x] = a[y][x] * 2 + 1` on a `width` x `height` matrix, one thread per
/// element.
#[kernel(workgroup_size = (16, 16))]
fn map_2d(a: &[f32], out: &mut [f32], width: u32, height: u32) {
    // Column and row of this thread's element.
    let x = global_id().x;
    let y = global_id().y;
    // Both axes are rounded up to multiples of 16, so guard both: a
    // 20 x 20 matrix runs 32 x 32 threads, and a thread with x = 25 must not
    // touch row y's element 25 (that would be row y + 1's element 5!).
    if x < width as usize && y < height as usize {
        // Row-major: skip `y` whole rows, then `x` elements.
        let i = y * width as usize + x;
        out[i] = a[i] * 2.0 + 1.0;
    }
}

fn map_2d_reference(a: &[f32], width: usize, height: usize) -> Vec<f32> {
    let mut out = vec![0.0; width * height];
    for y in 0..height {
        for x in 0..width {
            out[y * width + x] = a[y * width + x] * 2.0 + 1.0;
        }
    }
    out
}

/// Uploads `a` (`width * height` elements), launches one thread per element
/// on a 2-D grid, reads `out` back.
fn run(device: &Device, a: &[f32], width: usize, height: usize) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    assert_eq!(a.len(), width * height);
    let a_buf = Buffer::from_slice(device, a)?;
    let mut out = Buffer::<f32>::zeroed(device, a.len())?;
    // At least `width` threads along x and `height` along y:
    // ceil(width / 16) x ceil(height / 16) blocks of 16 x 16 threads.
    map_2d::launch(device, Grid::threads([width, height]), &a_buf, &mut out, width as u32, height as u32)?;
    Ok(out.read()?)
}

fn input(width: usize, height: usize) -> Vec<f32> {
    (0..width * height).map(|i| (i % 23) as f32 * 0.25).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", map_2d::WGSL);
        return Ok(());
    }
    let (width, height) = (100, 60);
    let a = input(width, height);
    let want = map_2d_reference(&a, width, height);
    for device in common::devices(false) {
        let got = run(&device, &a, width, height)?;
        common::check("map_2d", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 x 1; 37 x 21 (multiples of 16 on neither axis); 100 x 70 (7 x 5
    // blocks); 1 x 50 and 50 x 1 (thin matrices).
    for (width, height) in [(1, 1), (37, 21), (100, 70), (1, 50), (50, 1)] {
        let a = input(width, height);
        let want = map_2d_reference(&a, width, height);
        for device in common::devices(true) {
            let got = run(&device, &a, width, height).unwrap();
            common::check(&format!("map_2d {width}x{height} on {}", device.name()), &got, &want, 0.0);
        }
    }
}
