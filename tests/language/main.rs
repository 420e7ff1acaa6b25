//! The language suite: every construct of the subset, run on the CPU
//! executor and on the GPU (wgpu; Mesa's lavapipe in CI), compared with
//! each other and with a plain-Rust reference, at several sizes: one
//! element, sizes that are not multiples of the workgroup size, and a grid
//! of more than 65535 workgroups. The WGSL of every kernel is snapshotted
//! (`snapshots.rs`) and its SPIR-V checked by `spirv-val` (`spirv.rs`).
//!
//! GPU tests never skip: without an adapter they fail.

mod cases;
mod consts;
mod kernels;
mod reference;
mod snapshots;
mod spirv;

use onekernel::prelude::*;
use onekernel::{abi::Features, LaunchError};
use std::sync::OnceLock;

/// One GPU device for the whole binary (lavapipe's JIT is slow to start).
fn gpu() -> &'static Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| match Device::gpu() {
        Ok(d) => d,
        Err(e) => panic!("GPU tests need a GPU adapter (CI uses Mesa's lavapipe; see .ci/run): {e}"),
    })
}

fn cpu() -> &'static Device {
    static CPU: OnceLock<Device> = OnceLock::new();
    CPU.get_or_init(Device::cpu)
}

/// Sizes every kernel runs at: 1, below/above one workgroup, not
/// multiples of it.
const SIZES: [usize; 4] = [1, 63, 257, 1000];

/// Deterministic pseudo-random data, with edge values at the front.
fn ints(n: usize, seed: u32, range: i32) -> Vec<i32> {
    let mut s: u32 = seed.wrapping_mul(2654435761).wrapping_add(1);
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            match i {
                0 => 0,
                1 => -1,
                2 => range,
                3 => -range,
                _ => (s as i64 % (2 * range as i64 + 1) - range as i64) as i32,
            }
        })
        .collect()
}

fn floats(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    ints(n, seed, 1_000_000).into_iter().map(|v| v as f32 / 1_000_000.0 * scale).collect()
}

/// Runs `f` on the CPU executor and on the GPU.
fn on_both<R>(f: impl Fn(&Device) -> R) -> (R, R) {
    (f(cpu()), f(gpu()))
}

fn buf<T: onekernel::Element>(d: &Device, v: &[T]) -> Buffer<T> {
    Buffer::from_slice(d, v).unwrap()
}

fn zeros<T: onekernel::Element>(d: &Device, n: usize) -> Buffer<T> {
    Buffer::zeroed(d, n).unwrap()
}

/// Floats agree within a relative error of `rel` (absolute below 1), or
/// are both NaN.
#[track_caller]
fn assert_close(what: &str, got: &[f32], want: &[f32], rel: f32) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()) {
            continue;
        }
        assert!((g - w).abs() <= rel * w.abs().max(1.0), "{what}[{i}]: got {g:e}, want {w:e}");
    }
}

fn vector_add_every_size() {
    for n in SIZES.into_iter().chain([256 * 70_000]) {
        let a = floats(n, 1, 100.0);
        let b = floats(n, 2, 100.0);
        let mut want = vec![0.0; n];
        reference::vector_add(n, &a, &b, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::vector_add::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn integer_operators() {
    for n in SIZES {
        let a = ints(n, 3, 1_000_000);
        let b = ints(n, 4, 5000);
        let mut want = vec![0; n * 12];
        reference::int_ops(n, &a, &b, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 12);
            kernels::int_ops::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
        let a: Vec<u32> = ints(n, 5, 1 << 30).into_iter().map(|v| v as u32).collect();
        let b: Vec<u32> = ints(n, 6, 1 << 30).into_iter().map(|v| v as u32).collect();
        let mut want = vec![0; n * 8];
        reference::uint_ops(n, &a, &b, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 8);
            kernels::uint_ops::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn float_operators_and_bools() {
    for n in SIZES {
        let a = floats(n, 7, 10.0);
        let mut b = floats(n, 8, 10.0);
        if n > 5 {
            b[5] = a[5]; // equality
        }
        let (mut want, mut want_flags) = (vec![0.0; n * 6], vec![0; n]);
        reference::float_ops(n, &a, &b, &mut want, &mut want_flags);
        let (c, g) = on_both(|d| {
            let (mut out, mut flags) = (zeros(d, n * 6), zeros(d, n));
            kernels::float_ops::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out, &mut flags).unwrap();
            (out.read().unwrap(), flags.read().unwrap())
        });
        assert_eq!(c, (want.clone(), want_flags.clone()), "cpu, n = {n}");
        // WGSL allows 2.5 ulp for division.
        assert_close("gpu float_ops", &g.0, &want, 1e-6);
        assert_eq!(g.1, want_flags, "gpu flags, n = {n}");
    }
}

fn casts_follow_rust() {
    for n in SIZES {
        let mut f = floats(n, 9, 3e9);
        let specials =
            [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 2147483648.0, -2147483904.0, 4294967296.0, -0.7, 0.7, 1e10];
        for (slot, v) in f.iter_mut().zip(specials) {
            *slot = v;
        }
        let k = ints(n, 10, i32::MAX);
        let (mut wi, mut wu, mut wf) = (vec![0; n * 3], vec![0; n * 3], vec![0.0; n * 3]);
        reference::casts(n, &f, &k, &mut wi, &mut wu, &mut wf);
        let (c, g) = on_both(|d| {
            let (mut i, mut u, mut fl) = (zeros(d, n * 3), zeros(d, n * 3), zeros(d, n * 3));
            kernels::casts::launch(d, n, &buf(d, &f), &buf(d, &k), &mut i, &mut u, &mut fl).unwrap();
            (i.read().unwrap(), u.read().unwrap(), fl.read().unwrap())
        });
        assert_eq!(c, (wi.clone(), wu.clone(), wf.clone()), "cpu, n = {n}");
        assert_eq!(g.0, wi, "gpu ints, n = {n}");
        assert_eq!(g.1, wu, "gpu uints, n = {n}");
        assert_eq!(g.2, wf, "gpu floats, n = {n}");
    }
}

fn float_math_methods() {
    for n in SIZES {
        let a = floats(n, 11, 8.0);
        let b = floats(n, 12, 8.0);
        let mut want = vec![0.0; n * 30];
        reference::float_math(n, &a, &b, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 30);
            kernels::float_math::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        // Transcendentals are approximations on GPUs (WGSL allows several
        // ulp); the exact ones (abs, floor, round, min, ...) are checked
        // bit for bit below.
        assert_close("gpu float_math", &g, &want, 1e-4);
        for (i, (gv, wv)) in g.iter().zip(&want).enumerate() {
            if [0, 12, 13, 14, 15, 16, 17, 18, 20, 21].contains(&(i % 30)) {
                assert_eq!(gv.to_bits(), wv.to_bits(), "exact method #{} of element {}: {gv} vs {wv}", i % 30, i / 30);
            }
        }
    }
}

fn integer_math_methods() {
    for n in SIZES {
        let a = ints(n, 13, 100_000);
        let b: Vec<u32> = ints(n, 14, i32::MAX).into_iter().map(|v| v as u32).collect();
        let (mut wi, mut wu) = (vec![0; n * 6], vec![0; n * 6]);
        reference::int_math(n, &a, &b, &mut wi, &mut wu);
        let (c, g) = on_both(|d| {
            let (mut i, mut u) = (zeros(d, n * 6), zeros(d, n * 6));
            kernels::int_math::launch(d, n, &buf(d, &a), &buf(d, &b), &mut i, &mut u).unwrap();
            (i.read().unwrap(), u.read().unwrap())
        });
        assert_eq!(c, (wi.clone(), wu.clone()), "cpu, n = {n}");
        assert_eq!(g, (wi, wu), "gpu, n = {n}");
    }
}

fn control_flow_constructs() {
    for n in SIZES {
        let mut a = ints(n, 15, 300);
        if n > 10 {
            a[10] = 24690; // the early-return path (x / 2 == 12345)
        }
        let mut want = vec![0; n];
        reference::control_flow(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::control_flow::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn builtins_on_a_2d_grid() {
    for (w, h) in [(1usize, 1usize), (8, 4), (21, 13), (64, 3)] {
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, w * h * 8);
            kernels::builtins_2d::launch(d, Grid::threads([w, h]), &mut out, w as u32).unwrap();
            out.read().unwrap()
        });
        // Reference: the values a 2-D launch of ceil(w/8) x ceil(h/4)
        // blocks of 8 x 4 threads gives.
        let (bx, by) = (w.div_ceil(8), h.div_ceil(4));
        let mut want = vec![0u32; w * h * 8];
        for y in 0..h {
            for x in 0..w {
                let o = (y * w + x) * 8;
                want[o..o + 8].copy_from_slice(&[
                    x as u32,
                    y as u32,
                    (x % 8 + (y % 4) * 100) as u32,
                    (x / 8 + (y / 4) * 1000) as u32,
                    8 * 10 + 4 + 100,
                    (bx * 1000 + by + 7) as u32,
                    0,
                    1,
                ]);
            }
        }
        assert_eq!(c, want, "cpu {w}x{h}");
        assert_eq!(g, want, "gpu {w}x{h}");
    }
    // Workgroup counts given directly, in three dimensions.
    let (c, g) = on_both(|d| {
        // 16 wide, 2 blocks of 4 high, 3 deep, 8 words per thread.
        let mut out = zeros(d, 16 * 8 * 3 * 8);
        kernels::builtins_2d::launch(d, Grid::blocks([2, 2, 3]), &mut out, 16).unwrap();
        out.read().unwrap()
    });
    assert_eq!(c, g, "3-D block grid");
    assert!(c.chunks(8).all(|t| t[7] == 1), "every thread of the 3-D grid wrote its slot");
}

fn grid_of_more_than_65535_workgroups() {
    // Blocks of 2 threads: 75_001 blocks (folded as one exact 2-D
    // dispatch), 65_537 blocks (a prime: full rows plus a remainder
    // dispatch) and 2^17 blocks.
    for n in [150_001usize, 2 * 65_537, 2 << 17] {
        let groups = n.div_ceil(2);
        let want: Vec<u32> = (0..n).map(|i| i as u32 ^ groups as u32).collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::folded_ids::launch(d, n, &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn helpers_and_uniform_scalars() {
    for n in SIZES {
        let a = floats(n, 16, 2.0);
        let (mut want, mut want_steps) = (vec![0.0; n], vec![0; n]);
        reference::helpers_and_scalars(n, &a, &mut want, &mut want_steps, -0.5, 1.5, -3, 4);
        let (c, g) = on_both(|d| {
            let (mut out, mut steps) = (zeros(d, n), zeros(d, n));
            kernels::helpers_and_scalars::launch(d, n, &buf(d, &a), &mut out, &mut steps, -0.5, 1.5, -3, 4).unwrap();
            (out.read().unwrap(), steps.read().unwrap())
        });
        assert_eq!(c, (want.clone(), want_steps.clone()), "cpu, n = {n}");
        assert_close("gpu helpers", &g.0, &want, 1e-6);
        assert_eq!(g.1, want_steps, "gpu, n = {n}");
    }
}

fn literals_are_typed_as_rustc_types_them() {
    for n in SIZES {
        let (mut want, mut fwant) = (vec![0; n], vec![0.0; n]);
        reference::literals(n, &mut want, &mut fwant);
        let (c, g) = on_both(|d| {
            let (mut out, mut f) = (zeros(d, n), zeros(d, n));
            kernels::literals::launch(d, n, &mut out, &mut f).unwrap();
            (out.read().unwrap(), f.read().unwrap())
        });
        assert_eq!(c, (want.clone(), fwant.clone()), "cpu, n = {n}");
        assert_eq!(g, (want, fwant), "gpu, n = {n}");
    }
}

fn local_arrays() {
    for n in SIZES {
        let a = floats(n, 17, 4.0);
        let mut want = vec![0.0; n * 4];
        reference::local_arrays(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 4);
            kernels::local_arrays::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        // The sum's loop is unrolled on the GPU, where the driver may fuse
        // `s += acc[j] * w[j % 3]` into fmas (docs/semantics.md); the terms
        // reach ~100 and cancel, so allow a few ulps of them.
        assert_close("gpu local_arrays", &g, &want, 1e-5);
    }
}

fn unrolled_loops() {
    for n in SIZES {
        let a = floats(n, 23, 4.0);
        let mut want = vec![0.0; n];
        reference::unrolled(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::unrolled::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_close("gpu unrolled", &g, &want, 1e-6);
        let mut want = vec![0.0; n];
        reference::unrolled_in_helper(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::unrolled_in_helper::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        // The driver may fuse `s * x + c` into an fma (docs/semantics.md).
        assert_close("cpu unrolled_in_helper", &c, &want, 1e-6);
        assert_close("gpu unrolled_in_helper", &g, &want, 1e-5);
    }
    // The helper's loop is unrolled in the kernel's module: four copies, no loop.
    let wgsl = kernels::unrolled_in_helper::WGSL;
    assert!(!wgsl.contains("loop"), "{wgsl}");
}

fn split_arrays() {
    for n in SIZES {
        let a = floats(n, 29, 4.0);
        let mut want = vec![0.0; n * 3];
        reference::split_arrays(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 3);
            kernels::split_arrays::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        // The driver may fuse `p[j] * x + j` into an fma (docs/semantics.md).
        assert_close("gpu split_arrays", &g, &want, 1e-5);
    }
}

fn tuples_and_integer_match() {
    for n in SIZES {
        let mut a = ints(n, 18, 2000);
        for (slot, v) in a.iter_mut().zip([0, 1, 3, -5, -1, 10, 19, 20, i32::MIN, -1000, -999, i32::MAX]) {
            *slot = v;
        }
        let mut want = vec![0; n * 4];
        reference::tuples_and_match(n, &a, &mut want);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 4);
            kernels::tuples_and_match::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn more_methods_on_edge_values() {
    for n in SIZES {
        let mut f = floats(n, 19, 50.0);
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, -8.0, 27.0, 1e-30, -2.5, 7.25];
        for (slot, v) in f.iter_mut().zip(specials) {
            *slot = v;
        }
        let mut k = ints(n, 20, i32::MAX);
        for (slot, v) in k.iter_mut().zip([i32::MIN, -1, 0, i32::MAX, 7, -7]) {
            *slot = v;
        }
        let (mut wf, mut wi) = (vec![0.0; n * 2], vec![0; n * 8]);
        reference::more_methods(n, &f, &k, &mut wf, &mut wi);
        let (c, g) = on_both(|d| {
            let (mut fo, mut io) = (zeros(d, n * 2), zeros(d, n * 8));
            kernels::more_methods::launch(d, n, &buf(d, &f), &buf(d, &k), &mut fo, &mut io).unwrap();
            (fo.read().unwrap(), io.read().unwrap())
        });
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!((bits(&c.0), &c.1), (bits(&wf), &wi), "cpu, n = {n}");
        assert_eq!(g.1, wi, "gpu integers and bits, n = {n}");
        // cbrt is pow and one Newton step on the GPU; the float remainder
        // is WGSL's `x - y * trunc(x / y)` (docs/semantics.md).
        assert_close("gpu cbrt and rem_euclid", &g.0, &wf, 1e-5);
    }
}

fn ranges_end_where_rust_ends_them() {
    for n in [0u32, 1, 5, 70] {
        let count = 65;
        let mut want = vec![0; count];
        reference::ranges(count, &mut want, n);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, count);
            kernels::ranges::launch(d, count, &mut out, n).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu, n = {n}");
        assert_eq!(g, want, "gpu, n = {n}");
    }
}

fn vec4s(n: usize, seed: u32, scale: f32) -> Vec<Vec4> {
    floats(n * 4, seed, scale).chunks(4).map(Vec4::from_slice).collect()
}

fn lanes(v: &[Vec4]) -> Vec<f32> {
    v.iter().flat_map(|x| x.to_array()).collect()
}

fn float_vectors_follow_glam() {
    for n in SIZES {
        let a = vec4s(n, 21, 4.0);
        let mut b = vec4s(n, 22, 4.0);
        if n > 5 {
            b[5] = a[5]; // `==`
        }
        // `off` is glam's 12-byte `Vec3`: a uniform takes it.
        let (k, t, off) = (Vec4::new(0.5, -1.25, 2.0, 8.0), 0.75, Vec3::new(0.25, -0.5, 1.0));
        let (mut wv, mut ws) = (vec![Vec4::ZERO; n * 4], vec![0.0; n * 8]);
        reference::float_vectors(n, &a, &b, &mut wv, &mut ws, k, t, off);
        let (c, g) = on_both(|d| {
            let (mut out, mut sums) = (zeros(d, n * 4), zeros(d, n * 8));
            kernels::float_vectors::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out, &mut sums, k, t, off).unwrap();
            (out.read().unwrap(), sums.read().unwrap())
        });
        assert_eq!(c, (wv.clone(), ws.clone()), "cpu, n = {n}");
        // Lane sums (dot, length) may be added in another order, and
        // sqrt/division round within WGSL's ulps.
        assert_close("gpu vectors", &lanes(&g.0), &lanes(&wv), 1e-5);
        assert_close("gpu vector sums", &g.1, &ws, 1e-5);
    }
}

/// Bit-for-bit equality of float results, any NaN matching any NaN (the
/// GPU may set another payload or sign on a NaN).
#[track_caller]
fn assert_same_floats<T: Copy + PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T], is_nan: fn(T) -> bool) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(g == w || (is_nan(*g) && is_nan(*w)), "{what}[{i}]: got {g:?}, want {w:?}");
    }
}

fn int_vectors_follow_glam() {
    for n in SIZES {
        let ivec4s = |seed| -> Vec<IVec4> { ints(n * 4, seed, 1000).chunks(4).map(IVec4::from_slice).collect() };
        let (a, b) = (ivec4s(23), ivec4s(24));
        let u: Vec<UVec2> =
            ints(n * 2, 25, 1000).chunks(2).map(|c| UVec2::new(c[0].unsigned_abs(), c[1].unsigned_abs())).collect();
        let d = IVec4::new(3, -2, 7, 1);
        let (mut wi, mut wu) = (vec![IVec4::ZERO; n * 4], vec![UVec2::ZERO; n * 2]);
        reference::int_vectors(n, &a, &b, &u, &mut wi, &mut wu, d);
        let (c, g) = on_both(|dev| {
            let (mut out, mut uout) = (zeros(dev, n * 4), zeros(dev, n * 2));
            kernels::int_vectors::launch(dev, n, &buf(dev, &a), &buf(dev, &b), &buf(dev, &u), &mut out, &mut uout, d)
                .unwrap();
            (out.read().unwrap(), uout.read().unwrap())
        });
        assert_eq!(c, (wi.clone(), wu.clone()), "cpu, n = {n}");
        assert_eq!(g, (wi, wu), "gpu, n = {n}");
    }
}

fn wide_integers_on_both_devices() {
    assert!(gpu().features().contains(Features::INT64), "lavapipe offers SHADER_INT64");
    assert_eq!(kernels::wide_ints::KERNEL.features, Features::INT64);
    for n in SIZES {
        let a: Vec<i64> = ints(n, 21, 1_000_000)
            .into_iter()
            .enumerate()
            .map(|(i, v)| match i {
                4 => -3_000_000_000,
                5 => 50,
                _ => v as i64 * 9_000_000_007,
            })
            .collect();
        let b: Vec<u64> = ints(n, 22, 1_000_000)
            .into_iter()
            .enumerate()
            .map(|(i, v)| if i == 6 { u64::MAX - 5 } else { u64::from(v.unsigned_abs()) * 4_611_686_018 })
            .collect();
        let k = -7;
        let (mut want, mut uwant) = (vec![0; n * 8], vec![0; n * 8]);
        reference::wide_ints(n, &a, &b, k, &mut want, &mut uwant);
        let (c, g) = on_both(|d| {
            let (mut out, mut uout) = (zeros(d, n * 8), zeros(d, n * 8));
            kernels::wide_ints::launch(d, n, &buf(d, &a), &buf(d, &b), k, &mut out, &mut uout).unwrap();
            (out.read().unwrap(), uout.read().unwrap())
        });
        assert_eq!(c, (want.clone(), uwant.clone()), "cpu, n = {n}");
        for (what, got, want) in [("i64", &g.0, &want)] {
            if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                panic!("gpu {what}[{i}] (slot {}), n = {n}: got {}, want {}", i % 8, got[i], want[i]);
            }
        }
        if let Some(i) = (0..g.1.len()).find(|&i| g.1[i] != uwant[i]) {
            panic!("gpu u64[{i}] (slot {}), n = {n}: got {}, want {}", i % 8, g.1[i], uwant[i]);
        }
    }
}

fn vectors_in_memory() {
    for n in SIZES {
        let p: Vec<Vec3A> = floats(n * 3, 26, 8.0).chunks(3).map(Vec3A::from_slice).collect();
        let q: Vec<Vec2> = floats(n * 2, 27, 8.0).chunks(2).map(Vec2::from_slice).collect();
        let blocks = n.div_ceil(64);
        // Plain Rust: each block's tile, then what its threads compute.
        let (mut want, mut want_totals) = (vec![Vec3A::ZERO; n], vec![Vec4::ZERO; blocks]);
        for (block, total) in want_totals.iter_mut().enumerate() {
            let tile: Vec<Vec4> = (0..64)
                .map(|t| {
                    let i = block * 64 + t;
                    if i < n {
                        p[i].extend(q[i].x + q[i].y)
                    } else {
                        Vec4::ZERO
                    }
                })
                .collect();
            for t in 0..64 {
                let i = block * 64 + t;
                let mut acc = [Vec4::ZERO; 4];
                for j in 0..4 {
                    acc[j] = tile[(t + j) % 64];
                    acc[j].w *= 2.0;
                    acc[j][j] += 1.0;
                }
                acc[1].x += 1.0;
                let corner = acc[0].truncate() + acc[3].truncate() + Vec3::new(0.0, 0.0, acc[2][t % 4]);
                if i < n {
                    want[i] = Vec3A::from(corner) + Vec3A::new(p[i].z, p[i].y, p[i].x) * Vec3A::new(1.0, 0.5, 0.25);
                }
                if t == 0 {
                    *total = acc[0] + acc[1] + acc[2] + acc[3];
                }
            }
        }
        let (c, g) = on_both(|d| {
            let (mut out, mut totals) = (zeros(d, n), zeros(d, blocks));
            kernels::vectors_in_memory::launch(d, blocks * 64, &buf(d, &p), &buf(d, &q), &mut out, &mut totals)
                .unwrap();
            (out.read().unwrap(), totals.read().unwrap())
        });
        assert_eq!(c, (want.clone(), want_totals.clone()), "cpu, n = {n}");
        assert_eq!(g, (want, want_totals), "gpu, n = {n}");
    }
}

fn f64_and_f16_on_both_devices() {
    let wide = Features::F64.union(Features::F16).union(Features::INT64);
    assert!(gpu().features().contains(wide), "lavapipe offers SHADER_F64 and SHADER_F16");
    // `to_bits` makes a `u64`: the kernel needs 64-bit integers too.
    assert_eq!(kernels::wide_floats::KERNEL.features, wide);
    for n in SIZES {
        let mut a: Vec<f64> = floats(n, 23, 1000.0).into_iter().map(|v| f64::from(v) * 1.000001).collect();
        let mut h: Vec<f16> = floats(n, 24, 8.0).into_iter().map(f16::from_f32).collect();
        for (i, v) in [f64::NAN, f64::INFINITY, -0.0, 2.5, -3.5, 1e20].into_iter().enumerate() {
            if let Some(slot) = a.get_mut(i + 4) {
                *slot = v;
            }
        }
        for (i, v) in [f16::NAN, f16::NEG_INFINITY, f16::NEG_ZERO, f16::MAX].into_iter().enumerate() {
            if let Some(slot) = h.get_mut(i + 5) {
                *slot = v;
            }
        }
        let (s, t) = (1.25, f16::from_f32(1.5));
        let (mut want, mut hwant, mut fwant) = (vec![0.0; n * 10], vec![f16::ZERO; n * 4], vec![0; n]);
        reference::wide_floats(n, &a, &h, s, t, &mut want, &mut hwant, &mut fwant);
        let (c, g) = on_both(|d| {
            let (mut out, mut hout, mut flags) = (zeros(d, n * 10), zeros(d, n * 4), zeros(d, n));
            kernels::wide_floats::launch(d, n, &buf(d, &a), &buf(d, &h), s, t, &mut out, &mut hout, &mut flags)
                .unwrap();
            (out.read().unwrap(), hout.read().unwrap(), flags.read().unwrap())
        });
        assert_same_floats(&format!("cpu f64, n = {n}"), &c.0, &want, f64::is_nan);
        for (dev, (out, hout, flags)) in [("cpu", c), ("gpu", g)] {
            // Slot 7 converts f64 to f32, which Vulkan rounds in an
            // implementation-defined way (lavapipe truncates), and slot 5's
            // `mul_add` may round twice on a GPU: within one f32 ulp there;
            // every other slot is exact.
            let (mut out, mut want) = (out, want.clone());
            for i in (0..out.len()).filter(|i| [5, 7].contains(&(i % 10))) {
                let (g, w) = (out[i], want[i]);
                let close =
                    g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= (w.abs() + 4.0 * a[i / 10].abs()) * 2e-7;
                assert!(close, "{dev} f64[{i}], n = {n}: got {g}, want {w}");
                (out[i], want[i]) = (0.0, 0.0);
            }
            assert_same_floats(&format!("{dev} f64, n = {n}"), &out, &want, f64::is_nan);
            assert_same_floats(&format!("{dev} f16, n = {n}"), &hout, &hwant, f16::is_nan);
            assert_eq!(flags, fwant, "{dev} flags, n = {n}");
        }
    }
}

fn f16_vectors_on_both_devices() {
    assert_eq!(kernels::f16_vectors::KERNEL.features, Features::F16);
    // 64 `F16Vec4`s: 512 bytes of shared memory.
    assert_eq!(kernels::f16_vectors::KERNEL.workgroup_memory_words, 128);
    let h = |v: &[f32]| -> Vec<f16> { v.iter().map(|&x| f16::from_f32(x)).collect() };
    for n in SIZES {
        // `F16Vec4`s from a flat `f16` array, as a host would convert them.
        let mut flat = h(&floats(n * 4, 28, 6.0));
        for (i, v) in
            [f16::INFINITY, f16::NEG_ZERO, f16::from_f32(65504.0), f16::from_f32(-3.0)].into_iter().enumerate()
        {
            if let Some(slot) = flat.get_mut(i + 8) {
                *slot = v;
            }
        }
        let a: Vec<F16Vec4> = bytemuck::cast_slice(&flat).to_vec();
        let b: Vec<F16Vec2> = bytemuck::cast_slice(&h(&floats(n * 2, 29, 3.0))).to_vec();
        let (s, k) = (f16::from_f32(1.5), F16Vec4::new(f16::ONE, f16::from_f32(-0.25), f16::ZERO, f16::from_f32(3.0)));
        let mut want =
            (vec![F16Vec4::ZERO; n * 4], vec![F16Vec2::ZERO; n * 2], vec![Vec4::ZERO; n], vec![f16::ZERO; n]);
        reference::f16_vectors(&a, &b, s, k, &mut want.0, &mut want.1, &mut want.2, &mut want.3);
        let (c, g) = on_both(|d| {
            let (mut out, mut out2, mut wide) = (zeros(d, n * 4), zeros(d, n * 2), zeros(d, n));
            let mut dots = zeros(d, n);
            kernels::f16_vectors::launch(
                d,
                n,
                &buf(d, &a),
                &buf(d, &b),
                s,
                k,
                &mut out,
                &mut out2,
                &mut wide,
                &mut dots,
            )
            .unwrap();
            (out.read().unwrap(), out2.read().unwrap(), wide.read().unwrap(), dots.read().unwrap())
        });
        // Each lane rounds to f16 as the scalar operation does, on both.
        let lanes4 = |v: &[F16Vec4]| -> Vec<f16> { bytemuck::cast_slice(v).to_vec() };
        let lanes2 = |v: &[F16Vec2]| -> Vec<f16> { bytemuck::cast_slice(v).to_vec() };
        let wide = |v: &[Vec4]| -> Vec<f32> { bytemuck::cast_slice(v).to_vec() };
        // The CPU: bit for bit (but NaN's bits).
        assert_same_floats(&format!("cpu F16Vec4, n = {n}"), &lanes4(&c.0), &lanes4(&want.0), f16::is_nan);
        assert_same_floats(&format!("cpu F16Vec2, n = {n}"), &lanes2(&c.1), &lanes2(&want.1), f16::is_nan);
        // The GPU may fuse `a * b + c` (lavapipe does, in f16 too): a few
        // f16 ulps (2^-10 relative), absolute below 1.
        let close = |what: &str, got: &[f16], want: &[f16]| {
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                let (g, w) = (g.to_f32(), w.to_f32());
                let ok = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 8e-3 * w.abs().max(1.0);
                assert!(ok, "gpu {what}[{i}], n = {n}: got {g}, want {w}");
            }
        };
        close("F16Vec4", &lanes4(&g.0), &lanes4(&want.0));
        close("F16Vec2", &lanes2(&g.1), &lanes2(&want.1));
        // Conversions to f32 and dot products of whole numbers are exact.
        for (dev, got) in [("cpu", c), ("gpu", g)] {
            assert_same_floats(&format!("{dev} to_vec4, n = {n}"), &wide(&got.2), &wide(&want.2), f32::is_nan);
            assert_same_floats(&format!("{dev} dots, n = {n}"), &got.3, &want.3, f16::is_nan);
        }
    }
}

fn wide_shared_arrays_on_both_devices() {
    assert_eq!(kernels::wide_shared::KERNEL.features, Features::F16.union(Features::F64).union(Features::INT64));
    // 64 + 64 words of the 8-byte arrays, 33 of the 65 halves.
    assert_eq!(kernels::wide_shared::KERNEL.workgroup_memory_words, 128 + 128 + 33);
    for n in SIZES {
        let a: Vec<f64> = floats(n, 25, 100.0).into_iter().map(|v| f64::from(v) / 3.0).collect();
        let q: Vec<i64> = ints(n, 26, 1_000_000).into_iter().map(|v| i64::from(v) << 20).collect();
        // Any length of f16, odd ones included.
        let h: Vec<f16> = floats(n, 27, 100.0).into_iter().map(f16::from_f32).collect();
        let (mut want, mut qwant, mut hwant) = (vec![0.0; n], vec![0; n], vec![f16::ZERO; n]);
        reference::wide_shared(&a, &q, &h, &mut want, &mut qwant, &mut hwant);
        let (c, g) = on_both(|d| {
            let (mut out, mut qout, mut hout) = (zeros(d, n), zeros(d, n), zeros(d, n));
            kernels::wide_shared::launch(d, n, &buf(d, &a), &buf(d, &q), &buf(d, &h), &mut out, &mut qout, &mut hout)
                .unwrap();
            (out.read().unwrap(), qout.read().unwrap(), hout.read().unwrap())
        });
        assert_eq!(c, (want.clone(), qwant.clone(), hwant.clone()), "cpu, n = {n}");
        assert_eq!(g, (want, qwant, hwant), "gpu, n = {n}");
    }
}

/// `subgroup_id()` and `num_subgroups()` with `subgroup_size()` and
/// `subgroup_invocation_id()`: each device against the reference for the
/// subgroup size it reports (32 on the CPU, within the adapter's range on
/// the GPU).
fn subgroup_values_partition_the_block() {
    for n in SIZES.into_iter().chain([48 * 3]) {
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 3);
            kernels::subgroup_ids::launch(d, n, &mut out).unwrap();
            out.read().unwrap()
        });
        for (name, d, out) in [("cpu", cpu(), c), ("gpu", gpu(), g)] {
            let size = out[2];
            // The CPU executor's subgroups have 32 lanes.
            let (min, max) = d.subgroup_sizes().unwrap_or((32, 32));
            assert!((min..=max).contains(&size), "{name}: subgroup size {size} outside {min}..={max}");
            assert_eq!(out, reference::subgroup_ids(n, size), "{name}, n = {n}");
        }
    }
}

#[test]
fn a_wide_kernel_on_a_device_without_its_feature_is_an_error_naming_both() {
    // Lavapipe has f16, f64 and int64: a device made without f64 stands for
    // the GPUs that lack it.
    let no_f64 = Device::gpu_without(Features::F64).unwrap();
    assert!(!no_f64.features().contains(Features::F64));
    assert!(no_f64.features().contains(Features::F16.union(Features::INT64)));
    let n = 4;
    let run = |d: &Device| {
        let (a, h) = (vec![1.0f64; n], vec![f16::ONE; n]);
        let (mut out, mut hout, mut flags) = (zeros(d, n * 10), zeros(d, n * 4), zeros(d, n));
        kernels::wide_floats::launch(d, n, &buf(d, &a), &buf(d, &h), 2.0, f16::ONE, &mut out, &mut hout, &mut flags)
    };
    let err = run(&no_f64).unwrap_err();
    match &err {
        LaunchError::MissingFeature { kernel, missing, .. } => {
            assert_eq!((*kernel, *missing), ("wide_floats", Features::F64));
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().starts_with("kernel `wide_floats` needs the device feature SHADER_F64"), "{err}");
    // A kernel of the other wide types still runs there, and the CPU
    // executor runs them all.
    let (a, b) = (vec![5i64; n], vec![7u64; n]);
    let (mut out, mut uout) = (zeros(&no_f64, n * 8), zeros(&no_f64, n * 8));
    kernels::wide_ints::launch(&no_f64, n, &buf(&no_f64, &a), &buf(&no_f64, &b), 1, &mut out, &mut uout).unwrap();
    run(cpu()).unwrap();
}

fn rejected_constants_are_computed_at_run_time() {
    let (c, g) = on_both(|d| {
        let (mut out, mut bits) = (zeros::<f32>(d, 3), zeros::<u32>(d, 3));
        kernels::rejected_constants::launch(d, 64, &mut out, &mut bits).unwrap();
        (out.read().unwrap(), bits.read().unwrap())
    });
    let want = (vec![f32::INFINITY, f32::NEG_INFINITY, 1.5], vec![1, 0, 65535 << 4]);
    assert_eq!(c, want, "cpu");
    assert_eq!(g, want, "gpu");
}

/// Runs `generic_num` for `T` on both devices against the generic
/// reference; the values are small integers, exact in every type.
fn generic_num_for<T: kernels::generic_num::Instance + From<u8>>() {
    let ty = std::any::type_name::<T>();
    for n in SIZES {
        let a: Vec<T> = (0..n).map(|i| T::from((i * 7 % 40 + 1) as u8)).collect();
        let b: Vec<T> = (0..n).map(|i| T::from((i * 11 % 23 + 1) as u8)).collect();
        let s = T::from(3);
        let want = reference::generic_num(&a, &b, s);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 4);
            // The type can be named too: `launch::<T>`.
            kernels::generic_num::launch::<T>(d, n, &buf(d, &a), &buf(d, &b), s, &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu {ty}, n = {n}");
        assert_eq!(g, want, "gpu {ty}, n = {n}");
    }
}

fn generic_kernel_for_every_num_type() {
    generic_num_for::<f32>();
    generic_num_for::<i32>();
    generic_num_for::<u32>();
    generic_num_for::<f16>();
    generic_num_for::<f64>();
    generic_num_for::<i64>();
    generic_num_for::<u64>();
}

#[test]
fn generic_kernel_instantiations_are_kernels_of_their_own() {
    use kernels::generic_num as k;
    // One module per type of the bound, named after the kernel and type.
    let names: Vec<_> = [k::kernel_info::<f32>(), k::kernel_info::<u64>(), k::kernel_info::<f16>()]
        .map(|info| info.name.to_string())
        .into();
    assert_eq!(names, ["generic_num::<f32>", "generic_num::<u64>", "generic_num::<f16>"]);
    assert!(std::ptr::eq(k::kernel_info::<i32>(), &k::for_i32::KERNEL));
    // Each records the device features of its own type only.
    assert_eq!(k::for_f32::KERNEL.features, Features::NONE);
    assert_eq!(k::for_f16::KERNEL.features, Features::F16);
    assert_eq!(k::for_f64::KERNEL.features, Features::F64);
    assert_eq!(k::for_u64::KERNEL.features, Features::INT64);
    // So a device without f16 runs the f32 kernel and refuses the f16 one,
    // naming the instantiation.
    let no_f16 = Device::gpu_without(Features::F16).unwrap();
    let run = |n: usize| -> Result<(), LaunchError> {
        let (a, mut out) = (buf(&no_f16, &vec![f16::ONE; n]), zeros::<f16>(&no_f16, n * 4));
        k::launch(&no_f16, n, &a, &a, f16::ONE, &mut out)
    };
    let err = run(2).unwrap_err();
    assert!(matches!(err, LaunchError::MissingFeature { .. }), "{err}");
    assert!(err.to_string().contains("generic_num::<f16>"), "{err}");
    let (a, mut out) = (buf(&no_f16, &[1.0f32, 2.0]), zeros::<f32>(&no_f16, 8));
    k::launch(&no_f16, 2, &a, &a, 2.0f32, &mut out).unwrap();
    assert_eq!(out.read().unwrap(), reference::generic_num(&[1.0, 2.0], &[1.0, 2.0], 2.0));
}

/// `generic_float` for `T` on both devices: the math methods within a
/// relative 1e-6 (the GPU's `sqrt` and `recip` may be a few ulps off).
fn generic_float_for<T: kernels::generic_float::Instance + From<f32> + Into<f64>>() {
    let ty = std::any::type_name::<T>();
    for n in SIZES {
        let mut a: Vec<T> = floats(n, 31, 50.0).into_iter().map(T::from).collect();
        for (i, v) in [2.5, -2.5, 0.5, -0.0, f32::INFINITY, f32::NAN].into_iter().enumerate() {
            if let Some(slot) = a.get_mut(i + 1) {
                *slot = T::from(v);
            }
        }
        let (want, want_flags) = reference::generic_float(&a);
        let (c, g) = on_both(|d| {
            let (mut out, mut flags) = (zeros(d, n * 3), zeros(d, n));
            kernels::generic_float::launch(d, n, &buf(d, &a), &mut out, &mut flags).unwrap();
            (out.read().unwrap(), flags.read().unwrap())
        });
        for (dev, (out, flags)) in [("cpu", c), ("gpu", g)] {
            assert_eq!(flags, want_flags, "{dev} {ty} flags, n = {n}");
            for (i, (g, w)) in out.into_iter().zip(&want).enumerate() {
                let (g, w): (f64, f64) = (g.into(), (*w).into());
                let close = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-6 * w.abs().max(1.0);
                assert!(close, "{dev} {ty}[{i}], n = {n}: got {g}, want {w}");
            }
        }
    }
}

fn generic_float_kernel_for_f32_and_f64() {
    generic_float_for::<f32>();
    generic_float_for::<f64>();
}

/// `generic_int` for `T` on both devices, exact.
fn generic_int_for<T: kernels::generic_int::Instance + From<u16>>() {
    let ty = std::any::type_name::<T>();
    for n in SIZES {
        let a: Vec<T> = ints(n, 41, 30000).into_iter().map(|v| T::from(v.unsigned_abs() as u16)).collect();
        let b: Vec<T> = ints(n, 42, 1000).into_iter().map(|v| T::from(v.unsigned_abs() as u16)).collect();
        let want = reference::generic_int(&a, &b);
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n * 4);
            kernels::generic_int::launch(d, n, &buf(d, &a), &buf(d, &b), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu {ty}, n = {n}");
        assert_eq!(g, want, "gpu {ty}, n = {n}");
    }
}

fn generic_int_kernel_for_every_int_type() {
    generic_int_for::<i32>();
    generic_int_for::<u32>();
    generic_int_for::<i64>();
    generic_int_for::<u64>();
}

fn generic_cooperative_kernel_with_a_shared_array_of_t() {
    fn reverse<T: kernels::generic_reverse::Instance + From<u8>>() {
        for n in SIZES.map(|n| n.next_multiple_of(2)) {
            let a: Vec<T> = (0..n).map(|i| T::from((i % 251) as u8)).collect();
            let want = reference::generic_reverse(&a);
            let (c, g) = on_both(|d| {
                let mut out = zeros(d, n);
                kernels::generic_reverse::launch(d, n, &buf(d, &a), &mut out).unwrap();
                out.read().unwrap()
            });
            assert_eq!(c, want, "cpu {}, n = {n}", std::any::type_name::<T>());
            assert_eq!(g, want, "gpu {}, n = {n}", std::any::type_name::<T>());
        }
    }
    reverse::<f32>();
    reverse::<u32>();
    reverse::<f16>();
    reverse::<i64>();
}

/// The buffers of `own_elements`: `a`, `b`, `out` and `flags`, of `n`
/// elements (`a` only `a_len`).
#[allow(clippy::type_complexity)]
fn own_elements_data(n: usize, a_len: usize) -> (Vec<f32>, Vec<u32>, Vec<f32>, Vec<u32>) {
    let b: Vec<u32> = ints(n, 22, 1000).into_iter().map(i32::unsigned_abs).collect();
    let flags = b.iter().map(|v| v / 2).collect();
    (floats(a_len, 21, 100.0), b, floats(n, 23, 10.0), flags)
}

/// Runs `own_elements` on `d` with `threads` threads over
/// `own_elements_data(n, a_len)`.
fn own_elements_on(d: &Device, threads: usize, n: usize, a_len: usize) -> Result<(Vec<f32>, Vec<u32>), LaunchError> {
    let (a, b, out, flags) = own_elements_data(n, a_len);
    let (mut out, mut flags) = (buf(d, &out), buf(d, &flags));
    kernels::own_elements::launch(d, threads, &buf(d, &a), &buf(d, &b), 0.75, &mut out, &mut flags)?;
    Ok((out.read().unwrap(), flags.read().unwrap()))
}

/// The CPU runs the chunks of an own-element kernel that every buffer
/// covers as one loop over plain slices (`cpu_chunk`), the others per
/// invocation. Both give what the per-invocation body gives (the
/// race-checked device runs every launch that way, in order), the GPU
/// and plain Rust do: sizes around a workgroup (64) and a chunk (4096
/// invocations), none, and grids shorter and longer than the buffers.
fn chunk_slice_loop_matches_the_per_invocation_body() {
    // Compiles only while these kernels qualify for the loop.
    let _ = (kernels::own_elements::cpu_chunk, kernels::own_elements_vec4::cpu_chunk);
    let per_invocation = Device::cpu_race_checked();
    let cases = [(0, 0), (1, 1), (3, 3), (64, 63), (64, 64), (200, 65), (4096, 4095), (4096, 4096), (4097, 4097)];
    let cases = cases.into_iter().chain([(3 * 4096 + 7, 3 * 4096 + 7), (4096, 5000), (100_000, 100_000)]);
    for (threads, n) in cases {
        let fast = own_elements_on(cpu(), threads, n, n).unwrap();
        assert_eq!(fast, own_elements_on(&per_invocation, threads, n, n).unwrap(), "n = {n}, {threads} threads");
        let (a, b, mut out, mut flags) = own_elements_data(n, n);
        reference::own_elements(threads.next_multiple_of(64), &a, &b, 0.75, &mut out, &mut flags);
        assert_close(&format!("cpu, n = {n}"), &fast.0, &out, 0.0);
        assert_eq!(fast.1, flags, "cpu flags, n = {n}");
        let gpu = own_elements_on(gpu(), threads, n, n).unwrap();
        assert_close(&format!("gpu, n = {n}"), &gpu.0, &out, 1e-6);
        assert_eq!(gpu.1, flags, "gpu flags, n = {n}");

        let a: Vec<Vec4> = floats(4 * n, 24, 10.0).chunks(4).map(Vec4::from_slice).collect();
        let old: Vec<Vec4> = floats(4 * n, 25, 10.0).chunks(4).map(Vec4::from_slice).collect();
        let want: Vec<Vec4> =
            (0..n).map(|i| if i < threads.next_multiple_of(64) { a[i] * 2.0 + old[i] } else { old[i] }).collect();
        let (c, g) = on_both(|d| {
            let mut out = buf(d, &old);
            kernels::own_elements_vec4::launch(d, threads, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!(c, want, "cpu Vec4, n = {n}");
        assert_eq!(g, want, "gpu Vec4, n = {n}");
    }
}

/// A scalar bound (`i < n as usize`) splits the chunk loop at `n`: bounds
/// before, inside and past a chunk and the buffers, on both paths, the
/// GPU and plain Rust.
fn chunk_slice_loop_split_at_a_scalar_bound() {
    let _ = kernels::own_below::cpu_chunk;
    let per_invocation = Device::cpu_race_checked();
    let len = 3 * 4096 + 7;
    let a = floats(len, 27, 10.0);
    for bound in [0, 1, 63, 64, 100, 4095, 4096, 4097, 2 * 4096 + 1000, len - 1, len, len + 1, u32::MAX as usize] {
        let n = bound as u32;
        let want: Vec<f32> = (0..len)
            .map(|i| {
                let mut x = if i < bound { a[i] * 2.0 } else { -a[i] };
                if bound <= i {
                    x += 1.0;
                }
                if i + 1 == bound {
                    x += 10.0;
                }
                x
            })
            .collect();
        let run = |d: &Device| {
            let mut out = zeros(d, len);
            kernels::own_below::launch(d, len, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        };
        assert_eq!(run(cpu()), want, "cpu, n = {n}");
        assert_eq!(run(&per_invocation), want, "per invocation, n = {n}");
        assert_eq!(run(gpu()), want, "gpu, n = {n}");
    }
}

/// A buffer too short for the launch: the chunks it covers run the loop,
/// the first it does not runs per invocation and fails at the first
/// element past its end, with the error the per-invocation body gives.
#[test]
fn chunk_slice_loop_leaves_out_of_bounds_to_the_checked_body() {
    // 8192 invocations are two chunks of 4096 (the fewest a chunk has),
    // whatever the thread count: `a` covers the first only.
    let fast = own_elements_on(cpu(), 8192, 8192, 5000).unwrap_err();
    let checked = own_elements_on(&Device::cpu_race_checked(), 8192, 8192, 5000).unwrap_err();
    assert_eq!(fast.to_string(), checked.to_string());
    let LaunchError::CpuPanic { location: Some(at), message, .. } = fast else { panic!("{fast}") };
    assert_eq!(message, "index out of bounds: the len is 5000 but the index is 5000");
    assert!(at.contains("kernels.rs"), "{at}");
}

/// Kernels whose outputs are their own but that the loop does not run (a
/// neighbour's input, `thread_id()`) still take the windowed path, per
/// invocation, and compute what the GPU and plain Rust do.
fn own_element_kernels_outside_the_chunk_loop() {
    assert_eq!(format!("{:?}", kernels::neighbour_sum::KERNEL.cpu), "OwnElement { chunk_loop: false }");
    assert_eq!(format!("{:?}", kernels::own_with_thread_id::KERNEL.cpu), "OwnElement { chunk_loop: false }");
    for n in SIZES.into_iter().chain([4096 * 3 + 5]) {
        let a = floats(n, 26, 10.0);
        let want: Vec<f32> = (0..n).map(|i| if i + 1 < n { a[i] + a[i + 1] } else { 0.0 }).collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::neighbour_sum::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!((c, g), (want.clone(), want), "neighbour_sum, n = {n}");
        let want: Vec<f32> = (0..n).map(|i| a[i] + (i % 64) as f32).collect();
        let (c, g) = on_both(|d| {
            let mut out = zeros(d, n);
            kernels::own_with_thread_id::launch(d, n, &buf(d, &a), &mut out).unwrap();
            out.read().unwrap()
        });
        assert_eq!((c, g), (want.clone(), want), "own_with_thread_id, n = {n}");
    }
}
