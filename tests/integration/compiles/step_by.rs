use onekernel::prelude::*;

#[kernel(workgroup_size = 64)]
fn strided(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let mut sum = 0.0f32;
    for j in (i..a.len()).step_by(64) {
        sum += a[j];
    }
    for k in (0..=10u32).step_by(5) {
        sum += k as f32;
    }
    let stride = grid_dim().x * block_dim().x;
    for j in (i..out.len()).step_by(stride) {
        out[j] = sum;
    }
}

/// What `strided` computes over a grid of `threads` threads, in plain
/// Rust: thread `t` sums `a[t], a[t + 64], ..` and 0, 5 and 10, and writes
/// the sum to `out[t], out[t + threads], ..`.
fn strided_reference(a: &[f32], n: usize, threads: usize) -> Vec<f32> {
    let mut out = vec![0.0; n];
    for t in 0..threads {
        let mut sum = 0.0f32;
        let mut j = t;
        while j < a.len() {
            sum += a[j];
            j += 64;
        }
        sum += 15.0;
        let mut j = t;
        while j < n {
            out[j] = sum;
            j += threads;
        }
    }
    out
}

#[test]
fn compiles_and_runs() {
    // More outputs than threads (the grid-stride loop comes round), more
    // threads than inputs; integers, so that every sum is exact.
    let a: Vec<f32> = (0..200).map(|i| (i * 7 % 23) as f32).collect();
    let (n, blocks) = (300, 2);
    let want = strided_reference(&a, n, blocks * 64);
    for device in super::devices() {
        let ab = Buffer::from_slice(&device, &a).unwrap();
        let mut out = Buffer::<f32>::zeroed(&device, n).unwrap();
        strided::launch(&device, Grid::blocks(blocks), &ab, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), want, "{}", device.name());
    }
}
