//! **Tensor cores from Rust**: an `f16` matrix multiplication with `f32`
//! accumulation on matrix tiles (`onekernel::tile`, Vulkan's cooperative
//! matrices).
//!
//!     cargo run --release --example gemm_f16                         # check on every device
//!     cargo run --release --example gemm_f16 -- --wgsl               # print the WGSL
//!     cargo run --release --example gemm_f16 -- --size 8192 --time 20  # GPU TFLOP/s
//!
//! A tensor core multiplies a 16 × 16 tile of `f16` by another and adds
//! the product to a 16 × 16 accumulator in one instruction, shared by the
//! 32 threads of a subgroup (a warp). The kernel is written at that level:
//!
//! ```text
//!   block: 256 threads = 8 subgroups, a 128 × 128 square of C
//!   subgroup (wr, wc) of the 2 × 4 grid: a 64 × 32 part of it,
//!            4 × 2 accumulator tiles of 16 × 16, in registers
//!   per step of 32 along k: the block stages A's 128 × 32 and B's
//!            32 × 128 in shared memory (8 KiB each), then each subgroup
//!            loads 4 A tiles and 2 B tiles per half step and does
//!            4 × 2 tile products with them
//! ```
//!
//! Sizes must be multiples of 128 (the launch checks them on the host).
//! `gemm_f16_direct` is the same blocking without shared memory (tiles
//! loaded straight from the buffers); `--time` measures both.

mod common;

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::runtime::LaunchError;

// ANCHOR: kernel
#[onekernel::kernels]
mod gemm {
    use onekernel::half::f16;
    use onekernel::prelude::*;
    use onekernel::tile::{mma, Accumulator, MatrixA, MatrixB};

    /// Rows of `C` a block computes.
    pub const BM: usize = 128;
    /// Columns of `C` a block computes.
    pub const BN: usize = 128;
    /// The step along `k`: columns of `A` (rows of `B`) per shared tile.
    pub const BK: usize = 32;
    /// The side of a tensor-core tile.
    pub const T: usize = 16;

    /// `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`),
    /// all multiples of 128. Launch with
    /// `Grid::blocks([n / 128, m / 128])`.
    #[kernel(workgroup_size = 256)]
    pub fn gemm_f16(a: &[f16], b: &[f16], c: &mut [f32], k: u32, n: u32) {
        let a_tile = shared::<[f16; BM * BK]>();
        let b_tile = shared::<[f16; BK * BN]>();
        let (k, n) = (k as usize, n as usize);
        let t = thread_id().x;
        // The subgroup's place in the 2 × 4 grid: 64 rows × 32 columns.
        // (Subgroups are 32 consecutive threads, as on NVIDIA GPUs.)
        let subgroup = t / 32;
        let (wr, wc) = (subgroup / 4 * 64, subgroup % 4 * 32);
        let (row0, col0) = (block_id().y * BM, block_id().x * BN);

        // 4 × 2 accumulators: acc[i * 2 + j] is rows wr + 16i, columns wc + 16j.
        let mut acc = [Accumulator::<f32, T, T>::zeros(); 8];
        let mut kk = 0;
        while kk < k {
            // Stage A's 128 × 32 and B's 32 × 128: 16 elements per thread,
            // consecutive threads on consecutive elements of a row.
            #[unroll]
            for q in 0..16 {
                let e = t + q * 256;
                a_tile[e] = a[(row0 + e / BK) * k + kk + e % BK];
                b_tile[e] = b[(kk + e / BN) * n + col0 + e % BN];
            }
            workgroup_barrier();
            #[unroll]
            for s in 0..2 {
                let b0 = MatrixB::<T, T>::load(&b_tile, s * T * BN + wc, BN);
                let b1 = MatrixB::<T, T>::load(&b_tile, s * T * BN + wc + T, BN);
                #[unroll]
                for i in 0..4 {
                    let ta = MatrixA::<T, T>::load(&a_tile, (wr + i * T) * BK + s * T, BK);
                    acc[i * 2] = mma(ta, b0, acc[i * 2]);
                    acc[i * 2 + 1] = mma(ta, b1, acc[i * 2 + 1]);
                }
            }
            workgroup_barrier();
            kk += BK;
        }
        #[unroll]
        for i in 0..4 {
            #[unroll]
            for j in 0..2 {
                let at = (row0 + wr + i * T) * n + col0 + wc + j * T;
                acc[i * 2 + j].store(&mut c, at, n);
            }
        }
    }

    /// The same product without shared memory: each subgroup loads its
    /// tiles straight from the buffers (the GPU's caches share the tiles
    /// that the block's subgroups have in common), so there are no
    /// barriers and no staging copies. Same launch as [`gemm_f16`]; which
    /// one is faster depends on the driver (`--time` runs both).
    #[kernel(workgroup_size = 256)]
    pub fn gemm_f16_direct(a: &[f16], b: &[f16], c: &mut [f32], k: u32, n: u32) {
        let (k, n) = (k as usize, n as usize);
        let subgroup = thread_id().x / 32;
        let row0 = block_id().y * BM + subgroup / 4 * 64;
        let col0 = block_id().x * BN + subgroup % 4 * 32;
        let mut acc = [Accumulator::<f32, T, T>::zeros(); 8];
        let mut kk = 0;
        while kk < k {
            let b0 = MatrixB::<T, T>::load(&b, kk * n + col0, n);
            let b1 = MatrixB::<T, T>::load(&b, kk * n + col0 + T, n);
            #[unroll]
            for i in 0..4 {
                let ta = MatrixA::<T, T>::load(&a, (row0 + i * T) * k + kk, k);
                acc[i * 2] = mma(ta, b0, acc[i * 2]);
                acc[i * 2 + 1] = mma(ta, b1, acc[i * 2 + 1]);
            }
            kk += T;
        }
        #[unroll]
        for i in 0..4 {
            #[unroll]
            for j in 0..2 {
                acc[i * 2 + j].store(&mut c, (row0 + i * T) * n + col0 + j * T, n);
            }
        }
    }
}
// ANCHOR_END: kernel

/// `c = a × b` in `f64` from the `f16` inputs: the reference.
fn reference(a: &[f16], b: &[f16], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; m * n];
    for r in 0..m {
        for j in 0..k {
            let x = a[r * k + j].to_f64();
            for col in 0..n {
                c[r * n + col] += x * b[j * n + col].to_f64();
            }
        }
    }
    c
}

/// Values in [-1, 1) on a coarse grid (exact in `f16`).
fn data(len: usize, seed: usize) -> Vec<f16> {
    (0..len).map(|i| f16::from_f32(((i * 7 + seed) % 61) as f32 / 32.0 - 0.95)).collect()
}

fn grid(m: usize, n: usize) -> Grid {
    assert!(m % gemm::BM == 0 && n % gemm::BN == 0, "sizes must be multiples of 128");
    Grid::blocks([n / gemm::BN, m / gemm::BM])
}

/// Runs `gemm_f16` (staged through shared memory) or `gemm_f16_direct`.
fn run(
    device: &Device,
    direct: bool,
    a: &[f16],
    b: &[f16],
    (m, k, n): (usize, usize, usize),
) -> Result<Vec<f32>, LaunchError> {
    assert!(k % gemm::BK == 0, "k must be a multiple of 32");
    let a = Buffer::from_slice(device, a).expect("buffer");
    let b = Buffer::from_slice(device, b).expect("buffer");
    let mut c = Buffer::<f32>::zeroed(device, m * n).expect("buffer");
    if direct {
        gemm::gemm_f16_direct::launch(device, grid(m, n), &a, &b, &mut c, k as u32, n as u32)?;
    } else {
        gemm::gemm_f16::launch(device, grid(m, n), &a, &b, &mut c, k as u32, n as u32)?;
    }
    Ok(c.read().expect("read"))
}

/// Within `f32` accumulation of exact `f16` products: a relative error of
/// a few ulps of `f32` times the number of terms.
fn check(what: &str, got: &[f32], want: &[f64], k: usize) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-6 * k as f64 * (1.0 + w.abs());
        assert!((f64::from(*g) - w).abs() <= tol, "{what}: c[{i}] = {g}, want {w}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", gemm::gemm_f16::WGSL);
        return Ok(());
    }
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|at| args.get(at + 1)?.parse::<usize>().ok());
    let (m, k, n) = (128, 64, 256);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(false) {
        for direct in [false, true] {
            match run(&device, direct, &a, &b, (m, k, n)) {
                Ok(got) => {
                    check("gemm_f16", &got, &want, k);
                    println!("{} (direct: {direct}): {m}x{k} times {k}x{n} agrees with f64", device.name());
                }
                Err(e @ (LaunchError::MissingFeature { .. } | LaunchError::UnsupportedTileShape { .. })) => {
                    println!("{}: {e}", device.name());
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    if let Some(reps) = arg("--time") {
        time(arg("--size").unwrap_or(8192), reps)?;
    }
    Ok(())
}

/// GPU kernel time from timestamps: the median of `reps` launches through
/// an unchecked handle, at `size`³.
fn time(size: usize, reps: usize) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    println!("{}", device.name());
    let (a, b) = (data(size * size, 1), data(size * size, 2));
    let (ab, bb) = (Buffer::from_slice(&device, &a)?, Buffer::from_slice(&device, &b)?);
    let mut c = Buffer::<f32>::zeroed(&device, size * size)?;
    // SAFETY: every index of `gemm_f16` is below m·k, k·n or m·n when the
    // sizes are multiples of the block (asserted by `grid`), as the CPU
    // executor checks on the small case.
    let unchecked = unsafe { device.unchecked() };
    let s32 = size as u32;
    for direct in [false, true] {
        let launch = |c: &mut Buffer<f32>| {
            let g = grid(size, size);
            if direct {
                gemm::gemm_f16_direct::launch(&unchecked, g, &ab, &bb, c, s32, s32)
            } else {
                gemm::gemm_f16::launch(&unchecked, g, &ab, &bb, c, s32, s32)
            }
        };
        launch(&mut c)?; // warm-up (and pipeline creation)
        let (launched, timing) = unchecked.time(|| (0..reps.max(1)).try_for_each(|_| launch(&mut c)))?;
        launched?;
        let t = timing.median().expect("timed").as_secs_f64();
        let tflops = 2.0 * (size as f64).powi(3) / t * 1e-12;
        let name = if direct { "gemm_f16_direct" } else { "gemm_f16" };
        println!("{name} {size}x{size}x{size}: {:.3} ms, {tflops:.1} TFLOP/s ({})", t * 1e3, timing.clock);
        let got = c.read()?;
        for probe in 0..32 {
            let (r, col) = ((probe * 7919) % size, (probe * 104_729) % size);
            let want: f64 = (0..size).map(|j| a[r * size + j].to_f64() * b[j * size + col].to_f64()).sum();
            check(&format!("c[{r}][{col}]"), &[got[r * size + col]], &[want], size);
        }
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_f64() {
    let (m, k, n) = (128, 32, 128);
    let (a, b) = (data(m * k, 3), data(k * n, 4));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        for direct in [false, true] {
            match run(&device, direct, &a, &b, (m, k, n)) {
                Ok(got) => check(&format!("gemm_f16 (direct: {direct}) on {}", device.name()), &got, &want, k),
                // Lavapipe has no cooperative matrices: the launch says so.
                Err(LaunchError::MissingFeature { kernel, missing, .. }) => {
                    assert_eq!(kernel, if direct { "gemm_f16_direct" } else { "gemm_f16" });
                    assert!(missing.contains(onekernel::runtime::Features::COOPERATIVE_MATRIX));
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
}
