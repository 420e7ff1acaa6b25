//! Block reductions, two ways: a per-block tree reduction through shared
//! memory (9 barriers per block of 256), and the same sums through
//! subgroups (`subgroup_add`, then one value per subgroup through shared
//! memory: 1 barrier).
//!
//! `cargo bench --bench reduction` prints two tables: the CPU executor's
//! barrier path against a plain sequential Rust loop (wall clock, best of
//! several runs), and the tree against the subgroup reduction on every
//! device there is (the CPU executor, and the GPU when there is one: GPU
//! kernel time from timestamps, median of 20 launches, in GB/s of input
//! read). `-- --gpu` times the GPU only, at larger sizes. A third table
//! times the learning path's tiled matmul (`examples/matmul.rs`: two
//! 16 × 16 shared tiles, two barriers per step) on the CPU executor
//! against the textbook triple loop on one thread.

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

/// The same per-block sums through subgroups: each subgroup's sum, one per
/// subgroup in shared memory, then thread 0 adds those (correct for any
/// subgroup size from 1 to 256).
#[kernel(workgroup_size = 256)]
fn block_sum_subgroups(input: &[f32], sums: &mut [f32]) {
    let partial = shared::<[f32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;
    let s = subgroup_add(if i < input.len() { input[i] } else { 0.0 });
    if subgroup_invocation_id() == 0 {
        partial[t / subgroup_size() as usize] = s;
    }
    workgroup_barrier();
    if t == 0 {
        let mut total = 0.0;
        for k in 0..256 / subgroup_size() as usize {
            total += partial[k];
        }
        sums[block_id().x] = total;
    }
}

/// `examples/matmul.rs`'s kernel: `c = a × b`, square `n × n`.
#[kernel(workgroup_size = (16, 16))]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let a_tile = shared::<[[f32; 16]; 16]>();
    let b_tile = shared::<[[f32; 16]; 16]>();
    let n = n as usize;
    let tx = thread_id().x;
    let ty = thread_id().y;
    let row = block_id().y * 16 + ty;
    let col = block_id().x * 16 + tx;
    let mut acc = 0.0;
    let steps = (n + 15) / 16;
    for step in 0..steps {
        let a_col = step * 16 + tx;
        a_tile[ty][tx] = if row < n && a_col < n { a[row * n + a_col] } else { 0.0 };
        let b_row = step * 16 + ty;
        b_tile[ty][tx] = if b_row < n && col < n { b[b_row * n + col] } else { 0.0 };
        workgroup_barrier();
        #[unroll]
        for j in 0..16 {
            acc = a_tile[ty][j].mul_add(b_tile[j][tx], acc);
        }
        workgroup_barrier();
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// The tiled matmul on the CPU executor against the textbook triple loop
/// (one thread, `mul_add` as the kernel), wall clock, best of 3.
fn matmul_on_the_cpu() {
    let device = Device::cpu();
    println!("\n| N | CPU executor, tiled matmul (ms) | sequential triple loop (ms) | executor / sequential (time) | executor GFLOP/s |");
    println!("|---|---|---|---|---|");
    for n in [128usize, 256, 512] {
        // Multiples of 1/8: every sum is exact, in any order.
        let a: Vec<f32> = (0..n * n).map(|i| ((i * 7 + 1) % 17) as f32 / 8.0 - 1.0).collect();
        let b: Vec<f32> = (0..n * n).map(|i| ((i * 7 + 2) % 17) as f32 / 8.0 - 1.0).collect();
        let (ab, bb) = (Buffer::from_slice(&device, &a).unwrap(), Buffer::from_slice(&device, &b).unwrap());
        let mut cb = Buffer::<f32>::zeroed(&device, n * n).unwrap();
        let grid = Grid::threads([n, n]);
        let ((), timing) = device
            .time(|| (0..3).for_each(|_| matmul::launch(&device, grid, &ab, &bb, &mut cb, n as u32).unwrap()))
            .unwrap();
        let t_exec = timing.min().unwrap().as_secs_f64();
        let mut c = vec![0.0f32; n * n];
        let t_seq = best_of(3, || {
            for r in 0..n {
                for col in 0..n {
                    let mut acc = 0.0f32;
                    for j in 0..n {
                        acc = a[r * n + j].mul_add(b[j * n + col], acc);
                    }
                    c[r * n + col] = acc;
                }
            }
        });
        assert_eq!(cb.read().unwrap(), c);
        println!(
            "| {n} | {:.2} | {:.2} | {:.2} | {:.2} |",
            t_exec * 1e3,
            t_seq * 1e3,
            t_exec / t_seq,
            2.0 * (n as f64).powi(3) / t_exec * 1e-9
        );
    }
}

/// Tree against subgroups on `device`, at each of `sizes`.
fn tree_against_subgroups(device: &Device, sizes: &[usize]) {
    println!("\n{}\n", device.name());
    println!(
        "| n | tree with barriers (ms) | subgroups (ms) | tree (GB/s) | subgroups (GB/s) | subgroups / tree (speed) |"
    );
    println!("|---|---|---|---|---|---|");
    for &n in sizes {
        let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let blocks = n.div_ceil(256);
        let want: Vec<f32> = input.chunks(256).map(|c| c.iter().sum()).collect();
        let a = Buffer::from_slice(device, &input).unwrap();
        let mut sums = Buffer::<f32>::zeroed(device, blocks).unwrap();
        let runs = if device.is_gpu() { 20 } else { ((1usize << 24) / n).clamp(3, 20) };
        let mut time = |launch: &dyn Fn(&mut Buffer<f32>)| {
            launch(&mut sums); // warm-up (and pipeline creation)
            let ((), timing) = device.time(|| (0..runs).for_each(|_| launch(&mut sums))).unwrap();
            // Small integers: every order of addition is exact.
            assert_eq!(sums.read().unwrap(), want);
            timing.median().unwrap().as_secs_f64()
        };
        let t_tree = time(&|s| block_sum::launch(device, n, &a, s).unwrap());
        let t_sub = time(&|s| block_sum_subgroups::launch(device, n, &a, s).unwrap());
        let gbs = |t: f64| (n * 4) as f64 / t * 1e-9;
        let label = if n >= 1 << 20 { format!("{} Mi", n >> 20) } else { format!("{} Ki", n >> 10) };
        println!(
            "| {label} | {:.3} | {:.3} | {:.1} | {:.1} | {:.2} |",
            t_tree * 1e3,
            t_sub * 1e3,
            gbs(t_tree),
            gbs(t_sub),
            t_tree / t_sub
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--gpu") {
        let gpu = Device::gpu().expect("--gpu needs a GPU");
        tree_against_subgroups(&gpu, &[1 << 20, 1 << 24, 1 << 26, 1 << 28]);
        return;
    }
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
    matmul_on_the_cpu();
    tree_against_subgroups(&device, &[1 << 16, 1 << 20]);
    if let Ok(gpu) = Device::gpu() {
        tree_against_subgroups(&gpu, &[1 << 20, 1 << 24]);
    }
}
