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
//! chosen tuple, its TFLOP/s (20 products, GPU timestamps), the
//! tuning time and whether the cache answered. The cuBLAS figures for the
//! same shapes: `python3 peers/torch/sgemm_shapes.py`.

mod common;

use onekernel::prelude::*;
use onekernel::tune;
use onekernel::BufferError;
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
        // bounds are set at the launch: each specialisation unrolls the
        // loops (`#[unroll]`), so every index of `acc` is a constant.
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

// The `Vec4` kernel is the library's: `onekernel::ops::matmul::sgemm_tiled`
// (`sgemm.rs`'s `sgemm_vec4` with its blocking as parameters, batched over
// `block_id().z`), which `ops::matmul` tunes the same way. One kernel, used
// here with a batch of one.
use onekernel::ops::matmul::sgemm_tiled;

/// `dst`, `rows4 × cols4` `Vec4`s (`rows4` = its length over `cols4`):
/// `src`, `rows × cols` `f32`s, with zeros past its rows and columns.
/// Launch with `Grid::blocks([cols4.div_ceil(64), rows4.div_ceil(4)])`.
#[kernel(workgroup_size = (64, 4))]
pub fn pad(src: &[f32], dst: &mut [Vec4], rows: u32, cols: u32, cols4: u32) {
    let (q, r) = (global_id().x, global_id().y);
    let (rows, cols, cols4) = (rows as usize, cols as usize, cols4 as usize);
    if q < cols4 && r * cols4 < dst.len() {
        let (j, at) = (q * 4, r * cols + q * 4);
        let x = if r < rows && j < cols { src[at] } else { 0.0 };
        let y = if r < rows && j + 1 < cols { src[at + 1] } else { 0.0 };
        let z = if r < rows && j + 2 < cols { src[at + 2] } else { 0.0 };
        let w = if r < rows && j + 3 < cols { src[at + 3] } else { 0.0 };
        dst[r * cols4 + q] = Vec4::new(x, y, z, w);
    }
}

/// `dst` (`rows × cols` `f32`s): the first `rows` rows and `cols` columns
/// of `src` (rows of `cols4` `Vec4`s). Launch with
/// `Grid::blocks([cols4.div_ceil(64), rows.div_ceil(4)])`.
#[kernel(workgroup_size = (64, 4))]
pub fn unpad(src: &[Vec4], dst: &mut [f32], rows: u32, cols: u32, cols4: u32) {
    let (q, r) = (global_id().x, global_id().y);
    let (rows, cols, cols4) = (rows as usize, cols as usize, cols4 as usize);
    if r < rows && q < cols4 {
        let v = src[r * cols4 + q];
        let (j, at) = (q * 4, r * cols + q * 4);
        if j < cols {
            dst[at] = v.x;
        }
        if j + 1 < cols {
            dst[at + 1] = v.y;
        }
        if j + 2 < cols {
            dst[at + 2] = v.z;
        }
        if j + 3 < cols {
            dst[at + 3] = v.w;
        }
    }
}

/// A candidate: which kernel and its tile (`BM`, `BN`, `BK`, `TM`, and
/// `TN`: columns per thread for `sgemm_t`, `Vec4` columns for `sgemm_tiled`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tile {
    Scalar([usize; 5]),
    Vec4([usize; 5]),
    /// A `Vec4` tile over copies of `a` and `b` padded with zeros to
    /// multiples of 128 (rows), 16 (`k`) and 128 (columns), `C` copied out:
    /// for shapes no `Vec4` tile divides.
    Padded([usize; 5]),
}

/// The candidates the tuner times, each with its name in the cache:
/// `Vec4` tiles for shapes they divide (the others are dropped there), and
/// scalar tiles for any shape.
const CANDIDATES: [(&str, Tile); 14] = [
    ("v4_bm128_bn128_bk16_tm8_tn2", Tile::Vec4([128, 128, 16, 8, 2])),
    ("v4_bm128_bn128_bk8_tm8_tn2", Tile::Vec4([128, 128, 8, 8, 2])),
    ("v4_bm64_bn128_bk16_tm4_tn2", Tile::Vec4([64, 128, 16, 4, 2])),
    ("v4_bm128_bn64_bk16_tm8_tn2", Tile::Vec4([128, 64, 16, 8, 2])),
    ("v4_bm64_bn64_bk16_tm4_tn2", Tile::Vec4([64, 64, 16, 4, 2])),
    ("v4_bm32_bn64_bk16_tm4_tn2", Tile::Vec4([32, 64, 16, 4, 2])),
    ("pad_v4_bm128_bn128_bk16_tm8_tn2", Tile::Padded([128, 128, 16, 8, 2])),
    ("pad_v4_bm64_bn128_bk16_tm4_tn2", Tile::Padded([64, 128, 16, 4, 2])),
    ("pad_v4_bm64_bn64_bk16_tm4_tn2", Tile::Padded([64, 64, 16, 4, 2])),
    ("bm128_bn128_bk8_tm8_tn8", Tile::Scalar([128, 128, 8, 8, 8])),
    ("bm128_bn64_bk8_tm8_tn4", Tile::Scalar([128, 64, 8, 8, 4])),
    ("bm64_bn128_bk8_tm4_tn8", Tile::Scalar([64, 128, 8, 4, 8])),
    ("bm64_bn64_bk8_tm4_tn4", Tile::Scalar([64, 64, 8, 4, 4])),
    ("bm32_bn32_bk8_tm2_tn2", Tile::Scalar([32, 32, 8, 2, 2])),
];

/// The operands of one product: `f32` buffers, and the same data as
/// `a`, `b`, `c` as `Vec4` buffers.
type Vec4Operands = (Buffer<Vec4>, Buffer<Vec4>, Buffer<Vec4>);

/// `Vec4`s when the row lengths (`k`, `n`) allow.
struct Operands {
    a: Buffer<f32>,
    b: Buffer<f32>,
    c: Buffer<f32>,
    v4: Option<Vec4Operands>,
    /// The padded copies (for shapes no `Vec4` tile divides) and their
    /// sizes.
    padded: Option<(Vec4Operands, (usize, usize, usize))>,
    m: usize,
    k: usize,
    n: usize,
}

impl Operands {
    fn new(device: &Device, a: &[f32], b: &[f32], (m, k, n): (usize, usize, usize)) -> Result<Operands, BufferError> {
        let v4 = if k % 4 == 0 && n % 4 == 0 {
            Some((
                Buffer::from_slice(device, &vec4s(a))?,
                Buffer::from_slice(device, &vec4s(b))?,
                Buffer::<Vec4>::zeroed(device, m * n / 4)?,
            ))
        } else {
            None
        };
        let (mp, kp, np) = (m.next_multiple_of(128), k.next_multiple_of(16), n.next_multiple_of(128));
        let padded = if (mp, kp, np) != (m, k, n) {
            Some((
                (
                    Buffer::<Vec4>::zeroed(device, mp * kp / 4)?,
                    Buffer::<Vec4>::zeroed(device, kp * np / 4)?,
                    Buffer::<Vec4>::zeroed(device, mp * np / 4)?,
                ),
                (mp, kp, np),
            ))
        } else {
            None
        };
        Ok(Operands {
            padded,
            a: Buffer::from_slice(device, a)?,
            b: Buffer::from_slice(device, b)?,
            c: Buffer::zeroed(device, m * n)?,
            v4,
            m,
            k,
            n,
        })
    }

    /// `c` as `f32`s, from the buffer `tile` wrote.
    fn result(&self, tile: Tile) -> Result<Vec<f32>, BufferError> {
        match (tile, &self.v4) {
            (Tile::Vec4(_), Some((_, _, c))) => Ok(c.read()?.iter().flat_map(|v| v.to_array()).collect()),
            _ => self.c.read(),
        }
    }
}

fn vec4s(x: &[f32]) -> Vec<Vec4> {
    x.chunks_exact(4).map(Vec4::from_slice).collect()
}

/// One launch of `tile` on `device` (each tuple is written out: const
/// generic arguments are part of the source). A `Vec4` tile that does not
/// divide the shape is an error (the tuner drops it).
fn launch(device: &Device, tile: Tile, o: &mut Operands) -> Result<(), Box<dyn std::error::Error>> {
    let (m, k, n) = (o.m, o.k, o.n);
    match tile {
        Tile::Scalar(t) => {
            let grid = Grid::blocks([n.div_ceil(t[1]), m.div_ceil(t[0])]);
            let (a, b, c) = (&o.a, &o.b, &mut o.c);
            let (m, k, n) = (m as u32, k as u32, n as u32);
            macro_rules! tuples {
                ($([$bm:literal, $bn:literal, $bk:literal, $tm:literal, $tn:literal]),*) => {
                    match t {
                        $([$bm, $bn, $bk, $tm, $tn] => {
                            sgemm_t::launch::<$bm, $bn, $bk, $tm, $tn, { $bn / $tn }, { $bm / $tm }>(device, grid, a, b, c, m, k, n)?
                        })*
                        other => return Err(format!("no launch is written for the tile {other:?}").into()),
                    }
                };
            }
            tuples!([128, 128, 8, 8, 8], [128, 64, 8, 8, 4], [64, 128, 8, 4, 8], [64, 64, 8, 4, 4], [32, 32, 8, 2, 2]);
        }
        Tile::Vec4(t) => {
            let Some((a, b, c)) = &mut o.v4 else {
                return Err(format!("`k` = {k} and `n` = {n} are not whole `Vec4`s").into());
            };
            launch_v4(device, t, (a, b, c), (m, k, n))?;
        }
        Tile::Padded(t) => {
            let Some(((ap, bp, cp), (mp, kp, np))) = &mut o.padded else {
                return Err(format!("{m} × {k} × {n} needs no padding").into());
            };
            let (mp, kp, np) = (*mp, *kp, *np);
            let u = |x: usize| x as u32;
            let (kp4, np4) = (kp / 4, np / 4);
            pad::launch(device, Grid::blocks([kp4.div_ceil(64), mp.div_ceil(4)]), &o.a, &mut *ap, u(m), u(k), u(kp4))?;
            pad::launch(device, Grid::blocks([np4.div_ceil(64), kp.div_ceil(4)]), &o.b, &mut *bp, u(k), u(n), u(np4))?;
            launch_v4(device, t, (&*ap, &*bp, &mut *cp), (mp, kp, np))?;
            unpad::launch(device, Grid::blocks([np4.div_ceil(64), m.div_ceil(4)]), &*cp, &mut o.c, u(m), u(n), u(np4))?;
        }
    }
    Ok(())
}

// ANCHOR: launch4
/// One launch of the `Vec4` tile `t` on `Vec4` operands of `m × k × n`.
fn launch_v4(
    device: &Device,
    t: [usize; 5],
    (a, b, c): (&Buffer<Vec4>, &Buffer<Vec4>, &mut Buffer<Vec4>),
    (m, k, n): (usize, usize, usize),
) -> Result<(), Box<dyn std::error::Error>> {
    if m % t[0] != 0 || n % t[1] != 0 || k % t[2] != 0 {
        return Err(format!("{m} × {k} × {n} is not whole tiles of {t:?}").into());
    }
    let grid = Grid::blocks([n / t[1], m / t[0]]);
    let (m, k, n) = (m as u32, k as u32, n as u32);
    // `TX = BN / 4 / TNV`, `TY = BM / TM`, and each thread's share of
    // a step's tiles of `A` (`LA`) and `B` (`LB`).
    macro_rules! tuples {
        ($([$bm:literal, $bn:literal, $bk:literal, $tm:literal, $tn:literal]),*) => {
            match t {
                $([$bm, $bn, $bk, $tm, $tn] => {
                    sgemm_tiled::launch::<
                        $bm, $bk, { $bn / 4 }, { $bk / 4 }, $tm, $tn,
                        { $bn / 4 / $tn }, { $bm / $tm },
                        { $bm * $bk / 4 / ($bn / 4 / $tn * ($bm / $tm)) },
                        { $bk * $bn / 4 / ($bn / 4 / $tn * ($bm / $tm)) },
                    >(device, grid, a, b, c, m, k, n)?
                })*
                other => return Err(format!("no launch is written for the tile {other:?}").into()),
            }
        };
    }
    tuples!(
        [128, 128, 16, 8, 2],
        [128, 128, 8, 8, 2],
        [64, 128, 16, 4, 2],
        [128, 64, 16, 8, 2],
        [64, 64, 16, 4, 2],
        [32, 64, 16, 4, 2]
    );
    Ok(())
}
// ANCHOR_END: launch4

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

// ANCHOR: choose
/// The tuner's choice of tile for these operands on `device` (tuned the
/// first time for a device and a bucket of sizes, then read from the
/// cache). Each candidate's first run is read back and compared with the
/// first candidate's; its timed runs are not read.
fn choose<'c>(
    device: &Device,
    tuner: &tune::Tuner,
    candidates: &'c [(&'static str, Tile)],
    o: &mut Operands,
) -> Result<tune::Choice<'c, (&'static str, Tile)>, Box<dyn std::error::Error>> {
    // Sizes bucketed, and how far each is a multiple of a power of two:
    // which tiles divide the shape decides which candidates run.
    let align = |x: usize| (x & x.wrapping_neg()).min(128);
    let key = tune::Key::new()
        .size("m", o.m)
        .size("k", o.k)
        .size("n", o.n)
        .value("align", format!("{}/{}/{}", align(o.m), align(o.k), align(o.n)));
    let mut read: Vec<&str> = Vec::new();
    Ok(tuner.choose(&key, candidates, |&(name, tile)| -> Result<Vec<f32>, Box<dyn std::error::Error>> {
        launch(device, tile, o)?;
        if read.contains(&name) {
            return Ok(Vec::new());
        }
        read.push(name);
        Ok(o.result(tile)?)
    })?)
}

fn tuner(device: &Device) -> tune::Tuner {
    tune::Tuner::new(device, "sgemm_tuned", &[&sgemm_t::KERNEL, &sgemm_tiled::KERNEL, &pad::KERNEL, &unpad::KERNEL])
}
// ANCHOR_END: choose

/// Multiplies on `device` with the tuner's tile.
fn run(
    device: &Device,
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let mut o = Operands::new(device, a, b, (m, k, n))?;
    let tuner = tuner(device);
    let tuner = if cfg!(test) { tuner.without_cache_file() } else { tuner };
    let tile = choose(device, &tuner, &CANDIDATES, &mut o)?.candidate.1;
    launch(device, tile, &mut o)?;
    Ok(o.result(tile)?)
}

/// The module the GPU runs for `sgemm_tiled::<128, 16, 32, 4, 8, 2, 16, 16,
/// 2, 2>`: the overrides written as constants, every loop over a parameter
/// unrolled and the register arrays split into scalars, as the runtime
/// makes it at the first launch.
fn specialised_wgsl() -> String {
    let values = [128.0, 16.0, 32.0, 4.0, 8.0, 2.0, 16.0, 16.0, 2.0, 2.0];
    onekernel::abi::specialised_wgsl(sgemm_tiled::WGSL, &sgemm_tiled::KERNEL.consts.params, &values)
        .expect("the module specialises")
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", specialised_wgsl());
        return Ok(());
    }
    if args.iter().any(|a| a == "--bench") {
        return bench(args.iter().any(|a| a == "--small"));
    }
    for device in common::devices(false) {
        check_every_tile(&device, (130, 37, 97))?;
        check_every_tile(&device, (128, 48, 128))?;
        println!("{}: every tile and the tuned choice agree with plain Rust", device.name());
    }
    Ok(())
}

/// Every tile that runs this shape (every scalar tile; the `Vec4` tiles
/// that divide it) and the tuned choice agree with plain Rust.
fn check_every_tile(device: &Device, (m, k, n): (usize, usize, usize)) -> Result<(), Box<dyn std::error::Error>> {
    let (a, b) = (data(m * k, 1), data(k * n, 2));
    let want = reference(&a, &b, m, k, n);
    let mut o = Operands::new(device, &a, &b, (m, k, n))?;
    for (name, tile) in CANDIDATES {
        let divides = match tile {
            Tile::Scalar(_) => true,
            Tile::Vec4(t) => o.v4.is_some() && m % t[0] == 0 && n % t[1] == 0 && k % t[2] == 0,
            Tile::Padded(_) => o.padded.is_some(),
        };
        match launch(device, tile, &mut o) {
            Ok(()) => common::check(&format!("{name} on {}", device.name()), &o.result(tile)?, &want, 0.0),
            Err(e) if !divides => drop(e),
            Err(e) => return Err(e),
        }
    }
    let got = run(device, &a, &b, m, k, n)?;
    common::check("the tuned sgemm", &got, &want, 0.0);
    Ok(())
}

/// The table: per shape the tuned tile's TFLOP/s (with wgpu's bounds
/// checks, and without: `Device::unchecked`) and the tuning time.
fn bench(small: bool) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    // SAFETY: every tile's accesses are in bounds
    // for the shapes it accepts; `check_every_tile` and the spot checks
    // below compare its results with plain Rust.
    let unchecked = unsafe { device.unchecked() };
    let shapes: &[(usize, usize, usize)] = if small {
        &[(64, 64, 64), (100, 77, 123), (128, 128, 128)]
    } else {
        &[
            (512, 512, 512),
            (1000, 777, 1234),
            (2048, 2048, 2048),
            (4096, 4096, 4096),
            (4096, 1024, 4096),
            (4096, 4096, 256),
            (8192, 8192, 8192),
        ]
    };
    println!("SGEMM with const-parameter tiles, tuned per shape on {}\n", device.name());
    println!("| m × k × n | tile (tuned) | ms | TFLOP/s | unchecked ms | TFLOP/s | tuning | from |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    let tuner = tuner(&device);
    // Warm the GPU up (it idles at a low clock).
    {
        let mut o = Operands::new(&device, &data(1 << 20, 1), &data(1 << 20, 2), (1024, 1024, 1024))?;
        let warm = std::time::Instant::now();
        while warm.elapsed().as_secs_f64() < 3.0 {
            for _ in 0..50 {
                launch(&device, CANDIDATES[0].1, &mut o)?;
            }
            device.synchronize()?;
        }
    }
    for &(m, k, n) in shapes {
        let (a, b) = (data(m * k, 1), data(k * n, 2));
        let mut o = Operands::new(&device, &a, &b, (m, k, n))?;
        let started = Instant::now();
        let choice = choose(&device, &tuner, &CANDIDATES, &mut o)?;
        let tuning = started.elapsed();
        let tile = choice.candidate.1;
        let mut time = |d: &Device| -> Result<f64, Box<dyn std::error::Error>> {
            // Warm up for 0.2 s: right after the tuning's compiles the
            // GPU's clocks are down (512³ timed 5× slower without this).
            let warm = Instant::now();
            while warm.elapsed().as_secs_f64() < 0.2 {
                launch(d, tile, &mut o)?;
                d.synchronize()?;
            }
            let (launched, timing) = d.time(|| (0..20).try_for_each(|_| launch(d, tile, &mut o)))?;
            launched?;
            // All the kernels of a product (a padded tile launches four).
            Ok(timing.total.as_secs_f64() / 20.0)
        };
        let (t, tu) = (time(&device)?, time(&unchecked)?);
        // Spot-check the result against plain Rust.
        let got = o.result(tile)?;
        for probe in 0..16 {
            let (r, col) = ((probe * 7919) % m, (probe * 104_729) % n);
            let want: f32 = (0..k).map(|j| a[r * k + j] * b[j * n + col]).sum();
            common::check(&format!("c[{r}][{col}]"), &[got[r * n + col]], &[want], 1e-3);
        }
        let flop = 2.0 * (m * k * n) as f64;
        println!(
            "| {m} × {k} × {n} | {} | {:.3} | {:.2} | {:.3} | {:.2} | {:.2} s | {:?} |",
            choice.name(),
            t * 1e3,
            flop / t * 1e-12,
            tu * 1e3,
            flop / tu * 1e-12,
            tuning.as_secs_f64(),
            choice.source
        );
    }
    Ok(())
}

#[test]
fn every_tile_and_the_tuned_choice_agree_with_plain_rust() {
    // Two blocks of the largest tile along each axis, none full, and a `k`
    // that leaves a partial step: every guard of the scalar tiles is
    // exercised; then a shape every `Vec4` tile divides.
    for device in common::devices(true) {
        check_every_tile(&device, (130, 9, 129)).unwrap();
        check_every_tile(&device, (128, 32, 128)).unwrap();
    }
}

#[test]
fn the_specialised_module_has_no_loop_over_the_tile() {
    let wgsl = specialised_wgsl();
    // The `k` steps and nothing else: no loop over `TM`, `TNV`, `BKV`,
    // `LA` or `LB` is left, so every index of `acc`, `a_frag`, `b_frag`,
    // `a_next` and `b_next` is a constant, and each of them is split into
    // scalars (`acc_7_1_`: naga's writer appends `_` to a name ending in a
    // digit): no local array is left.
    assert_eq!(wgsl.matches("loop {").count(), 1, "{wgsl}");
    assert!(!wgsl.contains("unroll_"), "{wgsl}");
    assert!(!wgsl.contains("override"), "{wgsl}");
    assert!(wgsl.contains("const TM: u32 = 8u;"), "{wgsl}");
    for var in ["acc_7_1", "a_frag_7", "b_frag_1", "a_next_1", "b_next_1"] {
        assert!(wgsl.contains(&format!("var {var}_: vec4<f32>;")), "{var} in\n{wgsl}");
    }
    assert!(!wgsl.contains("var acc: array"), "{wgsl}");
}
