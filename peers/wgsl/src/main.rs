//! `wgsl-peer`: hand-written WGSL kernels timed through raw wgpu 30, each
//! compiled twice — with wgpu's runtime bounds checks (the default) and
//! without them (`create_shader_module_trusted` with `ShaderRuntimeChecks`
//! all off) — and printed as a Markdown table.
//!
//! Every kernel is first verified against a CPU reference at a small size;
//! at full size its output is checked again on a sample before it is timed.
//! Kernel time: 50 dispatches in one compute pass between two timestamp
//! queries, divided by 50, median of 7 batches after one warm-up batch.
//!
//! ```text
//! wgsl-peer [--small] [--only KEY,KEY,...] [--reps N] [--batches N] [--list]
//! ```
//! `--small` times at the verification sizes (for lavapipe); without it the
//! full sizes (64 Mi-element vectors, 4096² matrices) are timed.

mod gpu;
mod reference;
mod shaders;

use gpu::{Checks, Gpu, Timing, grid_1d};
use reference::{compare, fill, layernorm_row, matmul_entry, sample_indices, softmax_row, val};
use std::time::Instant;

/// Command-line options.
struct Options {
    small: bool,
    only: Option<Vec<String>>,
    reps: u32,
    batches: usize,
}

/// What a benchmark reports per dispatch.
#[derive(Clone, Copy)]
enum Unit {
    /// `work` is bytes moved; reported in GB/s.
    GBs,
    /// `work` is floating-point operations; reported in TFLOP/s.
    TFlops,
}

impl Unit {
    fn label(self) -> &'static str {
        match self {
            Unit::GBs => "GB/s",
            Unit::TFlops => "TFLOP/s",
        }
    }
    fn rate(self, work: f64, seconds: f64) -> f64 {
        match self {
            Unit::GBs => work / seconds / 1e9,
            Unit::TFlops => work / seconds / 1e12,
        }
    }
}

/// The two sizes a benchmark runs at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Size {
    /// Small: every output value (or nearly) is checked against the CPU.
    Check,
    /// The size in the table (unless `--small`); checked on a sample.
    Full,
    /// An extra check of the vector add at a size whose grid needs a second
    /// dimension (more than 65535 workgroups), which the check size does not
    /// reach and lavapipe can still run.
    Grid2d,
}

/// One problem instance: its buffers in binding order, the launch grid, the
/// work per dispatch, and the check of its output.
struct Problem {
    label: String,
    buffers: Vec<wgpu::Buffer>,
    /// Index in `buffers` of the output the check reads.
    output: usize,
    groups: (u32, u32, u32),
    work: f64,
    check: Check,
}

/// Checks a problem's output (read back as f32) against the CPU.
type Check = Box<dyn Fn(&[f32]) -> Result<(), String>>;

/// A benchmark: a kernel and how to make its problems.
struct Bench {
    /// Name for `--only`.
    key: &'static str,
    what: &'static str,
    unit: Unit,
    source: fn() -> String,
    /// Device features the kernel needs (else the row says "skipped").
    needs: wgpu::Features,
    make: fn(&Gpu, Size) -> Problem,
    /// Also verify at `Size::Grid2d`.
    grid_check: bool,
}

/// A table row.
struct Row {
    what: String,
    size: String,
    checked: String,
    unchecked: String,
    unit: &'static str,
    note: String,
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let gpu = match Gpu::new() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("wgsl-peer: {e}");
            std::process::exit(1);
        }
    };
    let info = &gpu.info;
    println!("# wgsl-peer: hand-written WGSL on wgpu 30\n");
    println!(
        "Adapter: {} ({:?}, {:?}), driver {} {}; subgroup size {}..{}; max storage binding {} MiB.",
        info.name,
        info.backend,
        info.device_type,
        info.driver,
        info.driver_info,
        info.subgroup_min_size,
        info.subgroup_max_size,
        gpu.limits.max_storage_buffer_binding_size >> 20
    );
    println!(
        "Timing: {}; {} dispatches per compute pass, median of {} batches. Sizes: {}.\n",
        if gpu.has(wgpu::Features::TIMESTAMP_QUERY) {
            "timestamp queries around the pass (kernel time only)"
        } else {
            "no TIMESTAMP_QUERY: wall clock around submit + wait"
        },
        opts.reps,
        opts.batches,
        if opts.small { "small (--small)" } else { "full" }
    );
    println!("| benchmark | size | bounds checks on | bounds checks off | unit | notes |");
    println!("| --- | --- | --- | --- | --- | --- |");

    let wanted = |key: &str| opts.only.as_ref().is_none_or(|o| o.iter().any(|k| k == key));
    for bench in benches() {
        if !wanted(bench.key) {
            continue;
        }
        let row = guarded(bench.what, || run_bench(&gpu, &opts, &bench));
        print_row(&row);
    }
    if wanted("launch") {
        for row in guarded_rows("launch round trip", || launch_round_trip(&gpu, &opts)) {
            print_row(&row);
        }
    }
}

fn print_row(r: &Row) {
    println!("| {} | {} | {} | {} | {} | {} |", r.what, r.size, r.checked, r.unchecked, r.unit, r.note);
}

/// Runs `f`; a panic becomes a row that says so, and the next row still runs.
fn guarded(what: &str, f: impl FnOnce() -> Row) -> Row {
    guarded_rows(what, || vec![f()]).pop().expect("one row")
}

fn guarded_rows(what: &str, f: impl FnOnce() -> Vec<Row>) -> Vec<Row> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(rows) => rows,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            vec![Row {
                what: what.into(),
                size: String::new(),
                checked: "—".into(),
                unchecked: "—".into(),
                unit: "",
                note: format!("FAILED: {}", one_line(&msg)),
            }]
        }
    }
}

fn one_line(s: &str) -> String {
    let s = s.replace(['\n', '|'], " ");
    if s.chars().count() > 300 { format!("{}…", s.chars().take(300).collect::<String>()) } else { s }
}

/// Verify at the check size, then (full sizes) re-check on a sample and time,
/// for both shader variants.
fn run_bench(gpu: &Gpu, opts: &Options, bench: &Bench) -> Row {
    let mut row = Row {
        what: bench.what.into(),
        size: String::new(),
        checked: "—".into(),
        unchecked: "—".into(),
        unit: bench.unit.label(),
        note: String::new(),
    };
    if !gpu.device.features().contains(bench.needs) {
        row.note = format!("skipped: adapter lacks {:?}", bench.needs);
        return row;
    }
    let source = (bench.source)();
    let variants = [Checks::Checked, Checks::Unchecked];
    let kernels: Vec<_> = variants.iter().map(|&c| gpu.kernel(bench.key, &source, c)).collect();

    let mut notes = Vec::new();
    let mut ok = [true, true];
    // Verification at the small size, both variants.
    if bench.grid_check {
        let grid = (bench.make)(gpu, Size::Grid2d);
        for (v, kernel) in kernels.iter().enumerate() {
            let result = kernel.as_ref().map_err(Clone::clone).and_then(|k| run_and_check(gpu, k, &grid));
            if let Err(e) = result {
                ok[v] = false;
                notes.push(format!("{:?} {}: {}", variants[v], grid.label, one_line(&e)));
            }
        }
    }
    let small = (bench.make)(gpu, Size::Check);
    for (v, kernel) in kernels.iter().enumerate() {
        let result = kernel.as_ref().map_err(Clone::clone).and_then(|k| run_and_check(gpu, k, &small));
        if let Err(e) = result {
            ok[v] = false;
            notes.push(format!("{:?} {}: {}", variants[v], small.label, one_line(&e)));
        }
    }
    let problem = if opts.small {
        small
    } else {
        drop(small);
        (bench.make)(gpu, Size::Full)
    };
    row.size = problem.label.clone();
    let mut timing = Timing::Device;
    for (v, kernel) in kernels.iter().enumerate() {
        let Ok(kernel) = kernel else { continue };
        if !ok[v] {
            continue;
        }
        if !opts.small
            && let Err(e) = run_and_check(gpu, kernel, &problem)
        {
            notes.push(format!("{:?} {}: {}", variants[v], problem.label, one_line(&e)));
            continue;
        }
        let bind = gpu.bind(kernel, &problem.buffers.iter().collect::<Vec<_>>());
        match gpu.time(kernel, &bind, problem.groups, opts.reps, opts.batches) {
            Ok((seconds, t)) => {
                timing = t;
                let cell = format!("{} ({:.3} ms)", fmt_rate(bench.unit.rate(problem.work, seconds)), seconds * 1e3);
                match variants[v] {
                    Checks::Checked => row.checked = cell,
                    Checks::Unchecked => row.unchecked = cell,
                }
            }
            Err(e) => notes.push(format!("{:?} timing: {}", variants[v], one_line(&e))),
        }
    }
    if timing == Timing::Wall {
        notes.push("wall clock (no timestamps)".into());
    }
    if notes.is_empty() {
        row.note = "verified".into();
    } else {
        row.note = format!("FAILED: {}", notes.join("; "));
    }
    row
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

/// Clears the output, runs the kernel once and checks the output.
fn run_and_check(gpu: &Gpu, kernel: &gpu::Kernel, p: &Problem) -> Result<(), String> {
    let out = &p.buffers[p.output];
    gpu.capture(|| {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        encoder.clear_buffer(out, 0, None);
        gpu.queue.submit([encoder.finish()]);
    })?;
    let bind = gpu.bind(kernel, &p.buffers.iter().collect::<Vec<_>>());
    gpu.run_once(kernel, &bind, p.groups)?;
    let got: Vec<f32> = gpu.read(out)?;
    (p.check)(&got)
}

/// All benchmarks except the launch round trip, in table order.
fn benches() -> Vec<Bench> {
    let none = wgpu::Features::empty();
    vec![
        Bench {
            key: "vadd",
            what: "vector add f32, one f32 per thread",
            unit: Unit::GBs,
            source: shaders::vadd_f32,
            needs: none,
            make: |g, s| vadd_problem(g, s, false),
            grid_check: true,
        },
        Bench {
            key: "vadd4",
            what: "vector add, one vec4<f32> per thread",
            unit: Unit::GBs,
            source: shaders::vadd_vec4,
            needs: none,
            make: |g, s| vadd_problem(g, s, true),
            grid_check: false,
        },
        Bench {
            key: "sgemm",
            what: "SGEMM 128×128 tile, BK=8, 8×8/thread, vec4 loads",
            unit: Unit::TFlops,
            source: || shaders::sgemm_128(false),
            needs: none,
            make: |g, s| {
                if s == Size::Full {
                    matmul_problem(g, 4096, 4096, 4096, Tiling::Tile128)
                } else {
                    matmul_problem(g, 256, 256, 256, Tiling::Tile128)
                }
            },
            grid_check: false,
        },
        Bench {
            key: "sgemm-sp",
            what: "the same SGEMM reading p = (m, n, k) from a storage buffer instead of a uniform one",
            unit: Unit::TFlops,
            source: || shaders::sgemm_128(false).replace("var<uniform> p: P;", "var<storage, read> p: P;"),
            needs: none,
            make: |g, s| {
                if s == Size::Full {
                    matmul_problem(g, 4096, 4096, 4096, Tiling::Tile128)
                } else {
                    matmul_problem(g, 256, 256, 256, Tiling::Tile128)
                }
            },
            grid_check: false,
        },
        Bench {
            key: "sgemm-odd",
            what: "SGEMM 128×128 tile, guarded (scalar loads)",
            unit: Unit::TFlops,
            source: || shaders::sgemm_128(true),
            needs: none,
            make: |g, s| {
                if s == Size::Full {
                    matmul_problem(g, 1000, 777, 1234, Tiling::Tile128)
                } else {
                    matmul_problem(g, 200, 77, 123, Tiling::Tile128)
                }
            },
            grid_check: false,
        },
        Bench {
            key: "hgemm",
            what: "f16 GEMM (f32 acc.), tensor cores: 256×128 tile, 8 subgroups of 4×4 16×16 tiles, vec4<f16> staging",
            unit: Unit::TFlops,
            source: shaders::hgemm_coop,
            needs: wgpu::Features::SHADER_F16.union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
            make: |g, s| {
                if s == Size::Full { hgemm_problem(g, 8192, 8192, 8192) } else { hgemm_problem(g, 256, 128, 64) }
            },
            grid_check: false,
        },
        Bench {
            key: "naive",
            what: "naive matmul 16×16 threads, one output each",
            unit: Unit::TFlops,
            source: shaders::matmul_naive,
            needs: none,
            make: |g, s| {
                if s == Size::Full {
                    matmul_problem(g, 4096, 4096, 4096, Tiling::Naive)
                } else {
                    matmul_problem(g, 100, 77, 123, Tiling::Naive)
                }
            },
            grid_check: false,
        },
        Bench {
            key: "softmax",
            what: "row softmax f32, shared-memory reduction",
            unit: Unit::GBs,
            source: shaders::softmax_shared,
            needs: none,
            make: |g, s| row_problem(g, s, RowOp::Softmax),
            grid_check: false,
        },
        Bench {
            key: "softmax-sg",
            what: "row softmax f32, subgroup reduction",
            unit: Unit::GBs,
            source: shaders::softmax_subgroup,
            needs: wgpu::Features::SUBGROUP,
            make: |g, s| row_problem(g, s, RowOp::Softmax),
            grid_check: false,
        },
        Bench {
            key: "layernorm",
            what: "layer norm f32, shared-memory reduction",
            unit: Unit::GBs,
            source: shaders::layernorm_shared,
            needs: none,
            make: |g, s| row_problem(g, s, RowOp::LayerNorm),
            grid_check: false,
        },
        Bench {
            key: "layernorm-sg",
            what: "layer norm f32, subgroup reduction",
            unit: Unit::GBs,
            source: shaders::layernorm_subgroup,
            needs: wgpu::Features::SUBGROUP,
            make: |g, s| row_problem(g, s, RowOp::LayerNorm),
            grid_check: false,
        },
    ]
}

/// All keys `--only` accepts.
const KEYS: &[&str] = &[
    "vadd",
    "vadd4",
    "sgemm",
    "sgemm-sp",
    "sgemm-odd",
    "hgemm",
    "naive",
    "softmax",
    "softmax-sg",
    "layernorm",
    "layernorm-sg",
    "launch",
];

/// `c = a + b` over n f32 (n = 64 Mi at full size; 1 000 003 resp. 1 000 004
/// for the check, so that the last workgroup is partial). Bytes counted:
/// two reads and one write.
fn vadd_problem(gpu: &Gpu, size: Size, vec4: bool) -> Problem {
    let n = match (size, vec4) {
        (Size::Full, _) => 64 << 20,
        (Size::Check, false) => 1_000_003,
        (Size::Check, true) => 1_000_004,
        // 65537 workgroups of 256: a (32769, 2) grid.
        (Size::Grid2d, false) => 65536 * 256 + 3,
        (Size::Grid2d, true) => 4 * (65536 * 256 + 3),
    };
    let a = fill(11, n, |v| v);
    let b = fill(12, n, |v| v);
    let threads = if vec4 { n / 4 } else { n };
    let buffers =
        vec![gpu.storage(&a), gpu.storage(&b), gpu.storage_zeroed(4 * n as u64), gpu.params([threads as u32, 0, 0, 0])];
    let indices = sample_indices(n, if size == Size::Check { n } else { 1 << 16 });
    Problem {
        label: if n == 64 << 20 { "64 Mi".into() } else { n.to_string() },
        buffers,
        output: 2,
        groups: grid_1d((threads as u32).div_ceil(256), gpu.limits.max_compute_workgroups_per_dimension),
        work: 12.0 * n as f64,
        check: Box::new(move |got| {
            compare("c = a + b", got, &indices, |i| f64::from(val(11, i)) + f64::from(val(12, i)), |_, _| 1e-6)
        }),
    }
}

#[derive(Clone, Copy)]
enum Tiling {
    /// `sgemm_128`: grid of 128×128 tiles.
    Tile128,
    /// `matmul_naive`: grid of 16×16 tiles.
    Naive,
}

/// C = A · B, A m×k and B k×n row-major. Work: 2·m·n·k flops. The check
/// recomputes sampled entries of C in f64; the tolerance is 1e-5 of Σ|a·b|
/// (an indexing mistake is off by the order of the value itself).
fn matmul_problem(gpu: &Gpu, m: usize, n: usize, k: usize, tiling: Tiling) -> Problem {
    let a = fill(21, m * k, |v| v);
    let b = fill(22, k * n, |v| v);
    let buffers = vec![
        gpu.storage(&a),
        gpu.storage(&b),
        gpu.storage_zeroed(4 * (m * n) as u64),
        gpu.params([m as u32, n as u32, k as u32, 0]),
    ];
    let tile = match tiling {
        Tiling::Tile128 => 128,
        Tiling::Naive => 16,
    };
    let samples = if m * n <= 64 * 1024 { m * n } else { 512 };
    let indices = sample_indices(m * n, samples);
    Problem {
        label: if m == n && n == k { format!("{m}³") } else { format!("{m}×{n}×{k}") },
        buffers,
        output: 2,
        groups: ((n as u32).div_ceil(tile), (m as u32).div_ceil(tile), 1),
        work: 2.0 * (m * n * k) as f64,
        check: Box::new(move |got| {
            let entry = |idx: usize| matmul_entry(21, 22, n, k, idx / n, idx % n);
            compare("A·B", got, &indices, |i| entry(i).0, |i, _| 1e-5 * entry(i).1 + 1e-6)
        }),
    }
}

/// C = A · B in f16 with f32 accumulation (`hgemm_coop`): A m×k and B
/// k×n row-major f16 with values on a coarse grid in [-1, 1) (exact in
/// f16), C f32. The check recomputes sampled entries in f64 from the f16
/// inputs; the tolerance is 1e-5 of Σ|a·b|.
fn hgemm_problem(gpu: &Gpu, m: usize, n: usize, k: usize) -> Problem {
    let grid = |len: usize, seed: usize| -> Vec<half::f16> {
        (0..len).map(|i| half::f16::from_f32(((i * 7 + seed) % 61) as f32 / 32.0 - 0.95)).collect()
    };
    let (a, b) = (grid(m * k, 1), grid(k * n, 2));
    let buffers = vec![
        gpu.storage(&a),
        gpu.storage(&b),
        gpu.storage_zeroed(4 * (m * n) as u64),
        gpu.params([m as u32, n as u32, k as u32, 0]),
    ];
    let samples = if m * n <= 64 * 1024 { m * n } else { 512 };
    let indices = sample_indices(m * n, samples);
    let entry = move |idx: usize| {
        let (r, col) = (idx / n, idx % n);
        (0..k).fold((0.0, 0.0), |(s, abs), j| {
            let p = a[r * k + j].to_f64() * b[j * n + col].to_f64();
            (s + p, abs + p.abs())
        })
    };
    Problem {
        label: if m == n && n == k { format!("{m}³") } else { format!("{m}×{n}×{k}") },
        buffers,
        output: 2,
        groups: ((n / 128) as u32, (m / 256) as u32, 1),
        work: 2.0 * (m * n * k) as f64,
        check: Box::new(move |got| {
            compare("A·B (f16)", got, &indices, |i| entry(i).0, |i, _| 1e-5 * entry(i).1 + 1e-6)
        }),
    }
}

#[derive(Clone, Copy)]
enum RowOp {
    Softmax,
    LayerNorm,
}

/// A row-wise op over a rows × cols f32 matrix, one workgroup per row
/// (4096 × 4096 at full size, 37 × 1000 for the check). Bytes counted: one
/// read and one write of the matrix. Softmax inputs are in [-4, 4); layer
/// norm inputs in [-1.5, 2.5) with weight in [0.9, 1.1) and bias in
/// [-0.1, 0.1). The check recomputes whole rows in f64.
fn row_problem(gpu: &Gpu, size: Size, op: RowOp) -> Problem {
    let (rows, cols) = if size == Size::Full { (4096, 4096) } else { (37, 1000) };
    let scale_x = move |v: f32| match op {
        RowOp::Softmax => 4.0 * v,
        RowOp::LayerNorm => 2.0 * v + 0.5,
    };
    let x = fill(31, rows * cols, scale_x);
    let gamma = fill(32, cols, |v| 1.0 + 0.1 * v);
    let beta = fill(33, cols, |v| 0.1 * v);
    let mut buffers = vec![
        gpu.storage(&x),
        gpu.storage_zeroed(4 * (rows * cols) as u64),
        gpu.params([rows as u32, (cols / 4) as u32, 0, 0]),
    ];
    if let RowOp::LayerNorm = op {
        buffers.push(gpu.storage(&gamma));
        buffers.push(gpu.storage(&beta));
    }
    let check_rows: Vec<usize> =
        if size == Size::Full { vec![0, 1, rows / 3, rows / 2 + 1, rows - 1] } else { (0..rows).collect() };
    Problem {
        label: format!("{rows}×{cols}"),
        buffers,
        output: 1,
        groups: (rows as u32, 1, 1),
        work: 8.0 * (rows * cols) as f64,
        check: Box::new(move |got| {
            for &r in &check_rows {
                let xr: Vec<f32> = (0..cols).map(|c| scale_x(val(31, r * cols + c))).collect();
                let (want, what) = match op {
                    RowOp::Softmax => (softmax_row(&xr), "softmax"),
                    RowOp::LayerNorm => (layernorm_row(&xr, &gamma, &beta), "layer norm"),
                };
                let all: Vec<usize> = (0..cols).collect();
                let tol = |_: usize, w: f64| match op {
                    RowOp::Softmax => 1e-4 * w.abs() + 1e-7,
                    RowOp::LayerNorm => 1e-4 * w.abs() + 1e-4,
                };
                compare(&format!("{what} row {r}"), &got[r * cols..(r + 1) * cols], &all, |c| want[c], tol)?;
            }
            Ok(())
        }),
    }
}

/// Round trips of a one-thread kernel, wall clock: "launch + read-back"
/// (dispatch, copy 4 bytes to a mappable buffer, submit, map, wait, read)
/// and "launch + wait" (dispatch, submit, wait). Median over 201 round trips
/// after 20 warm-up ones; the value read back is checked every time.
fn launch_round_trip(gpu: &Gpu, opts: &Options) -> Vec<Row> {
    let source = shaders::tiny();
    let trips = if opts.small { 101 } else { 201 };
    let mut readback = Row {
        what: "launch + read-back 4 bytes (wall, median)".into(),
        size: "1 thread".into(),
        checked: "—".into(),
        unchecked: "—".into(),
        unit: "µs",
        note: String::new(),
    };
    let mut wait = Row {
        what: "launch + wait, no read-back (wall, median)".into(),
        size: "1 thread".into(),
        checked: "—".into(),
        unchecked: "—".into(),
        unit: "µs",
        note: String::new(),
    };
    let mut notes = Vec::new();
    for checks in [Checks::Checked, Checks::Unchecked] {
        let result = (|| -> Result<(f64, f64), String> {
            let kernel = gpu.kernel("tiny", &source, checks)?;
            let out = gpu.storage_zeroed(4);
            let params = gpu.params([41, 0, 0, 0]);
            let bind = gpu.bind(&kernel, &[&out, &params]);
            let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("staging"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let record = |copy: bool| {
                let mut encoder = gpu.device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, &bind, &[]);
                    pass.dispatch_workgroups(1, 1, 1);
                }
                if copy {
                    encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, 4);
                }
                encoder.finish()
            };
            // Launch + read-back.
            let mut samples = Vec::new();
            for trip in 0..20 + trips {
                let start = Instant::now();
                gpu.queue.submit([record(true)]);
                staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
                gpu.wait()?;
                let view = staging.slice(..).get_mapped_range().map_err(|e| e.to_string())?;
                let value: u32 = bytemuck::pod_read_unaligned(&view[..4]);
                drop(view);
                staging.unmap();
                let elapsed = start.elapsed().as_secs_f64();
                if value != 42 {
                    return Err(format!("read back {value}, expected 42"));
                }
                if trip >= 20 {
                    samples.push(elapsed);
                }
            }
            let with_readback = gpu::median(&mut samples);
            // Launch + wait.
            samples.clear();
            for trip in 0..20 + trips {
                let start = Instant::now();
                gpu.queue.submit([record(false)]);
                gpu.wait()?;
                if trip >= 20 {
                    samples.push(start.elapsed().as_secs_f64());
                }
            }
            Ok((with_readback, gpu::median(&mut samples)))
        })();
        match result {
            Ok((r, w)) => {
                let (rc, wc) = (format!("{:.1}", r * 1e6), format!("{:.1}", w * 1e6));
                match checks {
                    Checks::Checked => (readback.checked, wait.checked) = (rc, wc),
                    Checks::Unchecked => (readback.unchecked, wait.unchecked) = (rc, wc),
                }
            }
            Err(e) => notes.push(format!("{checks:?}: {}", one_line(&e))),
        }
    }
    let note =
        if notes.is_empty() { format!("verified; median of {trips}") } else { format!("FAILED: {}", notes.join("; ")) };
    readback.note = note.clone();
    wait.note = note;
    vec![readback, wait]
}

fn parse_args() -> Result<Options, String> {
    let usage = format!(
        "usage: wgsl-peer [--small] [--only KEY,...] [--reps N] [--batches N] [--list]\n\
         keys: {}\n\
         --small    time at the (small) verification sizes, e.g. on lavapipe\n\
         --only     run only these rows (comma-separated keys)\n\
         --reps     dispatches per timed compute pass (default 50)\n\
         --batches  timed batches, the median is reported (default 7)",
        KEYS.join(", ")
    );
    let mut o = Options { small: false, only: None, reps: 50, batches: 7 };
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
