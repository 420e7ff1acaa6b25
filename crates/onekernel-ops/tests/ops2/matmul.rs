//! `ops::matmul` against a plain-Rust product in `f64`.

use super::common::{gpu, hash};
use onekernel::ops::matmul::{has_tiles, matmul, matmul_f16_with, matmul_with, Layout, Shape};
use onekernel::prelude::*;

/// Multiples of 1/8 in [-1, 1]: products and sums exact in `f32` for the
/// sizes here, so every kernel must agree exactly.
fn data(len: usize, seed: u32) -> Vec<f32> {
    (0..len).map(|i| (hash(i, seed) % 17) as f32 / 8.0 - 1.0).collect()
}

/// `a` (row-major `m × k` per batch) in `layout`.
fn store(x: &[f32], rows: usize, cols: usize, batch: usize, layout: Layout) -> Vec<f32> {
    if layout == Layout::RowMajor {
        return x.to_vec();
    }
    let mut t = vec![0.0; x.len()];
    for p in 0..batch {
        for r in 0..rows {
            for c in 0..cols {
                t[p * rows * cols + c * rows + r] = x[p * rows * cols + r * cols + c];
            }
        }
    }
    t
}

fn reference(a: &[f32], b: &[f32], s: Shape) -> Vec<f32> {
    let mut c = vec![0.0f64; s.batch * s.m * s.n];
    for p in 0..s.batch {
        for r in 0..s.m {
            for j in 0..s.k {
                let x = f64::from(a[p * s.m * s.k + r * s.k + j]);
                for col in 0..s.n {
                    c[p * s.m * s.n + r * s.n + col] += x * f64::from(b[p * s.k * s.n + j * s.n + col]);
                }
            }
        }
    }
    c.into_iter().map(|v| v as f32).collect()
}

fn check(device: &Device, s: Shape, kernels: bool) {
    let (a, b) = (data(s.batch * s.m * s.k, 1), data(s.batch * s.k * s.n, 2));
    let want = reference(&a, &b, s);
    for la in [Layout::RowMajor, Layout::Transposed] {
        for lb in [Layout::RowMajor, Layout::Transposed] {
            let ab = Buffer::from_slice(device, &store(&a, s.m, s.k, s.batch, la)).unwrap();
            let bb = Buffer::from_slice(device, &store(&b, s.k, s.n, s.batch, lb)).unwrap();
            let mut c = Buffer::<f32>::from_slice(device, &vec![f32::NAN; want.len()]).unwrap();
            matmul_with(device, &ab, la, &bb, lb, &mut c, s, kernels).unwrap();
            assert!(c.read().unwrap() == want, "{s:?} {la:?} {lb:?} on {}", device.name());
        }
    }
    let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    let ab = Buffer::from_slice(device, &h(&a)).unwrap();
    let bb = Buffer::from_slice(device, &h(&b)).unwrap();
    let mut c = Buffer::<f32>::zeroed(device, want.len()).unwrap();
    matmul_f16_with(device, &ab, &bb, &mut c, s, kernels).unwrap();
    assert!(c.read().unwrap() == want, "f16 {s:?} on {}", device.name());
}

#[test]
fn matmul_any_shape_on_the_gpu() {
    let gpu = gpu();
    eprintln!("matrix tiles on {}: {}", gpu.name(), has_tiles(&gpu));
    for s in [
        Shape::new(1, 1, 1),
        Shape::new(2, 3, 5),
        Shape::new(31, 33, 32),
        Shape::new(130, 9, 129),
        Shape::new(128, 16, 256),
        Shape::new(257, 40, 1),
        Shape::new(3, 0, 4),
        Shape::batched(3, 128, 32, 128),
        Shape::batched(2, 33, 17, 65),
    ] {
        check(&gpu, s, false);
    }
}

#[test]
fn matmul_kernels_on_the_cpu_executor() {
    let cpu = Device::cpu();
    for s in [Shape::new(2, 3, 5), Shape::new(130, 9, 129), Shape::new(128, 16, 128), Shape::batched(2, 33, 17, 65)] {
        check(&cpu, s, true);
    }
}

#[test]
fn matmul_cpu_implementation() {
    let cpu = Device::cpu();
    for s in [Shape::new(1, 1, 1), Shape::new(2, 3, 5), Shape::new(3, 0, 4), Shape::batched(3, 31, 33, 257)] {
        check(&cpu, s, false);
    }
}

#[test]
fn matmul_errors_name_the_buffer() {
    let device = Device::cpu();
    let a = Buffer::from_slice(&device, &[1.0f32; 6]).unwrap();
    let e = matmul(&device, &a, Layout::RowMajor, &a, Layout::RowMajor, Shape::new(2, 3, 3)).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("ops::matmul") && e.contains('b'), "{e}");
}

#[test]
fn the_tiled_product_takes_the_ops_tuner() {
    // The tile of a product that tiles fit is the ops' tuner's choice: it
    // follows `tuning::set_mode` and `set_cache_dir`, and lists its pick.
    use onekernel::ops::tuning::{self, Mode, Source};
    let d = gpu();
    let dir = tempfile::tempdir().unwrap();
    tuning::set_cache_dir(&d, dir.path());
    let s = Shape { batch: 1, m: 64, k: 32, n: 128 };
    let (a, b) = (data(s.m * s.k, 61), data(s.k * s.n, 62));
    let (ab, bb) = (Buffer::from_slice(&d, &a).unwrap(), Buffer::from_slice(&d, &b).unwrap());
    let want = reference(&a, &b, s);
    for (mode, source) in [(Mode::Off, Source::Default), (Mode::Full, Source::Tuned), (Mode::Cached, Source::Cached)] {
        tuning::set_mode(&d, mode);
        let c = matmul(&d, &ab, Layout::RowMajor, &bb, Layout::RowMajor, s).unwrap().read().unwrap();
        assert_eq!(c, want, "{mode:?}");
        let picks = tuning::picks(&d);
        let pick = picks.iter().find(|p| p.op == "ops::matmul").unwrap_or_else(|| panic!("{mode:?}: {picks:?}"));
        assert_eq!(pick.source, source, "{mode:?}: {pick:?}");
        assert!(pick.plan.starts_with("v4_"), "{pick:?}");
    }
}
