//! **Tensor cores from Rust**: an `f16` matrix multiplication with `f32`
//! accumulation on matrix tiles (`onekernel::tile`, Vulkan's cooperative
//! matrices).
//!
//!     cargo run --release --example gemm_f16                         # check on every device
//!     cargo run --release --example gemm_f16 -- --wgsl               # print the WGSL
//!     cargo run --release --example gemm_f16 -- --size 8192 --time 20  # GPU TFLOP/s only
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

/// The block shapes (`TBM × TBN`) the tuner tries for `gemm_f16_t`.
const BLOCKS: [(&str, (usize, usize)); 5] = [
    ("b256x128", (256, 128)),
    ("b128x128", (128, 128)),
    ("b128x256", (128, 256)),
    ("b256x256", (256, 256)),
    ("b64x128", (64, 128)),
];

/// `gemm_f16_t` for the block `(bm, bn)` (each written out: const generic
/// arguments are part of the source); a shape the block does not divide
/// is an `Err`.
fn launch_block(
    device: &Device,
    (bm, bn): (usize, usize),
    (a, b, c): (&Buffer<F16Vec4>, &Buffer<F16Vec4>, &mut Buffer<f32>),
    (m, k, n): (usize, usize, usize),
) -> Result<(), LaunchError> {
    if m % bm != 0 || n % bn != 0 || k % gemm::BK != 0 {
        return Err(LaunchError::InvalidArgument {
            kernel: "gemm_f16_t",
            arg: "m, n",
            problem: format!("{m} × {k} × {n} is not whole {bm} × {bn} blocks"),
        });
    }
    let grid = Grid::blocks([n / bn, m / bm]);
    let (k, n) = (k as u32, n as u32);
    macro_rules! blocks {
        ($([$bm:literal, $bn:literal]),*) => {
            match (bm, bn) {
                $(($bm, $bn) => gemm::gemm_f16_t::launch::<
                    $bm,
                    $bn,
                    { $bn / 4 + 2 },
                    { $bm * (gemm::BK / 4 + 2) },
                    { gemm::BK * ($bn / 4 + 2) },
                    { $bm * gemm::BK / 4 / ($bm / 64 * ($bn / 64) * 32) },
                    { gemm::BK * $bn / 4 / ($bm / 64 * ($bn / 64) * 32) },
                    { $bm / 64 * ($bn / 64) * 32 },
                    { $bn / 64 },
                >(device, grid, a, b, c, k, n),)*
                other => panic!("no launch is written for the block {other:?}"),
            }
        };
    }
    blocks!([256, 128], [128, 128], [128, 256], [256, 256], [64, 128])
}

/// A tuned block: its name, its `(TBM, TBN)`, and where the choice came from.
type TunedBlock = (&'static str, (usize, usize), onekernel::tune::Source);

/// The tuner's block for `m × k × n` (every block's output must agree
/// with the first one's).
fn tuned_block(
    device: &Device,
    (a, b, c): (&Buffer<F16Vec4>, &Buffer<F16Vec4>, &mut Buffer<f32>),
    (m, k, n): (usize, usize, usize),
) -> Result<TunedBlock, Box<dyn std::error::Error>> {
    let tuner = onekernel::tune::Tuner::new(device, "gemm_f16_t", &[&gemm::gemm_f16_t::KERNEL]);
    let key = onekernel::tune::Key::new().size("m", m).size("k", k).size("n", n);
    let mut read: Vec<(usize, usize)> = Vec::new();
    let choice = tuner.choose_checked(
        &key,
        &BLOCKS,
        |&(_, block)| -> Result<Vec<f32>, Box<dyn std::error::Error>> {
            launch_block(device, block, (a, b, c), (m, k, n))?;
            if read.contains(&block) {
                return Ok(Vec::new());
            }
            read.push(block);
            Ok(c.read()?)
        },
        |want: &Vec<f32>, got: &Vec<f32>| {
            want.len() == got.len() && want.iter().zip(got).all(|(x, y)| (x - y).abs() <= 1e-3 * x.abs().max(1.0))
        },
    )?;
    Ok((choice.candidate.0, choice.candidate.1, choice.source))
}

/// Every block that divides `m × k × n` agrees with `want` on `device`
/// (none runs where the device has no matrix tiles).
fn check_blocks(device: &Device, a: &[f16], b: &[f16], (m, k, n): (usize, usize, usize), want: &[f64]) {
    let ab = Buffer::from_slice(device, &vectors(a)).expect("buffer");
    let bb = Buffer::from_slice(device, &vectors(b)).expect("buffer");
    let mut c = Buffer::<f32>::zeroed(device, m * n).expect("buffer");
    for (name, block) in BLOCKS {
        if m % block.0 != 0 || n % block.1 != 0 {
            continue;
        }
        match launch_block(device, block, (&ab, &bb, &mut c), (m, k, n)) {
            Ok(()) => check(&format!("gemm_f16_t {name} on {}", device.name()), &c.read().expect("read"), want, k),
            Err(e) if cannot_run(device, &e) => {}
            Err(e) => panic!("{name} on {}: {e}", device.name()),
        }
    }
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
                (*kernel == "gemm_f16" || kernel.starts_with("gemm_f16_t"))
                    && !coop
                    && missing.contains(onekernel::abi::Features::COOPERATIVE_MATRIX)
            }
            LaunchError::UnsupportedTileShape { kernel, .. } => kernel.starts_with("gemm_f16") && coop,
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
    if let Some(reps) = arg("--time") {
        // Only the GPU's time (spot-checked against f64): the checks on
        // every device are the run without `--time`.
        return time(arg("--size").unwrap_or(8192), reps);
    }
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
        check_blocks(&device, &a, &b, (m, k, n), &want);
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
    // The kernel with its block as parameters: the tuner's block (tuned on
    // the first run, from the cache after), timed the same way. Tuned
    // through the handle it runs on: wgpu's bounds checks cost the blocks
    // differently, so a block tuned checked is not the best unchecked.
    let started = std::time::Instant::now();
    let (name, block, source) = tuned_block(&unchecked, (&ab, &bb, &mut c), (size, size, size))?;
    let tuning = started.elapsed().as_secs_f64();
    let operands = (&ab, &bb, &mut c);
    let mut launch = || launch_block(&unchecked, block, (operands.0, operands.1, &mut *operands.2), (size, size, size));
    launch()?;
    let (launched, timing) = unchecked.time(|| (0..reps.max(1)).try_for_each(|_| launch()))?;
    launched?;
    let t2 = timing.median().expect("timed").as_secs_f64();
    println!(
        "gemm_f16_t {size}x{size}x{size}, tuned {name} ({source:?}, {tuning:.2} s): {:.3} ms, {:.1} TFLOP/s",
        t2 * 1e3,
        2.0 * (size as f64).powi(3) / t2 * 1e-12
    );
    for probe in 0..32 {
        let (r, col) = ((probe * 7919) % size, (probe * 104_729) % size);
        let want: f64 = (0..size).map(|j| a[r * size + j].to_f64() * b[j * size + col].to_f64()).sum();
        check(&format!("c[{r}][{col}]"), &[got[r * size + col]], &[want], size);
    }
    Ok(())
}

/// The shared arrays the parameters size stay sized by them in the WGSL:
/// a tile kernel's padding of its shared arrays waits for each
/// specialisation (padded when compiled, the placeholder length became a
/// 64 KiB array: 148 TFLOP/s on the H200 instead of 259).
#[test]
fn shared_arrays_are_sized_by_the_parameters() {
    let wgsl = gemm::gemm_f16::WGSL;
    assert!(wgsl.contains("var<workgroup> a_s: array<vec4<f16>, AS>;"), "{wgsl}");
    assert!(wgsl.contains("var<workgroup> b_s: array<vec4<f16>, BS>;"), "{wgsl}");
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

#[test]
fn split_k_parts_add_up_to_the_product() {
    // A grid of `[n / 128, m / 256, splits]`: block `z` sums its
    // `k / splits` of `k` into `c[z · m · n ..]`; the parts add up to the
    // product (one split: the plain product, the rest of `c` untouched).
    let (m, k, n) = (256, 128, 128);
    let (a, b) = (data(m * k, 5), data(k * n, 6));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        let av = Buffer::from_slice(&device, &vectors(&a)).expect("buffer");
        let bv = Buffer::from_slice(&device, &vectors(&b)).expect("buffer");
        for splits in [1usize, 4] {
            let mut c = Buffer::from_slice(&device, &vec![-7.0f32; (splits + 1) * m * n]).expect("buffer");
            let grid = Grid::blocks([n / gemm::BN, m / gemm::BM, splits]);
            match gemm::gemm_f16::launch(&device, grid, &av, &bv, &mut c, k as u32, n as u32) {
                Ok(()) => {}
                Err(e) if cannot_run(&device, &e) => break,
                Err(e) => panic!("{}: {e}", device.name()),
            }
            let c = c.read().expect("read");
            let got: Vec<f32> = (0..m * n).map(|i| (0..splits).map(|p| c[p * m * n + i]).sum()).collect();
            check(&format!("gemm_f16 in {splits} parts on {}", device.name()), &got, &want, k);
            assert!(
                c[splits * m * n..].iter().all(|&v| v == -7.0),
                "{}: {splits} parts wrote past their slices",
                device.name()
            );
            // Each part alone is its slice of `k`.
            let kc = k / splits;
            let first: Vec<f64> = (0..m * n)
                .map(|i| (0..kc).map(|j| a[i / n * k + j].to_f64() * b[j * n + i % n].to_f64()).sum())
                .collect();
            check(&format!("gemm_f16's first of {splits} parts on {}", device.name()), &c[..m * n], &first, kc);
        }
    }
}
