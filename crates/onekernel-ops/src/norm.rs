//! Row normalisations: softmax, log-softmax, layer norm and RMS norm over
//! the rows of a row-major `rows × cols` matrix of `f32` or `f16`
//! ([`RowElement`]); every sum, `exp` and square root in `f32`, an `f16`
//! result rounded once.
//!
//! # How it works
//!
//! Three kernels per element type do all four ([`RowOp`] is a launch
//! argument). A block of 256 threads takes `256 / tpr` rows, `tpr` threads
//! (32 to 256, a power of two at least the subgroup size) per row, so that
//! a narrow row does not leave most of a block idle. Each thread holds 4
//! (`rows_*_narrow`, rows up to 128) or 16 (`rows_f32`, `rows_f16`) of its
//! row's numbers in registers (`v`, an `#[unroll]`ed array the compiler
//! splits into scalars), all loaded before any arithmetic and none under
//! a branch (a column past the row's end reads the row's last number and
//! is masked out of the sums), so that every load of a thread is in
//! flight at once; a row wider than `16 * tpr` (4096) reads the rest again
//! from memory for each step. Rows wider than 4096 take the `_wide`
//! kernels instead where the device allows blocks of 1024 threads: one
//! block a row, 32 numbers a thread held (rows up to 32768 read once).
//!
//! The statistics are reduced with `subgroup_max` / `subgroup_add`, then
//! across the row's subgroups through shared memory (one barrier).
//!
//! On a GPU, rows whose width is a multiple of 4 take the vector kernel
//! instead ([`rows_vec4`] for `f32`, [`rows_f16vec4`] for `f16`): the same
//! steps over the buffers seen as `Vec4` / `F16Vec4` (one 16- or 8-byte
//! load for four numbers; the views are borrowed with
//! `Buffer::view_as`, so a loop of calls allocates nothing and reuses its
//! bind groups). Its block size `WG`, vectors a thread `PER` and threads a
//! row `TPR` are const parameters: [`vector_configs`] gives a few of
//! [`VEC_CONFIGS`] per width, best first on the H200, and the tuner
//! ([`crate::tuning`]) times them on the device at hand the first time it
//! sees an (op, type, size) and keeps the fastest (the first where tuning
//! is off). On the H200: narrow rows take a fraction of
//! a subgroup each (`TPR` 8: four rows a subgroup, 32 a block), a row
//! that one subgroup covers (`solo`) is reduced with subgroup shuffles
//! alone (a butterfly over its `TPR` lanes: no shared memory, no
//! barrier), wider rows take more threads and a reduction through shared
//! memory, the widest 512 threads a row holding 4096 vectors (a row of
//! 32768 reads its second half again for each step, from L2 on the H200:
//! faster there than a block of 1024 holding it all, which leaves one
//! block a multiprocessor). The H200 numbers and the sweep that chose the
//! configs are in `docs/performance.md`.
//!
//! Where the row is held whole, softmax and log-softmax reduce once (the
//! online softmax): each thread sums `exp(x - m)` over its numbers with
//! `m` its own maximum, and the `(m, sum)` pairs are merged, each sum
//! rescaled by `exp(m - M)` to the larger maximum `M` (one butterfly, or
//! one pass through shared memory, where two passes took two). RMS norm
//! has one statistic and reduces once. `f16` rows may instead take
//! [`rows_f16vec4_held`], which holds the numbers as read (`F16Vec4`s:
//! half the registers of widened ones) and computes each result from
//! them again; [`vector_configs`] says which kernel a width takes
//! (`HELD`, the configuration's fourth number).
//!
//! Rows of at most 1024 numbers whose lanes fit one subgroup take the
//! stream kernel first ([`rows_vec4_stream`], [`rows_f16vec4_stream`];
//! HELD [`STREAM`] in [`vector_configs`]): the row held whole by `TPR`
//! neighbouring lanes, each statistic a shuffle butterfly, no shared
//! memory, no barrier, no re-read loop, and the op a const parameter, so
//! that each module holds one op's code alone (5-16% faster than the
//! kernel above at rows of 128 and 1000 on the H200).
//!
//! On the CPU executor the same arithmetic runs as plain Rust over rows
//! with rayon (faster there than the cooperative kernel);
//! [`row_op_into`]'s `kernels_on_cpu` runs the kernel instead (the tests
//! do; with a configuration given to `row_op_with`, the vector kernels on
//! copies of the buffers as vectors).

use crate::prelude::*;
use crate::tuning::Purpose;
use crate::OpError;
use onekernel_runtime::Element;
use rayon::prelude::*;

/// One of the row operations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowOp {
    /// `y = exp(x - max) / Σ exp(x - max)`.
    Softmax,
    /// `y = x - max - ln Σ exp(x - max)`.
    LogSoftmax,
    /// `y = (x - mean) / sqrt(var + eps) * gamma + beta` (the variance
    /// divided by `cols`; `gamma` 1 and `beta` 0 where not given).
    LayerNorm {
        /// Added to the variance.
        eps: f32,
    },
    /// `y = x / sqrt(mean(x²) + eps) * gamma`.
    RmsNorm {
        /// Added to the mean square.
        eps: f32,
    },
}

impl RowOp {
    /// The op's name (the tuning key's `op`).
    fn name(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::LogSoftmax => "log_softmax",
            RowOp::LayerNorm { .. } => "layer_norm",
            RowOp::RmsNorm { .. } => "rms_norm",
        }
    }

    fn code(self) -> (u32, f32) {
        match self {
            RowOp::Softmax => (0, 0.0),
            RowOp::LogSoftmax => (1, 0.0),
            RowOp::LayerNorm { eps } => (2, eps),
            RowOp::RmsNorm { eps } => (3, eps),
        }
    }
}

macro_rules! row_kernel {
    ($(#[$doc:meta])* $name:ident, $T:ty, $wg:literal, $per:literal, |$w:ident| $widen:expr, |$n:ident| $narrow:expr) => {
        $(#[$doc])*
        #[kernel(workgroup_size = $wg, max_workgroup_invocations = $wg)]
        pub fn $name(
            x: &[$T],
            gamma: &[$T],
            beta: &[$T],
            y: &mut [$T],
            rows: u32,
            cols: u32,
            tpr: u32,
            op: u32,
            affine: u32,
            eps: f32,
        ) {
            let partial = shared::<[f32; $wg]>();
            let t = thread_id().x;
            let tpr = tpr as usize;
            let cols = cols as usize;
            let lt = t % tpr;
            let group = t / tpr;
            let row = block_id().x * ($wg / tpr) + group;
            let live = row < rows as usize;
            // A thread past the last row reads the last row (and writes
            // nothing): every load below is in bounds without a branch.
            let base = row.min(rows as usize - 1) * cols;
            let last = cols - 1;
            let sg = subgroup_size() as usize;
            let first_lane = subgroup_invocation_id() == 0;
            let per_row = tpr / sg;
            let first_sub = group * per_row;
            let held = $per * tpr;

            // All of the thread's loads first, none under a branch (a
            // column past the row's end reads its last number, masked
            // below), so that they are all in flight at once.
            let mut v = [0.0f32; $per];
            #[unroll]
            for k in 0..$per {
                let $w = x[base + (k * tpr + lt).min(last)];
                v[k] = $widen;
            }

            // Step 1: the maximum (softmax), the sum (layer norm) or the
            // sum of squares (RMS norm).
            let mut a = 0.0f32;
            if op < 2 {
                a = f32::NEG_INFINITY;
                #[unroll]
                for k in 0..$per {
                    a = a.max(v[k]);
                }
            } else if op == 2 {
                #[unroll]
                for k in 0..$per {
                    if k * tpr + lt < cols {
                        a += v[k];
                    }
                }
            } else {
                #[unroll]
                for k in 0..$per {
                    if k * tpr + lt < cols {
                        a = v[k].mul_add(v[k], a);
                    }
                }
            }
            let mut j = held + lt;
            while j < cols {
                let $w = x[base + j];
                let e = $widen;
                a = if op < 2 {
                    a.max(e)
                } else if op == 2 {
                    a + e
                } else {
                    e.mul_add(e, a)
                };
                j += tpr;
            }
            let smax = subgroup_max(a);
            let ssum = subgroup_add(a);
            if first_lane {
                partial[t / sg] = if op < 2 { smax } else { ssum };
            }
            workgroup_barrier();
            let mut s1 = if op < 2 { f32::NEG_INFINITY } else { 0.0f32 };
            for s in 0..per_row {
                let p = partial[first_sub + s];
                s1 = if op < 2 { s1.max(p) } else { s1 + p };
            }
            let mean = s1 / cols as f32;
            workgroup_barrier();

            // Step 2: the sum of exp(x - max) (softmax) or of (x - mean)²
            // (layer norm).
            let mut b = 0.0f32;
            if op < 2 {
                #[unroll]
                for k in 0..$per {
                    let e = (v[k] - s1).exp();
                    if op == 0 {
                        v[k] = e;
                    }
                    if k * tpr + lt < cols {
                        b += e;
                    }
                }
            } else if op == 2 {
                #[unroll]
                for k in 0..$per {
                    let d = v[k] - mean;
                    v[k] = d;
                    if k * tpr + lt < cols {
                        b = d.mul_add(d, b);
                    }
                }
            }
            if op != 3 {
                let mut j = held + lt;
                while j < cols {
                    let $w = x[base + j];
                    let e = $widen;
                    if op < 2 {
                        b += (e - s1).exp();
                    } else {
                        let d = e - mean;
                        b = d.mul_add(d, b);
                    }
                    j += tpr;
                }
            }
            let bsum = subgroup_add(b);
            if first_lane {
                partial[t / sg] = bsum;
            }
            workgroup_barrier();
            let mut s2 = 0.0f32;
            for s in 0..per_row {
                s2 += partial[first_sub + s];
            }

            // Step 3: the results. `v` now holds exp(x - max) (softmax),
            // x (log-softmax, RMS norm) or x - mean (layer norm).
            let scale = if op == 0 {
                1.0 / s2
            } else if op == 1 {
                s1 + s2.ln()
            } else if op == 2 {
                1.0 / (s2 / cols as f32 + eps).sqrt()
            } else {
                1.0 / (mean + eps).sqrt()
            };
            if op == 1 {
                #[unroll]
                for k in 0..$per {
                    v[k] -= scale;
                }
            } else {
                #[unroll]
                for k in 0..$per {
                    v[k] *= scale;
                }
            }
            #[unroll]
            for k in 0..$per {
                let j = k * tpr + lt;
                if live && j < cols {
                    let mut r = v[k];
                    if affine & 1 != 0 {
                        let $w = gamma[j];
                        r *= $widen;
                    }
                    if affine & 2 != 0 {
                        let $w = beta[j];
                        r += $widen;
                    }
                    let $n = r;
                    y[base + j] = $narrow;
                }
            }
            if live {
                let mut j = held + lt;
                while j < cols {
                    let $w = x[base + j];
                    let e = $widen;
                    let mut r = if op == 0 {
                        (e - s1).exp() * scale
                    } else if op == 1 {
                        e - scale
                    } else if op == 2 {
                        (e - mean) * scale
                    } else {
                        e * scale
                    };
                    if affine & 1 != 0 {
                        let $w = gamma[j];
                        r *= $widen;
                    }
                    if affine & 2 != 0 {
                        let $w = beta[j];
                        r += $widen;
                    }
                    let $n = r;
                    y[base + j] = $narrow;
                    j += tpr;
                }
            }
        }
    };
}

row_kernel!(
    /// The row operations over narrow `f32` rows (see the [module](self)
    /// docs): 256 threads, 4 numbers a thread held (rows up to `4 * tpr`
    /// read once). Launch with `Grid::blocks([rows.div_ceil(256 / tpr)])`.
    rows_f32_narrow, f32, 256, 4, |w| w, |n| n
);
row_kernel!(
    /// [`rows_f32_narrow`] over `f16` rows, in `f32` inside (`SHADER_F16`).
    rows_f16_narrow, f16, 256, 4, |w| w.to_f32(), |n| f16::from_f32(n)
);
row_kernel!(
    /// The row operations over `f32` rows (see the [module](self) docs):
    /// 256 threads, 16 numbers a thread held (rows up to `16 * tpr` read
    /// once). Launch with `Grid::blocks([rows.div_ceil(256 / tpr)])`.
    rows_f32, f32, 256, 16, |w| w, |n| n
);
row_kernel!(
    /// The row operations over `f16` rows, in `f32` inside (`SHADER_F16`).
    rows_f16, f16, 256, 16, |w| w.to_f32(), |n| f16::from_f32(n)
);
row_kernel!(
    /// [`rows_f32`] for wide rows: one block of 1024 threads a row
    /// (`tpr` = 1024), 32 numbers a thread held (rows up to 32768 read
    /// once). Launch with `Grid::blocks([rows])`.
    rows_f32_wide, f32, 1024, 32, |w| w, |n| n
);
row_kernel!(
    /// [`rows_f16`] for wide rows (see [`rows_f32_wide`]).
    rows_f16_wide, f16, 1024, 32, |w| w.to_f32(), |n| f16::from_f32(n)
);

macro_rules! row_kernel4 {
    ($(#[$doc:meta])* $name:ident, $V:ty, |$w:ident| $widen:expr, |$n:ident| $narrow:expr,
     held $H:ty = $hzero:expr, |$p:ident| $hold:expr, |$u:ident| $unhold:expr, |$st:ident| $store:expr, keep $keep:literal) => {
        $(#[$doc])*
        #[kernel(workgroup_size = WG, max_workgroup_invocations = 1024)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<const WG: usize, const PER: usize, const TPR: usize>(
            x: &[$V],
            gamma: &[$V],
            beta: &[$V],
            y: &mut [$V],
            rows: u32,
            cols: u32,
            op: u32,
            affine: u32,
            eps: f32,
            solo: u32,
        ) {
            let partial = shared::<[f32; WG]>();
            let partial2 = shared::<[f32; WG]>();
            let t = thread_id().x;
            // Bit 2 of `op`: softmax in two passes even where the row is
            // held (the benchmark's comparison).
            let two_pass = op >= 4;
            let op = op & 3;
            // Vectors a row (`cols` is a multiple of 4).
            let vecs = cols as usize / 4;
            let lt = t % TPR;
            let group = t / TPR;
            let row = block_id().x * (WG / TPR) + group;
            let live = row < rows as usize;
            let base = row.min(rows as usize - 1) * vecs;
            let last = vecs - 1;
            let sg = subgroup_size() as usize;
            let first_lane = subgroup_invocation_id() == 0;
            let per_row = TPR / sg;
            let first_sub = group * per_row;
            let held = PER * TPR;

            // All loads first, unbranched (clamped, masked below).
            let mut v = [$hzero; PER];
            #[unroll]
            for k in 0..PER {
                let $p = x[base + (k * TPR + lt).min(last)];
                v[k] = $hold;
            }

            // Step 1: the maximum, the sum or the sum of squares.
            let mut a = 0.0f32;
            if op < 2 {
                a = f32::NEG_INFINITY;
                #[unroll]
                for k in 0..PER {
                    let e = { let $u = v[k]; $unhold };
                    a = a.max(e.x.max(e.y).max(e.z.max(e.w)));
                }
            } else if op == 2 {
                #[unroll]
                for k in 0..PER {
                    if k * TPR + lt < vecs {
                        let e = { let $u = v[k]; $unhold };
                        a += (e.x + e.y) + (e.z + e.w);
                    }
                }
            } else {
                #[unroll]
                for k in 0..PER {
                    if k * TPR + lt < vecs {
                        let e = { let $u = v[k]; $unhold };
                        a += e.dot(e);
                    }
                }
            }
            let mut j = held + lt;
            while j < vecs {
                let $w = x[base + j];
                let e = $widen;
                a = if op < 2 {
                    a.max(e.x.max(e.y).max(e.z.max(e.w)))
                } else if op == 2 {
                    a + (e.x + e.y) + (e.z + e.w)
                } else {
                    a + e.dot(e)
                };
                j += TPR;
            }
            // Softmax of a held row in one reduction (the online softmax):
            // each thread's sum of exp(x - its max), the (max, sum) pairs
            // then merged, each sum rescaled to the larger max.
            let online = op < 2 && vecs <= held && !two_pass;
            // exp(x - a) with a = -inf (every number -inf) taken as exp(x).
            let lbase = if a == f32::NEG_INFINITY { 0.0f32 } else { a };
            let mut ls = 0.0f32;
            if online {
                #[unroll]
                for k in 0..PER {
                    let h = { let $u = v[k]; $unhold } - Vec4::splat(lbase);
                    let e = Vec4::new(h.x.exp(), h.y.exp(), h.z.exp(), h.w.exp());
                    if $keep && op == 0 {
                        v[k] = { let $st = e; $store };
                    }
                    if k * TPR + lt < vecs {
                        ls += (e.x + e.y) + (e.z + e.w);
                    }
                }
            }
            let mut s1 = a;
            if solo != 0 {
                // The row is `TPR` neighbouring lanes of one subgroup: a
                // butterfly over them (every lane ends with the result).
                let mut m = 1usize;
                while m < TPR {
                    let o = subgroup_shuffle_xor(s1, m as u32);
                    if online {
                        let os = subgroup_shuffle_xor(ls, m as u32);
                        let mx = s1.max(o);
                        let f = if s1 == mx { 1.0f32 } else { (s1 - mx).exp() };
                        let g = if o == mx { 1.0f32 } else { (o - mx).exp() };
                        ls = ls * f + os * g;
                    }
                    s1 = if op < 2 { s1.max(o) } else { s1 + o };
                    m *= 2;
                }
            } else {
                // Over the row's subgroups, through shared memory.
                s1 = if op < 2 { subgroup_max(a) } else { subgroup_add(a) };
                if online {
                    let f = if a == s1 { 1.0f32 } else { (a - s1).exp() };
                    let sum = subgroup_add(ls * f);
                    if first_lane {
                        partial2[t / sg] = sum;
                    }
                }
                if first_lane {
                    partial[t / sg] = s1;
                }
                workgroup_barrier();
                s1 = if op < 2 { f32::NEG_INFINITY } else { 0.0f32 };
                for s in 0..per_row {
                    let p = partial[first_sub + s];
                    s1 = if op < 2 { s1.max(p) } else { s1 + p };
                }
                if online {
                    ls = 0.0f32;
                    for s in 0..per_row {
                        let p = partial[first_sub + s];
                        let f = if p == s1 { 1.0f32 } else { (p - s1).exp() };
                        ls += partial2[first_sub + s] * f;
                    }
                }
                workgroup_barrier();
            }
            let mean = s1 / cols as f32;

            // Step 2: the sum of exp(x - max) or of (x - mean)².
            let mut b = 0.0f32;
            if online {
                // Summed above.
            } else if op < 2 {
                #[unroll]
                for k in 0..PER {
                    let h = { let $u = v[k]; $unhold };
                    let e = Vec4::new((h.x - s1).exp(), (h.y - s1).exp(), (h.z - s1).exp(), (h.w - s1).exp());
                    if $keep && op == 0 {
                        v[k] = { let $st = e; $store };
                    }
                    if k * TPR + lt < vecs {
                        b += (e.x + e.y) + (e.z + e.w);
                    }
                }
            } else if op == 2 {
                #[unroll]
                for k in 0..PER {
                    let d = { let $u = v[k]; $unhold } - Vec4::splat(mean);
                    if $keep {
                        v[k] = { let $st = d; $store };
                    }
                    if k * TPR + lt < vecs {
                        b += d.dot(d);
                    }
                }
            }
            if op != 3 && !online {
                let mut j = held + lt;
                while j < vecs {
                    let $w = x[base + j];
                    let e = $widen;
                    if op < 2 {
                        b += ((e.x - s1).exp() + (e.y - s1).exp()) + ((e.z - s1).exp() + (e.w - s1).exp());
                    } else {
                        let d = e - Vec4::splat(mean);
                        b += d.dot(d);
                    }
                    j += TPR;
                }
            }
            let mut s2 = b;
            if online {
                s2 = ls;
            } else if op == 3 {
                // RMS norm has one statistic: no second reduction.
            } else if solo != 0 {
                let mut m = 1usize;
                while m < TPR {
                    s2 += subgroup_shuffle_xor(s2, m as u32);
                    m *= 2;
                }
            } else {
                s2 = subgroup_add(b);
                if first_lane {
                    partial[t / sg] = s2;
                }
                workgroup_barrier();
                s2 = 0.0f32;
                for s in 0..per_row {
                    s2 += partial[first_sub + s];
                }
            }

            // Step 3: the results (`v` holds exp(x - max), x, or x - mean).
            let scale = if op == 0 {
                // Held exps of the online softmax are of x - the thread's max.
                let f = if !(online && $keep) || a == s1 { 1.0f32 } else { (a - s1).exp() };
                f / s2
            } else if op == 1 {
                s1 + s2.ln()
            } else if op == 2 {
                1.0 / (s2 / cols as f32 + eps).sqrt()
            } else {
                1.0 / (mean + eps).sqrt()
            };
            if $keep {
                if op == 1 {
                    #[unroll]
                    for k in 0..PER {
                        v[k] = { let $st = { let $u = v[k]; $unhold } - Vec4::splat(scale); $store };
                    }
                } else {
                    #[unroll]
                    for k in 0..PER {
                        v[k] = { let $st = { let $u = v[k]; $unhold } * scale; $store };
                    }
                }
            }
            // Held as read (`keep` false): each result from `x` again.
            let shift = if op == 2 { mean } else { 0.0f32 };
            #[unroll]
            for k in 0..PER {
                let j = k * TPR + lt;
                if live && j < vecs {
                    let h = { let $u = v[k]; $unhold };
                    let mut r = if $keep {
                        h
                    } else if op == 0 {
                        let d = h - Vec4::splat(s1);
                        Vec4::new(d.x.exp(), d.y.exp(), d.z.exp(), d.w.exp()) * scale
                    } else if op == 1 {
                        h - Vec4::splat(scale)
                    } else {
                        (h - Vec4::splat(shift)) * scale
                    };
                    if affine & 1 != 0 {
                        let $w = gamma[j];
                        r *= $widen;
                    }
                    if affine & 2 != 0 {
                        let $w = beta[j];
                        r += $widen;
                    }
                    let $n = r;
                    y[base + j] = $narrow;
                }
            }
            if live {
                let mut j = held + lt;
                while j < vecs {
                    let $w = x[base + j];
                    let e = $widen;
                    let mut r = if op == 0 {
                        Vec4::new((e.x - s1).exp(), (e.y - s1).exp(), (e.z - s1).exp(), (e.w - s1).exp()) * scale
                    } else if op == 1 {
                        e - Vec4::splat(scale)
                    } else if op == 2 {
                        (e - Vec4::splat(mean)) * scale
                    } else {
                        e * scale
                    };
                    if affine & 1 != 0 {
                        let $w = gamma[j];
                        r *= $widen;
                    }
                    if affine & 2 != 0 {
                        let $w = beta[j];
                        r += $widen;
                    }
                    let $n = r;
                    y[base + j] = $narrow;
                    j += TPR;
                }
            }
        }
    };
}

row_kernel4!(
    /// The row operations over `f32` rows whose width is a multiple of 4,
    /// read and written as `Vec4`s (the buffers seen as `Vec4`s): blocks
    /// of `WG` threads, `TPR` threads a row (`WG / TPR` rows a block),
    /// `PER` vectors a thread held (rows up to `4 * PER * TPR` read once,
    /// the rest read again for each step). `solo` 1 when a row is `TPR`
    /// neighbouring lanes of one subgroup (`TPR` at most the subgroup
    /// size): reduced with subgroup shuffles alone, no shared memory, no
    /// barrier; else `TPR` is a multiple of the subgroup size. `op`: 0
    /// softmax, 1 log-softmax, 2 layer norm, 3 RMS norm; `affine` bit 0:
    /// scale by `gamma`, bit 1: shift by `beta`. Launch with
    /// `Grid::blocks([rows.div_ceil(WG / TPR)])`; [`VEC_CONFIGS`] lists
    /// the `(WG, PER, TPR)` the ops launch.
    rows_vec4, Vec4, |w| w, |n| n,
    held Vec4 = Vec4::ZERO, |p| p, |u| u, |s| s, keep true
);
row_kernel4!(
    /// [`rows_vec4`] over `f16` rows as `F16Vec4`s, in `f32` inside (the
    /// held numbers widened to `f32`).
    rows_f16vec4, F16Vec4, |w| w.to_vec4(), |n| F16Vec4::from_vec4(n),
    held Vec4 = Vec4::ZERO, |p| p.to_vec4(), |u| u, |s| s, keep true
);
row_kernel4!(
    /// [`rows_f16vec4`] holding the row as read (`F16Vec4`s: half the
    /// registers of the widened ones), each result computed from it again
    /// (softmax takes each `exp` twice): `f16` rows held in registers at
    /// two or more blocks a multiprocessor.
    rows_f16vec4_held, F16Vec4, |w| w.to_vec4(), |n| F16Vec4::from_vec4(n),
    held F16Vec4 = F16Vec4::ZERO, |p| p, |u| u.to_vec4(), |s| F16Vec4::from_vec4(s), keep false
);

macro_rules! row_kernel_stream {
    ($(#[$doc:meta])* $name:ident, $V:ty, |$w:ident| $widen:expr, |$n:ident| $narrow:expr) => {
        $(#[$doc])*
        #[kernel(workgroup_size = WG, max_workgroup_invocations = 1024)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<const WG: usize, const PER: usize, const TPR: usize, const OP: usize>(
            x: &[$V],
            gamma: &[$V],
            beta: &[$V],
            y: &mut [$V],
            rows: u32,
            cols: u32,
            affine: u32,
            eps: f32,
            steps: u32,
        ) {
            // The op, fixed in the module (0 softmax, 1 log-softmax, 2 layer
            // norm, 3 RMS norm): a module per op, holding that op's code
            // alone (1.07-1.09x faster at narrow rows than reading it at
            // launch, H200).
            let op = OP as u32;
            let t = thread_id().x;
            let vecs = cols as usize / 4;
            let last = vecs - 1;
            let rows = rows as usize;
            let lt = t % TPR;
            // This thread's row at each step: the grid's rows apart.
            let stride = grid_dim().x * (WG / TPR);
            let mut row = block_id().x * (WG / TPR) + t / TPR;
            let mut base = row.min(rows - 1) * vecs;
            // The first row's loads (clamped: a thread past the last row
            // reads the last row, a lane past the row's end its last vector,
            // masked below), all in flight at once.
            let mut v = [Vec4::ZERO; PER];
            #[unroll]
            for k in 0..PER {
                let $w = x[base + (k * TPR + lt).min(last)];
                v[k] = $widen;
            }
            let mut s = 0u32;
            while s < steps {
                // The next row's loads before this row's reductions and
                // stores: they are in flight while this row is finished.
                let next = row + stride;
                let nbase = next.min(rows - 1) * vecs;
                let mut nv = [Vec4::ZERO; PER];
                if s + 1 < steps {
                    #[unroll]
                    for k in 0..PER {
                        let $w = x[nbase + (k * TPR + lt).min(last)];
                        nv[k] = $widen;
                    }
                }
                // Step 1: the maximum, the sum or the sum of squares, over
                // the row's `TPR` lanes with shuffles (a butterfly).
                let mut a = if op < 2 { f32::NEG_INFINITY } else { 0.0f32 };
                #[unroll]
                for k in 0..PER {
                    let e = v[k];
                    if op < 2 {
                        a = a.max(e.x.max(e.y).max(e.z.max(e.w)));
                    } else if k * TPR + lt < vecs {
                        a += if op == 2 { (e.x + e.y) + (e.z + e.w) } else { e.dot(e) };
                    }
                }
                #[unroll]
                for i in 0..5 {
                    let m = 1u32 << i;
                    if (m as usize) < TPR {
                        let o = subgroup_shuffle_xor(a, m);
                        a = if op < 2 { a.max(o) } else { a + o };
                    }
                }
                // Step 2: the sum of exp(x - max) or of (x - mean)²; `v`
                // becomes exp(x - max) (softmax) or x - mean (layer norm).
                let mean = a / cols as f32;
                let mut b = 0.0f32;
                if op < 3 {
                    #[unroll]
                    for k in 0..PER {
                        let h = v[k];
                        let e = if op < 2 {
                            let d = h - Vec4::splat(a);
                            Vec4::new(d.x.exp(), d.y.exp(), d.z.exp(), d.w.exp())
                        } else {
                            h - Vec4::splat(mean)
                        };
                        if op != 1 {
                            v[k] = e;
                        }
                        if k * TPR + lt < vecs {
                            b += if op < 2 { (e.x + e.y) + (e.z + e.w) } else { e.dot(e) };
                        }
                    }
                    #[unroll]
                    for i in 0..5 {
                        let m = 1u32 << i;
                        if (m as usize) < TPR {
                            b += subgroup_shuffle_xor(b, m);
                        }
                    }
                }
                // Step 3: the results.
                let scale = if op == 0 {
                    1.0 / b
                } else if op == 1 {
                    a + b.ln()
                } else if op == 2 {
                    1.0 / (b / cols as f32 + eps).sqrt()
                } else {
                    1.0 / (mean + eps).sqrt()
                };
                if row < rows {
                    #[unroll]
                    for k in 0..PER {
                        let j = k * TPR + lt;
                        if j < vecs {
                            let mut r = if op == 1 { v[k] - Vec4::splat(scale) } else { v[k] * scale };
                            if affine & 1 != 0 {
                                let $w = gamma[j];
                                r *= $widen;
                            }
                            if affine & 2 != 0 {
                                let $w = beta[j];
                                r += $widen;
                            }
                            let $n = r;
                            y[base + j] = $narrow;
                        }
                    }
                }
                #[unroll]
                for k in 0..PER {
                    v[k] = nv[k];
                }
                row = next;
                base = nbase;
                s += 1;
            }
        }
    };
}

row_kernel_stream!(
    /// The row operations over `f32` rows (a multiple of 4 wide, as
    /// `Vec4`s) that one subgroup's `TPR` neighbouring lanes hold whole
    /// (`cols / 4 <= PER * TPR`, `TPR` at most the subgroup size): each
    /// row reduced with shuffles alone, and each group of `TPR` lanes
    /// takes `steps` rows, the grid's rows apart, loading the next row
    /// before it reduces and stores this one (loads in flight while the
    /// stores are). `OP` is the op (0 softmax, 1 log-softmax, 2 layer
    /// norm, 3 RMS norm), fixed in the module.
    /// Launch with `Grid::blocks([rows.div_ceil(WG / TPR * steps)])`;
    /// [`STREAM_CONFIGS`] lists the `(WG, PER, TPR)` the ops launch.
    rows_vec4_stream, Vec4, |w| w, |n| n
);
row_kernel_stream!(
    /// [`rows_vec4_stream`] over `f16` rows as `F16Vec4`s, in `f32` inside.
    rows_f16vec4_stream, F16Vec4, |w| w.to_vec4(), |n| F16Vec4::from_vec4(n)
);

/// The `(WG, PER, TPR)` of [`rows_vec4_stream`] and [`rows_f16vec4_stream`]
/// the ops launch (see [`vector_configs`]).
pub const STREAM_CONFIGS: [[usize; 3]; 4] = [[256, 1, 32], [256, 4, 8], [256, 8, 32], [128, 8, 32]];

/// One launch of the stream kernel `$k` at `config` with `OP` the op (0
/// to 3; each tuple written out: const generic arguments are part of the
/// source).
macro_rules! launch_stream {
    ($k:ident, $config:expr, $op:expr, $device:expr, $grid:expr, $args:tt) => {
        launch_stream!(@ $k, $config, $op, $device, $grid, $args,
            [256, 1, 32], [256, 4, 8], [256, 8, 32], [128, 8, 32])
    };
    (@ $k:ident, $config:expr, $op:expr, $device:expr, $grid:expr, $args:tt, $([$wg:literal, $per:literal, $tpr:literal]),*) => {
        match ($config, $op) {
            $(
                ([$wg, $per, $tpr], 0) => launch_stream!(@call $k, $wg, $per, $tpr, 0, $device, $grid, $args),
                ([$wg, $per, $tpr], 1) => launch_stream!(@call $k, $wg, $per, $tpr, 1, $device, $grid, $args),
                ([$wg, $per, $tpr], 2) => launch_stream!(@call $k, $wg, $per, $tpr, 2, $device, $grid, $args),
                ([$wg, $per, $tpr], _) => launch_stream!(@call $k, $wg, $per, $tpr, 3, $device, $grid, $args),
            )*
            (other, _) => Err(arg_error("config", format!("no stream row kernel is written for {other:?}"))),
        }
    };
    (@call $k:ident, $wg:literal, $per:literal, $tpr:literal, $op:literal, $device:expr, $grid:expr, ($($arg:expr),*)) => {
        $k::launch::<$wg, $per, $tpr, $op>($device, $grid, $($arg),*)
    };
}

/// The `(WG, PER, TPR)` of [`rows_vec4`], [`rows_f16vec4`] and
/// [`rows_f16vec4_held`] the ops launch (see [`vector_configs`]).
pub const VEC_CONFIGS: [[usize; 3]; 17] = [
    [256, 4, 8],
    [256, 2, 16],
    [256, 1, 32],
    [256, 8, 32],
    [256, 4, 64],
    [256, 2, 128],
    [256, 8, 128],
    [256, 4, 256],
    [128, 8, 128],
    [1024, 8, 1024],
    [512, 16, 512],
    [512, 8, 512],
    [256, 8, 4],
    [256, 32, 256],
    [256, 2, 256],
    [512, 2, 512],
    [1024, 2, 1024],
];

/// One launch of the vector kernel `$k` at `config` (each tuple written
/// out: const generic arguments are part of the source).
macro_rules! launch_vec {
    ($k:ident, $config:expr, $device:expr, $grid:expr, $args:tt) => {
        launch_vec!(@ $k, $config, $device, $grid, $args,
            [256, 4, 8], [256, 2, 16], [256, 1, 32], [256, 8, 32], [256, 4, 64], [256, 2, 128],
            [256, 8, 128], [256, 4, 256], [128, 8, 128], [1024, 8, 1024], [512, 16, 512], [512, 8, 512],
            [256, 8, 4], [256, 32, 256], [256, 2, 256], [512, 2, 512], [1024, 2, 1024])
    };
    (@ $k:ident, $config:expr, $device:expr, $grid:expr, $args:tt, $([$wg:literal, $per:literal, $tpr:literal]),*) => {
        match $config {
            $([$wg, $per, $tpr] => launch_vec!(@call $k, $wg, $per, $tpr, $device, $grid, $args),)*
            other => Err(arg_error("config", format!("no vector row kernel is written for {other:?}"))),
        }
    };
    (@call $k:ident, $wg:literal, $per:literal, $tpr:literal, $device:expr, $grid:expr, ($($arg:expr),*)) => {
        $k::launch::<$wg, $per, $tpr>($device, $grid, $($arg),*)
    };
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for super::f16 {}
}

/// An element type of the row operations: `f32`, `f16` (sealed).
pub trait RowElement: Element + sealed::Sealed {
    /// Four of them (`Vec4`, `F16Vec4`): rows whose width is a multiple
    /// of 4 are read and written as these on a GPU.
    #[doc(hidden)]
    type Vector: Element;
    /// Launches this type's vector kernel at `config` (`[WG, PER, TPR,
    /// HELD]`: one of [`VEC_CONFIGS`], and 1 for the `f16` kernel that
    /// holds its numbers as read, [`rows_f16vec4_held`]).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_vec(
        device: &Device,
        grid: Grid,
        x: &Buffer<Self::Vector>,
        gamma: &Buffer<Self::Vector>,
        beta: &Buffer<Self::Vector>,
        y: &mut Buffer<Self::Vector>,
        dims: [u32; 5],
        eps: f32,
        config: [usize; 4],
    ) -> Result<(), LaunchError>;
    /// Widened to `f32`.
    fn widen(self) -> f32;
    /// Rounded from `f32`.
    fn narrow(v: f32) -> Self;
    /// Launches this type's kernel.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch(
        device: &Device,
        grid: Grid,
        x: &Buffer<Self>,
        gamma: &Buffer<Self>,
        beta: &Buffer<Self>,
        y: &mut Buffer<Self>,
        dims: [u32; 5],
        eps: f32,
        kernel: Kernel,
    ) -> Result<(), LaunchError>;
}

impl RowElement for f32 {
    type Vector = Vec4;
    fn launch_vec(
        device: &Device,
        grid: Grid,
        x: &Buffer<Vec4>,
        gamma: &Buffer<Vec4>,
        beta: &Buffer<Vec4>,
        y: &mut Buffer<Vec4>,
        [rows, cols, op, affine, solo]: [u32; 5],
        eps: f32,
        [wg, per, tpr, held]: [usize; 4],
    ) -> Result<(), LaunchError> {
        if held & STREAM != 0 {
            let steps = solo;
            return launch_stream!(
                rows_vec4_stream,
                [wg, per, tpr],
                op,
                device,
                grid,
                (x, gamma, beta, y, rows, cols, affine, eps, steps)
            );
        }
        if held & !2 != 0 {
            return Err(arg_error("config", format!("`f32` rows have no kernel holding them as read (HELD {held})")));
        }
        launch_vec!(rows_vec4, [wg, per, tpr], device, grid, (x, gamma, beta, y, rows, cols, op, affine, eps, solo))
    }
    fn widen(self) -> f32 {
        self
    }
    fn narrow(v: f32) -> Self {
        v
    }
    fn launch(
        device: &Device,
        grid: Grid,
        x: &Buffer<f32>,
        gamma: &Buffer<f32>,
        beta: &Buffer<f32>,
        y: &mut Buffer<f32>,
        [rows, cols, tpr, op, affine]: [u32; 5],
        eps: f32,
        kernel: Kernel,
    ) -> Result<(), LaunchError> {
        match kernel {
            Kernel::Narrow => {
                rows_f32_narrow::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps)
            }
            Kernel::Rows => rows_f32::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps),
            Kernel::Wide => rows_f32_wide::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps),
        }
    }
}

impl RowElement for f16 {
    type Vector = F16Vec4;
    fn launch_vec(
        device: &Device,
        grid: Grid,
        x: &Buffer<F16Vec4>,
        gamma: &Buffer<F16Vec4>,
        beta: &Buffer<F16Vec4>,
        y: &mut Buffer<F16Vec4>,
        [rows, cols, op, affine, solo]: [u32; 5],
        eps: f32,
        [wg, per, tpr, held]: [usize; 4],
    ) -> Result<(), LaunchError> {
        let c = [wg, per, tpr];
        if held & STREAM != 0 {
            let steps = solo;
            return launch_stream!(
                rows_f16vec4_stream,
                c,
                op,
                device,
                grid,
                (x, gamma, beta, y, rows, cols, affine, eps, steps)
            );
        }
        match held & !2 {
            0 => launch_vec!(rows_f16vec4, c, device, grid, (x, gamma, beta, y, rows, cols, op, affine, eps, solo)),
            1 => {
                launch_vec!(rows_f16vec4_held, c, device, grid, (x, gamma, beta, y, rows, cols, op, affine, eps, solo))
            }
            _ => Err(arg_error("config", format!("HELD is 0 to 3, not {held}"))),
        }
    }
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn launch(
        device: &Device,
        grid: Grid,
        x: &Buffer<f16>,
        gamma: &Buffer<f16>,
        beta: &Buffer<f16>,
        y: &mut Buffer<f16>,
        [rows, cols, tpr, op, affine]: [u32; 5],
        eps: f32,
        kernel: Kernel,
    ) -> Result<(), LaunchError> {
        match kernel {
            Kernel::Narrow => {
                rows_f16_narrow::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps)
            }
            Kernel::Rows => rows_f16::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps),
            Kernel::Wide => rows_f16_wide::launch(device, grid, x, gamma, beta, y, rows, cols, tpr, op, affine, eps),
        }
    }
}

fn arg_error(arg: &'static str, problem: String) -> LaunchError {
    LaunchError::InvalidArgument { kernel: "ops::norm", arg, problem }
}

/// Which of a type's three row kernels a launch takes.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kernel {
    /// 4 numbers a thread (`rows_*_narrow`).
    Narrow,
    /// 16 numbers a thread (`rows_f32`, `rows_f16`).
    Rows,
    /// A block of 1024 a row, 32 numbers a thread (`rows_*_wide`).
    Wide,
}

/// Threads per row for rows of `cols` held `per` numbers a thread on
/// `device`: at least 32 and the largest subgroup, at most 256.
fn threads_per_row(device: &Device, cols: usize, per: usize) -> usize {
    let min = device.subgroup_sizes().map_or(32, |(_, max)| max as usize).clamp(32, 256);
    cols.div_ceil(per).next_power_of_two().clamp(min, 256)
}

/// `op` over each row of `x` (row-major, `cols` wide) into `y` (the same
/// length); `gamma` and `beta` (`cols` long) scale and shift the
/// results. On the CPU executor, plain Rust over rows with rayon unless
/// `kernels_on_cpu`. No allocation.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::norm::{row_op_into, RowOp};
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 5.0, 5.0, 5.0])?;
/// let mut y = Buffer::<f32>::zeroed(&device, 6)?;
/// row_op_into(&device, RowOp::LayerNorm { eps: 0.0 }, &x, None, None, &mut y, 3, false)?;
/// let y = y.read()?;
/// assert!((y[0] + 1.2247).abs() < 1e-3 && y[1].abs() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::norm` and the argument: `x`
/// not whole rows, `y`, `gamma` or `beta` of another length; a launch's
/// or a buffer's error.
#[allow(clippy::too_many_arguments)]
pub fn row_op_into<T: RowElement>(
    device: &Device,
    op: RowOp,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    beta: Option<&Buffer<T>>,
    y: &mut Buffer<T>,
    cols: usize,
    kernels_on_cpu: bool,
) -> Result<(), OpError> {
    row_op_with(device, op, x, gamma, beta, y, cols, kernels_on_cpu, None)
}

/// [`row_op_into`] with the vector kernel's `[WG, PER, TPR, HELD]` (one of
/// [`VEC_CONFIGS`] and 0, or 1 for [`rows_f16vec4_held`]) chosen by the caller: the benchmark's sweep. `None`:
/// [`vector_configs`]'s choice.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn row_op_with<T: RowElement>(
    device: &Device,
    op: RowOp,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    beta: Option<&Buffer<T>>,
    y: &mut Buffer<T>,
    cols: usize,
    kernels_on_cpu: bool,
    config: Option<[usize; 4]>,
) -> Result<(), OpError> {
    let n = x.len();
    if cols == 0 {
        if n == 0 && y.is_empty() {
            return Ok(());
        }
        return Err(arg_error("cols", "is 0 for a non-empty `x`".into()).into());
    }
    if n % cols != 0 {
        return Err(arg_error("x", format!("has {n} elements, not whole rows of {cols}")).into());
    }
    if y.len() != n {
        return Err(arg_error("y", format!("has {} elements where `x` has {n}", y.len())).into());
    }
    for (arg, b) in [("gamma", gamma), ("beta", beta)] {
        if let Some(b) = b
            && b.len() != cols
        {
            return Err(arg_error(arg, format!("has {} elements for rows of {cols}", b.len())).into());
        }
    }
    if n == 0 {
        return Ok(());
    }
    let rows = n / cols;
    if !device.is_gpu() && !kernels_on_cpu {
        return cpu_rows(op, x, gamma, beta, y, cols);
    }
    let affine = u32::from(gamma.is_some()) | (u32::from(beta.is_some()) << 1);
    let (code, eps) = op.code();
    // A missing `gamma`/`beta` binds `x` (read-only, unread).
    let (g, b) = (gamma.unwrap_or(x), beta.unwrap_or(x));
    // The vector kernels run on a GPU, and on the CPU executor where a
    // configuration is given with `kernels_on_cpu` (the tests).
    if device.is_gpu() && cols % 4 == 0 {
        // The buffers seen as vectors (borrowed views: no allocation, and
        // the bind groups of the last launch are reused).
        let launch = |configs: &[[usize; 4]], y: &mut Buffer<T>| -> Result<(), OpError> {
            let (xv, gv, bv) = (x.view_as()?, g.view_as()?, b.view_as()?);
            let mut yv = y.view_as_mut()?;
            vector_launches::<T>(device, configs, &xv, &gv, &bv, &mut yv, [rows, cols], code, affine, eps)
        };
        let configs = match config {
            Some(c) => vec![c],
            None => vector_configs::<T>(device, cols),
        };
        // None the device takes: the scalar kernels below.
        if !configs.is_empty() {
            let first = match config {
                Some(_) => 0,
                None => tuned_config::<T>(device, op, [rows, cols], affine, &configs, |c, purpose| {
                    launch(&[*c], y)?;
                    purpose.output(|| Ok(y.read()?))
                }),
            };
            // The chosen config, then the later ones where the device
            // refuses its block size (the default's fallback: a tuned
            // choice has run here).
            return launch(&configs[first..], y);
        }
    }
    if let (Some(c), false, 0) = (config, device.is_gpu(), cols % 4) {
        // The CPU executor has no views: the numbers copied to vectors and
        // back (the tests' path).
        let vecs = |buf: &Buffer<T>| -> Result<Buffer<T::Vector>, OpError> {
            Ok(Buffer::from_slice(device, bytemuck::cast_slice(&buf.read()?))?)
        };
        let (xv, gv, bv) = (vecs(x)?, vecs(g)?, vecs(b)?);
        let mut yv = Buffer::zeroed(device, n / 4)?;
        vector_launches::<T>(device, &[c], &xv, &gv, &bv, &mut yv, [rows, cols], code, affine, eps)?;
        return Ok(y.write(bytemuck::cast_slice(&yv.read()?))?);
    }
    let dims = |tpr: usize| [rows as u32, cols as u32, tpr as u32, code, affine];
    if cols > 4096 {
        // A block of 1024 a row, where the device has such blocks.
        match T::launch(device, Grid::blocks([rows]), x, g, b, y, dims(1024), eps, Kernel::Wide) {
            Err(LaunchError::WorkgroupTooLarge { .. }) => {}
            done => return Ok(done?),
        }
    }
    // Rows that 4 numbers a thread cover with at most 32 threads (or the
    // largest subgroup) take the narrow kernel: more rows a block.
    let narrow = cols <= 4 * threads_per_row(device, 1, 4);
    let (kernel, per) = if narrow { (Kernel::Narrow, 4) } else { (Kernel::Rows, 16) };
    let tpr = threads_per_row(device, cols, per);
    let grid = Grid::blocks([rows.div_ceil(256 / tpr)]);
    Ok(T::launch(device, grid, x, g, b, y, dims(tpr), eps, kernel)?)
}

/// The index in `configs` (the vector kernel's `[WG, PER, TPR, HELD]`s for
/// this width, the measured default first) of the one to run for `op` over
/// `rows × cols` of `T`: chosen by the tuner ([`crate::tuning`]) the first
/// time a (device, op, type, affine, size bucket) is seen, the default
/// where tuning is off or cannot time. `run(config, purpose)` launches a
/// config and reads `y` back for the check. Each config's output is
/// compared with the default's within rounding (their sums run in other
/// orders): 1e-4 of the larger magnitude for `f32`, 1e-2 for `f16` (a few
/// of its units in the last place), magnitudes taken as at least 1, or
/// `1 / cols` for softmax (whose numbers are that small on average: a
/// config writing zeros must not pass).
fn tuned_config<T: RowElement>(
    device: &Device,
    op: RowOp,
    [rows, cols]: [usize; 2],
    affine: u32,
    configs: &[[usize; 4]],
    mut run: impl FnMut(&[usize; 4], Purpose) -> Result<Option<Vec<T>>, OpError>,
) -> usize {
    if configs.len() <= 1 {
        return 0;
    }
    let key = onekernel_runtime::tune::Key::new()
        .value("op", op.name())
        .element::<T>("type")
        .value("affine", affine)
        .size("rows", rows)
        .size("cols", cols);
    let named: Vec<(String, [usize; 4])> = configs.iter().map(|c| (config_name(c), *c)).collect();
    let tol = if std::mem::size_of::<T>() == 2 { 1e-2 } else { 1e-4 };
    let floor = if op == RowOp::Softmax { 1.0 / cols as f32 } else { 1.0 };
    let close = |a: &Vec<T>, b: &Vec<T>| {
        a.iter().zip(b).all(|(a, b)| {
            let (a, b) = (a.widen(), b.widen());
            a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol * a.abs().max(b.abs()).max(floor)
        })
    };
    crate::tuning::choose(device, "ops::norm", include_str!("norm.rs"), &key, &named, |(_, c), p| run(c, p), close)
}

/// A config's name in the tuning cache and [`crate::tuning::picks`]:
/// `wg512_per8_tpr512_held` (`_stream`, `_two_pass`, `_steps2` as HELD
/// says).
fn config_name([wg, per, tpr, held]: &[usize; 4]) -> String {
    let mut name = format!("wg{wg}_per{per}_tpr{tpr}");
    if held & STREAM != 0 {
        name.push_str("_stream");
        if held / COUNT > 1 {
            name.push_str(&format!("_steps{}", held / COUNT));
        }
    } else {
        if held & 1 != 0 {
            name.push_str("_held");
        }
        if held & 2 != 0 {
            name.push_str("_two_pass");
        }
    }
    name
}

/// The vector kernel's launch at the first of `configs` the device
/// takes (the next where it refuses a block size).
#[allow(clippy::too_many_arguments)]
fn vector_launches<T: RowElement>(
    device: &Device,
    configs: &[[usize; 4]],
    xv: &Buffer<T::Vector>,
    gv: &Buffer<T::Vector>,
    bv: &Buffer<T::Vector>,
    yv: &mut Buffer<T::Vector>,
    [rows, cols]: [usize; 2],
    code: u32,
    affine: u32,
    eps: f32,
) -> Result<(), OpError> {
    let mut last = None;
    for &c in configs {
        let (grid, dims) = if c[3] & STREAM != 0 {
            // The stream kernel: the row held whole by lanes of one subgroup.
            let [wg, per, tpr, held] = c;
            if !solo(device, tpr) {
                return Err(arg_error("config", format!("{c:?}: rows of {tpr} lanes are not in one subgroup")).into());
            }
            if cols / 4 > per * tpr {
                return Err(
                    arg_error("config", format!("{c:?} holds rows up to {} wide, not {cols}", 4 * per * tpr)).into()
                );
            }
            let steps = (held / COUNT).max(1);
            let grid = Grid::blocks([rows.div_ceil(wg / tpr * steps)]);
            (grid, [rows as u32, cols as u32, code, affine, steps as u32])
        } else {
            // HELD bit 1: softmax in two passes (bit 2 of `op`).
            let code = if c[3] & 2 != 0 { code | 4 } else { code };
            let grid = Grid::blocks([rows.div_ceil(c[0] / c[2])]);
            (grid, [rows as u32, cols as u32, code, affine, u32::from(solo(device, c[2]))])
        };
        match T::launch_vec(device, grid, xv, gv, bv, yv, dims, eps, c) {
            // Blocks of this size are more than the device has: the next.
            Err(e @ LaunchError::WorkgroupTooLarge { .. }) => last = Some(e),
            done => return Ok(done?),
        }
    }
    Err(last.unwrap_or_else(|| arg_error("config", "no vector row kernel is given".into())).into())
}

/// HELD bit 2: the stream kernel ([`rows_vec4_stream`],
/// [`rows_f16vec4_stream`]); HELD / [`COUNT`]: rows a row's lanes take
/// (`steps`, 0 taken as 1).
#[doc(hidden)]
pub const STREAM: usize = 4;
/// The unit of HELD's count (the stream kernel's steps).
#[doc(hidden)]
pub const COUNT: usize = 32;

/// Whether rows of `tpr` threads are `tpr` neighbouring lanes of one
/// subgroup on `device` (its subgroups all of one size, at least `tpr`):
/// then the vector kernels reduce a row with shuffles alone (`solo`).
fn solo(device: &Device, tpr: usize) -> bool {
    let (min, max) = device.subgroup_sizes().map_or((32, 32), |(a, b)| (a as usize, b as usize));
    min == max && tpr <= min
}

/// The `[WG, PER, TPR, HELD]`s of the vector kernels for rows of `cols`
/// of `T` on `device`, the candidates the tuner times ([`crate::tuning`];
/// key: op, type, whether `gamma`/`beta` are given, rows and `cols`
/// bucketed), best first on the H200 (`ops2 --only norm --sweep`,
/// docs/performance.md): the first is the default where tuning is off,
/// the next where the device refuses a block size. A row of at most `4 * PER * TPR` numbers is
/// held (read once; the rest is read again for each step); HELD 1: the
/// `f16` row held as read ([`rows_f16vec4_held`], wide rows); HELD
/// [`STREAM`]: the stream kernel ([`rows_vec4_stream`], rows up to 1024
/// numbers). A config whose `TPR` neither fits one subgroup ([`solo`]) nor
/// is a multiple of the largest subgroup is left out, and a stream config
/// whose `TPR` does not fit one.
#[doc(hidden)]
pub fn vector_configs<T: RowElement>(device: &Device, cols: usize) -> Vec<[usize; 4]> {
    let (_, sg_max) = device.subgroup_sizes().map_or((32, 32), |(a, b)| (a as usize, b as usize));
    let vecs = cols / 4;
    let half = std::mem::size_of::<T>() == 2;
    // [WG, PER, TPR, HELD], best first (H200, 2026-12-04, fourth session;
    // the stream kernel first, sixth session, where a row's lanes are one
    // subgroup's: else the next).
    let prefs: &[[usize; 4]] = if vecs <= 32 {
        if half {
            &[[256, 4, 8, STREAM], [256, 4, 8, 0], [256, 2, 16, 0], [256, 1, 32, 0], [256, 4, 64, 0], [256, 4, 256, 0]]
        } else {
            // 4 vectors a lane first (ninth session: 36.8-36.9 µs against
            // 37.0-37.5 for one a lane).
            &[
                [256, 4, 8, STREAM],
                [256, 1, 32, STREAM],
                [256, 2, 16, 0],
                [256, 4, 8, 0],
                [256, 1, 32, 0],
                [256, 4, 64, 0],
                [256, 4, 256, 0],
            ]
        }
    } else if vecs <= 256 {
        if half {
            &[[128, 8, 32, STREAM], [256, 8, 32, 0], [256, 4, 64, 0], [256, 2, 128, 0], [256, 4, 256, 0]]
        } else {
            // Blocks of 128 first (ninth session: 39.3-39.9 µs against
            // 40.1-42.1 for blocks of 256).
            &[
                [128, 8, 32, STREAM],
                [256, 8, 32, STREAM],
                [256, 4, 64, 0],
                [256, 8, 32, 0],
                [256, 2, 128, 0],
                [256, 4, 256, 0],
            ]
        }
    } else if vecs <= 1024 {
        if half {
            &[[128, 8, 128, 0], [256, 8, 128, 0], [256, 4, 256, 0], [128, 8, 128, 1], [256, 4, 256, 1]]
        } else {
            &[[256, 4, 256, 0], [256, 8, 128, 0], [128, 8, 128, 0]]
        }
    } else if half {
        // The row held as read: 4096 vectors a block in registers (the
        // whole of a 32768-wide row in `[512, 16, 512, 1]` and in
        // `[256, 32, 256, 1]`: fewer threads a row, more rows at once).
        &[
            [512, 8, 512, 1],
            [1024, 8, 1024, 1],
            [256, 4, 256, 1],
            [512, 16, 512, 1],
            [256, 32, 256, 1],
            [512, 8, 512, 0],
            // Few numbers held and the rest read again at each step (from
            // the L2 cache, which holds a 2^24-number f16 input whole):
            // more rows at once a multiprocessor (not yet measured).
            [256, 2, 256, 0],
            [512, 2, 512, 0],
            [1024, 2, 1024, 0],
        ]
    } else {
        &[
            [512, 8, 512, 0],
            [1024, 8, 1024, 0],
            [256, 4, 256, 0],
            [512, 16, 512, 0],
            [256, 32, 256, 0],
            [256, 2, 256, 0],
            [512, 2, 512, 0],
            [1024, 2, 1024, 0],
        ]
    };
    prefs
        .iter()
        .copied()
        .filter(|c| solo(device, c[2]) || (c[3] & STREAM == 0 && c[2] >= sg_max && c[2] % sg_max == 0))
        .collect()
}

fn host<T: Element>(b: &Buffer<T>) -> Result<Vec<T>, OpError> {
    Ok(b.read()?)
}

/// The CPU executor's implementation: the kernel's arithmetic, row by row.
fn cpu_rows<T: RowElement>(
    op: RowOp,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    beta: Option<&Buffer<T>>,
    y: &mut Buffer<T>,
    cols: usize,
) -> Result<(), OpError> {
    // Read, then transformed in place: one allocation, none per row.
    let mut v = host(x)?;
    let g = gamma.map(host).transpose()?;
    let b = beta.map(host).transpose()?;
    let n = cols as f32;
    v.par_chunks_mut(cols).for_each(|row| {
        let (s1, s2) = match op {
            RowOp::Softmax | RowOp::LogSoftmax => {
                let m = row.iter().fold(f32::NEG_INFINITY, |m, e| m.max(e.widen()));
                (m, row.iter().map(|e| (e.widen() - m).exp()).sum::<f32>())
            }
            RowOp::LayerNorm { eps } => {
                let mean = row.iter().map(|e| e.widen()).sum::<f32>() / n;
                let var = row.iter().map(|e| (e.widen() - mean) * (e.widen() - mean)).sum::<f32>() / n;
                (mean, 1.0 / (var + eps).sqrt())
            }
            RowOp::RmsNorm { eps } => {
                (0.0, 1.0 / (row.iter().map(|e| e.widen() * e.widen()).sum::<f32>() / n + eps).sqrt())
            }
        };
        let log_sum = s1 + s2.ln();
        for (j, e) in row.iter_mut().enumerate() {
            let x = e.widen();
            let mut r = match op {
                RowOp::Softmax => (x - s1).exp() / s2,
                RowOp::LogSoftmax => x - log_sum,
                RowOp::LayerNorm { .. } | RowOp::RmsNorm { .. } => (x - s1) * s2,
            };
            if let Some(g) = &g {
                r *= g[j].widen();
            }
            if let Some(b) = &b {
                r += b[j].widen();
            }
            *e = T::narrow(r);
        }
    });
    Ok(y.write(&v)?)
}

fn alloc_like<T: RowElement>(x: &Buffer<T>) -> Result<Buffer<T>, OpError> {
    Ok(Buffer::zeroed(x.device(), x.len())?)
}

/// The softmax of each row of `x` (`cols` wide), in a new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[0.0f32, 0.0, 1.0, 1.0])?;
/// let y = onekernel::ops::norm::softmax(&device, &x, 2)?.read()?;
/// assert_eq!(y, [0.5; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn softmax<T: RowElement>(device: &Device, x: &Buffer<T>, cols: usize) -> Result<Buffer<T>, OpError> {
    let mut y = alloc_like(x)?;
    softmax_into(device, x, &mut y, cols)?;
    Ok(y)
}

/// The softmax of each row of `x` into `y`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[f16::from_f32(3.0); 8])?;
/// let mut y = Buffer::<f16>::zeroed(&device, 8)?;
/// onekernel::ops::norm::softmax_into(&device, &x, &mut y, 4)?;
/// assert_eq!(y.read()?, [f16::from_f32(0.25); 8]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn softmax_into<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
    cols: usize,
) -> Result<(), OpError> {
    row_op_into(device, RowOp::Softmax, x, None, None, y, cols, false)
}

/// The log-softmax of each row of `x` (`cols` wide), in a new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[5.0f32, 5.0])?;
/// let y = onekernel::ops::norm::log_softmax(&device, &x, 2)?.read()?;
/// assert!((y[0] + std::f32::consts::LN_2).abs() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn log_softmax<T: RowElement>(device: &Device, x: &Buffer<T>, cols: usize) -> Result<Buffer<T>, OpError> {
    let mut y = alloc_like(x)?;
    log_softmax_into(device, x, &mut y, cols)?;
    Ok(y)
}

/// The log-softmax of each row of `x` into `y`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1.0f32, 1.0, 1.0, 1.0])?;
/// let mut y = Buffer::<f32>::zeroed(&device, 4)?;
/// onekernel::ops::norm::log_softmax_into(&device, &x, &mut y, 4)?;
/// assert!((y.read()?[3] + 4f32.ln()).abs() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn log_softmax_into<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    y: &mut Buffer<T>,
    cols: usize,
) -> Result<(), OpError> {
    row_op_into(device, RowOp::LogSoftmax, x, None, None, y, cols, false)
}

/// The layer norm of each row of `x` (`cols` wide), scaled by `gamma` and
/// shifted by `beta` where given, in a new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1.0f32, 3.0])?;
/// let beta = Buffer::from_slice(&device, &[10.0f32, 10.0])?;
/// let y = onekernel::ops::norm::layer_norm(&device, &x, None, Some(&beta), 2, 0.0)?.read()?;
/// assert_eq!(y, [9.0, 11.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn layer_norm<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    beta: Option<&Buffer<T>>,
    cols: usize,
    eps: f32,
) -> Result<Buffer<T>, OpError> {
    let mut y = alloc_like(x)?;
    layer_norm_into(device, x, gamma, beta, &mut y, cols, eps)?;
    Ok(y)
}

/// The layer norm of each row of `x` into `y`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[2.0f32, 4.0])?;
/// let gamma = Buffer::from_slice(&device, &[2.0f32, 2.0])?;
/// let mut y = Buffer::<f32>::zeroed(&device, 2)?;
/// onekernel::ops::norm::layer_norm_into(&device, &x, Some(&gamma), None, &mut y, 2, 0.0)?;
/// assert_eq!(y.read()?, [-2.0, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn layer_norm_into<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    beta: Option<&Buffer<T>>,
    y: &mut Buffer<T>,
    cols: usize,
    eps: f32,
) -> Result<(), OpError> {
    row_op_into(device, RowOp::LayerNorm { eps }, x, gamma, beta, y, cols, false)
}

/// The RMS norm of each row of `x` (`cols` wide), scaled by `gamma` where
/// given, in a new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[3.0f32, -3.0])?;
/// let y = onekernel::ops::norm::rms_norm(&device, &x, None, 2, 0.0)?.read()?;
/// assert_eq!(y, [1.0, -1.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rms_norm<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    cols: usize,
    eps: f32,
) -> Result<Buffer<T>, OpError> {
    let mut y = alloc_like(x)?;
    rms_norm_into(device, x, gamma, &mut y, cols, eps)?;
    Ok(y)
}

/// The RMS norm of each row of `x` into `y`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[4.0f32; 4])?;
/// let mut y = Buffer::<f32>::zeroed(&device, 4)?;
/// onekernel::ops::norm::rms_norm_into(&device, &x, None, &mut y, 2, 0.0)?;
/// assert_eq!(y.read()?, [1.0; 4]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rms_norm_into<T: RowElement>(
    device: &Device,
    x: &Buffer<T>,
    gamma: Option<&Buffer<T>>,
    y: &mut Buffer<T>,
    cols: usize,
    eps: f32,
) -> Result<(), OpError> {
    row_op_into(device, RowOp::RmsNorm { eps }, x, gamma, None, y, cols, false)
}
