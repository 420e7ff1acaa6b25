//! **Fused attention** (flash-attention style): `O = softmax(Q·Kᵀ·scale
//! [+ causal mask])·V` in one kernel, without ever writing the `S × S`
//! score matrix to memory, through the library op
//! `onekernel::ops::attention` (crates/onekernel-ops/src/attention.rs: the
//! kernels and how they work).
//!
//!     cargo run --release --example attention                 # check every kernel on every device
//!     cargo run --release --example attention -- --wgsl       # print the d64 tile kernel's WGSL
//!     cargo run --release --example attention -- --bench      # GPU TFLOP/s at the transformer shapes
//!     cargo run --release --example attention -- --bench --variants   # every tile kernel variant
//!     cargo run --release --example attention -- --bench --variants=blk,flash  # those whose names start so
//!     cargo run --release --example attention -- --bench --small      # small shapes (lavapipe)
//!
//! The op picks the kernel: matrix tiles (tensor cores) where the device
//! has them and the head dimension is 64 or 128, a tile-free kernel
//! elsewhere (lavapipe, WebGPU, the CPU executor), and a kernel that
//! splits the keys over blocks for a few query rows (decode).

mod common;

use onekernel::half::f16;
use onekernel::ops::attention::{attention_with, choose, AttentionKernel, AttentionShape, TILE_VARIANTS};
use onekernel::ops::OpError;
use onekernel::prelude::*;
use onekernel::LaunchError;

fn shape(batch: u32, heads: u32, seq: u32, head_dim: u32, causal: bool) -> AttentionShape {
    let scale = 1.0 / (head_dim as f32).sqrt();
    AttentionShape { batch, heads, seq_q: seq, seq_kv: seq, kv_capacity: seq, head_dim, causal, scale }
}

fn elements(s: &AttentionShape, rows: u32) -> usize {
    (s.batch * s.heads * rows * s.head_dim) as usize
}

/// The plain Rust answer in `f64` for query rows `rows` of head `bh`.
fn reference_rows(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    s: &AttentionShape,
    bh: usize,
    rows: std::ops::Range<usize>,
) -> Vec<f64> {
    let (d, sq, skv, cap) = (s.head_dim as usize, s.seq_q as usize, s.seq_kv as usize, s.kv_capacity as usize);
    let mut out = Vec::with_capacity(rows.len() * d);
    for i in rows {
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
    out
}

/// Values in [-range, range), from a seeded generator (xorshift), exact in `f16`.
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

/// `f16` outputs within a relative 1e-2 of the `f64` answer (and 1e-3
/// absolute, for outputs near zero).
fn check(what: &str, got: &[f16], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.to_f64();
        assert!(
            (g - w).abs() <= 1e-2 * w.abs() + 1e-3,
            "{what}: o[{i}] = {g}, want {w}\n{}",
            common::wrong_result_hint()
        );
    }
}

/// Inputs of `s` on `device`: `(q, k, v, out)` and their host copies.
type Inputs = (Buffer<f16>, Buffer<f16>, Buffer<f16>, Buffer<f16>, [Vec<f16>; 3]);

fn inputs(device: &Device, s: &AttentionShape) -> Result<Inputs, Box<dyn std::error::Error>> {
    let (nq, nkv) = (elements(s, s.seq_q), elements(s, s.kv_capacity));
    let host = [data(nq, 1, 2.0), data(nkv, 2, 2.0), data(nkv, 3, 1.0)];
    let b = |x: &[f16]| Buffer::from_slice(device, x);
    Ok((b(&host[0])?, b(&host[1])?, b(&host[2])?, Buffer::zeroed(device, nq)?, host))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    if common::wants_wgsl() {
        println!("{}", onekernel::ops::attention::flash_d64::flash_d64::WGSL);
        return Ok(());
    }
    if flag("--bench") {
        // `--variants`: every tile variant; `--variants=blk,flash`: those
        // whose names start with one of the prefixes.
        let variants: Option<Vec<String>> = args.iter().find_map(|a| {
            if a == "--variants" {
                Some(vec![String::new()])
            } else {
                a.strip_prefix("--variants=").map(|list| list.split(',').map(str::to_string).collect())
            }
        });
        return bench(flag("--small"), flag("--checked"), variants);
    }
    for s in [shape(1, 2, 77, 64, false), shape(1, 1, 100, 128, true)] {
        for device in common::devices(false) {
            for kernel in [AttentionKernel::Tiles, AttentionKernel::Simple, AttentionKernel::Decode] {
                let (qb, kb, vb, mut ob, [q, k, v]) = inputs(&device, &s)?;
                match attention_with(&device, &qb, &kb, &vb, &mut ob, &s, kernel) {
                    Ok(()) => {
                        let want: Vec<f64> = (0..(s.batch * s.heads) as usize)
                            .flat_map(|bh| reference_rows(&q, &k, &v, &s, bh, 0..s.seq_q as usize))
                            .collect();
                        check(&format!("{kernel:?} on {}", device.name()), &ob.read()?, &want);
                        println!("{}: {kernel:?} agrees with f64 at {s:?}", device.name());
                    }
                    // A GPU without matrix tiles says so.
                    Err(OpError::Launch(
                        e @ (LaunchError::MissingFeature { .. } | LaunchError::UnsupportedTileShape { .. }),
                    )) if device.is_gpu() => println!("{}: {kernel:?}: {e}", device.name()),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    Ok(())
}

/// Kernel time per call (GPU timestamps, the mean of 10 calls after warm-up) of
/// `kernel` at `s`, checked at a few rows of the last head.
fn time(
    device: &Device,
    s: &AttentionShape,
    kernel: AttentionKernel,
    warm_s: f64,
    (qb, kb, vb, ob, [q, k, v]): &mut Inputs,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut launch = || attention_with(device, qb, kb, vb, ob, s, kernel);
    // The GPU idles at a low clock and takes about a second of work to
    // reach its full one (seen on the H200: the first launches 4× slower).
    let warm = std::time::Instant::now();
    loop {
        launch()?;
        device.synchronize()?;
        if warm.elapsed().as_secs_f64() >= warm_s {
            break;
        }
    }
    let (launched, timing) = device.time(|| (0..10).try_for_each(|_| launch()))?;
    launched?;
    let got = ob.read()?;
    let (bh, sq, d) = ((s.batch * s.heads - 1) as usize, s.seq_q as usize, s.head_dim as usize);
    let mut rows = vec![0..1, sq - 1..sq];
    if sq > 4 {
        rows.push(sq / 2..sq / 2 + 1);
    }
    for r in rows {
        let want = reference_rows(q, k, v, s, bh, r.clone());
        let at = (bh * sq + r.start) * d;
        check(&format!("{kernel:?} at {s:?} rows {r:?}"), &got[at..at + want.len()], &want);
    }
    // Per call: a decode call is two launches.
    Ok(timing.total.as_secs_f64() / 10.0)
}

/// The benchmark: TFLOP/s at the shapes PyTorch's
/// `scaled_dot_product_attention` was measured at
/// (`peers/torch/attention_baseline.py`), with the ratio to PyTorch's
/// figures of 2026-12-03 on the same H200; then decode at GPT-2 small's
/// shape. `variants`: the tile kernel variants to time beside the op's
/// choice (by name prefix; `""` all of them), `--small` small
/// shapes (for lavapipe), `--checked` the default (bounds-checked) handle
/// instead of an unchecked one.
fn bench(small: bool, checked: bool, variants: Option<Vec<String>>) -> Result<(), Box<dyn std::error::Error>> {
    let gpu = Device::gpu()?;
    // SAFETY: every index of the attention kernels is inside its buffer
    // for any shape the op accepts (rows past the ends are guarded), as the
    // CPU executor's checked runs of the tests show at uneven lengths.
    let device = if checked { gpu.clone() } else { unsafe { gpu.unchecked() } };
    println!("{}\n", gpu.name());
    let shapes: Vec<(AttentionShape, f64)> = if small {
        vec![(shape(1, 2, 256, 64, false), f64::NAN), (shape(1, 2, 200, 128, true), f64::NAN)]
    } else {
        vec![
            (shape(4, 16, 4096, 128, false), 629.0),
            (shape(4, 16, 4096, 128, true), 554.0),
            (shape(4, 16, 4096, 64, false), 462.0),
            (shape(4, 16, 4096, 64, true), 397.0),
            (shape(1, 32, 8192, 128, false), 637.0),
            (shape(1, 32, 8192, 128, true), 572.0),
        ]
    };
    println!("| shape | causal | kernel | ms | TFLOP/s | PyTorch TFLOP/s | ratio |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut first = true;
    for (s, torch) in &shapes {
        let auto = choose(&device, s);
        let mut kernels = vec![auto];
        if let Some(prefixes) = variants.as_ref().filter(|_| auto == AttentionKernel::Tiles) {
            let d = if s.head_dim == 64 { "_d64" } else { "_d128" };
            kernels.extend(
                TILE_VARIANTS
                    .iter()
                    .filter(|n| n.ends_with(d) && prefixes.iter().any(|p| n.starts_with(p.as_str())))
                    .map(|n| AttentionKernel::Variant(n))
                    .filter(|k| *k != auto),
            );
        }
        let mut data = inputs(&device, s)?;
        for kernel in kernels {
            // `attention_simple` unchecked takes minutes to compile on
            // lavapipe (docs/performance.md): it runs checked.
            let handle = if kernel == AttentionKernel::Simple { &gpu } else { &device };
            let t = time(handle, s, kernel, if first { 2.0 } else { 1.0 }, &mut data)?;
            first = false;
            let tflops = s.flops() / t * 1e-12;
            println!(
                "| B{} H{} S{} D{} | {} | {kernel:?} | {:.3} | {tflops:.1} | {torch:.0} | {:.2} |",
                s.batch,
                s.heads,
                s.seq_q,
                s.head_dim,
                if s.causal { "yes" } else { "no" },
                t * 1e3,
                tflops / torch
            );
        }
    }
    // Where the time goes when the op's kernel and the tile-free one run
    // once at every shape: the profile (`Device::profile`) of that run.
    let (ran, profile) = device.profile(|| -> Result<(), Box<dyn std::error::Error>> {
        for (s, _) in &shapes {
            let (qb, kb, vb, mut ob, _) = inputs(&device, s)?;
            for kernel in [choose(&device, s), AttentionKernel::Simple] {
                let handle = if kernel == AttentionKernel::Simple { &gpu } else { &device };
                attention_with(handle, &qb, &kb, &vb, &mut ob, s, kernel)?;
            }
        }
        Ok(())
    })?;
    ran?;
    println!("\nOne launch of each kernel at each shape:\n\n```text\n{profile}\n```");
    // Decode at GPT-2 small's shape: one query over a cache of 1,024 keys
    // (capacity 1,024), 12 heads of 64.
    let s = AttentionShape { seq_q: 1, seq_kv: 1024, kv_capacity: 1024, ..shape(1, 12, 1, 64, true) };
    println!();
    let mut data = inputs(&device, &s)?;
    for kernel in [AttentionKernel::Decode, AttentionKernel::Simple] {
        let handle = if kernel == AttentionKernel::Simple { &gpu } else { &device };
        let t = time(handle, &s, kernel, 0.2, &mut data)?;
        println!("decode B1 H12 q1 kv1024 D64, {kernel:?}: {:.1} us per call", t * 1e6);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's own check: each kernel agrees with `f64` on each
    /// device at an uneven causal shape (the op's tests cover the rest).
    #[test]
    fn kernels_agree_with_f64() {
        let s = AttentionShape { seq_q: 3, ..shape(1, 1, 37, 64, true) };
        for device in common::devices(true) {
            for kernel in [AttentionKernel::Tiles, AttentionKernel::Simple, AttentionKernel::Decode] {
                let (qb, kb, vb, mut ob, [q, k, v]) = inputs(&device, &s).unwrap();
                match attention_with(&device, &qb, &kb, &vb, &mut ob, &s, kernel) {
                    Ok(()) => check(
                        &format!("{kernel:?} on {}", device.name()),
                        &ob.read().unwrap(),
                        &reference_rows(&q, &k, &v, &s, 0, 0..3),
                    ),
                    Err(OpError::Launch(
                        LaunchError::MissingFeature { .. } | LaunchError::UnsupportedTileShape { .. },
                    )) if device.is_gpu() => {}
                    Err(e) => panic!("{kernel:?} on {}: {e}", device.name()),
                }
            }
        }
    }
}
