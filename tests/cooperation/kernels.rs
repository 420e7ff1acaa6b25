//! Test kernels for workgroup cooperation: shared memory, barriers and
//! atomics.

use onekernel::prelude::*;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// Per-block sum by a tree reduction in shared memory.
#[kernel(workgroup_size = 256)]
pub fn block_sum(input: &[f32], sums: &mut [f32]) {
    let partial = shared::<[f32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;
    partial[t] = if i < input.len() { input[i] } else { 0.0 };
    workgroup_barrier();
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    if t == 0 {
        sums[block_id().x] = partial[0];
    }
}

/// A histogram of bytes (values 0..64): per-block counts in shared atomics,
/// then added to the global counts with storage atomics.
#[kernel(workgroup_size = 64)]
pub fn histogram(values: &[u32], counts: &[AtomicU32]) {
    let local = shared::<[AtomicU32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    if i < values.len() {
        local[(values[i] % 64) as usize].fetch_add(1, Ordering::Relaxed);
    }
    workgroup_barrier();
    let n = local[t].load(Ordering::Relaxed);
    if n > 0 {
        counts[t].fetch_add(n, Ordering::Relaxed);
    }
}

/// Transpose through a 2-D shared tile, on a 2-D grid.
#[kernel(workgroup_size = (16, 16))]
pub fn transpose(input: &[f32], output: &mut [f32], width: u32, height: u32) {
    let tile = shared::<[[f32; 16]; 17]>();
    let x = global_id().x;
    let y = global_id().y;
    let tx = thread_id().x;
    let ty = thread_id().y;
    if x < width as usize && y < height as usize {
        tile[ty][tx] = input[y * width as usize + x];
    }
    workgroup_barrier();
    // The block's transposed position.
    let ox = block_id().y * 16 + tx;
    let oy = block_id().x * 16 + ty;
    if ox < height as usize && oy < width as usize {
        output[oy * height as usize + ox] = tile[tx][ty];
    }
}

/// Every atomic method on an `&[AtomicI32]`.
#[kernel(workgroup_size = 32)]
pub fn atomic_ops(cells: &[AtomicI32], olds: &mut [i32]) {
    let i = global_id().x;
    if i < olds.len() {
        let k = (i % 4) as i32;
        let a = cells[0].fetch_add(k, Ordering::Relaxed);
        let b = cells[1].fetch_sub(1, Ordering::Relaxed);
        cells[2].fetch_max(i as i32, Ordering::Relaxed);
        cells[3].fetch_min(-(i as i32), Ordering::Relaxed);
        cells[4].fetch_or(1 << (i % 31), Ordering::Relaxed);
        cells[5].fetch_and(!(1 << (i % 31)), Ordering::Relaxed);
        cells[6].fetch_xor(i as i32, Ordering::Relaxed);
        let won = cells[7].compare_exchange(0, i as i32 + 1, Ordering::Relaxed, Ordering::Relaxed).is_ok();
        if won {
            cells[8].store(i as i32, Ordering::Relaxed);
        }
        let s = cells[9].swap(i as i32, Ordering::Relaxed);
        olds[i] = (a >= 0) as i32 + (b <= 0) as i32 * 2 + (s >= 0) as i32 * 4 + cells[10].load(Ordering::Relaxed) * 8;
    }
}
