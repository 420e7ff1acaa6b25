//! `ops::random` against Random123's known answers and a plain-Rust Philox.

use super::common::{gpu, LENGTHS};
use onekernel::ops::random::{fill_into, philox4x32_10, random_u32_with, Distribution};
use onekernel::prelude::*;

/// Philox 4×32-10 written from the paper with 64-bit products (not the
/// 16-bit halves the kernels use).
fn philox_reference(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (ctr, key);
    for _ in 0..10 {
        let p0 = 0xD251_1F53u64 * u64::from(c[0]);
        let p1 = 0xCD9E_8D57u64 * u64::from(c[2]);
        c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
        k = [k[0].wrapping_add(0x9E37_79B9), k[1].wrapping_add(0xBB67_AE85)];
    }
    c
}

/// Number `e` of the stream of `seed`, in plain Rust.
fn stream(seed: u64, e: u64) -> u32 {
    let q = e / 4;
    philox_reference([q as u32, (q >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32])[(e % 4) as usize]
}

/// The devices and paths: the CPU executor's plain Rust, the kernels on
/// the CPU executor, the GPU.
fn runs() -> [(Device, bool); 3] {
    [(Device::cpu(), false), (Device::cpu(), true), (gpu(), false)]
}

#[test]
fn philox_known_answers() {
    // Random123's kat_vectors, philox4x32 10: counter, key, result.
    let kat = [
        ([0u32; 4], [0u32; 2], [0x6627e8d5u32, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
        ([u32::MAX; 4], [u32::MAX; 2], [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
        (
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0],
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
        ),
    ];
    for (ctr, key, want) in kat {
        assert_eq!(philox_reference(ctr, key), want);
        assert_eq!(philox4x32_10(ctr, key), want);
    }
    // The 16-bit-halves multiply against 64-bit products.
    for i in 0..2000u32 {
        let c = [i.wrapping_mul(0x9E3779B9), !i, i << 7, i ^ 0xdeadbeef];
        assert_eq!(philox4x32_10(c, [i, !i]), philox_reference(c, [i, !i]));
    }
}

#[test]
fn random_u32_and_uniform_are_bit_exact_everywhere() {
    // Offsets not multiples of 4, one past 2^32 blocks (the carry).
    for (seed, offset) in [(0u64, 0u64), (42, 3), (u64::MAX, 5), (7, (1u64 << 34) - 2)] {
        for (device, kernels) in runs() {
            for &n in LENGTHS {
                let want: Vec<u32> = (0..n as u64).map(|i| stream(seed, offset + i)).collect();
                let mut out = Buffer::<u32>::zeroed(&device, n).unwrap();
                random_u32_with(&device, &mut out, seed, offset, kernels).unwrap();
                assert!(
                    out.read().unwrap() == want,
                    "u32 n={n} seed={seed} offset={offset} on {} (kernels {kernels})",
                    device.name()
                );
                let mut u = Buffer::<f32>::zeroed(&device, n).unwrap();
                fill_into(&device, &mut u, Distribution::Uniform, seed, offset, kernels).unwrap();
                let want_u: Vec<f32> = want.iter().map(|&w| (w >> 8) as f32 / 16_777_216.0).collect();
                assert!(u.read().unwrap() == want_u, "uniform n={n} on {}", device.name());
            }
        }
    }
}

#[test]
fn normal_agrees_with_box_muller_and_across_devices() {
    let n = 100_003;
    let want: Vec<f32> = (0..n as u64)
        .map(|e| {
            let b = e / 4 * 4;
            let pair = if e % 4 < 2 { b } else { b + 2 };
            let u1 = ((stream(5, pair) >> 8) + 1) as f64 / 16_777_216.0;
            let u2 = (stream(5, pair + 1) >> 8) as f64 / 16_777_216.0;
            let r = (-2.0 * u1.ln()).sqrt();
            let t = u2 * std::f64::consts::TAU;
            let z = if e % 2 == 0 { r * t.cos() } else { r * t.sin() };
            (z * 2.0 + 1.0) as f32
        })
        .collect();
    for (device, kernels) in runs() {
        let mut out = Buffer::<f32>::zeroed(&device, n).unwrap();
        fill_into(&device, &mut out, Distribution::Normal { mean: 1.0, std: 2.0 }, 5, 0, kernels).unwrap();
        let got = out.read().unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "normal[{i}] on {}: {g} vs {w}", device.name());
        }
        let mean = got.iter().map(|&v| f64::from(v)).sum::<f64>() / n as f64;
        let var = got.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.03 && (var.sqrt() - 2.0).abs() < 0.03, "mean {mean}, var {var}");
    }
}

#[test]
fn both_multiplies_give_the_same_stream() {
    // The 16-bit-halves kernels, which a device without `SHADER_INT64`
    // runs (lavapipe and the CPU executor have 64-bit integers, so the
    // ops pick the `_64` kernels there), launched directly: the staged
    // kernels at any offset, the vector ones from offset 0.
    use onekernel::ops::random::kernels::{philox_vec, philox_vec_64, philox_words, philox_words_64};
    for device in [Device::cpu(), gpu()] {
        for (seed, offset, n) in [(3u64, 0u64, 1usize), (9, 5, 1027), (u64::MAX, (1u64 << 34) - 2, 3001)] {
            let (q, skip) = (offset / 4, (offset % 4) as u32);
            let grid = Grid::threads((n + skip as usize).div_ceil(1024) * 256);
            let (lo, hi, k0, k1) = (q as u32, (q >> 32) as u32, seed as u32, (seed >> 32) as u32);
            let want: Vec<u32> = (0..n as u64).map(|i| stream(seed, offset + i)).collect();
            let want_u: Vec<u32> = want.iter().map(|&w| ((w >> 8) as f32 / 16_777_216.0).to_bits()).collect();
            let mut out = Buffer::<u32>::zeroed(&device, n).unwrap();
            philox_words::launch::<0>(&device, grid, &mut out, lo, hi, skip, k0, k1, 0.0, 1.0).unwrap();
            assert_eq!(out.read().unwrap(), want, "16-bit on {}", device.name());
            philox_words_64::launch::<0>(&device, grid, &mut out, lo, hi, skip, k0, k1, 0.0, 1.0).unwrap();
            assert_eq!(out.read().unwrap(), want, "64-bit on {}", device.name());
            philox_words::launch::<1>(&device, grid, &mut out, lo, hi, skip, k0, k1, 0.0, 1.0).unwrap();
            assert!(out.read().unwrap() == want_u, "uniform 16-bit on {}", device.name());
            philox_words_64::launch::<1>(&device, grid, &mut out, lo, hi, skip, k0, k1, 0.0, 1.0).unwrap();
            assert!(out.read().unwrap() == want_u, "uniform 64-bit on {}", device.name());
            // Whole vectors of the stream from block `q`.
            let vecs = n.div_ceil(4);
            let want_v: Vec<UVec4> = (0..vecs as u64)
                .map(|i| UVec4::from_array(std::array::from_fn(|w| stream(seed, (q + i) * 4 + w as u64))))
                .collect();
            let mut v = Buffer::<UVec4>::zeroed(&device, vecs).unwrap();
            philox_vec::launch::<0>(&device, Grid::threads(vecs), &mut v, lo, hi, k0, k1, 0.0, 1.0).unwrap();
            assert_eq!(v.read().unwrap(), want_v, "vector 16-bit on {}", device.name());
            let mut v = Buffer::<UVec4>::zeroed(&device, vecs).unwrap();
            philox_vec_64::launch::<0>(&device, Grid::threads(vecs), &mut v, lo, hi, k0, k1, 0.0, 1.0).unwrap();
            assert_eq!(v.read().unwrap(), want_v, "vector 64-bit on {}", device.name());
        }
    }
}
