//! The ops of `reduce`, `scan`, `histogram` and `transpose` timed on the
//! GPU (kernel time from timestamps, median of 5 batches after a warm-up),
//! and on the CPU executor against the rayon idiom.
//!
//!     cargo bench -p onekernel-ops --bench ops              # GPU and CPU tables
//!     cargo bench -p onekernel-ops --bench ops -- --gpu     # the GPU table only
//!     cargo bench -p onekernel-ops --bench ops -- --cpu     # the CPU table only
//!     cargo bench -p onekernel-ops --bench ops -- --small   # small sizes (lavapipe)
//!     cargo bench -p onekernel-ops --bench ops -- --gpu --variants  # and other segment counts of reduce and scan
//!     cargo bench -p onekernel-ops --bench ops -- --gpu --only scan --variants  # the scan rows, every plan
//!     cargo bench -p onekernel-ops --bench ops -- --gpu --only histogram --variants  # the histogram rows, every plan
//!
//! `peers/torch/ops_baseline.py` prints PyTorch's numbers for the same
//! rows (`sum`, `cumsum`, `bincount`, `transpose(..).contiguous()`, `copy_`).

use onekernel::ops::histogram;
use onekernel::ops::reduce::{self, ReduceOp, ReduceScratch};
use onekernel::ops::scan::{self, ScanScratch};
use onekernel::ops::transpose;
use onekernel::prelude::*;
use std::time::Instant;

/// The median over 5 batches of the GPU time of one call of `f` (the sum
/// of its launches' timestamps), after warm-up calls.
fn time_gpu(device: &Device, iters: usize, f: impl FnMut()) -> f64 {
    time_gpu_launches(device, iters, f).0
}

/// [`time_gpu`], and the median over the batches of each launch of a call
/// (by its place in the call: a scan's pass 1 and pass 2).
fn time_gpu_launches(device: &Device, iters: usize, mut f: impl FnMut()) -> (f64, Vec<f64>) {
    // Warm-up calls, waited for: pipelines made before the clock starts,
    // and the GPU kept busy for 200 ms first (after the host's work between
    // rows it may have lowered its clocks: rows 2-3x slow, 2026-12-04; 20
    // ms left the 2^26 scan rows 2-4x slow after the host's check of the
    // row before).
    let warm = Instant::now();
    let mut calls = 0;
    while calls < 3 || warm.elapsed().as_secs_f64() < 0.2 {
        let ((), _) = device.time(|| (0..4).for_each(|_| f())).unwrap();
        calls += 4;
    }
    let mut samples = Vec::new();
    let mut launches: Vec<Vec<f64>> = Vec::new();
    for _ in 0..5 {
        let ((), t) = device.time(|| (0..iters).for_each(|_| f())).unwrap();
        samples.push(t.total.as_secs_f64() / iters as f64);
        let per_call = t.per_launch.len() / iters;
        launches.resize(per_call, Vec::new());
        for (k, l) in launches.iter_mut().enumerate() {
            l.push(
                t.per_launch.iter().skip(k).step_by(per_call.max(1)).map(|d| d.as_secs_f64()).sum::<f64>()
                    / iters as f64,
            );
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(samples), launches.into_iter().map(median).collect())
}

/// The best of `runs` wall-clock runs of `f`, in seconds.
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn label(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

fn row(op: &str, shape: &str, dtype: &str, seconds: f64, bytes: f64, note: &str) {
    println!("| {op} | {shape} | {dtype} | {:.4} | {:.1} | {note} |", seconds * 1e3, bytes / seconds * 1e-9);
}

/// The scan rows: an inclusive sum of i32 (PyTorch's cumsum bar), read +
/// write; with `variants` every candidate plan, with its two passes.
fn scan_rows(device: &Device, shift: u32, variants: bool) {
    for n in [1_000_003usize, 1 << 24, 1 << 26].map(|n| n >> shift) {
        let x: Vec<i32> = (0..n).map(|i| (i % 5) as i32 - (i % 3 == 0) as i32 * 7).collect();
        let mut acc = 0i32;
        let want: Vec<i32> = x
            .iter()
            .map(|&v| {
                acc = acc.wrapping_add(v);
                acc
            })
            .collect();
        let b = Buffer::from_slice(device, &x).unwrap();
        let mut out = Buffer::<i32>::zeroed(device, n).unwrap();
        let mut s = ScanScratch::for_len(device, n).unwrap();
        let check = |out: &mut Buffer<i32>, what: &str| {
            let got = out.read().unwrap();
            let diff = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(diff.is_none(), "scan {what} of {n}: first difference at {diff:?}");
            out.write(&vec![0; n]).unwrap();
        };
        let passes = |l: &[f64]| match l {
            [a, b] => format!("pass 1 {:.4} + pass 2 {:.4}", a * 1e3, b * 1e3),
            [a, b, c] => format!("pass 1 {:.4} + pass 2 {:.4} + tail {:.4}", a * 1e3, b * 1e3, c * 1e3),
            _ => format!("{} launches", l.len()),
        };
        let (t, l) = time_gpu_launches(device, 10, || {
            scan::scan_into(device, &b, ReduceOp::Sum, true, &mut out, &mut s).unwrap()
        });
        check(&mut out, "default");
        row("scan inclusive sum", &label(n), "i32", t, (n * 8) as f64, &format!("default plan; {}", passes(&l)));
        if variants {
            // The candidates, and the single pass that keeps two tiles in
            // flight at other workgroup counts (how many a device holds at
            // once bounds what helps: 132 multiprocessors on the H200).
            let mut plans = scan::candidates::<i32>(device, ReduceOp::Sum, n, 0);
            if plans.iter().any(|p| p.ahead) {
                let ahead = [(4, 264), (4, 396), (4, 528), (4, 2048), (8, 264), (8, 528)];
                plans.extend(ahead.map(|(chunks, g)| scan::ScanPlan::single_pass_ahead(chunks, g)));
            }
            for plan in plans {
                let (t, l) = time_gpu_launches(device, 10, || {
                    scan::scan_with_plan(device, &b, ReduceOp::Sum, true, &mut out, &mut s, plan).unwrap()
                });
                check(&mut out, &plan.name());
                let note = format!("plan {} (variant): {}", plan.name(), passes(&l));
                row("scan inclusive sum", &label(n), "i32", t, (n * 8) as f64, &note);
            }
        }
    }
}

/// The histogram rows: 10M `u32` into 256 and 65,536 bins (tuned first);
/// with `variants` every candidate plan.
fn histogram_rows(device: &Device, shift: u32, variants: bool) {
    let n = 10_000_000 >> shift;
    for bins in [256usize, 65_536] {
        let v: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % bins as u32).collect();
        let b = Buffer::from_slice(device, &v).unwrap();
        let mut counts = Buffer::<u32>::zeroed(device, bins).unwrap();
        // Tuned here (a call inside `Device::time` runs the default plan).
        histogram::histogram_into(device, &b, &mut counts).unwrap();
        let t = time_gpu(device, 10, || histogram::histogram_into(device, &b, &mut counts).unwrap());
        assert_eq!(counts.read().unwrap().iter().map(|&c| c as usize).sum::<usize>(), n, "histogram");
        row("histogram", &format!("{n} into {bins}"), "u32", t, (n * 4) as f64, "time includes clearing the counts");
        if variants {
            for plan in histogram::candidates(device, n, bins) {
                let t = time_gpu(device, 10, || histogram::add_with_plan(device, &b, &mut counts, plan).unwrap());
                let note = format!("plan {} (variant; adds, no clearing)", plan.name());
                row("histogram", &format!("{n} into {bins}"), "u32", t, (n * 4) as f64, &note);
            }
        }
    }
}

fn gpu_table(device: &Device, small: bool, variants: bool, only: Option<&str>) {
    println!("\n## onekernel::ops on {}\n", device.name());
    println!("GPU kernel time (timestamps), median of 5 batches. GB/s: bytes read + written once.\n");
    println!("| op | shape | dtype | time (ms) | GB/s | note |");
    println!("|---|---|---|---|---|---|");
    let shift = if small { 6 } else { 0 };
    if !small && only != Some("scan") {
        // The GPU idles at a low clock and takes a moment to reach its full
        // one: about 2 s of sums before anything is tuned or timed.
        let n = 1 << 26;
        let b = Buffer::<f32>::zeroed(device, n).unwrap();
        let mut out = Buffer::<f32>::zeroed(device, 1).unwrap();
        let mut s = ReduceScratch::new();
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < 2.0 {
            let ((), _) = device
                .time(|| {
                    (0..50).for_each(|_| reduce::reduce_into(device, &b, ReduceOp::Sum, &mut out, &mut s).unwrap())
                })
                .unwrap();
        }
    }

    if only == Some("scan") {
        scan_rows(device, shift, variants);
        print_picks(device);
        return;
    }
    if only == Some("histogram") {
        histogram_rows(device, shift, variants);
        print_picks(device);
        return;
    }

    // reduce: sum of f32 (the bar), and min, f16, i32 at 2^24.
    for n in [1usize << 20, 1 << 24, 1 << 28].map(|n| n >> shift) {
        let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let b = Buffer::from_slice(device, &x).unwrap();
        let mut out = Buffer::<f32>::zeroed(device, 1).unwrap();
        let mut s = ReduceScratch::for_len(device, n).unwrap();
        let t = time_gpu(device, 20, || reduce::reduce_into(device, &b, ReduceOp::Sum, &mut out, &mut s).unwrap());
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        let got = out.read().unwrap()[0] as f64;
        assert!((got - want).abs() <= want * 1e-5, "sum {got} != {want}");
        row("reduce sum", &label(n), "f32", t, (n * 4) as f64, "");
        if variants {
            for target in [512usize, 1024, 4096] {
                let t = time_gpu(device, 20, || {
                    reduce::reduce_into_segments(device, &b, ReduceOp::Sum, &mut out, &mut s, Some(target)).unwrap()
                });
                let segs = reduce::plan_for(n, target).1;
                row("reduce sum", &label(n), "f32", t, (n * 4) as f64, &format!("{segs} segments (variant)"));
            }
            // Every plan the tuner chooses among, the single-pass ones too.
            for plan in reduce::candidates::<f32>(device, ReduceOp::Sum, n) {
                // Checked from a NaN: a plan that wrote nothing would fail.
                for _ in 0..3 {
                    out.write(&[f32::NAN]).unwrap();
                    reduce::reduce_with_plan(device, &b, ReduceOp::Sum, &mut out, &mut s, Some(plan)).unwrap();
                    let got = out.read().unwrap()[0] as f64;
                    assert!((got - want).abs() <= want * 1e-5, "sum {got} != {want} with {plan:?}");
                }
                let t = time_gpu(device, 20, || {
                    reduce::reduce_with_plan(device, &b, ReduceOp::Sum, &mut out, &mut s, Some(plan)).unwrap()
                });
                let got = out.read().unwrap()[0] as f64;
                assert!((got - want).abs() <= want * 1e-5, "sum {got} != {want} with {plan:?}");
                row("reduce sum", &label(n), "f32", t, (n * 4) as f64, &format!("plan {} (variant)", plan.name()));
            }
        }
        if n == 1 << (24 - shift) {
            let t = time_gpu(device, 20, || reduce::reduce_into(device, &b, ReduceOp::Max, &mut out, &mut s).unwrap());
            row("reduce max", &label(n), "f32", t, (n * 4) as f64, "");
            let h: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
            let bh = Buffer::from_slice(device, &h).unwrap();
            let mut oh = Buffer::<f16>::zeroed(device, 1).unwrap();
            let mut sh = ReduceScratch::for_len(device, n).unwrap();
            let t = time_gpu(device, 20, || reduce::reduce_into(device, &bh, ReduceOp::Sum, &mut oh, &mut sh).unwrap());
            row("reduce sum", &label(n), "f16 (f32 acc)", t, (n * 2) as f64, "");
            let bi = Buffer::from_slice(device, &x.iter().map(|&v| v as i32).collect::<Vec<_>>()).unwrap();
            let mut oi = Buffer::<i32>::zeroed(device, 1).unwrap();
            let mut si = ReduceScratch::for_len(device, n).unwrap();
            let t = time_gpu(device, 20, || reduce::reduce_into(device, &bi, ReduceOp::Sum, &mut oi, &mut si).unwrap());
            row("reduce sum", &label(n), "i32", t, (n * 4) as f64, "");
            let cols = 4096 >> (shift / 2);
            let mut or = Buffer::<f32>::zeroed(device, n / cols).unwrap();
            let t =
                time_gpu(device, 20, || reduce::reduce_rows_into(device, &b, cols, ReduceOp::Sum, &mut or).unwrap());
            row("reduce rows sum", &format!("{} x {cols}", n / cols), "f32", t, (n * 4) as f64, "");
            let mut oc = Buffer::<f32>::zeroed(device, cols).unwrap();
            let mut sc = ReduceScratch::new();
            let t = time_gpu(device, 20, || {
                reduce::reduce_cols_into(device, &b, cols, ReduceOp::Sum, &mut oc, &mut sc).unwrap()
            });
            row("reduce cols sum", &format!("{} x {cols}", n / cols), "f32", t, (n * 4) as f64, "");
        }
    }

    scan_rows(device, shift, variants);

    histogram_rows(device, shift, variants);

    // transpose against a plain (row-major to row-major) copy.
    for (rows, cols) in [(1000usize, 777usize), (8192 >> (shift / 2), 8192 >> (shift / 2))] {
        let n = rows * cols;
        let shape = format!("{rows} x {cols}");
        let a = Buffer::from_slice(device, &(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
        let mut t_out = Buffer::<f32>::zeroed(device, n).unwrap();
        let copy_t = time_gpu(device, 10, || {
            transpose::copy_2d(device, a.view_2d(rows, cols).unwrap(), &mut t_out.view_2d_mut(rows, cols).unwrap())
                .unwrap()
        });
        row("copy 2-D (row-major)", &shape, "f32", copy_t, (n * 8) as f64, "the baseline");
        let t = time_gpu(device, 10, || transpose::transpose_into(device, &a, rows, cols, &mut t_out).unwrap());
        row("transpose", &shape, "f32", t, (n * 8) as f64, &format!("{:.2}x copy's bandwidth", copy_t / t));
        if variants {
            for plan in transpose::candidates::<f32>(device, rows, cols) {
                let t = time_gpu(device, 10, || {
                    transpose::transpose_with_plan(device, &a, rows, cols, &mut t_out, plan).unwrap()
                });
                let (src, got) = (a.read().unwrap(), t_out.read().unwrap());
                let ok = (0..n).step_by(7).all(|i| got[(i % cols) * rows + i / cols] == src[i]);
                assert!(ok, "transpose f32 {rows} x {cols} with {plan:?}: wrong");
                let note = format!("{:.2}x copy's bandwidth, plan {} (variant)", copy_t / t, plan.name());
                row("transpose", &shape, "f32", t, (n * 8) as f64, &note);
            }
        }
        let h = Buffer::from_slice(device, &(0..n).map(|i| f16::from_f32(i as f32)).collect::<Vec<_>>()).unwrap();
        let mut h_out = Buffer::<f16>::zeroed(device, n).unwrap();
        let copy_h = time_gpu(device, 10, || {
            transpose::copy_2d(device, h.view_2d(rows, cols).unwrap(), &mut h_out.view_2d_mut(rows, cols).unwrap())
                .unwrap()
        });
        row("copy 2-D (row-major)", &shape, "f16", copy_h, (n * 4) as f64, "the baseline");
        let t = time_gpu(device, 10, || transpose::transpose_into(device, &h, rows, cols, &mut h_out).unwrap());
        row("transpose", &shape, "f16", t, (n * 4) as f64, &format!("{:.2}x copy's bandwidth", copy_h / t));
        if variants {
            for plan in transpose::candidates::<f16>(device, rows, cols) {
                let t = time_gpu(device, 10, || {
                    transpose::transpose_with_plan(device, &h, rows, cols, &mut h_out, plan).unwrap()
                });
                let (src, got) = (h.read().unwrap(), h_out.read().unwrap());
                let ok = (0..n).step_by(7).all(|i| got[(i % cols) * rows + i / cols].to_bits() == src[i].to_bits());
                assert!(ok, "transpose f16 {rows} x {cols} with {plan:?}: wrong");
                let note = format!("{:.2}x copy's bandwidth, plan {} (variant)", copy_h / t, plan.name());
                row("transpose", &shape, "f16", t, (n * 4) as f64, &note);
            }
        }
    }

    print_picks(device);
}

/// What the tuner chose for each op and size, and every candidate's time.
fn print_picks(device: &Device) {
    println!("\n### Tuned plans (`onekernel::ops::tuning::picks`)\n");
    println!("| op | key | plan | source | candidates (median µs) |");
    println!("|---|---|---|---|---|");
    for p in onekernel::ops::tuning::picks(device) {
        println!("| {} | {} | {} | {:?} | {} |", p.op, p.key, p.plan, p.source, p.candidate_times());
    }
}

/// The CPU executor: the ops (host implementations where documented) and
/// the kernels on the parallel executor, against the rayon idiom.
fn cpu_table(small: bool) {
    use rayon::prelude::*;
    let device = Device::cpu();
    let threads = rayon::current_num_threads();
    println!("\n## onekernel::ops on the CPU executor ({threads} threads)\n");
    println!("Wall clock, best of 5. Ratio: ours / the rayon idiom (time; at most 2 is the bar).\n");
    println!("| op | n | ours (ms) | rayon idiom (ms) | ours / rayon | the kernels on the executor (ms) |");
    println!("|---|---|---|---|---|---|");
    let n = if small { 1 << 20 } else { 1 << 24 };
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let b = Buffer::from_slice(&device, &x).unwrap();
    let mut out = Buffer::<f32>::zeroed(&device, 1).unwrap();
    let mut s = ReduceScratch::for_len(&device, n).unwrap();
    let ours = best_of(5, || reduce::reduce_into(&device, &b, ReduceOp::Sum, &mut out, &mut s).unwrap());
    let mut sink = 0.0f32;
    let rayon_t = best_of(5, || sink += x.par_iter().sum::<f32>());
    // The kernels themselves, as the GPU runs them.
    let (seg, segments) = reduce::plan(&device, n);
    let mut partials = Buffer::<f32>::zeroed(&device, segments).unwrap();
    let kernels = best_of(5, || {
        let (seg, count) = (seg as u32, segments as u32);
        reduce::reduce_segments::launch::<f32, 0>(
            &device,
            Grid::blocks(segments),
            &b,
            &mut partials,
            0,
            seg,
            seg,
            -0.0,
        )
        .unwrap();
        reduce::reduce_segments::launch::<f32, 0>(&device, Grid::blocks(1), &partials, &mut out, 0, count, count, -0.0)
            .unwrap();
    });
    println!(
        "| reduce sum f32 (`par_iter().sum()`) | {} | {:.3} | {:.3} | {:.2} | {:.3} |",
        label(n),
        ours * 1e3,
        rayon_t * 1e3,
        ours / rayon_t,
        kernels * 1e3
    );

    let xi: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let bi = Buffer::from_slice(&device, &xi).unwrap();
    let mut oi = Buffer::<u32>::zeroed(&device, n).unwrap();
    let mut ss = ScanScratch::for_len(&device, n).unwrap();
    let ours = best_of(5, || scan::scan_into(&device, &bi, ReduceOp::Sum, true, &mut oi, &mut ss).unwrap());
    let mut host = vec![0u32; n];
    // rayon has no scan: its idiom is the same two passes over chunks.
    let rayon_t = best_of(5, || {
        let chunk = 1 << 16;
        let totals: Vec<u32> = xi.par_chunks(chunk).map(|c| c.iter().fold(0u32, |a, &v| a.wrapping_add(v))).collect();
        let mut acc = 0u32;
        let offsets: Vec<u32> = totals
            .iter()
            .map(|&t| {
                let o = acc;
                acc = acc.wrapping_add(t);
                o
            })
            .collect();
        host.par_chunks_mut(chunk).zip(xi.par_chunks(chunk)).zip(offsets).for_each(|((o, c), mut acc)| {
            for (o, &v) in o.iter_mut().zip(c) {
                acc = acc.wrapping_add(v);
                *o = acc;
            }
        });
    });
    assert_eq!(oi.read().unwrap(), host);
    println!(
        "| scan inclusive sum u32 (two passes over `par_chunks`) | {} | {:.3} | {:.3} | {:.2} | |",
        label(n),
        ours * 1e3,
        rayon_t * 1e3,
        ours / rayon_t
    );

    let bins = 256;
    let v: Vec<u32> = xi.iter().map(|&v| v % bins as u32).collect();
    let bv = Buffer::from_slice(&device, &v).unwrap();
    let mut counts = Buffer::<u32>::zeroed(&device, bins).unwrap();
    let ours = best_of(5, || histogram::histogram_into(&device, &bv, &mut counts).unwrap());
    let rayon_t = best_of(5, || {
        let h = v
            .par_iter()
            .fold(
                || vec![0u32; bins],
                |mut h, &x| {
                    h[x as usize] += 1;
                    h
                },
            )
            .reduce(
                || vec![0u32; bins],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        assert_eq!(h.len(), bins);
    });
    let kernels = best_of(5, || {
        onekernel::ops::fill(&device, &mut counts, 0).unwrap();
        let (seg, segments) = reduce::plan(&device, n);
        histogram::histogram_shared::launch(&device, Grid::blocks(segments), &bv, &mut counts, bins as u32, seg as u32)
            .unwrap();
    });
    println!(
        "| histogram, 256 bins (`par_iter().fold(..)`) | {} | {:.3} | {:.3} | {:.2} | {:.3} |",
        label(n),
        ours * 1e3,
        rayon_t * 1e3,
        ours / rayon_t,
        kernels * 1e3
    );

    let side = if small { 1024 } else { 4096 };
    let a: Vec<f32> = (0..side * side).map(|i| i as f32).collect();
    let ba = Buffer::from_slice(&device, &a).unwrap();
    let mut bt = Buffer::<f32>::zeroed(&device, side * side).unwrap();
    let ours = best_of(5, || transpose::transpose_into(&device, &ba, side, side, &mut bt).unwrap());
    let mut t = vec![0.0f32; side * side];
    let rayon_t = best_of(5, || {
        t.par_chunks_mut(side).enumerate().for_each(|(c, out)| {
            for (r, o) in out.iter_mut().enumerate() {
                *o = a[r * side + c];
            }
        })
    });
    assert_eq!(bt.read().unwrap(), t);
    println!(
        "| transpose f32 (`par_chunks_mut`, one output row each) | {side} x {side} | {:.3} | {:.3} | {:.2} | (the kernel is the op) |",
        ours * 1e3,
        rayon_t * 1e3,
        ours / rayon_t
    );
    std::hint::black_box(sink);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let has = |a: &str| args.iter().any(|x| x == a);
    let small = has("--small");
    if !has("--cpu") {
        match Device::gpu() {
            Ok(gpu) => {
                let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(String::as_str);
                gpu_table(&gpu, small || gpu.name().contains("llvmpipe"), has("--variants"), only)
            }
            Err(e) => println!("no GPU: {e}"),
        }
    }
    if !has("--gpu") {
        cpu_table(small);
    }
}
