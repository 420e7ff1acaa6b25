//! Shapes of barrier code the CPU phase executor splits
//! (`crates/onekernel-compiler/src/expand/phases.rs`), for the `phases`
//! tests (apart from `kernels.rs`, which the CLI's explain snapshot reads).

use onekernel::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// A per-invocation local carried across the iterations of a loop with
/// barriers, a local defined before the barriers and used after them,
/// shadowing, and shared memory written in one phase and read in the next.
#[kernel(workgroup_size = 64)]
pub fn rotate_rounds(input: &[u32], out: &mut [u32], rounds: u32) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    let mut v = if i < input.len() { input[i] } else { 0 };
    let x = t as u32 * 3;
    tile[t] = v;
    workgroup_barrier();
    for r in 0..rounds {
        // The neighbour's value, written in the phase before.
        let next = tile[(t + 1) % 64];
        workgroup_barrier();
        let next = next.wrapping_mul(3).wrapping_add(r);
        v = next;
        tile[t] = v;
        workgroup_barrier();
    }
    let x = x + v;
    if i < out.len() {
        out[i] = x;
    }
}

/// Nested loops with barriers (a `for` whose bound every invocation
/// computes, a `while` on a workgroup-wide counter), a barrier in each
/// branch of a uniform `if`, a labelled `break` out of a loop with
/// barriers, and a `return` after the last barrier.
#[kernel(workgroup_size = 32)]
pub fn nested_phases(out: &mut [u32], n: u32, mode: u32) {
    let tile = shared::<[u32; 32]>();
    let t = thread_id().x;
    let mut acc = t as u32;
    let limit = if mode > 1 { n } else { n + 1 };
    'outer: loop {
        for a in 0..limit {
            let mut b = 0;
            while b < 2 {
                tile[t] = acc + a + b;
                workgroup_barrier();
                acc += tile[(t + 31) % 32];
                workgroup_barrier();
                b += 1;
            }
        }
        if mode % 2 == 0 {
            tile[t] = acc;
            workgroup_barrier();
            acc ^= tile[31 - t];
        } else {
            workgroup_barrier();
            acc = acc.wrapping_mul(7);
        }
        workgroup_barrier();
        if mode < 100 {
            break 'outer;
        }
    }
    let i = global_id().x;
    if i >= out.len() {
        return;
    }
    out[i] = acc;
}

/// Shared atomics counted in one phase and read in the next.
#[kernel(workgroup_size = 64)]
pub fn count_then_read(values: &[u32], counts: &mut [u32]) {
    let classes = shared::<[AtomicU32; 4]>();
    let i = global_id().x;
    let v = if i < values.len() { values[i] % 4 } else { 0 };
    classes[v as usize].fetch_add(1, Ordering::Relaxed);
    workgroup_barrier();
    let same = classes[v as usize].load(Ordering::Relaxed);
    if i < counts.len() {
        counts[i] = same;
    }
}

/// Uniform early returns: a whole workgroup past the data before the first
/// barrier, and every invocation from inside a loop with barriers.
#[kernel(workgroup_size = 32)]
pub fn early_exits(out: &mut [u32], blocks: u32, stop: u32) {
    let tile = shared::<[u32; 32]>();
    let t = thread_id().x;
    if block_id().x as u32 >= blocks {
        return;
    }
    let mut round = 0u32;
    loop {
        tile[t] = round + t as u32;
        workgroup_barrier();
        let v = tile[(t + 1) % 32];
        workgroup_barrier();
        out[global_id().x] += v;
        round += 1;
        if round == stop {
            return;
        }
    }
}
