//! Learning path, step 14: **tiled matrix multiplication** through shared
//! memory.
//!
//!     cargo run --release --example matmul                 # check on every device
//!     cargo run --release --example matmul -- --wgsl      # print the WGSL
//!     cargo run --release --example matmul -- --time 4096 # GPU TFLOP/s on 4096x4096
//!     cargo run --release --example matmul -- --time-cpu 512  # CPU executor, wall clock
//!
//! `C = A × B` with `A` of `m × k`, `B` of `k × n` and `C` of `m × n`, all
//! stored row by row: `C[r][c] = Σ_j A[r][j] * B[j][c]`.
//!
//! **Thread → data.** The grid is 2-D with one thread per element of `C`:
//! `x` is the column, `y` the row. Blocks are 16 × 16 threads, so each block
//! computes one 16 × 16 square of `C`.
//!
//! **Why tiles.** The naive kernel (each thread loops over `j`, reading
//! `A[r][j]` and `B[j][c]` from global memory) reads every element of `A`
//! and `B` `n` or `m` times. But the 16 threads of a row of the block all
//! need the same row of `A`, and the 16 threads of a column all need the same
//! column of `B`. So the block walks along `k` in steps of 16: at each step
//! it copies a 16 × 16 tile of `A` and a 16 × 16 tile of `B` into **shared
//! memory** (each thread copies one element of each), and then every thread
//! does 16 multiply-adds from the fast shared copies. Global memory traffic
//! drops 16-fold.
//!
//! ```text
//!              B: k × n
//!             ┌────┬────┬────┐
//!             │    │ B0 │    │   step 0 uses A0 and B0 (the tiles at j = 0..16),
//!             ├────┼────┼────┤   step 1 uses A1 and B1 (j = 16..32), ...
//!             │    │ B1 │    │
//!             └────┴────┴────┘
//!  A: m × k   C: m × n
//! ┌────┬────┐ ┌────┬────┬────┐
//! │ A0 │ A1 │ │    │ ■  │    │   ■ = this block's 16 × 16 square of C
//! └────┴────┘ └────┴────┴────┘
//! ```
//! (B0 and B1 are in the same column of tiles as ■; A0 and A1 in its row.)

mod common;

use onekernel::prelude::*;

/// `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`).
/// Launch with `Grid::threads([n, m])`: one thread per element of `c`.
#[kernel(workgroup_size = (16, 16))]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: u32, k: u32, n: u32) {
    // Two 16 × 16 tiles in shared memory, 1 KiB each: indexed [row][column].
    let a_tile = shared::<[[f32; 16]; 16]>();
    let b_tile = shared::<[[f32; 16]; 16]>();
    // Sizes as `usize`, for indexing.
    let m = m as usize;
    let k = k as usize;
    let n = n as usize;

    // This thread's place in its block, and its element of C.
    let tx = thread_id().x; // column inside the block, 0..16
    let ty = thread_id().y; // row inside the block, 0..16
    let row = block_id().y * 16 + ty;
    let col = block_id().x * 16 + tx;

    let mut acc = 0.0;
    // Walk along k, one pair of tiles at a time. `steps` comes from the
    // scalar `k`, the same for every thread, so all threads make the same
    // number of steps and meet the same barriers: barriers in this loop are
    // allowed.
    let steps = (k + 15) / 16;
    for step in 0..steps {
        // Load: thread (ty, tx) copies one element of each tile.
        //   a_tile[ty][tx] = A[row][step*16 + tx]   (this block's rows of A)
        //   b_tile[ty][tx] = B[step*16 + ty][col]   (this block's columns of B)
        // Outside the matrices (the edges, when a size is not a multiple of
        // 16) the tile gets 0, which adds nothing to the sums below.
        let a_col = step * 16 + tx;
        a_tile[ty][tx] = if row < m && a_col < k { a[row * k + a_col] } else { 0.0 };
        let b_row = step * 16 + ty;
        b_tile[ty][tx] = if b_row < k && col < n { b[b_row * n + col] } else { 0.0 };

        // Barrier 1: both tiles must be complete before anyone uses them
        // (thread (ty, tx) reads elements loaded by 30 other threads).
        workgroup_barrier();

        // Compute: 16 multiply-adds from shared memory. `#[unroll]` repeats
        // the body 16 times with `j` a constant (no loop counter, no
        // branch), and `mul_add` is one fused multiply-add instruction
        // (WGSL `fma`), rounded once, on the CPU too.
        #[unroll]
        for j in 0..16 {
            acc = a_tile[ty][j].mul_add(b_tile[j][tx], acc);
        }

        // Barrier 2: everyone must be done reading these tiles before the
        // next step overwrites them with the next pair. Without it a fast
        // thread could load step+1's values while a slow one still computes
        // step's.
        workgroup_barrier();
    }

    // Threads outside C (on the right or bottom edge) helped load the tiles
    // but have no element to write.
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// The plain Rust answer: the textbook triple loop.
fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for col in 0..n {
            let mut acc = 0.0f32;
            for j in 0..k {
                acc += a[r * k + j] * b[j * n + col];
            }
            c[r * n + col] = acc;
        }
    }
    c
}

/// Uploads `a` and `b`, launches one thread per element of `c` and reads
/// `c` back.
fn run(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let a = Buffer::from_slice(device, a)?;
    let b = Buffer::from_slice(device, b)?;
    let mut c = Buffer::<f32>::zeroed(device, m * n)?;
    // x covers the n columns, y the m rows; each rounded up to 16.
    matmul::launch(device, Grid::threads([n, m]), &a, &b, &mut c, m as u32, k as u32, n as u32)?;
    Ok(c.read()?)
}

/// Multiples of 1/8 between -1 and 1: products are multiples of 1/64 and the
/// sums stay exact in `f32`, whatever the order.
fn data(len: usize, seed: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 7 + seed) % 17) as f32 / 8.0 - 1.0).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let number_after = |flag: &str| -> Option<usize> {
        let at = args.iter().position(|a| a == flag)?;
        Some(
            args.get(at + 1)
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{flag} needs a size, e.g. {flag} 512")),
        )
    };
    if common::wants_wgsl() {
        println!("{}", matmul::WGSL);
        return Ok(());
    }

    // A rectangular product whose sizes are not multiples of 16.
    let (m, k, n) = (300, 200, 170);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(false) {
        let got = run(&device, &a, &b, m, k, n)?;
        common::check("matmul", &got, &want, 1e-4);
        println!("{}: {m}x{k} times {k}x{n} agrees with plain Rust", device.name());
    }

    if let Some(size) = number_after("--time") {
        timing::gpu(size)?;
    }
    if let Some(size) = number_after("--time-cpu") {
        timing::cpu(size)?;
    }
    Ok(())
}

/// Measuring speed. Not needed to understand the kernel: it launches the
/// same `matmul` many times and reports floating-point operations per second
/// (an `N × N` product is `2·N³` operations: `N³` multiplies and `N³` adds).
mod timing {
    use super::*;
    use onekernel::timing::Clock;

    /// GPU kernel time from the GPU's own timestamps (`Device::time`): 2
    /// warm-up launches, then the median of 50 timed launches.
    pub fn gpu(size: usize) -> Result<(), Box<dyn std::error::Error>> {
        let device = match Device::gpu() {
            Ok(d) => d,
            Err(e) => {
                println!("--time: no GPU ({e}); nothing to time");
                return Ok(());
            }
        };
        let (a, b) = (data(size * size, 1), data(size * size, 2));
        let a_buf = Buffer::from_slice(&device, &a)?;
        let b_buf = Buffer::from_slice(&device, &b)?;
        let mut c_buf = Buffer::<f32>::zeroed(&device, size * size)?;
        let s = size as u32;
        let grid = Grid::threads([size, size]);
        for _ in 0..2 {
            matmul::launch(&device, grid, &a_buf, &b_buf, &mut c_buf, s, s, s)?;
            // warm-up
        }
        let reps = 50;
        // SAFETY: every access of `matmul` is guarded by the matrix sizes
        // (the tests run it on the CPU executor, which checks every index,
        // and through a checked launch).
        let unchecked = unsafe { device.unchecked() };
        // wgpu's own bounds checks (plain), our checked launch, and neither.
        for (what, d) in [("plain", device.clone()), ("checked", device.checked()), ("unchecked", unchecked)] {
            matmul::launch(&d, grid, &a_buf, &b_buf, &mut c_buf, s, s, s)?;
            let (launched, timing) =
                d.time(|| (0..reps).try_for_each(|_| matmul::launch(&d, grid, &a_buf, &b_buf, &mut c_buf, s, s, s)))?;
            launched?;
            if timing.clock != Clock::GpuTimestamps {
                println!(
                    "--time: {} has no timestamp queries; the times below include submission and waiting",
                    device.name()
                );
            }
            let t = timing.median().expect("launches were timed").as_secs_f64();
            let flops = 2.0 * (size as f64).powi(3);
            println!(
                "GPU {}: matmul {size}x{size} {what}: {:.3} ms per launch, {:.3} TFLOP/s (median of {reps} launches, {})",
                device.name(),
                t * 1e3,
                flops / t * 1e-12,
                timing.clock
            );
        }

        // Spot-check some elements of the last result against plain Rust
        // (the full reference would take too long for large sizes).
        let c = c_buf.read()?;
        for probe in 0..64 {
            let (r, col) = ((probe * 7919) % size, (probe * 104_729) % size);
            let want: f32 = (0..size).map(|j| a[r * size + j] * b[j * size + col]).sum();
            common::check(&format!("c[{r}][{col}]"), &[c[r * size + col]], &[want], 1e-4);
        }
        Ok(())
    }

    /// The CPU executor, wall clock: median of 3 launches (each waits for
    /// its result).
    pub fn cpu(size: usize) -> Result<(), Box<dyn std::error::Error>> {
        let device = Device::cpu();
        let (a, b) = (data(size * size, 1), data(size * size, 2));
        let a_buf = Buffer::from_slice(&device, &a)?;
        let b_buf = Buffer::from_slice(&device, &b)?;
        let mut c_buf = Buffer::<f32>::zeroed(&device, size * size)?;
        let s = size as u32;
        let (launched, timing) = device.time(|| {
            (0..3).try_for_each(|_| {
                matmul::launch(&device, Grid::threads([size, size]), &a_buf, &b_buf, &mut c_buf, s, s, s)
            })
        })?;
        launched?;
        let t = timing.median().expect("launches were timed").as_secs_f64();
        let flops = 2.0 * (size as f64).powi(3);
        println!(
            "{}: matmul {size}x{size}: {:.1} ms per launch, {:.2} GFLOP/s (wall clock, median of 3)",
            device.name(),
            t * 1e3,
            flops / t * 1e-9
        );
        Ok(())
    }
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    for device in common::devices(true) {
        // (m, k, n): 1x1; smaller than a tile; exactly one tile; square and
        // rectangular non-multiples of 16; a long inner dimension (many
        // steps); many blocks.
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 2),
            (16, 16, 16),
            (17, 17, 17),
            (33, 20, 47),
            (1, 300, 1),
            (100, 1, 90),
            (128, 64, 200),
            (257, 129, 255),
        ] {
            let (a, b) = (data(m * k, 1), data(k * n, 2));
            let got = run(&device, &a, &b, m, k, n).unwrap();
            common::check(&format!("{} {m}x{k} * {k}x{n}", device.name()), &got, &reference(&a, &b, m, k, n), 1e-4);
        }
    }
}
