//! Learning path, step 16: **histogram** (docs/learning-path.md).
//!
//! Count how many values fall in each of 64 bins. Unlike every earlier
//! step, many threads now write to the SAME place: all threads whose value
//! is in bin 7 must increment `counts[7]`. A plain `counts[b] += 1` would be
//! a data race (two threads read 5, both write 6: one count is lost).
//! **Atomics** make the read-modify-write indivisible: `fetch_add(1, ..)`.
//!
//! Atomics on one global counter are slow when thousands of threads hit it,
//! so the work is done in two levels:
//!
//! 1. each block counts its own values into 64 shared-memory atomics
//!    (fast, and only the block's 64 threads compete);
//! 2. after a barrier, thread `t` adds the block's count for bin `t` to the
//!    global `counts[t]` with ONE storage atomic: one per bin per block
//!    instead of one per value.
//!
//! Run it:
//!
//!     cargo run --example histogram              # run and check on every device
//!     cargo run --example histogram -- --wgsl    # print the generated WGSL

mod common;

use onekernel::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Number of bins, equal to the block size so that thread `t` owns bin `t`.
const BINS: usize = 64;

/// Adds the histogram of `values` (bin = value % 64) to `counts` (64 bins).
///
/// `counts: &[AtomicU32]` is a read-write storage buffer of atomic `u32`s;
/// the host passes an ordinary `&mut Buffer<u32>` and reads plain `u32`s.
/// `Ordering::Relaxed` is the only ordering needed (and the one the GPU has):
/// we only need each increment to be indivisible.
#[kernel(workgroup_size = 64)]
fn histogram(values: &[u32], counts: &[AtomicU32]) {
    // The block's private histogram, in shared memory.
    let local = shared::<[AtomicU32; 64]>();
    let t = thread_id().x;
    let i = global_id().x;
    // Start from zero: each thread clears its bin, and the barrier makes
    // sure no thread counts into a bin before it was cleared.
    local[t].store(0, Ordering::Relaxed);
    workgroup_barrier();
    // Level 1: count this thread's value (if it has one) in the block.
    if i < values.len() {
        local[(values[i] % 64) as usize].fetch_add(1, Ordering::Relaxed);
    }
    // Wait until every thread of the block has counted. The barrier is
    // outside the `if`: every thread must reach it.
    workgroup_barrier();
    // Level 2: thread t merges bin t into the global histogram.
    let n = local[t].load(Ordering::Relaxed);
    if n > 0 {
        counts[t].fetch_add(n, Ordering::Relaxed);
    }
}

/// The wrong way: a plain `+= 1` from every thread. Nothing reports this
/// race by default (the counts just come out too small, differently on
/// each device); the race-checked CPU executor does, see the test below.
#[cfg(test)]
#[kernel(workgroup_size = 64)]
fn histogram_racy(values: &[u32], counts: &mut [u32]) {
    let i = global_id().x;
    if i < values.len() {
        counts[(values[i] % 64) as usize] += 1;
    }
}

fn histogram_reference(values: &[u32]) -> Vec<u32> {
    let mut counts = vec![0; BINS];
    for v in values {
        counts[*v as usize % BINS] += 1;
    }
    counts
}

fn run(device: &Device, values: &[u32]) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
    let values_buf = Buffer::from_slice(device, values)?;
    // The counts start at zero: the kernel adds to them.
    let mut counts = Buffer::<u32>::zeroed(device, BINS)?;
    histogram::launch(device, values.len(), &values_buf, &mut counts)?;
    // The atomics were only a way to write: the result is plain u32s.
    Ok(counts.read()?)
}

/// Pseudo-random values (a multiplicative hash), so every bin gets some.
fn input(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if common::wants_wgsl() {
        println!("{}", histogram::WGSL);
        return Ok(());
    }
    let values = input(100_000);
    let want = histogram_reference(&values);
    for device in common::devices(false) {
        let got = run(&device, &values)?;
        // Integer counts: exact, whatever order the atomics ran in.
        common::check("histogram", &got, &want, 0.0);
        println!("ok on {}", device.name());
    }
    println!("first bins: {:?}", &want[..8]);
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // 1 value; 100 (not a multiple of 64); 64 * 500 + 13 (501 blocks).
    for n in [1, 100, 64 * 500 + 13] {
        let values = input(n);
        let want = histogram_reference(&values);
        for device in common::devices(true) {
            let got = run(&device, &values).unwrap();
            common::check(&format!("histogram n={n} on {}", device.name()), &got, &want, 0.0);
        }
    }
}

#[test]
fn the_race_checker_finds_the_plain_increment() {
    // `Device::cpu_race_checked()` is what `ONEKERNEL_RACECHECK=1` makes of
    // `Device::cpu()`: one workgroup at a time, every access recorded.
    let device = Device::cpu_race_checked();
    let values = Buffer::from_slice(&device, &input(1000)).unwrap();
    let mut counts = Buffer::<u32>::zeroed(&device, BINS).unwrap();
    let err = histogram_racy::launch(&device, 1000, &values, &mut counts).unwrap_err();
    assert!(matches!(err, onekernel::LaunchError::DataRace { .. }), "{err}");
    assert!(err.to_string().contains("histogram_racy"), "{err}");
    // The atomic version passes the same checker.
    let mut counts = Buffer::<u32>::zeroed(&device, BINS).unwrap();
    histogram::launch(&device, 1000, &values, &mut counts).unwrap();
    assert_eq!(counts.read().unwrap(), histogram_reference(&input(1000)));
}
