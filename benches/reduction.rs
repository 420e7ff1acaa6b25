//! The cost of the CPU executor's barrier path: a per-block tree reduction
//! through shared memory (9 barriers per block of 256) against a plain
//! sequential Rust loop computing the same per-block sums.
//!
//! `cargo bench --bench reduction` (wall clock, best of several runs).

mod common;
use common::best_of;

use onekernel::prelude::*;

#[kernel(workgroup_size = 256)]
fn block_sum(input: &[f32], sums: &mut [f32]) {
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

fn main() {
    let device = Device::cpu();
    println!("CPU: {}\n", device.name());
    println!("| n | CPU executor, tree reduction with barriers (ms) | sequential loop (ms) | executor / sequential (time) | ns per element (executor) |");
    println!("|---|---|---|---|---|");
    for n in [1usize << 16, 1 << 20, 1 << 24] {
        let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let blocks = n.div_ceil(256);
        let a = Buffer::from_slice(&device, &input).unwrap();
        let mut sums = Buffer::<f32>::zeroed(&device, blocks).unwrap();
        let runs = ((1usize << 26) / n).clamp(3, 50);
        // The fastest launch, on the wall clock (the CPU executor's clock).
        let ((), timing) =
            device.time(|| (0..runs).for_each(|_| block_sum::launch(&device, n, &a, &mut sums).unwrap())).unwrap();
        let t_exec = timing.min().unwrap().as_secs_f64();
        let mut seq = vec![0.0f32; blocks];
        let t_seq = best_of(runs, || {
            for (s, chunk) in seq.iter_mut().zip(input.chunks(256)) {
                *s = chunk.iter().sum();
            }
        });
        // Same values: the tree and the loop add in different orders, but
        // these inputs are small integers, so both are exact.
        assert_eq!(sums.read().unwrap(), seq);
        let label = if n >= 1 << 20 { format!("{} Mi", n >> 20) } else { format!("{} Ki", n >> 10) };
        println!(
            "| {label} | {:.2} | {:.2} | {:.1} | {:.1} |",
            t_exec * 1e3,
            t_seq * 1e3,
            t_exec / t_seq,
            t_exec * 1e9 / n as f64
        );
    }
}
