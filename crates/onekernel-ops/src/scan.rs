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
//! Three launches, and no workgroup waits for another (no decoupled
//! look-back: WebGPU gives no forward-progress guarantee between
//! workgroups, so a single-pass scan that spins on another workgroup's flag
//! can hang on some devices):
//!
//! 1. The buffer is cut into `G` segments (multiples of 2048 elements) and
//!    each is reduced to its total ([`crate::reduce::reduce_segments`], the
//!    reduction's own kernel).
//! 2. One workgroup scans the `G` totals (exclusive): each segment's
//!    offset.
//! 3. Workgroup `b` scans segment `b` ([`scan_segments`]), 2048 elements
//!    at a time: each thread scans its 8 consecutive elements in registers,
//!    the 256 thread totals are scanned in shared memory (Hillis–Steele),
//!    and the running carry (the offset, then each tile's total) is
//!    combined in front.
//!
//! The input is read twice and the output written once.
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
//! On `Device::cpu()` the scan runs a host implementation (the same three
//! steps over rayon's chunks, into a host vector the scratch keeps, then
//! one copy into `out`), as the reductions do; the kernels run on
//! `Device::cpu_serial()` and `Device::cpu_race_checked()`. It is not
//! within 2× of the same steps written with rayon over plain slices (about
//! 5× on 2 cores at 2^24, `cargo bench -p onekernel-ops --bench ops --
//! --cpu`): the runtime gives the library no `&mut [T]` view of a CPU
//! buffer, so the result is copied once more.

use crate::prelude::*;
use crate::reduce::{buffer_error, plan, runs_on_host, ReduceElement, ReduceOp};

/// The kernel of step 3 (and, on the totals, of step 2) for one element
/// family; see the module's documentation.
macro_rules! scan_family {
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
        /// Segment `b` is `x[b * seg_len .. min((b + 1) * seg_len,
        /// x.len())]` (`seg_len` any length; tiles of 2048); launch one workgroup
        /// per segment. The scan of segment `b` starts from `offsets[b]`
        /// (the identity where `offsets` is shorter); `inclusive` is 1 for
        /// an inclusive scan, 0 for an exclusive one.
        #[kernel($($attr)*)]
        pub fn $name<$($gen)*>(
            x: &[$in],
            out: &mut [$in],
            offsets: &[$acc],
            seg_len: u32,
            identity: $acc,
            inclusive: u32,
        ) {
            let sums = shared::<[$acc; 256]>();
            let tid = thread_id().x;
            let seg = block_id().x;
            let len = x.len();
            let seg_start = seg * seg_len as usize;
            let seg_end = (seg_start + seg_len as usize).min(len);
            let mut carry = identity;
            if seg < offsets.len() {
                carry = offsets[seg];
            }
            let mut base = seg_start;
            while base < seg_end {
                // This thread's 8 consecutive elements, scanned in registers.
                let first = base + tid * 8;
                let mut vals = [identity; 8];
                let mut run = identity;
                #[unroll]
                for k in 0..8 {
                    let j = first + k;
                    let mut $rhs = identity;
                    if j < seg_end {
                        let $lv = x[j];
                        $rhs = { $($load)* };
                    }
                    let $lhs = run;
                    run = { $($combine)* };
                    vals[k] = run;
                }
                // The 256 thread totals, scanned in shared memory.
                sums[tid] = run;
                workgroup_barrier();
                let mut offset = 1;
                while offset < 256 {
                    let later = sums[tid];
                    let mut earlier = identity;
                    if tid >= offset {
                        earlier = sums[tid - offset];
                    }
                    workgroup_barrier();
                    if tid >= offset {
                        let $lhs = earlier;
                        let $rhs = later;
                        sums[tid] = { $($combine)* };
                    }
                    workgroup_barrier();
                    offset *= 2;
                }
                // Everything before this thread's first element.
                let mut before = carry;
                if tid > 0 {
                    let $lhs = carry;
                    let $rhs = sums[tid - 1];
                    before = { $($combine)* };
                }
                let mut prev = before;
                #[unroll]
                for k in 0..8 {
                    let j = first + k;
                    let $lhs = before;
                    let $rhs = vals[k];
                    let incl = { $($combine)* };
                    if j < seg_end {
                        let mut $sv = prev;
                        if inclusive != 0 {
                            $sv = incl;
                        }
                        out[j] = { $($store)* };
                    }
                    prev = incl;
                }
                {
                    let $lhs = carry;
                    let $rhs = sums[255];
                    carry = { $($combine)* };
                }
                // Every thread has read `sums` before the next tile writes it.
                workgroup_barrier();
                base += 2048;
            }
        }
    };
}

scan_family! {
    /// Scans of float segments (`f32`, `f64`); `OP` as the reductions'.
    name: scan_segments,
    attr: (workgroup_size = 256, types = [f32, f64]),
    generics: [T: Float, const OP: u32],
    types: T => T,
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

scan_family! {
    /// Scans of integer segments (`i32`, `u32`, `i64`, `u64`; sums and
    /// products wrap).
    name: scan_segments_int,
    attr: (workgroup_size = 256, types = [i32, u32, i64, u64]),
    generics: [T: Int, const OP: u32],
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

scan_family! {
    /// Scans of `f16` segments, accumulated in `f32`.
    name: scan_segments_f16,
    attr: (workgroup_size = 256),
    generics: [const OP: u32],
    types: f16 => f32,
    load: |v| { v.to_f32() },
    store: |v| { f16::from_f32(v) },
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

mod sealed {
    pub trait Sealed {}
}

/// The element types the scans take: those of [`ReduceElement`] (`f32`,
/// `f64`, `i32`, `u32`, `i64`, `u64`, `f16`). Sealed; each impl dispatches
/// to its kernel's `Instance`.
pub trait ScanElement: ReduceElement + sealed::Sealed {
    /// Step 3 on `x` (segments of `seg_len`, from `offsets`).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn launch_scan(
        device: &Device,
        op: ReduceOp,
        x: &Buffer<Self>,
        out: &mut Buffer<Self>,
        offsets: &Buffer<Self::Acc>,
        seg_len: u32,
        segments: usize,
        inclusive: bool,
    ) -> Result<(), LaunchError>;
    /// Step 2: the exclusive scan of the totals, in one segment.
    #[doc(hidden)]
    fn launch_totals(
        device: &Device,
        op: ReduceOp,
        totals: &Buffer<Self::Acc>,
        offsets: &mut Buffer<Self::Acc>,
        none: &Buffer<Self::Acc>,
        count: usize,
    ) -> Result<(), LaunchError>;
    /// A view of the CPU buffer `out` as the output of step 3.
    #[doc(hidden)]
    fn output_kernel() -> &'static onekernel_runtime::abi::KernelInfo;
}

macro_rules! scan_element {
    (@info $kernel:ident []) => {
        &$kernel::KERNEL
    };
    (@info $kernel:ident [$t:ty,]) => {
        $kernel::kernel_info::<$t>()
    };
    ($t:ty, $kernel:ident [$($tp:tt)*], $totals_kernel:ident [$($ttp:tt)*]) => {
        impl sealed::Sealed for $t {}
        impl ScanElement for $t {
            fn launch_scan(
                device: &Device,
                op: ReduceOp,
                x: &Buffer<$t>,
                out: &mut Buffer<$t>,
                offsets: &Buffer<Self::Acc>,
                seg_len: u32,
                segments: usize,
                inclusive: bool,
            ) -> Result<(), LaunchError> {
                let id = <$t as ReduceElement>::identity(op);
                let inc = inclusive as u32;
                let g = Grid::blocks(segments);
                crate::reduce::by_op!(op, |O| $kernel::launch::<$($tp)* O>(device, g, x, out, offsets, seg_len, id, inc))
            }
            fn launch_totals(
                device: &Device,
                op: ReduceOp,
                totals: &Buffer<Self::Acc>,
                offsets: &mut Buffer<Self::Acc>,
                none: &Buffer<Self::Acc>,
                count: usize,
            ) -> Result<(), LaunchError> {
                let id = <$t as ReduceElement>::identity(op);
                let len = count.max(1) as u32;
                crate::reduce::by_op!(op, |O| $totals_kernel::launch::<$($ttp)* O>(
                    device,
                    Grid::blocks(1),
                    totals,
                    offsets,
                    none,
                    len,
                    id,
                    0
                ))
            }
            fn output_kernel() -> &'static onekernel_runtime::abi::KernelInfo {
                scan_element!(@info $kernel [$($tp)*])
            }
        }
    };
}

scan_element!(f32, scan_segments[f32,], scan_segments[f32,]);
scan_element!(f64, scan_segments[f64,], scan_segments[f64,]);
scan_element!(i32, scan_segments_int[i32,], scan_segments_int[i32,]);
scan_element!(u32, scan_segments_int[u32,], scan_segments_int[u32,]);
scan_element!(i64, scan_segments_int[i64,], scan_segments_int[i64,]);
scan_element!(u64, scan_segments_int[u64,], scan_segments_int[u64,]);
scan_element!(f16, scan_segments_f16[], scan_segments[f32,]);

/// Scratch space of a scan: the segment totals and offsets. Reused by
/// [`scan_into`] across calls (grown when a larger input needs more).
pub struct ScanScratch<T: ScanElement> {
    totals: Option<Buffer<T::Acc>>,
    offsets: Option<Buffer<T::Acc>>,
    none: Option<Buffer<T::Acc>>,
    /// The host implementation's output, copied into `out` in one write.
    host: Vec<T>,
}

impl<T: ScanElement> Default for ScanScratch<T> {
    fn default() -> Self {
        ScanScratch { totals: None, offsets: None, none: None, host: Vec::new() }
    }
}

/// `slot` holding a buffer of at least `len` elements on `device`.
fn ensure<E: onekernel_runtime::Element>(
    slot: &mut Option<Buffer<E>>,
    device: &Device,
    len: usize,
) -> Result<(), LaunchError> {
    let fits = slot.as_ref().is_some_and(|b| b.len() >= len && b.device().id() == device.id());
    if !fits {
        *slot = Some(Buffer::zeroed(device, len).map_err(|e| buffer_error("ops::scan", e))?);
    }
    Ok(())
}

impl<T: ScanElement> ScanScratch<T> {
    /// Empty scratch; the first [`scan_into`] allocates it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Scratch for scans of up to `n` elements on `device`, allocated now.
    ///
    /// # Errors
    /// `LaunchError::Gpu` naming `ops::scan` when an allocation fails.
    pub fn for_len(device: &Device, n: usize) -> Result<Self, LaunchError> {
        let mut s = Self::default();
        s.ensure(device, plan(device, n).1)?;
        Ok(s)
    }

    fn ensure(&mut self, device: &Device, segments: usize) -> Result<(), LaunchError> {
        ensure(&mut self.totals, device, segments)?;
        ensure(&mut self.offsets, device, segments)?;
        ensure(&mut self.none, device, 0)
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
/// launches' errors.
pub fn scan_into<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
    out: &mut Buffer<T>,
    scratch: &mut ScanScratch<T>,
) -> Result<(), LaunchError> {
    const OP: &str = "ops::scan";
    for (arg, id, name) in [("x", x.device().id(), x.device().name()), ("out", out.device().id(), out.device().name())]
    {
        if id != device.id() {
            return Err(LaunchError::WrongDevice {
                kernel: OP,
                arg,
                buffer_device: name,
                launch_device: device.name(),
            });
        }
    }
    let n = x.len();
    if out.len() != n {
        return Err(LaunchError::InvalidArgument {
            kernel: OP,
            arg: "out",
            problem: format!("has {} elements, needs {n} (one per element of `x`)", out.len()),
        });
    }
    if n == 0 {
        return Ok(());
    }
    if runs_on_host(device) {
        let cpu = crate::reduce::cpu_of(device)?;
        let input = onekernel::__private::cpu_slice(x, T::input_kernel(), 0, cpu)?;
        let host = &mut scratch.host;
        host.resize(n, <T as bytemuck::Zeroable>::zeroed());
        match op {
            ReduceOp::Sum => host_scan(input, host, op, inclusive, |a, b| T::combine(ReduceOp::Sum, a, b)),
            ReduceOp::Product => host_scan(input, host, op, inclusive, |a, b| T::combine(ReduceOp::Product, a, b)),
            ReduceOp::Min => host_scan(input, host, op, inclusive, |a, b| T::combine(ReduceOp::Min, a, b)),
            ReduceOp::Max => host_scan(input, host, op, inclusive, |a, b| T::combine(ReduceOp::Max, a, b)),
        }
        return out.write(host).map_err(|e| buffer_error(OP, e));
    }
    let (seg, segments) = plan(device, n);
    let seg = seg as u32; // at most n, which the launches check against the binding size
    scratch.ensure(device, segments)?;
    let (Some(totals), Some(offsets), Some(none)) = (&mut scratch.totals, &mut scratch.offsets, &scratch.none) else {
        return Err(LaunchError::Gpu { kernel: OP, message: "internal error: no scratch".into() });
    };
    if segments > 1 {
        T::launch_partials(device, op, x, totals, seg, segments)?;
        T::launch_totals(device, op, totals, offsets, none, segments)?;
        T::launch_scan(device, op, x, out, offsets, seg, segments, inclusive)
    } else {
        T::launch_scan(device, op, x, out, none, seg, segments, inclusive)
    }
}

/// The host implementation on the parallel CPU executor: the same three
/// steps over chunks of 64 Ki elements, into `out` (the scratch's host
/// vector, written to the buffer in one copy: the runtime gives the
/// library no `&mut [T]` view of a CPU buffer, and a store per element
/// through its shared view is slower still); the combine `f` chosen once.
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
/// As [`scan_into`]; `LaunchError::Gpu` naming `ops::scan` when an
/// allocation fails.
pub fn scan<T: ScanElement>(
    device: &Device,
    x: &Buffer<T>,
    op: ReduceOp,
    inclusive: bool,
) -> Result<Buffer<T>, LaunchError> {
    let mut out = Buffer::zeroed(device, x.len()).map_err(|e| buffer_error("ops::scan", e))?;
    scan_into(device, x, op, inclusive, &mut out, &mut ScanScratch::new())?;
    Ok(out)
}

/// The inclusive prefix sum of `x` (wrapping for integers), as a new
/// buffer.
///
/// # Errors
/// As [`scan`].
pub fn inclusive_sum<T: ScanElement>(device: &Device, x: &Buffer<T>) -> Result<Buffer<T>, LaunchError> {
    scan(device, x, ReduceOp::Sum, true)
}

/// The exclusive prefix sum of `x` (`0` first; `-0.0` for floats, see
/// [`ReduceElement::identity`]), as a new buffer.
///
/// # Errors
/// As [`scan`].
pub fn exclusive_sum<T: ScanElement>(device: &Device, x: &Buffer<T>) -> Result<Buffer<T>, LaunchError> {
    scan(device, x, ReduceOp::Sum, false)
}
