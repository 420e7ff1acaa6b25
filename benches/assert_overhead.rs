//! What an `assert!` costs on the GPU: the row softmax of
//! `examples/softmax_rows.rs` (4096 numbers per row, one block of 256
//! threads per row) against the same kernel with an `assert!` in its hot
//! loop (one per number, never failing), which binds the print buffer and
//! checks every value. A kernel without `println!`/`assert!` pays nothing
//! (its WGSL is unchanged); this measures the price of using one.
//!
//!     cargo bench --bench assert_overhead                 # 4096 rows
//!     cargo bench --bench assert_overhead -- --rows 64    # a smaller problem (lavapipe)
//!
//! Prints one table: GPU kernel time (timestamps, median of 30 launches)
//! of each kernel, its GB/s (the row read once and written once) and the
//! ratio of the assert kernel's time to the plain one's.

use onekernel::prelude::*;

#[onekernel::kernels]
mod rows {
    use onekernel::prelude::*;

    /// Numbers per row.
    pub const COLS: usize = 4096;
    /// Threads per block (one block per row).
    pub const THREADS: usize = 256;
    /// Numbers per thread.
    pub const PER: usize = COLS / THREADS;

    /// The row softmax of `examples/softmax_rows.rs`.
    #[kernel(workgroup_size = 256)]
    pub fn softmax(x: &[f32], y: &mut [f32]) {
        let partial = shared::<[f32; 256]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;
        let mut v = [0.0f32; PER];
        let mut m = f32::NEG_INFINITY;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t];
            m = m.max(v[k]);
        }
        let m = subgroup_max(m);
        if first_lane {
            partial[t / per_subgroup] = m;
        }
        workgroup_barrier();
        let mut row_max = f32::NEG_INFINITY;
        for s in 0..THREADS / per_subgroup {
            row_max = row_max.max(partial[s]);
        }
        workgroup_barrier();
        let mut sum = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] = (v[k] - row_max).exp();
            sum += v[k];
        }
        let sum = subgroup_add(sum);
        if first_lane {
            partial[t / per_subgroup] = sum;
        }
        workgroup_barrier();
        let mut total = 0.0f32;
        for s in 0..THREADS / per_subgroup {
            total += partial[s];
        }
        let scale = 1.0 / total;
        #[unroll]
        for k in 0..PER {
            y[base + k * THREADS + t] = v[k] * scale;
        }
    }

    /// `softmax` with an `assert!` on every exponential (each is at most
    /// 1: the row's maximum was subtracted).
    #[kernel(workgroup_size = 256)]
    pub fn softmax_assert(x: &[f32], y: &mut [f32]) {
        let partial = shared::<[f32; 256]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;
        let mut v = [0.0f32; PER];
        let mut m = f32::NEG_INFINITY;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t];
            m = m.max(v[k]);
        }
        let m = subgroup_max(m);
        if first_lane {
            partial[t / per_subgroup] = m;
        }
        workgroup_barrier();
        let mut row_max = f32::NEG_INFINITY;
        for s in 0..THREADS / per_subgroup {
            row_max = row_max.max(partial[s]);
        }
        workgroup_barrier();
        let mut sum = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] = (v[k] - row_max).exp();
            assert!(v[k] <= 1.0, "exp({}) above one", v[k]);
            sum += v[k];
        }
        let sum = subgroup_add(sum);
        if first_lane {
            partial[t / per_subgroup] = sum;
        }
        workgroup_barrier();
        let mut total = 0.0f32;
        for s in 0..THREADS / per_subgroup {
            total += partial[s];
        }
        let scale = 1.0 / total;
        #[unroll]
        for k in 0..PER {
            y[base + k * THREADS + t] = v[k] * scale;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args
        .iter()
        .position(|a| a == "--rows")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().expect("--rows N"))
        .unwrap_or(4096);
    let Ok(device) = Device::gpu() else {
        println!("no GPU: nothing to time");
        return;
    };
    let n = rows * rows::COLS;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0).collect();
    let x = Buffer::from_slice(&device, &data).unwrap();
    let mut y = Buffer::<f32>::zeroed(&device, n).unwrap();
    let mut y2 = Buffer::<f32>::zeroed(&device, n).unwrap();
    let grid = Grid::blocks([rows]);
    let runs = 30;
    // Warm up (pipelines), and check both agree.
    rows::softmax::launch(&device, grid, &x, &mut y).unwrap();
    rows::softmax_assert::launch(&device, grid, &x, &mut y2).unwrap();
    assert_eq!(y.read().unwrap(), y2.read().unwrap(), "the kernels disagree");
    let time = |f: &mut dyn FnMut()| {
        let ((), timing) = device.time(|| (0..runs).for_each(|_| f())).unwrap();
        timing.median().unwrap().as_secs_f64()
    };
    let plain = time(&mut || rows::softmax::launch(&device, grid, &x, &mut y).unwrap());
    let checked = time(&mut || rows::softmax_assert::launch(&device, grid, &x, &mut y2).unwrap());
    // The assert launches' print buffers are read (and found empty) here.
    y2.read().unwrap();
    let gbs = |t: f64| (2 * n * 4) as f64 / t / 1e9;
    println!("| kernel ({rows} rows of {}) | µs | GB/s | ratio |", rows::COLS);
    println!("|---|---|---|---|");
    println!("| softmax | {:.1} | {:.0} | 1.00 |", plain * 1e6, gbs(plain));
    println!(
        "| softmax with `assert!` per number | {:.1} | {:.0} | {:.3} |",
        checked * 1e6,
        gbs(checked),
        checked / plain
    );
}
