//! Buffers of `f16` (2-byte elements) of any length, through `#[kernel]`,
//! on the CPU executor and the GPU: a GPU binds buffers in whole 4-byte
//! words, so an odd number of `f16`s is allocated rounded up, yet the host
//! and the kernel see the logical length (the kernel reads it from the
//! launch block, not from `arrayLength`), reads, writes and copies cover
//! exactly it, and a checked launch bounds it (docs/semantics.md, "Buffers of `f16`
//! of any length").

use onekernel::prelude::*;
use onekernel::LaunchError;
use std::sync::atomic::{AtomicU32, Ordering};

/// Every invocation within `h` doubles its element; the first records the
/// lengths it sees, and `count` how many invocations were within `h`.
#[kernel(workgroup_size = 64)]
fn double_halves(
    h: &[f16],
    v: &[F16Vec2],
    out: &mut [f16],
    vout: &mut [F16Vec2],
    lens: &mut [u32],
    count: &[AtomicU32],
) {
    let i = global_id().x;
    if i == 0 {
        lens[0] = h.len() as u32;
        lens[1] = v.len() as u32;
        lens[2] = out.len() as u32;
        lens[3] = vout.len() as u32;
        lens[4] = if h.is_empty() { 1 } else { 0 };
    }
    if i < h.len() {
        count[0].fetch_add(1, Ordering::Relaxed);
        out[i] = h[i] * f16::from_f32(2.0);
    }
    if i < vout.len() {
        vout[i] = v[i] + v[i];
    }
}

/// No guard: an invocation past the end indexes both buffers (a workgroup
/// of one, so that a grid of `n` threads stays within `n` elements)
#[kernel(workgroup_size = 1)]
fn copy_unguarded(h: &[f16], out: &mut [f16]) {
    let i = global_id().x;
    out[i] = h[i]; // SITE copy_unguarded
}

const LENGTHS: [usize; 4] = [0, 1, 3, 4099];

fn devices() -> [Device; 2] {
    [Device::cpu(), Device::gpu().expect("the test needs a GPU adapter (source .ci/env.sh for lavapipe)")]
}

fn halves(n: usize, seed: u32) -> Vec<f16> {
    (0..n).map(|i| f16::from_f32(((i as u32 * 37 + seed) % 200) as f32 * 0.25 - 20.0)).collect()
}

fn pairs(n: usize) -> Vec<F16Vec2> {
    let flat = halves(n * 2, 7);
    flat.chunks(2).map(|p| F16Vec2::new(p[0], p[1])).collect()
}

#[test]
fn kernels_see_the_logical_length_of_f16_buffers() {
    for device in devices() {
        let name = device.name();
        for n in LENGTHS {
            let (h, v) = (halves(n, 1), pairs(n));
            let h_buf = Buffer::from_slice(&device, &h).unwrap();
            let v_buf = Buffer::from_slice(&device, &v).unwrap();
            let mut out = Buffer::<f16>::zeroed(&device, n).unwrap();
            let mut vout = Buffer::<F16Vec2>::zeroed(&device, n).unwrap();
            let mut lens = Buffer::<u32>::zeroed(&device, 5).unwrap();
            let mut count = Buffer::<u32>::zeroed(&device, 1).unwrap();
            assert_eq!((h_buf.len(), out.len(), vout.len()), (n, n, n));
            // More invocations than elements: only the guard keeps them out.
            double_halves::launch(&device, n + 64, &h_buf, &v_buf, &mut out, &mut vout, &mut lens, &mut count).unwrap();
            let n32 = n as u32;
            assert_eq!(lens.read().unwrap(), [n32, n32, n32, n32, u32::from(n == 0)], "{name}, n = {n}");
            assert_eq!(count.read().unwrap(), [n32], "{name}, n = {n}: invocations within `h`");
            let want: Vec<f16> = h.iter().map(|x| *x * f16::from_f32(2.0)).collect();
            assert_eq!(out.read().unwrap(), want, "{name}, n = {n}");
            let vwant: Vec<F16Vec2> = v.iter().map(|x| *x + *x).collect();
            assert_eq!(vout.read().unwrap(), vwant, "{name}, n = {n}");
        }
    }
}

#[test]
fn reads_writes_and_copies_cover_the_logical_range() {
    for device in devices() {
        let name = device.name();
        for n in LENGTHS {
            let data = halves(n, 3);
            let mut a = Buffer::from_slice(&device, &data).unwrap();
            assert_eq!((a.len(), a.read().unwrap()), (n, data.clone()), "{name}, n = {n}");
            // An odd write at an odd offset, ending at the last element.
            let mut want = data.clone();
            if n >= 3 {
                let patch = [f16::from_f32(1.5), f16::from_f32(-2.5)];
                a.write_range(n - 2, &patch).unwrap();
                want[n - 2..].copy_from_slice(&patch);
                assert_eq!(a.read_range(n - 3..).unwrap(), &want[n - 3..], "{name}, n = {n}");
            }
            assert!(a.write_range(n, &[f16::ONE]).is_err(), "{name}, n = {n}: a write past the end");
            assert!(a.read_range(..n + 1).is_err(), "{name}, n = {n}: a read past the end");
            // Whole copies, and a copy of the last element to an odd offset.
            let mut b = Buffer::<f16>::zeroed(&device, n).unwrap();
            assert_eq!(b.read().unwrap(), vec![f16::ZERO; n], "{name}, n = {n}");
            b.copy_from(&a).unwrap();
            assert_eq!(b.read().unwrap(), want, "{name}, n = {n}");
            if n >= 3 {
                let mut c = Buffer::<f16>::zeroed(&device, 3).unwrap();
                c.copy_range_from(1, &a, n - 1..n).unwrap();
                assert_eq!(c.read().unwrap(), [f16::ZERO, want[n - 1], f16::ZERO], "{name}, n = {n}");
            }
            let mut vs = Buffer::from_slice(&device, &pairs(n)).unwrap();
            assert_eq!(vs.read().unwrap(), pairs(n), "{name}, n = {n}");
            if n > 0 {
                vs.write_range(n - 1, &[F16Vec2::ONE]).unwrap();
                assert_eq!(vs.read_range(n - 1..).unwrap(), [F16Vec2::ONE], "{name}, n = {n}");
            }
        }
    }
}

#[test]
fn checked_launches_bound_the_logical_length() {
    let [cpu, gpu] = devices();
    for n in [1, 3, 4099] {
        let h = Buffer::from_slice(&gpu, &halves(n, 5)).unwrap();
        let mut out = Buffer::<f16>::zeroed(&gpu, n).unwrap();
        // One invocation past the end: index n, though the allocation of
        // an odd n holds n + 1 elements.
        let err = copy_unguarded::launch(&gpu.checked(), n + 1, &h, &mut out).unwrap_err();
        let LaunchError::OutOfBounds { kernel, index, len, .. } = &err else { panic!("n = {n}: {err:?}") };
        assert_eq!((*kernel, *index, *len), ("copy_unguarded", n as u32, n as u32), "{err}");
        // In bounds: no error, the same copy.
        copy_unguarded::launch(&gpu.checked(), n, &h, &mut out).unwrap();
        assert_eq!(out.read().unwrap(), halves(n, 5));
        // The CPU executor panics at the same line.
        let h = Buffer::from_slice(&cpu, &halves(n, 5)).unwrap();
        let mut out = Buffer::<f16>::zeroed(&cpu, n).unwrap();
        let err = copy_unguarded::launch(&cpu, n + 1, &h, &mut out).unwrap_err();
        let LaunchError::CpuPanic { location: Some(at), .. } = &err else { panic!("n = {n}: {err:?}") };
        assert!(at.contains(&format!("f16_lengths.rs:{}:", site_line())), "{err}");
    }
}

/// The line of this file marked `// SITE copy_unguarded`.
fn site_line() -> usize {
    let source = include_str!("f16_lengths.rs");
    source.lines().position(|l| l.ends_with("// SITE copy_unguarded")).expect("marked line") + 1
}
