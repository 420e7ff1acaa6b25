//! Learning path, step 5: **broadcast** (docs/learning-path.md).
//!
//! Add a column vector `col` (`height` values) and a row vector `row`
//! (`width` values) into a `width` x `height` matrix:
//! `out[y][x] = col[y] + row[x]`. The inputs are smaller than the output, and
//! each input value is "broadcast" along one axis: `row[x]` is read by every
//! thread of column `x`, `col[y]` by every thread of row `y`.
//!
//! The thread grid follows the *output*: one thread per matrix element, on a
//! 2-D grid, as in step 4. Reading the same input value from many threads is
//! fine: only writes need care, and each thread writes its own element.
//!
//!     cargo run --example broadcast              # run and check on every device
//!     cargo run --example broadcast -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;

/// `out[y * width + x] = col[y] + row[x]`, with `width = row.len()` and
/// `height = col.len()`: the buffer lengths give the matrix's shape, so the
/// kernel needs no scalar parameters.
#[kernel(workgroup_size = (16, 16))]
fn broadcast(col: &[f32], row: &[f32], out: &mut [f32]) {
    let x = global_id().x;
    let y = global_id().y;
    let width = row.len();
    // Guard each axis against its own input: x indexes `row`, y indexes `col`.
    if x < width && y < col.len() {
        out[y * width + x] = col[y] + row[x];
    }
}

/// The outer sum, as two nested loops.
fn broadcast_reference(col: &[f32], row: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(col.len() * row.len());
    for c in col {
        for r in row {
            out.push(c + r);
        }
    }
    out
}

/// Uploads both vectors, launches one thread per output element, reads the
/// `row.len()` x `col.len()` matrix back (row-major).
fn run(device: &Device, col: &[f32], row: &[f32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let col_buf = Buffer::from_slice(device, col)?;
    let row_buf = Buffer::from_slice(device, row)?;
    let mut out = Buffer::<f32>::zeroed(device, col.len() * row.len())?;
    // x runs along a row (`width` = row.len()), y down a column.
    broadcast::launch(device, Grid::threads([row.len(), col.len()]), &col_buf, &row_buf, &mut out)?;
    Ok(out.read()?)
}

/// A column of `height` values 0, 100, 200, ... and a row of `width`
/// values 0, 1, 2, ...: `out[y][x]` is then `100 * y + x`, easy to read.
fn inputs(width: usize, height: usize) -> (Vec<f32>, Vec<f32>) {
    let col = (0..height).map(|y| 100.0 * y as f32).collect();
    let row = (0..width).map(|x| x as f32).collect();
    (col, row)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", broadcast::WGSL);
        return Ok(());
    }
    let (col, row) = inputs(5, 3);
    let want = broadcast_reference(&col, &row);
    for device in common::devices(false) {
        let got = run(&device, &col, &row)?;
        common::check("broadcast", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    // Show the small result: row y holds col[y] + row[0..5].
    for line in want.chunks(row.len()) {
        println!("  {line:?}");
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 x 1; 17 x 5 (not multiples of 16); 70 x 40 (5 x 3 blocks); 1 x 33.
    for (width, height) in [(1, 1), (17, 5), (70, 40), (1, 33)] {
        let (col, row) = inputs(width, height);
        let want = broadcast_reference(&col, &row);
        for device in common::devices(true) {
            let got = run(&device, &col, &row).unwrap();
            common::check(&format!("broadcast {width}x{height} on {}", device.name()), &got, &want, 0.0);
        }
    }
}
