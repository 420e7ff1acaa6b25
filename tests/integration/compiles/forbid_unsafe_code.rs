//! Generated code contains no `unsafe`: a module that forbids it can hold
//! kernels of every CPU strategy (own-element windows, shared outputs and
//! atomics, cooperation), and they run.
#![forbid(unsafe_code)]
use onekernel::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Each invocation writes its own element: the partitioned fast path.
#[kernel(workgroup_size = 64)]
fn own(a: &[f32], out: &mut [f32], s: f32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = s * a[i];
    }
}

/// Writes another element and counts with an atomic: the shared path.
#[kernel(workgroup_size = 64)]
fn shifted(a: &[u32], out: &mut [u32], count: &[AtomicU32]) {
    let i = global_id().x;
    if i + 1 < out.len() {
        out[i + 1] = a[i];
        count[0].fetch_add(1, Ordering::Relaxed);
    }
}

/// Shared memory and a barrier: the cooperative executor.
#[kernel(workgroup_size = 64)]
fn reversed(a: &[u32], out: &mut [u32]) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    tile[t] = if i < a.len() { a[i] } else { 0 };
    workgroup_barrier();
    if i < out.len() {
        out[i] = tile[63 - t];
    }
}

#[test]
fn compiles_and_runs() -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?;
    let mut out = Buffer::<f32>::zeroed(&device, 3)?;
    own::launch(&device, 3, &a, &mut out, 2.0)?;
    assert_eq!(out.read()?, [2.0, 4.0, 6.0]);

    let a = Buffer::from_slice(&device, &[5u32, 6, 7])?;
    let mut out = Buffer::<u32>::zeroed(&device, 3)?;
    let mut count = Buffer::<u32>::zeroed(&device, 1)?;
    shifted::launch(&device, 3, &a, &mut out, &mut count)?;
    assert_eq!(out.read()?, [0, 5, 6]);
    assert_eq!(count.read()?, [2]);

    let a = Buffer::from_slice(&device, &(0..64).collect::<Vec<u32>>())?;
    let mut out = Buffer::<u32>::zeroed(&device, 64)?;
    reversed::launch(&device, 64, &a, &mut out)?;
    assert_eq!(out.read()?, (0..64).rev().collect::<Vec<u32>>());
    Ok(())
}
