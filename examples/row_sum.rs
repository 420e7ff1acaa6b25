//! Learning path, step 13: **the sum of each row** of a matrix, one block per
//! row.
//!
//!     cargo run --example row_sum            # check on every device
//!     cargo run --example row_sum -- --wgsl  # print the kernel's WGSL
//!
//! A `rows × cols` matrix is stored row by row ("row-major") in one buffer:
//! element `(r, c)` is at `matrix[r * cols + c]`. We want `sums[r]`, the sum
//! of row `r`.
//!
//! The mapping changes from the earlier steps: instead of one thread per
//! element, there is **one block per row**, launched with
//! `Grid::blocks(rows)`, so `block_id().x` *is* the row. A row can be much
//! longer (or shorter) than the 256 threads of the block, so the work is
//! done in two phases:
//!
//! 1. **Strided loop**: thread `t` adds up columns `t`, `t + 256`,
//!    `t + 512`, ... of the row into a private running sum. Neighbouring
//!    threads read neighbouring columns at each step, which is the fast way
//!    to read memory on a GPU ("coalesced" access).
//! 2. **Tree reduction** of the 256 private sums in shared memory, as in
//!    `block_sum`.
//!
//! ```text
//! row r:  c0 c1 ... c255 | c256 c257 ... c511 | c512 ...
//!         t0 t1 ... t255 | t0   t1   ... t255 | t0   ...   → acc[t], then tree → sums[r]
//! ```

mod common;

use onekernel::prelude::*;

/// `sums[r]` = Σ matrix[r * cols + c] over c in 0..cols. Launch with
/// `Grid::blocks(rows)`: block `r` sums row `r`.
#[kernel(workgroup_size = 256)]
fn row_sum(matrix: &[f32], sums: &mut [f32], cols: u32) {
    let partial = shared::<[f32; 256]>();
    let t = thread_id().x;
    let row = block_id().x;
    let cols = cols as usize;
    let row_start = row * cols;

    // Phase 1: a private sum per thread over columns t, t + 256, ...
    // A thread with `t >= cols` (a short row) runs no iteration and keeps 0.
    // This loop's length depends on `t`, which is fine because there is no
    // barrier inside it.
    let mut acc = 0.0;
    for c in (t..cols).step_by(256) {
        acc += matrix[row_start + c];
    }
    partial[t] = acc;
    // All 256 private sums must be in shared memory before the tree reads
    // them.
    workgroup_barrier();

    // Phase 2: the tree, 256 → 128 → ... → 1. `stride` is the same in every
    // thread, so every thread meets every barrier.
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        // The next level reads what this one wrote.
        workgroup_barrier();
        stride /= 2;
    }

    if t == 0 {
        sums[row] = partial[0];
    }
}

/// The plain Rust answer.
fn reference(matrix: &[f32], cols: usize) -> Vec<f32> {
    matrix.chunks(cols).map(|row| row.iter().sum()).collect()
}

/// Uploads the matrix, launches one block per row and reads the row sums
/// back.
fn run(device: &Device, matrix: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    assert_eq!(matrix.len(), rows * cols);
    let m = Buffer::from_slice(device, matrix)?;
    let mut sums = Buffer::<f32>::zeroed(device, rows)?;
    // Exactly `rows` blocks (not threads!).
    row_sum::launch(device, Grid::blocks(rows), &m, &mut sums, cols as u32)?;
    Ok(sums.read()?)
}

/// Small whole numbers: the sums are exact in `f32` in any order.
fn data(rows: usize, cols: usize) -> Vec<f32> {
    (0..rows * cols).map(|i| ((i * 11) % 23) as f32 - 11.0).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", row_sum::WGSL);
        return Ok(());
    }
    let (rows, cols) = (1000, 3000);
    let m = data(rows, cols);
    let want = reference(&m, cols);
    for device in common::devices(false) {
        let got = run(&device, &m, rows, cols)?;
        common::check("row sums", &got, &want, 1e-4);
        println!("{}: the {rows} row sums of a {rows}x{cols} matrix agree with plain Rust", device.name());
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        // A 1x1 matrix; rows shorter than a block; exactly a block; rows
        // needing several strides (1000 = 3 * 256 + 232); many rows (many
        // blocks); more rows than one dispatch axis holds (70_000 > 65535
        // blocks: the runtime folds the grid).
        for (rows, cols) in [(1, 1), (3, 5), (7, 256), (5, 1000), (1, 4097), (2000, 37), (70_000, 3)] {
            let m = data(rows, cols);
            let got = run(&device, &m, rows, cols).unwrap();
            common::check(&format!("{} {rows}x{cols}", device.name()), &got, &reference(&m, cols), 1e-4);
        }
    }
}
