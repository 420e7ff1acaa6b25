//! Whole-buffer, per-row and per-column reductions.

use super::*;
use onekernel::ops::reduce::{self, ReduceElement, ReduceOp, ReduceScratch};

const OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Product, ReduceOp::Min, ReduceOp::Max];

/// Plain Rust: left to right with the op's combine.
fn reference<T: ReduceElement>(x: &[T], op: ReduceOp) -> T {
    T::from_acc(x.iter().fold(T::identity(op), |a, &v| T::combine(op, a, v.to_acc())))
}

/// Integers: exact, whatever the order (sums and products wrap).
fn check_ints<T: ReduceElement>(make: impl Fn(usize) -> T) {
    for &n in SIZES.iter().chain(LONG_SIZES) {
        let x: Vec<T> = (0..n).map(&make).collect();
        for (name, d) in devices_for(n) {
            let b = Buffer::from_slice(d, &x).unwrap();
            for op in OPS {
                let got = reduce::reduce_value(d, &b, op).unwrap();
                assert_eq!(got, reference(&x, op), "{name}: {op:?} of {n} {}", std::any::type_name::<T>());
            }
        }
    }
}

#[test]
fn integers_exactly() {
    check_ints(|i| hash(i, 1) as i32);
    check_ints(|i| hash(i, 2));
    // Small values: products of mostly ones and twos, sums that stay small.
    check_ints(|i| (hash(i, 3) % 7 == 0) as u32 + 1);
}

#[test]
fn wide_integers_exactly() {
    check_ints(|i| (hash(i, 4) as i64) << 20 | hash(i, 5) as i64);
    check_ints(|i| (hash(i, 6) as u64) << 32 | hash(i, 7) as u64);
}

/// Floats: sums of small integers are exact in any order below 2^24.
fn check_floats<T: ReduceElement>(
    make: impl Fn(usize) -> T,
    ops: &[ReduceOp],
    tolerance: f64,
    to_f64: impl Fn(T) -> f64,
) {
    for &n in SIZES.iter().chain(LONG_SIZES) {
        let x: Vec<T> = (0..n).map(&make).collect();
        for (name, d) in devices_for(n) {
            let b = Buffer::from_slice(d, &x).unwrap();
            for &op in ops {
                let got = to_f64(reduce::reduce_value(d, &b, op).unwrap());
                let want = to_f64(reference(&x, op));
                let ok = got == want
                    || (got - want).abs() <= tolerance * want.abs().max(1.0)
                    || (got.is_nan() && want.is_nan());
                assert!(ok, "{name}: {op:?} of {n} {}: {got} != {want}", std::any::type_name::<T>());
            }
        }
    }
}

#[test]
fn floats() {
    // Small integers and quarters: exact sums, whatever the order.
    let no_product = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];
    check_floats(|i| (hash(i, 8) % 17) as f32 - 8.0, &no_product, 0.0, f64::from);
    check_floats(|i| (hash(i, 9) % 1000) as f64 * 0.25 - 100.0, &no_product, 0.0, |v| v);
    check_floats(|i| f16::from_f32((hash(i, 10) % 9) as f32 - 4.0), &no_product, 1e-3, |v| v.to_f64());
    // Products of ±1 with a rare 2 or 1/2: exact (the exponent stays far
    // from overflow), whatever the order.
    let factor = |i: usize| match hash(i, 14) % 200 {
        0 => 2.0,
        1 => 0.5,
        h => {
            if h % 2 == 0 {
                1.0
            } else {
                -1.0
            }
        }
    };
    check_floats(|i| factor(i) as f32, &[ReduceOp::Product], 0.0, f64::from);
    check_floats(factor, &[ReduceOp::Product], 0.0, |v| v);
    check_floats(|i| f16::from_f32(factor(i) as f32), &[ReduceOp::Product], 0.0, |v| v.to_f64());
}

#[test]
fn nan_inf_and_signed_zero() {
    for (name, d) in devices() {
        let cases: [(&[f32], ReduceOp, f32); 8] = [
            (&[1.0, f32::NAN, 3.0], ReduceOp::Min, f32::NAN),
            (&[1.0, f32::NAN, 3.0], ReduceOp::Max, f32::NAN),
            (&[f32::NAN, 1.0], ReduceOp::Sum, f32::NAN),
            (&[f32::INFINITY, 1.0], ReduceOp::Sum, f32::INFINITY),
            (&[f32::INFINITY, f32::NEG_INFINITY], ReduceOp::Sum, f32::NAN),
            (&[-0.0, -0.0], ReduceOp::Sum, -0.0),
            (&[], ReduceOp::Min, f32::INFINITY),
            (&[], ReduceOp::Max, f32::NEG_INFINITY),
        ];
        for (x, op, want) in cases {
            // Spread the special value over a long buffer too.
            for copies in [1, 3000] {
                let long: Vec<f32> = x.iter().copied().cycle().take(x.len() * copies).collect();
                let b = Buffer::from_slice(d, &long).unwrap();
                let got = reduce::reduce_value(d, &b, op).unwrap();
                let want = if long.is_empty() || copies == 1 || op != ReduceOp::Sum || !want.is_finite() {
                    want
                } else {
                    want * copies as f32
                };
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{name}: {op:?} of {x:?} x{copies}: {got} != {want}"
                );
            }
        }
    }
}

#[test]
fn past_the_grid_fold() {
    // 2^24 + 3 elements: more than 65535 workgroups of 256 if launched one
    // element per thread (the reduction does not, but its row form does
    // with rows of 1 column, below); once on the GPU and the kernels' CPU.
    let n = (1 << 24) + 3;
    let x: Vec<u32> = (0..n).map(|i| hash(i, 11) & 0xff).collect();
    let want: u32 = x.iter().fold(0u32, |a, &v| a.wrapping_add(v));
    for (name, d) in [("gpu", gpu()), ("cpu host", cpu())] {
        let b = Buffer::from_slice(d, &x).unwrap();
        assert_eq!(reduce::sum(d, &b).unwrap(), want, "{name}");
    }
    // 65_537 rows of 1 column: a grid of 65_537 workgroups, past the
    // 65_535 of one dispatch (folded); on the GPU only (the CPU executor
    // takes the grid as it is).
    let rows = 65_537;
    let x: Vec<i32> = (0..rows).map(|i| hash(i, 12) as i32).collect();
    let d = gpu();
    let b = Buffer::from_slice(d, &x).unwrap();
    assert_eq!(reduce::reduce_rows(d, &b, 1, ReduceOp::Max).unwrap().read().unwrap(), x);
}

#[test]
fn rows_and_columns() {
    for (rows, cols) in [(0, 3), (1, 1), (3, 1), (1, 257), (7, 31), (33, 1000), (257, 5), (2, 4097), (1000, 3)] {
        let x: Vec<i32> = (0..rows * cols).map(|i| (hash(i, 13) % 201) as i32 - 100).collect();
        let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let xh: Vec<f16> = x.iter().map(|&v| f16::from_f32(v as f32 / 8.0)).collect();
        for (name, d) in devices() {
            let b = Buffer::from_slice(d, &x).unwrap();
            let bf = Buffer::from_slice(d, &xf).unwrap();
            let bh = Buffer::from_slice(d, &xh).unwrap();
            for op in OPS {
                let want_rows: Vec<i32> = x.chunks(cols).map(|r| reference(r, op)).collect();
                let want_cols: Vec<i32> =
                    (0..cols).map(|c| reference(&(0..rows).map(|r| x[r * cols + c]).collect::<Vec<_>>(), op)).collect();
                let what = format!("{name}: {op:?} of {rows}x{cols}");
                assert_eq!(reduce::reduce_rows(d, &b, cols, op).unwrap().read().unwrap(), want_rows, "{what} rows");
                assert_eq!(reduce::reduce_cols(d, &b, cols, op).unwrap().read().unwrap(), want_cols, "{what} cols");
                if op == ReduceOp::Product {
                    continue; // float products of these values overflow differently by order
                }
                // Small integers (and eighths in f16): exact in any order.
                let rows_of = |x: &[f32]| x.chunks(cols).map(|r| reference(r, op)).collect::<Vec<_>>();
                let cols_of = |x: &[f32]| {
                    (0..cols)
                        .map(|c| reference(&(0..rows).map(|r| x[r * cols + c]).collect::<Vec<_>>(), op))
                        .collect::<Vec<_>>()
                };
                assert_eq!(
                    reduce::reduce_rows(d, &bf, cols, op).unwrap().read().unwrap(),
                    rows_of(&xf),
                    "{what} f32 rows"
                );
                assert_eq!(
                    reduce::reduce_cols(d, &bf, cols, op).unwrap().read().unwrap(),
                    cols_of(&xf),
                    "{what} f32 cols"
                );
                let h_rows: Vec<f16> = xh.chunks(cols).map(|r| reference(r, op)).collect();
                let h_cols: Vec<f16> = (0..cols)
                    .map(|c| reference(&(0..rows).map(|r| xh[r * cols + c]).collect::<Vec<_>>(), op))
                    .collect();
                assert_eq!(reduce::reduce_rows(d, &bh, cols, op).unwrap().read().unwrap(), h_rows, "{what} f16 rows");
                assert_eq!(reduce::reduce_cols(d, &bh, cols, op).unwrap().read().unwrap(), h_cols, "{what} f16 cols");
            }
        }
    }
}

#[test]
fn into_forms_reuse_scratch_and_name_their_arguments() {
    for (name, d) in devices() {
        let x = Buffer::from_slice(d, &(0..5000u32).collect::<Vec<_>>()).unwrap();
        let mut out = Buffer::<u32>::zeroed(d, 1).unwrap();
        let mut scratch = ReduceScratch::for_len(d, 5000).unwrap();
        // A longer input first, a shorter one after: the scratch is larger
        // than the second needs and must not leak old partials into it.
        reduce::reduce_into(d, &x, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
        let small = Buffer::from_slice(d, &[1u32, 2, 3]).unwrap();
        reduce::reduce_into(d, &small, ReduceOp::Sum, &mut out, &mut scratch).unwrap();
        assert_eq!(out.read().unwrap(), [6], "{name}");
        let mut empty = Buffer::<u32>::zeroed(d, 0).unwrap();
        let err = reduce::reduce_into(d, &x, ReduceOp::Sum, &mut empty, &mut scratch).unwrap_err();
        assert!(err.to_string().contains("ops::reduce") && err.to_string().contains("out"), "{err}");
        let err = reduce::reduce_rows(d, &x, 3, ReduceOp::Sum).unwrap_err();
        assert!(err.to_string().contains("ops::reduce_rows") && err.to_string().contains("`x`"), "{err}");
        let err = reduce::reduce_cols(d, &x, 0, ReduceOp::Sum).unwrap_err();
        assert!(err.to_string().contains("ops::reduce_cols") && err.to_string().contains("cols"), "{err}");
    }
    // Inside `device.time(..)`.
    let d = gpu();
    let x = Buffer::from_slice(d, &[1.0f32; 4096]).unwrap();
    let mut out = Buffer::<f32>::zeroed(d, 1).unwrap();
    let mut scratch = ReduceScratch::for_len(d, 4096).unwrap();
    let (r, timing) = d.time(|| reduce::reduce_into(d, &x, ReduceOp::Sum, &mut out, &mut scratch)).unwrap();
    r.unwrap();
    assert!(timing.launches() >= 2, "{timing}");
    assert_eq!(out.read().unwrap(), [4096.0]);
}

onekernel::ops::define_reduction!(mod xor_all: u32, |a, b| a ^ b);
onekernel::ops::define_reduction!(mod max_abs: i32, |a, b| a.wrapping_abs().max(b.wrapping_abs()));

#[test]
fn a_user_combine() {
    for &n in SIZES {
        let x: Vec<u32> = (0..n).map(|i| hash(i, 15)).collect();
        let y: Vec<i32> = x.iter().map(|&v| v as i32 >> 3).collect();
        let want_x = x.iter().fold(0, |a, &b| a ^ b);
        let want_y = y.iter().fold(0, |a: i32, &b| a.wrapping_abs().max(b.wrapping_abs()));
        for (name, d) in devices() {
            assert_eq!(xor_all::reduce(d, &Buffer::from_slice(d, &x).unwrap(), 0).unwrap(), want_x, "{name} n={n}");
            assert_eq!(max_abs::reduce(d, &Buffer::from_slice(d, &y).unwrap(), 0).unwrap(), want_y, "{name} n={n}");
        }
    }
    let d = gpu();
    let x = Buffer::from_slice(d, &[1u32, 2]).unwrap();
    let mut out = Buffer::<u32>::zeroed(d, 1).unwrap();
    let mut partials = Buffer::<u32>::zeroed(d, 0).unwrap();
    let err = xor_all::reduce_into(d, &x, 0, &mut out, &mut partials).unwrap_err();
    assert!(err.to_string().contains("xor_all") && err.to_string().contains("partials"), "{err}");
}

/// Rows and columns of a block of a matrix (a `View2d` with an offset and a
/// row stride): only the view's elements are read, on every device, and a
/// view past the buffer is an `Err` naming it.
#[test]
fn rows_and_columns_of_a_view() {
    // (matrix rows, cols, view rows, view cols): a short block (one pass
    // per column) and a tall one (row chunks, then their partials).
    for (mr, mc, vr, vc) in [(37, 45, 3..30, 5..40), (300, 20, 7..290, 3..17)] {
        let m: Vec<i32> = (0..mr * mc).map(|i| (hash(i, 40) % 1000) as i32 - 500).collect();
        let at = |r: usize, c: usize| m[r * mc + c];
        for (name, d) in devices() {
            let b = Buffer::from_slice(d, &m).unwrap();
            let view = b.view_2d(mr, mc).unwrap().slice_rows(vr.clone()).unwrap().slice_cols(vc.clone()).unwrap();
            for op in [ReduceOp::Sum, ReduceOp::Max] {
                let f = |a: i32, v: i32| if op == ReduceOp::Sum { a.wrapping_add(v) } else { a.max(v) };
                let id = i32::identity(op);
                let rows: Vec<i32> = vr.clone().map(|r| vc.clone().fold(id, |a, c| f(a, at(r, c)))).collect();
                let cols: Vec<i32> = vc.clone().map(|c| vr.clone().fold(id, |a, r| f(a, at(r, c)))).collect();
                let got = reduce::reduce_rows_view(d, view, op).unwrap().read().unwrap();
                assert_eq!(got, rows, "{name}: {op:?} rows of a {mr}x{mc} view");
                let got = reduce::reduce_cols_view(d, view, op).unwrap().read().unwrap();
                assert_eq!(got, cols, "{name}: {op:?} columns of a {mr}x{mc} view");
            }
            // One column and one row as views.
            let col = b.view_2d(mr, mc).unwrap().col(4).unwrap();
            let want: i32 = (0..mr).fold(0, |a, r| a.wrapping_add(at(r, 4)));
            assert_eq!(
                reduce::reduce_rows_view(d, col, ReduceOp::Sum)
                    .unwrap()
                    .read()
                    .unwrap()
                    .iter()
                    .fold(0i32, |a, &v| a.wrapping_add(v)),
                want,
                "{name}"
            );
            assert_eq!(reduce::reduce_cols_view(d, col, ReduceOp::Sum).unwrap().read().unwrap(), [want], "{name}");
            // The wrong number of outputs names `out`.
            let mut short = Buffer::<i32>::zeroed(d, 1).unwrap();
            let err = reduce::reduce_rows_view_into(d, view, ReduceOp::Sum, &mut short).unwrap_err();
            assert!(err.to_string().contains("ops::reduce_rows_view") && err.to_string().contains("`out`"), "{err}");
            // Views out of bounds.
            let err = b.view_2d(mr + 1, mc).unwrap_err();
            assert!(err.to_string().contains("Buffer::view_2d"), "{err}");
            let err = b.view_2d(mr, mc).unwrap().slice_rows(vr.start..mr + 1).unwrap_err();
            assert!(err.to_string().contains("View2d::slice_rows"), "{err}");
            let strided = Layout2d { offset: 1, rows: mr, cols: mc, row_stride: mc };
            assert!(b.view_strided(strided).unwrap_err().to_string().contains("Buffer::view_strided"));
        }
    }
}

/// Every plan the tuner may choose (scalar and `Vec4` loads, each segment
/// count) on the GPU, at the edges of a vector, a workgroup's step and a
/// segment, against plain Rust; `-0.0` sums stay `-0.0` through the
/// vector kernel.
#[test]
fn every_plan_on_the_gpu() {
    let d = gpu();
    let sizes = [0, 1, 2, 3, 4095, 4096, 4097, 4099, 8191, 65_537, 100_003, 262_147, (1 << 20) + 1];
    for n in sizes {
        let f: Vec<f32> = (0..n).map(|i| (hash(i, 60) % 17) as f32 - 8.0).collect();
        let u: Vec<u32> = (0..n).map(|i| hash(i, 61)).collect();
        let s: Vec<i32> = (0..n).map(|i| hash(i, 62) as i32).collect();
        let (bf, bu, bs) = (
            Buffer::from_slice(d, &f).unwrap(),
            Buffer::from_slice(d, &u).unwrap(),
            Buffer::from_slice(d, &s).unwrap(),
        );
        let plans = reduce::candidates::<f32>(d, ReduceOp::Sum, n);
        assert!(n < 4096 || plans.iter().any(|p| p.vec4), "{n}: no vec4 plan among {plans:?}");
        for plan in plans {
            let mut out = Buffer::<f32>::zeroed(d, 1).unwrap();
            reduce::reduce_with_plan(d, &bf, ReduceOp::Sum, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
            assert_eq!(out.read().unwrap()[0], reference(&f, ReduceOp::Sum), "{n} f32 {plan:?}");
            let mut out = Buffer::<u32>::zeroed(d, 1).unwrap();
            reduce::reduce_with_plan(d, &bu, ReduceOp::Sum, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
            assert_eq!(out.read().unwrap()[0], reference(&u, ReduceOp::Sum), "{n} u32 {plan:?}");
            let mut out = Buffer::<i32>::zeroed(d, 1).unwrap();
            reduce::reduce_with_plan(d, &bs, ReduceOp::Sum, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
            assert_eq!(out.read().unwrap()[0], reference(&s, ReduceOp::Sum), "{n} i32 {plan:?}");
            // A vec4 plan asked of a max runs the scalar kernel.
            let mut out = Buffer::<i32>::zeroed(d, 1).unwrap();
            reduce::reduce_with_plan(d, &bs, ReduceOp::Max, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
            assert_eq!(out.read().unwrap()[0], reference(&s, ReduceOp::Max), "{n} i32 max {plan:?}");
        }
    }
    let z = Buffer::from_slice(d, &[-0.0f32; 5003]).unwrap();
    for plan in reduce::candidates::<f32>(d, ReduceOp::Sum, 5003) {
        let mut out = Buffer::<f32>::zeroed(d, 1).unwrap();
        reduce::reduce_with_plan(d, &z, ReduceOp::Sum, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
        assert_eq!(out.read().unwrap()[0].to_bits(), (-0.0f32).to_bits(), "{plan:?}");
    }
    // Past the grid fold: 2^24 + 3 small integers, every f32 sum plan.
    let n = (1 << 24) + 3;
    let f: Vec<f32> = (0..n).map(|i| (hash(i, 63) % 3) as f32 - 1.0).collect();
    let bf = Buffer::from_slice(d, &f).unwrap();
    let want = reference(&f, ReduceOp::Sum);
    for plan in reduce::candidates::<f32>(d, ReduceOp::Sum, n) {
        let mut out = Buffer::<f32>::zeroed(d, 1).unwrap();
        reduce::reduce_with_plan(d, &bf, ReduceOp::Sum, &mut out, &mut ReduceScratch::new(), Some(plan)).unwrap();
        assert_eq!(out.read().unwrap()[0], want, "2^24 + 3 {plan:?}");
    }
}

/// The single-pass plans (`f32`: the workgroup that increments the counter
/// last reduces the partials): every op on the kernels of the CPU
/// executor (serial and race-checked: no race between the workgroups'
/// partials and the last one's reads) and on the GPU, at group counts
/// around the finish's 256-wide loop (1, 2, 255, 256, 257, 514 groups of
/// 2048 elements), the same scratch reused call after call so that the
/// counter's reset is exercised (a counter left at anything but 0 would
/// make no workgroup the last: `out` would keep the previous result).
#[test]
fn single_pass_plans() {
    let single = |segments, vec4| reduce::ReducePlan { segments, vec4, single: true };
    let race = Device::cpu_race_checked();
    let small: &[usize] = &[1, 255, 2048, 2049, 4097];
    let large: &[usize] = &[255 * 2048, 256 * 2048, 256 * 2048 + 1, 513 * 2048 + 5, 1 << 20];
    let cases: Vec<(&str, &Device, &[usize])> =
        vec![("cpu kernels", serial(), small), ("race checked", &race, &small[..3]), ("gpu", gpu(), large)];
    for (name, d, sizes) in cases {
        let mut scratch = ReduceScratch::<f32>::new();
        let mut out = Buffer::<f32>::zeroed(d, 1).unwrap();
        for (round, &n) in sizes.iter().enumerate() {
            let x: Vec<f32> = (0..n).map(|i| (hash(i, 70 + round as u32) % 5) as f32 - 2.0).collect();
            // Products of ones and minus ones: exact in any order.
            let signs: Vec<f32> = (0..n).map(|i| if hash(i, 80) % 3 == 0 { -1.0 } else { 1.0 }).collect();
            let (bx, bs) = (Buffer::from_slice(d, &x).unwrap(), Buffer::from_slice(d, &signs).unwrap());
            // 4096 segments: one group per 2048 elements; 2: at most two.
            for segments in [4096, 2] {
                for vec4 in [false, true] {
                    for op in OPS {
                        let b = if op == ReduceOp::Product { &bs } else { &bx };
                        let want = reference(if op == ReduceOp::Product { &signs } else { &x }, op);
                        let plan = single(segments, vec4);
                        for _ in 0..2 {
                            // A stale result must not survive.
                            out.write(&[f32::NAN]).unwrap();
                            reduce::reduce_with_plan(d, b, op, &mut out, &mut scratch, Some(plan)).unwrap();
                            let got = out.read().unwrap()[0];
                            assert_eq!(got, want, "{name}: {op:?} of {n} with {plan:?}");
                        }
                    }
                }
            }
        }
    }
    // The tuner's candidates on the GPU include them for f32 only.
    let names: Vec<String> =
        reduce::candidates::<f32>(gpu(), ReduceOp::Sum, 1 << 24).iter().map(|p| p.name()).collect();
    assert!(
        names.iter().any(|n| n == "single_scalar2048") && names.iter().any(|n| n == "single_vec4_1024"),
        "{names:?}"
    );
    assert!(!reduce::candidates::<i32>(gpu(), ReduceOp::Sum, 1 << 20).iter().any(|p| p.single));
}
