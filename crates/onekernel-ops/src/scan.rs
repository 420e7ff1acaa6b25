//! Prefix scans: inclusive (`out[i] = x[0] ⊕ … ⊕ x[i]`) and exclusive
//! (`out[i] = x[0] ⊕ … ⊕ x[i - 1]`, the identity at 0), with any of the
//! combines of [`ReduceOp`].
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::scan;
//!
//! let device = Device::cpu();
//! let x = Buffer::from_slice(&device, &[3u32, 1, 4, 1, 5])?;
//! assert_eq!(scan::inclusive_sum(&device, &x)?.read()?, [3, 4, 8, 9, 14]);
//! assert_eq!(scan::exclusive_sum(&device, &x)?.read()?, [0, 3, 4, 8, 9]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it runs: reduce, then scan
//!
//! Two launches, and no workgroup waits for another (no decoupled
//! look-back: WebGPU gives no forward-progress guarantee between
//! workgroups, so a single-pass scan that spins on another workgroup's flag
//! can hang on some devices):
//!
//! 1. The input is cut into `G` segments of whole tiles ([`TILE`] = 1792
//!    elements in the default plan; [`plan`], [`ScanPlan`]) and each is reduced to its total
//!    ([`crate::reduce::reduce_segments`], the reduction's own kernel).
//!    Skipped when there is one segment.
//! 2. Workgroup `b` of [`scan_segments`] first reduces the totals of the
//!    segments before its own (at most `G` = about 2048 values: a few
//!    loads a thread and a shared-memory tree), then scans its segment a
//!    tile at a time: the tile is loaded coalesced (element `k * 256 +
//!    thread`) into shared memory, each thread scans its 7 consecutive
//!    elements in registers (7 is odd, so the 32 threads of a subgroup read
//!    32 different banks), the 256 thread totals are scanned
//!    (Hillis–Steele between two halves of the tile, one barrier a step),
//!    the results go back through shared memory and are stored coalesced,
//!    and the tile's total is carried into the next.
//!
//! The input is read twice and the output written once.
//!
//! On a GPU the plan is the tuner's ([`crate::tuning`], [`candidates`],
//! [`ScanPlan`]): 7, 11 or 15 elements a thread per tile (the const
//! parameters `K` and `KT = K * 256` of the kernels; 11 and 15 halve the
//! barriers per element), about 1024 or 2048 segments, and for sums of
//! `f32`, `i32` and `u32` the reduction pass reading `Vec4`s
//! ([`crate::reduce::reduce_sum_vec4`]).
//!
//! # The subgroup scan (sums of 4-byte lanes)
//!
//! For sums of `f32`, `i32` and `u32` whose offsets are multiples of 4, on
//! a GPU with subgroups of 8 to 256 lanes, step 2 can
//! instead be [`scan_sum_vec4`] / [`scan_sum_uvec4`] (plans with
//! [`ScanPlan::chunks`] > 0, the first candidates where they fit): no
//! shared-memory staging of the elements. A step covers 1, 2 or 4 chunks
//! of 1024 elements; thread `t` loads vector `t` of each chunk (coalesced
//! 16-byte loads, all in flight together, the next step's issued before
//! this step's scan), scans its 4 lanes in
//! registers, the 256 thread totals of a chunk are scanned within each
//! subgroup by shuffles (no subgroup-scan builtin in WGSL) and the
//! subgroup totals go through shared memory: one barrier a step, then
//! coalesced 16-byte stores. The reduction pass may take the segments last
//! first ([`ScanPlan::reverse`]): the start of the input, which step 2
//! reads first, is then the input read last and may still be in the GPU's
//! L2 cache. Still two launches, and still no workgroup waits for another.
//! Where the length is not a multiple of 4, the last 1 to 3 elements
//! follow in a third launch of one thread ([`scan_tail_sum`], the sums in
//! the vector kernels' order).
//!
//! # The single pass (sums of `i32` and `u32`)
//!
//! Where the subgroup scan fits and the lanes are integers, the tuner also
//! times single-pass plans ([`ScanPlan::lookback`], [`lookback`]): one
//! launch that reads the input once, each tile finding the sum of the
//! tiles before it from what they published (a decoupled look-back over a
//! window of predecessors: each subgroup's lanes read one tile each, up to
//! 256 tiles a step; tiles of 4 or 8 chunks of 1024 elements, in the
//! workgroups' order, or taken one after another from a counter by fewer
//! workgroups that keep two tiles in flight each: [`ScanPlan::ahead`]). A
//! tile that waits too long for a predecessor reduces that predecessor's
//! input itself, so no workgroup waits on another without limit: safe on
//! every backend, as the two-pass plans are, which stay the default.
//!
//! # Views
//!
//! [`scan_view_into`] scans a contiguous [`View2d`] (a range of rows of a
//! matrix, or one row) into a contiguous view of another buffer (the
//! kernels take the offsets: nothing is copied).
//!
//! # Semantics
//!
//! As the reductions ([`crate::reduce`]): integer sums and products wrap
//! (a `u32` running sum past `u32::MAX` starts again from 0), `f16`
//! accumulates in `f32` and each output is rounded once, float sums are
//! computed in the kernels' order (segments, threads, tiles), `Min`/`Max`
//! propagate NaN. The identity of an exclusive scan's first element is the
//! op's ([`ReduceElement::identity`]: `-0.0` for float sums).
//!
//! A user-supplied combine cannot be passed to the kernels (see
//! [`crate::reduce`]'s "A user-supplied combine"); copy [`scan_segments`]
//! and change its combine.
//!
//! # On the CPU executor
//!
//! On `Device::cpu()` the scan runs a host implementation (the same steps
//! over rayon's chunks, read from and written into the buffers' own memory
//! through [`Buffer::host_slice`]/[`Buffer::host_slice_mut`]), as the
//! reductions do; the kernels run on `Device::cpu_serial()` and
//! `Device::cpu_race_checked()`.

use crate::prelude::*;
use crate::reduce::{check_same_device, host_data, host_data_mut, ReduceElement, ReduceOp};
use crate::OpError;
use onekernel_runtime::{View2d, View2dMut};

pub mod lookback;

/// Elements a workgroup scans per tile: 7 per thread (an odd count, so that
/// the threads' reads of their 7 consecutive elements in shared memory hit
/// 32 different banks).
pub const TILE: usize = 7 * 256;

/// The scan kernel of one element family, written once; see the module's
/// documentation. `$in`/`$acc`: the element and accumulator types;
/// `load`/`store` convert; `combine` combines `lhs` and `rhs`.
macro_rules! scan_kernel {
    (
        $(#[$meta:meta])*
        name: $name:ident,
        attr: ($($attr:tt)*),
        generics: [$($gen:tt)*],
        types: $in:tt => $acc:tt,
        load: |$lv:ident| {$($load:tt)*},
        store: |$sv:ident| {$($store:tt)*},
        combine: |$lhs:ident, $rhs:ident| {$($combine:tt)*}
    ) => {
        $(#[$meta])*
        ///
        /// Scans `n` elements of `x` from `x_offset` into `out` from
        /// `out_offset`, in segments of `seg_len` (a multiple of [`TILE`]),
        /// one workgroup of 256 threads per segment. Workgroup `b` starts
        /// from the combine of `totals[0..b]` (the segment totals of the
        /// reduction pass; none when `totals` is shorter); `inclusive` is 1
        /// for an inclusive scan, 0 for an exclusive one.
        #[kernel($($attr)*)]
        pub fn $name<$($gen)*>(
            x: &[$in],
            out: &mut [$in],
            totals: &[$acc],
            x_offset: u32,
            out_offset: u32,
            n: u32,
            seg_len: u32,
            identity: $acc,
            inclusive: u32,
        ) {
            let tile = shared::<[$acc; KT]>();
            let tid = thread_id().x;
            let seg = block_id().x;
            // The carry into this segment: the totals of the segments
            // before it, reduced by the workgroup.
            let mut part = identity;
            let mut t = tid;
            while t < seg && t < totals.len() {
                let $lhs = part;
                let $rhs = totals[t];
                part = { $($combine)* };
                t += 256;
            }
            tile[tid] = part;
            workgroup_barrier();
            let mut stride = 128;
            while stride > 0 {
                if tid < stride {
                    let $lhs = tile[tid];
                    let $rhs = tile[tid + stride];
                    tile[tid] = { $($combine)* };
                }
                workgroup_barrier();
                stride /= 2;
            }
            let mut carry = tile[0];
            workgroup_barrier();
            let seg_start = seg * seg_len as usize;
            let seg_end = (seg_start + seg_len as usize).min(n as usize);
            let xo = x_offset as usize;
            let oo = out_offset as usize;
            let mut base = seg_start;
            while base < seg_end {
                // Coalesced loads: element `base + k * 256 + tid`.
                #[unroll]
                for k in 0..K {
                    let j = base + k * 256 + tid;
                    let mut $rhs = identity;
                    if j < seg_end {
                        let $lv = x[xo + j];
                        $rhs = { $($load)* };
                    }
                    tile[k * 256 + tid] = $rhs;
                }
                workgroup_barrier();
                // This thread's K consecutive elements, scanned in
                // registers (15: the largest K; the array's length must be
                // known when the kernel is compiled).
                let mut vals = [identity; 15];
                let mut run = identity;
                #[unroll]
                for k in 0..K {
                    let $lhs = run;
                    let $rhs = tile[tid * K + k];
                    run = { $($combine)* };
                    vals[k] = run;
                }
                workgroup_barrier();
                // The 256 thread totals, scanned (Hillis–Steele) between
                // two halves of `tile[0..512]`, one barrier a step.
                tile[tid] = run;
                workgroup_barrier();
                let mut src = 0;
                let mut offset = 1;
                while offset < 256 {
                    let mut v = tile[src + tid];
                    if tid >= offset {
                        let $lhs = tile[src + tid - offset];
                        let $rhs = v;
                        v = { $($combine)* };
                    }
                    let dst = 256 - src;
                    tile[dst + tid] = v;
                    workgroup_barrier();
                    src = dst;
                    offset *= 2;
                }
                // Everything before this thread's first element.
                let mut before = carry;
                if tid > 0 {
                    let $lhs = carry;
                    let $rhs = tile[src + tid - 1];
                    before = { $($combine)* };
                }
                let tile_total = tile[src + 255];
                workgroup_barrier();
                let mut prev = before;
                #[unroll]
                for k in 0..K {
                    let $lhs = before;
                    let $rhs = vals[k];
                    let incl = { $($combine)* };
                    if inclusive != 0 {
                        tile[tid * K + k] = incl;
                    } else {
                        tile[tid * K + k] = prev;
                    }
                    prev = incl;
                }
                workgroup_barrier();
                // Coalesced stores.
                #[unroll]
                for k in 0..K {
                    let j = base + k * 256 + tid;
                    if j < seg_end {
                        let $sv = tile[k * 256 + tid];
                        out[oo + j] = { $($store)* };
                    }
                }
                {
                    let $lhs = carry;
                    let $rhs = tile_total;
                    carry = { $($combine)* };
                }
                // Every thread has read `tile` before the next tile writes it.
                workgroup_barrier();
                base += KT;
            }
        }
    };
}

/// The float combine (as the reductions'), for the float and `f16` scans.
macro_rules! float_scan {
    ($(#[$meta:meta])* name: $name:ident, attr: ($($attr:tt)*), generics: [$($gen:tt)*],
     types: $in:tt => $acc:tt, load: |$lv:ident| {$($load:tt)*}, store: |$sv:ident| {$($store:tt)*}) => {
        scan_kernel! {
            $(#[$meta])*
            name: $name,
            attr: ($($attr)*),
            generics: [$($gen)*],
            types: $in => $acc,
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

float_scan! {
    /// Scans of float segments (`f32`, `f64`); `OP` as the reductions'.
    name: scan_segments,
    attr: (workgroup_size = 256, types = [f32, f64]),
    generics: [T: Float, const OP: u32, const K: usize, const KT: usize],
    types: T => T,
    load: |v| { v },
    store: |v| { v }
}

scan_kernel! {
    /// Scans of integer segments (`i32`, `u32`, `i64`, `u64`; sums and
    /// products wrap).
    name: scan_segments_int,
    attr: (workgroup_size = 256, types = [i32, u32, i64, u64]),
    generics: [T: Int, const OP: u32, const K: usize, const KT: usize],
    types: T => T,
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

float_scan! {
    /// Scans of `f16` segments, accumulated in `f32`.
    name: scan_segments_f16,
    attr: (workgroup_size = 256),
    generics: [const OP: u32, const K: usize, const KT: usize],
    types: f16 => f32,
    load: |v| { v.to_f32() },
    store: |v| { f16::from_f32(v) }
}

/// The subgroup scan of sums of 4-byte lanes read as vectors, written once
/// for `Vec4` (`f32`) and `UVec4` (`i32`, `u32`: two's-complement sums
/// wrap to the same bits); see the module's "The subgroup scan".
/// `|$a, $b| $add` adds two lanes (wrapping for `u32`).
macro_rules! scan_sum_vec4_kernel {
    ($(#[$meta:meta])* $name:ident, $vec:ident, $lane:ty, $zero:expr, |$a:ident, $b:ident| $add:expr) => {
        $(#[$meta])*
        ///
        /// Scans `n4` vectors of `x4` from `x_offset4` into `out4` from
        /// `out_offset4`, in segments of `seg_len4` vectors (a multiple of
        /// `256 * U`), one workgroup of 256 threads per segment, starting
        /// from the sum of `totals[0..b]` (the segment totals of the
        /// reduction pass; none when `totals` is shorter); `inclusive` is 1
        /// for an inclusive scan, 0 for an exclusive one. A step covers `U`
        /// chunks of 256 vectors: thread `t` loads vector `t` of each
        /// (coalesced 16-byte loads, `U` in flight; the next step's are
        /// issued before this step's scan), scans its 4 lanes in
        /// registers, the thread totals are scanned in subgroups (shuffles)
        /// and the subgroup totals meet in shared memory: one barrier a
        /// step (the subgroup totals alternate between two halves of
        /// `sums`). Needs subgroups of 8 lanes or more that divide 256.
        #[kernel(workgroup_size = 256)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<const U: usize>(
            x4: &[$vec],
            out4: &mut [$vec],
            totals: &[$lane],
            x_offset4: u32,
            out_offset4: u32,
            n4: u32,
            seg_len4: u32,
            inclusive: u32,
        ) {
            // Two halves of 4 chunks of at most 32 subgroup totals.
            let sums = shared::<[$lane; 256]>();
            let tid = thread_id().x;
            let seg = block_id().x;
            let lane = subgroup_invocation_id();
            let sg = subgroup_size() as usize;
            let wid = tid / sg;
            let nsg = 256 / sg;
            let seg_start = seg * seg_len4 as usize;
            let seg_end = (seg_start + seg_len4 as usize).min(n4 as usize);
            let xo = x_offset4 as usize;
            let oo = out_offset4 as usize;
            // The first step's loads, issued before the carry is summed;
            // each step issues the next one's before its own scan (the
            // identity past the end).
            let mut next = [$vec::splat($zero); 4];
            #[unroll]
            for u in 0..U {
                let j = seg_start + u * 256 + tid;
                if j < seg_end {
                    next[u] = x4[xo + j];
                }
            }
            // The carry into this segment: the totals of the segments
            // before it, eight loads a thread at once.
            let mut part = $zero;
            let mut t0 = 0;
            while t0 < seg {
                #[unroll]
                for k in 0..8 {
                    let t = t0 + k * 256 + tid;
                    if t < seg && t < totals.len() {
                        let $a = part;
                        let $b = totals[t];
                        part = $add;
                    }
                }
                t0 += 2048;
            }
            // Summed across the subgroup by shuffles (not `subgroup_add`,
            // whose identity may be `+0.0`: the sum of `-0.0`s stays `-0.0`).
            let mut off = 1u32;
            while (off as usize) < sg {
                let $a = part;
                let $b = subgroup_shuffle_xor(part, off);
                part = $add;
                off *= 2;
            }
            if lane == 0 {
                sums[wid] = part;
            }
            workgroup_barrier();
            let mut carry = $zero;
            for s in 0..nsg {
                let $a = carry;
                let $b = sums[s];
                carry = $add;
            }
            workgroup_barrier();
            let mut half = 0;
            let mut base = seg_start;
            while base < seg_end {
                let v = next;
                let after = base + U * 256;
                #[unroll]
                for u in 0..U {
                    let j = after + u * 256 + tid;
                    next[u] = $vec::splat($zero);
                    if j < seg_end {
                        next[u] = x4[xo + j];
                    }
                }
                // Each thread's totals of its 4 lanes; the thread totals
                // scanned in the subgroup (inclusive, then shifted by one
                // lane: exclusive). The lanes' own prefixes are summed again
                // at the stores, in the same order (the same bits), rather
                // than held: fewer registers, more workgroups a
                // multiprocessor.
                let mut inc = [$zero; 4];
                #[unroll]
                for u in 0..U {
                    let w = v[u];
                    inc[u] = {
                        let $a = w.x;
                        let $b = w.y;
                        let p1 = $add;
                        let $a = p1;
                        let $b = w.z;
                        let p2 = $add;
                        let $a = p2;
                        let $b = w.w;
                        $add
                    };
                }
                let mut off = 1u32;
                while (off as usize) < sg {
                    #[unroll]
                    for u in 0..U {
                        let y = subgroup_shuffle(inc[u], if lane >= off { lane - off } else { lane });
                        if lane >= off {
                            let $a = y;
                            let $b = inc[u];
                            inc[u] = $add;
                        }
                    }
                    off *= 2;
                }
                let mut exc = [$zero; 4];
                #[unroll]
                for u in 0..U {
                    let y = subgroup_shuffle(inc[u], if lane > 0 { lane - 1 } else { 0 });
                    exc[u] = if lane > 0 { y } else { $zero };
                }
                if lane as usize == sg - 1 {
                    #[unroll]
                    for u in 0..U {
                        sums[half + u * 32 + wid] = inc[u];
                    }
                }
                workgroup_barrier();
                // Chunk `u`'s vector `t` starts after `carry`, the chunks
                // before `u` and the subgroups before this one.
                #[unroll]
                for u in 0..U {
                    let mut before = $zero;
                    let mut all = $zero;
                    for s in 0..nsg {
                        let sv = sums[half + u * 32 + s];
                        if s < wid {
                            let $a = before;
                            let $b = sv;
                            before = $add;
                        }
                        let $a = all;
                        let $b = sv;
                        all = $add;
                    }
                    let pre = {
                        let $a = carry;
                        let $b = before;
                        let c = $add;
                        let $a = c;
                        let $b = exc[u];
                        $add
                    };
                    let w = v[u];
                    let p1 = {
                        let $a = w.x;
                        let $b = w.y;
                        $add
                    };
                    let p2 = {
                        let $a = p1;
                        let $b = w.z;
                        $add
                    };
                    let s0 = {
                        let $a = pre;
                        let $b = w.x;
                        $add
                    };
                    let s1 = {
                        let $a = pre;
                        let $b = p1;
                        $add
                    };
                    let s2 = {
                        let $a = pre;
                        let $b = p2;
                        $add
                    };
                    let r = if inclusive != 0 {
                        let p3 = {
                            let $a = p2;
                            let $b = w.w;
                            $add
                        };
                        let s3 = {
                            let $a = pre;
                            let $b = p3;
                            $add
                        };
                        $vec::new(s0, s1, s2, s3)
                    } else {
                        $vec::new(pre, s0, s1, s2)
                    };
                    let j = base + u * 256 + tid;
                    if j < seg_end {
                        out4[oo + j] = r;
                    }
                    let $a = carry;
                    let $b = all;
                    carry = $add;
                }
                half = 128 - half;
                base += U * 256;
            }
        }
    };
}

scan_sum_vec4_kernel! {
    /// The subgroup scan of `f32` sums read as `Vec4`s (the float sums in
    /// this kernel's order: lanes, threads, subgroups, chunks, segments).
    scan_sum_vec4, Vec4, f32, -0.0, |a, b| a + b
}

scan_sum_vec4_kernel! {
    /// The subgroup scan of `i32` and `u32` sums read as `UVec4`s (an
    /// `i32` buffer's bits: two's-complement sums wrap to the same bits).
    scan_sum_uvec4, UVec4, u32, 0, |a, b| a.wrapping_add(b)
}

/// `a + b` of two words: as `f32` bits (`float` 1) or wrapping integers.
#[helper]
fn add_words(a: u32, b: u32, float: u32) -> u32 {
    if float != 0 {
        (f32::from_bits(a) + f32::from_bits(b)).to_bits()
    } else {
        a.wrapping_add(b)
    }
}

/// The last `r` (1 to 3) elements of a sum of 4-byte lanes whose first
/// `n / 4` vectors a vector scan ([`scan_sum_vec4`], [`scan_sum_uvec4`],
/// [`lookback::lookback_sum_uvec4`]) has written, element `x_at` of `x`
/// into element `out_at` of `out` on: one thread goes on in order from the
/// inclusive sum before them (`out[out_at - 1]`, plus `x[x_at - 1]` for an
/// exclusive scan), the sums the vector kernels would have taken. `float`
/// 1: the words are `f32` bits; 0: `i32` or `u32` (sums wrap). Launch one
/// workgroup.
#[kernel(workgroup_size = 1)]
pub fn scan_tail_sum(x: &[u32], out: &mut [u32], x_at: u32, out_at: u32, r: u32, inclusive: u32, float: u32) {
    let (xa, oa) = (x_at as usize, out_at as usize);
    let mut acc = out[oa - 1];
    if inclusive == 0 {
        acc = add_words(acc, x[xa - 1], float);
    }
    for i in 0..r as usize {
        let v = x[xa + i];
        if inclusive != 0 {
            acc = add_words(acc, v, float);
            out[oa + i] = acc;
        } else {
            out[oa + i] = acc;
            acc = add_words(acc, v, float);
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The element types the scans take: those of [`ReduceElement`] (`f32`,
/// `f64`, `i32`, `u32`, `i64`, `u64`, `f16`). Sealed; each impl dispatches
/// to its kernel's `Instance`.
pub trait ScanElement: ReduceElement + sealed::Sealed {
    /// The scan pass (see [`scan_segments`]'s parameters).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_scan(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self>,
        totals: &Buffer<Self::Acc>,
        offsets: (u32, u32),
        n: u32,
        seg_len: u32,
        segments: usize,
        inclusive: bool,
        k: usize,
    ) -> Result<(), LaunchError>;
}

/// Calls `$call` with the const `$k` and `$kt` (`$k * 256`) of the
/// elements a thread scans, `k`: 7 (the default), 11 or 15.
macro_rules! by_k {
    ($k:expr, |$kc:ident, $ktc:ident| $call:expr) => {
        match $k {
            11 => {
                const $kc: usize = 11;
                const $ktc: usize = 11 * 256;
                $call
            }
            15 => {
                const $kc: usize = 15;
                const $ktc: usize = 15 * 256;
                $call
            }
            _ => {
                const $kc: usize = 7;
                const $ktc: usize = 7 * 256;
                $call
            }
        }
    };
}

macro_rules! scan_element {
    ($t:ty, $kernel:ident [$($tp:tt)*]) => {
        impl sealed::Sealed for $t {}
        impl ScanElement for $t {
            fn launch_scan(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                totals: &Buffer<Self::Acc>,
                (x_offset, out_offset): (u32, u32),
                n: u32,
                seg_len: u32,
                segments: usize,
                inclusive: bool,
                k: usize,
            ) -> Result<(), LaunchError> {
                let id = <$t as ReduceElement>::identity(op);
                let inc = inclusive as u32;
                let g = Grid::blocks(segments);
                crate::reduce::by_op!(op, |O| by_k!(k, |K, KT| $kernel::launch::<$($tp)* O, K, KT>(
                    device, g, x, out, totals, x_offset, out_offset, n, seg_len, id, inc
                )))
            }
        }
    };
}

scan_element!(f32, scan_segments[f32,]);
scan_element!(f64, scan_segments[f64,]);
scan_element!(i32, scan_segments_int[i32,]);
scan_element!(u32, scan_segments_int[u32,]);
scan_element!(i64, scan_segments_int[i64,]);
scan_element!(u64, scan_segments_int[u64,]);
scan_element!(f16, scan_segments_f16[]);

/// How the default plan of a scan splits `n` elements on `device`:
/// `(segment length, segments)`, segments of whole tiles ([`TILE`]),
/// about 2048 of them on a GPU (the tuner may choose another of
/// [`candidates`]; [`ScanScratch::for_len`] fits them all).
pub fn plan(device: &Device, n: usize) -> (usize, usize) {
    plan_for(n, if device.is_gpu() { 2048 } else { cpu_segments() })
}

fn cpu_segments() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |p| p.get())
}

/// [`plan`] for about `target` segments.
#[doc(hidden)]
pub fn plan_for(n: usize, target: usize) -> (usize, usize) {
    ScanPlan::tiles(target, 7, false).split(n)
}

/// One way to run a scan: what the tuner ([`crate::tuning`]) chooses
/// among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScanPlan {
    /// About this many segments (workgroups).
    pub segments: usize,
    /// Elements a thread scans per tile: 7 (the default), 11 or 15 (a tile
    /// of `k * 256`; 11 and 15 for 4-byte accumulators only, whose tile
    /// fits 16 KiB of shared memory).
    pub k: usize,
    /// The reduction pass reads the input as vectors
    /// ([`crate::reduce::reduce_sum_vec4`], `reduce_sum_uvec4`: sums of
    /// `f32`, `i32`, `u32` on a GPU, from an offset that is a multiple of 4).
    pub vec4: bool,
    /// 0: the tile scan ([`scan_segments`], `k` elements a thread). 1, 2
    /// or 4: the subgroup scan ([`scan_sum_uvec4`], [`scan_sum_vec4`]) with
    /// that many chunks of 1024 elements a step (segments of whole steps),
    /// after the vector reduction pass, where it fits: a sum of `f32`,
    /// `i32` or `u32` of at least 4096 elements from offsets that are
    /// multiples of 4 (the last `n % 4` by [`scan_tail_sum`]), on a GPU
    /// with subgroups of 8 to 256 lanes; a plan where it does not fit runs
    /// the tile scan (`k`, `vec4`).
    pub chunks: usize,
    /// The reduction pass takes the segments last first (subgroup plans
    /// only): the start of the input, which the scan reads first, is read
    /// last, so it may still be in the GPU's cache.
    pub reverse: bool,
    /// The single pass ([`lookback::lookback_sum_uvec4`]) with tiles of
    /// `chunks` (2, 4 or 8) chunks of 1024 elements, where it fits: where the
    /// subgroup scan fits, for sums of `i32` and `u32`; a plan where it
    /// does not fit runs the subgroup scan (`segments`), or the tile scan.
    pub lookback: bool,
    /// The single pass with about `segments` workgroups that take tiles
    /// one after another from a counter, each loading its next tile before
    /// its current one's look-back (two tiles in flight a workgroup).
    pub ahead: bool,
}

impl ScanPlan {
    /// The plan's name, as the tuning cache keeps it: `k7_s2048`,
    /// `k15_s1024_vec4`, `sub4_s2048_rev`, `lookback8`, `lookback4_ahead1024`.
    pub fn name(&self) -> String {
        if self.lookback && self.ahead {
            return format!("lookback{}_ahead{}", self.chunks, self.segments);
        }
        if self.lookback {
            return format!("lookback{}", self.chunks);
        }
        if self.chunks > 0 {
            return format!("sub{}_s{}{}", self.chunks, self.segments, if self.reverse { "_rev" } else { "" });
        }
        format!("k{}_s{}{}", self.k, self.segments, if self.vec4 { "_vec4" } else { "" })
    }

    /// A tile-scan plan (`chunks` 0, `reverse` false).
    pub fn tiles(segments: usize, k: usize, vec4: bool) -> Self {
        ScanPlan { segments, k, vec4, chunks: 0, reverse: false, lookback: false, ahead: false }
    }

    /// A subgroup-scan plan of `chunks` chunks a step (`k` 7 and `vec4`,
    /// the plan where it does not fit).
    pub fn subgroup(segments: usize, chunks: usize, reverse: bool) -> Self {
        ScanPlan { segments, k: 7, vec4: true, chunks, reverse, lookback: false, ahead: false }
    }

    /// A single-pass plan of tiles of `chunks` chunks of 1024 elements
    /// (where it does not fit: the subgroup scan of `chunks` a step, about
    /// 2048 segments).
    pub fn single_pass(chunks: usize) -> Self {
        ScanPlan { lookback: true, ..Self::subgroup(2048, chunks, true) }
    }

    /// A single-pass plan of at most `workgroups` workgroups that each take
    /// tile after tile ([`ScanPlan::ahead`]).
    pub fn single_pass_ahead(chunks: usize, workgroups: usize) -> Self {
        ScanPlan { ahead: true, segments: workgroups, ..Self::single_pass(chunks) }
    }

    /// The look-back's tiles of `n` elements: of its `n / 4` whole vectors,
    /// as the kernel counts them (the last `n % 4` are the tail's).
    fn lookback_tiles(&self, n: usize) -> usize {
        (n / 4).div_ceil(self.chunks * 256).max(1)
    }

    /// `(segment length, segments)` of `n` elements: segments of whole
    /// tiles of `k * 256` (steps of `chunks * 1024` for a subgroup plan).
    pub fn split(&self, n: usize) -> (usize, usize) {
        let tile = if self.chunks > 0 { self.chunks * 1024 } else { self.k * 256 };
        let seg = n.div_ceil(self.segments.max(1)).next_multiple_of(tile).max(tile);
        (seg, n.div_ceil(seg).max(1))
    }
}

/// Whether the vector reduction pass can run: a sum of `f32`, `i32` or
/// `u32` of at least 4096 elements from a multiple of 4, on a GPU.
fn vec4_fits<T: ScanElement>(device: &Device, op: ReduceOp, n: usize, offset: usize) -> bool {
    device.is_gpu() && op == ReduceOp::Sum && n >= 4096 && offset % 4 == 0 && crate::reduce::vec4_lanes::<T>().is_some()
}

/// Whether `device` has subgroups the subgroup scan takes: 8 to 256
/// lanes (a power of two: each divides the workgroup of 256).
fn subgroups_fit(device: &Device) -> bool {
    device.subgroup_sizes().is_some_and(|(lo, hi)| lo >= 8 && hi <= 256)
}

/// Whether the subgroup scan can run: the vector reduction pass fits, the
/// output's offset is a multiple of 4 too, and the device's subgroups fit
/// (any `n`: the last `n % 4` elements are [`scan_tail_sum`]'s).
fn subgroup_scan_fits<T: ScanElement>(
    device: &Device,
    op: ReduceOp,
    n: usize,
    (x_offset, out_offset): (usize, usize),
) -> bool {
    vec4_fits::<T>(device, op, n, x_offset) && out_offset % 4 == 0 && subgroups_fit(device)
}

/// Whether `T`'s vector lanes are integers (`i32`, `u32`): the single
/// pass's types (see [`lookback`] for why not `f32`).
fn integer_lanes<T: ScanElement>() -> bool {
    matches!(crate::reduce::vec4_lanes::<T>(), Some(crate::reduce::Lanes::U32))
}

/// Whether the single pass can run: the subgroup scan fits and the lanes
/// are integers.
fn lookback_fits<T: ScanElement>(device: &Device, op: ReduceOp, n: usize, offsets: (usize, usize)) -> bool {
    integer_lanes::<T>() && subgroup_scan_fits::<T>(device, op, n, offsets)
}

/// The plans the tuner times for a scan with `op` of `n` elements of `T`
/// from `offset` on `device`, the default first: on a GPU where it fits
/// the subgroup scan (2 or 4 chunks a step, about 1024 to 4096
/// segments, the reduction pass in either order), then tiles of 7, 11
/// and 15 elements a thread (11 and 15 where the accumulator has 4 bytes)
/// with about 1024 or 2048 segments, each also with the vector reduction
/// pass where it fits (plans that would run the same launches once); on
/// the CPU executor one plan.
pub fn candidates<T: ScanElement>(device: &Device, op: ReduceOp, n: usize, offset: usize) -> Vec<ScanPlan> {
    if !device.is_gpu() {
        return vec![ScanPlan::tiles(cpu_segments(), 7, false)];
    }
    let mut base = vec![(7, 2048), (7, 1024)];
    if std::mem::size_of::<T::Acc>() <= 4 {
        base.extend([(11, 2048), (15, 2048), (15, 1024)]);
    }
    let vec4 = vec4_fits::<T>(device, op, n, offset);
    let mut plans = Vec::new();
    if vec4 && subgroups_fit(device) {
        // The default first: 4 chunks, about 2048 segments, the reduction
        // last segment first (the best or within 3% of it on the H200 at
        // 2^24 and 2^26, 2026-12-04).
        for (chunks, segments) in [(4, 2048), (4, 1024), (2, 2048), (4, 4096)] {
            plans.push(ScanPlan::subgroup(segments, chunks, true));
            plans.push(ScanPlan::subgroup(segments, chunks, false));
        }
        if integer_lanes::<T>() {
            // The single pass (on the H200, 2026-12-05: 8 chunks a tile the
            // fastest plan at 2^24, 6-9% behind two passes at 2^26; 16
            // chunks 4-6% slower than 8; 2 slower than 4).
            plans.extend([ScanPlan::single_pass(8), ScanPlan::single_pass(4)]);
            // Workgroups that keep two tiles in flight (not yet measured on
            // the H200: the single pass above is bound by a tile's loads,
            // scan, look-back and stores in sequence). 1024 workgroups: more
            // than an H200 holds at once (the rest start at the end and find
            // no tile left).
            plans.extend([ScanPlan::single_pass_ahead(4, 1024), ScanPlan::single_pass_ahead(8, 1024)]);
        }
    }
    for (k, segments) in base {
        plans.push(ScanPlan::tiles(segments, k, false));
        if vec4 {
            plans.push(ScanPlan::tiles(segments, k, true));
        }
    }
    let mut seen = Vec::new();
    plans.retain(|p| {
        let (seg, count) = p.split(n);
        // One segment: no reduction pass, so its loads and order do not
        // matter.
        let s = (p.k, p.chunks, seg, count, p.vec4 && count > 1, p.reverse && count > 1, p.lookback, p.ahead);
        let new = !seen.contains(&s);
        seen.push(s);
        new
    });
    plans
}

/// Scratch space of a scan: the segment totals, and the single pass's
/// tile words. Reused by [`scan_into`] across calls (grown when a larger
/// input needs more).
pub struct ScanScratch<T: ScanElement> {
    totals: Option<Buffer<T::Acc>>,
    /// The single pass's words ([`lookback`]) and the epoch of the last
    /// launch that wrote them.
    state: Option<(Buffer<u32>, u32)>,
    /// The single pass's `max_spin`.
    spin: u32,
}

impl<T: ScanElement> Default for ScanScratch<T> {
    fn default() -> Self {
        ScanScratch { totals: None, state: None, spin: lookback::DEFAULT_SPIN }
    }
}

impl<T: ScanElement> ScanScratch<T> {
    /// Empty scratch; the first [`scan_into`] allocates it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Scratch for scans of up to `n` elements on `device`, allocated now.
    ///
    /// # Errors
    /// `OpError::Buffer` when the allocation fails.
    pub fn for_len(device: &Device, n: usize) -> Result<Self, OpError> {
        let mut s = Self::default();
        let plans = candidates::<T>(device, ReduceOp::Sum, n, 0);
        s.totals(device, plans.iter().map(|p| p.split(n).1).max().unwrap_or(1))?;
        if let Some(tiles) = plans.iter().filter(|p| p.lookback).map(|p| p.lookback_tiles(n)).max() {
            s.lookback_state(device, tiles)?;
        }
        Ok(s)
    }

    /// The same scratch, its single pass waiting `spin` reads for a
    /// predecessor (0: never; each tile reduces every predecessor's input
    /// itself): the tests run the fallback with it.
    #[doc(hidden)]
    pub fn with_spin(self, spin: u32) -> Self {
        ScanScratch { spin, ..self }
    }

    /// The single pass's words for `tiles` tiles and the epoch of the next
    /// launch: new (zeroed) ones when they are too few, of another device,
    /// or when the epochs start again (a word of an earlier cycle could
    /// carry the same epoch).
    fn lookback_state(&mut self, device: &Device, tiles: usize) -> Result<(&mut Buffer<u32>, u32), OpError> {
        // The two counters of the plans that take tiles one after another,
        // then the tiles' words.
        let words = 2 + 2 * tiles;
        let fits = self.state.as_ref().is_some_and(|(b, epoch)| {
            b.len() >= words && b.device().id() == device.id() && *epoch < lookback::MAX_EPOCH
        });
        if !fits {
            self.state = None;
        }
        let (buffer, epoch) = match &mut self.state {
            Some(s) => s,
            slot => slot.insert((Buffer::zeroed(device, words)?, 0)),
        };
        *epoch += 1;
        Ok((buffer, *epoch))
    }

    fn totals(&mut self, device: &Device, len: usize) -> Result<&mut Buffer<T::Acc>, OpError> {
        let fits = self.totals.as_ref().is_some_and(|b| b.len() >= len && b.device().id() == device.id());
        if !fits {
            self.totals = None;
        }
        match &mut self.totals {
            Some(b) => Ok(b),
            slot => Ok(slot.insert(Buffer::zeroed(device, len)?)),
        }
    }
}

/// Inclusive (`out[i] = x[0] ⊕ … ⊕ x[i]`) or exclusive (`out[i] = x[0] ⊕ …
/// ⊕ x[i - 1]`) scan of `x` with `op` into `out` (as long as `x`), reusing
/// `scratch`: no allocation once `scratch` fits, the form for loops and
/// `device.time(..)`.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::reduce::ReduceOp;
/// use onekernel::ops::scan::{scan_into, ScanScratch};
///
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[5i32, 3, 8, 1])?;
/// let mut out = Buffer::<i32>::zeroed(&device, 4)?;
/// let mut scratch = ScanScratch::for_len(&device, 4)?;
/// scan_into(&device, &x, ReduceOp::Max, true, &mut out, &mut scratch)?;
/// assert_eq!(out.read()?, [5, 5, 8, 8]);
/// scan_into(&device, &x, ReduceOp::Min, false, &mut out, &mut scratch)?;
/// assert_eq!(out.read()?, [i32::MAX, 5, 3, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::scan` and `out` when the
/// lengths differ; `WrongDevice` for a buffer of another device; the
/// launches' errors; `OpError::Buffer` when the scratch cannot be
/// allocated.
pub fn scan_into<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
) -> Result<(), OpError> {
    scan_whole(device, x, op, inclusive, out, scratch, None)
}

/// The scan of a contiguous view of a buffer (a range of rows of a matrix,
/// or one row: [`View2d`] with rows as long as its stride) into a
/// contiguous view of as many elements of `out`: no copy of either range.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::{reduce::ReduceOp, scan::{scan_view_into, ScanScratch}};
///
/// let device = Device::cpu();
/// // A 3 × 2 matrix: the inclusive sum of rows 1 and 2 into rows 0 and 1 of `out`.
/// let m = Buffer::from_slice(&device, &[9u32, 9, 1, 2, 3, 4])?;
/// let mut out = Buffer::<u32>::zeroed(&device, 6)?;
/// let mut rows = out.view_2d_mut(3, 2)?.slice_rows(..2)?;
/// scan_view_into(&device, m.view_2d(3, 2)?.slice_rows(1..)?, ReduceOp::Sum, true, &mut rows, &mut ScanScratch::new())?;
/// assert_eq!(out.read()?, [1, 3, 6, 10, 0, 0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::scan_view` and `x` or `out`
/// when a view is not contiguous or `out` holds another number of
/// elements; as [`scan_into`] otherwise.
pub fn scan_view_into<T: ScanElement>(
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut View2dMut<'_, T>,
    scratch: &mut ScanScratch<T>,
) -> Result<(), OpError> {
    scan_impl("ops::scan_view", device, x, op, inclusive, out, scratch, None)
}

/// [`scan_into`] with about `target` segments (the benchmark compares
/// targets).
#[doc(hidden)]
pub fn scan_into_segments<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
    target: usize,
) -> Result<(), OpError> {
    scan_whole(device, x, op, inclusive, out, scratch, Some(ScanPlan::tiles(target, 7, false)))
}

/// [`scan_into`] with `plan` (one that does not fit runs with 7 elements a
/// thread, scalar loads): the tests run every candidate through this.
///
/// # Errors
/// As [`scan_into`].
#[doc(hidden)]
pub fn scan_with_plan<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
    plan: ScanPlan,
) -> Result<(), OpError> {
    scan_whole(device, x, op, inclusive, out, scratch, Some(plan))
}

/// The scan of the whole of `x` into `out` (as long), with `plan` or the
/// tuner's: [`scan_into`] and the benchmark's and tests' forms.
fn scan_whole<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
    plan: Option<ScanPlan>,
) -> Result<(), OpError> {
    let n = x.len();
    let bad = |e: onekernel_runtime::BufferError| LaunchError::InvalidArgument {
        kernel: "ops::scan",
        arg: "x",
        problem: e.to_string(),
    };
    let xv = x.view_2d(1, n).map_err(bad)?;
    if out.len() != n {
        check_same_device("ops::scan", "x", device, x)?;
        check_same_device("ops::scan", "out", device, out)?;
        return Err(LaunchError::InvalidArgument {
            kernel: "ops::scan",
            arg: "out",
            problem: format!("has {} elements, needs {n} (one per element of `x`)", out.len()),
        }
        .into());
    }
    let mut ov = out.view_2d_mut(1, n).map_err(bad)?;
    scan_impl("ops::scan", device, xv, op, inclusive, &mut ov, scratch, plan)
}

#[allow(clippy::too_many_arguments)]
fn scan_impl<T: ScanElement>(
    op_name: &'static str,
    device: &Device,
    x: View2d<'_, T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut View2dMut<'_, T>,
    scratch: &mut ScanScratch<T>,
    plan: Option<ScanPlan>,
) -> Result<(), OpError> {
    let (xl, ol) = (x.layout(), out.layout());
    let (out_buf, _) = out.parts();
    check_same_device(op_name, "x", device, x.buffer())?;
    check_same_device(op_name, "out", device, out_buf)?;
    for (arg, l) in [("x", xl), ("out", ol)] {
        if !l.is_contiguous() {
            return Err(LaunchError::InvalidArgument {
                kernel: op_name,
                arg,
                problem: format!(
                    "a view of {} rows of {} columns with row stride {} is not contiguous: a scan takes whole rows (or one row)",
                    l.rows, l.cols, l.row_stride
                ),
            }
            .into());
        }
    }
    let n = xl.len();
    if ol.len() != n {
        return Err(LaunchError::InvalidArgument {
            kernel: op_name,
            arg: "out",
            problem: format!("has {} elements, needs {n} (one per element of `x`)", ol.len()),
        }
        .into());
    }
    if n == 0 {
        return Ok(());
    }
    if crate::reduce::runs_on_host(device) {
        let input = &host_data(op_name, x.buffer())?[xl.offset..xl.offset + n];
        let output = &mut host_data_mut(op_name, out_buf)?[ol.offset..ol.offset + n];
        match op {
            ReduceOp::Sum => host_scan(input, output, op, inclusive, |a, b| T::combine(ReduceOp::Sum, a, b)),
            ReduceOp::Product => host_scan(input, output, op, inclusive, |a, b| T::combine(ReduceOp::Product, a, b)),
            ReduceOp::Min => host_scan(input, output, op, inclusive, |a, b| T::combine(ReduceOp::Min, a, b)),
            ReduceOp::Max => host_scan(input, output, op, inclusive, |a, b| T::combine(ReduceOp::Max, a, b)),
        }
        return Ok(());
    }
    let wx = crate::reduce::Window::of(op_name, "x", xl)?;
    let wo = crate::reduce::Window::of(op_name, "out", ol)?;
    let plan = match plan {
        Some(p) => p,
        None => {
            let plans = candidates::<T>(device, op, n, xl.offset);
            let key = onekernel_runtime::tune::Key::new()
                .element::<T>("T")
                .value("op", op.name())
                .value("aligned", xl.offset % 4 == 0)
                .size("n", n);
            let named: Vec<(String, ScanPlan)> = plans.iter().map(|p| (p.name(), *p)).collect();
            let range = ol.offset..ol.offset + n;
            let i = crate::tuning::choose(
                device,
                "ops::scan",
                include_str!("scan.rs"),
                &key,
                &named,
                |(_, p), purpose| -> Result<Option<Vec<T>>, OpError> {
                    run_plan(device, (x.buffer(), wx), op, inclusive, (&mut *out_buf, wo), scratch, (n, *p))?;
                    purpose.output(|| Ok(out_buf.read_range(range.clone())?))
                },
                |a, b| a.len() == b.len() && a.iter().zip(b).all(|(&a, &b)| T::close(a, b)),
            );
            plans[i]
        }
    };
    run_plan(device, (x.buffer(), wx), op, inclusive, (out_buf, wo), scratch, (n, plan))
}

/// The two launches of `plan` (the reduction pass skipped for one segment).
fn run_plan<T: ScanElement>(
    device: &Device,
    (x, wx): (&Buffer<T>, crate::reduce::Window),
    op: ReduceOp,
    inclusive: bool,
    (out, wo): (&mut Buffer<T>, crate::reduce::Window),
    scratch: &mut ScanScratch<T>,
    (n, plan): (usize, ScanPlan),
) -> Result<(), OpError> {
    let offsets = (wx.offset as usize, wo.offset as usize);
    if plan.lookback && matches!(plan.chunks, 2 | 4 | 8) && lookback_fits::<T>(device, op, n, offsets) {
        launch_lookback(device, x, out, scratch, offsets, n, inclusive, plan)?;
        return launch_tail(device, x, out, offsets, n, inclusive);
    }
    let vec4 = plan.vec4 && vec4_fits::<T>(device, op, n, wx.offset as usize);
    // 11 and 15 (tiles past 16 KiB of 8-byte values) only for 4-byte
    // accumulators; any other `k` is 7.
    let k = match plan.k {
        11 | 15 if std::mem::size_of::<T::Acc>() <= 4 => plan.k,
        _ => 7,
    };
    let chunks = match plan.chunks {
        1 | 2 | 4 if subgroup_scan_fits::<T>(device, op, n, offsets) => plan.chunks,
        _ => 0,
    };
    let plan = ScanPlan { k, vec4, chunks, reverse: plan.reverse && chunks > 0, lookback: false, ahead: false, ..plan };
    let (seg, segments) = plan.split(n);
    // `n` is at most the end of the view, checked by `Window::of`.
    let (seg, n32) = (seg as u32, n as u32);
    let totals = scratch.totals(device, segments)?;
    if segments > 1 {
        if vec4 {
            let shape = (wx.offset as usize, n, false, plan.reverse);
            crate::reduce::launch_vec4(device, x, shape, totals, seg / 4, segments)?;
        } else {
            T::launch_partials(device, op, x, totals, wx.offset, seg, seg, segments)?;
        }
    }
    if chunks > 0 {
        launch_subgroup_scan(device, x, out, totals, offsets, (n, seg as usize, segments), inclusive, chunks)?;
        return launch_tail(device, x, out, offsets, n, inclusive);
    }
    // One segment: no totals (the kernel reads `totals[0..0]`).
    Ok(T::launch_scan(device, op, x, out, totals, (wx.offset, wo.offset), n32, seg, segments, inclusive, plan.k)?)
}

/// The subgroup scan ([`scan_sum_vec4`], [`scan_sum_uvec4`]) of the `n`
/// elements of `x` from `offsets.0` into `out` from `offsets.1`, both seen
/// as vectors, in `segments` segments of `seg` elements, `chunks` chunks
/// a step ([`subgroup_scan_fits`] holds: anything else is an internal
/// error).
#[allow(clippy::too_many_arguments)]
fn launch_subgroup_scan<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    out: &mut Buffer<T>,
    totals: &Buffer<T::Acc>,
    (x_offset, out_offset): (usize, usize),
    (n, seg, segments): (usize, usize, usize),
    inclusive: bool,
    chunks: usize,
) -> Result<(), OpError> {
    use crate::reduce::Lanes;
    let internal =
        || LaunchError::Gpu { kernel: "ops::scan", message: "internal error: a subgroup plan it cannot run".into() };
    let Some(lanes) = crate::reduce::vec4_lanes::<T>() else {
        return Err(internal().into());
    };
    let u32_of = |v: usize| u32::try_from(v).map_err(|_| internal());
    let (xo4, oo4, n4, seg4) = (u32_of(x_offset / 4)?, u32_of(out_offset / 4)?, u32_of(n / 4)?, u32_of(seg / 4)?);
    let (len, out_len) = (x.len(), out.len());
    let g = Grid::blocks(segments);
    let inc = inclusive as u32;
    macro_rules! go {
        ($kernel:ident, $vec:ty, $lane:ty) => {{
            let x4 = x.view_prefix_as::<$vec>(len / 4)?;
            let t = totals.view_as::<$lane>()?;
            let mut o4 = out.view_prefix_as_mut::<$vec>(out_len / 4)?;
            match chunks {
                1 => $kernel::launch::<1>(device, g, &*x4, &mut *o4, &*t, xo4, oo4, n4, seg4, inc)?,
                2 => $kernel::launch::<2>(device, g, &*x4, &mut *o4, &*t, xo4, oo4, n4, seg4, inc)?,
                4 => $kernel::launch::<4>(device, g, &*x4, &mut *o4, &*t, xo4, oo4, n4, seg4, inc)?,
                _ => return Err(internal().into()),
            }
        }};
    }
    match lanes {
        Lanes::F32 => go!(scan_sum_vec4, Vec4, f32),
        Lanes::U32 => go!(scan_sum_uvec4, UVec4, u32),
    }
    Ok(())
}

/// The single pass ([`lookback::lookback_sum_uvec4`]) of the `n` elements
/// of `x` from `offsets.0` into `out` from `offsets.1`, both seen as
/// `UVec4`s, tiles of `plan.chunks` chunks of 1024 elements
/// ([`lookback_fits`] holds: anything else is an internal error).
#[allow(clippy::too_many_arguments)]
fn launch_lookback<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
    (x_offset, out_offset): (usize, usize),
    n: usize,
    inclusive: bool,
    plan: ScanPlan,
) -> Result<(), OpError> {
    let internal =
        || LaunchError::Gpu { kernel: "ops::scan", message: "internal error: a single-pass plan it cannot run".into() };
    let u32_of = |v: usize| u32::try_from(v).map_err(|_| internal());
    let (xo4, oo4, n4) = (u32_of(x_offset / 4)?, u32_of(out_offset / 4)?, u32_of(n / 4)?);
    let tiles = plan.lookback_tiles(n);
    let spin = scratch.spin;
    let (state, epoch) = scratch.lookback_state(device, tiles)?;
    let (len, out_len) = (x.len(), out.len());
    let x4 = x.view_prefix_as::<UVec4>(len / 4)?;
    let mut o4 = out.view_prefix_as_mut::<UVec4>(out_len / 4)?;
    let inc = inclusive as u32;
    use lookback::lookback_sum_uvec4 as k;
    if plan.ahead {
        let g = Grid::blocks(tiles.min(plan.segments.max(1)));
        match plan.chunks {
            2 => k::launch::<2, 1>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
            4 => k::launch::<4, 1>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
            8 => k::launch::<8, 1>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
            _ => return Err(internal().into()),
        }
        return Ok(());
    }
    let g = Grid::blocks(tiles);
    match plan.chunks {
        2 => k::launch::<2, 0>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
        4 => k::launch::<4, 0>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
        8 => k::launch::<8, 0>(device, g, &*x4, &mut *o4, state, xo4, oo4, n4, inc, epoch, spin)?,
        _ => return Err(internal().into()),
    }
    Ok(())
}

/// The last `n % 4` elements of a vector scan (the subgroup scan, the
/// single pass) of the `n` elements of `x` from `offsets.0` into `out` from
/// `offsets.1` ([`scan_tail_sum`]; nothing when `n` is a multiple of 4).
fn launch_tail<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    out: &mut Buffer<T>,
    (x_offset, out_offset): (usize, usize),
    n: usize,
    inclusive: bool,
) -> Result<(), OpError> {
    let (whole, r) = (n / 4 * 4, n % 4);
    if r == 0 {
        return Ok(());
    }
    let internal =
        || LaunchError::Gpu { kernel: "ops::scan", message: "internal error: a tail of a scan it cannot run".into() };
    let u32_of = |v: usize| u32::try_from(v).map_err(|_| internal());
    let float = matches!(crate::reduce::vec4_lanes::<T>(), Some(crate::reduce::Lanes::F32)) as u32;
    let (xw, mut ow) = (x.view_as::<u32>()?, out.view_as_mut::<u32>()?);
    let (xa, oa) = (u32_of(x_offset + whole)?, u32_of(out_offset + whole)?);
    scan_tail_sum::launch(device, Grid::blocks(1), &*xw, &mut *ow, xa, oa, r as u32, inclusive as u32, float)?;
    Ok(())
}

/// The host implementation on the parallel CPU executor: the same steps
/// over chunks of 64 Ki elements, straight into the output buffer's
/// memory ([`Buffer::host_slice_mut`]); the combine `f` chosen once.
fn host_scan<T: ScanElement>(
    x: &[T],
    out: &mut [T],
    op: ReduceOp,
    inclusive: bool,
    f: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync,
) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    let id = T::identity(op);
    let totals: Vec<T::Acc> = x.par_chunks(CHUNK).map(|c| c.iter().fold(id, |a, &v| f(a, v.to_acc()))).collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut acc = id;
    for t in totals {
        offsets.push(acc);
        acc = f(acc, t);
    }
    out.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).zip(offsets).for_each(|((o, chunk), mut acc)| {
        for (o, &v) in o.iter_mut().zip(chunk) {
            let next = f(acc, v.to_acc());
            *o = T::from_acc(if inclusive { next } else { acc });
            acc = next;
        }
    });
}

/// [`scan_into`] into a new buffer.
///
/// # Errors
/// As [`scan_into`]; `OpError::Buffer` when an allocation fails.
pub fn scan<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
) -> Result<Buffer<T>, OpError> {
    let mut out = Buffer::zeroed(device, x.len())?;
    scan_into(device, x, op, inclusive, &mut out, &mut ScanScratch::new())?;
    Ok(out)
}

/// The inclusive prefix sum of `x` (wrapping for integers), as a new
/// buffer.
///
/// # Errors
/// As [`scan`].
pub fn inclusive_sum<T: ScanElement>(device: &Device, x: &Buffer<T>) -> Result<Buffer<T>, OpError> {
    scan(device, x, ReduceOp::Sum, true)
}

/// The exclusive prefix sum of `x` (`0` first; `-0.0` for floats, see
/// [`ReduceElement::identity`]), as a new buffer.
///
/// # Errors
/// As [`scan`].
pub fn exclusive_sum<T: ScanElement>(device: &Device, x: &Buffer<T>) -> Result<Buffer<T>, OpError> {
    scan(device, x, ReduceOp::Sum, false)
}
