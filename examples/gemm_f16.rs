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
//!   block: 256 threads = 8 subgroups, a 256 × 128 rectangle of C
//!   subgroup (wr, wc) of the 4 × 2 grid: a 64 × 64 square of it,
//!            4 × 4 accumulator tiles of 16 × 16, in registers
//!   per step of 32 along k: the block stages A's 256 × 32 and B's
//!            32 × 128 in shared memory, four f16 at a time (F16Vec4),
//!            while the next step's vectors wait in registers; each
//!            subgroup loads 4 B tiles and 4 A tiles per half step and
//!            does 4 × 4 tile products with them
//! ```
//!
//! `m` must be a multiple of 256, `n` of 128 and `k` of 32 (the launch
//! checks them on the host).

mod common;

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::LaunchError;

// The kernel (`mod gemm`), shared with `examples/gpt.rs`.
include!("gemm_f16/kernel.rs");

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

/// Row-major `f16` values as the kernel reads them, four to a vector.
fn vectors(values: &[f16]) -> Vec<F16Vec4> {
    values.chunks_exact(4).map(|v| F16Vec4::new(v[0], v[1], v[2], v[3])).collect()
}

fn grid(m: usize, k: usize, n: usize) -> Grid {
    assert!(
        m % gemm::BM == 0 && n % gemm::BN == 0 && k % gemm::BK == 0,
        "m must be a multiple of 256, n of 128 and k of 32"
    );
    Grid::blocks([n / gemm::BN, m / gemm::BM])
}

/// `a × b` by `gemm_f16` on `device`.
fn run(device: &Device, a: &[f16], b: &[f16], (m, k, n): (usize, usize, usize)) -> Result<Vec<f32>, LaunchError> {
    let a = Buffer::from_slice(device, &vectors(a)).expect("buffer");
    let b = Buffer::from_slice(device, &vectors(b)).expect("buffer");
    let mut c = Buffer::<f32>::zeroed(device, m * n).expect("buffer");
    gemm::gemm_f16::launch(device, grid(m, k, n), &a, &b, &mut c, k as u32, n as u32)?;
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

/// Whether `e` is a GPU's honest refusal: `MissingFeature` from a GPU
/// without cooperative matrices, or `UnsupportedTileShape` from one whose
/// cooperative matrices lack the kernel's tile shape. The CPU executor
/// runs every tile kernel: any error from it is a failure.
fn cannot_run(device: &Device, e: &LaunchError) -> bool {
    let coop = device.features().contains(onekernel::abi::Features::COOPERATIVE_MATRIX);
    device.is_gpu()
        && match e {
            LaunchError::MissingFeature { kernel, missing, .. } => {
                *kernel == "gemm_f16" && !coop && missing.contains(onekernel::abi::Features::COOPERATIVE_MATRIX)
            }
            LaunchError::UnsupportedTileShape { kernel, .. } => *kernel == "gemm_f16" && coop,
            _ => false,
        }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", gemm::gemm_f16::WGSL);
        return Ok(());
    }
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|at| args.get(at + 1)?.parse::<usize>().ok());
    let (m, k, n) = (256, 64, 256);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(false) {
        match run(&device, &a, &b, (m, k, n)) {
            Ok(got) => {
                check("gemm_f16", &got, &want, k);
                println!("{}: {m}x{k} times {k}x{n} agrees with f64", device.name());
            }
            Err(e) if cannot_run(&device, &e) => println!("{}: {e}", device.name()),
            Err(e) => return Err(e.into()),
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
    let (ab, bb) = (Buffer::from_slice(&device, &vectors(&a))?, Buffer::from_slice(&device, &vectors(&b))?);
    let mut c = Buffer::<f32>::zeroed(&device, size * size)?;
    // SAFETY: every index of `gemm_f16` is below m·k/4, k·n/4 or m·n when
    // the sizes are multiples of the block (asserted by `grid`), as the CPU
    // executor checks on the small case.
    let unchecked = unsafe { device.unchecked() };
    let (g, s32) = (grid(size, size, size), size as u32);
    let mut launch = || gemm::gemm_f16::launch(&unchecked, g, &ab, &bb, &mut c, s32, s32);
    launch()?; // warm-up (and pipeline creation)
    let (launched, timing) = unchecked.time(|| (0..reps.max(1)).try_for_each(|_| launch()))?;
    launched?;
    let t = timing.median().expect("timed").as_secs_f64();
    let tflops = 2.0 * (size as f64).powi(3) / t * 1e-12;
    println!("gemm_f16 {size}x{size}x{size}: {:.3} ms, {tflops:.1} TFLOP/s ({})", t * 1e3, timing.clock);
    let got = c.read()?;
    for probe in 0..32 {
        let (r, col) = ((probe * 7919) % size, (probe * 104_729) % size);
        let want: f64 = (0..size).map(|j| a[r * size + j].to_f64() * b[j * size + col].to_f64()).sum();
        check(&format!("c[{r}][{col}]"), &[got[r * size + col]], &[want], size);
    }
    Ok(())
}

#[test]
fn cpu_and_gpu_agree_with_f64() {
    let (m, k, n) = (256, 64, 128);
    let (a, b) = (data(m * k, 3), data(k * n, 4));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        match run(&device, &a, &b, (m, k, n)) {
            Ok(got) => check(&format!("gemm_f16 on {}", device.name()), &got, &want, k),
            // Lavapipe has no cooperative matrices: the launch says so.
            Err(e) if cannot_run(&device, &e) => {}
            Err(e) => panic!("{}: {e}", device.name()),
        }
    }
}
