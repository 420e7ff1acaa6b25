//! When does the GPU pay off? Two kernels, timed on the CPU executor and on
//! the GPU across problem sizes:
//!
//! * SAXPY, `out = alpha * x + y`: two flops per 12 bytes moved, limited by
//!   memory bandwidth;
//! * a naive matrix multiply, `C = A * B` for n x n matrices: 2n flops per
//!   output element, limited by arithmetic (the heart of AI workloads).
//!
//! ```text
//! cargo run --release --example gpu_vs_cpu
//! cargo run --release --example gpu_vs_cpu -- --plot gpu_vs_cpu.png
//! cargo run --release --example gpu_vs_cpu -- --max-log2 20 --max-matmul 256
//! cargo run --release --example gpu_vs_cpu -- --wgsl
//! ```
//!
//! Four times per size, each the median of several runs, with the inputs
//! already on the device unless said otherwise:
//!
//! * **CPU executor**: wall clock of `launch` on `Device::cpu()` (the CPU
//!   executor runs the kernel before `launch` returns), from `Device::time`.
//! * **GPU, kernel only**: what the GPU itself spends, from the timestamp
//!   queries `Device::time` has the GPU write at the start and end of each
//!   launch (`-` on a GPU without timestamp queries).
//! * **GPU, launch + synchronize**: wall clock of `launch` followed by
//!   `device.synchronize()`: the kernel plus the cost of submitting work
//!   and waiting for it, which a program pays for each launch it waits on.
//! * **GPU, with transfers**: wall clock of uploading the inputs, launching
//!   and reading the output back: what a one-off computation costs when the
//!   data starts and ends in the CPU's memory.
//!
//! `--plot FILE.png` also draws the curves, log-log, with plotters.
//! Without a GPU adapter it times the CPU executor only.

mod common;

use onekernel::prelude::*;
use onekernel::timing::Clock;

// ANCHOR: kernels
/// `out[i] = alpha * x[i] + y[i]`: two reads, one write and two flops per
/// element, so memory bandwidth, not arithmetic, limits it.
#[kernel(workgroup_size = 256)]
fn saxpy(x: &[f32], y: &[f32], out: &mut [f32], alpha: f32) {
    let i = global_id().x;
    if i < out.len() {
        out[i] = alpha * x[i] + y[i];
    }
}

/// `c = a * b` for row-major `n` x `n` matrices, one thread per element of
/// `c`: 2n flops for 2n reads (mostly from cache), so arithmetic limits it.
#[kernel(workgroup_size = (16, 16))]
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], n: u32) {
    let n = n as usize;
    let col = global_id().x;
    let row = global_id().y;
    if row < n && col < n {
        let mut acc = 0.0f32;
        for k in 0..n {
            acc += a[row * n + k] * b[k * n + col];
        }
        c[row * n + col] = acc;
    }
}
// ANCHOR_END: kernels

const ALPHA: f32 = 2.5;

/// The two workloads.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Work {
    Saxpy,
    Matmul,
}

/// Times (seconds) measured at one size; `None` where there is no GPU (or,
/// for `gpu_kernel`, no timestamp queries).
/// `n` is the vector length (SAXPY) or the matrix side (matmul).
#[derive(Clone, Copy, Debug)]
struct Row {
    n: usize,
    cpu: f64,
    gpu_kernel: Option<f64>,
    gpu_launch: Option<f64>,
    gpu_transfers: Option<f64>,
}

/// The inputs for size `n`: small integers, so that every result is exact
/// in f32 whatever the order of operations or FMA fusion.
fn inputs(work: Work, n: usize) -> (Vec<f32>, Vec<f32>) {
    let len = if work == Work::Saxpy { n } else { n * n };
    let x = (0..len).map(|i| (i % 7) as f32 - 3.0).collect();
    let y = (0..len).map(|i| (i % 5) as f32 - 2.0).collect();
    (x, y)
}

/// Plain Rust.
fn reference(work: Work, n: usize, x: &[f32], y: &[f32]) -> Vec<f32> {
    match work {
        Work::Saxpy => x.iter().zip(y).map(|(x, y)| ALPHA * x + y).collect(),
        Work::Matmul => {
            let mut c = vec![0.0f32; n * n];
            for row in 0..n {
                for k in 0..n {
                    let a = x[row * n + k];
                    for col in 0..n {
                        c[row * n + col] += a * y[k * n + col];
                    }
                }
            }
            c
        }
    }
}

/// Runs per measurement: more for small sizes, where one run is short.
fn reps_for(work: Work, n: usize) -> usize {
    let cost = if work == Work::Saxpy { n } else { n * n * n / 8 };
    ((1usize << 24) / cost.max(1)).clamp(3, 50)
}

// ANCHOR: launch
/// One launch of `work` on `device`, inputs `x`, `y`, output `out`.
fn launch(work: Work, device: &Device, n: usize, x: &Buffer<f32>, y: &Buffer<f32>, out: &mut Buffer<f32>) {
    match work {
        Work::Saxpy => saxpy::launch(device, n, x, y, out, ALPHA).unwrap(),
        // One thread per element of the n x n output: a 2-D grid.
        Work::Matmul => matmul::launch(device, Grid::threads([n, n]), x, y, out, n as u32).unwrap(),
    }
}

/// CPU executor: `launch` runs the kernel on all cores and returns when done;
/// `Device::time` measures each launch on the wall clock.
fn time_cpu(work: Work, n: usize, reps: usize) -> (f64, Vec<f32>) {
    let device = Device::cpu();
    let (x, y) = inputs(work, n);
    let xb = Buffer::from_slice(&device, &x).unwrap();
    let yb = Buffer::from_slice(&device, &y).unwrap();
    let mut out = Buffer::<f32>::zeroed(&device, x.len()).unwrap();
    launch(work, &device, n, &xb, &yb, &mut out); // warm-up
    let ((), timing) = device.time(|| (0..reps).for_each(|_| launch(work, &device, n, &xb, &yb, &mut out))).unwrap();
    (timing.median().unwrap().as_secs_f64(), out.read().unwrap())
}

/// GPU: (kernel only, launch + synchronize, with transfers) in seconds, and
/// the result.
fn time_gpu(work: Work, device: &Device, n: usize, reps: usize) -> ((Option<f64>, f64, f64), Vec<f32>) {
    let (x, y) = inputs(work, n);
    let xb = Buffer::from_slice(device, &x).unwrap();
    let yb = Buffer::from_slice(device, &y).unwrap();
    let mut out = Buffer::<f32>::zeroed(device, x.len()).unwrap();

    // Launch + synchronize: `launch` only queues the work; waiting for it
    // is part of the price.
    let launch_sync = common::wall(reps, || {
        launch(work, device, n, &xb, &yb, &mut out);
        device.synchronize().unwrap();
    });

    // With transfers: the data starts and ends in the CPU's memory.
    let transfers = common::wall(reps.min(10), || {
        let xb = Buffer::from_slice(device, &x).unwrap();
        let yb = Buffer::from_slice(device, &y).unwrap();
        let mut out = Buffer::<f32>::zeroed(device, x.len()).unwrap();
        launch(work, device, n, &xb, &yb, &mut out);
        out.read().unwrap();
    });

    let kernel = kernel_only(work, device, n, &xb, &yb, &mut out, reps);
    ((kernel, launch_sync, transfers), out.read().unwrap())
}

/// Kernel time from the GPU's timestamps: `Device::time` over `reps`
/// launches, the median launch; `None` if the GPU has no timestamp queries
/// (`Device::time` would then fall back to the wall clock, which measures
/// something else).
fn kernel_only(
    work: Work,
    device: &Device,
    n: usize,
    xb: &Buffer<f32>,
    yb: &Buffer<f32>,
    out: &mut Buffer<f32>,
    reps: usize,
) -> Option<f64> {
    launch(work, device, n, xb, yb, out); // warm-up
    let ((), timing) = device.time(|| (0..reps).for_each(|_| launch(work, device, n, xb, yb, out))).unwrap();
    (timing.clock == Clock::GpuTimestamps).then(|| timing.median().unwrap().as_secs_f64())
}
// ANCHOR_END: launch

/// Measures one size on the CPU executor and, if given, the GPU, checking
/// both results against plain Rust.
fn measure(work: Work, gpu: Option<&Device>, n: usize, reps: usize) -> Row {
    let (x, y) = inputs(work, n);
    let want = reference(work, n, &x, &y);
    let (cpu, got) = time_cpu(work, n, reps);
    common::check("CPU executor", &got, &want, 0.0);
    let mut row = Row { n, cpu, gpu_kernel: None, gpu_launch: None, gpu_transfers: None };
    if let Some(device) = gpu {
        let ((kernel, launch, transfers), got) = time_gpu(work, device, n, reps);
        common::check(&device.name(), &got, &want, 0.0);
        row.gpu_kernel = kernel;
        row.gpu_launch = Some(launch);
        row.gpu_transfers = Some(transfers);
    }
    row
}

fn us(t: Option<f64>) -> String {
    t.map_or("-".into(), |t| format!("{:.1}", t * 1e6))
}

fn size_label(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{} Mi", n >> 20),
        n if n >= 1 << 10 => format!("{} Ki", n >> 10),
        n => n.to_string(),
    }
}

fn arg_value(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    if common::wants_wgsl() {
        println!("{}\n{}", saxpy::WGSL, matmul::WGSL);
        return;
    }
    let max_log2: u32 = arg_value("--max-log2").and_then(|v| v.parse().ok()).unwrap_or(24);
    let max_matmul: usize = arg_value("--max-matmul").and_then(|v| v.parse().ok()).unwrap_or(512);
    let plot = arg_value("--plot");
    let gpu = match Device::gpu() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("no GPU ({e}): timing the CPU executor only");
            None
        }
    };
    println!("CPU: {}", Device::cpu().name());
    if let Some(g) = &gpu {
        println!("GPU: {}", g.name());
    }
    let saxpy_sizes: Vec<usize> = (8..=max_log2).step_by(2).map(|k| 1 << k).collect();
    let matmul_sizes: Vec<usize> = (3..=12).map(|k| 1 << k).filter(|&n| n <= max_matmul).collect();
    let saxpy_rows = table(Work::Saxpy, gpu.as_ref(), &saxpy_sizes);
    let matmul_rows = table(Work::Matmul, gpu.as_ref(), &matmul_sizes);
    if let Some(file) = plot {
        // The adapter's name, without the driver details after " — ".
        let gpu_name =
            gpu.as_ref().map_or("no GPU".to_string(), |g| g.name().split(" — ").next().unwrap_or("").to_string());
        match draw(&file, &gpu_name, &saxpy_rows, &matmul_rows) {
            Ok(labelled) => {
                println!("\nwrote {file}{}", if labelled { "" } else { " (no font found: drawn without labels)" })
            }
            Err(e) => {
                eprintln!("error: cannot draw {file}: {e}");
                std::process::exit(1);
            }
        }
    }
}

/// Measures and prints one workload as a Markdown table.
fn table(work: Work, gpu: Option<&Device>, sizes: &[usize]) -> Vec<Row> {
    match work {
        Work::Saxpy => println!("\nSAXPY, out = {ALPHA} * x + y, f32, n elements; times in µs (median)\n"),
        Work::Matmul => println!("\nmatmul, C = A * B, f32, n x n matrices; times in µs (median)\n"),
    }
    println!(
        "| n | CPU executor | GPU kernel only | GPU launch + sync | GPU with transfers | CPU / GPU launch + sync |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for &n in sizes {
        let row = measure(work, gpu, n, reps_for(work, n));
        let ratio = row.gpu_launch.map_or("-".into(), |g| format!("{:.2}", row.cpu / g));
        let label = if work == Work::Saxpy { size_label(n) } else { n.to_string() };
        println!(
            "| {label} | {} | {} | {} | {} | {ratio} |",
            us(Some(row.cpu)),
            us(row.gpu_kernel),
            us(row.gpu_launch),
            us(row.gpu_transfers)
        );
        rows.push(row);
    }
    rows
}

/// A font for the plot's text: `KERNEL_PLOT_FONT`, else DejaVu Sans (Debian's
/// `fonts-dejavu-core`), else a few common places.
fn register_font() -> bool {
    let candidates = [
        std::env::var("KERNEL_PLOT_FONT").ok(),
        Some("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".into()),
        Some("/usr/share/fonts/TTF/DejaVuSans.ttf".into()),
        Some("/usr/share/fonts/dejavu/DejaVuSans.ttf".into()),
        Some("/Library/Fonts/Arial.ttf".into()),
        Some("C:\\Windows\\Fonts\\arial.ttf".into()),
    ];
    for path in candidates.into_iter().flatten() {
        if let Ok(bytes) = std::fs::read(&path) {
            // plotters keeps registered fonts for the whole program.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
    }
    false
}

/// A plotted series: its legend, colour and value per row (if measured).
type Series = (&'static str, plotters::style::RGBColor, fn(&Row) -> Option<f64>);

/// Draws both workloads, log-log, side by side into a PNG; `Ok(false)` if
/// drawn without text (no font found).
fn draw(
    file: &str,
    gpu_name: &str,
    saxpy_rows: &[Row],
    matmul_rows: &[Row],
) -> Result<bool, Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let labelled = register_font();
    let root = BitMapBackend::new(file, (1400, 620)).into_drawing_area();
    root.fill(&WHITE)?;
    let root =
        if labelled { root.titled(&format!("CPU executor vs GPU ({gpu_name})"), ("sans-serif", 24))? } else { root };
    let panels = root.split_evenly((1, 2));
    for (panel, (rows, title, x_desc)) in panels.iter().zip([
        (saxpy_rows, "SAXPY (memory-bound)", "elements n"),
        (matmul_rows, "matmul n x n (compute-bound)", "matrix side n"),
    ]) {
        if rows.is_empty() {
            continue;
        }
        let (x0, x1) = (rows[0].n as f64, rows[rows.len() - 1].n as f64);
        let all = rows
            .iter()
            .flat_map(|r| [Some(r.cpu), r.gpu_kernel, r.gpu_launch, r.gpu_transfers])
            .flatten()
            .filter(|t| *t > 0.0)
            .map(|t| t * 1e6);
        let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
        let mut builder = ChartBuilder::on(panel);
        builder.margin(20);
        if labelled {
            builder.caption(title, ("sans-serif", 20)).x_label_area_size(45).y_label_area_size(75);
        }
        let mut chart =
            builder.build_cartesian_2d((x0 * 0.8..x1 * 1.25).log_scale(), (lo * 0.6..hi * 1.6).log_scale())?;
        let mut mesh = chart.configure_mesh();
        if labelled {
            mesh.x_desc(x_desc)
                .y_desc("time (µs)")
                .x_label_formatter(&|n| format!("{n:.0e}"))
                .y_label_formatter(&|t| if *t >= 1.0 { format!("{t:.0}") } else { format!("{t}") })
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 16));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw()?;

        let series: [Series; 4] = [
            ("CPU executor", RGBColor(200, 60, 30), |r| Some(r.cpu)),
            ("GPU, kernel only (timestamps)", RGBColor(20, 120, 40), |r| r.gpu_kernel),
            ("GPU, launch + synchronize", RGBColor(30, 80, 200), |r| r.gpu_launch),
            ("GPU, with upload and read-back", RGBColor(140, 60, 170), |r| r.gpu_transfers),
        ];
        for (name, color, get) in series {
            let points: Vec<(f64, f64)> =
                rows.iter().filter_map(|r| get(r).filter(|t| *t > 0.0).map(|t| (r.n as f64, t * 1e6))).collect();
            if points.is_empty() {
                continue;
            }
            let style = ShapeStyle::from(&color).stroke_width(3);
            let drawn = chart.draw_series(LineSeries::new(points.clone(), style))?;
            if labelled {
                drawn.label(name).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
            }
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
        }
        if labelled {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .label_font(("sans-serif", 14))
                .draw()?;
        }
    }
    root.present()?;
    Ok(labelled)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiny sizes, some not a multiple of the block size: the CPU executor
    /// and the GPU both give plain Rust's answer, and every time is measured.
    #[test]
    fn cpu_and_gpu_agree_and_are_timed() {
        let devices = common::devices(true);
        let gpu = devices.iter().find(|d| d.is_gpu());
        for (work, n) in [
            (Work::Saxpy, 1),
            (Work::Saxpy, 1000),
            (Work::Saxpy, 4096),
            (Work::Matmul, 1),
            (Work::Matmul, 17),
            (Work::Matmul, 32),
        ] {
            let row = measure(work, gpu, n, 2);
            assert!(row.cpu > 0.0, "{work:?} {n}");
            assert!(row.gpu_launch.unwrap() > 0.0 && row.gpu_transfers.unwrap() > 0.0, "{work:?} {n}");
            // lavapipe has timestamp queries.
            assert!(row.gpu_kernel.unwrap() >= 0.0, "{work:?} {n}");
        }
    }

    #[test]
    fn plot_is_written() {
        let rows: Vec<Row> = (8..=12)
            .step_by(2)
            .map(|k| Row {
                n: 1 << k,
                cpu: k as f64 * 1e-6,
                gpu_kernel: Some(1e-6),
                gpu_launch: Some(2e-5),
                gpu_transfers: Some(4e-5),
            })
            .collect();
        let file = std::env::temp_dir().join(format!("gpu_vs_cpu_test_{}.png", std::process::id()));
        draw(file.to_str().unwrap(), "test", &rows, &rows[..2]).unwrap();
        assert!(std::fs::metadata(&file).unwrap().len() > 1000);
        std::fs::remove_file(&file).ok();
    }
}
