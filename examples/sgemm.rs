//! **A fast matrix multiplication**: register blocking, the step after the
//! tiled kernel of `matmul.rs`.
//!
//!     cargo run --release --example sgemm                  # check on every device
//!     cargo run --release --example sgemm -- --wgsl        # print the WGSL
//!     cargo run --release --example sgemm -- --time 4096   # GPU TFLOP/s, checked and unchecked
//!
//! Which of the two kernels runs is chosen by the autotuner
//! (`onekernel::tune`, `run` below): where both can multiply the sizes,
//! the first run on a device times both and remembers the faster one in
//! the tuning cache; later runs read it there (`ONEKERNEL_TUNE=off` always
//! takes the plain kernel).
//!
//! `matmul.rs` computes one element of `C` per thread, so every
//! multiply-add reads two numbers from shared memory: the kernel is limited
//! by shared-memory bandwidth, not by arithmetic. Here each block of
//! 16 × 16 threads computes a 128 × 128 square of `C`, and each thread an
//! 8 × 8 square of it, held in registers (`acc`). Per step along `k` a
//! thread reads 8 numbers of `A` and 8 of `B` from shared memory and does
//! 8 × 8 = 64 multiply-adds with them: eight times fewer shared reads per
//! multiply-add.
//!
//! ```text
//!   a thread's 8 × 8 outputs are spread over the block's square with a
//!   stride of 16, so that neighbouring threads touch neighbouring columns:
//!   rows ty, ty + 16, ..., ty + 112; columns tx, tx + 16, ..., tx + 112
//! ```
//!
//! The loops over the 8 × 8 registers are `#[unroll]`ed: the GPU then
//! sees `acc[3][5]` with constant indices and keeps all 64 in registers.
//! (Indexed by a loop variable, the array would live in slow local
//! memory.)

mod common;

use onekernel::prelude::*;
use onekernel::tune;

#[onekernel::kernels]
mod gemm {
    use onekernel::prelude::*;

    /// Rows and columns of `C` a block computes.
    pub const BM: usize = 128;
    /// Columns of `C` a block computes.
    pub const BN: usize = 128;
    /// The step along `k`: columns of `A` (rows of `B`) per shared tile.
    pub const BK: usize = 8;
    /// Rows and columns of `C` a thread computes.
    pub const TM: usize = 8;
    /// Columns of `C` a thread computes.
    pub const TN: usize = 8;
    /// Threads along each axis of a block (`BM / TM`).
    pub const T: usize = 16;

    /// `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`).
    /// Launch with `Grid::blocks([n.div_ceil(128), m.div_ceil(128)])`.
    #[kernel(workgroup_size = (16, 16))]
    pub fn sgemm(a: &[f32], b: &[f32], c: &mut [f32], m: u32, k: u32, n: u32) {
        // `A`'s tile is stored transposed (`a_tile[j][row]`), so that a
        // thread's 8 rows at one `j` are one row of the tile.
        let a_tile = shared::<[[f32; BM]; BK]>();
        let b_tile = shared::<[[f32; BN]; BK]>();
        let (m, k, n) = (m as usize, k as usize, n as usize);
        let (tx, ty) = (thread_id().x, thread_id().y);
        let id = ty * T + tx;
        let row0 = block_id().y * BM;
        let col0 = block_id().x * BN;

        let mut acc = [[0.0f32; TN]; TM];
        let mut a_frag = [0.0f32; TM];
        let mut b_frag = [0.0f32; TN];
        let steps = (k + BK - 1) / BK;
        for step in 0..steps {
            let j0 = step * BK;
            // Load: 1024 elements of each tile, 4 per thread; outside the
            // matrices the tile gets 0.
            #[unroll]
            for q in 0..4 {
                let e = id + q * T * T;
                // A: 128 rows × 8 columns, consecutive threads along a row.
                let (r, j) = (e / BK, e % BK);
                let (gr, gj) = (row0 + r, j0 + j);
                a_tile[j][r] = if gr < m && gj < k { a[gr * k + gj] } else { 0.0 };
                // B: 8 rows × 128 columns, consecutive threads along a row.
                let (j, cc) = (e / BN, e % BN);
                let (gj, gc) = (j0 + j, col0 + cc);
                b_tile[j][cc] = if gj < k && gc < n { b[gj * n + gc] } else { 0.0 };
            }
            workgroup_barrier();

            // Compute: 8 steps of an 8 × 8 outer product in registers.
            #[unroll]
            for j in 0..BK {
                #[unroll]
                for r in 0..TM {
                    a_frag[r] = a_tile[j][ty + r * T];
                }
                #[unroll]
                for cc in 0..TN {
                    b_frag[cc] = b_tile[j][tx + cc * T];
                }
                #[unroll]
                for r in 0..TM {
                    #[unroll]
                    for cc in 0..TN {
                        acc[r][cc] = a_frag[r].mul_add(b_frag[cc], acc[r][cc]);
                    }
                }
            }
            workgroup_barrier();
        }

        #[unroll]
        for r in 0..TM {
            #[unroll]
            for cc in 0..TN {
                let (gr, gc) = (row0 + ty + r * T, col0 + tx + cc * T);
                if gr < m && gc < n {
                    c[gr * n + gc] = acc[r][cc];
                }
            }
        }
    }
}

/// The fast path, for `m` and `n` multiples of 128 and `k` a multiple of
/// 16: the same blocking, with every global and shared access a `Vec4`.
///
/// A thread's 8 × 8 outputs are rows `ty*4 .. ty*4+4` and `64 + ty*4 ..`,
/// columns `tx*4 .. tx*4+4` and `64 + tx*4 ..` of the block's square, so
/// each row of them is two `Vec4`s (`acc[i][0]`, `acc[i][1]`) and is
/// stored as two `Vec4`s. Per step of 16 along `k` a thread stages two
/// `Vec4`s of `A` (4 consecutive `k` of a row) and two of `B` (4
/// consecutive columns), and the compute reads `Vec4`s only: per 4 `k`,
/// 8 of `A` and 8 of `B` for 256 multiply-adds. On the H200 this is
/// 41 TFLOP/s unchecked at 4096³, 1.2× the same tiling hand-written in
/// WGSL with steps of 8 (docs/performance.md).
#[onekernel::kernels]
mod gemm4 {
    use onekernel::prelude::*;

    /// Rows (and columns) of `C` a block computes.
    pub const B: usize = 128;
    /// The step along `k`.
    pub const BK: usize = 16;
    /// `Vec4`s per staged tile (of `A`: 128 rows × 4; of `B`: 16 rows × 32).
    pub const TILE4: usize = B * BK / 4;

    /// Output row `i` (0..8) of thread row `ty` within the block's square.
    #[helper]
    fn out_row(i: usize, ty: usize) -> usize {
        (i / 4) * 64 + ty * 4 + i % 4
    }

    /// `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`)
    /// read and written as `Vec4`s: `m`, `n` multiples of 128, `k` of 16.
    /// Launch with `Grid::blocks([n / 128, m / 128])`.
    ///
    /// While the block multiplies the tiles of one step, each thread has
    /// already asked for its four `Vec4`s of the next step (`a0`, `a1`,
    /// `b0n`, `b1n`): the global loads overlap the arithmetic, and the
    /// values are in registers when the next step stores them.
    #[kernel(workgroup_size = 256)]
    pub fn sgemm_vec4(a: &[Vec4], b: &[Vec4], c: &mut [Vec4], _m: u32, k: u32, n: u32) {
        // `a_tile[r * 4 + q]`: `A[row0 + r][k0 + 4q .. + 4]`;
        // `b_tile[j * 32 + q]`: `B[k0 + j][col0 + 4q .. + 4]`.
        let a_tile = shared::<[Vec4; TILE4]>();
        let b_tile = shared::<[Vec4; TILE4]>();
        let (k4, n4) = (k as usize / 4, n as usize / 4);
        let t = thread_id().x;
        let (tx, ty) = (t % 16, t / 16);
        let row0 = block_id().y * B;
        let col0 = block_id().x * B;
        // This thread stages elements `t` and `t + 256` of each tile:
        // of `A`, `Vec4` `t % 4` of rows `t / 4` and `64 + t / 4`; of `B`,
        // `Vec4` `t % 32` of rows `t / 32` and `8 + t / 32`.
        let a_at = (row0 + t / 4) * k4 + t % 4;
        let b_at = (t / 32) * n4 + col0 / 4 + t % 32;

        let mut acc = [[Vec4::ZERO; 2]; 8];
        let mut a_frag = [Vec4::ZERO; 8];
        let steps = k as usize / BK;
        let mut a0 = a[a_at];
        let mut a1 = a[a_at + 64 * k4];
        let mut b0n = b[b_at];
        let mut b1n = b[b_at + 8 * n4];
        for step in 0..steps {
            a_tile[t] = a0;
            a_tile[t + 256] = a1;
            b_tile[t] = b0n;
            b_tile[t + 256] = b1n;
            workgroup_barrier();
            if step + 1 < steps {
                let (da, db) = ((step + 1) * BK / 4, (step + 1) * BK * n4);
                a0 = a[a_at + da];
                a1 = a[a_at + 64 * k4 + da];
                b0n = b[b_at + db];
                b1n = b[b_at + 8 * n4 + db];
            }
            #[unroll]
            for q in 0..4 {
                #[unroll]
                for i in 0..8 {
                    a_frag[i] = a_tile[out_row(i, ty) * 4 + q];
                }
                #[unroll]
                for kk in 0..4 {
                    let j = q * 4 + kk;
                    let b0 = b_tile[j * 32 + tx];
                    let b1 = b_tile[j * 32 + 16 + tx];
                    #[unroll]
                    for i in 0..8 {
                        let x = Vec4::splat(a_frag[i][kk]);
                        acc[i][0] = x.mul_add(b0, acc[i][0]);
                        acc[i][1] = x.mul_add(b1, acc[i][1]);
                    }
                }
            }
            workgroup_barrier();
        }
        #[unroll]
        for i in 0..8 {
            let at = (row0 + out_row(i, ty)) * n4 + col0 / 4 + tx;
            c[at] = acc[i][0];
            c[at + 16] = acc[i][1];
        }
    }
}

/// The plain Rust answer.
fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for r in 0..m {
        for j in 0..k {
            let x = a[r * k + j];
            for col in 0..n {
                c[r * n + col] += x * b[j * n + col];
            }
        }
    }
    c
}

/// Multiples of 1/8 between -1 and 1: the sums stay exact in `f32`.
fn data(len: usize, seed: usize) -> Vec<f32> {
    (0..len).map(|i| ((i * 7 + seed) % 17) as f32 / 8.0 - 1.0).collect()
}

/// The grid for an `m × n` result: one block per 128 × 128 square.
fn grid(m: usize, n: usize) -> Grid {
    Grid::blocks([n.div_ceil(gemm::BN), m.div_ceil(gemm::BM)])
}

/// The two kernels `run` chooses between.
#[derive(Clone, Copy, Debug)]
enum Variant {
    /// `gemm::sgemm`: any sizes.
    Plain,
    /// `gemm4::sgemm_vec4`: sizes [`fits_vec4`] accepts.
    Vec4,
}

/// The variants that can multiply these sizes, each with its name in the
/// tuning cache.
fn candidates(m: usize, k: usize, n: usize) -> &'static [(&'static str, Variant)] {
    if fits_vec4(m, k, n) {
        &[("sgemm", Variant::Plain), ("sgemm_vec4", Variant::Vec4)]
    } else {
        &[("sgemm", Variant::Plain)]
    }
}

/// The fastest variant for these sizes on `device`, from the autotuner:
/// tuned on the first call for a device and a bucket of sizes (each
/// candidate run once and checked against the first, then timed), then
/// read from the tuning cache, in this process and later ones.
fn choose(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<tune::Choice<'static, (&'static str, Variant)>, tune::TuneError> {
    let tuner = tune::Tuner::new(device, "sgemm", &[&gemm::sgemm::KERNEL, &gemm4::sgemm_vec4::KERNEL]);
    // Tests leave the user's cache alone.
    let tuner = if cfg!(test) { tuner.without_cache_file() } else { tuner };
    let key = tune::Key::new().size("m", m).size("k", k).size("n", n).value("vec4", fits_vec4(m, k, n));
    tuner.choose(&key, candidates(m, k, n), |&(_, variant)| run_variant(device, variant, a, b, m, k, n))
}

fn run(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let choice = choose(device, a, b, m, k, n)?;
    run_variant(device, choice.candidate.1, a, b, m, k, n)
}

fn run_variant(
    device: &Device,
    variant: Variant,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    if let Variant::Vec4 = variant {
        return run_vec4(device, a, b, m, k, n);
    }
    let a = Buffer::from_slice(device, a)?;
    let b = Buffer::from_slice(device, b)?;
    let mut c = Buffer::<f32>::zeroed(device, m * n)?;
    gemm::sgemm::launch(device, grid(m, n), &a, &b, &mut c, m as u32, k as u32, n as u32)?;
    Ok(c.read()?)
}

/// Whether `sgemm_vec4` can multiply these sizes.
fn fits_vec4(m: usize, k: usize, n: usize) -> bool {
    m % gemm4::B == 0 && n % gemm4::B == 0 && k % gemm4::BK == 0
}

/// Row-major `f32`s as `Vec4`s (4 consecutive elements of a row each).
fn vec4s(x: &[f32]) -> Vec<Vec4> {
    x.chunks_exact(4).map(Vec4::from_slice).collect()
}

fn run_vec4(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let a = Buffer::from_slice(device, &vec4s(a))?;
    let b = Buffer::from_slice(device, &vec4s(b))?;
    let mut c = Buffer::<Vec4>::zeroed(device, m * n / 4)?;
    gemm4::sgemm_vec4::launch(device, grid(m, n), &a, &b, &mut c, m as u32, k as u32, n as u32)?;
    Ok(c.read()?.iter().flat_map(|v| v.to_array()).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", gemm4::sgemm_vec4::WGSL);
        return Ok(());
    }
    // Sizes that are not multiples of the tiles.
    let (m, k, n) = (200, 77, 130);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    // And sizes the `Vec4` kernel takes.
    let (m4, k4, n4) = (256, 48, 128);
    let (a4, b4) = (data(m4 * k4, 5), data(k4 * n4, 6));
    let want4 = reference(&a4, &b4, m4, k4, n4);
    for device in common::devices(false) {
        let got = run(&device, &a, &b, m, k, n)?;
        common::check("sgemm", &got, &want, 0.0);
        println!("{}: {m}x{k} times {k}x{n} agrees with plain Rust", device.name());
        let got = run_vec4(&device, &a4, &b4, m4, k4, n4)?;
        common::check("sgemm_vec4", &got, &want4, 0.0);
        println!("{}: {m4}x{k4} times {k4}x{n4} (Vec4 kernel) agrees with plain Rust", device.name());
        let choice = choose(&device, &a4, &b4, m4, k4, n4)?;
        let times: Vec<String> = choice
            .outcomes
            .iter()
            .map(|o| match &o.result {
                Ok(t) => format!("{} {t:?}", o.name),
                Err(why) => format!("{} dropped: {why}", o.name),
            })
            .collect();
        println!(
            "{}: at {m4}x{k4}x{n4} the tuner chose {} ({:?}: {})",
            device.name(),
            choice.name(),
            choice.source,
            times.join(", ")
        );
        if device.is_gpu() {
            let got = run(&device.checked(), &a, &b, m, k, n)?;
            common::check("sgemm, checked", &got, &want, 0.0);
            let got = run(&device.checked(), &a4, &b4, m4, k4, n4)?;
            common::check("sgemm_vec4, checked", &got, &want4, 0.0);
        }
    }
    if let Some(at) = args.iter().position(|a| a == "--time") {
        let size: usize = args.get(at + 1).and_then(|v| v.parse().ok()).unwrap_or(4096);
        time(size)?;
    }
    Ok(())
}

/// GPU kernel time from timestamps: median of 20 launches, through a plain
/// handle (wgpu's bounds checks on), a checked one and an unchecked one; at
/// `size`³ and at 1000 × 777 × 1234 (no size a multiple of the tiles).
fn time(size: usize) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    println!("{}", device.name());
    for (m, k, n) in [(size, size, size), (1000, 777, 1234)] {
        let (a, b) = (data(m * k, 1), data(k * n, 2));
        let (m32, k32, n32) = (m as u32, k as u32, n as u32);
        // SAFETY: every access of both kernels is guarded by the matrix
        // sizes or in bounds for sizes `fits_vec4` accepts (checked on the
        // CPU executor and by the checked launches of `main` and the test).
        let unchecked = unsafe { device.unchecked() };
        let handles = [("plain", device.clone()), ("checked", device.checked()), ("unchecked", unchecked)];
        // The tuner's choice (tuned on the plain handle, the first time).
        let choice = choose(&device, &a, &b, m, k, n)?;
        println!("{m}x{k}x{n}: the tuner chose {} ({:?})", choice.name(), choice.source);
        let got = if let Variant::Vec4 = choice.candidate.1 {
            let a = Buffer::from_slice(&device, &vec4s(&a))?;
            let b = Buffer::from_slice(&device, &vec4s(&b))?;
            let mut c = Buffer::<Vec4>::zeroed(&device, m * n / 4)?;
            for (what, d) in &handles {
                report(&format!("sgemm_vec4 {m}x{k}x{n} {what}"), m * k * n, d, || {
                    gemm4::sgemm_vec4::launch(d, grid(m, n), &a, &b, &mut c, m32, k32, n32)
                })?;
            }
            c.read()?.iter().flat_map(|v| v.to_array()).collect::<Vec<f32>>()
        } else {
            let a = Buffer::from_slice(&device, &a)?;
            let b = Buffer::from_slice(&device, &b)?;
            let mut c = Buffer::<f32>::zeroed(&device, m * n)?;
            for (what, d) in &handles {
                report(&format!("sgemm {m}x{k}x{n} {what}"), m * k * n, d, || {
                    gemm::sgemm::launch(d, grid(m, n), &a, &b, &mut c, m32, k32, n32)
                })?;
            }
            c.read()?
        };
        // Spot-check the last result against plain Rust.
        for probe in 0..32 {
            let (r, col) = ((probe * 7919) % m, (probe * 104_729) % n);
            let want: f32 = (0..k).map(|j| a[r * k + j] * b[j * n + col]).sum();
            common::check(&format!("c[{r}][{col}]"), &[got[r * n + col]], &[want], 1e-3);
        }
    }
    Ok(())
}

/// Times `launch` (after one warm-up launch that also creates the
/// pipeline): GPU kernel time from timestamps, median of 20 launches.
fn report(
    what: &str,
    multiply_adds: usize,
    device: &Device,
    mut launch: impl FnMut() -> Result<(), onekernel::LaunchError>,
) -> Result<(), Box<dyn std::error::Error>> {
    launch()?;
    let (launched, timing) = device.time(|| (0..20).try_for_each(|_| launch()))?;
    launched?;
    let t = timing.median().expect("timed").as_secs_f64();
    let tflops = 2.0 * multiply_adds as f64 / t * 1e-12;
    println!("{what}: {:.3} ms, {tflops:.2} TFLOP/s ({})", t * 1e3, timing.clock);
    Ok(())
}

#[test]
fn vec4_kernel_agrees_with_plain_rust() {
    // Two blocks along each axis and three steps along `k`.
    let (m, k, n) = (256, 48, 256);
    let (a, b) = (data(m * k, 7), data(k * n, 8));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        let got = run_vec4(&device, &a, &b, m, k, n).unwrap();
        common::check(&format!("sgemm_vec4 on {}", device.name()), &got, &want, 0.0);
    }
}

#[test]
fn cpu_and_gpu_agree_with_plain_rust() {
    // Two blocks along each axis, none of them full, and a `k` that leaves
    // a partial step: every guard is exercised.
    let (m, k, n) = (130, 9, 129);
    let (a, b) = (data(m * k, 3), data(k * n, 4));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        let got = run(&device, &a, &b, m, k, n).unwrap();
        common::check(&format!("sgemm on {}", device.name()), &got, &want, 0.0);
    }
}

#[test]
fn the_tuner_chooses_a_kernel_that_agrees() {
    // Sizes both kernels take: the tuner runs both, checks that they
    // agree, and picks one; `run` then uses it.
    let (m, k, n) = (256, 48, 128);
    let (a, b) = (data(m * k, 9), data(k * n, 10));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        let choice = choose(&device, &a, &b, m, k, n).unwrap();
        assert_eq!(choice.source, tune::Source::Tuned);
        assert!(choice.outcomes.iter().all(|o| o.result.is_ok()), "{:?}", choice.outcomes);
        let got = run(&device, &a, &b, m, k, n).unwrap();
        common::check(&format!("tuned sgemm on {}", device.name()), &got, &want, 0.0);
    }
}
