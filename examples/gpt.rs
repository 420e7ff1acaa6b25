//! **A GPT-2-small-shaped decoder, every step a kernel** (issue 27, item
//! 2): token and position embeddings, pre-norm blocks (layer norm, causal
//! self-attention with a key/value cache, a GELU MLP, residual adds), a
//! final layer norm, the output projection tied to the token embeddings
//! and a greedy argmax, all on the device. Weights are `f16` from a
//! documented seeded generator ([`weight`]) that
//! `peers/torch/gpt2_reference.py` reproduces bit for bit; every sum is
//! `f32` and every tensor between two steps is `f16`, rounded where
//! PyTorch's `f16` eager model rounds (see [`reference`]).
//!
//! ```text
//! cargo run --release --example gpt                       # small (2 layers, width 64): CPU executor and GPU, checked
//! cargo run --release --example gpt -- --cpu              # the CPU executor only
//! cargo run --release --example gpt -- --size full        # GPT-2 small: prefill 1024, decode 128, on the GPU
//! cargo run --release --example gpt -- --size full --prefill 1024 --decode 128 --seed 1 [--check] [--pass-per-launch] [--unfused-norm]
//!     [--prefill-chunk LAYERS (2; 0: one submission)] [--narrow-blocks (64 × 128 blocks for products with few 256 × 128 ones)]
//!     [--no-split-k (one part of `k` a product)] [--scalar-epilogues (one column a thread)] [--save-logits FILE]
//! cargo run --release --example gpt -- --size full --weights model.safetensors   # Hugging Face's gpt2 weights, if you have them
//! ```
//!
//! The steps (one layer; `rows` tokens at once: the prompt in the
//! prefill, one token a decode step):
//!
//! | step | kernel |
//! |---|---|
//! | embeddings | `embed` |
//! | layer norm | `residual_norm` (with the residual add before it; `--unfused-norm`: `bias_residual` then `onekernel::ops::norm::layer_norm_into`) |
//! | `x·W` | prefill: `gemm::gemm_f16` (`examples/gemm_f16.rs`'s tensor-core kernel) where the device has tiles and the shapes fit, else `onekernel::ops::matmul::matmul_f16_into`; decode: `gemv_parts` |
//! | bias, split into heads, K/V into the cache | `qkv_epilogue` |
//! | attention | `onekernel::ops::attention` (decode kernel for one query, tiles or the simple kernel for prefill) |
//! | heads back to rows (prefill only) | `merge_heads` |
//! | bias + GELU | `bias_gelu` |
//! | tied output projection (last row) | `logits_rows` |
//! | greedy token | `argmax` (writes the token into the device's token buffer) |
//!
//! A decode step is 9 launches a layer plus 4 (112 for GPT-2 small; the
//! prefill adds `merge_heads` a layer: 124). On a GPU a step's launches are
//! recorded into one compute pass (`Device::record_pass`) and submitted
//! once; the token goes from `argmax` to the next step's `embed` in device
//! memory, so steps are submitted back to back and the host reads the
//! generated tokens once.

mod common;
#[path = "gpt/safetensors.rs"]
mod safetensors;

use onekernel::ops::attention::{attention, AttentionShape};

// `mod gemm`: the tensor-core GEMM of `examples/gemm_f16.rs` (`gemm_f16`,
// 260 TFLOP/s on the H200 at 8192³), for the prefill's products where
// the shapes fit it.
include!("gemm_f16/kernel.rs");

use onekernel::half::f16;
use onekernel::ops::matmul::{has_tiles, matmul_f16_into, Shape};
use onekernel::ops::norm::layer_norm_into;
use onekernel::ops::OpError;
use onekernel::prelude::*;
use std::time::Instant;

/// The model's shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub layers: usize,
    pub heads: usize,
    pub width: usize,
    pub vocab: usize,
    /// Rows of the position embedding (position `p` uses row `p % context`).
    pub context: usize,
}

impl Config {
    /// The configuration CI runs: 2 layers, 2 heads of 32, width 64.
    pub const SMALL: Config = Config { layers: 2, heads: 2, width: 64, vocab: 512, context: 128 };
    /// GPT-2 small: 12 layers, 12 heads of 64, width 768.
    pub const FULL: Config = Config { layers: 12, heads: 12, width: 768, vocab: 50257, context: 1024 };

    fn head_dim(&self) -> usize {
        self.width / self.heads
    }
}

/// Layer-norm ε (GPT-2's).
const EPS: f32 = 1e-5;
/// A prefill product whose grid of `gemm_f16` blocks (256 × 128) is
/// smaller than this runs 64 × 128 blocks (`Model::narrow_blocks`).
const NARROW_BELOW: usize = 64;
/// A prefill product on `gemm_f16` splits `k` (`k_splits`) into as many
/// parts as keep its grid within this many blocks: about one wave on a
/// large GPU (the H200 has 132 multiprocessors, and one 256 × 128 block
/// fills one).
const SPLIT_BLOCKS: usize = 128;
/// The shortest part of `k` a split leaves a block (two 32-column steps).
const MIN_SPLIT_K: usize = 64;
/// Rows of `W` each block of `gemv_parts` sums (the decode product's split
/// of `k`).
const CHUNK: usize = 32;

// ---------------------------------------------------------------------
// The weights: a documented generator.
// ---------------------------------------------------------------------

/// MurmurHash3's 32-bit finaliser (a bijection of `u32`).
pub fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h
}

/// How a tensor's values are drawn: `mean + u · 2^-exp` for `u` a signed
/// integer of `bits` bits (uniform in `[-2^(bits-1), 2^(bits-1))`), so
/// every value is exact in `f16` (no rounding to reproduce).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Kind {
    pub bits: u32,
    pub exp: i32,
    pub mean: f32,
}

/// The linear layers' matrices: `±2^-5`, σ ≈ 0.018 (GPT-2's 0.02).
pub const MATRIX: Kind = Kind { bits: 11, exp: 15, mean: 0.0 };
/// The token embedding: `±2^-8`. Smaller than GPT-2's: with random
/// weights and a tied output projection, a large embedding makes each
/// token predict itself (its own row has the largest dot product with the
/// hidden state that contains it), and greedy decoding repeats one token.
pub const TOKEN: Kind = Kind { bits: 11, exp: 18, mean: 0.0 };
/// The position embedding: `±2^-6`.
pub const POSITION: Kind = Kind { bits: 11, exp: 16, mean: 0.0 };
/// Biases and layer-norm shifts: `±2^-7`.
pub const BIAS: Kind = Kind { bits: 11, exp: 17, mean: 0.0 };
/// Layer-norm gains: `1 ± 2^-4`.
pub const GAIN: Kind = Kind { bits: 7, exp: 10, mean: 1.0 };

/// Element `index` of tensor `tensor` (its number in [`tensors`]) for
/// `seed`: `h = fmix32(index ^ fmix32(seed·0x9E3779B1 ^ (tensor+1)·0x85EBCA77))`
/// (wrapping `u32` arithmetic), `u = (h >> (32 − bits)) − 2^(bits−1)`,
/// value `mean + u · 2^−exp`, exact in `f16`.
pub fn weight(seed: u32, tensor: u32, index: u32, kind: Kind) -> f16 {
    let salt = fmix32(seed.wrapping_mul(0x9e37_79b1) ^ tensor.wrapping_add(1).wrapping_mul(0x85eb_ca77));
    let h = fmix32(index ^ salt);
    let u = (h >> (32 - kind.bits)) as i32 - (1 << (kind.bits - 1));
    f16::from_f32(kind.mean + u as f32 * (-kind.exp as f32).exp2())
}

/// The tensors in generator order: name (as in Hugging Face's GPT-2
/// files), shape, kind. Linear weights are `in × out` (GPT-2's `Conv1D`).
pub fn tensors(c: Config) -> Vec<(String, Vec<usize>, Kind)> {
    let w = c.width;
    let mut t = vec![
        ("wte.weight".to_string(), vec![c.vocab, w], TOKEN),
        ("wpe.weight".to_string(), vec![c.context, w], POSITION),
    ];
    for l in 0..c.layers {
        let p = |s: &str| format!("h.{l}.{s}");
        t.extend([
            (p("ln_1.weight"), vec![w], GAIN),
            (p("ln_1.bias"), vec![w], BIAS),
            (p("attn.c_attn.weight"), vec![w, 3 * w], MATRIX),
            (p("attn.c_attn.bias"), vec![3 * w], BIAS),
            (p("attn.c_proj.weight"), vec![w, w], MATRIX),
            (p("attn.c_proj.bias"), vec![w], BIAS),
            (p("ln_2.weight"), vec![w], GAIN),
            (p("ln_2.bias"), vec![w], BIAS),
            (p("mlp.c_fc.weight"), vec![w, 4 * w], MATRIX),
            (p("mlp.c_fc.bias"), vec![4 * w], BIAS),
            (p("mlp.c_proj.weight"), vec![4 * w, w], MATRIX),
            (p("mlp.c_proj.bias"), vec![w], BIAS),
        ]);
    }
    t.push(("ln_f.weight".to_string(), vec![w], GAIN));
    t.push(("ln_f.bias".to_string(), vec![w], BIAS));
    t
}

/// The model's weights on the host, in [`tensors`] order.
pub struct Weights {
    pub config: Config,
    pub tensors: Vec<Vec<f16>>,
}

impl Weights {
    pub fn generate(config: Config, seed: u32) -> Weights {
        let specs = tensors(config);
        let tensors = std::thread::scope(|s| {
            let handles: Vec<_> = specs
                .iter()
                .enumerate()
                .map(|(id, (_, shape, kind))| {
                    let n: usize = shape.iter().product();
                    let kind = *kind;
                    s.spawn(move || (0..n as u32).map(|i| weight(seed, id as u32, i, kind)).collect::<Vec<f16>>())
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("generator thread")).collect()
        });
        Weights { config, tensors }
    }

    /// The weights of a `safetensors` file with GPT-2's names and shapes
    /// (Hugging Face's `gpt2` `model.safetensors`: `config` = `Config::FULL`),
    /// rounded to `f16`.
    pub fn from_safetensors(config: Config, file: &[u8]) -> Result<Weights, String> {
        let (entries, data) = safetensors::header(file)?;
        let tensors = tensors(config)
            .iter()
            .map(|(name, shape, _)| safetensors::tensor(file, &entries, data, name, shape))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Weights { config, tensors })
    }

    fn wte(&self) -> &[f16] {
        &self.tensors[0]
    }

    fn wpe(&self) -> &[f16] {
        &self.tensors[1]
    }

    /// Tensor `i` (0..12, [`tensors`] order) of layer `l`.
    fn layer(&self, l: usize, i: usize) -> &[f16] {
        &self.tensors[2 + 12 * l + i]
    }

    fn ln_f(&self) -> (&[f16], &[f16]) {
        let n = self.tensors.len();
        (&self.tensors[n - 2], &self.tensors[n - 1])
    }
}

// ---------------------------------------------------------------------
// The kernels.
// ---------------------------------------------------------------------

/// `x[t] = wte[tokens[first + t]] + wpe[(first + t) % context]` (rounded
/// to `f16` once), for the `x.len() / width` rows of `x`.
#[kernel(workgroup_size = 64)]
fn embed(tokens: &[u32], wte: &[f16], wpe: &[f16], x: &mut [f16], first: u32, width: u32, context: u32) {
    let i = global_id().x;
    if i < x.len() {
        let w = width as usize;
        let pos = first as usize + i / w;
        let tok = tokens[pos] as usize;
        x[i] = f16::from_f32(wte[tok * w + i % w].to_f32() + wpe[(pos % context as usize) * w + i % w].to_f32());
    }
}

/// The decode product `x·W` for one row `x` (`k`) and `W` (`k × n`,
/// row-major), in pieces: block `(bx, by)` sums rows `by·chunk ..` of `W`
/// for the 64 columns `bx·64 ..`, four threads a column (each every fourth
/// row), into `parts[by·n + column]`. The epilogue kernels add the pieces
/// (`k / chunk` of them): many blocks even for one row, so the reads of `W`
/// (the whole cost of a decode step) keep the memory busy.
#[kernel(workgroup_size = 256)]
fn gemv_parts(x: &[f16], w: &[f16], parts: &mut [f32], k: u32, n: u32, chunk: u32) {
    let sums = shared::<[f32; 256]>();
    let t = thread_id().x;
    let (k, n, chunk) = (k as usize, n as usize, chunk as usize);
    let col = block_id().x * 64 + t % 64;
    let start = block_id().y * chunk;
    let end = (start + chunk).min(k);
    let mut s = 0.0f32;
    if col < n {
        let mut r = start + t / 64;
        while r < end {
            s += x[r].to_f32() * w[r * n + col].to_f32();
            r += 4;
        }
    }
    sums[t] = s;
    workgroup_barrier();
    if t < 64 && col < n {
        parts[block_id().y * n + col] = (sums[t] + sums[t + 64]) + (sums[t + 128] + sums[t + 192]);
    }
}

/// `v = f16(Σ parts + bias)` (`parts` is `[splits][rows][3·width]`), split
/// into the query (`q`, `[heads][rows][dim]`) and the key and value, written
/// into the caches (`[heads][capacity][dim]`) at positions `first ..`.
#[kernel(workgroup_size = 64)]
#[allow(clippy::too_many_arguments)]
fn qkv_epilogue(
    parts: &[f32],
    bias: &[f16],
    q: &mut [f16],
    k_cache: &mut [f16],
    v_cache: &mut [f16],
    splits: u32,
    rows: u32,
    heads: u32,
    capacity: u32,
    first: u32,
) {
    let i = global_id().x;
    let (rows, heads) = (rows as usize, heads as usize);
    let w = q.len() / rows;
    if i < rows * 3 * w {
        let (t, j) = (i / (3 * w), i % (3 * w));
        let mut s = 0.0f32;
        for p in 0..splits as usize {
            s += parts[p * rows * 3 * w + i];
        }
        let v = f16::from_f32(s + bias[j].to_f32());
        let dim = w / heads;
        let (part, c) = (j / w, j % w);
        let (h, d) = (c / dim, c % dim);
        if part == 0 {
            q[(h * rows + t) * dim + d] = v;
        } else {
            let at = (h * capacity as usize + first as usize + t) * dim + d;
            if part == 1 {
                k_cache[at] = v;
            } else {
                v_cache[at] = v;
            }
        }
    }
}

/// `x = f16(x + f16(Σ parts + bias))`: the projection's bias and the
/// residual add (`parts` is `[splits][x.len()]`).
#[kernel(workgroup_size = 64)]
fn bias_residual(parts: &[f32], bias: &[f16], x: &mut [f16], splits: u32) {
    let i = global_id().x;
    if i < x.len() {
        let n = bias.len();
        let mut s = 0.0f32;
        for p in 0..splits as usize {
            s += parts[p * x.len() + i];
        }
        let v = f16::from_f32(s + bias[i % n].to_f32());
        x[i] = f16::from_f32(x[i].to_f32() + v.to_f32());
    }
}

/// Per row (one block each): with `splits > 0`, the projection's
/// epilogue `x = f16(x + f16(Σ parts + bias))`; then the next layer norm,
/// `h = f16((x − mean) / √(var + ε) · gain + shift)`. The residual add and
/// the layer norm that always follows it in one launch.
#[kernel(workgroup_size = 256)]
#[allow(clippy::too_many_arguments)]
fn residual_norm(
    parts: &[f32],
    bias: &[f16],
    x: &mut [f16],
    gain: &[f16],
    shift: &[f16],
    h: &mut [f16],
    splits: u32,
    width: u32,
) {
    let red = shared::<[f32; 256]>();
    let t = thread_id().x;
    let w = width as usize;
    let base = block_id().x * w;
    let total = x.len();
    let n = splits as usize;
    let mut sum = 0.0f32;
    let mut c = t;
    while c < w {
        let i = base + c;
        if n > 0 {
            // Eight independent sums: in a decode step one block adds up
            // to 96 pieces a column, and one chain of dependent loads
            // waited on memory 96 times (42.5 µs on the H200).
            let mut s0 = 0.0f32;
            let mut s1 = 0.0f32;
            let mut s2 = 0.0f32;
            let mut s3 = 0.0f32;
            let mut s4 = 0.0f32;
            let mut s5 = 0.0f32;
            let mut s6 = 0.0f32;
            let mut s7 = 0.0f32;
            let mut p = 0;
            while p + 8 <= n {
                s0 += parts[p * total + i];
                s1 += parts[(p + 1) * total + i];
                s2 += parts[(p + 2) * total + i];
                s3 += parts[(p + 3) * total + i];
                s4 += parts[(p + 4) * total + i];
                s5 += parts[(p + 5) * total + i];
                s6 += parts[(p + 6) * total + i];
                s7 += parts[(p + 7) * total + i];
                p += 8;
            }
            while p < n {
                s0 += parts[p * total + i];
                p += 1;
            }
            let s = ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7));
            let y = f16::from_f32(s + bias[c].to_f32());
            x[i] = f16::from_f32(x[i].to_f32() + y.to_f32());
        }
        sum += x[i].to_f32();
        c += 256;
    }
    red[t] = sum;
    workgroup_barrier();
    let mut step = 128;
    while step > 0 {
        if t < step {
            red[t] += red[t + step];
        }
        workgroup_barrier();
        step /= 2;
    }
    let mean = red[0] / w as f32;
    workgroup_barrier();
    let mut squares = 0.0f32;
    let mut c = t;
    while c < w {
        let d = x[base + c].to_f32() - mean;
        squares += d * d;
        c += 256;
    }
    red[t] = squares;
    workgroup_barrier();
    let mut step = 128;
    while step > 0 {
        if t < step {
            red[t] += red[t + step];
        }
        workgroup_barrier();
        step /= 2;
    }
    let inv = 1.0 / (red[0] / w as f32 + 1e-5).sqrt();
    let mut c = t;
    while c < w {
        let v = (x[base + c].to_f32() - mean) * inv;
        h[base + c] = f16::from_f32(v * gain[c].to_f32() + shift[c].to_f32());
        c += 256;
    }
}

/// `y = f16(gelu(f16(Σ parts + bias)))`, GPT-2's GELU (the tanh form).
#[kernel(workgroup_size = 64)]
fn bias_gelu(parts: &[f32], bias: &[f16], y: &mut [f16], splits: u32) {
    let i = global_id().x;
    if i < y.len() {
        let n = bias.len();
        let mut s = 0.0f32;
        for p in 0..splits as usize {
            s += parts[p * y.len() + i];
        }
        let v = f16::from_f32(s + bias[i % n].to_f32()).to_f32();
        let g = 0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044715 * v * v * v)).tanh());
        y[i] = f16::from_f32(g);
    }
}

/// `residual_norm` four columns a thread (the prefill's): `parts` as
/// `Vec4`s, the `f16` tensors as `F16Vec4`s (`width` a multiple of 4).
/// The same roundings; the parts added one after another (the scalar
/// kernel's eight running sums are for a decode step's up to 96 pieces),
/// the row's sums in another order: each subgroup's (`subgroup_add`),
/// then the subgroups' in shared memory, two barriers a sum where the
/// scalar kernel's tree takes nine.
#[kernel(workgroup_size = 256)]
#[allow(clippy::too_many_arguments)]
fn residual_norm4(
    parts: &[Vec4],
    bias: &[F16Vec4],
    x: &mut [F16Vec4],
    gain: &[F16Vec4],
    shift: &[F16Vec4],
    h: &mut [F16Vec4],
    splits: u32,
    width: u32,
) {
    let red = shared::<[f32; 256]>();
    let t = thread_id().x;
    // A row in vectors.
    let w = width as usize / 4;
    let base = block_id().x * w;
    let total = x.len();
    let n = splits as usize;
    let mut sum = 0.0f32;
    let mut c = t;
    while c < w {
        let i = base + c;
        if n > 0 {
            let mut s = Vec4::ZERO;
            for p in 0..n {
                s += parts[p * total + i];
            }
            let y = F16Vec4::from_vec4(s + bias[c].to_vec4()).to_vec4();
            x[i] = F16Vec4::from_vec4(x[i].to_vec4() + y);
        }
        let v = x[i].to_vec4();
        sum += (v.x + v.y) + (v.z + v.w);
        c += 256;
    }
    // The row's sum: each subgroup's, then the subgroups' (two barriers,
    // not a tree of nine).
    let s = subgroup_add(sum);
    if subgroup_invocation_id() == 0 {
        red[subgroup_id() as usize] = s;
    }
    workgroup_barrier();
    let mut total = 0.0f32;
    for g in 0..num_subgroups() as usize {
        total += red[g];
    }
    let mean = total / width as f32;
    workgroup_barrier();
    let mut squares = 0.0f32;
    let mut c = t;
    while c < w {
        let d = x[base + c].to_vec4() - Vec4::splat(mean);
        squares += (d.x * d.x + d.y * d.y) + (d.z * d.z + d.w * d.w);
        c += 256;
    }
    let s = subgroup_add(squares);
    if subgroup_invocation_id() == 0 {
        red[subgroup_id() as usize] = s;
    }
    workgroup_barrier();
    let mut total = 0.0f32;
    for g in 0..num_subgroups() as usize {
        total += red[g];
    }
    let inv = 1.0 / (total / width as f32 + 1e-5).sqrt();
    let mut c = t;
    while c < w {
        let v = (x[base + c].to_vec4() - Vec4::splat(mean)) * inv;
        h[base + c] = F16Vec4::from_vec4(v * gain[c].to_vec4() + shift[c].to_vec4());
        c += 256;
    }
}

/// GPT-2's GELU (the tanh form), as `bias_gelu` computes it.
#[helper]
fn gelu(v: f32) -> f32 {
    0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044715 * v * v * v)).tanh())
}

/// `bias_gelu` four columns a thread (the prefill's): `parts` as `Vec4`s,
/// `bias` and `y` as `F16Vec4`s (the width a multiple of 4), so each
/// thread moves 16 and 8 bytes at once instead of 4 and 2; the same
/// roundings.
#[kernel(workgroup_size = 256)]
fn bias_gelu4(parts: &[Vec4], bias: &[F16Vec4], y: &mut [F16Vec4], splits: u32) {
    let i = global_id().x;
    if i < y.len() {
        let n = bias.len();
        let mut s = Vec4::ZERO;
        for p in 0..splits as usize {
            s += parts[p * y.len() + i];
        }
        let v = F16Vec4::from_vec4(s + bias[i % n].to_vec4()).to_vec4();
        y[i] = F16Vec4::from_vec4(Vec4::new(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w)));
    }
}

/// `qkv_epilogue` four columns a thread (the prefill's): `parts` as
/// `Vec4`s, the rest as `F16Vec4`s (the head size a multiple of 4); the
/// same roundings.
#[kernel(workgroup_size = 256)]
#[allow(clippy::too_many_arguments)]
fn qkv_epilogue4(
    parts: &[Vec4],
    bias: &[F16Vec4],
    q: &mut [F16Vec4],
    k_cache: &mut [F16Vec4],
    v_cache: &mut [F16Vec4],
    splits: u32,
    rows: u32,
    heads: u32,
    capacity: u32,
    first: u32,
) {
    let i = global_id().x;
    let (rows, heads) = (rows as usize, heads as usize);
    // Widths in vectors of four.
    let w = q.len() / rows;
    if i < rows * 3 * w {
        let (t, j) = (i / (3 * w), i % (3 * w));
        let mut s = Vec4::ZERO;
        for p in 0..splits as usize {
            s += parts[p * rows * 3 * w + i];
        }
        let v = F16Vec4::from_vec4(s + bias[j].to_vec4());
        let dim = w / heads;
        let (part, c) = (j / w, j % w);
        let (h, d) = (c / dim, c % dim);
        if part == 0 {
            q[(h * rows + t) * dim + d] = v;
        } else {
            let at = (h * capacity as usize + first as usize + t) * dim + d;
            if part == 1 {
                k_cache[at] = v;
            } else {
                v_cache[at] = v;
            }
        }
    }
}

/// `merge_heads` four columns a thread (`F16Vec4`s; the head size a
/// multiple of 4).
#[kernel(workgroup_size = 256)]
fn merge_heads4(a: &[F16Vec4], y: &mut [F16Vec4], rows: u32, heads: u32) {
    let i = global_id().x;
    if i < y.len() {
        let (rows, heads) = (rows as usize, heads as usize);
        let w = y.len() / rows;
        let dim = w / heads;
        let (t, c) = (i / w, i % w);
        y[i] = a[((c / dim) * rows + t) * dim + c % dim];
    }
}

/// `buf` seen as elements `U` (`Vec4`, `F16Vec4`): on a GPU the same
/// memory (`Buffer::from_wgpu`, no copy); on the CPU executor a copy, which
/// [`write_back`] copies into `buf` after a kernel wrote it.
fn view<T: onekernel::Element + bytemuck::Pod, U: onekernel::Element + bytemuck::Pod>(
    device: &Device,
    buf: &Buffer<T>,
) -> Result<Buffer<U>, OpError> {
    let len = buf.len() * size_of::<T>() / size_of::<U>();
    match buf.wgpu_buffer() {
        Some(w) if device.is_gpu() => Ok(Buffer::from_wgpu(device, w, len)?),
        _ => Ok(Buffer::from_pod_slice(device, &buf.read()?)?),
    }
}

/// After a kernel wrote `view` (of `buf`): on the CPU executor, the copy
/// into `buf` (on a GPU they are the same memory).
fn write_back<T: onekernel::Element + bytemuck::Pod, U: onekernel::Element + bytemuck::Pod>(
    device: &Device,
    view: &Buffer<U>,
    buf: &mut Buffer<T>,
) -> Result<(), OpError> {
    if !device.is_gpu() {
        buf.write(bytemuck::cast_slice(&view.read()?))?;
    }
    Ok(())
}

/// `[heads][rows][dim]` to `[rows][heads·dim]` (the attention's output as
/// the projection's rows; a decode step's single row needs no move).
#[kernel(workgroup_size = 64)]
fn merge_heads(a: &[f16], y: &mut [f16], rows: u32, heads: u32) {
    let i = global_id().x;
    if i < y.len() {
        let (rows, heads) = (rows as usize, heads as usize);
        let w = y.len() / rows;
        let dim = w / heads;
        let (t, c) = (i / w, i % w);
        y[i] = a[((c / dim) * rows + t) * dim + c % dim];
    }
}

/// `logits[j] = f16(h[row]·wte[j])` as `f32`: the output projection tied
/// to the token embedding, for one row of `h`. Eight vocabulary rows a
/// block, 32 threads each (contiguous reads of `wte`'s rows).
#[kernel(workgroup_size = 256)]
fn logits_rows(h: &[f16], wte: &[f16], logits: &mut [f32], row: u32, width: u32) {
    let sums = shared::<[f32; 256]>();
    let t = thread_id().x;
    let j = block_id().x * 8 + t / 32;
    let lane = t % 32;
    let w = width as usize;
    let base = row as usize * w;
    let mut s = 0.0f32;
    if j < logits.len() {
        let mut c = lane;
        while c < w {
            s += h[base + c].to_f32() * wte[j * w + c].to_f32();
            c += 32;
        }
    }
    sums[t] = s;
    workgroup_barrier();
    let mut step = 16;
    while step > 0 {
        if lane < step {
            sums[t] += sums[t + step];
        }
        workgroup_barrier();
        step /= 2;
    }
    if lane == 0 && j < logits.len() {
        logits[j] = f16::from_f32(sums[t]).to_f32();
    }
}

/// `tokens[at] = argmax(logits)` (the first of equal maxima), one block
/// of 1,024 threads. Each thread keeps four running maxima over every
/// 4,096th logit (four independent chains of loads, not one: the vocabulary
/// is 50,257 logits and a single block reads them all); then two levels of
/// subgroup reductions: each subgroup's maximum and the smallest index
/// holding it, then thread 0 over the subgroups' (kept in shared memory).
#[kernel(workgroup_size = 1024, max_workgroup_invocations = 1024)]
fn argmax(logits: &[f32], tokens: &mut [u32], at: u32) {
    let best = shared::<[f32; 1024]>();
    let index = shared::<[u32; 1024]>();
    let t = thread_id().x;
    let n = logits.len();
    let mut v0 = f32::NEG_INFINITY;
    let mut v1 = f32::NEG_INFINITY;
    let mut v2 = f32::NEG_INFINITY;
    let mut v3 = f32::NEG_INFINITY;
    let mut i0 = u32::MAX;
    let mut i1 = u32::MAX;
    let mut i2 = u32::MAX;
    let mut i3 = u32::MAX;
    let mut j = t;
    while j < n {
        let a = logits[j];
        if a > v0 {
            v0 = a;
            i0 = j as u32;
        }
        if j + 1024 < n {
            let b = logits[j + 1024];
            if b > v1 {
                v1 = b;
                i1 = (j + 1024) as u32;
            }
        }
        if j + 2048 < n {
            let c = logits[j + 2048];
            if c > v2 {
                v2 = c;
                i2 = (j + 2048) as u32;
            }
        }
        if j + 3072 < n {
            let d = logits[j + 3072];
            if d > v3 {
                v3 = d;
                i3 = (j + 3072) as u32;
            }
        }
        j += 4096;
    }
    // The four into one: the larger, the smaller index on a tie.
    if v1 > v0 || (v1 == v0 && i1 < i0) {
        v0 = v1;
        i0 = i1;
    }
    if v3 > v2 || (v3 == v2 && i3 < i2) {
        v2 = v3;
        i2 = i3;
    }
    if v2 > v0 || (v2 == v0 && i2 < i0) {
        v0 = v2;
        i0 = i2;
    }
    let m = subgroup_max(v0);
    let first = subgroup_min(if v0 == m { i0 } else { u32::MAX });
    if subgroup_invocation_id() == 0 {
        best[subgroup_id() as usize] = m;
        index[subgroup_id() as usize] = first;
    }
    workgroup_barrier();
    if t == 0 {
        let mut bv = best[0];
        let mut bi = index[0];
        for s in 1..num_subgroups() as usize {
            if best[s] > bv || (best[s] == bv && index[s] < bi) {
                bv = best[s];
                bi = index[s];
            }
        }
        // Every logit NaN (or none): index 0, as `argmax_host`.
        tokens[at as usize] = if bi == u32::MAX { 0 } else { bi };
    }
}

// ---------------------------------------------------------------------
// The model on a device.
// ---------------------------------------------------------------------

struct Layer {
    ln1: (Buffer<f16>, Buffer<f16>),
    qkv: (Buffer<f16>, Buffer<f16>),
    proj: (Buffer<f16>, Buffer<f16>),
    ln2: (Buffer<f16>, Buffer<f16>),
    fc: (Buffer<f16>, Buffer<f16>),
    out: (Buffer<f16>, Buffer<f16>),
    k_cache: Buffer<f16>,
    v_cache: Buffer<f16>,
}

/// The number of parts (1 to 8) a prefill product of `rows × k` by
/// `k × n` on `gemm_f16`'s 256 × 128 blocks splits `k` into: the most
/// that keep the grid within [`SPLIT_BLOCKS`] blocks, each part a whole
/// number of the kernel's 32-column steps and at least [`MIN_SPLIT_K`]
/// long. GPT-2 small at 1,024 rows: the `n = 768` products (24 blocks)
/// split in 4; the `3 · 768` (72 blocks) and `4 · 768` (96) ones not at
/// all. The epilogue kernels add the parts.
/// A shape `gemm_f16` does not take: 1.
fn k_splits(rows: usize, k: usize, n: usize) -> usize {
    if rows % gemm::BM != 0 || n % gemm::BN != 0 || k % gemm::BK != 0 {
        return 1;
    }
    let blocks = (n / gemm::BN) * (rows / gemm::BM);
    (1..=8usize)
        .rev()
        .find(|&s| blocks * s <= SPLIT_BLOCKS && k % (s * gemm::BK) == 0 && k / s >= MIN_SPLIT_K)
        .unwrap_or(1)
}

/// The activations of `rows` tokens at once.
struct Activations {
    rows: usize,
    /// Whether the products split `k` ([`k_splits`]; `parts` sized for it).
    split: bool,
    x: Buffer<f16>,
    h: Buffer<f16>,
    q: Buffer<f16>,
    a: Buffer<f16>,
    merged: Buffer<f16>,
    m: Buffer<f16>,
    /// The products' `f32` sums for outputs of `3·width`, `width`,
    /// `4·width` columns (`[splits][rows][n]`: a decode step's pieces of
    /// `k`, a prefill product's parts of a split `k`).
    parts: [Buffer<f32>; 3],
}

impl Activations {
    /// With `split`, `parts` holds the parts of the split products (the
    /// library's `matmul_f16_into` takes outputs of exactly `rows × n`).
    fn new(device: &Device, c: Config, rows: usize, split: bool) -> Result<Activations, OpError> {
        let w = c.width;
        let z16 = |n: usize| Buffer::<f16>::zeroed(device, n);
        // One row: `k / CHUNK` pieces (at most `4·width / CHUNK`); more
        // rows: the parts of a split `k` (one without a split).
        let z32 = |n: usize, ks: &[usize]| {
            let pieces = match rows {
                1 => (4 * w).div_ceil(CHUNK),
                _ if split => rows * ks.iter().map(|&k| k_splits(rows, k, n)).max().unwrap_or(1),
                _ => rows,
            };
            Buffer::<f32>::zeroed(device, pieces * n)
        };
        Ok(Activations {
            rows,
            split,
            x: z16(rows * w)?,
            h: z16(rows * w)?,
            q: z16(rows * w)?,
            a: z16(rows * w)?,
            merged: z16(if rows > 1 { rows * w } else { 1 })?,
            m: z16(rows * 4 * w)?,
            parts: [z32(3 * w, &[w])?, z32(w, &[w, 4 * w])?, z32(4 * w, &[w])?],
        })
    }
}

/// GPT-2 on a device: the weights, the key/value caches, the token buffer.
pub struct Model {
    device: Device,
    config: Config,
    wte: Buffer<f16>,
    wpe: Buffer<f16>,
    layers: Vec<Layer>,
    ln_f: (Buffer<f16>, Buffer<f16>),
    /// Every token so far (the prompt, then each step's argmax).
    tokens: Buffer<u32>,
    logits: Buffer<f32>,
    capacity: usize,
    one: Activations,
    prefill: Option<Activations>,
    /// Host time spent recording launches into encoders (GPU, recorded
    /// runs), and the number of launches recorded.
    pub record_time: std::time::Duration,
    /// Record each launch in a compute pass of its own (`Device::record`)
    /// instead of all of a step's in one pass (`Device::record_pass`).
    pub pass_per_launch: bool,
    /// The residual add and the following layer norm as one kernel
    /// (`residual_norm`); false: `bias_residual` and the library's
    /// `ops::norm::layer_norm_into` (two launches).
    pub fused_norm: bool,
    /// Whether the prefill's products may run `gemm_f16` (tensor-core
    /// tiles): `None` asks the device (`ops::matmul::has_tiles`); the
    /// tests force it on the CPU executor, which runs tiles too.
    pub tiles: Option<bool>,
    /// Whether a prefill product with few `gemm_f16` blocks runs
    /// `gemm_f16_t`'s 64 × 128 blocks (see `Model::linear`). Off by
    /// default: on the H200 those blocks took 113 µs a product where the
    /// 24 wide blocks took 55 µs (prefill 6.67 against 6.31 ms).
    pub narrow_blocks: bool,
    /// Whether a prefill product on `gemm_f16`'s 256 × 128 blocks splits
    /// `k` ([`k_splits`]; on by default, `--no-split-k` turns it off).
    pub split_k: bool,
    /// Whether the prefill's `qkv_epilogue`, `merge_heads` and `bias_gelu`
    /// run four columns a thread (`qkv_epilogue4`, ...: on by default,
    /// `--scalar-epilogues` turns it off; the width and head size must be
    /// multiples of 4).
    pub vector_epilogues: bool,
    /// Layers a submission of the prefill records (`--prefill-chunk`; 0
    /// or the model's layers: one submission).
    pub prefill_chunk: usize,
}

impl Model {
    /// Uploads `weights` and makes caches for `capacity` positions.
    pub fn new(device: &Device, weights: &Weights, capacity: usize) -> Result<Model, OpError> {
        let c = weights.config;
        let up = |v: &[f16]| Buffer::from_slice(device, v);
        let pair = |l: usize, i: usize| -> Result<(Buffer<f16>, Buffer<f16>), OpError> {
            Ok((up(weights.layer(l, i))?, up(weights.layer(l, i + 1))?))
        };
        let cache = c.heads * capacity * c.head_dim();
        let layers = (0..c.layers)
            .map(|l| {
                Ok(Layer {
                    ln1: pair(l, 0)?,
                    qkv: pair(l, 2)?,
                    proj: pair(l, 4)?,
                    ln2: pair(l, 6)?,
                    fc: pair(l, 8)?,
                    out: pair(l, 10)?,
                    k_cache: Buffer::zeroed(device, cache)?,
                    v_cache: Buffer::zeroed(device, cache)?,
                })
            })
            .collect::<Result<Vec<_>, OpError>>()?;
        let (g, b) = weights.ln_f();
        Ok(Model {
            device: device.clone(),
            config: c,
            wte: up(weights.wte())?,
            wpe: up(weights.wpe())?,
            layers,
            ln_f: (up(g)?, up(b)?),
            tokens: Buffer::zeroed(device, capacity)?,
            logits: Buffer::zeroed(device, c.vocab)?,
            capacity,
            one: Activations::new(device, c, 1, false)?,
            prefill: None,
            record_time: std::time::Duration::ZERO,
            pass_per_launch: false,
            fused_norm: true,
            tiles: None,
            narrow_blocks: false,
            split_k: true,
            vector_epilogues: true,
            prefill_chunk: 2,
        })
    }

    /// `x·W` into `parts[slot]` (`k` in, `n` out); returns the number of
    /// pieces the epilogue adds. One row: `gemv_parts`. More: `gemm_f16`
    /// (`examples/gemm_f16.rs`'s tensor-core kernel) where the device has
    /// matrix tiles (or `tiles` forces it) and `rows`, `n`, `k` are
    /// multiples of 256, 128, 32; else the library's `matmul_f16_into`.
    /// With `narrow`, a product whose grid of 256 × 128 blocks would be
    /// small (under [`NARROW_BELOW`] blocks: GPT-2's `n = 768` products of
    /// 1,024 rows are 24 blocks, on a GPU of 132 multiprocessors) runs
    /// `gemm_f16_t` with 64 × 128 blocks instead: four times the blocks,
    /// each a quarter of the work. Otherwise, with `act.split`, the 256 × 128
    /// blocks split `k` in [`k_splits`] parts (a grid `[.., .., splits]`),
    /// each into its own `[rows][n]` of `parts[slot]`.
    #[allow(clippy::too_many_arguments)]
    fn linear(
        device: &Device,
        (tiles, narrow): (bool, bool),
        act: &mut Activations,
        input: Input,
        w: &mut Buffer<f16>,
        slot: usize,
        k: usize,
        n: usize,
    ) -> Result<u32, OpError> {
        let rows = act.rows;
        let x = match input {
            Input::H => &mut act.h,
            Input::A => &mut act.a,
            Input::Merged => &mut act.merged,
            Input::M => &mut act.m,
        };
        let parts = &mut act.parts[slot];
        if rows == 1 {
            let splits = k.div_ceil(CHUNK);
            let grid = Grid::blocks([n.div_ceil(64), splits, 1]);
            gemv_parts::launch(device, grid, &*x, &*w, parts, k as u32, n as u32, CHUNK as u32)?;
            return Ok(splits as u32);
        }
        if tiles && rows % gemm::BM == 0 && n % gemm::BN == 0 && k % gemm::BK == 0 {
            // The same memory seen as vectors of four `f16` (a cast, no
            // copy), and back.
            let as_vectors = |b: &mut Buffer<f16>| -> Result<Buffer<F16Vec4>, OpError> {
                let owned = std::mem::replace(b, Buffer::zeroed(device, 4)?);
                owned.cast::<F16Vec4>().map_err(|(e, _)| OpError::Buffer(e))
            };
            let back = |b: &mut Buffer<f16>, v: Buffer<F16Vec4>| -> Result<(), OpError> {
                *b = v.cast::<f16>().map_err(|(e, _)| OpError::Buffer(e))?;
                Ok(())
            };
            let (xv, wv) = (as_vectors(x)?, as_vectors(w)?);
            let blocks = (n / gemm::BN) * (rows / gemm::BM);
            let mut splits = 1;
            let launched = if narrow && blocks < NARROW_BELOW {
                // `examples/gemm_f16.rs`'s `launch_block` for (64, 128):
                // 64 threads, two 64 × 64 squares a block.
                let grid = Grid::blocks([n / 128, rows / 64]);
                gemm::gemm_f16_t::launch::<
                    64,
                    128,
                    { 128 / 4 + 2 },
                    { 64 * (gemm::BK / 4 + 2) },
                    { gemm::BK * (128 / 4 + 2) },
                    { 64 * gemm::BK / 4 / 64 },
                    { gemm::BK * 128 / 4 / 64 },
                    64,
                    2,
                >(device, grid, &xv, &wv, parts, k as u32, n as u32)
            } else {
                if act.split {
                    splits = k_splits(rows, k, n);
                }
                let grid = Grid::blocks([n / gemm::BN, rows / gemm::BM, splits]);
                gemm::gemm_f16::launch(device, grid, &xv, &wv, parts, k as u32, n as u32)
            };
            back(x, xv)?;
            back(w, wv)?;
            launched?;
            return Ok(splits as u32);
        } else {
            matmul_f16_into(device, x, w, parts, Shape::new(rows, k, n))?;
        }
        Ok(1)
    }

    /// The launches of the layers `layers` of one forward pass over
    /// `act.rows` tokens at positions `first ..` (already in `tokens`):
    /// from layer 0 the embeddings first, through the last layer the
    /// logits and the next token written into `tokens[first + rows]` after.
    fn launches(&mut self, prefill: bool, first: usize, layers: std::ops::Range<usize>) -> Result<(), OpError> {
        let device = &self.device;
        let c = self.config;
        let act = if prefill { self.prefill.as_mut().expect("prefill activations") } else { &mut self.one };
        let (rows, w) = (act.rows, c.width);
        let (r32, w32) = (rows as u32, w as u32);
        let seq_kv = first + rows;
        let tiles = (self.tiles.unwrap_or_else(|| has_tiles(device)), self.narrow_blocks);
        // The prefill's epilogues four columns a thread.
        let vec4 = prefill && self.vector_epilogues && w % 4 == 0 && c.head_dim() % 4 == 0;
        let norm = |x: &mut Buffer<f16>,
                    parts: &Buffer<f32>,
                    bias: &Buffer<f16>,
                    ln: &(Buffer<f16>, Buffer<f16>),
                    h: &mut Buffer<f16>,
                    splits: u32|
         -> Result<(), OpError> {
            let grid = Grid::blocks([rows, 1, 1]);
            if !vec4 {
                return Ok(residual_norm::launch(device, grid, parts, bias, x, &ln.0, &ln.1, h, splits, w32)?);
            }
            let (pv, bv) = (view::<f32, Vec4>(device, parts)?, view::<f16, F16Vec4>(device, bias)?);
            let (gv, sv) = (view::<f16, F16Vec4>(device, &ln.0)?, view::<f16, F16Vec4>(device, &ln.1)?);
            let (mut xv, mut hv) = (view::<f16, F16Vec4>(device, x)?, view::<f16, F16Vec4>(device, h)?);
            residual_norm4::launch(device, grid, &pv, &bv, &mut xv, &gv, &sv, &mut hv, splits, w32)?;
            write_back(device, &xv, x)?;
            write_back(device, &hv, h)
        };
        let last = layers.end == self.layers.len();
        if layers.start == 0 {
            embed::launch(
                device,
                Grid::threads(rows * w),
                &self.tokens,
                &self.wte,
                &self.wpe,
                &mut act.x,
                first as u32,
                w32,
                c.context as u32,
            )?;
            if self.fused_norm {
                let first_ln = &self.layers[0].ln1;
                norm(&mut act.x, &act.parts[1], &first_ln.1, first_ln, &mut act.h, 0)?;
            }
        }
        for l in layers {
            let (head, tail) = self.layers.split_at_mut(l + 1);
            let layer = &mut head[l];
            let next_ln = tail.first().map_or(&self.ln_f, |n| &n.ln1);
            if !self.fused_norm {
                layer_norm_into(device, &act.x, Some(&layer.ln1.0), Some(&layer.ln1.1), &mut act.h, w, EPS)?;
            }
            let splits = Self::linear(device, tiles, act, Input::H, &mut layer.qkv.0, 0, w, 3 * w)?;
            if vec4 {
                let (parts, bias) = (view::<f32, Vec4>(device, &act.parts[0])?, view(device, &layer.qkv.1)?);
                let mut q = view(device, &act.q)?;
                let mut k = view(device, &layer.k_cache)?;
                let mut v = view(device, &layer.v_cache)?;
                qkv_epilogue4::launch(
                    device,
                    Grid::threads(rows * 3 * w / 4),
                    &parts,
                    &bias,
                    &mut q,
                    &mut k,
                    &mut v,
                    splits,
                    r32,
                    c.heads as u32,
                    self.capacity as u32,
                    first as u32,
                )?;
                write_back::<f16, F16Vec4>(device, &q, &mut act.q)?;
                write_back::<f16, F16Vec4>(device, &k, &mut layer.k_cache)?;
                write_back::<f16, F16Vec4>(device, &v, &mut layer.v_cache)?;
            } else {
                qkv_epilogue::launch(
                    device,
                    Grid::threads(rows * 3 * w),
                    &act.parts[0],
                    &layer.qkv.1,
                    &mut act.q,
                    &mut layer.k_cache,
                    &mut layer.v_cache,
                    splits,
                    r32,
                    c.heads as u32,
                    self.capacity as u32,
                    first as u32,
                )?;
            }
            let shape = AttentionShape {
                batch: 1,
                heads: c.heads as u32,
                seq_q: r32,
                seq_kv: seq_kv as u32,
                kv_capacity: self.capacity as u32,
                head_dim: c.head_dim() as u32,
                causal: true,
                scale: 1.0 / (c.head_dim() as f32).sqrt(),
            };
            attention(device, &act.q, &layer.k_cache, &layer.v_cache, &mut act.a, &shape)?;
            let input = if rows > 1 {
                if vec4 {
                    let (a, mut merged) = (view::<f16, F16Vec4>(device, &act.a)?, view(device, &act.merged)?);
                    merge_heads4::launch(device, Grid::threads(rows * w / 4), &a, &mut merged, r32, c.heads as u32)?;
                    write_back::<f16, F16Vec4>(device, &merged, &mut act.merged)?;
                } else {
                    merge_heads::launch(device, Grid::threads(rows * w), &act.a, &mut act.merged, r32, c.heads as u32)?;
                }
                Input::Merged
            } else {
                Input::A
            };
            let splits = Self::linear(device, tiles, act, input, &mut layer.proj.0, 1, w, w)?;
            if self.fused_norm {
                norm(&mut act.x, &act.parts[1], &layer.proj.1, &layer.ln2, &mut act.h, splits)?;
            } else {
                bias_residual::launch(
                    device,
                    Grid::threads(rows * w),
                    &act.parts[1],
                    &layer.proj.1,
                    &mut act.x,
                    splits,
                )?;
                layer_norm_into(device, &act.x, Some(&layer.ln2.0), Some(&layer.ln2.1), &mut act.h, w, EPS)?;
            }
            let splits = Self::linear(device, tiles, act, Input::H, &mut layer.fc.0, 2, w, 4 * w)?;
            if vec4 {
                let (parts, bias) = (view::<f32, Vec4>(device, &act.parts[2])?, view(device, &layer.fc.1)?);
                let mut m = view(device, &act.m)?;
                bias_gelu4::launch(device, Grid::threads(rows * w), &parts, &bias, &mut m, splits)?;
                write_back::<f16, F16Vec4>(device, &m, &mut act.m)?;
            } else {
                bias_gelu::launch(device, Grid::threads(rows * 4 * w), &act.parts[2], &layer.fc.1, &mut act.m, splits)?;
            }
            let splits = Self::linear(device, tiles, act, Input::M, &mut layer.out.0, 1, 4 * w, w)?;
            if self.fused_norm {
                norm(&mut act.x, &act.parts[1], &layer.out.1, next_ln, &mut act.h, splits)?;
            } else {
                bias_residual::launch(
                    device,
                    Grid::threads(rows * w),
                    &act.parts[1],
                    &layer.out.1,
                    &mut act.x,
                    splits,
                )?;
            }
        }
        if !last {
            return Ok(());
        }
        if !self.fused_norm {
            layer_norm_into(device, &act.x, Some(&self.ln_f.0), Some(&self.ln_f.1), &mut act.h, w, EPS)?;
        }
        let grid = Grid::blocks([c.vocab.div_ceil(8), 1, 1]);
        logits_rows::launch(device, grid, &act.h, &self.wte, &mut self.logits, r32 - 1, w32)?;
        if seq_kv < self.capacity {
            argmax::launch(device, Grid::blocks([1, 1, 1]), &self.logits, &mut self.tokens, seq_kv as u32)?;
        }
        Ok(())
    }

    /// Runs `launches` on a GPU as one submission (recorded into one
    /// encoder), or for a prefill as a submission every
    /// [`Model::prefill_chunk`] layers (the GPU starts on the first layers
    /// while the host records the next); as plain launches on the CPU
    /// executor or when `record` is false (so that `Device::profile` times
    /// each launch).
    fn run(&mut self, prefill: bool, first: usize, record: bool) -> Result<(), Box<dyn std::error::Error>> {
        let device = self.device.clone();
        let layers = self.layers.len();
        match device.wgpu() {
            Some((wgpu_device, queue)) if record => {
                let chunk = match self.prefill_chunk {
                    n if prefill && n > 0 => n.min(layers),
                    _ => layers,
                };
                let ranges: Vec<std::ops::Range<usize>> = match layers {
                    // No layers: one (empty) range still records the head.
                    0 => std::iter::once(0..0).collect(),
                    _ => (0..layers).step_by(chunk).map(|s| s..(s + chunk).min(layers)).collect(),
                };
                let mut checks = Vec::new();
                for range in ranges {
                    let t = Instant::now();
                    let mut encoder = wgpu_device.create_command_encoder(&Default::default());
                    let recorded = if self.pass_per_launch {
                        let (launched, recorded) =
                            device.record(&mut encoder, || self.launches(prefill, first, range))?;
                        launched?;
                        recorded
                    } else {
                        // One compute pass for the whole step (wgpu puts the
                        // barriers between dependent dispatches).
                        let mut pass = encoder.begin_compute_pass(&Default::default());
                        let (launched, recorded) =
                            device.record_pass(&mut pass, || self.launches(prefill, first, range))?;
                        launched?;
                        recorded
                    };
                    let commands = encoder.finish();
                    self.record_time += t.elapsed();
                    queue.submit([commands]);
                    checks.push(recorded);
                }
                for recorded in checks {
                    recorded.check()?;
                }
            }
            _ => self.launches(prefill, first, 0..layers)?,
        }
        Ok(())
    }

    /// The prompt through the model (keys and values into the caches);
    /// returns the first generated token.
    pub fn prefill(&mut self, prompt: &[u32], record: bool) -> Result<u32, Box<dyn std::error::Error>> {
        let n = prompt.len();
        assert!(n >= 1 && n < self.capacity, "a prompt of 1 to {} tokens", self.capacity - 1);
        let split = self.split_k && self.tiles.unwrap_or_else(|| has_tiles(&self.device));
        if self.prefill.as_ref().is_none_or(|a| a.rows != n || a.split != split) {
            self.prefill = Some(Activations::new(&self.device, self.config, n, split)?);
        }
        self.tokens.write_range(0, prompt)?;
        if n == 1 {
            // One row: the decode step's kernels.
            self.run(false, 0, record)?;
        } else {
            self.run(true, 0, record)?;
        }
        Ok(self.tokens.read_range(n..n + 1)?[0])
    }

    /// One decode step for the token at position `pos` (already in the
    /// token buffer); returns the next token.
    pub fn decode(&mut self, pos: usize, record: bool) -> Result<u32, Box<dyn std::error::Error>> {
        assert!(pos + 1 < self.capacity, "the cache holds {} positions", self.capacity);
        self.run(false, pos, record)?;
        Ok(self.tokens.read_range(pos + 1..pos + 2)?[0])
    }

    /// `count` decode steps from position `pos` (the token there already
    /// in the token buffer), each one submission on a GPU, none waiting for
    /// the previous (the token goes from `argmax` to the next `embed` in
    /// device memory): the host records step `i + 1` while the GPU runs
    /// step `i`, and reads the `count` tokens once at the end.
    pub fn decode_many(&mut self, pos: usize, count: usize) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
        assert!(pos + count < self.capacity, "the cache holds {} positions", self.capacity);
        for i in 0..count {
            self.run(false, pos + i, true)?;
        }
        Ok(self.tokens.read_range(pos + 1..pos + count + 1)?)
    }

    /// `count` greedy tokens after `prompt` (prefill, then `count − 1`
    /// decode steps).
    pub fn generate(&mut self, prompt: &[u32], count: usize) -> Result<Vec<u32>, Box<dyn std::error::Error>> {
        let mut out = vec![self.prefill(prompt, true)?];
        out.extend(self.decode_many(prompt.len(), count.saturating_sub(1))?);
        Ok(out)
    }

    /// The logits of the last forward pass's last row.
    pub fn logits(&self) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
        Ok(self.logits.read()?)
    }
}

#[derive(Clone, Copy)]
enum Input {
    H,
    A,
    Merged,
    M,
}

// ---------------------------------------------------------------------
// The same model in plain Rust.
// ---------------------------------------------------------------------

fn r16(v: f32) -> f32 {
    f16::from_f32(v).to_f32()
}

/// The last row's logits (`f16` values as `f32`) of `tokens` through the
/// model, recomputing the whole sequence (no cache), in plain Rust: every
/// tensor between steps rounded to `f16` as the kernels (and PyTorch's
/// `f16` eager model: `addmm` rounds `x·W + b` once, GELU and the residual
/// add round again) do, every sum `f32`.
pub fn reference(weights: &Weights, tokens: &[u32]) -> Vec<f32> {
    let c = weights.config;
    let (w, s, heads, dim) = (c.width, tokens.len(), c.heads, c.head_dim());
    let f = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let norm = |x: &[f32], g: &[f16], b: &[f16]| -> Vec<f32> {
        x.chunks(w)
            .flat_map(|row| {
                let mean = row.iter().sum::<f32>() / w as f32;
                let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / w as f32;
                let inv = 1.0 / (var + EPS).sqrt();
                row.iter().enumerate().map(move |(i, v)| r16((v - mean) * inv * g[i].to_f32() + b[i].to_f32()))
            })
            .collect()
    };
    // f16(x·W + b), W `k × n`.
    let linear = |x: &[f32], wt: &[f16], b: &[f16], k: usize, n: usize| -> Vec<f32> {
        let wt = f(wt);
        let mut out = Vec::with_capacity(x.len() / k * n);
        for row in x.chunks(k) {
            let mut acc = vec![0.0f32; n];
            for (xi, wrow) in row.iter().zip(wt.chunks(n)) {
                for (a, wv) in acc.iter_mut().zip(wrow) {
                    *a += xi * wv;
                }
            }
            out.extend(acc.iter().zip(b).map(|(a, b)| r16(a + b.to_f32())));
        }
        out
    };
    let gelu = |v: f32| r16(0.5 * v * (1.0 + (0.797_884_6 * (v + 0.044715 * v * v * v)).tanh()));
    let (wte, wpe) = (f(weights.wte()), f(weights.wpe()));
    let mut x: Vec<f32> = (0..s * w)
        .map(|i| r16(wte[tokens[i / w] as usize * w + i % w] + wpe[(i / w % c.context) * w + i % w]))
        .collect();
    for l in 0..c.layers {
        let t = |i: usize| weights.layer(l, i);
        let qkv = linear(&norm(&x, t(0), t(1)), t(2), t(3), w, 3 * w);
        let mut a = vec![0.0f32; s * w];
        for h in 0..heads {
            for i in 0..s {
                let q = &qkv[i * 3 * w + h * dim..][..dim];
                let scores: Vec<f32> = (0..=i)
                    .map(|j| {
                        q.iter().zip(&qkv[j * 3 * w + w + h * dim..][..dim]).map(|(a, b)| a * b).sum::<f32>()
                            / (dim as f32).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                let p: Vec<f32> = scores.iter().map(|v| (v - max).exp()).collect();
                let total: f32 = p.iter().sum();
                for d in 0..dim {
                    let o: f32 = (0..=i).map(|j| p[j] * qkv[j * 3 * w + 2 * w + h * dim + d]).sum();
                    a[i * w + h * dim + d] = r16(o / total);
                }
            }
        }
        for (xi, v) in x.iter_mut().zip(linear(&a, t(4), t(5), w, w)) {
            *xi = r16(*xi + v);
        }
        let m: Vec<f32> = linear(&norm(&x, t(6), t(7)), t(8), t(9), w, 4 * w).into_iter().map(gelu).collect();
        for (xi, v) in x.iter_mut().zip(linear(&m, t(10), t(11), 4 * w, w)) {
            *xi = r16(*xi + v);
        }
    }
    let (g, b) = weights.ln_f();
    let h = norm(&x[(s - 1) * w..], g, b);
    (0..c.vocab).map(|j| r16((0..w).map(|i| h[i] * wte[j * w + i]).sum())).collect()
}

/// The index of the first largest value.
pub fn argmax_host(row: &[f32]) -> u32 {
    row.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (j, &v)| if v > best.1 { (j, v) } else { best }).0 as u32
}

/// The logits tolerance against plain Rust and between cached and
/// recomputed decoding: sums in another order can move an `f16`
/// intermediate by one unit in the last place (2⁻¹¹ relative), and that
/// moves a logit (of order 1) by a few thousandths at most.
pub const LOGITS_TOLERANCE: f32 = 2e-2;

fn max_difference(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len(), "logits length");
    got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f32::max)
}

/// The prompt both implementations use: token `i` is `(i·7919 + 13) % vocab`.
pub fn prompt(config: Config, n: usize) -> Vec<u32> {
    (0..n as u64).map(|i| ((i * 7919 + 13) % config.vocab as u64) as u32).collect()
}

// ---------------------------------------------------------------------
// The command line.
// ---------------------------------------------------------------------

struct Args {
    config: Config,
    cpu: bool,
    prefill: usize,
    decode: usize,
    seed: u32,
    check: bool,
    pass_per_launch: bool,
    unfused_norm: bool,
    narrow_blocks: bool,
    split_k: bool,
    vector_epilogues: bool,
    prefill_chunk: usize,
    weights: Option<String>,
    save_logits: Option<String>,
}

fn args() -> Args {
    let argv: Vec<String> = std::env::args().collect();
    let value = |name: &str| argv.iter().position(|a| a == name).and_then(|i| argv.get(i + 1)).cloned();
    let full = match value("--size").as_deref() {
        None | Some("small") => false,
        Some("full") => true,
        Some(other) => panic!("--size small|full, not {other}"),
    };
    let number = |name: &str, default: usize| value(name).map_or(default, |v| v.parse().expect("a number"));
    let config = if full { Config::FULL } else { Config::SMALL };
    Args {
        config,
        cpu: argv.iter().any(|a| a == "--cpu"),
        prefill: number("--prefill", if full { 1024 } else { 24 }),
        decode: number("--decode", if full { 128 } else { 16 }).max(1),
        seed: number("--seed", 1) as u32,
        // Plain Rust recomputing each step is quick only for the small model.
        check: !full || argv.iter().any(|a| a == "--check"),
        pass_per_launch: argv.iter().any(|a| a == "--pass-per-launch"),
        unfused_norm: argv.iter().any(|a| a == "--unfused-norm"),
        narrow_blocks: argv.iter().any(|a| a == "--narrow-blocks"),
        split_k: !argv.iter().any(|a| a == "--no-split-k"),
        vector_epilogues: !argv.iter().any(|a| a == "--scalar-epilogues"),
        prefill_chunk: number("--prefill-chunk", 2),
        weights: value("--weights"),
        save_logits: value("--save-logits"),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args();
    let t = Instant::now();
    let weights = match &a.weights {
        // Real GPT-2 weights (`--size full --weights model.safetensors`).
        Some(path) => Weights::from_safetensors(a.config, &std::fs::read(path)?)?,
        None => Weights::generate(a.config, a.seed),
    };
    let params: usize = weights.tensors.iter().map(Vec::len).sum();
    println!("{:?}: {params} parameters, generated in {:.2} s (seed {})", a.config, t.elapsed().as_secs_f64(), a.seed);
    let prompt = prompt(a.config, a.prefill);
    let capacity = a.prefill + a.decode;
    let devices: Vec<Device> = if a.cpu {
        vec![Device::cpu()]
    } else if a.config == Config::SMALL {
        common::devices(false)
    } else {
        vec![Device::gpu()?]
    };
    for device in devices {
        println!("\n== {} ==", device.name());
        let mut model = Model::new(&device, &weights, capacity)?;
        model.pass_per_launch = a.pass_per_launch;
        model.fused_norm = !a.unfused_norm;
        model.narrow_blocks = a.narrow_blocks;
        model.split_k = a.split_k;
        model.vector_epilogues = a.vector_epilogues;
        model.prefill_chunk = a.prefill_chunk;
        // Warm-up (pipelines are made at their first launch; the CPU
        // executor has none, and GPT-2 small's prefill takes it a while).
        if device.is_gpu() {
            model.prefill(&prompt, true)?;
            if a.decode > 1 {
                model.decode(a.prefill, true)?;
            }
        }

        // The prefill: the median of 3 on a GPU (each recomputes the cache
        // from 0), once on the CPU executor.
        let mut times = Vec::new();
        let mut first = 0;
        for _ in 0..if device.is_gpu() { 3 } else { 1 } {
            let t = Instant::now();
            first = model.prefill(&prompt, true)?;
            times.push(t.elapsed().as_secs_f64());
        }
        let prefill_s = common::median(times);
        let logits = model.logits()?;
        if let Some(path) = &a.save_logits {
            // The last row's logits as little-endian `f32`s (to compare
            // with `gpt2_reference.py --save-logits`).
            std::fs::write(path, logits.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>())?;
        }
        model.record_time = std::time::Duration::ZERO;
        let t = Instant::now();
        let mut tokens = vec![first];
        tokens.extend(model.decode_many(a.prefill, a.decode - 1)?);
        let decode_s = t.elapsed().as_secs_f64();
        if device.is_gpu() {
            println!(
                "host time recording a decode step into one encoder: {:.3} ms",
                model.record_time.as_secs_f64() * 1e3 / (a.decode - 1).max(1) as f64
            );
        }
        println!("generated tokens: {tokens:?}");
        let sum: f64 = logits.iter().map(|&v| f64::from(v)).sum();
        println!("prefill logits (last row): checksum {sum:.6}, first {:?}", &logits[..5]);
        println!(
            "prefill {} tokens: {:.3} ms ({:.0} tokens/s); decode {} tokens: {:.3} ms a token ({:.1} tokens/s)",
            a.prefill,
            prefill_s * 1e3,
            a.prefill as f64 / prefill_s,
            a.decode - 1,
            decode_s * 1e3 / (a.decode - 1).max(1) as f64,
            (a.decode - 1) as f64 / decode_s
        );

        // Where the time goes: each launch timed (not recorded).
        let (r, profile) = device.profile(|| model.prefill(&prompt, false))?;
        r?;
        println!("\nprofile of the prefill ({} tokens):\n{profile}", a.prefill);
        let steps = (a.decode - 1).min(16);
        let (r, profile) = device.profile(|| -> Result<(), Box<dyn std::error::Error>> {
            for i in 0..steps {
                model.decode(a.prefill + i, false)?;
            }
            Ok(())
        })?;
        r?;
        println!("profile of {steps} decode steps:\n{profile}");

        if a.check && a.weights.is_none() {
            let mut seq = prompt.clone();
            let want = reference(&weights, &seq);
            let diff = max_difference(&logits, &want);
            println!("prefill logits vs plain Rust: max difference {diff:.2e} (tolerance {LOGITS_TOLERANCE})");
            assert!(diff <= LOGITS_TOLERANCE);
            for &got in &tokens {
                let want = argmax_host(&reference(&weights, &seq));
                assert_eq!(got, want, "token {} differs from plain Rust", seq.len());
                seq.push(want);
            }
            println!("{} tokens equal plain Rust's (recomputing the sequence each step)", tokens.len());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> (Weights, Vec<u32>) {
        (Weights::generate(Config::SMALL, 2), prompt(Config::SMALL, 20))
    }

    /// Plain Rust's greedy tokens, recomputing the sequence each step.
    fn reference_tokens(weights: &Weights, prompt: &[u32], count: usize) -> Vec<u32> {
        let mut seq = prompt.to_vec();
        for _ in 0..count {
            seq.push(argmax_host(&reference(weights, &seq)));
        }
        seq[prompt.len()..].to_vec()
    }

    #[test]
    fn small_model_agrees_with_plain_rust() {
        let (weights, prompt) = small();
        let want_tokens = reference_tokens(&weights, &prompt, 8);
        // A random model could say one token forever; this one does not,
        // so the comparison sees the cache at work.
        assert!(want_tokens.iter().any(|&t| t != want_tokens[0]), "{want_tokens:?}");
        let want_logits = reference(&weights, &prompt);
        for device in common::devices(true) {
            // The fused residual + layer norm kernel, and the library's
            // layer norm after `bias_residual`; the prefill's epilogues
            // four columns a thread and one.
            for (fused, vector) in [(true, true), (false, true), (true, false)] {
                let mut model = Model::new(&device, &weights, 32).unwrap();
                model.fused_norm = fused;
                model.vector_epilogues = vector;
                let first = model.prefill(&prompt, true).unwrap();
                let diff = max_difference(&model.logits().unwrap(), &want_logits);
                assert!(
                    diff <= LOGITS_TOLERANCE,
                    "{} (fused {fused}, vector {vector}): prefill logits differ by {diff}",
                    device.name()
                );
                let mut tokens = vec![first];
                for i in 1..8 {
                    tokens.push(model.decode(prompt.len() + i - 1, true).unwrap());
                }
                assert_eq!(tokens, want_tokens, "{} (fused {fused}, vector {vector})", device.name());
            }
        }
    }

    /// Logits-like values in `[-0.5, 0.5)` from the generator's hash.
    fn values(n: usize, salt: u32) -> Vec<f32> {
        (0..n as u32).map(|i| (fmix32(i ^ fmix32(salt)) >> 8) as f32 / 16_777_216.0 - 0.5).collect()
    }

    #[test]
    fn argmax_kernel_agrees_with_plain_rust() {
        // Lengths around the block (1,024 threads) and the four-way stride
        // (4,096) and GPT-2's vocabulary; equal maxima at several places
        // (the first wins), all negative, many ties.
        let mut cases: Vec<Vec<f32>> = Vec::new();
        for n in [1usize, 5, 1023, 1024, 1025, 4095, 4096, 4097, 9000, 50257] {
            let mut v = values(n, n as u32);
            cases.push(v.clone());
            if n > 3 {
                v[n - 1] = 2.0;
                v[n / 3] = 2.0;
                v[n / 2] = 2.0;
                cases.push(v.clone());
            }
            cases.push(v.iter().map(|x| -x.abs() - 1.0).collect());
            cases.push((0..n).map(|i| (i % 7) as f32).collect());
        }
        for device in common::devices(true) {
            let mut tokens = Buffer::<u32>::zeroed(&device, 3).unwrap();
            for v in &cases {
                let logits = Buffer::from_slice(&device, v).unwrap();
                argmax::launch(&device, Grid::blocks([1, 1, 1]), &logits, &mut tokens, 1).unwrap();
                let got = tokens.read().unwrap();
                assert_eq!(got[1], argmax_host(v), "{}: {} logits", device.name(), v.len());
                assert_eq!((got[0], got[2]), (0, 0), "{}: only `tokens[at]` written", device.name());
            }
        }
    }

    #[test]
    fn residual_norm_agrees_with_plain_rust() {
        // The fused epilogue + layer norm at the pieces a decode step adds
        // (`k / CHUNK`: 2 and 8 in the small model, 24 and 96 in GPT-2
        // small), around the eight-way unrolled sum, at one and at three
        // rows, widths below and above the block's 256 threads; the same
        // with `residual_norm4` (four columns a thread).
        for device in common::devices(true) {
            for (width, rows) in [(64usize, 1usize), (64, 3), (768, 1), (300, 2)] {
                for splits in [0usize, 1, 2, 7, 8, 9, 17, 24, 96] {
                    let total = rows * width;
                    let parts = values(splits.max(1) * total, 7 * splits as u32 + 1);
                    let h16 = |v: Vec<f32>| v.into_iter().map(f16::from_f32).collect::<Vec<f16>>();
                    let bias = h16(values(width, 2));
                    let x0 = h16(values(total, 3).iter().map(|v| 4.0 * v).collect());
                    let gain = h16(values(width, 4).iter().map(|v| 1.0 + v / 8.0).collect());
                    let shift = h16(values(width, 5).iter().map(|v| v / 4.0).collect());
                    // Plain Rust.
                    let mut x: Vec<f32> = x0.iter().map(|v| v.to_f32()).collect();
                    if splits > 0 {
                        for (i, xi) in x.iter_mut().enumerate() {
                            let s: f32 = (0..splits).map(|p| parts[p * total + i]).sum();
                            *xi = r16(*xi + r16(s + bias[i % width].to_f32()));
                        }
                    }
                    let mut want_h = Vec::new();
                    for row in x.chunks(width) {
                        let mean = row.iter().sum::<f32>() / width as f32;
                        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
                        let inv = 1.0 / (var + EPS).sqrt();
                        want_h.extend(
                            row.iter()
                                .enumerate()
                                .map(|(c, v)| r16((v - mean) * inv * gain[c].to_f32() + shift[c].to_f32())),
                        );
                    }
                    let up = |v: &[f16]| Buffer::from_slice(&device, v).unwrap();
                    let parts_b = Buffer::from_slice(&device, &parts).unwrap();
                    let mut xb = up(&x0);
                    let mut hb = Buffer::<f16>::zeroed(&device, total).unwrap();
                    residual_norm::launch(
                        &device,
                        Grid::blocks([rows, 1, 1]),
                        &parts_b,
                        &up(&bias),
                        &mut xb,
                        &up(&gain),
                        &up(&shift),
                        &mut hb,
                        splits as u32,
                        width as u32,
                    )
                    .unwrap();
                    let f = |b: &Buffer<f16>| b.read().unwrap().iter().map(|v| v.to_f32()).collect::<Vec<f32>>();
                    let what = format!("{} width {width} rows {rows} splits {splits}", device.name());
                    // Sums in another order: one f16 unit at most.
                    common::check(&format!("{what}: x"), &f(&xb), &x, 4e-3);
                    common::check(&format!("{what}: h"), &f(&hb), &want_h, 1e-2);
                    // Four columns a thread (the prefill's).
                    let v16 = |v: &[f16]| Buffer::<F16Vec4>::from_pod_slice(&device, v).unwrap();
                    let mut xv = v16(&x0);
                    let mut hv = Buffer::<F16Vec4>::zeroed(&device, total / 4).unwrap();
                    residual_norm4::launch(
                        &device,
                        Grid::blocks([rows, 1, 1]),
                        &Buffer::<Vec4>::from_pod_slice(&device, &parts).unwrap(),
                        &v16(&bias),
                        &mut xv,
                        &v16(&gain),
                        &v16(&shift),
                        &mut hv,
                        splits as u32,
                        width as u32,
                    )
                    .unwrap();
                    let f4 = |b: &Buffer<F16Vec4>| {
                        b.read()
                            .unwrap()
                            .iter()
                            .flat_map(|v| [v.x, v.y, v.z, v.w])
                            .map(|v| v.to_f32())
                            .collect::<Vec<f32>>()
                    };
                    common::check(&format!("{what}: x (vectors)"), &f4(&xv), &x, 4e-3);
                    common::check(&format!("{what}: h (vectors)"), &f4(&hv), &want_h, 1e-2);
                }
            }
        }
    }

    #[test]
    fn cached_decoding_equals_recomputing() {
        // The last decode step's logits (one row, keys and values from the
        // cache) against a prefill of the whole sequence on the same
        // device (every row recomputed), and against plain Rust. One head
        // of 64 (GPT-2's head size; the other tests use 2 of 32).
        let config = Config { heads: 1, ..Config::SMALL };
        let (weights, prompt) = (Weights::generate(config, 2), prompt(config, 20));
        for device in common::devices(true) {
            let mut model = Model::new(&device, &weights, 32).unwrap();
            let generated = model.generate(&prompt, 6).unwrap();
            let cached = model.logits().unwrap();
            let mut seq = prompt.clone();
            seq.extend(&generated[..5]);
            let mut fresh = Model::new(&device, &weights, 32).unwrap();
            let next = fresh.prefill(&seq, false).unwrap();
            let recomputed = fresh.logits().unwrap();
            let diff = max_difference(&cached, &recomputed);
            assert!(diff <= LOGITS_TOLERANCE, "{}: cached vs recomputed differ by {diff}", device.name());
            assert!(max_difference(&cached, &reference(&weights, &seq)) <= LOGITS_TOLERANCE);
            assert_eq!(next, argmax_host(&cached), "{}", device.name());
        }
    }

    #[test]
    #[ignore = "about 9 minutes on the CPU executor in a debug build on the 2-core CI machine: run with --ignored"]
    fn prefill_on_tensor_core_tiles() {
        // The prefill's products through `gemm_f16` (shapes that fit it:
        // 256 rows, width 128), on the CPU executor, which runs matrix
        // tiles exactly, against plain Rust and the library's product.
        let config = Config { layers: 1, heads: 2, width: 128, vocab: 256, context: 512 };
        let weights = Weights::generate(config, 3);
        let prompt = prompt(config, 256);
        let want = reference(&weights, &prompt);
        let device = Device::cpu();
        let mut got = Vec::new();
        for tiles in [true, false] {
            let mut model = Model::new(&device, &weights, 260).unwrap();
            model.tiles = Some(tiles);
            let token = model.prefill(&prompt, false).unwrap();
            let logits = model.logits().unwrap();
            let diff = max_difference(&logits, &want);
            assert!(diff <= LOGITS_TOLERANCE, "tiles {tiles}: logits differ from plain Rust by {diff}");
            assert_eq!(token, argmax_host(&want), "tiles {tiles}");
            got.push(logits);
        }
        assert!(max_difference(&got[0], &got[1]) <= LOGITS_TOLERANCE);
    }

    #[test]
    fn split_k_products_add_up_to_plain_rust() {
        // The prefill's products on `gemm_f16` with `k` split (the parts
        // `k_splits` picks, each into its own slice of `parts`, added by
        // the epilogues), on the CPU executor, which runs matrix tiles:
        // `h · W` (`k` 128 in 2 parts, 3 blocks) and `m · W` (`k` 512 in 8
        // parts, one block), against plain Rust.
        let config = Config { layers: 1, heads: 2, width: 128, vocab: 256, context: 512 };
        let (rows, w) = (256, config.width);
        assert_eq!((k_splits(rows, w, 3 * w), k_splits(rows, 4 * w, w), k_splits(rows, w, 4 * w)), (2, 8, 2));
        // GPT-2 small's prefill of 1,024 rows: the `n = 768` products in 4
        // parts (96 blocks); `3 · 768` (72 blocks) and `4 · 768` (96) whole.
        assert_eq!((k_splits(1024, 768, 768), k_splits(1024, 3072, 768)), (4, 4));
        assert_eq!((k_splits(1024, 768, 2304), k_splits(1024, 768, 3072)), (1, 1));
        let device = Device::cpu();
        let values =
            |n: usize, salt: u32| -> Vec<f16> { values(n, salt).into_iter().map(|v| f16::from_f32(v / 4.0)).collect() };
        for (input, slot, k, n) in [(Input::H, 0, w, 3 * w), (Input::M, 1, 4 * w, w)] {
            let x = values(rows * k, k as u32);
            let wt = values(k * n, n as u32);
            let wf: Vec<f32> = wt.iter().map(|v| v.to_f32()).collect();
            let mut want = vec![0.0f32; rows * n];
            for r in 0..rows {
                for j in 0..k {
                    let xv = x[r * k + j].to_f32();
                    for c in 0..n {
                        want[r * n + c] += xv * wf[j * n + c];
                    }
                }
            }
            // (Without the split, `gemm_f16`'s own tests and
            // `prefill_on_tensor_core_tiles` cover these products; the CPU
            // executor takes about a minute for each here.)
            let mut act = Activations::new(&device, config, rows, true).unwrap();
            match input {
                Input::H => act.h = Buffer::from_slice(&device, &x).unwrap(),
                _ => act.m = Buffer::from_slice(&device, &x).unwrap(),
            }
            let mut wb = Buffer::from_slice(&device, &wt).unwrap();
            let splits = Model::linear(&device, (true, false), &mut act, input, &mut wb, slot, k, n).unwrap();
            let expect = k_splits(rows, k, n);
            assert_eq!(splits as usize, expect, "k {k} n {n}");
            let parts = act.parts[slot].read().unwrap();
            let got: Vec<f32> = (0..rows * n).map(|i| (0..expect).map(|p| parts[p * rows * n + i]).sum()).collect();
            common::check(&format!("k {k} n {n} in {expect} parts: x·W"), &got, &want, 1e-3);
            // The weights came back whole from their cast.
            assert_eq!(wb.read().unwrap(), wt);
        }
    }

    #[test]
    fn safetensors_round_trip() {
        // A file as Hugging Face writes GPT-2's (F32, `transformer.`
        // prefixes, metadata, an extra tensor), made here from the
        // generated small model; read back, the same weights.
        let weights = Weights::generate(Config::SMALL, 4);
        let mut header = String::from("{\"__metadata__\":{\"format\":\"pt\"}");
        let mut data = Vec::new();
        let specs = tensors(Config::SMALL);
        for ((name, shape, _), values) in specs.iter().zip(&weights.tensors) {
            let start = data.len();
            data.extend(values.iter().flat_map(|v| v.to_f32().to_le_bytes()));
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            header += &format!(
                ",\"transformer.{name}\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{start},{}]}}",
                dims.join(","),
                data.len()
            );
        }
        header += &format!(
            ",\"h.0.attn.bias\":{{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[{},{}]}}}}",
            data.len(),
            data.len() + 4
        );
        data.extend(1.0f32.to_le_bytes());
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend(header.as_bytes());
        file.extend(&data);
        let path = std::env::temp_dir().join(format!("onekernel-gpt-{}.safetensors", std::process::id()));
        std::fs::write(&path, &file).unwrap();
        let read = Weights::from_safetensors(Config::SMALL, &std::fs::read(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        assert!(read.as_ref().is_ok_and(|r| r.tensors == weights.tensors), "{:?}", read.err());
        // A shape that does not fit the configuration is an error naming the tensor.
        let wider = Config { width: 128, ..Config::SMALL };
        let err = Weights::from_safetensors(wider, &file).err().unwrap();
        assert!(err.contains("wte.weight") && err.contains("shape"), "{err}");
        assert!(Weights::from_safetensors(Config::SMALL, &file[..20]).is_err());
    }

    #[test]
    fn the_generator_is_fixed() {
        // The documented generator's values (the PyTorch reference prints
        // the same with `--print-weights`), exact in f16.
        assert_eq!(fmix32(0), 0);
        assert_eq!(fmix32(1), 0x514e_28b7);
        let first: Vec<f32> = (0..4).map(|i| weight(1, 0, i, TOKEN).to_f32()).collect();
        // `python3 peers/torch/gpt2_reference.py --size small --print-weights`
        assert_eq!(first, [0.001_304_626_5, -0.003_608_703_6, -0.000_656_127_93, 0.000_656_127_93]);
        let wpe: Vec<f32> = (0..2).map(|i| weight(1, 1, i, POSITION).to_f32()).collect();
        assert_eq!(wpe, [0.013_916_016, 0.013_305_664]);
        let gains: Vec<f32> = (0..2).map(|i| weight(1, 2, i, GAIN).to_f32()).collect();
        assert_eq!(gains, [0.958_007_8, 0.960_937_5]);
        let again = Weights::generate(Config::SMALL, 1);
        assert_eq!(again.tensors[0][..4].iter().map(|h| h.to_f32()).collect::<Vec<_>>(), first);
        assert_eq!(again.tensors.len(), 2 + 12 * 2 + 2);
        // Another seed, another model; the gains near 1.
        assert_ne!(Weights::generate(Config::SMALL, 2).tensors[0], again.tensors[0]);
        assert!(again.tensors[2].iter().all(|g| (g.to_f32() - 1.0).abs() <= 1.0 / 16.0));
    }
}
