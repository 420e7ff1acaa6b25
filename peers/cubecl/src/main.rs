//! `cubecl-peer`: the same benchmarks as the kernel project, written with
//! CubeCL 0.11 (`#[cube]` kernels) and its kernel library cubek-matmul 0.3,
//! run on CubeCL's wgpu runtime, and printed as a Markdown table.
//!
//! Two compilation paths of the same runtime:
//! * **WGSL**: `WgpuRuntime<WgslCompiler>`, CubeCL's own WGSL emitter, run
//!   through wgpu/naga (no tensor cores: cooperative matrices are not in WGSL).
//! * **SPIR-V**: `WgpuRuntime<AutoCompiler>` with the `vulkan` feature, which on
//!   Vulkan picks CubeCL's SPIR-V compiler (passed through wgpu) when the
//!   device supports it, with cooperative matrices for tensor cores. If it
//!   falls back to WGSL (the client is then named `wgpu<wgsl>`), SPIR-V rows
//!   say so and are skipped.
//!
//! Kernel time comes from CubeCL's own profiling (`Client::profile`), which on
//! wgpu uses timestamp queries when the adapter has `TIMESTAMP_QUERY` (the
//! `timing` column says which): `reps` launches inside one profile window,
//! divided by `reps`, one warm-up window, then the median of 7. The wall
//! column is the wall clock around the same launches plus a `sync`.
//!
//! Every result is checked against a CPU reference at a small size first, and
//! on a sample at the full size.
//!
//! ```text
//! cubecl-peer [--small] [--only KEY,...] [--paths wgsl,spirv] [--reps N] [--batches N] [--list]
//! ```
//!
//! On lavapipe (Mesa 25.0.7) the SPIR-V path crashes inside the driver's
//! `vkCreateComputePipelines` for the matmul kernels (the vector adds and the
//! launch kernel run), which no `catch_unwind` can catch: run the two paths as
//! separate processes (`--paths wgsl`, then `--paths spirv`) so that a crash
//! on one loses only its own rows.

mod reference;

use cubecl::calculate_cube_count_elemwise;
use cubecl::client::Client;
use cubecl::prelude::*;
use cubecl::std::tensor::TensorHandle;
use cubecl::wgpu::{AutoCompiler, WgpuDevice, WgpuRuntime, WgslCompiler};
use cubecl_runtime::runtime::Runtime;
use cubek_matmul::definition::{MatmulElems, MatmulGlobalElems};
use cubek_matmul::launch::launch_ref;
use cubek_matmul::strategy::Strategy;
use cubek_std::InputBinding;
use half::f16;
use reference::{compare, matmul_entry, sample_indices, val};
use std::time::Instant;

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------

/// `c = a + b`, one element (or one `Vector` of N elements) per unit.
#[cube(launch_unchecked)]
fn vector_add<F: Float, N: Size>(a: &[Vector<F, N>], b: &[Vector<F, N>], c: &mut [Vector<F, N>]) {
    if ABSOLUTE_POS < c.len() {
        c[ABSOLUTE_POS] = a[ABSOLUTE_POS] + b[ABSOLUTE_POS];
    }
}

/// Tile side of `tiled_matmul`.
const TILE: usize = 16;

/// C = A · B (row-major, A m×k, B k×n) with 16×16 tiles of A and B staged in
/// shared memory: one output per unit, 16×16 units per cube, the inner
/// product over a tile unrolled into 16 `fma`s. Out-of-range loads read 0,
/// so any m, n, k work.
#[cube(launch_unchecked)]
fn tiled_matmul<F: Float>(a: &[F], b: &[F], c: &mut [F], m: usize, n: usize, k: usize) {
    let mut a_tile = Shared::<[F]>::new_slice(256usize);
    let mut b_tile = Shared::<[F]>::new_slice(256usize);
    let tx = UNIT_POS_X as usize;
    let ty = UNIT_POS_Y as usize;
    let row = CUBE_POS_Y as usize * 16 + ty;
    let col = CUBE_POS_X as usize * 16 + tx;
    let mut acc = F::new(0.0);
    let tiles = k.div_ceil(16);
    for t in 0..tiles {
        let ka = t * 16 + tx;
        let mut av = F::new(0.0);
        if row < m && ka < k {
            av = a[row * k + ka];
        }
        a_tile[ty * 16 + tx] = av;
        let kb = t * 16 + ty;
        let mut bv = F::new(0.0);
        if kb < k && col < n {
            bv = b[kb * n + col];
        }
        b_tile[ty * 16 + tx] = bv;
        sync_cube();
        #[unroll]
        for q in 0..16usize {
            acc = fma(a_tile[ty * 16 + q], b_tile[q * 16 + tx], acc);
        }
        sync_cube();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}

/// The launch round trip's kernel: one unit writes `v + 1`.
#[cube(launch_unchecked)]
fn tiny(out: &mut [u32], v: u32) {
    if UNIT_POS == 0 {
        out[0] = v + 1;
    }
}

// ---------------------------------------------------------------------------
// Options, rows, timing
// ---------------------------------------------------------------------------

/// CubeCL's two compilation paths on wgpu.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Wgsl,
    Spirv,
}

impl Path {
    fn label(self) -> &'static str {
        match self {
            Path::Wgsl => "WGSL",
            Path::Spirv => "SPIR-V",
        }
    }
}

struct Options {
    small: bool,
    only: Option<Vec<String>>,
    /// The compilation paths to run every row on (default both).
    paths: Vec<Path>,
    reps: u32,
    batches: usize,
}

const KEYS: &[&str] = &["vadd", "vadd4", "sgemm", "tiled", "hgemm", "launch", "softmax", "layernorm"];

struct Row {
    what: String,
    path: &'static str,
    size: String,
    device: String,
    wall: String,
    unit: &'static str,
    timing: String,
    note: String,
}

impl Row {
    fn new(what: &str, path: Path, unit: &'static str) -> Row {
        Row {
            what: what.into(),
            path: path.label(),
            size: String::new(),
            device: "—".into(),
            wall: "—".into(),
            unit,
            timing: String::new(),
            note: String::new(),
        }
    }
}

/// A timed measurement: seconds per launch from profiling and from the wall
/// clock, and how the profile was measured.
struct Times {
    device: f64,
    wall: f64,
    method: String,
}

/// Median of `v`; NaN when empty.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

fn sync(client: &Client) {
    cubecl::future::block_on(client.sync()).expect("sync");
}

/// Times `launch` (which queues one kernel launch or library call): one
/// warm-up window, then `batches` profile windows of `reps` launches each;
/// per-launch time = window / reps, median over the windows. The wall time is
/// measured around each window's launches plus a sync, separately.
fn time(client: &Client, opts: &Options, launch: &(dyn Fn() + Sync)) -> Result<Times, String> {
    let reps = opts.reps;
    let mut device = Vec::new();
    let mut wall = Vec::new();
    let mut method = String::from("?");
    for batch in 0..=opts.batches {
        sync(client);
        let (_, duration) = client
            .profile(
                || {
                    for _ in 0..reps {
                        launch();
                    }
                },
                "cubecl-peer",
            )
            .map_err(|e| format!("profile: {e}"))?;
        method = format!("{:?}", duration.timing_method());
        let ticks = cubecl::future::block_on(duration.resolve()).ok_or("profile window carried no measurement")?;
        sync(client);
        let start = Instant::now();
        for _ in 0..reps {
            launch();
        }
        sync(client);
        let elapsed = start.elapsed().as_secs_f64();
        if batch > 0 {
            device.push(ticks.duration().as_secs_f64() / f64::from(reps));
            wall.push(elapsed / f64::from(reps));
        }
    }
    Ok(Times { device: median(&mut device), wall: median(&mut wall), method })
}

/// Two decimals, or three significant digits for rates below 10.
fn fmt_rate(v: f64) -> String {
    if v >= 10.0 || v == 0.0 || !v.is_finite() {
        format!("{v:.2}")
    } else {
        let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}

/// Fills a row's rate columns: `work` per launch in `unit_scale` (1e9 for
/// GB/s from bytes, 1e12 for TFLOP/s from flops).
fn fill_rates(row: &mut Row, times: &Times, work: f64, unit_scale: f64) {
    row.device = format!("{} ({:.3} ms)", fmt_rate(work / times.device / unit_scale), times.device * 1e3);
    row.wall = fmt_rate(work / times.wall / unit_scale);
    row.timing = times.method.clone();
}

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------

/// The client of `path`, or why there is none. The SPIR-V path is the
/// `AutoCompiler` runtime, which names itself `wgpu<spirv>` only when it
/// really picked the SPIR-V compiler.
fn client(path: Path) -> Result<Client, String> {
    let device = WgpuDevice::default();
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match path {
        Path::Wgsl => WgpuRuntime::<WgslCompiler>::client(&device),
        Path::Spirv => WgpuRuntime::<AutoCompiler>::client(&device),
    }))
    .map_err(|p| format!("no {} client: {}", path.label(), panic_text(&*p)))?;
    if path == Path::Spirv && made.name() != "wgpu<spirv>" {
        return Err(format!("the runtime offers no SPIR-V path here (it chose {})", made.name()));
    }
    Ok(made)
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    let s = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into());
    one_line(&s)
}

fn one_line(s: &str) -> String {
    let s = s.replace(['\n', '|'], " ");
    if s.chars().count() > 300 { format!("{}…", s.chars().take(300).collect::<String>()) } else { s }
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

fn upload_f32(client: &Client, data: &[f32]) -> cubecl::server::Handle {
    client.create_from_slice(bytemuck::cast_slice(data))
}

/// A buffer of `n` f32 NaNs: outputs start as NaN so that unwritten values
/// fail the checks.
fn nan_f32(client: &Client, n: usize) -> cubecl::server::Handle {
    upload_f32(client, &vec![f32::NAN; n])
}

fn read_f32(client: &Client, h: &cubecl::server::Handle) -> Result<Vec<f32>, String> {
    let bytes = client.read_one(h.clone()).map_err(|e| format!("read: {e:?}"))?;
    Ok(bytemuck::pod_collect_to_vec(&bytes[..]))
}

/// Vector add over n f32 (64 Mi at full size; 1 000 003 / 1 000 004 for the
/// check), `width` elements per unit, 256 units per cube. Bytes counted: two
/// reads and one write.
fn bench_vadd(client: &Client, opts: &Options, path: Path, width: usize) -> Row {
    let what = if width == 1 { "vector add f32, one f32 per unit" } else { "vector add, Vector<f32, 4> per unit" };
    let mut row = Row::new(what, path, "GB/s");
    // `timed = false`: verify only.
    let run = |n: usize, check_all: bool, timed: bool| -> Result<Option<Times>, String> {
        let a: Vec<f32> = (0..n).map(|i| val(11, i)).collect();
        let b: Vec<f32> = (0..n).map(|i| val(12, i)).collect();
        let (ha, hb) = (upload_f32(client, &a), upload_f32(client, &b));
        drop((a, b));
        // NaN-filled, so that a kernel that writes nothing (or memory reused
        // from an earlier row) cannot pass the check.
        let hc = nan_f32(client, n);
        let units = n / width;
        let count = calculate_cube_count_elemwise(client, units, CubeDim::new_1d(256));
        let launch = || unsafe {
            vector_add::launch_unchecked::<f32>(
                client,
                count.clone(),
                CubeDim::new_1d(256),
                width,
                BufferArg::from_raw_parts(ha.clone(), units),
                BufferArg::from_raw_parts(hb.clone(), units),
                BufferArg::from_raw_parts(hc.clone(), units),
            )
        };
        launch();
        let got = read_f32(client, &hc)?;
        let idx = sample_indices(n, if check_all { n } else { 1 << 16 });
        compare("c = a + b", &got, &idx, |i| f64::from(val(11, i)) + f64::from(val(12, i)), |_, _| 1e-6)?;
        if timed { time(client, opts, &launch).map(Some) } else { Ok(None) }
    };
    let check_n = if width == 1 { 1_000_003 } else { 1_000_004 };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // A size whose launch needs more than 65535 cubes in one dimension
        // (CubeCL then spreads the count over two), checked on a sample.
        if width == 1 {
            run(65536 * 256 + 3, false, false)?;
        }
        let (n, label) = if opts.small { (check_n, check_n.to_string()) } else { (64 << 20, "64 Mi".to_string()) };
        if !opts.small {
            run(check_n, true, false)?;
        }
        row.size = label;
        let times = run(n, opts.small, true)?.expect("timed");
        Ok::<_, String>((times, n))
    }))
    .unwrap_or_else(|p| Err(panic_text(&*p)));
    match result {
        Ok((t, n)) => {
            fill_rates(&mut row, &t, 12.0 * n as f64, 1e9);
            row.note = "verified".into();
        }
        Err(e) => row.note = format!("FAILED: {}", one_line(&e)),
    }
    row
}

/// The tensor handle of a contiguous row-major `[1, rows, cols]` matrix.
fn matrix(handle: cubecl::server::Handle, rows: usize, cols: usize, dtype: ElemType) -> TensorHandle {
    TensorHandle::new_contiguous(vec![1, rows, cols], handle, dtype)
}

/// Which matmul a GEMM row runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gemm {
    /// cubek-matmul, `Strategy::Auto`, f32 in and out.
    LibraryF32,
    /// cubek-matmul, `Strategy::Auto`, f16 in and out, f32 accumulation.
    LibraryF16,
    /// `tiled_matmul` above, f32.
    Tiled,
}

/// C = A · B, inputs from `val` (f16-rounded for `LibraryF16`); work 2·m·n·k
/// flops. Check: sampled entries recomputed in f64 from the same (rounded)
/// inputs; tolerance 1e-5 of Σ|a·b| for f32, 4e-3 of it plus f16 rounding of
/// the output for f16 (an indexing mistake is off by the order of the value).
fn bench_gemm(client: &Client, opts: &Options, path: Path, gemm: Gemm) -> Row {
    let what = match gemm {
        Gemm::LibraryF32 => "SGEMM f32, cubek-matmul Strategy::Auto",
        Gemm::LibraryF16 => "f16 GEMM (f32 accumulate), cubek-matmul Strategy::Auto",
        Gemm::Tiled => "16×16 shared-memory tiled #[cube] matmul, one output per unit",
    };
    let mut row = Row::new(what, path, "TFLOP/s");
    let half_inputs = gemm == Gemm::LibraryF16;
    let round = move |v: f32| if half_inputs { f16::from_f32(v).to_f32() } else { v };
    let run = |m: usize, n: usize, k: usize, check_all: bool| -> Result<Times, String> {
        let a: Vec<f32> = (0..m * k).map(|i| round(val(21, i))).collect();
        let b: Vec<f32> = (0..k * n).map(|i| round(val(22, i))).collect();
        let (ha, hb, hc) = if half_inputs {
            let ah: Vec<f16> = a.iter().map(|&v| f16::from_f32(v)).collect();
            let bh: Vec<f16> = b.iter().map(|&v| f16::from_f32(v)).collect();
            (
                client.create_from_slice(bytemuck::cast_slice(&ah)),
                client.create_from_slice(bytemuck::cast_slice(&bh)),
                client.create_from_slice(bytemuck::cast_slice(&vec![f16::NAN; m * n])),
            )
        } else {
            (upload_f32(client, &a), upload_f32(client, &b), nan_f32(client, m * n))
        };
        drop((a, b));
        let launch: Box<dyn Fn() + Sync> = match gemm {
            Gemm::LibraryF32 | Gemm::LibraryF16 => {
                let dtype = if half_inputs { f16::elem_type_native() } else { f32::elem_type_native() };
                let elems = MatmulElems::from_globals(&MatmulGlobalElems { lhs: dtype, rhs: dtype, out: dtype });
                let lhs = matrix(ha.clone(), m, k, dtype);
                let rhs = matrix(hb.clone(), k, n, dtype);
                let out = matrix(hc.clone(), m, n, dtype);
                Box::new(move || {
                    launch_ref(
                        &Strategy::Auto,
                        client,
                        InputBinding::Normal(lhs.clone().binding(), dtype),
                        InputBinding::Normal(rhs.clone().binding(), dtype),
                        out.clone().binding(),
                        &mut elems.clone(),
                    )
                    .unwrap_or_else(|e| panic!("launch_ref: {e:?}"))
                })
            }
            Gemm::Tiled => {
                let (ha, hb, hc) = (ha.clone(), hb.clone(), hc.clone());
                Box::new(move || unsafe {
                    tiled_matmul::launch_unchecked::<f32>(
                        client,
                        CubeCount::Static(n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32, 1),
                        CubeDim::new_2d(TILE as u32, TILE as u32),
                        BufferArg::from_raw_parts(ha.clone(), m * k),
                        BufferArg::from_raw_parts(hb.clone(), k * n),
                        BufferArg::from_raw_parts(hc.clone(), m * n),
                        m,
                        n,
                        k,
                    )
                })
            }
        };
        launch();
        let got: Vec<f32> = if half_inputs {
            let bytes = client.read_one(hc.clone()).map_err(|e| format!("read: {e:?}"))?;
            let h: Vec<f16> = bytemuck::pod_collect_to_vec(&bytes[..]);
            h.into_iter().map(f16::to_f32).collect()
        } else {
            read_f32(client, &hc)?
        };
        let idx = sample_indices(m * n, if check_all { m * n } else { 512 });
        let entry = |i: usize| matmul_entry(|q| round(val(21, q)), |q| round(val(22, q)), n, k, i / n, i % n);
        let tol = |i: usize, w: f64| {
            if half_inputs { 4e-3 * entry(i).1 + w.abs() / 1024.0 + 1e-3 } else { 1e-5 * entry(i).1 + 1e-6 }
        };
        compare("A·B", &got, &idx, |i| entry(i).0, tol)?;
        time(client, opts, &*launch)
    };
    // Full sizes: 4096³ for f32, 8192³ for f16; check sizes with ragged edges.
    let (full, check) = match gemm {
        Gemm::LibraryF16 => ((8192, 8192, 8192), (256, 192, 320)),
        Gemm::LibraryF32 => ((4096, 4096, 4096), (256, 192, 320)),
        Gemm::Tiled => ((4096, 4096, 4096), (100, 77, 123)),
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (m, n, k) = if opts.small { check } else { full };
        if !opts.small {
            run(check.0, check.1, check.2, true)?;
        }
        row.size = if m == n && n == k { format!("{m}³") } else { format!("{m}×{n}×{k}") };
        Ok::<_, String>((run(m, n, k, opts.small)?, 2.0 * (m * n * k) as f64))
    }))
    .unwrap_or_else(|p| Err(panic_text(&*p)));
    match result {
        Ok((t, flops)) => {
            fill_rates(&mut row, &t, flops, 1e12);
            row.note = "verified".into();
        }
        Err(e) => row.note = format!("FAILED: {}", one_line(&e)),
    }
    row
}

/// Launch + sync of a one-unit kernel, wall clock, median of 201 after 20
/// warm-up ones; and launch + read of the 4 bytes it wrote.
fn bench_launch(client: &Client, opts: &Options, path: Path) -> Vec<Row> {
    let trips = if opts.small { 101 } else { 201 };
    let mut sync_row = Row::new("launch + sync of a 1-unit kernel (wall, median)", path, "µs");
    let mut read_row = Row::new("launch + read 4 bytes of a 1-unit kernel (wall, median)", path, "µs");
    let result = (|| -> Result<(f64, f64), String> {
        let out = client.empty(4);
        let launch = |v: u32| unsafe {
            tiny::launch_unchecked(
                client,
                CubeCount::Static(1, 1, 1),
                CubeDim::new_1d(1),
                BufferArg::from_raw_parts(out.clone(), 1),
                v,
            )
        };
        let mut samples = Vec::new();
        for trip in 0..20 + trips {
            let start = Instant::now();
            launch(trip);
            sync(client);
            if trip >= 20 {
                samples.push(start.elapsed().as_secs_f64());
            }
        }
        let with_sync = median(&mut samples);
        samples.clear();
        for trip in 0..20 + trips {
            let start = Instant::now();
            launch(trip);
            let bytes = client.read_one(out.clone()).map_err(|e| format!("read: {e:?}"))?;
            let elapsed = start.elapsed().as_secs_f64();
            let got: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes[..4]);
            if got[0] != trip + 1 {
                return Err(format!("read back {}, expected {}", got[0], trip + 1));
            }
            if trip >= 20 {
                samples.push(elapsed);
            }
        }
        Ok((with_sync, median(&mut samples)))
    })();
    match result {
        Ok((s, r)) => {
            sync_row.wall = format!("{:.1}", s * 1e6);
            read_row.wall = format!("{:.1}", r * 1e6);
            sync_row.note = format!("verified; median of {trips}");
            read_row.note = sync_row.note.clone();
        }
        Err(e) => {
            sync_row.note = format!("FAILED: {}", one_line(&e));
            read_row.note = sync_row.note.clone();
        }
    }
    sync_row.timing = "wall".into();
    read_row.timing = "wall".into();
    vec![sync_row, read_row]
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let wanted = |key: &str| opts.only.as_ref().is_none_or(|o| o.iter().any(|k| k == key));

    println!("# cubecl-peer: CubeCL 0.11 + cubek-matmul 0.3 on the wgpu runtime\n");
    println!(
        "Device time: CubeCL's profiling, {} launches per window, median of {} windows after one warm-up; \
         wall: the same launches plus a sync, wall clock. Sizes: {}.\n",
        opts.reps,
        opts.batches,
        if opts.small { "small (--small)" } else { "full" }
    );

    let mut clients: Vec<(Path, Result<Client, String>)> = Vec::new();
    for path in [Path::Wgsl, Path::Spirv] {
        if opts.paths.contains(&path) {
            let c = client(path);
            match &c {
                Ok(c) => {
                    let p = c.properties();
                    // The client's name follows the device, not the compiler
                    // type: a `WgslCompiler` runtime on a SPIR-V-capable Vulkan
                    // device also calls itself `wgpu<spirv>`. The compiler is
                    // the one named here.
                    let compiler = match path {
                        Path::Wgsl => "WgpuRuntime<WgslCompiler>",
                        Path::Spirv => "WgpuRuntime<AutoCompiler>, SPIR-V compiler chosen",
                    };
                    println!(
                        "{} path: {compiler}, device \"{}\", profiling timing method {:?}.",
                        path.label(),
                        p.identity.name,
                        p.timing_method
                    );
                }
                Err(e) => println!("{} path: {e}", path.label()),
            }
            clients.push((path, c));
        }
    }
    println!();
    println!("| benchmark | path | size | device-timed | wall-clock | unit | timing | notes |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let print = |r: &Row| {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.what, r.path, r.size, r.device, r.wall, r.unit, r.timing, r.note
        )
    };
    let guarded = |what: &str, path: Path, f: &dyn Fn() -> Vec<Row>| -> Vec<Row> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
            let mut r = Row::new(what, path, "");
            r.note = format!("FAILED: {}", panic_text(&*p));
            vec![r]
        })
    };

    for (path, c) in &clients {
        let path = *path;
        let c = match c {
            Ok(c) => c,
            Err(e) => {
                let mut r = Row::new("(all rows)", path, "");
                r.note = format!("skipped: {e}");
                print(&r);
                continue;
            }
        };
        {
            if wanted("vadd") {
                guarded("vector add", path, &|| vec![bench_vadd(c, &opts, path, 1)]).iter().for_each(print);
            }
            if wanted("vadd4") {
                guarded("vector add vec4", path, &|| vec![bench_vadd(c, &opts, path, 4)]).iter().for_each(print);
            }
            if wanted("sgemm") {
                guarded("SGEMM", path, &|| vec![bench_gemm(c, &opts, path, Gemm::LibraryF32)]).iter().for_each(print);
            }
            if wanted("tiled") {
                guarded("tiled matmul", path, &|| vec![bench_gemm(c, &opts, path, Gemm::Tiled)]).iter().for_each(print);
            }
        }
        if wanted("hgemm") {
            guarded("f16 GEMM", path, &|| vec![bench_gemm(c, &opts, path, Gemm::LibraryF16)]).iter().for_each(print);
        }
        if wanted("launch") {
            guarded("launch", path, &|| bench_launch(c, &opts, path)).iter().for_each(print);
        }
    }
    // cubek 0.3's crates (matmul, reduce, attention, convolution, pool,
    // interpolate, fft, random, quant, ...) offer no row softmax and no layer
    // norm as operations of their own (softmax exists only inside the fused
    // attention kernels), so these rows are reported as not offered.
    for (key, what) in [("softmax", "row softmax 4096×4096 f32"), ("layernorm", "layer norm 4096×4096 f32")] {
        if wanted(key) {
            let mut r = Row::new(what, Path::Wgsl, "GB/s");
            r.path = "—";
            r.note = "skipped: cubek 0.3 offers no such kernel".into();
            print(&r);
        }
    }
}

fn parse_args() -> Result<Options, String> {
    let usage = format!(
        "usage: cubecl-peer [--small] [--only KEY,...] [--paths wgsl,spirv] [--reps N] [--batches N] [--list]\n\
         keys: {}\n\
         --small    time at the (small) verification sizes, e.g. on lavapipe\n\
         --only     run only these rows (comma-separated keys)\n\
         --paths    compilation paths to run the rows on (default wgsl,spirv); run one path\n\
         \x20          per process where a driver may crash compiling the other's shaders\n\
         --reps     launches per profile window (default 50)\n\
         --batches  profile windows, the median is reported (default 7)",
        KEYS.join(", ")
    );
    let mut o = Options { small: false, only: None, paths: vec![Path::Wgsl, Path::Spirv], reps: 50, batches: 7 };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value\n{usage}"));
        match a.as_str() {
            "--small" => o.small = true,
            "--only" => {
                let list: Vec<String> =
                    value("--only")?.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
                if let Some(bad) = list.iter().find(|k| !KEYS.contains(&k.as_str())) {
                    return Err(format!("unknown key {bad}\n{usage}"));
                }
                o.only = Some(list);
            }
            "--paths" => {
                o.paths = value("--paths")?
                    .split(',')
                    .map(|p| match p.trim() {
                        "wgsl" => Ok(Path::Wgsl),
                        "spirv" => Ok(Path::Spirv),
                        other => Err(format!("unknown path {other}\n{usage}")),
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--reps" => {
                o.reps = value("--reps")?.parse().map_err(|_| format!("--reps: a positive integer\n{usage}"))?
            }
            "--batches" => {
                o.batches =
                    value("--batches")?.parse().map_err(|_| format!("--batches: a positive integer\n{usage}"))?
            }
            "--list" => {
                println!("{}", KEYS.join("\n"));
                std::process::exit(0);
            }
            "-h" | "--help" => {
                println!("{usage}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}\n{usage}")),
        }
    }
    if o.reps == 0 || o.batches == 0 {
        return Err(format!("--reps and --batches must be positive\n{usage}"));
    }
    Ok(o)
}
