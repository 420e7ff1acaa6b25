//! **A GPT-2-shaped decoder, every step a kernel** (the skeleton of issue
//! 27's item 2): token and position embeddings, pre-norm blocks (layer
//! norm, causal self-attention, a GELU MLP, residual adds), a final layer
//! norm and the output projection tied to the token embeddings. Weights are
//! `f16` (from a seeded generator: none can be downloaded here), sums and
//! activations `f32`.
//!
//!     cargo run --example gpt            # the small configuration, CPU executor and GPU
//!     cargo run --example gpt -- --cpu   # the CPU executor only
//!
//! Each kernel is the plain version (one thread per output; attention one
//! thread per (head, query) with an online softmax): the skeleton that the
//! fast kernels (`examples/attention.rs`, `examples/gemm_f16.rs`) replace
//! one by one, checked against the plain Rust `reference` below, which
//! computes the same model in the same order.

mod common;

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::LaunchError;

/// The model's shape.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub layers: usize,
    pub heads: usize,
    pub width: usize,
    pub vocab: usize,
    pub context: usize,
}

impl Config {
    /// The configuration CI runs: 2 layers, width 64, 2 heads of 32.
    pub const SMALL: Config = Config { layers: 2, heads: 2, width: 64, vocab: 512, context: 64 };
    /// GPT-2 small: 12 layers, 12 heads, width 768.
    pub const GPT2_SMALL: Config = Config { layers: 12, heads: 12, width: 768, vocab: 50257, context: 1024 };
}

/// `x[t][c] = wte[token t][c] + wpe[t][c]`.
#[kernel(workgroup_size = 64)]
fn embed(tokens: &[u32], wte: &[f16], wpe: &[f16], x: &mut [f32], width: u32) {
    let i = global_id().x;
    if i < x.len() {
        let w = width as usize;
        x[i] = wte[tokens[i / w] as usize * w + i % w].to_f32() + wpe[i].to_f32();
    }
}

/// Each row of `x` normalised (mean 0, variance 1, ε = 1e-5), times `g`
/// plus `b`: one thread per row.
#[kernel(workgroup_size = 64)]
fn layer_norm(x: &[f32], g: &[f16], b: &[f16], y: &mut [f32], rows: u32, width: u32) {
    let r = global_id().x;
    if r < rows as usize {
        let w = width as usize;
        let mut mean = 0.0f32;
        for c in 0..w {
            mean += x[r * w + c];
        }
        mean /= width as f32;
        let mut var = 0.0f32;
        for c in 0..w {
            let d = x[r * w + c] - mean;
            var += d * d;
        }
        var /= width as f32;
        let inv = 1.0 / (var + 1e-5).sqrt();
        for c in 0..w {
            y[r * w + c] = (x[r * w + c] - mean) * inv * g[c].to_f32() + b[c].to_f32();
        }
    }
}

/// `v = x·w + bias` for `x` of `rows × k` and `w` of `k × n`, one thread
/// per output; `mode` 0 stores `v`, 1 stores `gelu(v)`, 2 adds `v` to `y`
/// (the residual).
#[kernel(workgroup_size = 64)]
fn linear(x: &[f32], w: &[f16], bias: &[f16], y: &mut [f32], k: u32, n: u32, mode: u32) {
    let i = global_id().x;
    if i < y.len() {
        let (k, n) = (k as usize, n as usize);
        let (r, j) = (i / n, i % n);
        let mut v = bias[j].to_f32();
        for c in 0..k {
            v += x[r * k + c] * w[c * n + j].to_f32();
        }
        if mode == 1 {
            // GPT-2's GELU (the tanh approximation).
            v = 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044715 * v * v * v)).tanh());
        }
        if mode == 2 {
            y[i] += v;
        } else {
            y[i] = v;
        }
    }
}

/// Causal self-attention over `qkv` (each row: the queries, keys and
/// values of all heads, `3 · heads · dim` values), one thread per (head,
/// query), online softmax; `y` is `seq × heads·dim`. `dim` at most 64.
#[kernel(workgroup_size = 64)]
fn attention(qkv: &[f32], y: &mut [f32], seq: u32, heads: u32, dim: u32) {
    let i = global_id().x;
    let (seq, heads, dim) = (seq as usize, heads as usize, dim as usize);
    if i < seq * heads {
        let (h, t) = (i / seq, i % seq);
        let w = heads * dim;
        let q = t * 3 * w + h * dim;
        let scale = 1.0 / (dim as f32).sqrt();
        let mut acc = [0.0f32; 64];
        let mut m = f32::NEG_INFINITY;
        let mut l = 0.0f32;
        for j in 0..t + 1 {
            let kj = j * 3 * w + w + h * dim;
            let mut s = 0.0f32;
            for c in 0..dim {
                s += qkv[q + c] * qkv[kj + c];
            }
            s *= scale;
            let m_new = m.max(s);
            let alpha = (m - m_new).exp();
            let p = (s - m_new).exp();
            l = l * alpha + p;
            for c in 0..dim {
                acc[c] = acc[c] * alpha + p * qkv[kj + w + c];
            }
            m = m_new;
        }
        for c in 0..dim {
            y[t * w + h * dim + c] = acc[c] / l;
        }
    }
}

/// `logits = x·wteᵀ`: the output projection tied to the token embeddings.
#[kernel(workgroup_size = 64)]
fn unembed(x: &[f32], wte: &[f16], logits: &mut [f32], width: u32, vocab: u32) {
    let i = global_id().x;
    if i < logits.len() {
        let (w, v) = (width as usize, vocab as usize);
        let (r, j) = (i / v, i % v);
        let mut s = 0.0f32;
        for c in 0..w {
            s += x[r * w + c] * wte[j * w + c].to_f32();
        }
        logits[i] = s;
    }
}

/// One block's weights (`f16`, row-major, `w_*` as `in × out`).
pub struct Layer {
    pub ln1: (Vec<f16>, Vec<f16>),
    pub qkv: (Vec<f16>, Vec<f16>),
    pub proj: (Vec<f16>, Vec<f16>),
    pub ln2: (Vec<f16>, Vec<f16>),
    pub fc: (Vec<f16>, Vec<f16>),
    pub out: (Vec<f16>, Vec<f16>),
}

/// The model's weights.
pub struct Weights {
    pub config: Config,
    pub wte: Vec<f16>,
    pub wpe: Vec<f16>,
    pub layers: Vec<Layer>,
    pub ln_f: (Vec<f16>, Vec<f16>),
}

/// The documented generator: xorshift64 from `seed`, each value uniform
/// in [-√3·σ, √3·σ) (standard deviation σ), rounded to `f16`. Weights are
/// drawn in the order of the fields, layer by layer; matrices with σ =
/// 0.02 (GPT-2's initialisation), biases with σ = 0.01, layer-norm gains
/// 1 + (σ = 0.1) and shifts σ = 0.01.
pub struct Generator(u64);

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn uniform(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }

    fn values(&mut self, n: usize, mean: f32, sigma: f32) -> Vec<f16> {
        (0..n).map(|_| f16::from_f32(mean + self.uniform() * sigma * 3f32.sqrt())).collect()
    }
}

impl Weights {
    pub fn generate(config: Config, seed: u64) -> Weights {
        let mut g = Generator::new(seed);
        let w = config.width;
        let wte = g.values(config.vocab * w, 0.0, 0.02);
        let wpe = g.values(config.context * w, 0.0, 0.01);
        let norm = |g: &mut Generator| (g.values(w, 1.0, 0.1), g.values(w, 0.0, 0.01));
        let layers = (0..config.layers)
            .map(|_| Layer {
                ln1: norm(&mut g),
                qkv: (g.values(w * 3 * w, 0.0, 0.02), g.values(3 * w, 0.0, 0.01)),
                proj: (g.values(w * w, 0.0, 0.02), g.values(w, 0.0, 0.01)),
                ln2: norm(&mut g),
                fc: (g.values(w * 4 * w, 0.0, 0.02), g.values(4 * w, 0.0, 0.01)),
                out: (g.values(4 * w * w, 0.0, 0.02), g.values(w, 0.0, 0.01)),
            })
            .collect();
        let ln_f = norm(&mut g);
        Weights { config, wte, wpe, layers, ln_f }
    }
}

/// The logits (`tokens.len() × vocab`) of the model on `device`: every
/// step a kernel launch.
pub fn forward(device: &Device, weights: &Weights, tokens: &[u32]) -> Result<Vec<f32>, LaunchError> {
    let Config { heads, width: w, vocab, .. } = weights.config;
    let s = tokens.len();
    assert!(s <= weights.config.context, "at most {} tokens", weights.config.context);
    let up = |v: &[f16]| Buffer::from_slice(device, v).expect("buffer");
    let pair = |p: &(Vec<f16>, Vec<f16>)| (up(&p.0), up(&p.1));
    let zeros = |n: usize| Buffer::<f32>::zeroed(device, n).expect("buffer");
    let (wte, wpe) = (up(&weights.wte), up(&weights.wpe[..s * w]));
    let mut x = zeros(s * w);
    let mut h = zeros(s * w);
    let mut qkv = zeros(s * 3 * w);
    let mut a = zeros(s * w);
    let mut m = zeros(s * 4 * w);
    let (rows, w32) = (s as u32, w as u32);
    embed::launch(
        device,
        Grid::threads(s * w),
        &Buffer::from_slice(device, tokens).expect("buffer"),
        &wte,
        &wpe,
        &mut x,
        w32,
    )?;
    for layer in &weights.layers {
        let (ln1, qkv_w, proj, ln2, fc, out) = (
            pair(&layer.ln1),
            pair(&layer.qkv),
            pair(&layer.proj),
            pair(&layer.ln2),
            pair(&layer.fc),
            pair(&layer.out),
        );
        layer_norm::launch(device, Grid::threads(s), &x, &ln1.0, &ln1.1, &mut h, rows, w32)?;
        linear::launch(device, Grid::threads(s * 3 * w), &h, &qkv_w.0, &qkv_w.1, &mut qkv, w32, 3 * w32, 0)?;
        attention::launch(device, Grid::threads(s * heads), &qkv, &mut a, rows, heads as u32, (w / heads) as u32)?;
        linear::launch(device, Grid::threads(s * w), &a, &proj.0, &proj.1, &mut x, w32, w32, 2)?;
        layer_norm::launch(device, Grid::threads(s), &x, &ln2.0, &ln2.1, &mut h, rows, w32)?;
        linear::launch(device, Grid::threads(s * 4 * w), &h, &fc.0, &fc.1, &mut m, w32, 4 * w32, 1)?;
        linear::launch(device, Grid::threads(s * w), &m, &out.0, &out.1, &mut x, 4 * w32, w32, 2)?;
    }
    let ln_f = pair(&weights.ln_f);
    layer_norm::launch(device, Grid::threads(s), &x, &ln_f.0, &ln_f.1, &mut h, rows, w32)?;
    let mut logits = zeros(s * vocab);
    unembed::launch(device, Grid::threads(s * vocab), &h, &wte, &mut logits, w32, vocab as u32)?;
    Ok(logits.read().expect("read"))
}

/// `count` tokens after `prompt`, each the argmax of the last row's
/// logits (the whole sequence run again each step: no key/value cache yet).
pub fn generate(device: &Device, weights: &Weights, prompt: &[u32], count: usize) -> Result<Vec<u32>, LaunchError> {
    let mut tokens = prompt.to_vec();
    for _ in 0..count {
        let logits = forward(device, weights, &tokens)?;
        tokens.push(argmax(&logits[logits.len() - weights.config.vocab..]));
    }
    Ok(tokens[prompt.len()..].to_vec())
}

fn argmax(row: &[f32]) -> u32 {
    row.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (j, &v)| if v > best.1 { (j, v) } else { best }).0 as u32
}

/// The same model in plain Rust, the same operations in the same order
/// (in `f32`), for the tests.
pub fn reference(weights: &Weights, tokens: &[u32]) -> Vec<f32> {
    let Config { heads, width: w, vocab, .. } = weights.config;
    let s = tokens.len();
    let f = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let norm = |x: &[f32], (g, b): &(Vec<f16>, Vec<f16>)| -> Vec<f32> {
        x.chunks(w)
            .flat_map(|row| {
                let mean = row.iter().sum::<f32>() / w as f32;
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / w as f32;
                let inv = 1.0 / (var + 1e-5).sqrt();
                row.iter().enumerate().map(move |(c, v)| (v - mean) * inv * g[c].to_f32() + b[c].to_f32())
            })
            .collect()
    };
    let linear = |x: &[f32], (wt, b): &(Vec<f16>, Vec<f16>), k: usize, n: usize| -> Vec<f32> {
        let (wt, b) = (f(wt), f(b));
        (0..x.len() / k * n)
            .map(|i| {
                let (r, j) = (i / n, i % n);
                (0..k).fold(b[j], |v, c| v + x[r * k + c] * wt[c * n + j])
            })
            .collect()
    };
    let gelu = |v: f32| 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044715 * v * v * v)).tanh());
    let (wte, wpe) = (f(&weights.wte), f(&weights.wpe));
    let mut x: Vec<f32> = (0..s * w).map(|i| wte[tokens[i / w] as usize * w + i % w] + wpe[i]).collect();
    let dim = w / heads;
    for layer in &weights.layers {
        let qkv = linear(&norm(&x, &layer.ln1), &layer.qkv, w, 3 * w);
        let mut a = vec![0.0f32; s * w];
        for h in 0..heads {
            for t in 0..s {
                let q = &qkv[t * 3 * w + h * dim..][..dim];
                let scores: Vec<f32> = (0..=t)
                    .map(|j| {
                        q.iter().zip(&qkv[j * 3 * w + w + h * dim..][..dim]).map(|(a, b)| a * b).sum::<f32>()
                            / (dim as f32).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let p: Vec<f32> = scores.iter().map(|v| (v - max).exp()).collect();
                let l: f32 = p.iter().sum();
                for c in 0..dim {
                    a[t * w + h * dim + c] =
                        (0..=t).map(|j| p[j] * qkv[j * 3 * w + 2 * w + h * dim + c]).sum::<f32>() / l;
                }
            }
        }
        for (xi, v) in x.iter_mut().zip(linear(&a, &layer.proj, w, w)) {
            *xi += v;
        }
        let m: Vec<f32> = linear(&norm(&x, &layer.ln2), &layer.fc, w, 4 * w).into_iter().map(gelu).collect();
        for (xi, v) in x.iter_mut().zip(linear(&m, &layer.out, 4 * w, w)) {
            *xi += v;
        }
    }
    let h = norm(&x, &weights.ln_f);
    (0..s * vocab).map(|i| (0..w).map(|c| h[i / vocab * w + c] * wte[i % vocab * w + c]).sum()).collect()
}

/// Logits within 1e-3 (they are of order 0.1 to 1: sums of `f32` products
/// in a different order, `exp` and `tanh` within a few ulps).
fn check(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-3 * (1.0 + w.abs()), "{what}: logits[{i}] = {g}, want {w}");
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cpu_only = std::env::args().any(|a| a == "--cpu");
    let weights = Weights::generate(Config::SMALL, 1);
    let prompt: Vec<u32> = (0..16).map(|i| (i * 37 + 5) % Config::SMALL.vocab as u32).collect();
    let want = reference(&weights, &prompt);
    for device in common::devices(false).into_iter().filter(|d| !cpu_only || d.is_cpu()) {
        let (logits, profile) = device.profile(|| forward(&device, &weights, &prompt))?;
        check(device.name().as_str(), &logits?, &want);
        println!(
            "{}: {:?} agrees with plain Rust; 8 greedy tokens: {:?}",
            device.name(),
            Config::SMALL,
            generate(&device, &weights, &prompt, 8)?
        );
        println!("{profile}\n");
    }
    Ok(())
}

#[test]
fn small_model_agrees_with_plain_rust() {
    let weights = Weights::generate(Config::SMALL, 2);
    let prompt: Vec<u32> = (0..20).map(|i| (i * 101 + 3) % Config::SMALL.vocab as u32).collect();
    let want = reference(&weights, &prompt);
    // The greedy tokens of plain Rust, from its own logits.
    let mut tokens = prompt.clone();
    for _ in 0..4 {
        let logits = reference(&weights, &tokens);
        tokens.push(argmax(&logits[logits.len() - Config::SMALL.vocab..]));
    }
    for device in common::devices(true) {
        check(&device.name(), &forward(&device, &weights, &prompt).unwrap(), &want);
        assert_eq!(generate(&device, &weights, &prompt, 4).unwrap(), tokens[prompt.len()..], "{}", device.name());
    }
}

#[test]
fn the_generator_is_fixed() {
    // The documented generator's first values, so that a reference in
    // another language can check that it draws the same weights.
    let w = Weights::generate(Config::SMALL, 1);
    assert_eq!(w.wte.len(), 512 * 64);
    let first: Vec<f32> = w.wte[..3].iter().map(|h| h.to_f32()).collect();
    let mut g = Generator::new(1);
    let again: Vec<f32> = (0..3).map(|_| f16::from_f32(g.uniform() * 0.02 * 3f32.sqrt()).to_f32()).collect();
    assert_eq!(first, again);
    assert!(first.iter().all(|v| v.abs() <= 0.035 && *v != 0.0), "{first:?}");
}
