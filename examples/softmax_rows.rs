//! **Row softmax and layer norm with subgroup reductions**: one block per
//! row of 4096 numbers, each of its 256 threads holding 16 of them in
//! registers.
//!
//!     cargo run --release --example softmax_rows                  # check on every device
//!     cargo run --release --example softmax_rows -- --wgsl        # print the WGSL
//!     cargo run --release --example softmax_rows -- --time 4096   # GPU GB/s over 4096 rows
//!
//! `softmax_f16` and `layer_norm_f16` are the same kernels over `f16`
//! rows (half the memory traffic), widening to `f32` as they read.
//!
//! Both need reductions over a row: softmax the row's maximum and the sum
//! of `exp(x - max)`, layer norm the mean and the variance. Each is done
//! in two steps: `subgroup_max` / `subgroup_add` combine a subgroup's
//! values in registers (no shared memory, no barrier), then the first lane
//! of each subgroup leaves its result in shared memory and every thread
//! combines those few values after one barrier. This is correct for every
//! subgroup size (8 on lavapipe, 32 on NVIDIA and on the CPU executor).
//!
//! A thread reads its 16 numbers once (columns `t`, `t + 256`, ...:
//! neighbouring threads read neighbouring addresses), keeps them in an
//! `#[unroll]`ed local array, and writes 16 results: the row crosses
//! memory twice, the least a softmax can do.

mod common;

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

    /// `y[r][j] = exp(x[r][j] - max_r) / sum_j exp(x[r][j] - max_r)` for
    /// row-major `x` of `COLS`-wide rows. Launch with
    /// `Grid::blocks([rows])`.
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
        // The row's maximum: per subgroup, then over the subgroups.
        let m = subgroup_max(m);
        if first_lane {
            partial[t / per_subgroup] = m;
        }
        workgroup_barrier();
        let mut row_max = f32::NEG_INFINITY;
        for s in 0..THREADS / per_subgroup {
            row_max = row_max.max(partial[s]);
        }
        // Every thread has read `partial` before it is written again.
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

    /// `y[r][j] = (x[r][j] - mean_r) / sqrt(var_r + eps) * gamma[j] + beta[j]`
    /// (the variance over the row, divided by `COLS`). Launch with
    /// `Grid::blocks([rows])`.
    #[kernel(workgroup_size = 256)]
    pub fn layer_norm(x: &[f32], gamma: &[f32], beta: &[f32], y: &mut [f32], eps: f32) {
        let partial = shared::<[f32; 256]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;

        let mut v = [0.0f32; PER];
        let mut sum = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t];
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
        let mean = total / COLS as f32;
        workgroup_barrier();

        // The variance from the centred values (two passes over the
        // registers: no cancellation, unlike E[x²] - E[x]²).
        let mut squares = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] -= mean;
            squares += v[k] * v[k];
        }
        let squares = subgroup_add(squares);
        if first_lane {
            partial[t / per_subgroup] = squares;
        }
        workgroup_barrier();
        let mut total = 0.0f32;
        for s in 0..THREADS / per_subgroup {
            total += partial[s];
        }
        let inv_std = 1.0 / (total / COLS as f32 + eps).sqrt();
        #[unroll]
        for k in 0..PER {
            let j = k * THREADS + t;
            y[base + j] = (v[k] * inv_std).mul_add(gamma[j], beta[j]);
        }
    }

    /// `softmax` with its block as parameters: `THREADS` threads a row,
    /// `PER = COLS / THREADS` numbers each (the launch checks that they
    /// multiply to `COLS`). Each specialisation unrolls the loops over
    /// `PER`, so `v` is registers, as in the hand-picked `softmax`
    /// (`THREADS = 256`, `PER = 16`); the tuner picks the block
    /// (`--time`).
    #[kernel(workgroup_size = THREADS, max_workgroup_invocations = 1024)]
    pub fn softmax_t<const THREADS: usize, const PER: usize>(x: &[f32], y: &mut [f32]) {
        let partial = shared::<[f32; THREADS]>();
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

    /// `layer_norm` with its block as parameters (see `softmax_t`).
    #[kernel(workgroup_size = THREADS, max_workgroup_invocations = 1024)]
    pub fn layer_norm_t<const THREADS: usize, const PER: usize>(
        x: &[f32],
        gamma: &[f32],
        beta: &[f32],
        y: &mut [f32],
        eps: f32,
    ) {
        let partial = shared::<[f32; THREADS]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;

        let mut v = [0.0f32; PER];
        let mut sum = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t];
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
        let mean = total / COLS as f32;
        workgroup_barrier();

        let mut squares = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] -= mean;
            squares += v[k] * v[k];
        }
        let squares = subgroup_add(squares);
        if first_lane {
            partial[t / per_subgroup] = squares;
        }
        workgroup_barrier();
        let mut total = 0.0f32;
        for s in 0..THREADS / per_subgroup {
            total += partial[s];
        }
        let inv_std = 1.0 / (total / COLS as f32 + eps).sqrt();
        #[unroll]
        for k in 0..PER {
            let j = k * THREADS + t;
            y[base + j] = (v[k] * inv_std).mul_add(gamma[j], beta[j]);
        }
    }

    /// `softmax` over `f16` rows (half the bytes): each number is
    /// widened to `f32` as it is read, and rounded to `f16` once, when it
    /// is written (`SHADER_F16`). Launch with `Grid::blocks([rows])`.
    #[kernel(workgroup_size = 256)]
    pub fn softmax_f16(x: &[f16], y: &mut [f16]) {
        let partial = shared::<[f32; 256]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;

        let mut v = [0.0f32; PER];
        let mut m = f32::NEG_INFINITY;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t].to_f32();
            m = m.max(v[k]);
        }
        // The row's maximum: per subgroup, then over the subgroups.
        let m = subgroup_max(m);
        if first_lane {
            partial[t / per_subgroup] = m;
        }
        workgroup_barrier();
        let mut row_max = f32::NEG_INFINITY;
        for s in 0..THREADS / per_subgroup {
            row_max = row_max.max(partial[s]);
        }
        // Every thread has read `partial` before it is written again.
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
            y[base + k * THREADS + t] = f16::from_f32(v[k] * scale);
        }
    }

    /// `layer_norm` over `f16` rows, statistics in `f32` (`SHADER_F16`).
    /// Launch with `Grid::blocks([rows])`.
    #[kernel(workgroup_size = 256)]
    pub fn layer_norm_f16(x: &[f16], gamma: &[f32], beta: &[f32], y: &mut [f16], eps: f32) {
        let partial = shared::<[f32; 256]>();
        let t = thread_id().x;
        let base = block_id().x * COLS;
        let per_subgroup = subgroup_size() as usize;
        let first_lane = subgroup_invocation_id() == 0;

        let mut v = [0.0f32; PER];
        let mut sum = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] = x[base + k * THREADS + t].to_f32();
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
        let mean = total / COLS as f32;
        workgroup_barrier();

        // The variance from the centred values (two passes over the
        // registers: no cancellation, unlike E[x²] - E[x]²).
        let mut squares = 0.0f32;
        #[unroll]
        for k in 0..PER {
            v[k] -= mean;
            squares += v[k] * v[k];
        }
        let squares = subgroup_add(squares);
        if first_lane {
            partial[t / per_subgroup] = squares;
        }
        workgroup_barrier();
        let mut total = 0.0f32;
        for s in 0..THREADS / per_subgroup {
            total += partial[s];
        }
        let inv_std = 1.0 / (total / COLS as f32 + eps).sqrt();
        #[unroll]
        for k in 0..PER {
            let j = k * THREADS + t;
            y[base + j] = f16::from_f32((v[k] * inv_std).mul_add(gamma[j], beta[j]));
        }
    }
}

use rows::COLS;

/// The blocks the tuner tries for `softmax_t` and `layer_norm_t`:
/// threads per row (`PER = COLS / THREADS` numbers each).
const BLOCKS: [(&str, usize); 4] = [("t128", 128), ("t256", 256), ("t512", 512), ("t1024", 1024)];

/// `softmax_t` with `threads` threads a row (each tuple written out:
/// const generic arguments are part of the source).
fn softmax_block(d: &Device, threads: usize, x: &Buffer<f32>, y: &mut Buffer<f32>) -> Result<(), LaunchError> {
    let grid = Grid::blocks([x.len() / COLS]);
    match threads {
        128 => rows::softmax_t::launch::<128, { COLS / 128 }>(d, grid, x, y),
        256 => rows::softmax_t::launch::<256, { COLS / 256 }>(d, grid, x, y),
        512 => rows::softmax_t::launch::<512, { COLS / 512 }>(d, grid, x, y),
        1024 => rows::softmax_t::launch::<1024, { COLS / 1024 }>(d, grid, x, y),
        other => panic!("no launch is written for {other} threads"),
    }
}

/// `layer_norm_t` with `threads` threads a row.
fn layer_norm_block(
    d: &Device,
    threads: usize,
    x: &Buffer<f32>,
    (g, b): (&Buffer<f32>, &Buffer<f32>),
    y: &mut Buffer<f32>,
) -> Result<(), LaunchError> {
    let grid = Grid::blocks([x.len() / COLS]);
    match threads {
        128 => rows::layer_norm_t::launch::<128, { COLS / 128 }>(d, grid, x, g, b, y, EPS),
        256 => rows::layer_norm_t::launch::<256, { COLS / 256 }>(d, grid, x, g, b, y, EPS),
        512 => rows::layer_norm_t::launch::<512, { COLS / 512 }>(d, grid, x, g, b, y, EPS),
        1024 => rows::layer_norm_t::launch::<1024, { COLS / 1024 }>(d, grid, x, g, b, y, EPS),
        other => panic!("no launch is written for {other} threads"),
    }
}

/// The tuner's block for `which` ("softmax" or "layer_norm") over `rows`
/// rows: every block's output must agree with the first one's within
/// `1e-5` (another block sums in another order).
fn tuned_block(
    device: &Device,
    which: &str,
    x: &Buffer<f32>,
    affine: (&Buffer<f32>, &Buffer<f32>),
    y: &mut Buffer<f32>,
) -> Result<(&'static str, usize, onekernel::tune::Source), Box<dyn std::error::Error>> {
    let tuner = onekernel::tune::Tuner::new(device, which, &[&rows::softmax_t::KERNEL, &rows::layer_norm_t::KERNEL]);
    let key = onekernel::tune::Key::new().size("rows", x.len() / COLS);
    let mut read: Vec<usize> = Vec::new();
    let choice = tuner.choose_checked(
        &key,
        &BLOCKS,
        |&(_, threads)| -> Result<Vec<f32>, Box<dyn std::error::Error>> {
            if which == "softmax" {
                softmax_block(device, threads, x, y)?;
            } else {
                layer_norm_block(device, threads, x, affine, y)?;
            }
            // Only the first run of each block is compared; the timed ones
            // are not read back.
            if read.contains(&threads) {
                return Ok(Vec::new());
            }
            read.push(threads);
            Ok(y.read()?)
        },
        |want: &Vec<f32>, got: &Vec<f32>| {
            want.len() == got.len() && want.iter().zip(got).all(|(a, b)| (a - b).abs() <= 1e-5 * a.abs().max(1.0))
        },
    )?;
    Ok((choice.candidate.0, choice.candidate.1, choice.source))
}

/// Row softmax in plain Rust (f64 accumulation: the reference).
fn softmax_reference(x: &[f32]) -> Vec<f32> {
    x.chunks(COLS)
        .flat_map(|row| {
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum: f64 = row.iter().map(|&v| f64::from((v - max).exp())).sum();
            row.iter().map(move |&v| ((v - max).exp() as f64 / sum) as f32)
        })
        .collect()
}

/// Layer norm in plain Rust (f64 statistics: the reference).
fn layer_norm_reference(x: &[f32], gamma: &[f32], beta: &[f32], eps: f32) -> Vec<f32> {
    x.chunks(COLS)
        .flat_map(|row| {
            let n = COLS as f64;
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
            let var = row.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n;
            let inv_std = 1.0 / (var + f64::from(eps)).sqrt();
            row.iter()
                .zip(gamma.iter().zip(beta))
                .map(move |(&v, (&g, &b))| ((f64::from(v) - mean) * inv_std * f64::from(g) + f64::from(b)) as f32)
        })
        .collect()
}

/// `rows` rows of pseudo-random numbers in [-4, 4).
fn data(rows: usize, seed: u32) -> Vec<f32> {
    (0..rows * COLS)
        .map(|i| {
            let h = (i as u32 ^ seed).wrapping_mul(2_654_435_761).rotate_left(13).wrapping_mul(2_246_822_519);
            (h >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0
        })
        .collect()
}

/// The scale and shift of layer norm: `gamma` near 1, `beta` near 0.
fn affine() -> (Vec<f32>, Vec<f32>) {
    let gamma = (0..COLS).map(|j| 1.0 + (j % 13) as f32 / 64.0).collect();
    let beta = (0..COLS).map(|j| (j % 7) as f32 / 32.0 - 0.1).collect();
    (gamma, beta)
}

const EPS: f32 = 1e-5;

/// Both kernels on `device` over `x`: (softmax, layer norm).
fn run(device: &Device, x: &[f32]) -> Result<(Vec<f32>, Vec<f32>), Box<dyn std::error::Error>> {
    let rows = x.len() / COLS;
    let (gamma, beta) = affine();
    let xb = Buffer::from_slice(device, x)?;
    let (g, b) = (Buffer::from_slice(device, &gamma)?, Buffer::from_slice(device, &beta)?);
    let mut y = Buffer::<f32>::zeroed(device, x.len())?;
    rows::softmax::launch(device, Grid::blocks([rows]), &xb, &mut y)?;
    let soft = y.read()?;
    rows::layer_norm::launch(device, Grid::blocks([rows]), &xb, &g, &b, &mut y, EPS)?;
    Ok((soft, y.read()?))
}

/// Checks both results against plain Rust: softmax scaled by `COLS` (its
/// values are near `1 / COLS`, where `common::check`'s error bound would
/// be absolute) and layer norm within 1e-4 (the kernels sum in f32, in
/// another order than the reference).
fn check(device: &Device, x: &[f32]) -> Result<(), Box<dyn std::error::Error>> {
    let (soft, norm) = run(device, x)?;
    let scaled = |v: &[f32]| -> Vec<f32> { v.iter().map(|v| v * COLS as f32).collect() };
    common::check("softmax", &scaled(&soft), &scaled(&softmax_reference(x)), 1e-4);
    let (gamma, beta) = affine();
    let want_norm = layer_norm_reference(x, &gamma, &beta, EPS);
    common::check("layer_norm", &norm, &want_norm, 1e-4);
    // The kernels with the block as parameters, for every block.
    let xb = Buffer::from_slice(device, x)?;
    let (g, b) = (Buffer::from_slice(device, &gamma)?, Buffer::from_slice(device, &beta)?);
    let mut y = Buffer::<f32>::zeroed(device, x.len())?;
    let want_soft = scaled(&softmax_reference(x));
    for (name, threads) in BLOCKS {
        softmax_block(device, threads, &xb, &mut y)?;
        common::check(&format!("softmax_t {name}"), &scaled(&y.read()?), &want_soft, 1e-4);
        layer_norm_block(device, threads, &xb, (&g, &b), &mut y)?;
        common::check(&format!("layer_norm_t {name}"), &y.read()?, &want_norm, 1e-4);
    }
    Ok(())
}

/// The `f16` kernels on `device` over `x` rounded to `f16`, checked
/// against the `f32` references of the rounded input: softmax scaled by
/// `COLS` (its values are near `1 / COLS`) within 4e-3, layer norm within
/// 2e-3 (a few `f16` roundings: the kernels round once, at the end).
fn check_f16(device: &Device, x: &[f32]) -> Result<(), Box<dyn std::error::Error>> {
    let rows = x.len() / COLS;
    let x16: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let x: Vec<f32> = x16.iter().map(|v| v.to_f32()).collect();
    let (gamma, beta) = affine();
    let xb = Buffer::from_slice(device, &x16)?;
    let (g, b) = (Buffer::from_slice(device, &gamma)?, Buffer::from_slice(device, &beta)?);
    let mut y = Buffer::<f16>::zeroed(device, x.len())?;
    let widened = |y: &Buffer<f16>, scale: f32| -> Result<Vec<f32>, onekernel::BufferError> {
        Ok(y.read()?.iter().map(|v| v.to_f32() * scale).collect())
    };
    rows::softmax_f16::launch(device, Grid::blocks([rows]), &xb, &mut y)?;
    let want: Vec<f32> = softmax_reference(&x).iter().map(|v| v * COLS as f32).collect();
    common::check("softmax_f16", &widened(&y, COLS as f32)?, &want, 4e-3);
    rows::layer_norm_f16::launch(device, Grid::blocks([rows]), &xb, &g, &b, &mut y, EPS)?;
    common::check("layer_norm_f16", &widened(&y, 1.0)?, &layer_norm_reference(&x, &gamma, &beta, EPS), 2e-3);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}\n{}", rows::softmax::WGSL, rows::layer_norm::WGSL);
        return Ok(());
    }
    let x = data(5, 1);
    for device in common::devices(false) {
        check(&device, &x)?;
        println!("{}: softmax and layer norm of 5 rows of {COLS} agree with plain Rust", device.name());
        if device.features().contains(onekernel::abi::Features::F16) {
            check_f16(&device, &x)?;
            println!("{}: and their f16 versions", device.name());
        }
    }
    if let Some(at) = args.iter().position(|a| a == "--time") {
        let rows: usize = args.get(at + 1).and_then(|v| v.parse().ok()).unwrap_or(4096);
        time(rows)?;
    }
    Ok(())
}

/// GPU kernel time from timestamps, median of 20 launches, as GB/s of
/// memory moved (each kernel reads `x` and writes `y` once; `gamma` and
/// `beta` are 32 KiB, read from cache).
fn time(rows: usize) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    println!("{} (subgroup sizes {:?})", device.name(), device.subgroup_sizes());
    let x = data(rows, 3);
    let (gamma, beta) = affine();
    let xb = Buffer::from_slice(&device, &x)?;
    let (g, b) = (Buffer::from_slice(&device, &gamma)?, Buffer::from_slice(&device, &beta)?);
    let mut y = Buffer::<f32>::zeroed(&device, x.len())?;
    // The f16 versions, over the same numbers: half the bytes.
    let x16: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let xb16 = Buffer::from_slice(&device, &x16)?;
    let mut y16 = Buffer::<f16>::zeroed(&device, x.len())?;
    // SAFETY: every index of the kernels is `row * COLS + j` with
    // `row < rows` and `j < COLS`, inside `x`, `y` (`rows * COLS` long),
    // `gamma` and `beta` (`COLS` long), as the checked run above shows.
    let unchecked = unsafe { device.unchecked() };
    let grid = Grid::blocks([rows]);
    for (what, d) in [("plain", device.clone()), ("unchecked", unchecked)] {
        let launches: [(&str, Launch<'_, f32>); 2] = [
            ("softmax", &|y| rows::softmax::launch(&d, grid, &xb, y)),
            ("layer_norm", &|y| rows::layer_norm::launch(&d, grid, &xb, &g, &b, y, EPS)),
        ];
        time_launches(&d, &format!("{rows}x{COLS} {what}"), launches, &mut y)?;
        let launches: [(&str, Launch<'_, f16>); 2] = [
            ("softmax_f16", &|y| rows::softmax_f16::launch(&d, grid, &xb16, y)),
            ("layer_norm_f16", &|y| rows::layer_norm_f16::launch(&d, grid, &xb16, &g, &b, y, EPS)),
        ];
        time_launches(&d, &format!("{rows}x{COLS} {what}"), launches, &mut y16)?;
    }
    // The kernels with the block as parameters: the tuner's block for each
    // (tuned on the first run, from the cache after), timed the same way.
    // SAFETY: as above; the checks of every block on every device (`check`)
    // find no index out of bounds.
    let unchecked = unsafe { device.unchecked() };
    for (what, d) in [("plain", device.clone()), ("unchecked", unchecked)] {
        for which in ["softmax", "layer_norm"] {
            let started = std::time::Instant::now();
            let (name, threads, source) = tuned_block(&device, which, &xb, (&g, &b), &mut y)?;
            let tuning = started.elapsed().as_secs_f64();
            let launch: Launch<'_, f32> = if which == "softmax" {
                &|y| softmax_block(&d, threads, &xb, y)
            } else {
                &|y| layer_norm_block(&d, threads, &xb, (&g, &b), y)
            };
            let label = format!("{which}_t");
            let tuned = format!("{rows}x{COLS} {what}, tuned {name} ({source:?}, {tuning:.2} s)");
            time_launches(&d, &tuned, [(label.as_str(), launch)], &mut y)?;
        }
    }
    // Spot-check the last f32 layer norm against plain Rust.
    let got = y.read()?;
    let want = layer_norm_reference(&x[..COLS * 2], &gamma, &beta, EPS);
    common::check("layer_norm (timed)", &got[..COLS * 2], &want, 1e-4);
    Ok(())
}

/// Times each launch into `y` on `d` (a warm-up launch, which also creates
/// the pipeline, then the median of 20 from timestamps) and prints GB/s:
/// each kernel reads `x` and writes `y` once, `y`'s size each.
fn time_launches<T: onekernel::Element, const N: usize>(
    d: &Device,
    what: &str,
    launches: [(&str, Launch<'_, T>); N],
    y: &mut Buffer<T>,
) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = 2.0 * (y.len() * std::mem::size_of::<T>()) as f64;
    for (name, launch) in launches {
        launch(y)?;
        let (launched, timing) = d.time(|| (0..20).try_for_each(|_| launch(y)))?;
        launched?;
        let t = timing.median().expect("timed").as_secs_f64();
        println!("{name} {what}: {:.3} ms, {:.0} GB/s ({})", t * 1e3, bytes / t * 1e-9, timing.clock);
    }
    Ok(())
}

use onekernel::LaunchError;

/// One kernel's launch into an output buffer, for timing.
type Launch<'a, T> = &'a dyn Fn(&mut Buffer<T>) -> Result<(), LaunchError>;

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    let x = data(3, 7);
    for device in common::devices(true) {
        check(&device, &x).unwrap();
        check_f16(&device, &x).unwrap();
        // A checked GPU launch finds no index out of bounds.
        if device.is_gpu() {
            check(&device.checked(), &x).unwrap();
            check_f16(&device.checked(), &x).unwrap();
        }
    }
}
