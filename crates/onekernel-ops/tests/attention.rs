//! `onekernel::ops::attention` on the CPU executor and the GPU (lavapipe
//! in CI) against an `f64` reference: every kernel (tiles, simple, decode)
//! at uneven lengths, causal and not, a key/value cache larger than the
//! keys in use, and the arguments it refuses.

use onekernel::half::f16;
use onekernel::ops::attention::{attention, attention_with, choose, AttentionKernel, AttentionShape, TILE_VARIANTS};
use onekernel::ops::OpError;
use onekernel::prelude::*;
use onekernel::LaunchError;

fn devices() -> Vec<Device> {
    let gpu = Device::gpu().unwrap_or_else(|e| panic!("these tests need a GPU adapter (CI uses lavapipe): {e}"));
    vec![Device::cpu(), gpu]
}

fn shape(batch: u32, heads: u32, seq_q: u32, seq_kv: u32, cap: u32, d: u32, causal: bool) -> AttentionShape {
    AttentionShape {
        batch,
        heads,
        seq_q,
        seq_kv,
        kv_capacity: cap,
        head_dim: d,
        causal,
        scale: 1.0 / (d as f32).sqrt(),
    }
}

/// Values in [-range, range) from a seeded xorshift, exact in `f16`.
fn data(len: usize, seed: u64, range: f32) -> Vec<f16> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            f16::from_f32(((x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * range)
        })
        .collect()
}

/// `k`/`v` of `s`: random rows in use, NaN in the cache rows past
/// `seq_kv` (which no kernel may read into the result).
fn cache(s: &AttentionShape, seed: u64, range: f32) -> Vec<f16> {
    let d = s.head_dim as usize;
    let mut x = data((s.batch * s.heads * s.kv_capacity) as usize * d, seed, range);
    for (row, chunk) in x.chunks_mut(d).enumerate() {
        if row % s.kv_capacity as usize >= s.seq_kv as usize {
            chunk.fill(f16::NAN);
        }
    }
    x
}

/// The plain Rust answer in `f64`.
fn reference(q: &[f16], k: &[f16], v: &[f16], s: &AttentionShape) -> Vec<f64> {
    let (d, sq, skv, cap) = (s.head_dim as usize, s.seq_q as usize, s.seq_kv as usize, s.kv_capacity as usize);
    let mut out = Vec::new();
    for bh in 0..(s.batch * s.heads) as usize {
        for i in 0..sq {
            let keys = if s.causal { skv - sq + i + 1 } else { skv };
            let qr = |c: usize| q[(bh * sq + i) * d + c].to_f64();
            let kv = |x: &[f16], j: usize, c: usize| x[(bh * cap + j) * d + c].to_f64();
            let sc: Vec<f64> =
                (0..keys).map(|j| (0..d).map(|c| qr(c) * kv(k, j, c)).sum::<f64>() * f64::from(s.scale)).collect();
            let max = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = sc.iter().map(|x| (x - max).exp()).collect();
            let sum: f64 = p.iter().sum();
            for c in 0..d {
                out.push((0..keys).map(|j| p[j] * kv(v, j, c)).sum::<f64>() / sum);
            }
        }
    }
    out
}

fn run(
    device: &Device,
    s: &AttentionShape,
    kernel: AttentionKernel,
    (q, k, v): (&[f16], &[f16], &[f16]),
) -> Result<Vec<f16>, OpError> {
    let (qb, kb, vb) = (Buffer::from_slice(device, q)?, Buffer::from_slice(device, k)?, Buffer::from_slice(device, v)?);
    let mut out = Buffer::<f16>::zeroed(device, q.len())?;
    attention_with(device, &qb, &kb, &vb, &mut out, s, kernel)?;
    Ok(out.read()?)
}

/// `f16` outputs within a relative 1e-2 of the `f64` answer (and 1e-3
/// absolute, for outputs near zero).
fn check(what: &str, got: &[f16], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.to_f64();
        assert!((g - w).abs() <= 1e-2 * w.abs() + 1e-3, "{what}: out[{i}] = {g}, want {w}");
    }
}

/// Whether `e` is a GPU's honest refusal of a tile kernel.
fn cannot_run(device: &Device, kernel: AttentionKernel, e: &OpError) -> bool {
    device.is_gpu()
        && matches!(kernel, AttentionKernel::Tiles | AttentionKernel::Variant(_))
        && matches!(e, OpError::Launch(LaunchError::MissingFeature { .. } | LaunchError::UnsupportedTileShape { .. }))
}

fn agree(kernel: AttentionKernel, shapes: &[AttentionShape]) {
    for device in devices() {
        for (n, s) in shapes.iter().enumerate() {
            let seed = 10 * n as u64;
            let q = data((s.batch * s.heads * s.seq_q * s.head_dim) as usize, seed + 1, 2.0);
            let (k, v) = (cache(s, seed + 2, 2.0), cache(s, seed + 3, 1.0));
            let want = reference(&q, &k, &v, s);
            match run(&device, s, kernel, (&q, &k, &v)) {
                Ok(got) => check(&format!("{kernel:?} on {} at {s:?}", device.name()), &got, &want),
                Err(e) if cannot_run(&device, kernel, &e) => {}
                Err(e) => panic!("{kernel:?} on {} at {s:?}: {e}", device.name()),
            }
        }
    }
}

/// Two query blocks and a partial one, partial key steps, causal and not
/// (with fewer queries than keys: the causal offset), a cache larger than
/// the keys in use; small, since the CPU executor runs every tile product
/// once per thread.
fn tile_shapes(d: u32) -> Vec<AttentionShape> {
    vec![
        shape(1, 1, 70, 70, 70, d, false),
        shape(2, 1, 33, 33, 40, d, true),
        shape(1, 2, 17, 50, 64, d, true),
        shape(1, 1, 20, 9, 9, d, false),
    ]
}

#[test]
fn tiles_agree_with_f64() {
    let mut shapes = tile_shapes(64);
    shapes.extend(tile_shapes(128).into_iter().skip(1).take(1));
    agree(AttentionKernel::Tiles, &shapes);
}

#[test]
fn tile_variants_agree_with_f64() {
    for name in TILE_VARIANTS {
        let d = if name.ends_with("_d64") { 64 } else { 128 };
        agree(AttentionKernel::Variant(name), &[shape(1, 1, 40, 70, 72, d, true)]);
    }
}

/// The 128-row block kernels that `Tiles` runs for long query sequences
/// (`blk_d64`, `blk2_d128`): two query blocks (the second partial),
/// causal and not, fewer queries than keys under the mask, key counts that
/// are not multiples of the 32-key step, a cache larger than the keys. Few
/// shapes: on the CPU executor a block is 256 threads of tile products
/// (about 10 s a shape in a debug build).
#[test]
fn block_kernels_agree_with_f64() {
    agree(
        AttentionKernel::Variant("blk_d64"),
        &[shape(1, 1, 150, 150, 150, 64, true), shape(1, 1, 130, 70, 72, 64, false)],
    );
    agree(AttentionKernel::Variant("blk2_d128"), &[shape(1, 1, 140, 140, 144, 128, true)]);
}

#[test]
fn simple_agrees_with_f64() {
    let mut shapes = tile_shapes(64);
    shapes.extend([shape(1, 2, 100, 100, 128, 128, true), shape(2, 1, 5, 37, 37, 12, false)]);
    agree(AttentionKernel::Simple, &shapes);
}

/// Decode: one new query over a cache larger than the keys in use, more
/// than one chunk of 256 keys with a partial last one, and a few queries
/// at the end of a causal sequence.
#[test]
fn decode_agrees_with_f64() {
    agree(
        AttentionKernel::Decode,
        &[
            shape(1, 3, 1, 300, 1024, 64, true),
            shape(2, 2, 1, 1, 8, 64, true),
            shape(1, 1, 1, 513, 600, 128, false),
            shape(1, 2, 3, 260, 300, 64, true),
            shape(1, 1, 2, 7, 7, 20, false),
        ],
    );
}

/// Scores that grow along the keys: the row maxima pass the tile
/// kernel's slack again and again, so its rescaling runs.
#[test]
fn growing_scores_rescale() {
    let s = shape(1, 1, 100, 100, 100, 64, false);
    let q = vec![f16::from_f32(1.0); 6400];
    // Key j's features are all j / 8: its score is 64 · j / 8 · 1/√64 = j.
    let k: Vec<f16> = (0..6400).map(|i| f16::from_f32((i / 64) as f32 / 8.0)).collect();
    let v = data(6400, 7, 1.0);
    let want = reference(&q, &k, &v, &s);
    for device in devices() {
        for kernel in [
            // `Tiles` runs `blk_d64` at 100 query rows.
            AttentionKernel::Tiles,
            AttentionKernel::Variant("flash_d64"),
            AttentionKernel::Simple,
        ] {
            match run(&device, &s, kernel, (&q, &k, &v)) {
                Ok(got) => check(&format!("{kernel:?} on {}", device.name()), &got, &want),
                Err(e) if cannot_run(&device, kernel, &e) => {}
                Err(e) => panic!("{kernel:?} on {}: {e}", device.name()),
            }
        }
    }
}

/// The op's own choice, through `attention`, on both devices.
#[test]
fn auto_agrees_with_f64() {
    for s in [shape(1, 2, 1, 77, 80, 64, true), shape(1, 1, 65, 65, 65, 64, true)] {
        let q = data((s.batch * s.heads * s.seq_q * s.head_dim) as usize, 5, 2.0);
        let (k, v) = (cache(&s, 6, 2.0), cache(&s, 7, 1.0));
        let want = reference(&q, &k, &v, &s);
        for device in devices() {
            let (qb, kb, vb) = (
                Buffer::from_slice(&device, &q).unwrap(),
                Buffer::from_slice(&device, &k).unwrap(),
                Buffer::from_slice(&device, &v).unwrap(),
            );
            let mut out = Buffer::<f16>::zeroed(&device, q.len()).unwrap();
            attention(&device, &qb, &kb, &vb, &mut out, &s).unwrap();
            check(&format!("{:?} on {}", choose(&device, &s), device.name()), &out.read().unwrap(), &want);
        }
    }
    let cpu = Device::cpu();
    assert_eq!(choose(&cpu, &shape(1, 12, 1, 500, 1024, 64, true)), AttentionKernel::Decode);
    assert_eq!(choose(&cpu, &shape(1, 12, 64, 64, 64, 64, true)), AttentionKernel::Simple);
}

/// Each bad argument is an `Err` naming it.
#[test]
fn bad_shapes_name_the_argument() {
    let device = Device::cpu();
    let ok = shape(1, 2, 4, 8, 8, 8, true);
    let buf = |n: u32| Buffer::<f16>::zeroed(&device, n as usize).unwrap();
    let cases: Vec<(&str, AttentionShape)> = vec![
        ("batch", AttentionShape { batch: 0, ..ok }),
        ("seq_q", AttentionShape { seq_q: 0, ..ok }),
        ("seq_kv", AttentionShape { seq_kv: 0, ..ok }),
        ("head_dim", AttentionShape { head_dim: 6, ..ok }),
        ("head_dim", AttentionShape { head_dim: 132, ..ok }),
        ("seq_kv", AttentionShape { seq_kv: 9, ..ok }),
        ("seq_q", AttentionShape { seq_q: 9, kv_capacity: 16, seq_kv: 8, ..ok }),
        ("scale", AttentionShape { scale: f32::NAN, ..ok }),
    ];
    for (arg, s) in cases {
        let rows_q = s.batch * s.heads * s.seq_q * s.head_dim;
        let rows_kv = s.batch * s.heads * s.kv_capacity * s.head_dim;
        let mut out = buf(rows_q);
        let err = attention(&device, &buf(rows_q), &buf(rows_kv), &buf(rows_kv), &mut out, &s).unwrap_err();
        assert!(
            matches!(&err, OpError::Launch(LaunchError::InvalidArgument { kernel: "ops::attention", arg: a, .. }) if *a == arg),
            "{s:?}: want an error naming `{arg}`, got {err}"
        );
    }
    // Buffers of the wrong length.
    let (nq, nkv) = (64, 128);
    for (arg, lens) in [("q", [nq + 4, nkv, nkv, nq]), ("k", [nq, nkv - 8, nkv, nq]), ("out", [nq, nkv, nkv, 4])] {
        let mut out = buf(lens[3]);
        let err = attention(&device, &buf(lens[0]), &buf(lens[1]), &buf(lens[2]), &mut out, &ok).unwrap_err();
        assert!(err.to_string().contains(&format!("argument `{arg}`")), "want `{arg}` named: {err}");
    }
    // The tile kernel at a head dimension it does not take.
    let mut out = buf(64);
    let err =
        attention_with(&device, &buf(64), &buf(128), &buf(128), &mut out, &ok, AttentionKernel::Tiles).unwrap_err();
    assert!(err.to_string().contains("head_dim"), "{err}");
}

/// The decode kernel through an unchecked handle (wgpu's bounds checks
/// off) on the GPU. `attention_simple` is left out: on lavapipe (Mesa
/// 25.0.7, LLVM 15) its unchecked pipeline takes minutes to compile, in
/// LLVM's coroutine lowering (`buildCoroutineFrame`; llvmpipe compiles
/// every compute shader as a coroutine) of its register arrays; checked,
/// it compiles in a second (docs/performance.md).
#[test]
fn unchecked_decode_agrees() {
    let gpu = devices().pop().expect("a GPU");
    // SAFETY: the decode kernels index inside their buffers at every shape
    // the op accepts; the tests above run them on the CPU executor, which
    // checks every index.
    let unchecked = unsafe { gpu.unchecked() };
    let s = shape(1, 2, 3, 300, 320, 64, true);
    let q = data((s.batch * s.heads * s.seq_q * s.head_dim) as usize, 21, 2.0);
    let (k, v) = (cache(&s, 22, 2.0), cache(&s, 23, 1.0));
    let want = reference(&q, &k, &v, &s);
    let got = run(&unchecked, &s, AttentionKernel::Decode, (&q, &k, &v)).unwrap_or_else(|e| panic!("{e}"));
    check(&format!("Decode unchecked on {}", gpu.name()), &got, &want);
}
