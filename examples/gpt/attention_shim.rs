//! The attention the model calls, with the signature of
//! `onekernel::ops::attention` (being written in parallel): the same
//! `AttentionShape` and `attention` function, with a simple correct kernel
//! of its own, so that switching to the library's fused kernel is one `use`
//! in `examples/gpt.rs`.
//!
//! The kernel: one block of 256 threads per (batch, head, query). It walks
//! the keys 256 at a time: each thread scores one key (`q·k · scale`, in
//! `f32`), the block takes the chunk's maximum and sum of exponentials
//! (online softmax: the running output is rescaled when the maximum
//! grows), and for `P·V` thread `t` owns output column `t % head_dim` over
//! the keys `t / head_dim`, `t / head_dim + 256 / head_dim`, ... of the
//! chunk. Parallel over the keys, so a single decode query (`seq_q = 1`)
//! still keeps 256 threads a head busy.

use onekernel::half::f16;
use onekernel::ops::OpError;
use onekernel::prelude::*;

/// The sizes of one attention call (as `onekernel::ops::attention`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionShape {
    pub batch: u32,
    pub heads: u32,
    pub seq_q: u32,
    pub seq_kv: u32,
    pub kv_capacity: u32,
    pub head_dim: u32,
    pub causal: bool,
    pub scale: f32,
}

#[kernel(workgroup_size = 256)]
#[allow(clippy::too_many_arguments)]
fn attention_rows(
    q: &[f16],
    k: &[f16],
    v: &[f16],
    out: &mut [f16],
    seq_q: u32,
    seq_kv: u32,
    capacity: u32,
    dim: u32,
    causal: u32,
    scale: f32,
) {
    let red = shared::<[f32; 256]>();
    let p = shared::<[f32; 256]>();
    let qs = shared::<[f32; 256]>();
    let t = thread_id().x;
    let (seq_q, seq_kv, cap, dim) = (seq_q as usize, seq_kv as usize, capacity as usize, dim as usize);
    let (i, h, b) = (block_id().x, block_id().y, block_id().z);
    let heads = grid_dim().y;
    let bh = b * heads + h;
    let q_row = (bh * seq_q + i) * dim;
    let kv_base = bh * cap * dim;
    // Keys 0..limit are seen (causal: up to the query's absolute position).
    let mut limit = seq_kv;
    if causal != 0 {
        limit = seq_kv - seq_q + i + 1;
    }
    if t < dim {
        qs[t] = q[q_row + t].to_f32();
    }
    workgroup_barrier();
    let d = t % dim;
    let lanes = 256 / dim;
    let sub = t / dim;
    let mut m = f32::NEG_INFINITY;
    let mut l = 0.0f32;
    let mut acc = 0.0f32;
    let mut c0 = 0;
    while c0 < limit {
        let j = c0 + t;
        let mut s = f32::NEG_INFINITY;
        if j < limit {
            let mut dot = 0.0f32;
            let row = kv_base + j * dim;
            if dim == 64 {
                // GPT-2's heads: a constant trip count, unrolled, so the
                // 64 loads of the key's row are issued together.
                #[unroll]
                for c in 0..64 {
                    dot += qs[c] * k[row + c].to_f32();
                }
            } else {
                for c in 0..dim {
                    dot += qs[c] * k[row + c].to_f32();
                }
            }
            s = dot * scale;
        }
        red[t] = s;
        workgroup_barrier();
        let mut step = 128;
        while step > 0 {
            if t < step {
                red[t] = red[t].max(red[t + step]);
            }
            workgroup_barrier();
            step /= 2;
        }
        let m_new = m.max(red[0]);
        let alpha = (m - m_new).exp();
        workgroup_barrier();
        let e = (s - m_new).exp();
        p[t] = e;
        red[t] = e;
        workgroup_barrier();
        let mut step = 128;
        while step > 0 {
            if t < step {
                red[t] += red[t + step];
            }
            workgroup_barrier();
            step /= 2;
        }
        l = l * alpha + red[0];
        acc *= alpha;
        let mut jj = sub;
        while jj < 256 && c0 + jj < limit {
            acc += p[jj] * v[kv_base + (c0 + jj) * dim + d].to_f32();
            jj += lanes;
        }
        m = m_new;
        c0 += 256;
        workgroup_barrier();
    }
    red[t] = acc;
    workgroup_barrier();
    if t < dim {
        let mut total = 0.0f32;
        for s in 0..lanes {
            total += red[s * dim + t];
        }
        out[q_row + t] = f16::from_f32(total / l);
    }
}

/// `out = softmax(q·kᵀ · scale [+ causal mask]) · v` per (batch, head):
/// `q` and `out` are `[batch, heads, seq_q, head_dim]`, `k` and `v`
/// `[batch, heads, kv_capacity, head_dim]` of which the first `seq_kv`
/// rows are used; with `causal`, query `i` sees the keys up to its absolute
/// position `seq_kv − seq_q + i`.
///
/// # Errors
/// `LaunchError::InvalidArgument` (in `OpError::Launch`) naming
/// `gpt::attention` for a head dimension that is not a power of two up to
/// 256, `seq_q > seq_kv`, `seq_kv > kv_capacity`, or a buffer of the wrong
/// length; a launch's error.
pub fn attention(
    device: &Device,
    q: &Buffer<f16>,
    k: &Buffer<f16>,
    v: &Buffer<f16>,
    out: &mut Buffer<f16>,
    shape: &AttentionShape,
) -> Result<(), OpError> {
    let s = *shape;
    let bad = |arg: &'static str, problem: String| {
        OpError::Launch(LaunchError::InvalidArgument { kernel: "gpt::attention", arg, problem })
    };
    if !s.head_dim.is_power_of_two() || s.head_dim > 256 {
        return Err(bad("shape", format!("head_dim {} is not a power of two up to 256", s.head_dim)));
    }
    if s.seq_q > s.seq_kv || s.seq_kv > s.kv_capacity {
        return Err(bad("shape", format!("needs seq_q ≤ seq_kv ≤ kv_capacity: {s:?}")));
    }
    let (b, h, d) = (s.batch as usize, s.heads as usize, s.head_dim as usize);
    let q_len = b * h * s.seq_q as usize * d;
    let kv_len = b * h * s.kv_capacity as usize * d;
    for (arg, len, want) in
        [("q", q.len(), q_len), ("k", k.len(), kv_len), ("v", v.len(), kv_len), ("out", out.len(), q_len)]
    {
        if len != want {
            return Err(bad(arg, format!("has {len} elements, not {want} for {s:?}")));
        }
    }
    if q_len == 0 {
        return Ok(());
    }
    attention_rows::launch(
        device,
        Grid::blocks([s.seq_q as usize, h, b]),
        q,
        k,
        v,
        out,
        s.seq_q,
        s.seq_kv,
        s.kv_capacity,
        s.head_dim,
        u32::from(s.causal),
        s.scale,
    )?;
    Ok(())
}
