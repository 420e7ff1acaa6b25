//! Benchmarks of `ops::sort`, `ops::norm`, `ops::random` and `ops::matmul`
//! (and `ops::transpose`, `--only transpose`) on the GPU: one markdown table. `peers/torch/ops2_baseline.py` prints
//! PyTorch's numbers for the same rows.
//!
//!     cargo bench -p onekernel-ops --bench ops2             # H200 sizes
//!     cargo bench -p onekernel-ops --bench ops2 -- --quick  # small sizes (lavapipe)
//!     cargo bench -p onekernel-ops --bench ops2 -- --cpu    # the CPU executor against rayon
//!     cargo bench -p onekernel-ops --bench ops2 -- --only sort --profile  # the sort, kernel by kernel
//!     cargo bench -p onekernel-ops --bench ops2 -- --only norm --sweep    # the norms at every vector config
//!     cargo bench -p onekernel-ops --bench ops2 -- --only norm --types f16 --unchecked  # f16 only, no shader checks
//!     cargo bench -p onekernel-ops --bench ops2 -- --only norm --sweep --widths 128,1000 --two-pass  # some widths; softmax in two passes too
//!     cargo bench -p onekernel-ops --bench ops2 -- --only floor,random  # a Vec4 copy and fill (the memory floor), the Philox variants
//!     cargo bench -p onekernel-ops --bench ops2 -- --only norm --stream --widths 128,1000  # the stream kernel's configs
//!
//! Times: `kernels` is the sum of the launches' GPU timestamps per call
//! (the kernels alone); `wall` is the wall-clock time per call of a loop of
//! calls, including submitting each launch and the gaps between them (an
//! op of several launches pays those; PyTorch's CUDA-event times include
//! its gaps too). The rate column is from `kernels`.

use onekernel::ops::matmul::{self, Layout, Shape};
use onekernel::ops::norm::{row_op_into, row_op_with, RowElement, RowOp, COUNT, STREAM, STREAM_CONFIGS, VEC_CONFIGS};
use onekernel::ops::random::{normal_into, random_u32_into, uniform_into};
use onekernel::ops::sort::{sort_into, sort_pairs_into, Order, SortScratch};
use onekernel::ops::transpose::{copy_2d, transpose_into, TransposeElement};
use onekernel::prelude::*;
use std::time::Instant;

/// The memory floor of the norms: a `Vec4` copy (one read, one write a
/// number, as a row op).
#[kernel(workgroup_size = 256)]
fn copy_vec4(x: &[Vec4], y: &mut [Vec4]) {
    let i = global_id().x;
    if i < y.len() {
        y[i] = x[i];
    }
}

/// A scalar copy (one `u32` a thread): the floor of kernels that move one
/// 4-byte word a memory instruction.
#[kernel(workgroup_size = 256)]
fn copy_u32(x: &[u32], y: &mut [u32]) {
    let i = global_id().x;
    if i < y.len() {
        y[i] = x[i];
    }
}

/// The memory floor of the random numbers: a `UVec4` fill (one write a
/// number).
#[kernel(workgroup_size = 256)]
fn fill_uvec4(y: &mut [UVec4], v: u32) {
    let i = global_id().x;
    if i < y.len() {
        y[i] = UVec4::splat(v ^ i as u32);
    }
}

struct Row {
    op: String,
    shape: String,
    kernels_ms: f64,
    wall_ms: f64,
    rate: String,
}

/// Times `iters` calls of `f` (after 20 ms of warm-up calls), five times:
/// per call, the median GPU kernel time and the median wall time.
fn time<E: std::fmt::Debug>(device: &Device, iters: usize, mut f: impl FnMut() -> Result<(), E>) -> (f64, f64) {
    // Warm-up calls, waited for (`time` waits for the device): pipelines
    // made and compiled by the driver before the clock starts, and the GPU
    // kept busy for 20 ms first (after the host's work between rows it
    // may have lowered its clock: rows 2-3x slow in blocks, 2026-12-04).
    let warm = Instant::now();
    let mut calls = 0;
    while calls < 3 || warm.elapsed().as_secs_f64() < 0.02 {
        let (r, _) = device.time(|| (0..4).try_for_each(|_| f())).expect("timing");
        r.expect("warm-up");
        calls += 4;
    }
    // Then the median of 5 batches of `iters` calls (as the PyTorch
    // baseline times).
    let mut kernels = Vec::new();
    let mut walls = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let (r, timing) = device.time(|| (0..iters).try_for_each(|_| f())).expect("timing");
        r.expect("launch");
        walls.push(start.elapsed().as_secs_f64() / iters as f64);
        kernels.push(timing.total.as_secs_f64() / iters as f64);
    }
    kernels.sort_by(f64::total_cmp);
    walls.sort_by(f64::total_cmp);
    (kernels[2], walls[2])
}

fn hash(i: usize) -> u32 {
    let mut x = (i as u32).wrapping_mul(0x9E37_79B9) ^ 0x2545_F491;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

/// Keeps the GPU busy for about `secs` seconds before anything is timed:
/// it idles at a low clock and takes a moment to reach its full one.
fn warm_up(device: &Device, secs: f64) {
    let n = 1 << 22;
    let keys = Buffer::from_slice(device, &(0..n).map(hash).collect::<Vec<_>>()).unwrap();
    let mut out = Buffer::<u32>::zeroed(device, n).unwrap();
    let mut scratch = SortScratch::keys_only(device, n).unwrap();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs {
        let (r, _) = device
            .time(|| (0..20).try_for_each(|_| sort_into(device, &keys, &mut out, Order::Ascending, &mut scratch)))
            .expect("timing");
        r.expect("warm-up sort");
    }
}

fn sorts(device: &Device, sizes: &[usize], iters: usize, rows: &mut Vec<Row>) {
    for &n in sizes {
        let keys: Vec<f32> = (0..n).map(|i| f32::from_bits(hash(i) & 0xbfff_ffff) - 1.0).collect();
        let kb = Buffer::from_slice(device, &keys).unwrap();
        let ub = Buffer::from_slice(device, &keys.iter().map(|k| k.to_bits()).collect::<Vec<_>>()).unwrap();
        let ib = Buffer::from_slice(device, &(0..n as u32).collect::<Vec<_>>()).unwrap();
        let mut ko = Buffer::<f32>::zeroed(device, n).unwrap();
        let mut uo = Buffer::<u32>::zeroed(device, n).unwrap();
        let mut io = Buffer::<u32>::zeroed(device, n).unwrap();
        // ANCHOR: scratch
        let mut keys_only = SortScratch::keys_only(device, n).unwrap();
        let mut pairs = SortScratch::<u32>::new(device, n).unwrap();
        let mut row = |op: &str, (k, w): (f64, f64)| {
            rows.push(Row {
                op: op.into(),
                shape: format!("2^{}", n.trailing_zeros()),
                kernels_ms: k * 1e3,
                wall_ms: w * 1e3,
                rate: format!("{:.2} Gkeys/s", n as f64 / k * 1e-9),
            })
        };
        row("sort u32 keys", time(device, iters, || sort_into(device, &ub, &mut uo, Order::Ascending, &mut keys_only)));
        // ANCHOR_END: scratch
        row("sort f32 keys", time(device, iters, || sort_into(device, &kb, &mut ko, Order::Ascending, &mut keys_only)));
        row(
            "sort f32 keys + u32 index",
            time(device, iters, || sort_pairs_into(device, &kb, &ib, &mut ko, &mut io, Order::Ascending, &mut pairs)),
        );
        if std::env::args().any(|a| a == "--profile") {
            // Where a sort's time goes, kernel by kernel (one call, after
            // the timed ones).
            let (r, profile) =
                device.profile(|| sort_into(device, &ub, &mut uo, Order::Ascending, &mut keys_only)).unwrap();
            r.unwrap();
            println!("sort u32 keys, 2^{}:\n{profile}", n.trailing_zeros());
        }
        // The result is sorted.
        let got = ko.read().unwrap();
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "sort {n}: not sorted");
    }
}

/// Every row op at each width; `sweep`: also at every vector kernel
/// config (`[WG, PER, TPR]`, rows named with it) the device can launch.
fn norms<T: RowElement>(
    device: &Device,
    total: usize,
    iters: usize,
    rows: &mut Vec<Row>,
    sweep: bool,
    widths: &[usize],
) {
    let two_pass = std::env::args().any(|a| a == "--two-pass");
    let tname = if std::mem::size_of::<T>() == 2 { "f16" } else { "f32" };
    let (sg_min, sg_max) = device.subgroup_sizes().map_or((32, 32), |(a, b)| (a as usize, b as usize));
    let mut configs = vec![None];
    if sweep {
        // HELD 1 (the row held as read) is an `f16` kernel.
        let helds: &[usize] = if tname == "f16" { &[0, 1] } else { &[0] };
        for &held in helds {
            configs.extend(
                VEC_CONFIGS
                    .into_iter()
                    .filter(|c| (sg_min == sg_max && c[2] <= sg_min) || (c[2] >= sg_max && c[2] % sg_max == 0))
                    .map(|[wg, per, tpr]| Some([wg, per, tpr, held])),
            );
        }
    }
    // `--stream`: the stream kernel at each of its configs that holds the
    // row (HELD 4; steps 1, 2, 4, 8).
    let stream = std::env::args().any(|a| a == "--stream");
    for &cols in widths {
        let mut configs = configs.clone();
        if stream && cols % 4 == 0 {
            for [wg, per, tpr] in STREAM_CONFIGS {
                if sg_min == sg_max && tpr <= sg_min && cols / 4 <= per * tpr {
                    for steps in [1, 2, 4, 8] {
                        configs.push(Some([wg, per, tpr, STREAM | (steps * COUNT)]));
                    }
                }
            }
        }
        let r = (total / cols).max(1);
        let n = r * cols;
        let x: Vec<T> = (0..n).map(|i| T::narrow((hash(i) >> 8) as f32 / 16_777_216.0 * 8.0 - 4.0)).collect();
        let xb = Buffer::from_slice(device, &x).unwrap();
        let g = Buffer::from_slice(device, &vec![T::narrow(1.5); cols]).unwrap();
        let b = Buffer::from_slice(device, &vec![T::narrow(0.25); cols]).unwrap();
        let mut y = Buffer::<T>::zeroed(device, n).unwrap();
        let bytes = 2.0 * (n * std::mem::size_of::<T>()) as f64;
        let ops = [
            ("softmax", RowOp::Softmax, None, None),
            ("log_softmax", RowOp::LogSoftmax, None, None),
            ("layer_norm", RowOp::LayerNorm { eps: 1e-5 }, Some(&g), Some(&b)),
            ("rms_norm", RowOp::RmsNorm { eps: 1e-5 }, Some(&g), None),
        ];
        for (name, op, gb, bb) in ops {
            // Softmax also in two passes (HELD bit 1) at each config (`--two-pass`).
            let two_pass: Vec<_> = if two_pass && matches!(op, RowOp::Softmax | RowOp::LogSoftmax) {
                configs.iter().flatten().map(|&[wg, per, tpr, held]| Some([wg, per, tpr, held | 2])).collect()
            } else {
                Vec::new()
            };
            for &config in configs.iter().chain(&two_pass) {
                // The op's own choice: tuned here, outside the timing (a
                // call inside `Device::time` runs the default config).
                let mut tuned = String::new();
                if config.is_none() {
                    row_op_with(device, op, &xb, gb, bb, &mut y, cols, false, None).unwrap();
                    let key = format!("op={name}, type={tname}, ");
                    let rb = format!("rows<={}, cols<={}", r.next_power_of_two(), cols.next_power_of_two());
                    if let Some(p) = onekernel::ops::tuning::picks(device)
                        .into_iter()
                        .find(|p| p.op == "ops::norm" && p.key.starts_with(&key) && p.key.ends_with(&rb))
                    {
                        tuned = format!(" ({}: {})", p.plan, p.candidate_times());
                    }
                }
                let (k, w) = time(device, iters, || row_op_with(device, op, &xb, gb, bb, &mut y, cols, false, config));
                // The first rows against the CPU executor's plain Rust.
                let m = r.min(8) * cols;
                let cpu = Device::cpu();
                let xc = Buffer::from_slice(&cpu, &x[..m]).unwrap();
                let gc = Buffer::from_slice(&cpu, &vec![T::narrow(1.5); cols]).unwrap();
                let bc = Buffer::from_slice(&cpu, &vec![T::narrow(0.25); cols]).unwrap();
                let mut yc = Buffer::<T>::zeroed(&cpu, m).unwrap();
                let (gc, bc) = (gb.map(|_| &gc), bb.map(|_| &bc));
                row_op_into(&cpu, op, &xc, gc, bc, &mut yc, cols, false).unwrap();
                let tol = if std::mem::size_of::<T>() == 2 { 1e-2 } else { 1e-3 };
                let floor = if matches!(op, RowOp::Softmax) { 1.0 / cols as f32 } else { 1.0 };
                let got = y.read_range(..m).unwrap();
                let ok = got.iter().zip(yc.read().unwrap()).all(|(g, w)| {
                    let (g, w) = (g.widen(), w.widen());
                    (g - w).abs() <= tol * w.abs().max(floor)
                });
                let at = config.map_or(tuned, |c| format!(" {c:?}"));
                let row = Row {
                    op: format!("{name} {tname}{at}"),
                    shape: format!("{r}x{cols}"),
                    kernels_ms: k * 1e3,
                    wall_ms: w * 1e3,
                    rate: format!("{:.0} GB/s{}", bytes / k * 1e-9, if ok { "" } else { " WRONG" }),
                };
                // Each row as it comes too (a sweep cut short keeps its rows).
                eprintln!("| {} | {} | {:.4} | {:.4} | {} |", row.op, row.shape, row.kernels_ms, row.wall_ms, row.rate);
                rows.push(row);
            }
        }
    }
}

fn random(device: &Device, n: usize, iters: usize, rows: &mut Vec<Row>) {
    let mut u = Buffer::<u32>::zeroed(device, n).unwrap();
    let mut f = Buffer::<f32>::zeroed(device, n).unwrap();
    let shape = format!("2^{}", n.trailing_zeros());
    let bytes = (n * 4) as f64;
    let mut row = |op: &str, (k, w): (f64, f64)| {
        rows.push(Row {
            op: op.into(),
            shape: shape.clone(),
            kernels_ms: k * 1e3,
            wall_ms: w * 1e3,
            rate: format!("{:.0} GB/s", bytes / k * 1e-9),
        })
    };
    row("random u32", time(device, iters, || random_u32_into(device, &mut u, 1, 0)));
    row("uniform f32", time(device, iters, || uniform_into(device, &mut f, 1, 0)));
    row("normal f32", time(device, iters, || normal_into(device, &mut f, 1, 0, 0.0, 1.0)));
    // From an offset not a multiple of 4: the staged (scalar-store) kernels.
    row("random u32, offset 1", time(device, iters, || random_u32_into(device, &mut u, 1, 1)));
    row("uniform f32, offset 1", time(device, iters, || uniform_into(device, &mut f, 1, 1)));
    row("normal f32, offset 1", time(device, iters, || normal_into(device, &mut f, 1, 1, 0.0, 1.0)));
    // The Philox kernels one by one, plain and unchecked.
    random_variants(device, n, iters, rows);
}

/// What the hardware gives our launches: a `Vec4` copy of `n` `f32`s (the
/// norms' traffic) and a `UVec4` fill of `4n` words (the random numbers'),
/// on the plain handle and on an unchecked one.
fn floor(device: &Device, n: usize, iters: usize, rows: &mut Vec<Row>) {
    let x = Buffer::from_slice(device, &(0..n / 4).map(|i| Vec4::splat(i as f32)).collect::<Vec<_>>()).unwrap();
    let mut y = Buffer::<Vec4>::zeroed(device, n / 4).unwrap();
    let mut w = Buffer::<UVec4>::zeroed(device, n).unwrap();
    // SAFETY: both kernels guard their one index by the output's length
    // and read `x` at the same index (`x` and `y` are as long).
    let unchecked = unsafe { device.unchecked() };
    for (d, what) in [(device, ""), (&unchecked, " unchecked")] {
        let (k, wall) = time(d, iters, || copy_vec4::launch(d, Grid::threads(n / 4), &x, &mut y));
        rows.push(Row {
            op: format!("copy f32 as Vec4{what}"),
            shape: format!("2^{}", n.trailing_zeros()),
            kernels_ms: k * 1e3,
            wall_ms: wall * 1e3,
            rate: format!("{:.0} GB/s", (8 * n) as f64 / k * 1e-9),
        });
        let (k, wall) = time(d, iters, || fill_uvec4::launch(d, Grid::threads(n), &mut w, 7));
        rows.push(Row {
            op: format!("fill u32 as UVec4{what}"),
            shape: format!("2^{}", (4 * n).trailing_zeros()),
            kernels_ms: k * 1e3,
            wall_ms: wall * 1e3,
            rate: format!("{:.0} GB/s", (16 * n) as f64 / k * 1e-9),
        });
    }
    assert_eq!(y.read_range(n / 4 - 1..).unwrap()[0], Vec4::splat((n / 4 - 1) as f32));
}

/// The Philox kernels of `ops::random` launched one by one for uniform
/// `f32`s (offset 0, seed 1), each into a zeroed buffer of its own; all
/// timed first, then each checked bit for bit against `uniform_into` (host
/// work between the timings leaves the GPU idle long enough to lower its
/// clock: the first runs of this saw 345 MHz in `nvidia-smi`).
fn random_variants(device: &Device, n: usize, iters: usize, rows: &mut Vec<Row>) {
    use onekernel::ops::random::kernels::{philox_vec, philox_vec_64};
    type Launch = Box<dyn Fn(&Device, &mut Buffer<f32>) -> Result<(), onekernel::ops::OpError>>;
    // SAFETY: each kernel guards its stores by the output's length.
    let unchecked = unsafe { device.unchecked() };
    let int64 = onekernel::ops::random::has_int64(device);
    let v = n / 4;
    let mut variants: Vec<(String, Launch)> = vec![(
        "philox_vec (16-bit halves)".into(),
        Box::new(move |d, f| {
            Ok(philox_vec::launch::<1>(d, Grid::threads(v), &mut *f.view_as_mut()?, 0, 0, 1, 0, 0.0, 1.0)?)
        }),
    )];
    if int64 {
        variants.push((
            "philox_vec_64".into(),
            Box::new(move |d, f| {
                Ok(philox_vec_64::launch::<1>(d, Grid::threads(v), &mut *f.view_as_mut()?, 0, 0, 1, 0, 0.0, 1.0)?)
            }),
        ));
    }
    let mut outs = Vec::new();
    for (d, what) in [(device, ""), (&unchecked, " unchecked")] {
        for (name, launch) in &variants {
            let mut f = Buffer::<f32>::zeroed(device, n).unwrap();
            let (k, w) = time(d, iters, || launch(d, &mut f));
            outs.push((format!("uniform f32, {name}{what}"), k, w, f));
        }
    }
    let mut want = Buffer::<f32>::zeroed(device, n).unwrap();
    uniform_into(device, &mut want, 1, 0).unwrap();
    let want = want.read().unwrap();
    for (op, k, w, f) in outs {
        let ok = f.read().unwrap().iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        rows.push(Row {
            op,
            shape: format!("2^{}", n.trailing_zeros()),
            kernels_ms: k * 1e3,
            wall_ms: w * 1e3,
            rate: format!("{:.0} GB/s{}", (4 * n) as f64 / k * 1e-9, if ok { "" } else { " WRONG" }),
        });
    }
}

/// The tiled transpose against the strided copy of the same matrix (both
/// read and write each element once), plain and unchecked launches.
fn transposes(device: &Device, shapes: &[(usize, usize)], iters: usize, rows: &mut Vec<Row>) {
    fn one<T: TransposeElement>(device: &Device, tname: &str, r: usize, c: usize, iters: usize, rows: &mut Vec<Row>) {
        let n = r * c;
        let a = Buffer::from_pod_slice::<u8>(device, &vec![1u8; n * std::mem::size_of::<T>()]).unwrap();
        let mut out = Buffer::<T>::zeroed(device, n).unwrap();
        let bytes = 2.0 * (n * std::mem::size_of::<T>()) as f64;
        // SAFETY: the ops index inside their buffers (the tests check
        // them on a checked device); this times the kernels without the
        // bounds checks.
        let unchecked = unsafe { device.unchecked() };
        let mut push = |op: String, (k, w): (f64, f64)| {
            rows.push(Row {
                op,
                shape: format!("{r}x{c}"),
                kernels_ms: k * 1e3,
                wall_ms: w * 1e3,
                rate: format!("{:.0} GB/s", bytes / k * 1e-9),
            })
        };
        push(
            format!("copy_2d {tname}"),
            time(device, iters, || copy_2d(device, a.view_2d(r, c).unwrap(), &mut out.view_2d_mut(r, c).unwrap())),
        );
        // Tuned outside the timings (a call inside `Device::time` runs the default plan).
        transpose_into(device, &a, r, c, &mut out).unwrap();
        transpose_into(&unchecked, &a, r, c, &mut out).unwrap();
        push(format!("transpose {tname}"), time(device, iters, || transpose_into(device, &a, r, c, &mut out)));
        push(
            format!("transpose {tname} unchecked"),
            time(&unchecked, iters, || transpose_into(&unchecked, &a, r, c, &mut out)),
        );
        if std::env::args().any(|a| a == "--variants") {
            // The floor: the same bytes copied as `Vec4`s and as `u32`s.
            let bytes_n = n * std::mem::size_of::<T>();
            let (x4, mut y4) = (a.view_as::<Vec4>().unwrap(), out.view_as_mut::<Vec4>().unwrap());
            let t = time(device, iters, || copy_vec4::launch(device, Grid::threads(bytes_n / 16), &*x4, &mut *y4));
            push(format!("copy {tname} as Vec4 (floor)"), t);
            drop((x4, y4));
            let (x1, mut y1) = (a.view_as::<u32>().unwrap(), out.view_as_mut::<u32>().unwrap());
            let t = time(device, iters, || copy_u32::launch(device, Grid::threads(bytes_n / 4), &*x1, &mut *y1));
            push(format!("copy {tname} as u32 (floor)"), t);
            drop((x1, y1));
            // Every plan the tuner chooses among, in this process.
            for plan in onekernel::ops::transpose::candidates::<T>(device, r, c) {
                let t = time(device, iters, || {
                    onekernel::ops::transpose::transpose_with_plan(device, &a, r, c, &mut out, plan)
                });
                push(format!("transpose {tname}, plan {} (variant)", plan.name()), t);
            }
        }
    }
    for &(r, c) in shapes {
        one::<f32>(device, "f32", r, c, iters, rows);
        if device.features().contains(onekernel::abi::Features::F16) {
            one::<f16>(device, "f16", r, c, iters, rows);
        }
    }
}

fn matmuls(device: &Device, shapes: &[(usize, usize, usize, usize)], iters: usize, rows: &mut Vec<Row>) {
    for &(batch, m, k, n) in shapes {
        let a: Vec<f32> = (0..batch * m * k).map(|i| (hash(i) % 17) as f32 / 8.0 - 1.0).collect();
        let b: Vec<f32> = (0..batch * k * n).map(|i| (hash(i + 7) % 17) as f32 / 8.0 - 1.0).collect();
        let ab = Buffer::from_slice(device, &a).unwrap();
        let bb = Buffer::from_slice(device, &b).unwrap();
        let mut c = Buffer::<f32>::zeroed(device, batch * m * n).unwrap();
        let flops = 2.0 * (batch * m * k * n) as f64;
        let shape = if batch > 1 { format!("{batch}x{m}x{k}x{n}") } else { format!("{m}x{k}x{n}") };
        for (what, la, lb) in [("NN", Layout::RowMajor, Layout::RowMajor), ("TN", Layout::Transposed, Layout::RowMajor)]
        {
            let (kt, w) = time(device, iters, || {
                matmul::matmul_into(device, &ab, la, &bb, lb, &mut c, Shape::batched(batch, m, k, n))
            });
            rows.push(Row {
                op: format!("matmul f32 {what}"),
                shape: shape.clone(),
                kernels_ms: kt * 1e3,
                wall_ms: w * 1e3,
                rate: format!("{:.1} TFLOP/s", flops / kt * 1e-12),
            });
        }
        if matmul::has_tiles(device) {
            let a16: Vec<f16> = a.iter().map(|&v| f16::from_f32(v)).collect();
            let b16: Vec<f16> = b.iter().map(|&v| f16::from_f32(v)).collect();
            let ab = Buffer::from_slice(device, &a16).unwrap();
            let bb = Buffer::from_slice(device, &b16).unwrap();
            let (kt, w) = time(device, iters, || {
                matmul::matmul_f16_into(device, &ab, &bb, &mut c, Shape::batched(batch, m, k, n))
            });
            rows.push(Row {
                op: "matmul f16→f32 (tiles)".into(),
                shape: shape.clone(),
                kernels_ms: kt * 1e3,
                wall_ms: w * 1e3,
                rate: format!("{:.1} TFLOP/s", flops / kt * 1e-12),
            });
        }
    }
}

/// Wall time of the fastest of `runs` runs of `f`.
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// The CPU executor's sort and softmax against the rayon idioms
/// (`par_sort_unstable`, a softmax over `par_chunks_mut`), wall clock.
fn cpu(n: usize) {
    use rayon::prelude::*;
    let device = Device::cpu();
    println!("CPU executor ({} threads), {n} elements, best of 5\n", rayon::current_num_threads());
    println!("| op | ours (ms) | rayon idiom (ms) | ours / rayon |");
    println!("|---|---:|---:|---:|");
    let keys: Vec<u32> = (0..n).map(hash).collect();
    let kb = Buffer::from_slice(&device, &keys).unwrap();
    let mut out = Buffer::<u32>::zeroed(&device, n).unwrap();
    let mut scratch = SortScratch::keys_only(&device, n).unwrap();
    let ours = best_of(5, || sort_into(&device, &kb, &mut out, Order::Ascending, &mut scratch).unwrap());
    let theirs = best_of(5, || {
        let mut v = keys.clone();
        v.par_sort_unstable();
        std::hint::black_box(v);
    });
    println!("| sort u32 keys | {:.2} | {:.2} | {:.2} |", ours * 1e3, theirs * 1e3, ours / theirs);
    let fkeys: Vec<f32> = keys.iter().map(|&k| f32::from_bits(k & 0xbfff_ffff)).collect();
    let fb = Buffer::from_slice(&device, &fkeys).unwrap();
    let ib = Buffer::from_slice(&device, &(0..n as u32).collect::<Vec<_>>()).unwrap();
    let (mut fo, mut io) = (Buffer::<f32>::zeroed(&device, n).unwrap(), Buffer::<u32>::zeroed(&device, n).unwrap());
    let mut pairs = SortScratch::<u32>::new(&device, n).unwrap();
    let ours =
        best_of(5, || sort_pairs_into(&device, &fb, &ib, &mut fo, &mut io, Order::Ascending, &mut pairs).unwrap());
    let theirs = best_of(5, || {
        let mut v: Vec<(f32, u32)> = fkeys.iter().copied().zip(0..).collect();
        v.par_sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        std::hint::black_box(v);
    });
    println!("| sort f32 keys + u32 index (stable) | {:.2} | {:.2} | {:.2} |", ours * 1e3, theirs * 1e3, ours / theirs);
    let cols = 1000;
    let x: Vec<f32> = (0..n / cols * cols).map(|i| (hash(i) >> 8) as f32 / 16_777_216.0).collect();
    let xb = Buffer::from_slice(&device, &x).unwrap();
    let mut y = Buffer::<f32>::zeroed(&device, x.len()).unwrap();
    let ours = best_of(5, || row_op_into(&device, RowOp::Softmax, &xb, None, None, &mut y, cols, false).unwrap());
    let theirs = best_of(5, || {
        let mut out = vec![0.0f32; x.len()];
        out.par_chunks_mut(cols).zip(x.par_chunks(cols)).for_each(|(o, r)| {
            let m = r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let s: f32 = r.iter().map(|v| (v - m).exp()).sum();
            o.iter_mut().zip(r).for_each(|(o, v)| *o = (v - m).exp() / s);
        });
        std::hint::black_box(out);
    });
    println!("| softmax f32, rows of {cols} | {:.2} | {:.2} | {:.2} |", ours * 1e3, theirs * 1e3, ours / theirs);
    let mut u = Buffer::<f32>::zeroed(&device, n).unwrap();
    let ours = best_of(5, || uniform_into(&device, &mut u, 1, 0).unwrap());
    let theirs = best_of(5, || {
        // Philox in plain Rust with 64-bit products, four numbers a block.
        let mut v = vec![0.0f32; n];
        v.par_chunks_mut(4).enumerate().for_each(|(q, out)| {
            let (mut c, mut k) = ([q as u32, 0, 0, 0], [1u32, 0]);
            for _ in 0..10 {
                let p0 = 0xD251_1F53u64 * u64::from(c[0]);
                let p1 = 0xCD9E_8D57u64 * u64::from(c[2]);
                c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
                k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
            }
            for (o, w) in out.iter_mut().zip(c) {
                *o = (w >> 8) as f32 / 16_777_216.0;
            }
        });
        std::hint::black_box(v);
    });
    println!(
        "| uniform f32 (rayon: Philox with u64 products) | {:.2} | {:.2} | {:.2} |",
        ours * 1e3,
        theirs * 1e3,
        ours / theirs
    );
    // matmul: the rayon idiom is rows of `C` in parallel, an i-k-j loop.
    let side = if n >= 1 << 20 { 512 } else { 128 };
    let a: Vec<f32> = (0..side * side).map(|i| (hash(i) % 17) as f32 / 8.0 - 1.0).collect();
    let (ab, mut cb) = (Buffer::from_slice(&device, &a).unwrap(), Buffer::<f32>::zeroed(&device, side * side).unwrap());
    let shape = Shape::new(side, side, side);
    let ours = best_of(5, || {
        matmul::matmul_into(&device, &ab, Layout::RowMajor, &ab, Layout::RowMajor, &mut cb, shape).unwrap()
    });
    let theirs = best_of(5, || {
        let mut c = vec![0.0f32; side * side];
        c.par_chunks_mut(side).enumerate().for_each(|(r, out)| {
            for j in 0..side {
                let x = a[r * side + j];
                for (o, &y) in out.iter_mut().zip(&a[j * side..(j + 1) * side]) {
                    *o += x * y;
                }
            }
        });
        std::hint::black_box(c);
    });
    println!(
        "| matmul f32 {side}³ (rayon: rows of C, i-k-j) | {:.2} | {:.2} | {:.2} |",
        ours * 1e3,
        theirs * 1e3,
        ours / theirs
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--cpu") {
        cpu(if args.iter().any(|a| a == "--quick") { 1 << 16 } else { 1 << 22 });
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let only: Option<&str> = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).map(|s| s.as_str());
    let wants = |key: &str| only.is_none_or(|o| o.split(',').any(|k| k == key));
    let device = Device::gpu().expect("this benchmark needs a GPU");
    let mut rows = Vec::new();
    let iters = if quick { 2 } else { 20 };
    if !quick {
        warm_up(&device, 2.0);
    }
    if wants("sort") {
        let sizes: &[usize] = if quick { &[1 << 16] } else { &[1 << 20, 1 << 24, 1 << 26] };
        sorts(&device, sizes, iters, &mut rows);
    }
    if wants("norm") {
        let total = if quick { 1 << 16 } else { 1 << 24 };
        let sweep = args.iter().any(|a| a == "--sweep");
        let types = args.iter().position(|a| a == "--types").and_then(|i| args.get(i + 1)).map_or("f32,f16", |s| s);
        // SAFETY: the row kernels index inside their buffers (clamped
        // loads, guarded stores; the tests run them on checked devices).
        let nd = if args.iter().any(|a| a == "--unchecked") { unsafe { device.unchecked() } } else { device.clone() };
        let widths: Vec<usize> = args
            .iter()
            .position(|a| a == "--widths")
            .and_then(|i| args.get(i + 1))
            .map_or(vec![128, 1000, 4096, 32768], |s| s.split(',').map(|w| w.parse().expect("--widths")).collect());
        if types.contains("f32") {
            norms::<f32>(&nd, total, iters, &mut rows, sweep, &widths);
        }
        if types.contains("f16") && device.features().contains(onekernel::abi::Features::F16) {
            norms::<f16>(&nd, total, iters, &mut rows, sweep, &widths);
        }
    }
    if wants("floor") {
        floor(&device, if quick { 1 << 16 } else { 1 << 24 }, iters, &mut rows);
    }
    if wants("random") {
        random(&device, if quick { 1 << 16 } else { 1 << 26 }, iters, &mut rows);
    }
    if wants("transpose") {
        let shapes: &[(usize, usize)] = if quick { &[(1000, 777), (256, 256)] } else { &[(1000, 777), (8192, 8192)] };
        transposes(&device, shapes, iters, &mut rows);
    }
    if wants("matmul") {
        let shapes: &[(usize, usize, usize, usize)] = if quick {
            &[(1, 128, 64, 128), (1, 100, 77, 130), (2, 64, 32, 64)]
        } else {
            &[(1, 4096, 4096, 4096), (1, 1000, 777, 1234), (8, 1024, 1024, 1024)]
        };
        matmuls(&device, shapes, iters.min(10), &mut rows);
    }
    for p in onekernel::ops::tuning::picks(&device) {
        println!("tuned: {} {} -> {} ({:?}): {}", p.op, p.key, p.plan, p.source, p.candidate_times());
    }
    println!("{}\n", device.name());
    println!("| op | shape | kernels (ms) | wall (ms) | rate |");
    println!("|---|---|---:|---:|---:|");
    for r in rows {
        println!("| {} | {} | {:.4} | {:.4} | {} |", r.op, r.shape, r.kernels_ms, r.wall_ms, r.rate);
    }
}
