//! Histograms of `u32` values: `counts[v]` is the number of elements equal
//! to `v`, for `v < bins` (values `>= bins` are not counted, as
//! `torch.histc` leaves out values outside its range).
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::histogram;
//!
//! let device = Device::cpu();
//! let values = Buffer::from_slice(&device, &[0u32, 3, 3, 1, 9, 3])?;
//! // 9 is past the 4 bins: not counted.
//! assert_eq!(histogram::histogram(&device, &values, 4)?.read()?, [1, 1, 0, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it runs
//!
//! Up to [`SHARED_BINS`] bins, each workgroup counts its segment of the
//! values into a private histogram of shared-memory atomics
//! ([`histogram_shared`]: contention stays inside the workgroup), then
//! adds its non-zero bins to the global counts with one atomic each. Past
//! that, every value is one atomic add on the global counts
//! ([`histogram_global`]: many bins spread the values thinly, so atomics
//! rarely collide). On a GPU the tuner also times
//! [`histogram_global4`] (four values a thread read as a `UVec4`) against
//! either ([`candidates`]). Counts wrap past `u32::MAX`.
//!
//! # On the CPU executor
//!
//! On `Device::cpu()` a host implementation runs (rayon: a private
//! histogram per chunk, added up), as for [`crate::reduce`]; the kernels
//! run on `Device::cpu_serial()` and `Device::cpu_race_checked()`.

use crate::prelude::*;
use crate::reduce::{host_data, host_data_mut, runs_on_host};
use crate::tuning::Purpose;
use crate::OpError;

/// The most bins the shared-memory kernel holds (16 KiB of `AtomicU32`,
/// WebGPU's guaranteed workgroup storage).
pub const SHARED_BINS: usize = 4096;

/// Counts `values` into `counts` (the first `bins` of them) through a
/// private histogram per workgroup (`bins <= 4096`). Segment `b` of
/// `seg_len` values per workgroup; `counts` must start at zero (or at the
/// counts to add to).
#[kernel(workgroup_size = 256)]
pub fn histogram_shared(values: &[u32], counts: &[AtomicU32], bins: u32, seg_len: u32) {
    // Zeroed when the workgroup starts (on every device).
    let local = shared::<[AtomicU32; 4096]>();
    let tid = thread_id().x;
    let seg = block_id().x;
    let len = values.len();
    let seg_start = seg * seg_len as usize;
    let seg_end = (seg_start + seg_len as usize).min(len);
    let mut base = seg_start + tid;
    while base < seg_end {
        #[unroll]
        for k in 0..4 {
            let j = base + k * 256;
            if j < seg_end {
                let v = values[j];
                if v < bins {
                    local[v as usize].fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        base += 1024;
    }
    workgroup_barrier();
    let mut bin = tid;
    while bin < bins as usize {
        let c = local[bin].load(Ordering::Relaxed);
        if c > 0 {
            counts[bin].fetch_add(c, Ordering::Relaxed);
        }
        bin += 256;
    }
}

/// Counts `values` into `counts` (`bins` of them) with one global atomic
/// add per value: one thread per value.
#[kernel(workgroup_size = 256)]
pub fn histogram_global(values: &[u32], counts: &[AtomicU32], bins: u32) {
    let i = global_id().x;
    if i < values.len() {
        let v = values[i];
        if v < bins {
            counts[v as usize].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// [`histogram_global`] with four values a thread, read as one `UVec4`:
/// `values4` is the first `values.len() / 4` quadruples of `values` (the
/// same memory, seen twice), and the first threads also take the last
/// `values.len() % 4` values. A quarter of the threads and load
/// instructions, four atomics in flight a thread: for many bins, where
/// every value is an atomic on the global counts and the atomics' rate is
/// what bounds the kernel. Launch `max(values.len() / 4, 4)` threads.
#[kernel(workgroup_size = 256)]
pub fn histogram_global4(values4: &[UVec4], values: &[u32], counts: &[AtomicU32], bins: u32) {
    let i = global_id().x;
    if i < values4.len() {
        let v = values4[i];
        if v.x < bins {
            counts[v.x as usize].fetch_add(1, Ordering::Relaxed);
        }
        if v.y < bins {
            counts[v.y as usize].fetch_add(1, Ordering::Relaxed);
        }
        if v.z < bins {
            counts[v.z as usize].fetch_add(1, Ordering::Relaxed);
        }
        if v.w < bins {
            counts[v.w as usize].fetch_add(1, Ordering::Relaxed);
        }
    }
    let rest = values4.len() * 4 + i;
    if i < 4 && rest < values.len() {
        let v = values[rest];
        if v < bins {
            counts[v as usize].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One way to run a histogram: what the tuner ([`crate::tuning`]) chooses
/// among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistogramPlan {
    /// [`histogram_shared`]: a private histogram per workgroup (up to
    /// [`SHARED_BINS`] bins).
    Shared,
    /// [`histogram_global`]: an atomic on the global counts per value,
    /// one value a thread.
    Global,
    /// [`histogram_global4`]: the same, four values a thread read as a
    /// `UVec4` (on a GPU, at least 4 values).
    Global4,
}

impl HistogramPlan {
    /// The plan's name, as the tuning cache keeps it.
    pub fn name(&self) -> &'static str {
        match self {
            HistogramPlan::Shared => "shared",
            HistogramPlan::Global => "global",
            HistogramPlan::Global4 => "global_vec4",
        }
    }
}

/// The plans the tuner times for `n` values into `bins` bins on `device`,
/// the default first: up to [`SHARED_BINS`] bins the shared-memory kernel,
/// past that the global atomics one value a thread; then, on a GPU and for
/// at least 4 values, the global atomics four values a thread (up to 4096
/// bins too: each workgroup of the shared kernel adds all its non-zero
/// bins to the global counts, as many atomics as values where the values
/// spread thinly over thousands of bins).
pub fn candidates(device: &Device, n: usize, bins: usize) -> Vec<HistogramPlan> {
    let first = if bins <= SHARED_BINS { HistogramPlan::Shared } else { HistogramPlan::Global };
    if device.is_gpu() && n >= 4 {
        vec![first, HistogramPlan::Global4]
    } else {
        vec![first]
    }
}

/// Runs `plan` (one of [`candidates`]) over `values` into `counts`
/// (added to them; `counts` not empty): [`histogram_add`]'s launch, which
/// the tests call with each plan.
///
/// # Errors
/// The launch's; `OpError::Buffer` where `Global4`'s view of `values` is
/// refused (off a GPU).
#[doc(hidden)]
pub fn add_with_plan(
    device: &Device,
    values: &Buffer<u32>,
    counts: &mut Buffer<u32>,
    plan: HistogramPlan,
) -> Result<(), OpError> {
    let (n, bins) = (values.len(), counts.len() as u32);
    match plan {
        HistogramPlan::Shared => {
            let (seg, segments) = crate::reduce::plan(device, n);
            histogram_shared::launch(device, Grid::blocks(segments), values, counts, bins, seg as u32)?
        }
        HistogramPlan::Global => histogram_global::launch(device, n, values, counts, bins)?,
        HistogramPlan::Global4 => {
            // A borrowed view of the whole quadruples (no allocation).
            let values4 = values.view_prefix_as::<UVec4>(n / 4)?;
            global4_plan(device, &values4, values, counts)?
        }
    }
    Ok(())
}

/// [`histogram_global4`] over `values` (`values4`: its first
/// `values.len() / 4` quadruples) into `counts`: the op's plan on a GPU,
/// where `values4` is a view of `values`; the tests run it on the CPU
/// executor with a copy.
///
/// # Errors
/// The launch's.
#[doc(hidden)]
pub fn global4_plan(
    device: &Device,
    values4: &Buffer<UVec4>,
    values: &Buffer<u32>,
    counts: &mut Buffer<u32>,
) -> Result<(), LaunchError> {
    let threads = (values.len() / 4).max(4);
    histogram_global4::launch(device, threads, values4, values, counts, counts.len() as u32)
}

/// Adds the histogram of `values` to `counts` (`counts.len()` bins, which
/// must not be 0), without clearing it first: call it on several buffers
/// to count them all, or [`histogram_into`] to start from zero. No
/// allocation: the form for loops and `device.time(..)`.
///
/// # Errors
/// `LaunchError::InvalidArgument` (in `OpError::Launch`) naming
/// `ops::histogram` and `counts` when it is empty or longer than
/// `u32::MAX`; `WrongDevice`; the launch's errors.
pub fn histogram_add(device: &Device, values: &Buffer<u32>, counts: &mut Buffer<u32>) -> Result<(), OpError> {
    const OP: &str = "ops::histogram";
    for (arg, d) in [("values", values.device()), ("counts", counts.device())] {
        if d.id() != device.id() {
            return Err(LaunchError::WrongDevice {
                kernel: OP,
                arg,
                buffer_device: d.name(),
                launch_device: device.name(),
            }
            .into());
        }
    }
    let bins = counts.len();
    if bins == 0 || u32::try_from(bins).is_err() {
        return Err(LaunchError::InvalidArgument {
            kernel: OP,
            arg: "counts",
            problem: format!("has {bins} bins: needs from 1 to u32::MAX"),
        }
        .into());
    }
    let n = values.len();
    if n == 0 {
        return Ok(());
    }
    if runs_on_host(device) {
        let local = host_histogram(host_data(OP, values)?, bins);
        for (c, v) in host_data_mut(OP, counts)?.iter_mut().zip(local) {
            *c = c.wrapping_add(v);
        }
        return Ok(());
    }
    let plans = candidates(device, n, bins);
    let plan = if plans.len() == 1 {
        plans[0]
    } else {
        // Tuned on counts of its own (the caller's are added to, not
        // cleared): allocated on a miss only.
        let key = onekernel_runtime::tune::Key::new().size("values", n).size("bins", bins);
        let named: Vec<(&str, HistogramPlan)> = plans.iter().map(|p| (p.name(), *p)).collect();
        let mut scratch: Option<Buffer<u32>> = None;
        let i = crate::tuning::choose(
            device,
            OP,
            include_str!("histogram.rs"),
            &key,
            &named,
            |(_, p), purpose| -> Result<Option<Vec<u32>>, OpError> {
                let s = match &mut scratch {
                    Some(s) => s,
                    None => scratch.insert(Buffer::zeroed(device, bins)?),
                };
                if purpose == Purpose::Check {
                    crate::fill::fill(device, s, 0)?;
                }
                add_with_plan(device, values, s, *p)?;
                purpose.output(|| Ok(s.read()?))
            },
            |a, b| a == b,
        );
        plans[i]
    };
    add_with_plan(device, values, counts, plan)
}

/// The host implementation: a histogram per chunk, added up.
fn host_histogram(values: &[u32], bins: usize) -> Vec<u32> {
    use rayon::prelude::*;
    values
        .par_chunks(1 << 18)
        .fold(
            || vec![0u32; bins],
            |mut h, chunk| {
                for &v in chunk {
                    if (v as usize) < bins {
                        h[v as usize] = h[v as usize].wrapping_add(1);
                    }
                }
                h
            },
        )
        .reduce(
            || vec![0u32; bins],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = x.wrapping_add(y);
                }
                a
            },
        )
}

/// The histogram of `values` into `counts` (`counts.len()` bins), cleared
/// first. No allocation.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::histogram::histogram_into;
///
/// let device = Device::cpu();
/// let values = Buffer::from_slice(&device, &[1u32, 1, 2])?;
/// let mut counts = Buffer::<u32>::zeroed(&device, 3)?;
/// for _ in 0..2 {
///     histogram_into(&device, &values, &mut counts)?;
/// }
/// assert_eq!(counts.read()?, [0, 2, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`histogram_add`].
pub fn histogram_into(device: &Device, values: &Buffer<u32>, counts: &mut Buffer<u32>) -> Result<(), OpError> {
    crate::fill::fill(device, counts, 0)?;
    histogram_add(device, values, counts)
}

/// The histogram of `values` into `bins` bins, as a new buffer.
///
/// # Errors
/// As [`histogram_add`]; `OpError::Buffer` when the allocation fails.
pub fn histogram(device: &Device, values: &Buffer<u32>, bins: usize) -> Result<Buffer<u32>, OpError> {
    let mut counts = Buffer::zeroed(device, bins)?;
    histogram_add(device, values, &mut counts)?;
    Ok(counts)
}
