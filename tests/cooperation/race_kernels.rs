//! Kernels for the race detector's tests (`races` in main.rs): the classic
//! races, on purpose, and a correct kernel. Kept apart from `kernels.rs`,
//! whose kernels are all correct (the CLI's explain snapshot shows them).

use onekernel::prelude::*;

/// The learners' tiled matmul with the *second* barrier forgotten: a fast
/// invocation loads the next step's tiles while slower ones still read the
/// current ones. A data race the race detector must report.
#[kernel(workgroup_size = (16, 16))]
pub fn matmul_missing_barrier(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let a_tile = shared::<[[f32; 16]; 16]>();
    let b_tile = shared::<[[f32; 16]; 16]>();
    let n = n as usize;
    let (tx, ty) = (thread_id().x, thread_id().y);
    let row = block_id().y * 16 + ty;
    let col = block_id().x * 16 + tx;
    let mut acc = 0.0;
    for step in 0..(n + 15) / 16 {
        let (a_col, b_row) = (step * 16 + tx, step * 16 + ty);
        a_tile[ty][tx] = if row < n && a_col < n { a[row * n + a_col] } else { 0.0 };
        b_tile[ty][tx] = if b_row < n && col < n { b[b_row * n + col] } else { 0.0 };
        workgroup_barrier();
        for j in 0..16 {
            acc += a_tile[ty][j] * b_tile[j][tx];
        }
        // The second `workgroup_barrier();` belongs here.
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// The same kernel with both barriers: race-free.
#[kernel(workgroup_size = (16, 16))]
pub fn matmul_tiled(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let a_tile = shared::<[[f32; 16]; 16]>();
    let b_tile = shared::<[[f32; 16]; 16]>();
    let n = n as usize;
    let (tx, ty) = (thread_id().x, thread_id().y);
    let row = block_id().y * 16 + ty;
    let col = block_id().x * 16 + tx;
    let mut acc = 0.0;
    for step in 0..(n + 15) / 16 {
        let (a_col, b_row) = (step * 16 + tx, step * 16 + ty);
        a_tile[ty][tx] = if row < n && a_col < n { a[row * n + a_col] } else { 0.0 };
        b_tile[ty][tx] = if b_row < n && col < n { b[b_row * n + col] } else { 0.0 };
        workgroup_barrier();
        for j in 0..16 {
            acc += a_tile[ty][j] * b_tile[j][tx];
        }
        workgroup_barrier();
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// `block_sum` with the barrier inside the reduction loop forgotten.
#[kernel(workgroup_size = 64)]
pub fn reduction_missing_barrier(input: &[f32], sums: &mut [f32]) {
    let partial = shared::<[f32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    partial[t] = if i < input.len() { input[i] } else { 0.0 };
    workgroup_barrier();
    let mut stride = 32;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        stride /= 2;
    }
    if t == 0 {
        sums[block_id().x] = partial[0];
    }
}

/// Every invocation writes `out[0]`: a write-write race on an output.
#[kernel(workgroup_size = 64)]
pub fn all_write_one(out: &mut [u32]) {
    out[0] = global_id().x as u32;
}

/// Reads a shared element nobody stored (the store covers only half the
/// tile).
#[kernel(workgroup_size = 64)]
pub fn reads_unwritten_shared(out: &mut [f32]) {
    let tile = shared::<[f32; 64]>();
    let t = thread_id().x;
    if t < 32 {
        tile[t] = t as f32;
    }
    workgroup_barrier();
    out[global_id().x] = tile[63 - t];
}
