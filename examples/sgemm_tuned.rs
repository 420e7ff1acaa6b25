//! **SGEMM with its blocking as const parameters, tuned per shape.**
//!
//!     cargo run --release --example sgemm_tuned             # check on every device
//!     cargo run --release --example sgemm_tuned -- --bench  # the table below, on the GPU
//!     cargo run --release --example sgemm_tuned -- --bench --small   # the same, small shapes
//!
//! The kernel is `sgemm.rs`'s register-blocked one with its tile written
//! once as parameters: a block computes a `BM × BN` square of `C`, a
//! thread a `TM × TN` square of it (held in registers), stepping `BK`
//! along `k`; `TX = BN / TN` by `TY = BM / TM` threads per block. The
//! shared tiles (`shared::<[[f32; BM]; BK]>()`), the thread's registers
//! (`[[0.0f32; TN]; TM]`) and the workgroup size (`workgroup_size = (TX,
//! TY)`) are all sized by them: each value tuple is a module of its own,
//! made at its first launch (the `override`s written as constants).
//!
//! `onekernel::tune` picks the tuple per shape (bucketed `m`, `k`, `n`):
//! each candidate is run, checked against the first (the data are
//! multiples of 1/8, so every order of summation gives the same `f32`),
//! and timed; the winner is remembered in the tuning cache, so a second
//! run tunes nothing. `--bench` prints one Markdown table: per shape, the
//! chosen tuple, its TFLOP/s (median of 20 launches, GPU timestamps), the
//! tuning time and whether the cache answered. The cuBLAS figures for the
//! same shapes: `python3 peers/torch/sgemm_shapes.py`.

mod common;

use onekernel::prelude::*;
use onekernel::tune;
use std::time::Instant;

/// `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`), `c` (`m × n`).
/// Launch with `Grid::blocks([n.div_ceil(BN), m.div_ceil(BM)])`, with
/// `TX = BN / TN` and `TY = BM / TM`.
#[kernel(workgroup_size = (TX, TY), max_workgroup_invocations = 1024, max_shared_bytes = 32768)]
pub fn sgemm_t<
    const BM: usize,
    const BN: usize,
    const BK: usize,
    const TM: usize,
    const TN: usize,
    const TX: usize,
    const TY: usize,
>(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: u32,
    k: u32,
    n: u32,
) {
    // `A`'s tile is stored transposed (`a_tile[j][row]`), so that a
    // thread's rows at one `j` are one row of the tile.
    let a_tile = shared::<[[f32; BM]; BK]>();
    let b_tile = shared::<[[f32; BN]; BK]>();
    let (m, k, n) = (m as usize, k as usize, n as usize);
    let (tx, ty) = (thread_id().x, thread_id().y);
    let id = ty * TX + tx;
    let row0 = block_id().y * BM;
    let col0 = block_id().x * BN;

    let mut acc = [[0.0f32; TN]; TM];
    let mut a_frag = [0.0f32; TM];
    let mut b_frag = [0.0f32; TN];
    let steps = (k + BK - 1) / BK;
    for step in 0..steps {
        let j0 = step * BK;
        // Load both tiles, consecutive threads along a row; outside the
        // matrices the tile gets 0.
        let mut e = id;
        while e < BM * BK {
            let (r, j) = (e / BK, e % BK);
            let (gr, gj) = (row0 + r, j0 + j);
            a_tile[j][r] = if gr < m && gj < k { a[gr * k + gj] } else { 0.0 };
            e += TX * TY;
        }
        let mut e = id;
        while e < BK * BN {
            let (j, cc) = (e / BN, e % BN);
            let (gj, gc) = (j0 + j, col0 + cc);
            b_tile[j][cc] = if gj < k && gc < n { b[gj * n + gc] } else { 0.0 };
            e += TX * TY;
        }
        workgroup_barrier();

        // `BK` steps of a `TM × TN` outer product in registers. The
        // bounds are set at the launch: the loops stay loops in the WGSL,
        // with constant trip counts once specialised.
        #[unroll]
        for j in 0..BK {
            #[unroll]
            for r in 0..TM {
                a_frag[r] = a_tile[j][ty + r * TY];
            }
            #[unroll]
            for cc in 0..TN {
                b_frag[cc] = b_tile[j][tx + cc * TX];
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
            let (gr, gc) = (row0 + ty + r * TY, col0 + tx + cc * TX);
            if gr < m && gc < n {
                c[gr * n + gc] = acc[r][cc];
            }
        }
    }
}

/// A tile: `BM`, `BN`, `BK`, `TM`, `TN`.
type Tile = [usize; 5];

/// The candidates the tuner times, each with its name in the cache.
const CANDIDATES: [(&str, Tile); 6] = [
    ("bm128_bn128_bk8_tm8_tn8", [128, 128, 8, 8, 8]),
    ("bm128_bn128_bk16_tm8_tn8", [128, 128, 16, 8, 8]),
    ("bm128_bn64_bk8_tm8_tn4", [128, 64, 8, 8, 4]),
    ("bm64_bn128_bk8_tm4_tn8", [64, 128, 8, 4, 8]),
    ("bm64_bn64_bk8_tm4_tn4", [64, 64, 8, 4, 4]),
    ("bm32_bn32_bk8_tm2_tn2", [32, 32, 8, 2, 2]),
];

/// One launch of `sgemm_t` for `tile` (each tuple is written out: const
/// generic arguments are part of the source).
#[allow(clippy::too_many_arguments)]
fn launch(
    device: &Device,
    tile: Tile,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    m: usize,
    k: usize,
    n: usize,
) -> Result<(), LaunchError> {
    let grid = Grid::blocks([n.div_ceil(tile[1]), m.div_ceil(tile[0])]);
    let (m, k, n) = (m as u32, k as u32, n as u32);
    macro_rules! tuples {
        ($([$bm:literal, $bn:literal, $bk:literal, $tm:literal, $tn:literal]),*) => {
            match tile {
                $([$bm, $bn, $bk, $tm, $tn] => {
                    sgemm_t::launch::<$bm, $bn, $bk, $tm, $tn, { $bn / $tn }, { $bm / $tm }>(device, grid, a, b, c, m, k, n)
                })*
                other => panic!("no launch is written for the tile {other:?}"),
            }
        };
    }
    tuples!(
        [128, 128, 8, 8, 8],
        [128, 128, 16, 8, 8],
        [128, 64, 8, 8, 4],
        [64, 128, 8, 4, 8],
        [64, 64, 8, 4, 4],
        [32, 32, 8, 2, 2]
    )
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

/// The tuner's choice of tile for these sizes on `device` (tuned the first
/// time for a device and a bucket of sizes, then read from the cache).
fn choose<'c>(
    device: &Device,
    tuner: &tune::Tuner,
    candidates: &'c [(&'static str, Tile)],
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    (m, k, n): (usize, usize, usize),
) -> Result<tune::Choice<'c, (&'static str, Tile)>, Box<dyn std::error::Error>> {
    let key = tune::Key::new().size("m", m).size("k", k).size("n", n);
    let mut c = Buffer::<f32>::zeroed(device, m * n)?;
    Ok(tuner.choose(&key, candidates, |&(_, tile)| -> Result<Vec<f32>, Box<dyn std::error::Error>> {
        launch(device, tile, a, b, &mut c, m, k, n)?;
        Ok(c.read()?)
    })?)
}

fn tuner(device: &Device) -> tune::Tuner {
    tune::Tuner::new(device, "sgemm_tuned", &[&sgemm_t::KERNEL])
}

/// Multiplies on `device` with the tuner's tile.
fn run(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let (ab, bb) = (Buffer::from_slice(device, a)?, Buffer::from_slice(device, b)?);
    let tuner = tuner(device);
    let tuner = if cfg!(test) { tuner.without_cache_file() } else { tuner };
    let choice = choose(device, &tuner, &CANDIDATES, &ab, &bb, (m, k, n))?;
    let mut c = Buffer::<f32>::zeroed(device, m * n)?;
    launch(device, choice.candidate.1, &ab, &bb, &mut c, m, k, n)?;
    Ok(c.read()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", sgemm_t::WGSL);
        return Ok(());
    }
    if args.iter().any(|a| a == "--bench") {
        return bench(args.iter().any(|a| a == "--small"));
    }
    // Sizes that are not multiples of any tile.
    let (m, k, n) = (130, 37, 97);
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(false) {
        // Every tile agrees with plain Rust.
        let (ab, bb) = (Buffer::from_slice(&device, &a)?, Buffer::from_slice(&device, &b)?);
        for (name, tile) in CANDIDATES {
            let mut c = Buffer::<f32>::zeroed(&device, m * n)?;
            launch(&device, tile, &ab, &bb, &mut c, m, k, n)?;
            common::check(&format!("{name} on {}", device.name()), &c.read()?, &want, 0.0);
        }
        let got = run(&device, &a, &b, m, k, n)?;
        common::check("the tuned sgemm", &got, &want, 0.0);
        println!("{}: {m}x{k} times {k}x{n} agrees with plain Rust for every tile", device.name());
    }
    Ok(())
}

/// The table: per shape the tuned tile's TFLOP/s and the tuning time.
fn bench(small: bool) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    let shapes: &[(usize, usize, usize)] = if small {
        &[(64, 64, 64), (100, 77, 123), (128, 128, 128)]
    } else {
        &[
            (512, 512, 512),
            (1000, 777, 1234),
            (2048, 2048, 2048),
            (4096, 1024, 4096),
            (4096, 4096, 256),
            (8192, 8192, 8192),
        ]
    };
    println!("SGEMM with const-parameter tiles, tuned per shape on {}\n", device.name());
    println!("| m × k × n | tile (tuned) | ms | TFLOP/s | tuning | from |");
    println!("|---|---|---:|---:|---:|---|");
    let tuner = tuner(&device);
    for &(m, k, n) in shapes {
        let (a, b) = (data(m * k, 1), data(k * n, 2));
        let (ab, bb) = (Buffer::from_slice(&device, &a)?, Buffer::from_slice(&device, &b)?);
        let started = Instant::now();
        let choice = choose(&device, &tuner, &CANDIDATES, &ab, &bb, (m, k, n))?;
        let tuning = started.elapsed();
        let tile = choice.candidate.1;
        let mut c = Buffer::<f32>::zeroed(&device, m * n)?;
        launch(&device, tile, &ab, &bb, &mut c, m, k, n)?;
        let (launched, timing) =
            device.time(|| (0..20).try_for_each(|_| launch(&device, tile, &ab, &bb, &mut c, m, k, n)))?;
        launched?;
        let t = timing.median().expect("timed").as_secs_f64();
        // Spot-check the result against plain Rust.
        let got = c.read()?;
        for probe in 0..16 {
            let (r, col) = ((probe * 7919) % m, (probe * 104_729) % n);
            let want: f32 = (0..k).map(|j| a[r * k + j] * b[j * n + col]).sum();
            common::check(&format!("c[{r}][{col}]"), &[got[r * n + col]], &[want], 1e-3);
        }
        println!(
            "| {m} × {k} × {n} | {} | {:.3} | {:.3} | {:.2} s | {:?} |",
            choice.name(),
            t * 1e3,
            2.0 * (m * k * n) as f64 / t * 1e-12,
            tuning.as_secs_f64(),
            choice.source
        );
    }
    Ok(())
}

#[test]
fn every_tile_and_the_tuned_choice_agree_with_plain_rust() {
    // Two blocks of the largest tile along each axis, none full, and a `k`
    // that leaves a partial step: every guard is exercised.
    let (m, k, n) = (130, 9, 129);
    let (a, b) = (data(m * k, 3), data(k * n, 4));
    let want = reference(&a, &b, m, k, n);
    for device in common::devices(true) {
        let (ab, bb) = (Buffer::from_slice(&device, &a).unwrap(), Buffer::from_slice(&device, &b).unwrap());
        for (name, tile) in CANDIDATES {
            let mut c = Buffer::<f32>::zeroed(&device, m * n).unwrap();
            launch(&device, tile, &ab, &bb, &mut c, m, k, n).unwrap();
            common::check(&format!("{name} on {}", device.name()), &c.read().unwrap(), &want, 0.0);
        }
        let got = run(&device, &a, &b, m, k, n).unwrap();
        common::check(&format!("tuned sgemm on {}", device.name()), &got, &want, 0.0);
    }
}
