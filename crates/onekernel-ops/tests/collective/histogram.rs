//! Histograms into few (shared-memory) and many (global atomics) bins.

use super::*;
use onekernel::ops::histogram;

fn reference(values: &[u32], bins: usize) -> Vec<u32> {
    let mut h = vec![0u32; bins];
    for &v in values {
        if (v as usize) < bins {
            h[v as usize] += 1;
        }
    }
    h
}

#[test]
fn against_plain_rust() {
    for &bins in &[1usize, 7, 256, 4096, 4097, 65_536] {
        let long = if bins == 256 || bins == 65_536 { LONG_SIZES } else { &[] };
        for &n in SIZES.iter().chain(long) {
            // Values a little past the bins (those are not counted), and a
            // skewed run of one value (contention on one atomic).
            let values: Vec<u32> = (0..n)
                .map(|i| if i % 5 == 0 { 3 % bins as u32 } else { hash(i, 31) % (bins as u32 + bins as u32 / 8 + 1) })
                .collect();
            let want = reference(&values, bins);
            for (name, d) in devices_for(n) {
                let b = Buffer::from_slice(d, &values).unwrap();
                let got = histogram::histogram(d, &b, bins).unwrap().read().unwrap();
                assert!(got == want, "{name}: {n} values into {bins} bins");
            }
        }
    }
}

#[test]
fn into_clears_add_accumulates_and_errors_name_arguments() {
    for (name, d) in devices() {
        let values = Buffer::from_slice(d, &[2u32, 2, 0, 5]).unwrap();
        let mut counts = Buffer::<u32>::zeroed(d, 4).unwrap();
        for _ in 0..3 {
            histogram::histogram_into(d, &values, &mut counts).unwrap();
        }
        assert_eq!(counts.read().unwrap(), [1, 0, 2, 0], "{name}");
        histogram::histogram_add(d, &values, &mut counts).unwrap();
        assert_eq!(counts.read().unwrap(), [2, 0, 4, 0], "{name}");
        let mut none = Buffer::<u32>::zeroed(d, 0).unwrap();
        let err = histogram::histogram_into(d, &values, &mut none).unwrap_err();
        assert!(err.to_string().contains("ops::histogram") && err.to_string().contains("`counts`"), "{err}");
    }
}

#[test]
fn the_shared_kernel_has_no_races() {
    let d = Device::cpu_race_checked();
    let values: Vec<u32> = (0..5000).map(|i| hash(i, 32) % 300).collect();
    let b = Buffer::from_slice(&d, &values).unwrap();
    assert_eq!(histogram::histogram(&d, &b, 256).unwrap().read().unwrap(), reference(&values, 256));
}

/// Every plan the tuner may choose, on the GPU (the shared device runs the
/// default), at lengths around the four values a thread of `global_vec4`,
/// into few bins and many; and `global_vec4`'s kernel on the CPU executor
/// (serial and race-checked) from a copy of the values as `UVec4`s.
#[test]
fn every_plan_on_the_gpu() {
    use histogram::HistogramPlan::{Global, Global4, Shared};
    for (bins, n) in
        [5000, 256].into_iter().flat_map(|b| [4, 5, 6, 7, 8, 1023, 1024, 1025, 1027, 65_537].map(|n| (b, n)))
    {
        let values: Vec<u32> =
            (0..n).map(|i| if i % 7 == 0 { bins as u32 - 1 } else { hash(i, 33) % (bins as u32 + 300) }).collect();
        let want = reference(&values, bins);
        let d = gpu();
        let plans = histogram::candidates(d, n, bins);
        assert_eq!(plans, [if bins > 4096 { Global } else { Shared }, Global4], "{n} into {bins}");
        assert_eq!(histogram::candidates(d, 3, bins).len(), 1, "fewer than 4 values: one plan");
        let b = Buffer::from_slice(d, &values).unwrap();
        for plan in plans {
            let mut counts = Buffer::from_slice(d, &vec![1u32; bins]).unwrap();
            histogram::add_with_plan(d, &b, &mut counts, plan).unwrap();
            let got: Vec<u32> = counts.read().unwrap().iter().map(|c| c - 1).collect();
            assert!(got == want, "{n} values into {bins}, {plan:?}");
        }
        if n > 1100 || bins != 5000 {
            continue;
        }
        let race = Device::cpu_race_checked();
        for d in [serial(), &race] {
            let quads: Vec<UVec4> = values.chunks_exact(4).map(UVec4::from_slice).collect();
            let (b4, b) = (Buffer::from_slice(d, &quads).unwrap(), Buffer::from_slice(d, &values).unwrap());
            let mut counts = Buffer::<u32>::zeroed(d, bins).unwrap();
            histogram::global4_plan(d, &b4, &b, &mut counts).unwrap();
            assert!(counts.read().unwrap() == want, "{}: {n} values, global_vec4", d.name());
        }
    }
}
