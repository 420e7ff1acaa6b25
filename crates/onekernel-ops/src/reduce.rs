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
//! `G` is about 2048 on a GPU (a few waves of workgroups on a large GPU),
//! so the second launch reads a few KiB.
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
//! On `Device::cpu()` the whole-buffer reduction runs a host
//! implementation (rayon's `par_chunks` with the same combine) instead of
//! the kernels, so that the op keeps within 2× of `par_iter().sum()`: the
//! kernels run by the phase executor, one invocation at a time per
//! workgroup, which a vectorised rayon loop outruns (`cargo bench -p
//! onekernel-ops --bench ops -- --cpu` times the op, the kernels and the
//! rayon idiom side by side). The kernels still run
//! on `Device::cpu_serial()` and `Device::cpu_race_checked()`, where the
//! tests compare them with plain Rust. The per-row and per-column
//! reductions run their kernels on every device.

use crate::prelude::*;
use onekernel_runtime::Element;

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

/// The kernel family of one element type: a whole-segment reduction
/// (`reduce_segments`: pass 1 and 2 of the whole-buffer reduction, and the
/// per-row reduction) and a per-column one. `$in`/`$acc`/`$out` are the
/// element types read, accumulated and written; `load`/`store` convert;
/// `combine` is the combine of `lhs` and `rhs` for the const parameter `OP`.
macro_rules! reduce_family {
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
        $(#[$meta])*
        ///
        /// Segment `b` is `x[b * seg_len .. min((b + 1) * seg_len, x.len())]`
        /// (`seg_len` any length; the whole-buffer reduction uses multiples
        /// of 2048); launch with one workgroup of 256 threads per segment
        /// (`Grid::blocks(segments)`); `out[b]` receives the reduction of
        /// segment `b` with `identity` for an empty one.
        #[kernel($($attr)*)]
        pub fn $segments<$($gen)*>(x: &[$in], out: &mut [$out], seg_len: u32, identity: $acc) {
            let tree = shared::<[$acc; 256]>();
            let tid = thread_id().x;
            let seg = block_id().x;
            let len = x.len();
            let seg_start = seg * seg_len as usize;
            let seg_end = (seg_start + seg_len as usize).min(len);
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

        /// The reduction of each column of each chunk of `chunk_rows` rows
        /// of the row-major `rows × cols` matrix `x` (`rows = x.len() /
        /// cols`) into `out[chunk * cols + col]`: one thread per column and
        /// chunk (`Grid::threads([cols, chunks])`), walking down its column
        /// four rows at a time; neighbouring threads read neighbouring
        /// elements.
        #[kernel($($attr)*)]
        pub fn $columns<$($gen)*>(x: &[$in], out: &mut [$out], cols: u32, chunk_rows: u32, identity: $acc) {
            let col = global_id().x;
            let chunk = global_id().y;
            let cols = cols as usize;
            let slot = chunk * cols + col;
            if col < cols && slot < out.len() {
                let rows = x.len() / cols;
                let first = chunk * chunk_rows as usize;
                let end = (first + chunk_rows as usize).min(rows);
                let mut acc = [identity; 4];
                let mut row = first;
                while row < end {
                    #[unroll]
                    for k in 0..4 {
                        let r = row + k;
                        let mut $rhs = identity;
                        if r < end {
                            let $lv = x[r * cols + col];
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

reduce_family! {
    /// The reduction of each segment of `x` (floats: `f32`, `f64`): the
    /// kernel of the whole-buffer and per-row reductions. `OP`: 0 sum, 1
    /// product, 2 min, 3 max (NaN-propagating).
    segments: reduce_segments,
    columns: reduce_columns,
    attr: (workgroup_size = 256, types = [f32, f64]),
    generics: [T: Float, const OP: u32],
    types: T => T => T,
    load: |v| { v },
    store: |v| { v },
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

reduce_family! {
    /// The reduction of each segment of `x` (integers: `i32`, `u32`; sums
    /// and products wrap). `OP`: 0 sum, 1 product, 2 min, 3 max.
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

/// The `f32` combine of the `f16` families, as the float family's.
macro_rules! f16_family {
    ($(#[$meta:meta])* $segments:ident, $columns:ident, $in:tt => $out:tt, load: |$lv:ident| {$($load:tt)*}, store: |$sv:ident| {$($store:tt)*}) => {
        reduce_family! {
            $(#[$meta])*
            segments: $segments,
            columns: $columns,
            attr: (workgroup_size = 256),
            generics: [const OP: u32],
            types: $in => f32 => $out,
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

f16_family! {
    /// `f16` rows and columns reduced in `f32`, written as `f16`.
    reduce_segments_f16, reduce_columns_f16, f16 => f16,
    load: |v| { v.to_f32() },
    store: |v| { f16::from_f32(v) }
}
f16_family! {
    /// Pass 1 of an `f16` whole-buffer reduction: `f16` in, `f32` partials.
    reduce_segments_f16_f32, reduce_columns_f16_f32, f16 => f32,
    load: |v| { v.to_f32() },
    store: |v| { v }
}
f16_family! {
    /// Pass 2 of an `f16` whole-buffer reduction: `f32` partials in, the
    /// `f16` result out.
    reduce_segments_f32_f16, reduce_columns_f32_f16, f32 => f16,
    load: |v| { v },
    store: |v| { f16::from_f32(v) }
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

/// The element types the reductions take: `f32`, `f64`, `i32`, `u32` and
/// `f16` (accumulated in `f32`). Sealed; each impl dispatches to its
/// kernels' `Instance`.
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
    /// Pass 1 (segments of `x` into accumulators).
    #[doc(hidden)]
    fn launch_partials(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self::Acc>,
        seg_len: u32,
        segments: usize,
    ) -> Result<(), LaunchError>;
    /// Pass 2 (one segment of accumulators into the result).
    #[doc(hidden)]
    fn launch_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<Self::Acc>,
        count: usize,
        out: &mut Buffer<Self>,
    ) -> Result<(), LaunchError>;
    /// One workgroup per row.
    #[doc(hidden)]
    fn launch_rows(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self>,
        cols: u32,
        rows: usize,
    ) -> Result<(), LaunchError>;
    /// One thread per column and chunk of `chunk_rows` rows, into
    /// accumulators (`chunks × cols`).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_cols_partial(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self::Acc>,
        cols: u32,
        chunk_rows: u32,
        chunks: usize,
    ) -> Result<(), LaunchError>;
    /// The first `chunks` rows of accumulators reduced per column.
    #[doc(hidden)]
    fn launch_cols_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<Self::Acc>,
        out: &mut Buffer<Self>,
        cols: u32,
        chunks: usize,
    ) -> Result<(), LaunchError>;
    /// One thread per column, all rows.
    #[doc(hidden)]
    fn launch_cols(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self>,
        cols: u32,
        rows: usize,
    ) -> Result<(), LaunchError>;
    /// The kernel whose parameter 0 (`x: &[Self]`) views a CPU buffer.
    #[doc(hidden)]
    fn input_kernel() -> &'static onekernel_runtime::abi::KernelInfo;
}

macro_rules! generic_element {
    ($t:ty, $segments:ident, $columns:ident, identity: |$op:ident| $identity:expr, combine: $combine:expr) => {
        impl sealed::Sealed for $t {}
        impl ReduceElement for $t {
            type Acc = $t;
            fn identity($op: ReduceOp) -> $t {
                $identity
            }
            fn combine(op: ReduceOp, a: $t, b: $t) -> $t {
                let f: fn(ReduceOp, $t, $t) -> $t = $combine;
                f(op, a, b)
            }
            fn to_acc(self) -> $t {
                self
            }
            fn from_acc(acc: $t) -> $t {
                acc
            }
            fn launch_partials(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                seg_len: u32,
                segments: usize,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                by_op!(op, |O| $segments::launch::<$t, O>(device, Grid::blocks(segments), x, out, seg_len, id))
            }
            fn launch_finish(
                device: &Device,
                op: ReduceOp,
                partials: &Buffer<$t>,
                count: usize,
                out: &mut Buffer<$t>,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                let len = seg_len_u32(count)?;
                by_op!(op, |O| $segments::launch::<$t, O>(device, Grid::blocks(1), partials, out, len, id))
            }
            fn launch_rows(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                cols: u32,
                rows: usize,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                by_op!(op, |O| $segments::launch::<$t, O>(device, Grid::blocks(rows), x, out, cols, id))
            }
            fn launch_cols_partial(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                cols: u32,
                chunk_rows: u32,
                chunks: usize,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                let g = Grid::threads([cols as usize, chunks]);
                by_op!(op, |O| $columns::launch::<$t, O>(device, g, x, out, cols, chunk_rows, id))
            }
            fn launch_cols_finish(
                device: &Device,
                op: ReduceOp,
                partials: &Buffer<$t>,
                out: &mut Buffer<$t>,
                cols: u32,
                chunks: usize,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                let (g, rows) = (Grid::threads([cols as usize, 1]), chunks as u32);
                by_op!(op, |O| $columns::launch::<$t, O>(device, g, partials, out, cols, rows, id))
            }
            fn launch_cols(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                cols: u32,
                rows: usize,
            ) -> Result<(), LaunchError> {
                let id = Self::identity(op);
                let (g, rows) = (Grid::threads([cols as usize, 1]), rows.max(1) as u32);
                by_op!(op, |O| $columns::launch::<$t, O>(device, g, x, out, cols, rows, id))
            }
            fn input_kernel() -> &'static onekernel_runtime::abi::KernelInfo {
                $segments::kernel_info::<$t>()
            }
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
            }
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
            }
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
    fn identity(op: ReduceOp) -> f32 {
        <f32 as ReduceElement>::identity(op)
    }
    fn combine(op: ReduceOp, a: f32, b: f32) -> f32 {
        <f32 as ReduceElement>::combine(op, a, b)
    }
    fn to_acc(self) -> f32 {
        self.to_f32()
    }
    fn from_acc(acc: f32) -> f16 {
        f16::from_f32(acc)
    }
    fn launch_partials(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<f16>,
        out: &mut Buffer<f32>,
        seg_len: u32,
        segments: usize,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        by_op!(op, |O| reduce_segments_f16_f32::launch::<O>(device, Grid::blocks(segments), x, out, seg_len, id))
    }
    fn launch_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<f32>,
        count: usize,
        out: &mut Buffer<f16>,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        let len = seg_len_u32(count)?;
        by_op!(op, |O| reduce_segments_f32_f16::launch::<O>(device, Grid::blocks(1), partials, out, len, id))
    }
    fn launch_rows(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<f16>,
        out: &mut Buffer<f16>,
        cols: u32,
        rows: usize,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        by_op!(op, |O| reduce_segments_f16::launch::<O>(device, Grid::blocks(rows), x, out, cols, id))
    }
    fn launch_cols_partial(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<f16>,
        out: &mut Buffer<f32>,
        cols: u32,
        chunk_rows: u32,
        chunks: usize,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        let g = Grid::threads([cols as usize, chunks]);
        by_op!(op, |O| reduce_columns_f16_f32::launch::<O>(device, g, x, out, cols, chunk_rows, id))
    }
    fn launch_cols_finish(
        device: &Device,
        op: ReduceOp,
        partials: &Buffer<f32>,
        out: &mut Buffer<f16>,
        cols: u32,
        chunks: usize,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        let (g, rows) = (Grid::threads([cols as usize, 1]), chunks as u32);
        by_op!(op, |O| reduce_columns_f32_f16::launch::<O>(device, g, partials, out, cols, rows, id))
    }
    fn launch_cols(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<f16>,
        out: &mut Buffer<f16>,
        cols: u32,
        rows: usize,
    ) -> Result<(), LaunchError> {
        let id = Self::identity(op);
        let (g, rows) = (Grid::threads([cols as usize, 1]), rows.max(1) as u32);
        by_op!(op, |O| reduce_columns_f16::launch::<O>(device, g, x, out, cols, rows, id))
    }
    fn input_kernel() -> &'static onekernel_runtime::abi::KernelInfo {
        &reduce_segments_f16::KERNEL
    }
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

/// A buffer error (allocation, read) as the op's `LaunchError`.
pub(crate) fn buffer_error(op: &'static str, e: onekernel_runtime::BufferError) -> LaunchError {
    LaunchError::Gpu { kernel: op, message: e.to_string() }
}

/// How the whole-buffer reduction splits `n` elements on `device`:
/// `(segment length, segments)`.
pub fn plan(device: &Device, n: usize) -> (usize, usize) {
    // Enough workgroups to fill a large GPU a few times over; on the CPU
    // executor, a few per core.
    let target = if device.is_gpu() { 2048 } else { 4 * std::thread::available_parallelism().map_or(1, |p| p.get()) };
    let seg = n.div_ceil(target).next_multiple_of(STEP).max(STEP);
    (seg, n.div_ceil(seg).max(1))
}

/// Scratch space of a whole-buffer reduction: the per-workgroup partials.
/// Reused by [`reduce_into`] across calls (grown when a larger input needs
/// more).
pub struct ReduceScratch<T: ReduceElement> {
    partials: Option<Buffer<T::Acc>>,
}

impl<T: ReduceElement> Default for ReduceScratch<T> {
    fn default() -> Self {
        ReduceScratch { partials: None }
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
    /// `LaunchError::Gpu` naming `ops::reduce` when the allocation fails.
    pub fn for_len(device: &Device, n: usize) -> Result<Self, LaunchError> {
        let mut s = Self::default();
        s.partials(device, plan(device, n).1)?;
        Ok(s)
    }

    fn partials(&mut self, device: &Device, len: usize) -> Result<&mut Buffer<T::Acc>, LaunchError> {
        let fits = self.partials.as_ref().is_some_and(|p| p.len() >= len && p.device().id() == device.id());
        if !fits {
            self.partials = Some(Buffer::zeroed(device, len).map_err(|e| buffer_error("ops::reduce", e))?);
        }
        // Just set when it did not fit.
        self.partials.as_mut().ok_or_else(|| LaunchError::Gpu { kernel: "ops::reduce", message: "no scratch".into() })
    }
}

/// Whether `device` runs an op's host implementation instead of its
/// kernels: the parallel CPU executor (`Device::cpu()`), where the kernels
/// are slower than rayon; never on a GPU, a serial or a race-checked CPU
/// device (where the kernels run, as the tests do).
pub fn runs_on_host(device: &Device) -> bool {
    device.is_cpu() && !device.is_race_checked() && !device.name().contains("(serial")
}

fn check_same_device<T: Element>(
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
/// them).
pub fn reduce_into<T: ReduceElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    out: &mut Buffer<T>,
    scratch: &mut ReduceScratch<T>,
) -> Result<(), LaunchError> {
    const OP: &str = "ops::reduce";
    check_same_device(OP, "x", device, x)?;
    check_same_device(OP, "out", device, out)?;
    if out.is_empty() {
        return Err(LaunchError::InvalidArgument {
            kernel: OP,
            arg: "out",
            problem: "needs at least 1 element".into(),
        });
    }
    let n = x.len();
    if runs_on_host(device) {
        let input = onekernel::__private::cpu_slice(x, T::input_kernel(), 0, cpu_of(device)?)?;
        let r = host_reduce(input, op);
        return out.write_range(0, &[r]).map_err(|e| buffer_error(OP, e));
    }
    let (seg, segments) = plan(device, n);
    let seg = seg_len_u32(seg)?;
    let partials = scratch.partials(device, segments)?;
    T::launch_partials(device, op, x, partials, seg, segments)?;
    T::launch_finish(device, op, partials, segments, out)
}

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
/// As [`reduce_into`]; `LaunchError::Gpu` naming `ops::reduce` when the
/// allocation fails.
pub fn reduce<T: ReduceElement>(device: &Device, x: &Buffer<T>, op: ReduceOp) -> Result<Buffer<T>, LaunchError> {
    let mut out = Buffer::zeroed(device, 1).map_err(|e| buffer_error("ops::reduce", e))?;
    reduce_into(device, x, op, &mut out, &mut ReduceScratch::new())?;
    Ok(out)
}

/// `x`'s elements reduced with `op`, read back to the host.
///
/// # Errors
/// As [`reduce`], and the read's error as `LaunchError::Gpu`.
pub fn reduce_value<T: ReduceElement>(device: &Device, x: &Buffer<T>, op: ReduceOp) -> Result<T, LaunchError> {
    let out = reduce(device, x, op)?;
    let v = out.read().map_err(|e| buffer_error("ops::reduce", e))?;
    Ok(v[0])
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
pub fn sum<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, LaunchError> {
    reduce_value(device, x, ReduceOp::Sum)
}

/// The product of `x`'s elements (see [`sum`]).
///
/// # Errors
/// As [`reduce_value`].
pub fn product<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, LaunchError> {
    reduce_value(device, x, ReduceOp::Product)
}

/// The smallest of `x`'s elements (NaN if any is NaN; `+inf`/`T::MAX` if
/// `x` is empty).
///
/// # Errors
/// As [`reduce_value`].
pub fn min<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, LaunchError> {
    reduce_value(device, x, ReduceOp::Min)
}

/// The largest of `x`'s elements (NaN if any is NaN; `-inf`/`T::MIN` if
/// `x` is empty).
///
/// # Errors
/// As [`reduce_value`].
pub fn max<T: ReduceElement>(device: &Device, x: &Buffer<T>) -> Result<T, LaunchError> {
    reduce_value(device, x, ReduceOp::Max)
}

/// Checks the shape of a 2-D reduction: `x.len() == rows * cols` with
/// `cols > 0` (or `x` empty) and `out.len() == want`; returns `(rows, cols)`.
fn shape_2d<T: Element>(op: &'static str, x: &Buffer<T>, cols: usize) -> Result<(usize, u32), LaunchError> {
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
    let c = u32::try_from(cols).map_err(|_| LaunchError::InvalidArgument {
        kernel: op,
        arg: "cols",
        problem: format!("{cols} is more than a kernel can index"),
    })?;
    Ok((x.len() / cols, c))
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
) -> Result<(), LaunchError> {
    const OP: &str = "ops::reduce_rows";
    check_same_device(OP, "x", device, x)?;
    check_same_device(OP, "out", device, out)?;
    let (rows, c) = shape_2d(OP, x, cols)?;
    check_out_len(OP, out, rows, "row")?;
    if rows == 0 {
        return Ok(());
    }
    T::launch_rows(device, op, x, out, c, rows)
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
) -> Result<Buffer<T>, LaunchError> {
    let (rows, _) = shape_2d("ops::reduce_rows", x, cols)?;
    let mut out = Buffer::zeroed(device, rows).map_err(|e| buffer_error("ops::reduce_rows", e))?;
    reduce_rows_into(device, x, cols, op, &mut out)?;
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
) -> Result<(), LaunchError> {
    const OP: &str = "ops::reduce_cols";
    check_same_device(OP, "x", device, x)?;
    check_same_device(OP, "out", device, out)?;
    let (rows, c) = shape_2d(OP, x, cols)?;
    check_out_len(OP, out, cols, "column")?;
    let chunks = column_chunks(device, rows, cols);
    if chunks <= 1 {
        return T::launch_cols(device, op, x, out, c, rows);
    }
    let chunk_rows = rows.div_ceil(chunks);
    let chunks = rows.div_ceil(chunk_rows);
    let partials = scratch.partials(device, chunks * cols)?;
    T::launch_cols_partial(device, op, x, partials, c, chunk_rows as u32, chunks)?;
    T::launch_cols_finish(device, op, partials, out, c, chunks)
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
) -> Result<Buffer<T>, LaunchError> {
    shape_2d("ops::reduce_cols", x, cols)?;
    let mut out = Buffer::zeroed(device, cols).map_err(|e| buffer_error("ops::reduce_cols", e))?;
    reduce_cols_into(device, x, cols, op, &mut out, &mut ReduceScratch::new())?;
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
/// kernel as [`reduce_segments`] (four accumulators per thread, a
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

            /// Reduces segment `block_id().x` of `x` (`seg_len` elements)
            /// into `out[block_id().x]`.
            #[$crate::reduce::__kernel(workgroup_size = 256)]
            pub fn segments(x: &[$t], out: &mut [$t], seg_len: u32, identity: $t) {
                let tree = shared::<[$t; 256]>();
                let tid = thread_id().x;
                let seg = block_id().x;
                let len = x.len();
                let seg_start = seg * seg_len as usize;
                let seg_end = (seg_start + seg_len as usize).min(len);
                let mut acc = [identity; 8];
                let mut base = seg_start + tid;
                while base + 7 * 256 < seg_end {
                    #[unroll]
                    for k in 0..8 {
                        let $a = acc[k];
                        let $b = x[base + k * 256];
                        acc[k] = { $($combine)* };
                    }
                    base += 2048;
                }
                while base < seg_end {
                    let $a = acc[0];
                    let $b = x[base];
                    acc[0] = { $($combine)* };
                    base += 256;
                }
                let mut total = acc[0];
                #[unroll]
                for k in 1..8 {
                    let $a = total;
                    let $b = acc[k];
                    total = { $($combine)* };
                }
                tree[tid] = total;
                workgroup_barrier();
                let mut stride = 128;
                while stride > 0 {
                    if tid < stride {
                        let $a = tree[tid];
                        let $b = tree[tid + stride];
                        tree[tid] = { $($combine)* };
                    }
                    workgroup_barrier();
                    stride /= 2;
                }
                if tid == 0 && seg < out.len() {
                    out[seg] = tree[0];
                }
            }

            /// `x` reduced into `out[0]` in two launches, with `partials`
            /// (at least `onekernel::ops::reduce::plan(device, x.len()).1`
            /// elements) as scratch: no allocation.
            ///
            /// # Errors
            /// `LaunchError::InvalidArgument` naming the reduction and
            /// `partials` or `out` when too short; the launches' errors.
            #[allow(dead_code)]
            pub fn reduce_into(
                device: &::onekernel::Device,
                x: &::onekernel::Buffer<$t>,
                identity: $t,
                out: &mut ::onekernel::Buffer<$t>,
                partials: &mut ::onekernel::Buffer<$t>,
            ) -> ::core::result::Result<(), ::onekernel::LaunchError> {
                let (seg, count) = $crate::reduce::plan(device, x.len());
                for (arg, len, need) in [("partials", partials.len(), count), ("out", out.len(), 1)] {
                    if len < need {
                        return Err(::onekernel::LaunchError::InvalidArgument {
                            kernel: concat!("ops::define_reduction!(", stringify!($name), ")"),
                            arg,
                            problem: format!("has {len} elements, needs at least {need}"),
                        });
                    }
                }
                segments::launch(device, ::onekernel::Grid::blocks(count), x, partials, seg as u32, identity)?;
                segments::launch(device, ::onekernel::Grid::blocks(1), &*partials, out, count as u32, identity)
            }

            /// `x` reduced, read back to the host.
            ///
            /// # Errors
            /// As `reduce_into`; a failed allocation or read as
            /// `LaunchError::Gpu`.
            #[allow(dead_code)]
            pub fn reduce(
                device: &::onekernel::Device,
                x: &::onekernel::Buffer<$t>,
                identity: $t,
            ) -> ::core::result::Result<$t, ::onekernel::LaunchError> {
                let what = concat!("ops::define_reduction!(", stringify!($name), ")");
                let gpu = |e: ::onekernel::BufferError| ::onekernel::LaunchError::Gpu { kernel: what, message: e.to_string() };
                let count = $crate::reduce::plan(device, x.len()).1;
                let mut partials = ::onekernel::Buffer::zeroed(device, count).map_err(gpu)?;
                let mut out = ::onekernel::Buffer::zeroed(device, 1).map_err(gpu)?;
                reduce_into(device, x, identity, &mut out, &mut partials)?;
                Ok(out.read().map_err(gpu)?[0])
            }
        }
    };
}
