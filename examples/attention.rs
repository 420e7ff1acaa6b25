//! **Fused attention** (flash-attention style): `O = softmax(Q·Kᵀ·scale
//! [+ causal mask])·V` in one kernel, without ever writing the `S × S`
//! score matrix to memory.
//!
//!     cargo run --release --example attention               # check on every device
//!     cargo run --release --example attention -- --wgsl     # print the tile kernel's WGSL
//!     cargo run --release --example attention -- --bench    # GPU TFLOP/s at the transformer shapes
//!
//! `Q`, `K`, `V` and `O` are `f16` tensors of shape `[batch, heads, seq,
//! dim]` (row-major: a head is `seq` rows of `dim` features), `dim` 64 or
//! 128, any `seq`. Each block of the launch owns 64 query rows of one
//! (batch, head) and walks over the keys 32 at a time with an *online
//! softmax*: it keeps, per row, the largest score seen so far `m` and the
//! sum `l` of `exp(score - m)`, and adds `exp(score - m)·V` into the output
//! accumulator, so the scores of a block of keys live only in shared
//! memory. Sums are in `f32`.
//!
//! Two kernels compute it, chosen at run time from the device
//! ([`Path::for_device`]):
//!
//! * [`Path::Tiles`] (`attention_tiles_d64`, `attention_tiles_d128`: the
//!   same source, one module per head dimension):
//!   `Q·Kᵀ` and `P·V` on matrix tiles (tensor cores: `onekernel::tile`),
//!   four subgroups of 32 threads per block, each owning 16 query rows.
//!   The output stays in accumulator tiles for the whole walk; a tile
//!   cannot be scaled in place, so instead of rescaling it by
//!   `exp(m_old - m_new)` at every step the kernel keeps its reference `m`
//!   until a row's maximum grows past it by more than `2^8` (the
//!   exponentials stay below 256, exact enough in `f16`), and only then
//!   scales the accumulators through shared memory: at most a few times
//!   per row, usually never after the first block.
//! * [`Path::Simple`] (`attention_simple`): one thread per query row, keys
//!   and values staged in shared memory, for devices without matrix tiles
//!   (lavapipe in CI, WebGPU).
//!
//! Both are checked against an `f64` reference on the CPU executor (which
//! runs matrix tiles exactly) and on the GPU.

mod common;

use onekernel::half::f16;
use onekernel::prelude::*;
use onekernel::LaunchError;

/// The tile kernel for one head dimension: a module per `D`, as tiles and
/// register arrays need their sizes as constants.
macro_rules! tile_attention {
    ($module:ident, $name:ident, $d:tt) => {
        #[onekernel::kernels]
        pub mod $module {
            use onekernel::half::f16;
            use onekernel::prelude::*;
            use onekernel::tile::{mma, Accumulator, MatrixA, MatrixB};

            /// The head dimension.
            pub const D: usize = $d;
            /// Query rows per block: 16 per subgroup, four subgroups.
            pub const BR: usize = 64;
            /// Keys per step.
            pub const BC: usize = 32;
            /// The side of a tensor-core tile.
            const T: usize = 16;
            /// `f16` values per `F16Vec4`.
            const L: usize = 4;
            /// A staged row of `K`, `V` (or `Q`) in vectors: `D / 4` and two of
            /// padding, so that the 16 rows a tile load reads start in different
            /// shared-memory banks.
            const KS: usize = D / L + 2;
            /// Tiles across a row of `Q`, `K`, `V` or `O`.
            const DT: usize = D / T;
            /// A subgroup's scores in shared memory: two 16 × 16 tiles
            /// stored column by column, the second 16 words after the
            /// first (so that the two halves of a row are in different
            /// banks).
            const SG_S: usize = 2 * T * T + 16;
            /// A subgroup's probabilities (`f16`), the same way.
            const SG_P: usize = 2 * T * T + 32;
            /// Vectors of `K` (of `V`) each of the 128 threads copies per step.
            const NV: usize = BC * (D / L) / 128;
            /// How far (in powers of two) a row's maximum may grow past the
            /// reference before the output is rescaled.
            const SLACK: f32 = 8.0;

            /// `o = softmax(q·kᵀ·scale)·v` for one (batch, head) per `block_id().y`
            /// and 64 query rows per `block_id().x`; `scale_log2` is the scale times
            /// `log2(e)` (the kernel uses `exp2`), `causal` 1 to mask keys after the
            /// query. Launch with `Grid::blocks([seq.div_ceil(64), batch * heads])`.
            /// Shared memory: `K` and `V` of a step (`Q` before the first), the
            /// scores and the probabilities: under 28 KiB at `D` = 128.
            #[kernel(workgroup_size = 128, max_shared_bytes = 32768)]
            pub fn $name(
                q: &[F16Vec4],
                k: &[F16Vec4],
                v: &[F16Vec4],
                o: &mut [F16Vec4],
                seq: u32,
                scale_log2: f32,
                causal: u32,
            ) {
                // Rows 0..BC: K, rows BC..2 BC: V; Q's 64 rows before the walk.
                let kv = shared::<[F16Vec4; 2 * BC * KS]>();
                // Each subgroup's 16 × 32 scores (f32) and probabilities (f16).
                let s_s = shared::<[f32; 4 * SG_S]>();
                let p_s = shared::<[f16; 4 * SG_P]>();
                // Whether each subgroup must rescale its output this step,
                // and whether any must.
                let flags = shared::<[u32; 8]>();
                let seq = seq as usize;
                let dv = D / L;
                let t = thread_id().x;
                let sg = t / 32;
                let lane = t % 32;
                // This thread's share of the softmax: half a row of its subgroup's 16.
                let rr = lane / 2;
                let half = lane % 2;
                let base = block_id().y * seq * dv;
                let q0 = block_id().x * BR;
                let qi = q0 + sg * T + rr;
                // Element (rr, c) of this thread's half-row: `mine_s + c * T`
                // (`mine_p + c * T`); the tiles are stored column by column.
                let (s_at, p_at) = (sg * SG_S, sg * SG_P);
                let mine_s = s_at + half * (T * T + 16) + rr;
                let mine_p = p_at + half * (T * T + 32) + rr;

                // Q's 64 rows (zeros past the end), then each subgroup's 16 as tiles.
                #[unroll]
                for i in 0..BR * (D / L) / 128 {
                    let e = t + i * 128;
                    let r = e / dv;
                    let inside = q0 + r < seq;
                    kv[r * KS + e % dv] = if inside { q[base + (q0 + r) * dv + e % dv] } else { F16Vec4::ZERO };
                }
                workgroup_barrier();
                let mut qa = [MatrixA::<T, T>::load(&kv, sg * T * KS, KS); DT];
                #[unroll]
                for f in 1..DT {
                    qa[f] = MatrixA::<T, T>::load(&kv, sg * T * KS + f * T / L, KS);
                }
                let mut acc = [Accumulator::<f32, T, T>::zeros(); DT];
                let mut m_ref = f32::NEG_INFINITY;
                let mut l = 0.0f32;
                let kend = if causal != 0 { seq.min(q0 + BR) } else { seq };
                // The next step's K and V, loaded into registers while the
                // tensor cores work on this one: thread t copies vectors t,
                // t + 128, ... of the 32 rows (zeros past the end).
                let mut next_k = [F16Vec4::ZERO; NV];
                let mut next_v = [F16Vec4::ZERO; NV];
                #[unroll]
                for i in 0..NV {
                    let r = (t + i * 128) / dv;
                    if r < seq {
                        next_k[i] = k[base + r * dv + (t + i * 128) % dv];
                        next_v[i] = v[base + r * dv + (t + i * 128) % dv];
                    }
                }
                let mut k0 = 0;
                while k0 < kend {
                    // Every subgroup is done with the last step's K, V (or Q).
                    workgroup_barrier();
                    #[unroll]
                    for i in 0..NV {
                        let e = t + i * 128;
                        kv[e / dv * KS + e % dv] = next_k[i];
                        kv[(BC + e / dv) * KS + e % dv] = next_v[i];
                    }
                    workgroup_barrier();
                    let kn = k0 + BC;
                    if kn < kend {
                        #[unroll]
                        for i in 0..NV {
                            let e = t + i * 128;
                            let inside = kn + e / dv < seq;
                            let at = base + (kn + e / dv) * dv + e % dv;
                            next_k[i] = if inside { k[at] } else { F16Vec4::ZERO };
                            next_v[i] = if inside { v[at] } else { F16Vec4::ZERO };
                        }
                    }

                    // Scores: 16 rows × 32 keys, two tiles, summed over D.
                    let mut s0 = Accumulator::<f32, T, T>::zeros();
                    let mut s1 = Accumulator::<f32, T, T>::zeros();
                    #[unroll]
                    for f in 0..DT {
                        // Element (feature, key) of a key tile is K[key][feature]: Kᵀ.
                        let k0t = MatrixB::<T, T>::load_col_major(&kv, f * T / L, KS);
                        let k1t = MatrixB::<T, T>::load_col_major(&kv, T * KS + f * T / L, KS);
                        s0 = mma(qa[f], k0t, s0);
                        s1 = mma(qa[f], k1t, s1);
                    }
                    s0.store_col_major(&mut s_s, s_at, T);
                    s1.store_col_major(&mut s_s, s_at + T * T + 16, T);
                    workgroup_barrier();

                    // The online softmax of this thread's 16 scores.
                    let mut x = [0.0f32; T];
                    let mut top = f32::NEG_INFINITY;
                    // Column by column, the 32 threads of a subgroup read 32
                    // different banks (rows rr, the second tile 16 words on).
                    #[unroll]
                    for c in 0..T {
                        let key = k0 + half * T + c;
                        let valid = key < seq && (causal == 0 || key <= qi);
                        x[c] = if valid { s_s[mine_s + c * T] * scale_log2 } else { f32::NEG_INFINITY };
                        top = top.max(x[c]);
                    }
                    top = top.max(subgroup_shuffle_xor(top, 1));
                    let mut alpha = 1.0f32;
                    let mut rescale = 0u32;
                    if top > m_ref + SLACK {
                        if m_ref > f32::NEG_INFINITY {
                            alpha = (m_ref - top).exp2();
                            rescale = 1;
                        }
                        m_ref = top;
                    }
                    let mut sum = 0.0f32;
                    #[unroll]
                    for c in 0..T {
                        let p = if x[c] > f32::NEG_INFINITY { f16::from_f32((x[c] - m_ref).exp2()) } else { f16::ZERO };
                        p_s[mine_p + c * T] = p;
                        sum += p.to_f32();
                    }
                    sum += subgroup_shuffle_xor(sum, 1);
                    l = l * alpha + sum;
                    // Whether any row of the block must rescale: each
                    // subgroup's answer, then thread 0's sum, read by all.
                    let any = subgroup_max(rescale);
                    if lane == 0 {
                        flags[sg] = any;
                    }
                    workgroup_barrier();
                    if t == 0 {
                        flags[4] = flags[0] + flags[1] + flags[2] + flags[3];
                    }
                    let rescale_any = workgroup_uniform_load(&flags[4]);

                    // Rare: a maximum grew past the slack. Scale the output
                    // tiles two at a time through the scores' shared memory.
                    if rescale_any != 0 {
                        #[unroll]
                        for j in 0..DT / 2 {
                            acc[2 * j].store_col_major(&mut s_s, s_at, T);
                            acc[2 * j + 1].store_col_major(&mut s_s, s_at + T * T + 16, T);
                            workgroup_barrier();
                            #[unroll]
                            for c in 0..T {
                                s_s[mine_s + c * T] *= alpha;
                            }
                            workgroup_barrier();
                            acc[2 * j] = Accumulator::<f32, T, T>::load_col_major(&s_s, s_at, T);
                            acc[2 * j + 1] = Accumulator::<f32, T, T>::load_col_major(&s_s, s_at + T * T + 16, T);
                            workgroup_barrier();
                        }
                    }

                    // O += P·V: P's 16 × 32 as two tiles, V's 32 × D as 2 × DT.
                    let p0 = MatrixA::<T, T>::load_col_major(&p_s, p_at, T);
                    let p1 = MatrixA::<T, T>::load_col_major(&p_s, p_at + T * T + 32, T);
                    #[unroll]
                    for j in 0..DT {
                        let v0 = MatrixB::<T, T>::load(&kv, BC * KS + j * T / L, KS);
                        let v1 = MatrixB::<T, T>::load(&kv, (BC + T) * KS + j * T / L, KS);
                        acc[j] = mma(p0, v0, acc[j]);
                        acc[j] = mma(p1, v1, acc[j]);
                    }
                    k0 += BC;
                }

                // O / l, two tiles at a time through shared memory, to f16.
                let inv = 1.0 / l;
                #[unroll]
                for j in 0..DT / 2 {
                    workgroup_barrier();
                    acc[2 * j].store_col_major(&mut s_s, s_at, T);
                    acc[2 * j + 1].store_col_major(&mut s_s, s_at + T * T + 16, T);
                    workgroup_barrier();
                    if qi < seq {
                        #[unroll]
                        for c in 0..T / L {
                            let at = mine_s + c * L * T;
                            let out = Vec4::new(s_s[at], s_s[at + T], s_s[at + 2 * T], s_s[at + 3 * T]) * inv;
                            o[base + qi * dv + j * 2 * T / L + half * T / L + c] = F16Vec4::from_vec4(out);
                        }
                    }
                }
            }
        }
    };
}

tile_attention!(tiles_d64, attention_tiles_d64, 64);
tile_attention!(tiles_d128, attention_tiles_d128, 128);

#[onekernel::kernels]
pub mod simple {
    use onekernel::prelude::*;

    /// Query rows per block: one per thread.
    pub const BR: usize = 64;
    /// Keys per step.
    pub const BC: usize = 32;
    /// The largest head dimension, in vectors of four.
    pub const DV: usize = 32;

    /// The same attention without matrix tiles: thread `t` of block `x`
    /// owns query row `64 x + t` of the (batch, head) `block_id().y`, with
    /// its query and output in registers; each step stages 32 keys and
    /// values in shared memory (16 KiB at `dim` = 128, every device has
    /// it). `dim` a multiple of 4 up to 128.
    #[kernel(workgroup_size = 64)]
    pub fn attention_simple(
        q: &[F16Vec4],
        k: &[F16Vec4],
        v: &[F16Vec4],
        o: &mut [F16Vec4],
        seq: u32,
        dim: u32,
        scale_log2: f32,
        causal: u32,
    ) {
        let ks = shared::<[F16Vec4; BC * DV]>();
        let vs = shared::<[F16Vec4; BC * DV]>();
        let seq = seq as usize;
        let dv = dim as usize / 4;
        let t = thread_id().x;
        let base = block_id().y * seq * dv;
        let q0 = block_id().x * BR;
        let qi = q0 + t;
        let mut qr = [Vec4::ZERO; DV];
        let mut acc = [Vec4::ZERO; DV];
        if qi < seq {
            for c in 0..dv {
                qr[c] = q[base + qi * dv + c].to_vec4() * scale_log2;
            }
        }
        let mut m = f32::NEG_INFINITY;
        let mut l = 0.0f32;
        let kend = if causal != 0 { seq.min(q0 + BR) } else { seq };
        let mut k0 = 0;
        while k0 < kend {
            let mut e = t;
            while e < BC * dv {
                let r = e / dv;
                let inside = k0 + r < seq;
                let at = base + (k0 + r) * dv + e % dv;
                ks[e] = if inside { k[at] } else { F16Vec4::ZERO };
                vs[e] = if inside { v[at] } else { F16Vec4::ZERO };
                e += BR;
            }
            workgroup_barrier();
            let n = BC.min(seq - k0);
            let mut s = [0.0f32; BC];
            let mut top = f32::NEG_INFINITY;
            for j in 0..n {
                let mut x = f32::NEG_INFINITY;
                if causal == 0 || k0 + j <= qi {
                    let mut d = 0.0f32;
                    for c in 0..dv {
                        d += qr[c].dot(ks[j * dv + c].to_vec4());
                    }
                    x = d;
                }
                s[j] = x;
                top = top.max(x);
            }
            let m_new = m.max(top);
            if m_new > f32::NEG_INFINITY {
                let alpha = if m > f32::NEG_INFINITY { (m - m_new).exp2() } else { 0.0 };
                for c in 0..dv {
                    acc[c] *= alpha;
                }
                l *= alpha;
                for j in 0..n {
                    if s[j] > f32::NEG_INFINITY {
                        let p = (s[j] - m_new).exp2();
                        l += p;
                        for c in 0..dv {
                            acc[c] += vs[j * dv + c].to_vec4() * p;
                        }
                    }
                }
                m = m_new;
            }
            workgroup_barrier();
            k0 += BC;
        }
        if qi < seq {
            for c in 0..dv {
                o[base + qi * dv + c] = F16Vec4::from_vec4(acc[c] / l);
            }
        }
    }
}

/// An attention problem's shape: `[batch, heads, seq, dim]` for each of
/// `Q`, `K`, `V` and `O`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub batch: usize,
    pub heads: usize,
    pub seq: usize,
    pub dim: usize,
    pub causal: bool,
}

impl Shape {
    /// Elements of each tensor.
    pub fn elements(&self) -> usize {
        self.batch * self.heads * self.seq * self.dim
    }

    /// Floating-point operations as flash attention counts them: two
    /// products of `seq² · dim` multiply-adds per head, half of them with
    /// the causal mask.
    pub fn flops(&self) -> f64 {
        let full = 4.0 * (self.batch * self.heads) as f64 * (self.seq as f64).powi(2) * self.dim as f64;
        if self.causal {
            full / 2.0
        } else {
            full
        }
    }
}

/// Which kernel computes the attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// `attention_tiles`: matrix tiles (tensor cores).
    Tiles,
    /// `attention_simple`: one thread per query row, no tiles.
    Simple,
}

impl Path {
    /// The tile kernel where the device multiplies 16 × 16 × 16 `f16`
    /// tiles into `f32` (the CPU executor runs any tile), else the
    /// simple one.
    pub fn for_device(device: &Device) -> Path {
        use onekernel::wgpu::CooperativeScalarType as S;
        if !device.features().contains(onekernel::abi::Features::COOPERATIVE_MATRIX) {
            return Path::Simple;
        }
        let shape_ok = !device.is_gpu()
            || device
                .cooperative_matrix_properties()
                .iter()
                .any(|p| (p.m_size, p.n_size, p.k_size) == (16, 16, 16) && p.ab_type == S::F16 && p.cr_type == S::F32);
        if shape_ok {
            Path::Tiles
        } else {
            Path::Simple
        }
    }
}

/// `o = attention(q, k, v)` by `path`; tensors as `F16Vec4`s (four
/// features each), `dim` 64 or 128 for [`Path::Tiles`], a multiple of 4 up
/// to 128 for [`Path::Simple`].
pub fn attention(
    device: &Device,
    path: Path,
    shape: Shape,
    q: &Buffer<F16Vec4>,
    k: &Buffer<F16Vec4>,
    v: &Buffer<F16Vec4>,
    o: &mut Buffer<F16Vec4>,
) -> Result<(), LaunchError> {
    let Shape { batch, heads, seq, dim, causal } = shape;
    let grid = Grid::blocks([seq.div_ceil(64), batch * heads]);
    let scale_log2 = std::f32::consts::LOG2_E / (dim as f32).sqrt();
    let (seq, causal) = (seq as u32, u32::from(causal));
    match (path, dim) {
        (Path::Tiles, 64) => tiles_d64::attention_tiles_d64::launch(device, grid, q, k, v, o, seq, scale_log2, causal),
        (Path::Tiles, 128) => {
            tiles_d128::attention_tiles_d128::launch(device, grid, q, k, v, o, seq, scale_log2, causal)
        }
        (Path::Tiles, _) => panic!("the tile kernel takes head dimensions 64 and 128, not {dim}"),
        (Path::Simple, _) => {
            assert!(dim % 4 == 0 && dim <= 128, "head dimension {dim}: a multiple of 4 up to 128");
            simple::attention_simple::launch(device, grid, q, k, v, o, seq, dim as u32, scale_log2, causal)
        }
    }
}

/// The plain Rust answer in `f64` for the rows `rows` of head `bh`.
fn reference_rows(q: &[f16], k: &[f16], v: &[f16], shape: Shape, bh: usize, rows: std::ops::Range<usize>) -> Vec<f64> {
    let Shape { seq, dim, causal, .. } = shape;
    let head = |x: &[f16], r: usize, c: usize| x[(bh * seq + r) * dim + c].to_f64();
    let scale = 1.0 / (dim as f64).sqrt();
    let mut out = Vec::with_capacity(rows.len() * dim);
    for i in rows {
        let keys = if causal { i + 1 } else { seq };
        let s: Vec<f64> =
            (0..keys).map(|j| (0..dim).map(|c| head(q, i, c) * head(k, j, c)).sum::<f64>() * scale).collect();
        let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let p: Vec<f64> = s.iter().map(|x| (x - max).exp()).collect();
        let sum: f64 = p.iter().sum();
        for c in 0..dim {
            out.push((0..keys).map(|j| p[j] * head(v, j, c)).sum::<f64>() / sum);
        }
    }
    out
}

fn reference(q: &[f16], k: &[f16], v: &[f16], shape: Shape) -> Vec<f64> {
    (0..shape.batch * shape.heads).flat_map(|bh| reference_rows(q, k, v, shape, bh, 0..shape.seq)).collect()
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

fn vectors(values: &[f16]) -> Vec<F16Vec4> {
    values.chunks_exact(4).map(|v| F16Vec4::new(v[0], v[1], v[2], v[3])).collect()
}

fn halves(vectors: &[F16Vec4]) -> Vec<f16> {
    vectors.iter().flat_map(|v| [v.x, v.y, v.z, v.w]).collect()
}

/// Runs `path` on `device` for the given inputs; the output as `f16`s.
fn run(device: &Device, path: Path, shape: Shape, q: &[f16], k: &[f16], v: &[f16]) -> Result<Vec<f16>, LaunchError> {
    let buffer = |x: &[f16]| Buffer::from_slice(device, &vectors(x)).expect("buffer");
    let (qb, kb, vb) = (buffer(q), buffer(k), buffer(v));
    let mut ob = Buffer::<F16Vec4>::zeroed(device, shape.elements() / 4).expect("buffer");
    attention(device, path, shape, &qb, &kb, &vb, &mut ob)?;
    Ok(halves(&ob.read().expect("read")))
}

/// `f16` outputs within a relative 1e-2 of the `f64` answer (and 1e-3
/// absolute, for outputs near zero: an average of values in [-1, 1)).
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

/// Whether `e` is a GPU's honest refusal of the tile kernel (no matrix
/// tiles, or not this shape).
fn cannot_run(device: &Device, path: Path, e: &LaunchError) -> bool {
    device.is_gpu()
        && path == Path::Tiles
        && matches!(e, LaunchError::MissingFeature { .. } | LaunchError::UnsupportedTileShape { .. })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if common::wants_wgsl() {
        println!("{}", tiles_d64::attention_tiles_d64::WGSL);
        return Ok(());
    }
    if args.iter().any(|a| a == "--bench") {
        let flag = |name: &str| args.iter().any(|a| a == name);
        return bench(flag("--small"), flag("--checked"));
    }
    let gpu_only = args.iter().any(|a| a == "--gpu");
    for shape in [
        Shape { batch: 1, heads: 2, seq: 77, dim: 64, causal: false },
        Shape { batch: 1, heads: 1, seq: 100, dim: 128, causal: true },
    ] {
        let (q, k, v) =
            (data(shape.elements(), 1, 1.0), data(shape.elements(), 2, 1.0), data(shape.elements(), 3, 1.0));
        let want = reference(&q, &k, &v, shape);
        for device in common::devices(gpu_only).into_iter().filter(|d| !gpu_only || d.is_gpu()) {
            for path in [Path::Tiles, Path::Simple] {
                match run(&device, path, shape, &q, &k, &v) {
                    Ok(got) => {
                        check(&format!("{path:?} on {}", device.name()), &got, &want);
                        println!("{}: {path:?} agrees with f64 at {shape:?}", device.name());
                    }
                    Err(e) if cannot_run(&device, path, &e) => println!("{}: {path:?}: {e}", device.name()),
                    Err(e) => return Err(e.into()),
                }
            }
        }
    }
    Ok(())
}

/// The benchmark: kernel time (GPU timestamps, median of 10 launches
/// after 2 s of warm-up) at the shapes PyTorch's `scaled_dot_product_attention`
/// was measured at (`peers/torch/attention_baseline.py`), as TFLOP/s and
/// the ratio to PyTorch's figures of 2026-12-03 on the same H200. A few rows
/// of every shape are checked against the `f64` reference. `--small` runs
/// small shapes (for lavapipe); `--checked` launches through the default
/// (bounds-checked) handle instead of an unchecked one.
fn bench(small: bool, checked: bool) -> Result<(), Box<dyn std::error::Error>> {
    let device = Device::gpu()?;
    let path = Path::for_device(&device);
    println!("{} ({path:?} kernel)\n", device.name());
    // (shape, PyTorch TFLOP/s measured 2026-12-03 on the H200)
    let shapes: Vec<(Shape, f64)> = if small {
        vec![
            (Shape { batch: 1, heads: 2, seq: 256, dim: 64, causal: false }, f64::NAN),
            (Shape { batch: 1, heads: 2, seq: 200, dim: 128, causal: true }, f64::NAN),
        ]
    } else {
        let s = |batch, heads, seq, dim, causal| Shape { batch, heads, seq, dim, causal };
        vec![
            (s(4, 16, 4096, 128, false), 629.0),
            (s(4, 16, 4096, 128, true), 554.0),
            (s(4, 16, 4096, 64, false), 462.0),
            (s(4, 16, 4096, 64, true), 397.0),
            (s(1, 32, 8192, 128, false), 637.0),
            (s(1, 32, 8192, 128, true), 572.0),
        ]
    };
    // SAFETY: every index of the tile kernels is inside its buffer for
    // any `seq` (rows past the end are guarded and staged as zeros), as the
    // CPU executor's checked runs of the tests show at uneven lengths. The
    // simple kernel runs on the plain handle: on lavapipe, unchecked, it
    // did not finish (not understood; checked it agrees with f64).
    let unchecked = if checked || path == Path::Simple { device.clone() } else { unsafe { device.unchecked() } };
    println!("| shape | causal | ms | TFLOP/s | PyTorch TFLOP/s | ratio |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for &(shape, torch) in &shapes {
        let (q, k, v) =
            (data(shape.elements(), 1, 2.0), data(shape.elements(), 2, 2.0), data(shape.elements(), 3, 1.0));
        let buffer = |x: &[f16]| Buffer::from_slice(&device, &vectors(x));
        let (qb, kb, vb) = (buffer(&q)?, buffer(&k)?, buffer(&v)?);
        let mut ob = Buffer::<F16Vec4>::zeroed(&device, shape.elements() / 4)?;
        // Warm-up: the GPU idles at a low clock and takes about a second
        // of work to reach its full one (seen on the H200: the first
        // launches 4× slower), so launch for 2 s before timing.
        let warm = std::time::Instant::now();
        while warm.elapsed().as_secs_f64() < 2.0 {
            attention(&unchecked, path, shape, &qb, &kb, &vb, &mut ob)?;
            unchecked.synchronize()?;
        }
        let (launched, timing) =
            unchecked.time(|| (0..10).try_for_each(|_| attention(&unchecked, path, shape, &qb, &kb, &vb, &mut ob)))?;
        launched?;
        let t = timing.median().expect("timed").as_secs_f64();
        if std::env::var_os("ATTENTION_LAUNCHES").is_some() {
            eprintln!("{shape:?}: {:?}", timing.per_launch);
        }
        let tflops = shape.flops() / t * 1e-12;
        // Check rows at the start, the middle and the end of the last head.
        let got = halves(&ob.read()?);
        let bh = shape.batch * shape.heads - 1;
        for rows in [0..2, shape.seq / 2..shape.seq / 2 + 1, shape.seq - 2..shape.seq] {
            let want = reference_rows(&q, &k, &v, shape, bh, rows.clone());
            let at = (bh * shape.seq + rows.start) * shape.dim;
            check(&format!("{shape:?} rows {rows:?}"), &got[at..at + want.len()], &want);
        }
        println!(
            "| B{} H{} S{} D{} | {} | {:.3} | {tflops:.1} | {torch:.0} | {:.2} |",
            shape.batch,
            shape.heads,
            shape.seq,
            shape.dim,
            if shape.causal { "yes" } else { "no" },
            t * 1e3,
            tflops / torch
        );
    }
    // Where the time goes when both kernels run once at every shape: the
    // profile (`Device::profile`) of that run, by kernel.
    let (ran, profile) = unchecked.profile(|| -> Result<(), Box<dyn std::error::Error>> {
        for &(shape, _) in &shapes {
            let zeros = Buffer::<F16Vec4>::zeroed(&device, shape.elements() / 4)?;
            let mut ob = Buffer::<F16Vec4>::zeroed(&device, shape.elements() / 4)?;
            for p in [Path::Tiles, Path::Simple] {
                if p == Path::Simple || path == Path::Tiles {
                    let handle = if p == Path::Tiles { &unchecked } else { &device };
                    attention(handle, p, shape, &zeros, &zeros, &zeros, &mut ob)?;
                }
            }
        }
        Ok(())
    })?;
    ran?;
    println!("\nOne launch of each kernel at each shape:\n\n```text\n{profile}\n```");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small shapes at uneven lengths, causal and not, both head
    /// dimensions, on `path`; a device that cannot run the tile kernel
    /// must say so.
    fn agree(path: Path, shapes: &[Shape]) {
        for device in common::devices(true) {
            for (n, &shape) in shapes.iter().enumerate() {
                let seed = 10 * n as u64;
                let (q, k, v) = (
                    data(shape.elements(), seed + 1, 2.0),
                    data(shape.elements(), seed + 2, 2.0),
                    data(shape.elements(), seed + 3, 1.0),
                );
                let want = reference(&q, &k, &v, shape);
                match run(&device, path, shape, &q, &k, &v) {
                    Ok(got) => check(&format!("{path:?} on {} at {shape:?}", device.name()), &got, &want),
                    Err(e) if cannot_run(&device, path, &e) => {}
                    Err(e) => panic!("{path:?} on {} at {shape:?}: {e}", device.name()),
                }
            }
        }
    }

    /// Two query blocks and a partial one, several key steps with a
    /// partial last one, causal and not, both head dimensions; small,
    /// since the CPU executor runs every tile product once per thread
    /// (the tile test takes most of this file's time).
    const SHAPES: [Shape; 4] = [
        Shape { batch: 1, heads: 1, seq: 70, dim: 64, causal: false },
        Shape { batch: 2, heads: 1, seq: 33, dim: 64, causal: true },
        Shape { batch: 1, heads: 1, seq: 40, dim: 128, causal: true },
        Shape { batch: 1, heads: 1, seq: 17, dim: 128, causal: false },
    ];

    #[test]
    fn tiles_agree_with_f64() {
        agree(Path::Tiles, &SHAPES);
    }

    #[test]
    fn simple_agrees_with_f64() {
        agree(Path::Simple, &SHAPES);
    }

    /// Scores that grow along the keys: the row maxima pass the tile
    /// kernel's slack again and again, so its rescaling runs.
    #[test]
    fn growing_scores_rescale() {
        let shape = Shape { batch: 1, heads: 1, seq: 100, dim: 64, causal: false };
        let q = vec![f16::from_f32(1.0); shape.elements()];
        // Key j's features are all j / 8: its score is 64 · j / 8 · 1/√64 = j,
        // so each step's maximum is 32 past the last one's.
        let k: Vec<f16> = (0..shape.elements()).map(|i| f16::from_f32((i / shape.dim) as f32 / 8.0)).collect();
        let v = data(shape.elements(), 7, 1.0);
        let want = reference(&q, &k, &v, shape);
        for device in common::devices(true) {
            for path in [Path::Tiles, Path::Simple] {
                match run(&device, path, shape, &q, &k, &v) {
                    Ok(got) => check(&format!("{path:?} on {}", device.name()), &got, &want),
                    Err(e) if cannot_run(&device, path, &e) => {}
                    Err(e) => panic!("{path:?} on {}: {e}", device.name()),
                }
            }
        }
    }

    /// The choice: lavapipe has no tiles, the CPU executor runs them.
    #[test]
    fn path_follows_the_device() {
        assert_eq!(Path::for_device(&Device::cpu()), Path::Tiles);
        let gpu = Device::gpu().expect("a GPU (lavapipe in CI)");
        let tiles = gpu.features().contains(onekernel::abi::Features::COOPERATIVE_MATRIX);
        assert_eq!(Path::for_device(&gpu) == Path::Tiles, tiles && !gpu.cooperative_matrix_properties().is_empty());
    }
}
