//! Inclusive and exclusive scans.

use super::*;
use onekernel::ops::reduce::{ReduceElement, ReduceOp};
use onekernel::ops::scan::{self, ScanElement, ScanPlan, ScanScratch};

/// Plain Rust: a running fold.
fn reference<T: ReduceElement>(x: &[T], op: ReduceOp, inclusive: bool) -> Vec<T> {
    let mut acc = T::identity(op);
    x.iter()
        .map(|&v| {
            let next = T::combine(op, acc, v.to_acc());
            let r = if inclusive { next } else { acc };
            acc = next;
            T::from_acc(r)
        })
        .collect()
}

fn check<T: ScanElement>(make: impl Fn(usize) -> T, ops: &[ReduceOp], sizes: &[usize]) {
    for &n in sizes {
        let x: Vec<T> = (0..n).map(&make).collect();
        for (name, d) in devices_for(n) {
            let b = Buffer::from_slice(d, &x).unwrap();
            for &op in ops {
                for inclusive in [true, false] {
                    let got = scan::scan(d, &b, op, inclusive).unwrap().read().unwrap();
                    let want = reference(&x, op, inclusive);
                    // Bitwise, so that -0.0 and NaN compare as written.
                    let same = got.len() == want.len()
                        && got.iter().zip(&want).all(|(a, b)| bytemuck::bytes_of(a) == bytemuck::bytes_of(b));
                    assert!(
                        same,
                        "{name}: {op:?} inclusive={inclusive} of {n} {}: first difference at {:?}",
                        std::any::type_name::<T>(),
                        got.iter().zip(&want).position(|(a, b)| bytemuck::bytes_of(a) != bytemuck::bytes_of(b))
                    );
                }
            }
        }
    }
}

const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Product, ReduceOp::Min, ReduceOp::Max];

#[test]
fn integers_exactly_and_u32_wraps() {
    // Large values: the u32 running sum wraps many times.
    check(|i| hash(i, 21), &ALL, SIZES);
    check(|i| hash(i, 21), &[ReduceOp::Sum], LONG_SIZES);
    check(|i| hash(i, 22) as i32, &ALL, SIZES);
    check(|i| (hash(i, 23) as u64) << 40 | hash(i, 24) as u64, &[ReduceOp::Sum, ReduceOp::Max], SIZES);
    check(|i| -((hash(i, 25) % 1000) as i64), &[ReduceOp::Sum, ReduceOp::Min], SIZES);
}

#[test]
fn floats_exactly_on_small_integers() {
    // Small integers: every prefix sum is exact, in any order.
    check(|i| (hash(i, 26) % 9) as f32 - 4.0, &[ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max], SIZES);
    check(|i| (hash(i, 26) % 9) as f32 - 4.0, &[ReduceOp::Sum], LONG_SIZES);
    check(|i| (hash(i, 27) % 9) as f64 - 4.0, &[ReduceOp::Sum, ReduceOp::Max], SIZES);
    // f16 accumulates in f32: prefix sums up to 2^24 exact, rounded once.
    check(|i| f16::from_f32((hash(i, 28) % 9) as f32 - 4.0), &[ReduceOp::Sum, ReduceOp::Min], SIZES);
}

#[test]
fn nan_inf_and_signed_zero() {
    let x = [1.0f32, -0.0, f32::INFINITY, 2.0, f32::NAN, 3.0, f32::NEG_INFINITY, -5.0];
    let x: Vec<f32> = x.iter().copied().cycle().take(3000).collect();
    for (name, d) in devices() {
        let b = Buffer::from_slice(d, &x).unwrap();
        for op in ALL {
            for inclusive in [true, false] {
                let got = scan::scan(d, &b, op, inclusive).unwrap().read().unwrap();
                let want = reference(&x, op, inclusive);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{name}: {op:?} at {i}: {g} != {w}"
                    );
                }
            }
        }
        // A sum of negative zeros stays -0.0 (the identity is -0.0).
        let z = Buffer::from_slice(d, &[-0.0f32; 5]).unwrap();
        let got = scan::exclusive_sum(d, &z).unwrap().read().unwrap();
        assert!(got.iter().all(|v| v.to_bits() == (-0.0f32).to_bits()), "{name}: {got:?}");
    }
}

#[test]
fn past_the_grid_fold() {
    // 2^24 + 3 elements that wrap: once on the GPU and the host path.
    let n = (1 << 24) + 3;
    let x: Vec<u32> = (0..n).map(|i| hash(i, 29)).collect();
    let want = reference(&x, ReduceOp::Sum, true);
    for (name, d) in [("gpu", gpu()), ("cpu host", cpu())] {
        let b = Buffer::from_slice(d, &x).unwrap();
        let got = scan::inclusive_sum(d, &b).unwrap().read().unwrap();
        assert!(got == want, "{name}: first difference at {:?}", got.iter().zip(&want).position(|(a, b)| a != b));
    }
}

#[test]
fn into_form_reuses_scratch_and_names_its_arguments() {
    for (name, d) in devices() {
        let long: Vec<u32> = (0..70_000).map(|i| hash(i, 30) % 100).collect();
        let big = Buffer::from_slice(d, &long).unwrap();
        let mut out = Buffer::<u32>::zeroed(d, long.len()).unwrap();
        let mut scratch = ScanScratch::for_len(d, long.len()).unwrap();
        for _ in 0..2 {
            scan::scan_into(d, &big, ReduceOp::Sum, true, &mut out, &mut scratch).unwrap();
        }
        assert_eq!(out.read().unwrap(), reference(&long, ReduceOp::Sum, true), "{name}");
        // A shorter input with the larger scratch.
        let small = Buffer::from_slice(d, &long[..5000]).unwrap();
        let mut out_small = Buffer::<u32>::zeroed(d, 5000).unwrap();
        scan::scan_into(d, &small, ReduceOp::Sum, false, &mut out_small, &mut scratch).unwrap();
        assert_eq!(out_small.read().unwrap(), reference(&long[..5000], ReduceOp::Sum, false), "{name}");
        let err = scan::scan_into(d, &small, ReduceOp::Sum, true, &mut out, &mut scratch).unwrap_err();
        assert!(err.to_string().contains("ops::scan") && err.to_string().contains("`out`"), "{err}");
    }
}

/// The scan of a range of rows (a contiguous view) into a range of rows of
/// another buffer; the rest of `out` is untouched; a view that is not
/// contiguous is an `Err` naming it.
#[test]
fn a_range_of_rows_into_a_range_of_rows() {
    let (rows, cols) = (50, 41);
    let m: Vec<u32> = (0..rows * cols).map(|i| hash(i, 50)).collect();
    for (name, d) in devices() {
        let b = Buffer::from_slice(d, &m).unwrap();
        let mut out = Buffer::<u32>::zeroed(d, rows * cols).unwrap();
        let mut scratch = ScanScratch::new();
        let x = b.view_2d(rows, cols).unwrap().slice_rows(5..45).unwrap();
        {
            let mut o = out.view_2d_mut(rows, cols).unwrap().slice_rows(2..42).unwrap();
            scan::scan_view_into(d, x, ReduceOp::Sum, false, &mut o, &mut scratch).unwrap();
        }
        let got = out.read().unwrap();
        let want = reference(&m[5 * cols..45 * cols], ReduceOp::Sum, false);
        assert_eq!(&got[2 * cols..42 * cols], &want[..], "{name}");
        assert!(got[..2 * cols].iter().chain(&got[42 * cols..]).all(|&v| v == 0), "{name}: wrote outside the view");
        // One row.
        let row = b.view_2d(rows, cols).unwrap().row(7).unwrap();
        let mut o = out.view_2d_mut(rows, cols).unwrap().slice_rows(0..1).unwrap();
        scan::scan_view_into(d, row, ReduceOp::Max, true, &mut o, &mut scratch).unwrap();
        assert_eq!(out.read_range(..cols).unwrap(), reference(&m[7 * cols..8 * cols], ReduceOp::Max, true), "{name}");
        // Columns are not contiguous.
        let block = b.view_2d(rows, cols).unwrap().slice_cols(1..3).unwrap();
        let mut o = out.view_2d_mut(rows, cols).unwrap().slice_cols(1..3).unwrap();
        let err = scan::scan_view_into(d, block, ReduceOp::Sum, true, &mut o, &mut scratch).unwrap_err();
        assert!(err.to_string().contains("ops::scan_view") && err.to_string().contains("`x`"), "{err}");
    }
}

/// `x` scanned with `plan` on `d`, bitwise against plain Rust.
fn check_plan<T: ScanElement>(d: &Device, x: &[T], op: ReduceOp, plan: ScanPlan, what: &str) {
    check_plan_with(d, x, op, plan, &mut ScanScratch::new(), what);
}

/// [`check_plan`] with the caller's scratch (reused across calls).
fn check_plan_with<T: ScanElement>(
    d: &Device,
    x: &[T],
    op: ReduceOp,
    plan: ScanPlan,
    scratch: &mut ScanScratch<T>,
    what: &str,
) {
    let b = Buffer::from_slice(d, x).unwrap();
    let mut out = Buffer::<T>::zeroed(d, x.len()).unwrap();
    for inclusive in [true, false] {
        scan::scan_with_plan(d, &b, op, inclusive, &mut out, scratch, plan).unwrap();
        let got = out.read().unwrap();
        let want = reference(x, op, inclusive);
        let diff = got.iter().zip(&want).position(|(a, b)| bytemuck::bytes_of(a) != bytemuck::bytes_of(b));
        assert!(diff.is_none(), "{what}: {plan:?} inclusive={inclusive} of {}: first difference at {diff:?}", x.len());
    }
}

/// Every plan the tuner may choose on the GPU (7, 11, 15 elements a
/// thread; 1024 or 2048 segments; the vector reduction pass), at the
/// edges of a tile and a vector, against plain Rust; 2^24 + 3 (past the
/// grid fold) with the first plan with and without the vector pass (each
/// plan ran at the shorter lengths: on lavapipe every plan at 2^24 + 3
/// took most of this suite's time).
#[test]
fn every_plan_on_the_gpu() {
    let d = gpu();
    let sizes = [1, 2, 33, 257, 1792, 1793, 2816, 3841, 4096, 4099, 65_537, 100_003, 1_000_003];
    for n in sizes {
        let u: Vec<u32> = (0..n).map(|i| hash(i, 70)).collect();
        let s: Vec<i32> = (0..n).map(|i| hash(i, 71) as i32).collect();
        let f: Vec<f32> = (0..n).map(|i| (hash(i, 72) % 9) as f32 - 4.0).collect();
        let h: Vec<f16> = (0..n).map(|i| f16::from_f32((hash(i, 73) % 9) as f32 - 4.0)).collect();
        let w: Vec<u64> = (0..n).map(|i| (hash(i, 74) as u64) << 33 | hash(i, 75) as u64).collect();
        let plans = scan::candidates::<u32>(d, ReduceOp::Sum, n, 0);
        assert!(n < 4096 || plans.iter().any(|p| p.vec4), "{n}: no vec4 plan among {plans:?}");
        // At 1,000,003 the tile plans only: the subgroup and single-pass
        // plans run there in their own tests (lavapipe's time).
        for plan in plans.into_iter().filter(|p| n < 1_000_000 || p.chunks == 0) {
            check_plan(d, &u, ReduceOp::Sum, plan, "u32");
            check_plan(d, &s, ReduceOp::Sum, plan, "i32");
            check_plan(d, &f, ReduceOp::Sum, plan, "f32");
            check_plan(d, &s, ReduceOp::Max, plan, "i32 max");
        }
        for plan in scan::candidates::<f16>(d, ReduceOp::Sum, n, 0) {
            check_plan(d, &h, ReduceOp::Sum, plan, "f16");
        }
        // 8-byte values: 7 elements a thread whatever the plan asks.
        for plan in
            scan::candidates::<u32>(d, ReduceOp::Sum, n, 0).into_iter().filter(|p| n < 1_000_000 || p.chunks == 0)
        {
            check_plan(d, &w, ReduceOp::Sum, plan, "u64");
        }
    }
    let n = (1 << 24) + 3;
    let u: Vec<u32> = (0..n).map(|i| hash(i, 76)).collect();
    let plans = scan::candidates::<u32>(d, ReduceOp::Sum, n, 0);
    for vec4 in [true, false] {
        let plan = *plans.iter().find(|p| p.vec4 == vec4).expect("a plan with and without the vector pass");
        check_plan(d, &u, ReduceOp::Sum, plan, "u32 2^24 + 3");
    }
}

/// The tiles of 11 and 15 elements a thread on the CPU executor running
/// the kernels, as on the GPU.
#[test]
fn wider_tiles_on_the_cpu_kernels() {
    let d = serial();
    for n in [1, 255, 2816, 2817, 3840, 3841, 9000] {
        let u: Vec<u32> = (0..n).map(|i| hash(i, 77)).collect();
        let f: Vec<f32> = (0..n).map(|i| (hash(i, 78) % 9) as f32 - 4.0).collect();
        for k in [11, 15] {
            let plan = ScanPlan::tiles(3, k, true);
            check_plan(d, &u, ReduceOp::Sum, plan, "u32 cpu kernels");
            check_plan(d, &f, ReduceOp::Min, plan, "f32 min cpu kernels");
        }
    }
}

/// The subgroup scan kernels launched directly on the CPU executor
/// (32-lane subgroups; serial and race-checked): 1, 2 and 4 chunks a step,
/// one and several segments, a last step cut short, offsets into both
/// buffers (the vectors around the output untouched), inclusive and
/// exclusive, wrapping `u32` and `f32` sums, against plain Rust.
#[test]
fn subgroup_scan_kernels_on_the_cpu() {
    use onekernel::ops::scan::{scan_sum_uvec4, scan_sum_vec4};
    let race = Device::cpu_race_checked();
    // (vectors, vectors a segment, chunks a step)
    let cases: &[(usize, usize, usize)] = &[(1, 256, 1), (300, 256, 1), (700, 512, 2), (1030, 1024, 4), (1029, 512, 2)];
    for (name, d) in [("cpu kernels", serial()), ("race checked", &race)] {
        for &(n4, seg4, chunks) in cases {
            let n = n4 * 4;
            let segments = n4.div_ceil(seg4);
            let g = Grid::blocks(segments);
            let (xo4, oo4) = (3, 2);
            let u: Vec<u32> = (0..n).map(|i| hash(i, 90 + chunks as u32)).collect();
            let f: Vec<f32> = (0..n).map(|i| (hash(i, 91) % 9) as f32 - 4.0).collect();
            let seg_total_u =
                |s: usize| u[s * seg4 * 4..((s + 1) * seg4 * 4).min(n)].iter().fold(0u32, |a, &v| a.wrapping_add(v));
            let seg_total_f = |s: usize| f[s * seg4 * 4..((s + 1) * seg4 * 4).min(n)].iter().sum::<f32>();
            let tu = Buffer::from_slice(d, &(0..segments).map(seg_total_u).collect::<Vec<_>>()).unwrap();
            let tf = Buffer::from_slice(d, &(0..segments).map(seg_total_f).collect::<Vec<_>>()).unwrap();
            let mut xu = vec![UVec4::splat(7); xo4];
            xu.extend(u.chunks(4).map(UVec4::from_slice));
            let mut xf = vec![Vec4::splat(7.0); xo4];
            xf.extend(f.chunks(4).map(Vec4::from_slice));
            let (xu, xf) = (Buffer::from_slice(d, &xu).unwrap(), Buffer::from_slice(d, &xf).unwrap());
            for inclusive in [true, false] {
                let what = format!("{name}: {n4} vectors, {seg4} a segment, {chunks} chunks, inclusive={inclusive}");
                let (n4, s4, inc) = (n4 as u32, seg4 as u32, inclusive as u32);
                let mut ou = Buffer::from_slice(d, &vec![UVec4::splat(9); oo4 + n4 as usize + 1]).unwrap();
                let mut of = Buffer::from_slice(d, &vec![Vec4::splat(9.0); oo4 + n4 as usize + 1]).unwrap();
                let (x4, o4) = (xo4 as u32, oo4 as u32);
                match chunks {
                    1 => {
                        scan_sum_uvec4::launch::<1>(d, g, &xu, &mut ou, &tu, x4, o4, n4, s4, inc).unwrap();
                        scan_sum_vec4::launch::<1>(d, g, &xf, &mut of, &tf, x4, o4, n4, s4, inc).unwrap();
                    }
                    2 => {
                        scan_sum_uvec4::launch::<2>(d, g, &xu, &mut ou, &tu, x4, o4, n4, s4, inc).unwrap();
                        scan_sum_vec4::launch::<2>(d, g, &xf, &mut of, &tf, x4, o4, n4, s4, inc).unwrap();
                    }
                    _ => {
                        scan_sum_uvec4::launch::<4>(d, g, &xu, &mut ou, &tu, x4, o4, n4, s4, inc).unwrap();
                        scan_sum_vec4::launch::<4>(d, g, &xf, &mut of, &tf, x4, o4, n4, s4, inc).unwrap();
                    }
                }
                let (gu, gf) = (ou.read().unwrap(), of.read().unwrap());
                let end = oo4 + n4 as usize;
                assert!(gu[..oo4].iter().chain(&gu[end..]).all(|&v| v == UVec4::splat(9)), "{what}: u32 outside");
                assert!(gf[..oo4].iter().chain(&gf[end..]).all(|&v| v == Vec4::splat(9.0)), "{what}: f32 outside");
                let gu: Vec<u32> = gu[oo4..end].iter().flat_map(|v| v.to_array()).collect();
                let gf: Vec<f32> = gf[oo4..end].iter().flat_map(|v| v.to_array()).collect();
                let (wu, wf) = (reference(&u, ReduceOp::Sum, inclusive), reference(&f, ReduceOp::Sum, inclusive));
                let diff = gu.iter().zip(&wu).position(|(a, b)| a != b);
                assert!(diff.is_none(), "{what}: u32 first difference at {diff:?}");
                let diff = gf.iter().zip(&wf).position(|(a, b)| a.to_bits() != b.to_bits());
                assert!(diff.is_none(), "{what}: f32 first difference at {diff:?}");
            }
        }
    }
}

/// The subgroup plans on the GPU, where its subgroups fit (8 lanes on
/// lavapipe): every candidate at the edges of a step, a segment and the
/// plan's fit (a length that is not a multiple of 4 runs the tile scan),
/// `u32` that wraps, `i32`, `f32`; views at offsets that are multiples of
/// 4 (the subgroup scan) and that are not (the tile scan); 2^24 + 4 once.
#[test]
fn subgroup_plans_on_the_gpu() {
    let d = gpu();
    let fits = d.subgroup_sizes().is_some_and(|(lo, hi)| lo >= 8 && hi <= 256);
    // Lengths that are not multiples of 4: the vectors, then the tail.
    for n in [4096, 4097, 4100, 8192, 8195, 12_292, 65_540, 65_542, 1_000_003, 1_000_004] {
        let u: Vec<u32> = (0..n).map(|i| hash(i, 92)).collect();
        let s: Vec<i32> = (0..n).map(|i| hash(i, 93) as i32).collect();
        let f: Vec<f32> = (0..n).map(|i| (hash(i, 94) % 9) as f32 - 4.0).collect();
        let plans: Vec<ScanPlan> = scan::candidates::<u32>(d, ReduceOp::Sum, n, 0)
            .into_iter()
            .filter(|p| p.chunks > 0 && !p.lookback)
            .collect();
        assert_eq!(!plans.is_empty(), fits, "{n}: subgroup plans {plans:?}");
        // The longest length with the first two plans only (lavapipe's time).
        let most = if n > 100_000 { 2 } else { plans.len() };
        for plan in plans.into_iter().take(most) {
            check_plan(d, &u, ReduceOp::Sum, plan, "u32");
            check_plan(d, &s, ReduceOp::Sum, plan, "i32");
            check_plan(d, &f, ReduceOp::Sum, plan, "f32");
        }
    }
    // Plans that do not fit run the tile scan (under 4096 elements; not a
    // sum).
    let u: Vec<u32> = (0..4095).map(|i| hash(i, 95)).collect();
    check_plan(d, &u, ReduceOp::Sum, ScanPlan::subgroup(2, 1, true), "u32 4095");
    check_plan(d, &u, ReduceOp::Max, ScanPlan::subgroup(2, 1, true), "u32 max");
    let h: Vec<f16> = (0..4100).map(|i| f16::from_f32((hash(i, 96) % 9) as f32)).collect();
    check_plan(d, &h, ReduceOp::Sum, ScanPlan::subgroup(2, 1, false), "f16");
    // Rows of a matrix into a range of a buffer: from offsets 4 * 64 into
    // 8 * 64 (the subgroup scan), from 64 into 8 * 64 + 2 (not a multiple
    // of 4: the tile scan).
    let (rows, cols) = (100, 64);
    let m: Vec<u32> = (0..rows * cols).map(|i| hash(i, 97)).collect();
    let b = Buffer::from_slice(d, &m).unwrap();
    for (from, to, out_shift) in [(4, 8, 0), (1, 8, 2)] {
        let mut out = Buffer::<u32>::zeroed(d, rows * cols + 4).unwrap();
        {
            let x = b.view_2d(rows, cols).unwrap().slice_rows(from..from + 80).unwrap();
            let buf_rows = out.view_2d_mut(1, rows * cols + 4).unwrap();
            let mut o = buf_rows.slice_cols(to * cols + out_shift..(to + 80) * cols + out_shift).unwrap();
            scan::scan_view_into(d, x, ReduceOp::Sum, true, &mut o, &mut ScanScratch::new()).unwrap();
        }
        let got = out.read().unwrap();
        let at = to * cols + out_shift;
        let want = reference(&m[from * cols..(from + 80) * cols], ReduceOp::Sum, true);
        assert_eq!(&got[at..at + 80 * cols], &want[..], "rows {from}.. into {at}..");
        assert!(got[..at].iter().chain(&got[at + 80 * cols..]).all(|&v| v == 0), "wrote outside the view");
    }
    let n = (1 << 24) + 4;
    let u: Vec<u32> = (0..n).map(|i| hash(i, 98)).collect();
    if let Some(&plan) = scan::candidates::<u32>(d, ReduceOp::Sum, n, 0).iter().find(|p| p.chunks > 0 && p.reverse) {
        check_plan(d, &u, ReduceOp::Sum, plan, "u32 2^24 + 4");
    }
}

/// The tail of a vector scan (`scan_tail_sum`: the last 1 to 3 elements
/// after the vectors) on the CPU executor and the GPU, launched directly:
/// `u32` sums that wrap and `f32` sums (as bits), inclusive and exclusive,
/// from offsets into both buffers; the words around the tail untouched.
#[test]
fn scan_tails_on_every_device() {
    use onekernel::ops::scan::scan_tail_sum;
    let x: Vec<u32> = (0..11).map(|i| hash(i, 130) | 0x8000_0000).collect();
    let f: Vec<f32> = (0..11).map(|i| (hash(i, 131) % 7) as f32 * 0.25 - 1.0).collect();
    for (name, d) in devices() {
        for r in 1..=3usize {
            for inclusive in [true, false] {
                for float in [false, true] {
                    let words: Vec<u32> = if float { f.iter().map(|v| v.to_bits()).collect() } else { x.clone() };
                    // The scan of words 2..6 of `x` (a vector, then the
                    // tail) into words 3.. of `out`: the vector's results
                    // written as a vector kernel would have.
                    let add = |a: u32, b: u32| {
                        if float {
                            (f32::from_bits(a) + f32::from_bits(b)).to_bits()
                        } else {
                            a.wrapping_add(b)
                        }
                    };
                    let mut want = vec![7u32; 12];
                    let mut acc = if float { (-0.0f32).to_bits() } else { 0 };
                    for i in 0..4 + r {
                        let before = acc;
                        acc = add(acc, words[2 + i]);
                        want[3 + i] = if inclusive { acc } else { before };
                    }
                    let mut start = vec![7u32; 12];
                    start[3..7].copy_from_slice(&want[3..7]);
                    let xb = Buffer::from_slice(d, &words).unwrap();
                    let mut out = Buffer::from_slice(d, &start).unwrap();
                    let (inc, fl) = (inclusive as u32, float as u32);
                    scan_tail_sum::launch(d, Grid::blocks(1), &xb, &mut out, 6, 7, r as u32, inc, fl).unwrap();
                    let what = format!("{name}: r={r} inclusive={inclusive} float={float}");
                    assert_eq!(out.read().unwrap(), want, "{what}");
                }
            }
        }
    }
}

/// The single-pass kernel launched directly on the CPU executor (serial
/// and race-checked): one tile and several, a last tile cut short, offsets
/// into both buffers (the vectors around the output untouched), inclusive
/// and exclusive, wrapping sums; three launches on the same words, the
/// epoch counted up (words of an earlier launch must read as unpublished),
/// with the look-back (spin 256) and the fallback forced (spin 0); a
/// workgroup a tile, and a few workgroups (or more than the tiles) taking
/// tile after tile, their counters back at 0 after each launch.
#[test]
fn single_pass_kernel_on_the_cpu() {
    use onekernel::ops::scan::lookback::lookback_sum_uvec4;
    let race = Device::cpu_race_checked();
    // (vectors, chunks a tile)
    let cases: &[(usize, usize)] = &[(1, 2), (511, 2), (512, 2), (2049, 4), (3000, 2), (2048, 8), (4099, 8)];
    for (name, d) in [("cpu kernels", serial()), ("race checked", &race)] {
        for &(n4, chunks) in cases {
            let n = n4 * 4;
            let tiles = n4.div_ceil(chunks * 256);
            let (xo4, oo4) = (3, 2);
            let u: Vec<u32> = (0..n).map(|i| hash(i, 110 + chunks as u32)).collect();
            let mut xu = vec![UVec4::splat(7); xo4];
            xu.extend(u.chunks(4).map(UVec4::from_slice));
            let xu = Buffer::from_slice(d, &xu).unwrap();
            let mut state = Buffer::<u32>::zeroed(d, 2 + 2 * tiles).unwrap();
            for (epoch, spin, inclusive) in
                [(1, 256, true), (2, 0, false), (3, 256, false), (4, 256, true), (5, 0, true), (6, 0, false)]
            {
                // Even epochs: a workgroup a tile; odd (1, 3, 5): one
                // workgroup, three, or more than the tiles, taking tile after
                // tile (`AHEAD`).
                let ahead = epoch % 2 == 1;
                let groups = if ahead { [1, 3, tiles + 2][epoch as usize / 2] } else { tiles };
                let what = format!(
                    "{name}: {n4} vectors, {chunks} chunks a tile, spin {spin}, inclusive={inclusive}, {groups} groups"
                );
                let mut ou = Buffer::from_slice(d, &vec![UVec4::splat(9); oo4 + n4 + 1]).unwrap();
                let g = Grid::blocks(groups);
                let (x4, o4, n4u, inc) = (xo4 as u32, oo4 as u32, n4 as u32, inclusive as u32);
                let (k, st) = (&xu, &mut state);
                match (chunks, ahead) {
                    (2, false) => {
                        lookback_sum_uvec4::launch::<2, 0>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                    (4, false) => {
                        lookback_sum_uvec4::launch::<4, 0>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                    (_, false) => {
                        lookback_sum_uvec4::launch::<8, 0>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                    (2, true) => {
                        lookback_sum_uvec4::launch::<2, 1>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                    (4, true) => {
                        lookback_sum_uvec4::launch::<4, 1>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                    (_, true) => {
                        lookback_sum_uvec4::launch::<8, 1>(d, g, k, &mut ou, st, x4, o4, n4u, inc, epoch, spin)
                    }
                }
                .unwrap();
                assert_eq!(state.read().unwrap()[..2], [0, 0], "{what}: counters not reset");
                let got = ou.read().unwrap();
                let end = oo4 + n4;
                assert!(got[..oo4].iter().chain(&got[end..]).all(|&v| v == UVec4::splat(9)), "{what}: outside");
                let got: Vec<u32> = got[oo4..end].iter().flat_map(|v| v.to_array()).collect();
                let diff = got.iter().zip(reference(&u, ReduceOp::Sum, inclusive)).position(|(a, b)| *a != b);
                assert!(diff.is_none(), "{what}: first difference at {diff:?}");
            }
        }
    }
}

/// The single-pass plans on the GPU (lavapipe runs workgroups on several
/// threads, so tiles do wait for their predecessors there), where they
/// fit (sums of `i32` and `u32`; elsewhere the subgroup scan or the tile
/// scan runs): at the edges of a tile, `u32` that wraps and `i32`,
/// inclusive and exclusive, the fallback forced (spin 0: every tile
/// reduces its predecessors' input itself) and a single wait (spin 1);
/// the scratch reused across lengths and plans (its epoch counted up);
/// 2^24 + 4 once. (Offsets: `single_pass_kernel_on_the_cpu`.) Lengths
/// under 4096 run the tile scan.
#[test]
fn single_pass_plans_on_the_gpu() {
    let d = gpu();
    let fits = d.subgroup_sizes().is_some_and(|(lo, hi)| lo >= 8 && hi <= 256);
    for n in [4096, 8192, 12_292, 65_540, 1_000_004] {
        let plans: Vec<ScanPlan> =
            scan::candidates::<u32>(d, ReduceOp::Sum, n, 0).into_iter().filter(|p| p.lookback).collect();
        assert_eq!(plans.len(), if fits { 4 } else { 0 }, "{n}: single-pass plans {plans:?}");
        assert!(scan::candidates::<f32>(d, ReduceOp::Sum, n, 0).iter().all(|p| !p.lookback), "f32 sums stay two-pass");
    }
    let mut scratch = ScanScratch::<u32>::new();
    for n in [4, 1020, 4096, 4099, 4100, 8192, 8193, 12_292, 65_540, 65_541, 1_000_003, 1_000_004] {
        let u: Vec<u32> = (0..n).map(|i| hash(i, 120)).collect();
        let s: Vec<u32> = (0..n).map(|i| hash(i, 121) % 1000).collect();
        for &chunks in if n > 100_000 { &[4][..] } else { &[8, 4, 2] } {
            check_plan_with(d, &u, ReduceOp::Sum, ScanPlan::single_pass(chunks), &mut scratch, "u32");
            check_plan_with(d, &s, ReduceOp::Sum, ScanPlan::single_pass(chunks), &mut scratch, "small u32");
            // Tile after tile: the tuner's 1024 workgroups, three, one.
            let groups = match chunks {
                8 => 1024,
                4 => 3,
                _ => 1,
            };
            let plan = ScanPlan::single_pass_ahead(chunks, groups);
            check_plan_with(d, &u, ReduceOp::Sum, plan, &mut scratch, &format!("u32, {groups} groups"));
        }
    }
    for n in [4, 8192, 8196, 40_964, 1_000_004] {
        let u: Vec<u32> = (0..n).map(|i| hash(i, 125)).collect();
        check_plan_with(d, &u, ReduceOp::Sum, ScanPlan::single_pass(8), &mut scratch, "u32, tiles of 8 chunks");
    }
    let i: Vec<i32> = (0..65_539).map(|i| hash(i, 122) as i32).collect();
    check_plan(d, &i, ReduceOp::Sum, ScanPlan::single_pass(4), "i32");
    for spin in [0, 1] {
        let mut scratch = ScanScratch::<u32>::new().with_spin(spin);
        for n in [4100, 12_292, 40_964] {
            let u: Vec<u32> = (0..n).map(|i| hash(i, 123)).collect();
            for chunks in [2, 8] {
                let what = format!("{chunks} chunks, spin {spin}");
                check_plan_with(d, &u, ReduceOp::Sum, ScanPlan::single_pass(chunks), &mut scratch, &what);
                let plan = ScanPlan::single_pass_ahead(chunks, 4);
                check_plan_with(d, &u, ReduceOp::Sum, plan, &mut scratch, &format!("{what}, 4 groups ahead"));
            }
        }
    }
    let u: Vec<u32> = (0..(1 << 24) + 4).map(|i| hash(i, 124)).collect();
    check_plan_with(d, &u, ReduceOp::Sum, ScanPlan::single_pass(4), &mut scratch, "u32 2^24 + 4");
}
