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

/// Per-block sums through subgroups: a subgroup sum, one value per
/// subgroup in shared memory, then thread 0 adds those. Correct for any
/// subgroup size, and for a workgroup that is not a multiple of it (48
/// threads: one full and one partial subgroup of 32 on the CPU).
#[kernel(workgroup_size = 48)]
pub fn subgroup_block_sum(input: &[i32], sums: &mut [i32]) {
    let partial = shared::<[i32; 48]>();
    let t = thread_id().x;
    let i = global_id().x;
    let s = subgroup_add(if i < input.len() { input[i] } else { 0 });
    if subgroup_invocation_id() == 0 {
        partial[t / subgroup_size() as usize] = s;
    }
    workgroup_barrier();
    if t == 0 {
        let mut total = 0;
        for k in 0..(48 + subgroup_size() as usize - 1) / subgroup_size() as usize {
            total += partial[k];
        }
        sums[block_id().x] = total;
    }
}

/// A shuffle-xor butterfly (every lane ends with the subgroup's total)
/// checked against `subgroup_add`, and each value against the subgroup's
/// minimum and maximum; a block maximum through shared memory.
#[kernel(workgroup_size = 64)]
pub fn subgroup_butterfly(input: &[u32], agree: &mut [u32], block_max: &mut [u32]) {
    let maxima = shared::<[u32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    let x = if i < input.len() { input[i] } else { 0 };
    let mut v = x;
    let mut mask = subgroup_size() / 2;
    while mask > 0 {
        v = v.wrapping_add(subgroup_shuffle_xor(v, mask));
        mask /= 2;
    }
    let total = subgroup_add(x);
    let (lo, hi) = (subgroup_min(x), subgroup_max(x));
    if i < agree.len() {
        agree[i] = u32::from(v == total) + 2 * u32::from(lo <= x && x <= hi);
    }
    if subgroup_invocation_id() == 0 {
        maxima[t / subgroup_size() as usize] = hi;
    }
    workgroup_barrier();
    if t == 0 {
        let mut m = 0;
        for k in 0..64 / subgroup_size() as usize {
            m = m.max(maxima[k]);
        }
        block_max[block_id().x] = m;
    }
}

/// What each lane sees: its lane and the subgroup size, lane 0's index
/// (broadcast), its neighbour's (shuffle, shuffle down), the ballot of
/// indices divisible by 3 and the ballot of even lanes (WGSL's whole
/// `vec4<u32>` mask).
#[kernel(workgroup_size = 64)]
pub fn subgroup_lanes(
    lanes: &mut [u32],
    sizes: &mut [u32],
    first: &mut [u32],
    next: &mut [u32],
    down: &mut [u32],
    ballots: &mut [UVec4],
    evens: &mut [UVec4],
) {
    let i = global_id().x;
    let lane = subgroup_invocation_id();
    let size = subgroup_size();
    let me = i as u32;
    let b = subgroup_broadcast(me, 0);
    let n = subgroup_shuffle(me, (lane + 1) % size);
    let d = subgroup_shuffle_down(me, 1);
    let ballot = subgroup_ballot(me % 3 == 0);
    let even = subgroup_ballot(lane % 2 == 0);
    if i < lanes.len() {
        lanes[i] = lane;
        sizes[i] = size;
        first[i] = b;
        next[i] = n;
        down[i] = d;
        ballots[i] = ballot;
        evens[i] = even;
    }
}

/// `workgroup_uniform_load`: thread 0 reads the block's round count; the
/// loaded value is uniform, so it may bound a loop with a barrier inside.
#[kernel(workgroup_size = 32)]
pub fn uniform_rounds(counts: &[u32], out: &mut [u32]) {
    let n = shared::<[u32; 2]>();
    let acc = shared::<[u32; 32]>();
    let t = thread_id().x;
    if t == 0 {
        n[1] = counts[block_id().x];
    }
    let rounds = workgroup_uniform_load(&n[1]);
    for r in 0..rounds {
        acc[t] += r;
        workgroup_barrier();
        if t == 0 {
            acc[0] += 1;
        }
        workgroup_barrier();
    }
    out[global_id().x] = acc[t];
}

/// The lane and the subgroup size alone (no collective): the kernel is not
/// cooperative on the CPU, and may read them under any condition.
#[kernel(workgroup_size = 64)]
pub fn lane_ids(out: &mut [u32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = subgroup_invocation_id() + 1000 * subgroup_size();
    }
}

/// 80 KiB of shared memory, declared (`max_shared_bytes`): each workgroup
/// fills its array and reads it back reversed. Runs where the device has
/// that much, is `LaunchError::SharedMemoryTooLarge` elsewhere.
#[kernel(workgroup_size = 256, max_shared_bytes = 81920)]
pub fn big_shared(out: &mut [u32]) {
    let big = shared::<[u32; 20480]>();
    let t = thread_id().x;
    for q in 0..80 {
        big[t + q * 256] = (t + q * 256) as u32 + block_id().x as u32;
    }
    workgroup_barrier();
    let i = global_id().x;
    if i < out.len() {
        out[i] = big[20479 - t * 80];
    }
}
