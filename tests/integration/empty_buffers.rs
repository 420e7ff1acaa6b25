//! Launches over empty buffers, through `#[kernel]`, on the CPU executor
//! and the GPU: a kernel sees `len() == 0` on both (docs/semantics.md,
//! "Empty buffers"), and an empty grid is a no-op.

use onekernel::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Every invocation records what it sees of its buffers.
#[kernel(workgroup_size = 64)]
fn lengths(a: &[f32], out: &mut [u32], seen: &[AtomicU32]) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = a.len() as u32 * 1000 + seen.len() as u32;
    }
    if !seen.is_empty() {
        seen[0].fetch_add(1, Ordering::Relaxed);
    }
    if a.is_empty() && i < out.len() {
        out[i] += 1;
    }
}

/// `(out, seen)` after launching `lengths` over `threads` threads.
fn run(device: &Device, threads: usize, a_len: usize, out_len: usize, seen_len: usize) -> (Vec<u32>, Vec<u32>) {
    let a = Buffer::from_slice(device, &vec![0.5f32; a_len]).unwrap();
    let mut out = Buffer::<u32>::zeroed(device, out_len).unwrap();
    let mut seen = Buffer::<u32>::zeroed(device, seen_len).unwrap();
    lengths::launch(device, threads, &a, &mut out, &mut seen).unwrap();
    (out.read().unwrap(), seen.read().unwrap())
}

#[test]
fn kernels_see_empty_buffers_as_empty() {
    let devices = [Some(Device::cpu()), Device::gpu().ok()];
    assert!(devices[1].is_some(), "the test needs a GPU adapter (source .ci/env.sh for lavapipe)");
    for device in devices.iter().flatten() {
        let name = device.name();
        // Everything empty, empty grid: nothing happens.
        assert_eq!(run(device, 0, 0, 0, 0), (vec![], vec![]), "{name}");
        // Empty input: len() is 0 and is_empty() is true.
        assert_eq!(run(device, 100, 0, 100, 1), (vec![2; 100], vec![128]), "{name}");
        // Empty output: nothing written, the other buffers still work.
        assert_eq!(run(device, 100, 3, 0, 1), (vec![], vec![128]), "{name}");
        // Empty atomics.
        assert_eq!(run(device, 10, 3, 10, 0), (vec![3000; 10], vec![]), "{name}");
        // All empty on a non-empty grid.
        assert_eq!(run(device, 10, 0, 0, 0), (vec![], vec![]), "{name}");
    }
}
