//! Reductions: the sum, product, minimum or maximum of a whole buffer, of
//! each row or of each column of a row-major 2-D buffer.
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::reduce::{self, ReduceOp};
//!
//! let device = Device::cpu();
//! let x = Buffer::from_slice(&device, &[3.0f32, -1.0, 4.0, 1.5])?;
//! assert_eq!(reduce::sum(&device, &x)?, 7.5);
//! assert_eq!(reduce::reduce(&device, &x, ReduceOp::Min)?.read()?, [-1.0]);
//! // 2 rows of 2 columns.
//! assert_eq!(reduce::reduce_rows(&device, &x, 2, ReduceOp::Max)?.read()?, [3.0, 4.0]);
//! assert_eq!(reduce::reduce_cols(&device, &x, 2, ReduceOp::Sum)?.read()?, [7.0, 0.5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The per-row and per-column reductions also take a [`View2d`] of a
//! buffer (rows, columns or a block of a matrix with an offset and a row
//! stride: [`reduce_rows_view_into`], [`reduce_cols_view_into`]); the
//! kernels read only the view's elements.
//!
//! Every op returns [`OpError`]: `OpError::Launch` for a launch or an
//! argument (`LaunchError::InvalidArgument` names the op and the argument),
//! `OpError::Buffer` for an allocation or a read.
//!
//! # How the whole-buffer reduction runs
//!
//! Two launches of one kernel, [`reduce_segments`], and no workgroup ever
//! waits for another (WebGPU gives no forward-progress guarantee between
//! workgroups):
//!
//! 1. The buffer is cut into `G` segments of `per_block` elements (a
//!    multiple of 2048); workgroup `b` reduces segment `b`: each of its 256
//!    threads walks the segment 2048 elements at a time with eight
//!    independent accumulators (eight unguarded loads in flight, each
//!    coalesced over the workgroup; the segment's last partial step is
//!    guarded), then the 256 partials meet in a shared-memory tree, and
//!    thread 0 writes `partials[b]`.
//! 2. One workgroup reduces the `G` partials the same way into `out[0]`.
//!
//! `G` is about 2048 on a GPU in the default plan (a few waves of
//! workgroups on a large GPU), so the second launch reads a few KiB.
//!
//! On a GPU the plan is the tuner's ([`crate::tuning`]): 1024, 2048 or
//! 4096 segments, and for sums of `f32`, `i32` and `u32` pass 1 may read
//! the buffer as `Vec4`/`UVec4` instead ([`reduce_sum_vec4`],
//! [`reduce_sum_uvec4`]: a quarter of the loads, each 16 bytes) with 512
//! to 4096 segments ([`candidates`], [`ReducePlan`]). For `f32` the tuner
//! also times single-pass plans ([`ReducePlan::single`],
//! [`reduce_single_f32`], [`reduce_sum_vec4_single`]): one launch, in
//! which each workgroup writes its partial (as bits, an atomic store),
//! passes a storage barrier and increments a counter; the workgroup whose
//! increment is the last reduces the partials into `out[0]` and sets the
//! counter back to 0. A workgroup never waits for another (whichever
//! finishes last does the finish), so this needs no forward-progress
//! guarantee either; it saves the second launch.
//!
//! # Semantics
//!
//! - Integer sums and products wrap (as `wrapping_add`/`wrapping_mul`), on
//!   every device and in every build profile.
//! - Floating-point sums and products are computed in the order of the
//!   kernels above (a tree, not left to right), so they differ from a
//!   sequential loop by rounding; the CPU executor running the same
//!   kernels with the same segments computes the same bits as a GPU.
//! - `Min` and `Max` propagate NaN (a NaN anywhere gives NaN, as PyTorch's
//!   `min`/`max`); of `-0.0` and `0.0` either may be returned.
//! - `f16` buffers accumulate in `f32` (the partials are `f32`) and the
//!   result is rounded to `f16` once.
//! - The reduction of nothing (an empty buffer, a row of 0 columns, a
//!   column of 0 rows) is the identity: `0` for `Sum` (`-0.0` for floats,
//!   their additive identity, so that a sum of `-0.0`s is `-0.0`; it is
//!   `== 0.0`), `1` for `Product`,
//!   the largest value (`+inf` for floats) for `Min`, the smallest
//!   (`-inf`) for `Max`.
//!
//! # A user-supplied combine
//!
//! A kernel of the library cannot call a function the user writes: the
//! kernel language has no function values, helpers are not generic, and a
//! `#[kernel]` is compiled where it is written, with the helpers in its
//! scope. The four combines above are the const parameter `OP` of the
//! kernels (`0` sum, `1` product, `2` min, `3` max), so each compiles to its
//! own specialised pipeline. For another combine (associative and
//! commutative), [`define_reduction!`](crate::define_reduction) writes the
//! same two-pass kernel in the user's crate with the combine in it:
//!
//! ```
//! use onekernel::prelude::*;
//! onekernel::ops::define_reduction!(mod xor_all: u32, |a, b| a ^ b);
//!
//! let device = Device::cpu();
//! let x = Buffer::from_slice(&device, &[0b1100u32, 0b1010])?;
//! assert_eq!(xor_all::reduce(&device, &x, 0)?, 0b0110);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # On the CPU executor
//!
//! On `Device::cpu()` (`DeviceKind::CpuParallel`) the whole-buffer
//! reduction runs a host implementation (rayon's `par_chunks` with the
//! same combine, over the buffer's own memory) instead of
//! the kernels, so that the op keeps within 2× of `par_iter().sum()`: the
//! kernels run by the phase executor, one invocation at a time per
//! workgroup, which a vectorised rayon loop outruns (`cargo bench -p
//! onekernel-ops --bench ops -- --cpu` times the op, the kernels and the
//! rayon idiom side by side). The kernels still run
//! on `Device::cpu_serial()` and `Device::cpu_race_checked()`, where the
//! tests compare them with plain Rust. The per-row and per-column
//! reductions run their kernels on every device.

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::{Element, Layout2d, View2d};

/// Which combine a reduction (or a scan, [`crate::scan`]) applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `a + b` (wrapping for integers).
    Sum,
    /// `a * b` (wrapping for integers).
    Product,
    /// The smaller (NaN if either is NaN).
    Min,
    /// The larger (NaN if either is NaN).
    Max,
}

impl ReduceOp {
    /// The op's name, as errors show it.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Product => "product",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }
}

/// Threads per workgroup of every reduction kernel.
pub const WORKGROUP: usize = 256;
/// Elements a workgroup reads per step of its loop (8 per thread).
const STEP: usize = 8 * WORKGROUP;

/// The reduction kernels of one element family, written once: a
/// whole-segment reduction (`$segments`: pass 1 and 2 of the whole-buffer
/// reduction, and the per-row reduction) and a per-column one
/// (`$columns`). `$in`/`$acc`/`$out` are the element types read,
/// accumulated and written; `load`/`store` convert; `combine` is the
/// combine of `lhs` and `rhs`. [`define_reduction!`](crate::define_reduction)
/// writes a user's combine through it too.
#[doc(hidden)]
#[macro_export]
macro_rules! __reduce_kernels {
    (
        $(#[$meta:meta])*
        segments: $segments:ident,
        columns: $columns:ident,
        attr: ($($attr:tt)*),
        generics: [$($gen:tt)*],
        types: $in:tt => $acc:tt => $out:tt,
        load: |$lv:ident| {$($load:tt)*},
        store: |$sv:ident| {$($store:tt)*},
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        $crate::__reduce_segments_kernel! {
            $(#[$meta])*
            segments: $segments,
            attr: ($($attr)*),
            generics: [$($gen)*],
            types: $in => $acc => $out,
            load: |$lv| {$($load)*},
            store: |$sv| {$($store)*},
            combine: |$lhs, $rhs| {$($combine)*}
        }
        $crate::__reduce_columns_kernel! {
            columns: $columns,
            attr: ($($attr)*),
            generics: [$($gen)*],
            types: $in => $acc => $out,
            load: |$lv| {$($load)*},
            store: |$sv| {$($store)*},
            combine: |$lhs, $rhs| {$($combine)*}
        }
    };
}

/// The whole-segment reduction kernel of [`__reduce_kernels!`] alone (what
/// [`define_reduction!`](crate::define_reduction) writes).
#[doc(hidden)]
#[macro_export]
macro_rules! __reduce_segments_kernel {
    (
        $(#[$meta:meta])*
        segments: $segments:ident,
        attr: ($($attr:tt)*),
        generics: [$($gen:tt)*],
        types: $in:tt => $acc:tt => $out:tt,
        load: |$lv:ident| {$($load:tt)*},
        store: |$sv:ident| {$($store:tt)*},
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        $(#[$meta])*
        ///
        /// Segment `b` is `x[start .. min(start + seg_len, x.len())]` with
        /// `start = x_offset + b * seg_stride` (the whole-buffer reduction:
        /// `x_offset` 0 and `seg_stride == seg_len`; the rows of a view:
        /// the view's offset and row stride, `seg_len` its columns);
        /// launch one workgroup of 256 threads per segment
        /// (`Grid::blocks(segments)`); `out[b]` receives the reduction of
        /// segment `b`, `identity` for an empty one.
        #[$crate::reduce::__kernel($($attr)*)]
        pub fn $segments<$($gen)*>(
            x: &[$in],
            out: &mut [$out],
            x_offset: u32,
            seg_stride: u32,
            seg_len: u32,
            identity: $acc,
        ) {
            let tree = shared::<[$acc; 256]>();
            let tid = thread_id().x;
            let seg = block_id().x;
            let seg_start = x_offset as usize + seg * seg_stride as usize;
            let seg_end = (seg_start + seg_len as usize).min(x.len());
            // Eight accumulators: eight independent loads in flight per
            // thread, none of them guarded in the full steps.
            let mut acc = [identity; 8];
            let mut base = seg_start + tid;
            while base + 7 * 256 < seg_end {
                #[unroll]
                for k in 0..8 {
                    let $lv = x[base + k * 256];
                    let $rhs = { $($load)* };
                    let $lhs = acc[k];
                    acc[k] = { $($combine)* };
                }
                base += 2048;
            }
            // The last partial step, guarded.
            while base < seg_end {
                let $lv = x[base];
                let $rhs = { $($load)* };
                let $lhs = acc[0];
                acc[0] = { $($combine)* };
                base += 256;
            }
            let mut total = acc[0];
            #[unroll]
            for k in 1..8 {
                let $lhs = total;
                let $rhs = acc[k];
                total = { $($combine)* };
            }
            tree[tid] = total;
            workgroup_barrier();
            let mut stride = 128;
            while stride > 0 {
                if tid < stride {
                    let $lhs = tree[tid];
                    let $rhs = tree[tid + stride];
                    tree[tid] = { $($combine)* };
                }
                workgroup_barrier();
                stride /= 2;
            }
            if tid == 0 && seg < out.len() {
                let $sv = tree[0];
                out[seg] = { $($store)* };
            }
        }
    };
}

/// The per-column reduction kernel of [`__reduce_kernels!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __reduce_columns_kernel {
    (
        columns: $columns:ident,
        attr: ($($attr:tt)*),
        generics: [$($gen:tt)*],
        types: $in:tt => $acc:tt => $out:tt,
        load: |$lv:ident| {$($load:tt)*},
        store: |$sv:ident| {$($store:tt)*},
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        /// The reduction of each column of each chunk of `chunk_rows` rows
        /// of the `rows × cols` matrix whose element `(r, c)` is
        /// `x[x_offset + r * row_stride + c]` into `out[chunk * cols +
        /// col]`: one thread per column and chunk (`Grid::threads([cols,
        /// chunks])`), walking down its column four rows at a time;
        /// neighbouring threads read neighbouring elements.
        #[$crate::reduce::__kernel($($attr)*)]
        pub fn $columns<$($gen)*>(
            x: &[$in],
            out: &mut [$out],
            x_offset: u32,
            row_stride: u32,
            cols: u32,
            rows: u32,
            chunk_rows: u32,
            identity: $acc,
        ) {
            let col = global_id().x;
            let chunk = global_id().y;
            let cols = cols as usize;
            let slot = chunk * cols + col;
            if col < cols && slot < out.len() {
                let first = chunk * chunk_rows as usize;
                let end = (first + chunk_rows as usize).min(rows as usize);
                let at = x_offset as usize + col;
                let stride = row_stride as usize;
                let mut acc = [identity; 4];
                let mut row = first;
                while row < end {
                    #[unroll]
                    for k in 0..4 {
                        let r = row + k;
                        let mut $rhs = identity;
                        if r < end {
                            let $lv = x[at + r * stride];
                            $rhs = { $($load)* };
                        }
                        let $lhs = acc[k];
                        acc[k] = { $($combine)* };
                    }
                    row += 4;
                }
                let mut total = acc[0];
                #[unroll]
                for k in 1..4 {
                    let $lhs = total;
                    let $rhs = acc[k];
                    total = { $($combine)* };
                }
                let $sv = total;
                out[slot] = { $($store)* };
            }
        }
    };
}

/// The float combine of `OP` (0 sum, 1 product, 2 min, 3 max;
/// NaN-propagating) handed to [`__reduce_kernels!`] for `$family`: the
/// `f32`/`f64` family and the `f16` ones (accumulated in `f32`) share it.
macro_rules! float_kernels {
    ($(#[$meta:meta])* segments: $segments:ident, columns: $columns:ident, attr: ($($attr:tt)*),
     generics: [$($gen:tt)*], types: $in:tt => $acc:tt => $out:tt,
     load: |$lv:ident| {$($load:tt)*}, store: |$sv:ident| {$($store:tt)*}) => {
        $crate::__reduce_kernels! {
            $(#[$meta])*
            segments: $segments,
            columns: $columns,
            attr: ($($attr)*),
            generics: [$($gen)*],
            types: $in => $acc => $out,
            load: |$lv| { $($load)* },
            store: |$sv| { $($store)* },
            combine: |lhs, rhs| {
                if OP == 0 {
                    lhs + rhs
                } else if OP == 1 {
                    lhs * rhs
                } else if OP == 2 {
                    if lhs < rhs { lhs } else if rhs <= lhs { rhs } else { lhs + rhs }
                } else if lhs > rhs {
                    lhs
                } else if rhs >= lhs {
                    rhs
                } else {
                    lhs + rhs
                }
            }
        }
    };
}

float_kernels! {
    /// The reduction of each segment of `x` (floats: `f32`, `f64`): the
    /// kernel of the whole-buffer and per-row reductions. `OP`: 0 sum, 1
    /// product, 2 min, 3 max (NaN-propagating).
    segments: reduce_segments,
    columns: reduce_columns,
    attr: (workgroup_size = 256, types = [f32, f64]),
    generics: [T: Float, const OP: u32],
    types: T => T => T,
    load: |v| { v },
    store: |v| { v }
}

crate::__reduce_kernels! {
    /// The reduction of each segment of `x` (integers: `i32`, `u32`,
    /// `i64`, `u64`; sums and products wrap). `OP`: 0 sum, 1 product, 2
    /// min, 3 max.
    segments: reduce_segments_int,
    columns: reduce_columns_int,
    attr: (workgroup_size = 256, types = [i32, u32, i64, u64]),
    generics: [T: Int, const OP: u32],
    types: T => T => T,
    load: |v| { v },
    store: |v| { v },
    combine: |lhs, rhs| {
        if OP == 0 {
            lhs.wrapping_add(rhs)
        } else if OP == 1 {
            lhs.wrapping_mul(rhs)
        } else if OP == 2 {
            if rhs < lhs { rhs } else { lhs }
        } else if rhs > lhs {
            rhs
        } else {
            lhs
        }
    }
}

float_kernels! {
    /// `f16` rows and columns reduced in `f32`, written as `f16`.
    segments: reduce_segments_f16, columns: reduce_columns_f16, attr: (workgroup_size = 256),
    generics: [const OP: u32], types: f16 => f32 => f16,
    load: |v| { v.to_f32() }, store: |v| { f16::from_f32(v) }
}
float_kernels! {
    /// Pass 1 of an `f16` whole-buffer reduction: `f16` in, `f32` partials.
    segments: reduce_segments_f16_f32, columns: reduce_columns_f16_f32, attr: (workgroup_size = 256),
    generics: [const OP: u32], types: f16 => f32 => f32,
    load: |v| { v.to_f32() }, store: |v| { v }
}
float_kernels! {
    /// Pass 2 of an `f16` whole-buffer reduction: `f32` partials in, the
    /// `f16` result out.
    segments: reduce_segments_f32_f16, columns: reduce_columns_f32_f16, attr: (workgroup_size = 256),
    generics: [const OP: u32], types: f32 => f32 => f16,
    load: |v| { v }, store: |v| { f16::from_f32(v) }
}

/// The `Vec4` sum kernels, written once: `$name` sums `$lane`s read as
/// `$vec`s from `0` (`$zero` the identity).
macro_rules! vec4_sum_kernel {
    ($(#[$meta:meta])* $name:ident, $vec:ident, $lane:ty, $zero:expr) => {
        $(#[$meta])*
        ///
        /// Segment `b` is `x4[offset4 + b * seg_len4 ..][..seg_len4]`
        /// (cut at `offset4 + n4`); each of the 256 threads keeps eight
        /// vector accumulators (eight loads in flight, unguarded in whole
        /// steps of 2048 vectors, the last partial step guarded load by
        /// load), workgroup 0 also adds the elements of `x` from `tail` (at
        /// most 3 before its end; `tail = x.len()` adds none), and the
        /// partials meet in a shared-memory tree into `out[b]`. GPU only
        /// (a vector buffer over a scalar buffer's memory exists there);
        /// the CPU executor runs [`reduce_segments`]. With `reverse` 1,
        /// workgroup `b` sums segment `grid - 1 - b` (the scan's pass 1:
        /// the start of the input, which its pass 2 reads first, is read
        /// last, so it may still be in the cache).
        #[kernel(workgroup_size = 256)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name(
            x4: &[$vec],
            x: &[$lane],
            out: &mut [$lane],
            offset4: u32,
            n4: u32,
            seg_len4: u32,
            tail: u32,
            reverse: u32,
        ) {
            let tree = shared::<[$lane; 256]>();
            let tid = thread_id().x;
            let seg = if reverse != 0 { grid_dim().x - 1 - block_id().x } else { block_id().x };
            let start = offset4 as usize + seg * seg_len4 as usize;
            let end = (start + seg_len4 as usize).min(offset4 as usize + n4 as usize).min(x4.len());
            let mut acc = [$vec::splat($zero); 8];
            let mut base = start + tid;
            while base + 7 * 256 < end {
                #[unroll]
                for k in 0..8 {
                    acc[k] += x4[base + k * 256];
                }
                base += 2048;
            }
            #[unroll]
            for k in 0..8 {
                let i = base + k * 256;
                if i < end {
                    acc[k] += x4[i];
                }
            }
            let v = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
            let mut total = (v.x + v.y) + (v.z + v.w);
            let t = tail as usize + tid;
            if seg == 0 && t < x.len() {
                total += x[t];
            }
            tree[tid] = total;
            workgroup_barrier();
            let mut stride = 128;
            while stride > 0 {
                if tid < stride {
                    tree[tid] = tree[tid] + tree[tid + stride];
                }
                workgroup_barrier();
                stride /= 2;
            }
            if tid == 0 && seg < out.len() {
                out[seg] = tree[0];
            }
        }
    };
}

vec4_sum_kernel! {
    /// Pass 1 of an `f32` sum over the buffer seen as `Vec4`s: a quarter
    /// of the scalar kernel's loads, 16 bytes each (`-0.0`, the identity
    /// of IEEE addition, starts every accumulator).
    reduce_sum_vec4, Vec4, f32, -0.0
}

vec4_sum_kernel! {
    /// Pass 1 of an `i32` or `u32` sum over the buffer seen as `UVec4`s
    /// (an `i32` buffer's bits: two's-complement sums wrap to the same
    /// bits), as [`reduce_sum_vec4`]. The GPU's integer addition wraps.
    reduce_sum_uvec4, UVec4, u32, 0
}

/// A single-pass `f32` whole-buffer reduction kernel: `$pass1` leaves
/// each thread's combined elements of the workgroup's segment in `total`
/// (`seg` the segment, `tid` the thread); then the workgroup's partial
/// goes to `partials[seg]` as bits, a storage barrier (a device-scope
/// release on the GPU) orders it before thread 0's increment of
/// `counter[0]`, and the workgroup whose increment is the `groups`-th (the
/// old count, read uniformly) is the last: after another storage barrier
/// (acquire) it combines the `groups` partials, writes `out[0]` and sets
/// the counter back to 0 for the next launch. No workgroup ever waits for
/// another (no forward-progress assumption); the last one reduces a few
/// KiB instead of a second launch.
macro_rules! single_pass_kernel {
    (
        $(#[$meta:meta])*
        scalar $name:ident [$($gen:tt)*],
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        single_pass_kernel! {
            $(#[$meta])*
            $name [$($gen)*] (x: &[f32], seg_len: u32, identity: f32,),
            vars: (tid, seg, total),
            identity: identity,
            pass1: {
                let seg_start = seg * seg_len as usize;
                let seg_end = (seg_start + seg_len as usize).min(x.len());
                // Eight accumulators, unguarded loads in whole steps.
                let mut acc = [identity; 8];
                let mut base = seg_start + tid;
                while base + 7 * 256 < seg_end {
                    #[unroll]
                    for k in 0..8 {
                        let $lhs = acc[k];
                        let $rhs = x[base + k * 256];
                        acc[k] = { $($combine)* };
                    }
                    base += 2048;
                }
                while base < seg_end {
                    let $lhs = acc[0];
                    let $rhs = x[base];
                    acc[0] = { $($combine)* };
                    base += 256;
                }
                let mut total = acc[0];
                #[unroll]
                for k in 1..8 {
                    let $lhs = total;
                    let $rhs = acc[k];
                    total = { $($combine)* };
                }
            },
            combine: |$lhs, $rhs| { $($combine)* }
        }
    };
    (
        $(#[$meta:meta])*
        $name:ident [$($gen:tt)*] ($($param:tt)*),
        vars: ($tid:ident, $seg:ident, $total:ident),
        identity: $identity:expr,
        pass1: {$($pass1:tt)*},
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        $(#[$meta])*
        #[kernel(workgroup_size = 256)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<$($gen)*>(
            $($param)*
            partials: &[AtomicU32],
            counter: &[AtomicU32],
            out: &mut [f32],
            groups: u32,
        ) {
            let tree = shared::<[f32; 256]>();
            let last = shared::<[u32; 1]>();
            let $tid = thread_id().x;
            let $seg = block_id().x;
            $($pass1)*
            tree[$tid] = $total;
            workgroup_barrier();
            let mut stride = 128;
            while stride > 0 {
                if $tid < stride {
                    let $lhs = tree[$tid];
                    let $rhs = tree[$tid + stride];
                    tree[$tid] = { $($combine)* };
                }
                workgroup_barrier();
                stride /= 2;
            }
            if $tid == 0 {
                partials[$seg].store(tree[0].to_bits(), Ordering::Relaxed);
            }
            storage_barrier();
            if $tid == 0 {
                last[0] = counter[0].fetch_add(1, Ordering::AcqRel);
            }
            let seen = workgroup_uniform_load(&last[0]);
            if seen + 1 == groups {
                storage_barrier();
                let mut acc = $identity;
                let mut i = $tid;
                while i < groups as usize {
                    let $lhs = acc;
                    let $rhs = f32::from_bits(partials[i].load(Ordering::Acquire));
                    acc = { $($combine)* };
                    i += 256;
                }
                tree[$tid] = acc;
                workgroup_barrier();
                let mut stride = 128;
                while stride > 0 {
                    if $tid < stride {
                        let $lhs = tree[$tid];
                        let $rhs = tree[$tid + stride];
                        tree[$tid] = { $($combine)* };
                    }
                    workgroup_barrier();
                    stride /= 2;
                }
                if $tid == 0 {
                    out[0] = tree[0];
                    counter[0].store(0, Ordering::Relaxed);
                }
            }
        }
    };
}

single_pass_kernel! {
    /// The whole-buffer reduction of `f32`s in one launch (`OP` as
    /// [`reduce_segments`]): workgroup `b` of `groups` reduces
    /// `x[b * seg_len ..][..seg_len]` as [`reduce_segments`] does, then
    /// the single-pass finish of [`ReducePlan::single`]. `partials` holds
    /// at least `groups` words; `counter[0]` must be 0 before the launch
    /// (it is again after it). Launch `Grid::blocks(groups)`.
    scalar reduce_single_f32 [const OP: u32],
    combine: |lhs, rhs| {
        if OP == 0 {
            lhs + rhs
        } else if OP == 1 {
            lhs * rhs
        } else if OP == 2 {
            if lhs < rhs { lhs } else if rhs <= lhs { rhs } else { lhs + rhs }
        } else if lhs > rhs {
            lhs
        } else if rhs >= lhs {
            rhs
        } else {
            lhs + rhs
        }
    }
}

single_pass_kernel! {
    /// The `f32` sum in one launch over the buffer seen as `Vec4`s: pass 1
    /// of [`reduce_sum_vec4`] (segments of `seg_len4` vectors of the first
    /// `n4`, workgroup 0 adding the scalars of `x` from `tail`), then the
    /// single-pass finish of [`ReducePlan::single`]. GPU only.
    reduce_sum_vec4_single [] (x4: &[Vec4], x: &[f32], n4: u32, seg_len4: u32, tail: u32,),
    vars: (tid, seg, total),
    identity: -0.0,
    pass1: {
        let start = seg * seg_len4 as usize;
        let end = (start + seg_len4 as usize).min(n4 as usize).min(x4.len());
        let mut acc = [Vec4::splat(-0.0); 8];
        let mut base = start + tid;
        while base + 7 * 256 < end {
            #[unroll]
            for k in 0..8 {
                acc[k] += x4[base + k * 256];
            }
            base += 2048;
        }
        #[unroll]
        for k in 0..8 {
            let i = base + k * 256;
            if i < end {
                acc[k] += x4[i];
            }
        }
        let v = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        let mut total = (v.x + v.y) + (v.z + v.w);
        let t = tail as usize + tid;
        if seg == 0 && t < x.len() {
            total += x[t];
        }
    },
    combine: |lhs, rhs| { lhs + rhs }
}

mod sealed {
    pub trait Sealed {}
}

/// Calls `$launch::<T, OP>` with `OP` the const of `$op`.
macro_rules! by_op {
    ($op:expr, |$o:ident| $call:expr) => {
        match $op {
            ReduceOp::Sum => {
                const $o: u32 = 0;
                $call
            }
            ReduceOp::Product => {
                const $o: u32 = 1;
                $call
            }
            ReduceOp::Min => {
                const $o: u32 = 2;
                $call
            }
            ReduceOp::Max => {
                const $o: u32 = 3;
                $call
            }
        }
    };
}
pub(crate) use by_op;

/// Where a kernel's input is in its buffer: `rows × cols` elements, row
/// `r` starting at `offset + r * row_stride` (a whole buffer: one row, or
/// the rows of a matrix; a [`View2d`]'s layout), as the kernels' `u32`s.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub offset: u32,
    pub row_stride: u32,
    pub cols: u32,
    pub rows: u32,
}

impl Window {
    /// The window of a view, checked to fit the kernels' `u32` indices.
    pub(crate) fn of(op: &'static str, arg: &'static str, layout: Layout2d) -> Result<Window, LaunchError> {
        let big = |what: &str, v: usize| LaunchError::InvalidArgument {
            kernel: op,
            arg,
            problem: format!("its {what} {v} is more than a kernel can index (2^32 - 1)"),
        };
        let u = |what: &str, v: usize| u32::try_from(v).map_err(|_| big(what, v));
        // The last element's index must fit too.
        u("end", layout.span().end)?;
        Ok(Window {
            offset: u("offset", layout.offset)?,
            row_stride: u("row stride", layout.row_stride)?,
            cols: u("column count", layout.cols)?,
            rows: u("row count", layout.rows)?,
        })
    }
}

/// The element types the reductions take: `f32`, `f64`, `i32`, `u32`,
/// `i64`, `u64` and `f16` (accumulated in `f32`). Sealed; each impl
/// dispatches to its kernels' `Instance`.
pub trait ReduceElement: Element + Copy + PartialEq + std::fmt::Debug + sealed::Sealed {
    /// The type partial results are kept in: `f32` for `f16`, the type
    /// itself otherwise.
    type Acc: Element + Copy + Send + Sync;
    /// The identity of `op` in the accumulator type.
    fn identity(op: ReduceOp) -> Self::Acc;
    /// Combines two accumulators (the kernels' combine, on the host).
    fn combine(op: ReduceOp, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// An element as an accumulator.
    fn to_acc(self) -> Self::Acc;
    /// An accumulator rounded to the element type.
    fn from_acc(acc: Self::Acc) -> Self;
    /// Whether two results of one reduction agree: equal for integers;
    /// for floats equal, both NaN, or within the rounding of another
    /// order of a sum (what the tuner checks between plans).
    #[doc(hidden)]
    fn close(a: Self, b: Self) -> bool;
    /// Pass 1: segment `b` (`seg_len` elements from `x_offset + b *
    /// seg_stride`) of `x` into accumulator `out[b]`, for `segments`.
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_partials(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self::Acc>,
        x_offset: u32,
        seg_stride: u32,
        seg_len: u32,
        segments: usize,
    ) -> Result<(), LaunchError>;
    /// Pass 2 (the first `count` accumulators into the result).
    #[doc(hidden)]
    fn launch_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<Self::Acc>,
        count: usize,
        out: &mut Buffer<Self>,
    ) -> Result<(), LaunchError>;
    /// One workgroup per row of `x`'s window.
    #[doc(hidden)]
    fn launch_rows(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        w: Window,
        out: &mut Buffer<Self>,
    ) -> Result<(), LaunchError>;
    /// One thread per column and chunk of `chunk_rows` rows of `x`'s
    /// window, into accumulators (`chunks × cols`).
    #[doc(hidden)]
    fn launch_cols_partial(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        w: Window,
        out: &mut Buffer<Self::Acc>,
        chunk_rows: u32,
        chunks: usize,
    ) -> Result<(), LaunchError>;
    /// The first `chunks` rows of `cols` accumulators reduced per column.
    #[doc(hidden)]
    fn launch_cols_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<Self::Acc>,
        out: &mut Buffer<Self>,
        cols: u32,
        chunks: usize,
    ) -> Result<(), LaunchError>;
    /// One thread per column of `x`'s window, all rows.
    #[doc(hidden)]
    fn launch_cols(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        w: Window,
        out: &mut Buffer<Self>,
    ) -> Result<(), LaunchError>;
}

/// The `ReduceElement` launches of one type: `$t` read by the kernels
/// `$segments`/`$columns` (turbofish `$tp`), accumulated and finished by
/// `$fin_segments`/`$fin_columns` (turbofish `$ftp`), rows and columns
/// reduced in one pass by `$one_segments`/`$one_columns`.
macro_rules! element_launches {
    (
        $t:ty,
        partial: $segments:ident / $columns:ident [$($tp:tt)*],
        finish: $fin_segments:ident / $fin_columns:ident [$($ftp:tt)*],
        single: $one_segments:ident / $one_columns:ident [$($otp:tt)*]
    ) => {
        fn launch_partials(
            device: &Device,
            op: ReduceOp,
            x: &Buffer<$t>,
            out: &mut Buffer<Self::Acc>,
            x_offset: u32,
            seg_stride: u32,
            seg_len: u32,
            segments: usize,
        ) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let g = Grid::blocks(segments);
            by_op!(op, |O| $segments::launch::<$($tp)* O>(device, g, x, out, x_offset, seg_stride, seg_len, id))
        }
        fn launch_finish(
            device: &Device,
            op: ReduceOp,
            partials: &Buffer<Self::Acc>,
            count: usize,
            out: &mut Buffer<$t>,
        ) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let len = seg_len_u32(count)?;
            by_op!(op, |O| $fin_segments::launch::<$($ftp)* O>(device, Grid::blocks(1), partials, out, 0, len, len, id))
        }
        fn launch_rows(device: &Device, op: ReduceOp, x: &Buffer<$t>, w: Window, out: &mut Buffer<$t>) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let g = Grid::blocks(w.rows as usize);
            by_op!(op, |O| $one_segments::launch::<$($otp)* O>(device, g, x, out, w.offset, w.row_stride, w.cols, id))
        }
        fn launch_cols_partial(
            device: &Device,
            op: ReduceOp,
            x: &Buffer<$t>,
            w: Window,
            out: &mut Buffer<Self::Acc>,
            chunk_rows: u32,
            chunks: usize,
        ) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let g = Grid::threads([w.cols as usize, chunks]);
            by_op!(op, |O| $columns::launch::<$($tp)* O>(
                device, g, x, out, w.offset, w.row_stride, w.cols, w.rows, chunk_rows, id
            ))
        }
        fn launch_cols_finish(
            device: &Device,
            op: ReduceOp,
            partials: &Buffer<Self::Acc>,
            out: &mut Buffer<$t>,
            cols: u32,
            chunks: usize,
        ) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let (g, rows) = (Grid::threads([cols as usize, 1]), chunks as u32);
            by_op!(op, |O| $fin_columns::launch::<$($ftp)* O>(device, g, partials, out, 0, cols, cols, rows, rows, id))
        }
        fn launch_cols(device: &Device, op: ReduceOp, x: &Buffer<$t>, w: Window, out: &mut Buffer<$t>) -> Result<(), LaunchError> {
            let id = Self::identity(op);
            let g = Grid::threads([w.cols as usize, 1]);
            let rows = w.rows.max(1);
            by_op!(op, |O| $one_columns::launch::<$($otp)* O>(
                device, g, x, out, w.offset, w.row_stride, w.cols, w.rows, rows, id
            ))
        }
    };
}

/// A type that accumulates in itself (every type but `f16`).
macro_rules! generic_element {
    ($t:ty, $segments:ident, $columns:ident, identity: |$op:ident| $identity:expr, combine: $combine:expr, close: $close:expr) => {
        impl sealed::Sealed for $t {}
        impl ReduceElement for $t {
            type Acc = $t;
            // `#[inline]`: the host paths (`host_fold`, the scan's `host_scan`) call
            // these once per element from generic code that other codegen units
            // instantiate; without it each call stayed a call (the CPU executor's
            // reduce and scan ran at 2-4x the rayon idiom's time).
            #[inline]
            fn identity($op: ReduceOp) -> $t {
                $identity
            }
            #[inline]
            fn combine(op: ReduceOp, a: $t, b: $t) -> $t {
                let f: fn(ReduceOp, $t, $t) -> $t = $combine;
                f(op, a, b)
            }
            #[inline]
            fn to_acc(self) -> $t {
                self
            }
            #[inline]
            fn from_acc(acc: $t) -> $t {
                acc
            }
            fn close(a: $t, b: $t) -> bool {
                let f: fn($t, $t) -> bool = $close;
                f(a, b)
            }
            element_launches!(
                $t,
                partial: $segments / $columns [$t,],
                finish: $segments / $columns [$t,],
                single: $segments / $columns [$t,]
            );
        }
    };
}

/// NaN-propagating min and max on the host, as the kernels compute them.
fn fmin<T: PartialOrd + Copy + std::ops::Add<Output = T>>(a: T, b: T) -> T {
    if a < b {
        a
    } else if b <= a {
        b
    } else {
        a + b
    }
}
fn fmax<T: PartialOrd + Copy + std::ops::Add<Output = T>>(a: T, b: T) -> T {
    if a > b {
        a
    } else if b >= a {
        b
    } else {
        a + b
    }
}

macro_rules! float_element {
    ($t:ty) => {
        generic_element!($t, reduce_segments, reduce_columns,
            identity: |op| match op {
                // -0.0: the additive identity of IEEE floats (-0.0 + -0.0
                // is -0.0, 0.0 + -0.0 is 0.0).
                ReduceOp::Sum => -0.0,
                ReduceOp::Product => 1.0,
                ReduceOp::Min => <$t>::INFINITY,
                ReduceOp::Max => <$t>::NEG_INFINITY,
            },
            combine: |op, a, b| match op {
                ReduceOp::Sum => a + b,
                ReduceOp::Product => a * b,
                ReduceOp::Min => fmin(a, b),
                ReduceOp::Max => fmax(a, b),
            },
            close: |a, b| a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0)
        );
    };
}
macro_rules! int_element {
    ($t:ty) => {
        generic_element!($t, reduce_segments_int, reduce_columns_int,
            identity: |op| match op {
                ReduceOp::Sum => 0,
                ReduceOp::Product => 1,
                ReduceOp::Min => <$t>::MAX,
                ReduceOp::Max => <$t>::MIN,
            },
            combine: |op, a, b| match op {
                ReduceOp::Sum => a.wrapping_add(b),
                ReduceOp::Product => a.wrapping_mul(b),
                ReduceOp::Min => a.min(b),
                ReduceOp::Max => a.max(b),
            },
            close: |a, b| a == b
        );
    };
}
float_element!(f32);
float_element!(f64);
int_element!(i32);
int_element!(u32);
int_element!(i64);
int_element!(u64);

impl sealed::Sealed for f16 {}
impl ReduceElement for f16 {
    type Acc = f32;
    #[inline]
    fn identity(op: ReduceOp) -> f32 {
        <f32 as ReduceElement>::identity(op)
    }
    #[inline]
    fn combine(op: ReduceOp, a: f32, b: f32) -> f32 {
        <f32 as ReduceElement>::combine(op, a, b)
    }
    #[inline]
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    #[inline]
    fn from_acc(acc: f32) -> f16 {
        f16::from_f32(acc)
    }
    fn close(a: f16, b: f16) -> bool {
        <f32 as ReduceElement>::close(a.to_f32(), b.to_f32())
    }
    element_launches!(
        f16,
        partial: reduce_segments_f16_f32 / reduce_columns_f16_f32 [],
        finish: reduce_segments_f32_f16 / reduce_columns_f32_f16 [],
        single: reduce_segments_f16 / reduce_columns_f16 []
    );
}

/// A length as the kernels' `u32` (buffers bind at most 2^32 − 1 bytes, so
/// a length that does not fit is refused by the launch anyway).
fn seg_len_u32(len: usize) -> Result<u32, LaunchError> {
    u32::try_from(len).map_err(|_| LaunchError::InvalidArgument {
        kernel: "ops::reduce",
        arg: "x",
        problem: format!("{len} elements: longer than a kernel can index (2^32 - 1)"),
    })
}

/// How the default plan of the whole-buffer reduction splits `n` elements
/// on `device`: `(segment length, segments)` (the tuner may choose another
/// of [`candidates`]; [`ReduceScratch::for_len`] fits them all).
pub fn plan(device: &Device, n: usize) -> (usize, usize) {
    // Enough workgroups to fill a large GPU a few times over; on the CPU
    // executor, a few per core.
    plan_for(n, if device.is_gpu() { GPU_SEGMENTS } else { cpu_segments() })
}

/// The GPU's segment count target of the default plan.
const GPU_SEGMENTS: usize = 2048;

fn cpu_segments() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |p| p.get())
}

/// [`plan`] for about `target` segments (segments of whole 2048-element
/// steps).
#[doc(hidden)]
pub fn plan_for(n: usize, target: usize) -> (usize, usize) {
    let seg = n.div_ceil(target.max(1)).next_multiple_of(STEP).max(STEP);
    (seg, n.div_ceil(seg).max(1))
}

/// One way to run the whole-buffer reduction: what the tuner
/// ([`crate::tuning`]) chooses among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReducePlan {
    /// About this many segments (workgroups) in pass 1.
    pub segments: usize,
    /// Pass 1 reads the buffer as `Vec4`s ([`reduce_sum_vec4`]: `f32`
    /// sums on a GPU), else one element at a time ([`reduce_segments`]).
    pub vec4: bool,
    /// One launch instead of two (`f32` only; others run two): each
    /// workgroup writes its partial and increments a counter, and the
    /// workgroup that increments it last reduces the partials and resets
    /// it ([`reduce_single_f32`], [`reduce_sum_vec4_single`]). No
    /// workgroup waits for another, so it needs no forward-progress
    /// guarantee; it saves the second launch's fixed cost.
    pub single: bool,
}

impl ReducePlan {
    /// The plan's name, as the tuning cache keeps it: `scalar2048`,
    /// `vec4_1024`, `single_scalar2048`, `single_vec4_1024`.
    pub fn name(&self) -> String {
        let one = if self.single { "single_" } else { "" };
        if self.vec4 {
            format!("{one}vec4_{}", self.segments)
        } else {
            format!("{one}scalar{}", self.segments)
        }
    }

    /// `(segment length, segments)` of `n` elements: the segment length in
    /// elements (scalar: a multiple of 2048) or in `Vec4`s (a multiple of
    /// 256, of the first `n / 4 * 4` elements).
    pub fn split(&self, n: usize) -> (usize, usize) {
        if self.vec4 {
            let n4 = n / 4;
            let seg = n4.div_ceil(self.segments.max(1)).next_multiple_of(WORKGROUP).max(WORKGROUP);
            (seg, n4.div_ceil(seg).max(1))
        } else {
            plan_for(n, self.segments)
        }
    }
}

/// Which `Vec4` kernel sums `T` ([`reduce_sum_vec4`] for `f32`,
/// [`reduce_sum_uvec4`] for `i32` and `u32`), if one does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lanes {
    F32,
    U32,
}

pub(crate) fn vec4_lanes<T: 'static>() -> Option<Lanes> {
    use std::any::TypeId;
    let t = TypeId::of::<T>();
    if t == TypeId::of::<f32>() {
        Some(Lanes::F32)
    } else if t == TypeId::of::<u32>() || t == TypeId::of::<i32>() {
        Some(Lanes::U32)
    } else {
        None
    }
}

/// Whether a `Vec4` kernel can run this reduction: an `f32`, `i32` or
/// `u32` sum of at least 4096 elements on a GPU.
fn vec4_fits<T: ReduceElement>(device: &Device, op: ReduceOp, n: usize) -> bool {
    device.is_gpu() && op == ReduceOp::Sum && n >= 4096 && vec4_lanes::<T>().is_some()
}

/// Whether the single-pass plans ([`ReducePlan::single`]) run `T`: `f32`.
fn single_fits<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
}

/// The plans the tuner times for `op` over `n` elements of `T` on
/// `device`, the default first: on a GPU scalar loads with 1024, 2048 or
/// 4096 segments and, for `f32` sums, `Vec4` loads with 512 to 4096; for
/// `f32` also the single-pass plans ([`ReducePlan::single`]) of 1024 to
/// 4096 segments (and `Vec4` loads, 512 to 2048, for sums) (plans that
/// split `n` the same way once); on the CPU executor one plan.
pub fn candidates<T: ReduceElement>(device: &Device, op: ReduceOp, n: usize) -> Vec<ReducePlan> {
    if !device.is_gpu() {
        return vec![ReducePlan { segments: cpu_segments(), vec4: false, single: false }];
    }
    let plan = |segments, vec4, single| ReducePlan { segments, vec4, single };
    let mut plans: Vec<ReducePlan> = [2048, 1024, 4096].map(|segments| plan(segments, false, false)).to_vec();
    let vec4 = vec4_fits::<T>(device, op, n);
    if vec4 {
        plans.extend([512, 1024, 2048, 4096].map(|segments| plan(segments, true, false)));
    }
    if single_fits::<T>() {
        plans.extend([1024, 2048, 4096].map(|segments| plan(segments, false, true)));
        if vec4 {
            plans.extend([512, 1024, 2048].map(|segments| plan(segments, true, true)));
        }
    }
    let mut splits = Vec::new();
    plans.retain(|p| {
        let s = (p.vec4, p.single, p.split(n));
        let new = !splits.contains(&s);
        splits.push(s);
        new
    });
    plans
}

/// The most partials any candidate plan needs for `n` elements.
fn max_partials<T: ReduceElement>(device: &Device, n: usize) -> usize {
    let plans = candidates::<T>(device, ReduceOp::Sum, n);
    plans.iter().map(|p| p.split(n).1).max().unwrap_or(1)
}

/// Scratch space of a whole-buffer reduction: the per-workgroup partials.
/// Reused by [`reduce_into`] across calls (grown when a larger input needs
/// more).
pub struct ReduceScratch<T: ReduceElement> {
    partials: Option<Buffer<T::Acc>>,
    /// The single-pass plans' partials (as bits) and counter (0 between
    /// launches).
    single: Option<(Buffer<u32>, Buffer<u32>)>,
}

impl<T: ReduceElement> Default for ReduceScratch<T> {
    fn default() -> Self {
        ReduceScratch { partials: None, single: None }
    }
}

impl<T: ReduceElement> ReduceScratch<T> {
    /// Empty scratch; the first [`reduce_into`] allocates it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Scratch for reductions of up to `n` elements on `device`, allocated
    /// now.
    ///
    /// # Errors
    /// `OpError::Buffer` when the allocation fails.
    pub fn for_len(device: &Device, n: usize) -> Result<Self, OpError> {
        let mut s = Self::default();
        s.partials(device, max_partials::<T>(device, n))?;
        Ok(s)
    }

    /// The single-pass plans' partials (at least `len`) and counter.
    fn single(&mut self, device: &Device, len: usize) -> Result<&mut (Buffer<u32>, Buffer<u32>), OpError> {
        let fits = self.single.as_ref().is_some_and(|(p, _)| p.len() >= len && p.device().id() == device.id());
        if !fits {
            self.single = None;
        }
        match &mut self.single {
            Some(b) => Ok(b),
            slot => Ok(slot.insert((Buffer::zeroed(device, len)?, Buffer::zeroed(device, 1)?))),
        }
    }

    fn partials(&mut self, device: &Device, len: usize) -> Result<&mut Buffer<T::Acc>, OpError> {
        let fits = self.partials.as_ref().is_some_and(|b| b.len() >= len && b.device().id() == device.id());
        if !fits {
            self.partials = None;
        }
        match &mut self.partials {
            Some(b) => Ok(b),
            slot => Ok(slot.insert(Buffer::zeroed(device, len)?)),
        }
    }
}

/// Whether `device` runs an op's host implementation instead of its
/// kernels: the parallel CPU executor (`DeviceKind::CpuParallel`), where
/// the kernels are slower than rayon; never on a GPU, a serial or a
/// race-checked CPU device (where the kernels run, as the tests do).
pub fn runs_on_host(device: &Device) -> bool {
    device.kind() == onekernel_runtime::DeviceKind::CpuParallel
}

pub(crate) fn check_same_device<T: Element>(
    op: &'static str,
    arg: &'static str,
    device: &Device,
    b: &Buffer<T>,
) -> Result<(), LaunchError> {
    if b.device().id() != device.id() {
        return Err(LaunchError::WrongDevice {
            kernel: op,
            arg,
            buffer_device: b.device().name(),
            launch_device: device.name(),
        });
    }
    Ok(())
}

/// A CPU executor's buffer as a slice, for the host implementations (a GPU
/// buffer here is an internal error: the callers check the device first).
pub(crate) fn host_data<'b, T: Element>(op: &'static str, b: &'b Buffer<T>) -> Result<&'b [T], LaunchError> {
    b.host_slice()
        .ok_or_else(|| LaunchError::Gpu { kernel: op, message: "internal error: a GPU buffer on the host path".into() })
}

/// [`host_data`], mutably.
pub(crate) fn host_data_mut<'b, T: Element>(
    op: &'static str,
    b: &'b mut Buffer<T>,
) -> Result<&'b mut [T], LaunchError> {
    b.host_slice_mut()
        .ok_or_else(|| LaunchError::Gpu { kernel: op, message: "internal error: a GPU buffer on the host path".into() })
}

/// The host implementation on the CPU executor: the combine chosen once
/// (each arm a loop of its own), eight accumulators per chunk.
fn host_reduce<T: ReduceElement>(x: &[T], op: ReduceOp) -> T {
    match op {
        ReduceOp::Sum => host_fold(x, op, |a, b| T::combine(ReduceOp::Sum, a, b)),
        ReduceOp::Product => host_fold(x, op, |a, b| T::combine(ReduceOp::Product, a, b)),
        ReduceOp::Min => host_fold(x, op, |a, b| T::combine(ReduceOp::Min, a, b)),
        ReduceOp::Max => host_fold(x, op, |a, b| T::combine(ReduceOp::Max, a, b)),
    }
}

fn host_fold<T: ReduceElement>(x: &[T], op: ReduceOp, f: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync) -> T {
    use rayon::prelude::*;
    let id = T::identity(op);
    let acc = x
        .par_chunks(1 << 14)
        .map(|c| {
            let mut lanes = [id; 8];
            let mut words = c.chunks_exact(8);
            for w in &mut words {
                for k in 0..8 {
                    lanes[k] = f(lanes[k], w[k].to_acc());
                }
            }
            let mut a = id;
            for &l in &lanes {
                a = f(a, l);
            }
            for &v in words.remainder() {
                a = f(a, v.to_acc());
            }
            a
        })
        .reduce(|| id, &f);
    T::from_acc(acc)
}

/// `x`'s elements reduced with `op` into `out[0]`, reusing `scratch` (no
/// allocation once `scratch` has grown to fit): the form to call in a
/// loop or inside `device.time(..)`.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::{reduce_into, ReduceOp, ReduceScratch};
///
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1u32, 2, 3, 4])?;
/// let mut out = Buffer::<u32>::zeroed(&device, 1)?;
/// let mut scratch = ReduceScratch::for_len(&device, x.len())?;
/// for _ in 0..3 {
///     reduce_into(&device, &x, ReduceOp::Product, &mut out, &mut scratch)?;
/// }
/// assert_eq!(out.read()?, [24]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::reduce` and `out` when `out`
/// is empty; `WrongDevice` when a buffer is on another device; the
/// launches' errors (`MissingFeature` for `f64`/`f16` on a device without
/// them); `OpError::Buffer` when the scratch cannot be allocated.
pub fn reduce_into<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<(), OpError> {
    reduce_with_plan(device, x, op, out, scratch, None)
}

/// [`reduce_into`] with about `target` segments in pass 1 (scalar loads;
/// the benchmark compares targets); `None`: the tuner's plan.
#[doc(hidden)]
pub fn reduce_into_segments<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
    target: Option<usize>,
) -> Result<(), OpError> {
    let plan = target.map(|segments| ReducePlan { segments, vec4: false, single: false });
    reduce_with_plan(device, x, op, out, scratch, plan)
}

/// [`reduce_into`] with `plan` (`None`: the tuner's choice among
/// [`candidates`]); a `vec4` plan where it does not fit runs as a scalar
/// one. The tests run every candidate through this.
#[doc(hidden)]
pub fn reduce_with_plan<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
    plan: Option<ReducePlan>,
) -> Result<(), OpError> {
    const OP: &str = "ops::reduce";
    check_same_device(OP, "x", device, x)?;
    check_same_device(OP, "out", device, out)?;
    if out.is_empty() {
        return Err(LaunchError::InvalidArgument {
            kernel: OP,
            arg: "out",
            problem: "needs at least 1 element".into(),
        }
        .into());
    }
    let n = x.len();
    if runs_on_host(device) {
        let r = host_reduce(host_data(OP, x)?, op);
        host_data_mut(OP, out)?[0] = r;
        return Ok(());
    }
    let plan = match plan {
        Some(p) => p,
        None => {
            let plans = candidates::<T>(device, op, n);
            let key = onekernel_runtime::tune::Key::new().element::<T>("T").value("op", op.name()).size("n", n);
            let named: Vec<(String, ReducePlan)> = plans.iter().map(|p| (p.name(), *p)).collect();
            let i = crate::tuning::choose(
                device,
                OP,
                include_str!("reduce.rs"),
                &key,
                &named,
                |(_, p), purpose| -> Result<Option<T>, OpError> {
                    run_plan(device, x, op, out, scratch, *p)?;
                    purpose.output(|| Ok(out.read_range(..1)?[0]))
                },
                |a, b| T::close(*a, *b),
            );
            plans[i]
        }
    };
    run_plan(device, x, op, out, scratch, plan)
}

fn run_plan<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
    plan: ReducePlan,
) -> Result<(), OpError> {
    let n = x.len();
    let vec4 = plan.vec4 && vec4_fits::<T>(device, op, n);
    let plan = ReducePlan { vec4, ..plan };
    let (seg, segments) = plan.split(n);
    let seg = seg_len_u32(seg)?;
    if plan.single && single_fits::<T>() {
        return run_single(device, x, op, out, scratch, (seg, segments), vec4);
    }
    let partials = scratch.partials(device, segments)?;
    if vec4 {
        launch_vec4(device, x, (0, n, true, false), partials, seg, segments)?;
    } else {
        T::launch_partials(device, op, x, partials, 0, seg, seg, segments)?;
    }
    Ok(T::launch_finish(device, op, partials, segments, out)?)
}

/// A single-pass plan ([`ReducePlan::single`]) of an `f32` reduction:
/// `segments` workgroups of `seg` elements (or `Vec4`s, `vec4`).
fn run_single<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
    (seg, segments): (u32, usize),
    vec4: bool,
) -> Result<(), OpError> {
    use std::any::Any;
    let internal = || LaunchError::Gpu {
        kernel: "ops::reduce",
        message: "internal error: a single-pass plan it cannot run".into(),
    };
    let groups = seg_len_u32(segments)?;
    let (partials, counter) = scratch.single(device, segments)?;
    let xf = (x as &dyn Any).downcast_ref::<Buffer<f32>>().ok_or_else(internal)?;
    let of = (out as &mut dyn Any).downcast_mut::<Buffer<f32>>().ok_or_else(internal)?;
    let g = Grid::blocks(segments);
    if vec4 {
        let len = xf.len();
        let x4 = xf.view_prefix_as::<Vec4>(len / 4)?;
        let (n4, tail) = (seg_len_u32(len / 4)?, seg_len_u32(len / 4 * 4)?);
        reduce_sum_vec4_single::launch(device, g, &*x4, xf, n4, seg, tail, partials, counter, of, groups)?;
    } else {
        let id = <f32 as ReduceElement>::identity(op);
        by_op!(op, |O| reduce_single_f32::launch::<O>(device, g, xf, seg, id, partials, counter, of, groups))?;
    }
    Ok(())
}

/// Pass 1 of a `vec4` plan: the sums of the segments of `seg4` vectors of
/// the `n` elements of `x` from `offset` (a multiple of 4) into
/// `partials`, both seen as the kernel's vectors and lanes (GPU buffers of
/// `f32`, `i32` or `u32`; anything else is an internal error); `tail`:
/// whether workgroup 0 adds the last `n % 4` elements (the whole-buffer
/// reduction; a scan's last segment total is never read); `reverse`:
/// whether the workgroups take the segments last first (the scan's).
pub(crate) fn launch_vec4<T: Element, A: Element>(
    device: &Device,
    x: &Buffer<T>,
    (offset, n, tail, reverse): (usize, usize, bool, bool),
    partials: &mut Buffer<A>,
    seg4: u32,
    segments: usize,
) -> Result<(), OpError> {
    let internal =
        || LaunchError::Gpu { kernel: "ops::reduce", message: "internal error: a vec4 plan it cannot run".into() };
    let (true, Some(lanes)) = (device.is_gpu(), vec4_lanes::<T>()) else {
        return Err(internal().into());
    };
    let len = x.len();
    let tail = seg_len_u32(if tail { offset + n / 4 * 4 } else { len })?;
    let (o4, n4) = (seg_len_u32(offset / 4)?, seg_len_u32(n / 4)?);
    let g = Grid::blocks(segments);
    let rev = reverse as u32;
    // Borrowed views of the same memory: a loop of calls keeps its bind
    // groups (`Buffer::view_as`).
    match lanes {
        Lanes::F32 => {
            let (xs, x4) = (x.view_as::<f32>()?, x.view_prefix_as::<Vec4>(len / 4)?);
            let mut p = partials.view_as_mut::<f32>()?;
            reduce_sum_vec4::launch(device, g, &*x4, &*xs, &mut *p, o4, n4, seg4, tail, rev)?;
        }
        Lanes::U32 => {
            let (xs, x4) = (x.view_as::<u32>()?, x.view_prefix_as::<UVec4>(len / 4)?);
            let mut p = partials.view_as_mut::<u32>()?;
            reduce_sum_uvec4::launch(device, g, &*x4, &*xs, &mut *p, o4, n4, seg4, tail, rev)?;
        }
    }
    Ok(())
}

/// The CPU executor behind `device` (for the host paths of the ops that
/// read a buffer through a kernel parameter's checks).
pub(crate) fn cpu_of(device: &Device) -> Result<&onekernel::__private::CpuDevice, LaunchError> {
    match onekernel::__private::backend(device) {
        onekernel::__private::DeviceBackend::Cpu(c) => Ok(c),
        onekernel::__private::DeviceBackend::Gpu(_) => {
            Err(LaunchError::Gpu { kernel: "ops", message: "internal error: a GPU device on the host path".into() })
        }
    }
}

/// `x`'s elements reduced with `op`, as a new 1-element buffer on `device`
/// (no read back: the result stays on the device for the next launch).
///
/// # Errors
/// As [`reduce_into`]; `OpError::Buffer` when the allocation fails.
pub fn reduce<T: ReduceElement>(device: &Device, x: &Buffer<T>, op: ReduceOp) -> Result<Buffer<T>, OpError> {
    let mut out = Buffer::zeroed(device, 1)?;
    reduce_into(device, x, op, &mut out, &mut ReduceScratch::new())?;
    Ok(out)
}

/// `x`'s elements reduced with `op`, read back to the host.
///
/// # Errors
/// As [`reduce`], and the read's error as `OpError::Buffer`.
pub fn reduce_value<T: ReduceElement>(device: &Device, x: &Buffer<T>, op: ReduceOp) -> Result<T, OpError> {
    let out = reduce(device, x, op)?;
    Ok(out.read()?[0])
}

/// The sum of `x`'s elements, read back to the host (wrapping for
/// integers; `f16` summed in `f32`).
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[0.5f64; 10])?;
/// assert_eq!(onekernel::ops::reduce::sum(&device, &x)?, 5.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`reduce_value`].
pub fn sum<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, OpError> {
    reduce_value(device, x, ReduceOp::Sum)
}

/// The product of `x`'s elements (see [`sum`]).
///
/// # Errors
/// As [`reduce_value`].
pub fn product<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, OpError> {
    reduce_value(device, x, ReduceOp::Product)
}

/// The smallest of `x`'s elements (NaN if any is NaN; `+inf`/`T::MAX` if
/// `x` is empty).
///
/// # Errors
/// As [`reduce_value`].
pub fn min<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, OpError> {
    reduce_value(device, x, ReduceOp::Min)
}

/// The largest of `x`'s elements (NaN if any is NaN; `-inf`/`T::MIN` if
/// `x` is empty).
///
/// # Errors
/// As [`reduce_value`].
pub fn max<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, OpError> {
    reduce_value(device, x, ReduceOp::Max)
}

/// `x` as a view of `cols` columns: `cols > 0` (or `x` empty) and whole
/// rows.
fn matrix<'b, T: Element>(op: &'static str, x: &'b Buffer<T>, cols: usize) -> Result<View2d<'b, T>, LaunchError> {
    if cols == 0 {
        return Err(LaunchError::InvalidArgument { kernel: op, arg: "cols", problem: "must be at least 1".into() });
    }
    if !x.len().is_multiple_of(cols) {
        return Err(LaunchError::InvalidArgument {
            kernel: op,
            arg: "x",
            problem: format!("{} elements are not whole rows of {cols} columns", x.len()),
        });
    }
    x.view_2d(x.len() / cols, cols).map_err(|e| LaunchError::InvalidArgument {
        kernel: op,
        arg: "x",
        problem: e.to_string(),
    })
}

fn check_out_len<T: Element>(op: &'static str, out: &Buffer<T>, want: usize, what: &str) -> Result<(), LaunchError> {
    if out.len() != want {
        return Err(LaunchError::InvalidArgument {
            kernel: op,
            arg: "out",
            problem: format!("has {} elements, needs {want} (one per {what})", out.len()),
        });
    }
    Ok(())
}

/// The reduction of each row of the row-major matrix `x` of `cols`
/// columns (`x.len() / cols` rows) into `out` (one element per row): one
/// workgroup per row.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::{reduce_rows_into, ReduceOp};
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1i32, 2, 3, 4, 5, 6])?;
/// let mut out = Buffer::<i32>::zeroed(&device, 3)?;
/// reduce_rows_into(&device, &x, 2, ReduceOp::Sum, &mut out)?;
/// assert_eq!(out.read()?, [3, 7, 11]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::reduce_rows` and the
/// argument: `cols` of 0, `x` not whole rows, `out` not one element per
/// row; the launch's errors.
pub fn reduce_rows_into<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    cols: usize,
    op: ReduceOp,
    out: &mut Buffer<T>,
) -> Result<(), OpError> {
    let view = matrix("ops::reduce_rows", x, cols)?;
    rows_into("ops::reduce_rows", device, view, op, out)
}

/// The reduction of each row of the view `x` (rows, columns or a block of
/// a matrix, [`View2d`]) into `out` (one element per row of the view): one
/// workgroup per row, reading only the view's elements.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::{reduce_rows_view_into, ReduceOp};
/// let device = Device::cpu();
/// // A 3 × 4 matrix; the sums of columns 1..3 of rows 1 and 2.
/// let m = Buffer::from_slice(&device, &[0i32, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23])?;
/// let block = m.view_2d(3, 4)?.slice_rows(1..)?.slice_cols(1..3)?;
/// let mut out = Buffer::<i32>::zeroed(&device, 2)?;
/// reduce_rows_view_into(&device, block, ReduceOp::Sum, &mut out)?;
/// assert_eq!(out.read()?, [23, 43]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::reduce_rows_view` and `out`
/// when it is not one element per row; `WrongDevice`; the launch's errors.
pub fn reduce_rows_view_into<T: ReduceElement>(
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
) -> Result<(), OpError> {
    rows_into("ops::reduce_rows_view", device, x, op, out)
}

/// [`reduce_rows_view_into`] into a new buffer.
///
/// # Errors
/// As [`reduce_rows_view_into`]; `OpError::Buffer` when the allocation
/// fails.
pub fn reduce_rows_view<T: ReduceElement>(
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
) -> Result<Buffer<T>, OpError> {
    let mut out = Buffer::zeroed(device, x.shape().0)?;
    reduce_rows_view_into(device, x, op, &mut out)?;
    Ok(out)
}

fn rows_into<T: ReduceElement>(
    op_name: &'static str,
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
) -> Result<(), OpError> {
    check_same_device(op_name, "x", device, x.buffer())?;
    check_same_device(op_name, "out", device, out)?;
    let (rows, _) = x.shape();
    check_out_len(op_name, out, rows, "row")?;
    if rows == 0 {
        return Ok(());
    }
    let w = Window::of(op_name, "x", x.layout())?;
    Ok(T::launch_rows(device, op, x.buffer(), w, out)?)
}

/// [`reduce_rows_into`] into a new buffer.
///
/// # Errors
/// As [`reduce_rows_into`].
pub fn reduce_rows<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    cols: usize,
    op: ReduceOp,
) -> Result<Buffer<T>, OpError> {
    let view = matrix("ops::reduce_rows", x, cols)?;
    let mut out = Buffer::zeroed(device, view.shape().0)?;
    rows_into("ops::reduce_rows", device, view, op, &mut out)?;
    Ok(out)
}

/// How the per-column reduction splits `rows` rows of `cols` columns on
/// `device`: the number of row chunks (1: one pass, one thread per column;
/// more: one thread per column and chunk, then a pass over the chunks'
/// partials), enough threads to fill a large GPU.
pub fn column_chunks(device: &Device, rows: usize, cols: usize) -> usize {
    let target: usize = if device.is_gpu() { 1 << 16 } else { 1 << 12 };
    target.div_ceil(cols.max(1)).min(rows / 32).clamp(1, 65_535)
}

/// The reduction of each column of the row-major matrix `x` of `cols`
/// columns into `out` (one element per column; the identity for a matrix
/// of no rows), with `scratch` for the partials of a tall matrix: one
/// thread per column and chunk of rows, then one per column over the
/// chunks ([`column_chunks`]). No allocation once `scratch` fits.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::{reduce_cols_into, ReduceOp, ReduceScratch};
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1i32, 2, 3, 4, 5, 6])?;
/// let mut out = Buffer::<i32>::zeroed(&device, 2)?;
/// let mut scratch = ReduceScratch::new();
/// reduce_cols_into(&device, &x, 2, ReduceOp::Max, &mut out, &mut scratch)?;
/// assert_eq!(out.read()?, [5, 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`reduce_rows_into`], naming `ops::reduce_cols` (`out` must have one
/// element per column).
pub fn reduce_cols_into<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    cols: usize,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<(), OpError> {
    let view = matrix("ops::reduce_cols", x, cols)?;
    cols_into("ops::reduce_cols", device, view, op, out, scratch)
}

/// The reduction of each column of the view `x` into `out` (one element
/// per column of the view), as [`reduce_cols_into`] does for a whole
/// matrix.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::{reduce_cols_view_into, ReduceOp, ReduceScratch};
/// let device = Device::cpu();
/// let m = Buffer::from_slice(&device, &[0i32, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23])?;
/// // The maxima of columns 2 and 3 over rows 0 and 1.
/// let block = m.view_2d(3, 4)?.slice_rows(..2)?.slice_cols(2..)?;
/// let mut out = Buffer::<i32>::zeroed(&device, 2)?;
/// reduce_cols_view_into(&device, block, ReduceOp::Max, &mut out, &mut ReduceScratch::new())?;
/// assert_eq!(out.read()?, [12, 13]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`reduce_rows_view_into`], naming `ops::reduce_cols_view`.
pub fn reduce_cols_view_into<T: ReduceElement>(
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<(), OpError> {
    cols_into("ops::reduce_cols_view", device, x, op, out, scratch)
}

/// [`reduce_cols_view_into`] into a new buffer.
///
/// # Errors
/// As [`reduce_cols_view_into`]; `OpError::Buffer` when an allocation
/// fails.
pub fn reduce_cols_view<T: ReduceElement>(
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
) -> Result<Buffer<T>, OpError> {
    let mut out = Buffer::zeroed(device, x.shape().1)?;
    reduce_cols_view_into(device, x, op, &mut out, &mut ReduceScratch::new())?;
    Ok(out)
}

fn cols_into<T: ReduceElement>(
    op_name: &'static str,
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<(), OpError> {
    check_same_device(op_name, "x", device, x.buffer())?;
    check_same_device(op_name, "out", device, out)?;
    let (rows, cols) = x.shape();
    check_out_len(op_name, out, cols, "column")?;
    if cols == 0 {
        return Ok(());
    }
    let w = Window::of(op_name, "x", x.layout())?;
    let chunks = column_chunks(device, rows, cols);
    if chunks <= 1 {
        return Ok(T::launch_cols(device, op, x.buffer(), w, out)?);
    }
    let chunk_rows = rows.div_ceil(chunks);
    let chunks = rows.div_ceil(chunk_rows);
    let partials = scratch.partials(device, chunks * cols)?;
    T::launch_cols_partial(device, op, x.buffer(), w, partials, chunk_rows as u32, chunks)?;
    Ok(T::launch_cols_finish(device, op, partials, out, w.cols, chunks)?)
}

/// [`reduce_cols_into`] into a new buffer.
///
/// # Errors
/// As [`reduce_cols_into`].
pub fn reduce_cols<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    cols: usize,
    op: ReduceOp,
) -> Result<Buffer<T>, OpError> {
    let view = matrix("ops::reduce_cols", x, cols)?;
    let mut out = Buffer::zeroed(device, cols)?;
    cols_into("ops::reduce_cols", device, view, op, &mut out, &mut ReduceScratch::new())?;
    Ok(out)
}

#[doc(hidden)]
pub use onekernel_macro::kernel as __kernel;

/// A reduction with your own combine: a module with its kernel (compiled
/// in your crate, where the combine and its helpers are) and the two-pass
/// host functions of the built-in reductions.
///
/// A library kernel cannot call a function you write (the kernel language
/// has no function values, and a `#[kernel]` is compiled where it is
/// written, with the helpers in its scope), so this macro writes the
/// reduction's kernel in your crate with your combine in it: the same
/// kernel as [`reduce_segments`] (eight accumulators per thread, a
/// shared-memory tree, two launches). The combine must be associative
/// **and commutative** (the kernel regroups and reorders elements), and
/// `identity` its identity. It is Rust in the kernel language: it may call
/// your `#[helper]`s (in scope through the module's `use super::*`) and
/// the builtins of `onekernel::prelude`.
///
/// ```
/// use onekernel::prelude::*;
///
/// // The bitwise OR of all elements, and the largest absolute value.
/// onekernel::ops::define_reduction!(pub mod any_bits: u32, |a, b| a | b);
/// onekernel::ops::define_reduction!(pub mod max_abs: f32, |a, b| a.abs().max(b.abs()));
///
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1u32, 4, 16, 4])?;
/// assert_eq!(any_bits::reduce(&device, &x, 0)?, 21);
/// let y = Buffer::from_slice(&device, &[1.5f32, -7.0, 3.0])?;
/// assert_eq!(max_abs::reduce(&device, &y, 0.0)?, 7.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The module has `segments` (the kernel), `reduce_into(device, x,
/// identity, out, partials)` (no allocation; `partials` needs
/// [`plan`]`(device, x.len()).1` elements) and `reduce(device, x,
/// identity)` (the value, read back). Unlike the built-in ops, it runs the
/// kernels on every device, `Device::cpu()` included.
#[macro_export]
macro_rules! define_reduction {
    ($vis:vis mod $name:ident : $t:tt, |$a:ident, $b:ident| $($combine:tt)*) => {
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use ::onekernel::prelude::*;

            $crate::__reduce_segments_kernel! {
                /// Reduces segment `block_id().x` of `x` into
                /// `out[block_id().x]`: the built-in reductions' kernel
                /// with this combine.
                segments: segments,
                attr: (workgroup_size = 256),
                generics: [],
                types: $t => $t => $t,
                load: |v| { v },
                store: |v| { v },
                combine: |$a, $b| { $($combine)* }
            }

            /// `x` reduced into `out[0]` in two launches, with `partials`
            /// (at least `onekernel::ops::reduce::plan(device, x.len()).1`
            /// elements) as scratch: no allocation.
            ///
            /// # Errors
            /// `LaunchError::InvalidArgument` (in `OpError::Launch`) naming
            /// the reduction and `partials` or `out` when too short; the
            /// launches' errors.
            #[allow(dead_code)]
            pub fn reduce_into(
                device: &::onekernel::Device,
                x: &::onekernel::Buffer<$t>,
                identity: $t,
                out: &mut ::onekernel::Buffer<$t>,
                partials: &mut ::onekernel::Buffer<$t>,
            ) -> ::core::result::Result<(), $crate::OpError> {
                let (seg, count) = $crate::reduce::plan(device, x.len());
                for (arg, len, need) in [("partials", partials.len(), count), ("out", out.len(), 1)] {
                    if len < need {
                        return Err(::onekernel::LaunchError::InvalidArgument {
                            kernel: concat!("ops::define_reduction!(", stringify!($name), ")"),
                            arg,
                            problem: format!("has {len} elements, needs at least {need}"),
                        }
                        .into());
                    }
                }
                let (seg, len) = (seg as u32, count as u32);
                segments::launch(device, ::onekernel::Grid::blocks(count), x, partials, 0, seg, seg, identity)?;
                segments::launch(device, ::onekernel::Grid::blocks(1), &*partials, out, 0, len, len, identity)?;
                Ok(())
            }

            /// `x` reduced, read back to the host.
            ///
            /// # Errors
            /// As `reduce_into`; a failed allocation or read as
            /// `OpError::Buffer`.
            #[allow(dead_code)]
            pub fn reduce(
                device: &::onekernel::Device,
                x: &::onekernel::Buffer<$t>,
                identity: $t,
            ) -> ::core::result::Result<$t, $crate::OpError> {
                let count = $crate::reduce::plan(device, x.len()).1;
                let mut partials = ::onekernel::Buffer::zeroed(device, count)?;
                let mut out = ::onekernel::Buffer::zeroed(device, 1)?;
                reduce_into(device, x, identity, &mut out, &mut partials)?;
                Ok(out.read()?[0])
            }
        }
    };
}
