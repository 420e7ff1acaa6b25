//! `ops::norm` against plain Rust in `f64`.

use super::common::hash;
use onekernel::ops::norm::{
    layer_norm, row_op_with, softmax, vector_configs, RowElement, RowOp, COUNT, STREAM, STREAM_CONFIGS, VEC_CONFIGS,
};
use onekernel::ops::tuning::{self, Mode, Source};
use onekernel::prelude::*;

const EPS: f32 = 1e-5;

/// The GPU with the ops' tuners off: each call runs the default config
/// (every config is run by `vector_kernels_at_every_config`, and
/// `the_norms_tune_on_a_gpu` tunes on a device of its own).
fn gpu() -> Device {
    let d = super::common::gpu();
    tuning::set_mode(&d, Mode::Off);
    d
}

/// Each op of `row`, in f64, with `gamma`/`beta` applied to the norms.
fn reference(op: RowOp, row: &[f64], g: Option<&[f64]>, b: Option<&[f64]>) -> Vec<f64> {
    let n = row.len() as f64;
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let out: Vec<f64> = match op {
        RowOp::Softmax => {
            let s: f64 = row.iter().map(|&e| (e - max).exp()).sum();
            row.iter().map(|&e| (e - max).exp() / s).collect()
        }
        RowOp::LogSoftmax => {
            let s: f64 = row.iter().map(|&e| (e - max).exp()).sum();
            row.iter().map(|&e| e - max - s.ln()).collect()
        }
        RowOp::LayerNorm { eps } => {
            let mean = row.iter().sum::<f64>() / n;
            let var = row.iter().map(|&e| (e - mean).powi(2)).sum::<f64>() / n;
            row.iter().map(|&e| (e - mean) / (var + f64::from(eps)).sqrt()).collect()
        }
        RowOp::RmsNorm { eps } => {
            let ms = row.iter().map(|&e| e * e).sum::<f64>() / n;
            row.iter().map(|&e| e / (ms + f64::from(eps)).sqrt()).collect()
        }
    };
    if matches!(op, RowOp::Softmax | RowOp::LogSoftmax) {
        return out;
    }
    out.iter().enumerate().map(|(j, &r)| r * g.map_or(1.0, |g| g[j]) + b.map_or(0.0, |b| b[j])).collect()
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| (hash(i, seed) >> 8) as f32 / (1u32 << 24) as f32 * 8.0 - 4.0).collect()
}

/// Every op at `rows × cols` on `device`, `T` rounded inputs, within `tol`
/// (relative to the row's largest result, at least 1).
fn check<T: RowElement>(device: &Device, rows: usize, cols: usize, kernels: bool, tol: f64) {
    check_at::<T>(device, rows, cols, kernels, tol, None);
}

/// [`check`] with the vector kernel's `[WG, PER, TPR]` given.
fn check_at<T: RowElement>(
    device: &Device,
    rows: usize,
    cols: usize,
    kernels: bool,
    tol: f64,
    config: Option<[usize; 4]>,
) {
    let xs: Vec<T> = data(rows * cols, cols as u32).into_iter().map(T::narrow).collect();
    let gs: Vec<T> = (0..cols).map(|j| T::narrow(1.0 + (j % 13) as f32 / 16.0)).collect();
    let bs: Vec<T> = (0..cols).map(|j| T::narrow((j % 7) as f32 / 8.0 - 0.4)).collect();
    let wide = |v: &[T]| v.iter().map(|e| f64::from(e.widen())).collect::<Vec<_>>();
    let (x64, g64, b64) = (wide(&xs), wide(&gs), wide(&bs));
    let x = Buffer::from_slice(device, &xs).unwrap();
    let g = Buffer::from_slice(device, &gs).unwrap();
    let b = Buffer::from_slice(device, &bs).unwrap();
    let mut y = Buffer::<T>::zeroed(device, rows * cols).unwrap();
    let cases = [
        (RowOp::Softmax, None, None),
        (RowOp::LogSoftmax, None, None),
        (RowOp::LayerNorm { eps: EPS }, Some(&g), Some(&b)),
        (RowOp::LayerNorm { eps: EPS }, None, None),
        (RowOp::RmsNorm { eps: EPS }, Some(&g), None),
    ];
    for (op, gb, bb) in cases {
        row_op_with(device, op, &x, gb, bb, &mut y, cols, kernels, config).unwrap();
        let got = wide(&y.read().unwrap());
        for r in 0..rows {
            let row = &x64[r * cols..(r + 1) * cols];
            let want = reference(op, row, gb.map(|_| &g64[..]), bb.map(|_| &b64[..]));
            let scale = if op == RowOp::Softmax { cols as f64 } else { 1.0 };
            for j in 0..cols {
                let (gv, wv) = (got[r * cols + j] * scale, want[j] * scale);
                assert!(
                    (gv - wv).abs() <= tol * wv.abs().max(1.0),
                    "{op:?} {} {rows}x{cols} {config:?} on {} [{r}][{j}]: got {gv}, want {wv}",
                    std::any::type_name::<T>(),
                    device.name()
                );
            }
        }
    }
}

#[test]
fn norms_on_the_gpu_at_every_width() {
    let gpu = gpu();
    for (rows, cols) in [
        (1, 1),
        (3, 2),
        (5, 31),
        (2, 32),
        (9, 33),
        (2, 127),
        (3, 128),
        (17, 100),
        (4, 129),
        (4, 255),
        (2, 257),
        (3, 1000),
        (1, 1009),
        (2, 4096),
        (1, 4097),
        (2, 32768),
        (1, 33001),
    ] {
        check::<f32>(&gpu, rows, cols, false, 2e-5);
        check::<f16>(&gpu, rows, cols, false, 4e-3);
    }
}

#[test]
fn vector_kernels_at_every_config() {
    // Every `[WG, PER, TPR]` the ops may launch, on the GPU, at widths
    // (multiples of 4) a thread, a subgroup, a held row and past it, with
    // rows that leave a block part full.
    let gpu = gpu();
    let (sg_min, sg_max) = gpu.subgroup_sizes().map(|(a, b)| (a as usize, b as usize)).unwrap();
    for config in VEC_CONFIGS {
        let tpr = config[2];
        // A fraction of a subgroup per row needs a fixed subgroup size;
        // whole subgroups per row need a multiple of the widest.
        let fraction = sg_min == sg_max && tpr <= sg_min;
        let whole = tpr >= sg_max && tpr % sg_max == 0;
        if !(fraction || whole) {
            continue;
        }
        let [wg, per, tpr] = config;
        for (rows, cols) in [(1, 4), (37, 32), (5, 128), (3, 1000), (2, 4100), (1, 36864)] {
            check_at::<f32>(&gpu, rows, cols, false, 2e-5, Some([wg, per, tpr, 0]));
            check_at::<f16>(&gpu, rows, cols, false, 4e-3, Some([wg, per, tpr, 0]));
            // The f16 kernel holding its numbers as read.
            check_at::<f16>(&gpu, rows, cols, false, 4e-3, Some([wg, per, tpr, 1]));
        }
        // Softmax in two passes where the row is held (HELD bit 1).
        for (rows, cols) in [(37, 32), (3, 1000)] {
            check_at::<f32>(&gpu, rows, cols, false, 2e-5, Some([wg, per, tpr, 2]));
            check_at::<f16>(&gpu, rows, cols, false, 4e-3, Some([wg, per, tpr, 3]));
        }
    }
}

/// The stream configs `device` can launch (rows of `TPR` lanes of one
/// subgroup: any on the CPU executor, whose subgroups are 32 lanes).
fn stream_configs(device: &Device) -> Vec<[usize; 3]> {
    let (sg_min, sg_max) = device.subgroup_sizes().map_or((32, 32), |(a, b)| (a as usize, b as usize));
    STREAM_CONFIGS.into_iter().filter(|c| sg_min == sg_max && c[2] <= sg_min).collect()
}

#[test]
fn stream_kernels_at_every_config() {
    // The stream kernel at each config, on the CPU executor and the GPU:
    // widths of one vector, 32 vectors and either side of it, 1000, the
    // widest row the config holds and less; rows that leave the
    // grid's last step part full; 1, 2 and 4 rows a lane group.
    for (device, kernels) in [(Device::cpu(), true), (gpu(), false)] {
        for [wg, per, tpr] in stream_configs(&device) {
            let held = 4 * per * tpr;
            let mut widths = vec![4, 124, 128, 132, 1000, held - 4, held];
            widths.retain(|&w| w <= held);
            widths.sort_unstable();
            widths.dedup();
            for (i, &cols) in widths.iter().enumerate() {
                let rows = [37, 5, 70, 3, 9, 4, 2][i];
                for held_bits in [STREAM, STREAM | (2 * COUNT), STREAM | (4 * COUNT)] {
                    let c = Some([wg, per, tpr, held_bits]);
                    check_at::<f32>(&device, rows, cols, kernels, 2e-5, c);
                    check_at::<f16>(&device, rows, cols, kernels, 4e-3, c);
                }
            }
            // A row wider than the config holds is an error naming it.
            let x = Buffer::from_slice(&device, &vec![1.0f32; 2 * held + 8]).unwrap();
            let mut y = Buffer::<f32>::zeroed(&device, x.len()).unwrap();
            let e = row_op_with(
                &device,
                RowOp::Softmax,
                &x,
                None,
                None,
                &mut y,
                held + 4,
                kernels,
                Some([wg, per, tpr, STREAM]),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("ops::norm") && e.contains("config"), "{e}");
        }
    }
}

#[test]
fn norms_kernel_on_the_cpu_executor() {
    let cpu = Device::cpu();
    for (rows, cols) in [(1, 1), (9, 33), (17, 100), (2, 257), (1, 4097)] {
        check::<f32>(&cpu, rows, cols, true, 2e-5);
        check::<f16>(&cpu, rows, cols, true, 4e-3);
    }
}

#[test]
fn norms_cpu_implementation() {
    let cpu = Device::cpu();
    for (rows, cols) in [(1, 1), (3, 2), (9, 33), (3, 128), (2, 257), (3, 1000), (1, 4097)] {
        check::<f32>(&cpu, rows, cols, false, 2e-5);
        check::<f16>(&cpu, rows, cols, false, 4e-3);
    }
}

#[test]
fn norms_of_infinities_and_empty_rows() {
    for device in [Device::cpu(), gpu()] {
        let x = Buffer::from_slice(&device, &[f32::NEG_INFINITY, 0.0, 0.0, -0.0]).unwrap();
        let y = softmax(&device, &x, 2).unwrap().read().unwrap();
        assert_eq!(y, [0.0, 1.0, 0.5, 0.5], "on {}", device.name());
        let empty = Buffer::<f32>::zeroed(&device, 0).unwrap();
        assert!(layer_norm(&device, &empty, None, None, 4, EPS).unwrap().is_empty());
        let e = softmax(&device, &x, 3).unwrap_err().to_string();
        assert!(e.contains("ops::norm") && e.contains("x"), "{e}");
    }
}

#[test]
fn vector_softmax_of_infinite_numbers() {
    // Rows of 8 (two vectors): a thread whose numbers are all -inf (the
    // online softmax's merge of a -inf maximum), -inf among finite ones.
    let n = f32::NEG_INFINITY;
    let x = [n, 0.0, 1.0, n, 2.0, n, n, 0.0, n, n, n, n, 0.5, 0.0, -1.0, 3.0];
    let gpu = gpu();
    let (sg_min, sg_max) = gpu.subgroup_sizes().map(|(a, b)| (a as usize, b as usize)).unwrap();
    let mut configs: Vec<Option<[usize; 4]>> = vec![None];
    for [wg, per, tpr] in VEC_CONFIGS {
        if (sg_min == sg_max && tpr <= sg_min) || (tpr >= sg_max && tpr % sg_max == 0) {
            configs.extend([Some([wg, per, tpr, 0]), Some([wg, per, tpr, 2])]);
        }
    }
    for device in [Device::cpu(), gpu.clone()] {
        // The stream kernel too (on the CPU executor through its kernel).
        let mut configs = configs.clone();
        let kernels = !device.is_gpu();
        if kernels {
            configs = vec![None];
        }
        for [wg, per, tpr] in stream_configs(&device) {
            configs.extend([Some([wg, per, tpr, STREAM]), Some([wg, per, tpr, STREAM | (2 * COUNT)])]);
        }
        for &config in &configs {
            for op in [RowOp::Softmax, RowOp::LogSoftmax] {
                let want: Vec<f64> = x
                    .chunks(8)
                    .flat_map(|r| reference(op, &r.iter().map(|&e| f64::from(e)).collect::<Vec<_>>(), None, None))
                    .collect();
                let xb = Buffer::from_slice(&device, &x).unwrap();
                let mut y = Buffer::<f32>::zeroed(&device, x.len()).unwrap();
                row_op_with(&device, op, &xb, None, None, &mut y, 8, kernels && config.is_some(), config).unwrap();
                let got = y.read().unwrap();
                for (j, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    let ok = if w.is_infinite() { f64::from(g) == w } else { (f64::from(g) - w).abs() <= 1e-5 };
                    assert!(ok, "{op:?} {config:?} on {} [{j}]: got {g}, want {w}", device.name());
                }
                // f16, held as read too.
                let xh: Vec<f16> = x.iter().map(|&e| f16::from_f32(e)).collect();
                let xb = Buffer::from_slice(&device, &xh).unwrap();
                let mut y = Buffer::<f16>::zeroed(&device, x.len()).unwrap();
                let held = config.filter(|c| c[3] & STREAM == 0).map(|[a, b, c, d]| [a, b, c, d | 1]);
                for c in [config, held].into_iter().filter(|c| c.is_some() || config.is_none()) {
                    row_op_with(&device, op, &xb, None, None, &mut y, 8, kernels && c.is_some(), c).unwrap();
                    let got = y.read().unwrap();
                    for (j, (&g, &w)) in got.iter().zip(&want).enumerate() {
                        let g = f64::from(g.to_f32());
                        let ok = if w.is_infinite() { g == w } else { (g - w).abs() <= 4e-3 * w.abs().max(1.0) };
                        assert!(ok, "f16 {op:?} {c:?} on {} [{j}]: got {g}, want {w}", device.name());
                    }
                }
            }
        }
    }
}

#[test]
fn the_norms_tune_on_a_gpu() {
    // A device and a cache of its own: the first call times every config
    // the width has (each checked against the default's output), keeps
    // the fastest, and a tuner that only reads the cache finds it there.
    let d = super::common::gpu();
    let dir = tempfile::tempdir().unwrap();
    tuning::set_cache_dir(&d, dir.path());
    tuning::set_mode(&d, Mode::Full);
    let (rows, cols) = (33, 1000);
    let xs = data(rows * cols, 7);
    let x = Buffer::from_slice(&d, &xs).unwrap();
    let mut y = Buffer::<f32>::zeroed(&d, rows * cols).unwrap();
    let configs = vector_configs::<f32>(&d, cols);
    assert!(configs.len() > 1, "{configs:?}: nothing to tune");
    let check = |y: &Buffer<f32>| {
        let got = y.read().unwrap();
        for r in 0..rows {
            let row: Vec<f64> = xs[r * cols..(r + 1) * cols].iter().map(|&e| f64::from(e)).collect();
            let want = reference(RowOp::Softmax, &row, None, None);
            for j in 0..cols {
                let (g, w) = (f64::from(got[r * cols + j]), want[j]);
                assert!((g - w).abs() * cols as f64 <= 2e-5 * (w * cols as f64).max(1.0), "[{r}][{j}]: {g} {w}");
            }
        }
    };
    row_op_with(&d, RowOp::Softmax, &x, None, None, &mut y, cols, false, None).unwrap();
    check(&y);
    let picks = tuning::picks(&d);
    let pick = picks.iter().find(|p| p.op == "ops::norm").expect("a pick of ops::norm");
    assert_eq!(pick.source, Source::Tuned, "{pick:?}");
    assert!(pick.key.contains("softmax") && pick.key.contains("1024"), "{pick:?}");
    // One outcome a config, each timed (none dropped: all agree).
    assert_eq!(pick.outcomes.len(), configs.len(), "{pick:?}");
    assert!(pick.outcomes.iter().all(|o| o.result.is_ok()), "{}", pick.candidate_times());
    tuning::set_mode(&d, Mode::Cached);
    y = Buffer::<f32>::zeroed(&d, rows * cols).unwrap();
    row_op_with(&d, RowOp::Softmax, &x, None, None, &mut y, cols, false, None).unwrap();
    check(&y);
    let again = tuning::picks(&d);
    let p2 = again.iter().find(|p| p.op == "ops::norm").expect("a pick");
    assert_eq!((p2.source, &p2.plan), (Source::Cached, &pick.plan));
}
