//! What [`Device::time`] measures: how long launches take ([`Timing`]),
//! per kernel ([`Profile`], from [`Device::profile`]),
//! and on which clock ([`Clock`]). The method itself is with the rest of
//! [`Device`]'s, in `device.rs`.

#[cfg(doc)]
use crate::Device;
use std::fmt;
use std::time::Duration;

/// The clock a [`Timing`] was measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clock {
    /// The GPU's own timestamps (wgpu timestamp queries at the start and
    /// end of each launch's compute pass): the kernels alone, without
    /// recording, submission or waiting. Used on GPUs with
    /// `TIMESTAMP_QUERY`.
    GpuTimestamps,
    /// The host's monotonic clock ([`std::time::Instant`]). On the CPU executor, each
    /// launch from start to finish. On a GPU without timestamp queries,
    /// each launch from its submission until the GPU has finished it: while
    /// timing, the runtime waits for each launch, so the kernel's time
    /// includes submitting and waiting for it.
    Wall,
}

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Clock::GpuTimestamps => "GPU timestamps",
            Clock::Wall => "wall clock",
        })
    }
}

/// How long the launches in a [`Device::time`] call took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The clock `per_launch` and `total` were measured with.
    pub clock: Clock,
    /// Each launch's time, in order: every kernel launch on the device
    /// that did work (an empty grid does nothing and is not counted), and
    /// every pass recorded with [`Device::run_compute_pass`].
    pub per_launch: Vec<Duration>,
    /// The sum of `per_launch`.
    pub total: Duration,
    /// Wall-clock time of the whole call: the closure, plus waiting for the
    /// device to finish the work it queued.
    pub elapsed: Duration,
}

impl Timing {
    /// Number of launches timed.
    pub fn launches(&self) -> usize {
        self.per_launch.len()
    }

    /// The mean time per launch; `None` if nothing was launched.
    pub fn mean(&self) -> Option<Duration> {
        let n = u32::try_from(self.per_launch.len()).ok().filter(|&n| n > 0)?;
        Some(self.total / n)
    }

    /// The median time per launch (the upper one of an even count); `None`
    /// if nothing was launched.
    pub fn median(&self) -> Option<Duration> {
        let mut v = self.per_launch.clone();
        v.sort_unstable();
        v.get(v.len() / 2).copied()
    }

    /// The fastest launch; `None` if nothing was launched.
    pub fn min(&self) -> Option<Duration> {
        self.per_launch.iter().min().copied()
    }
}

impl fmt::Display for Timing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.launches();
        write!(f, "{n} launch{} in {:?} ({})", if n == 1 { "" } else { "es" }, self.total, self.clock)?;
        if let Some(m) = self.median() {
            write!(f, ", median {m:?}")?;
        }
        Ok(())
    }
}

/// Where the time of a run went, kernel by kernel: what
/// [`Device::profile`] returns. Built from the same measurements as
/// [`Timing`] (the GPU's timestamps, or the wall clock where it has none),
/// with each launch's kernel name; `Display` prints it as a table, slowest
/// kernel first:
///
/// ```text
/// kernel             launches        total         mean   share
/// matmul                    4     12.31 ms      3.08 ms   91.2%
/// softmax_rows              4      1.19 ms    297.5 µs    8.8%
/// total                     8     13.50 ms                100.0%  (GPU timestamps; 14.02 ms wall)
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The clock every time was measured with.
    pub clock: Clock,
    /// One row per kernel name (a pass of [`Device::run_compute_pass`] by
    /// its label), the largest total first (ties by name).
    pub kernels: Vec<KernelTime>,
    /// Each launch's kernel name and time, in order.
    pub launches: Vec<(String, Duration)>,
    /// The sum of every launch's time.
    pub total: Duration,
    /// Wall-clock time of the whole call, as [`Timing::elapsed`].
    pub elapsed: Duration,
}

/// One kernel's row of a [`Profile`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelTime {
    /// The kernel's name (`KernelInfo::name`: `axpy`, or `k::<N = 128>` for
    /// a specialisation).
    pub name: String,
    /// How many times it was launched.
    pub launches: usize,
    /// The sum of its launches' times.
    pub total: Duration,
}

impl KernelTime {
    /// The mean time per launch.
    pub fn mean(&self) -> Duration {
        self.total / u32::try_from(self.launches.max(1)).unwrap_or(u32::MAX)
    }
}

impl Profile {
    /// The profile of `launches` (name and time of each, in order),
    /// measured on `clock`, in a call that took `elapsed`.
    pub fn new(clock: Clock, launches: Vec<(String, Duration)>, elapsed: Duration) -> Profile {
        let mut kernels: Vec<KernelTime> = Vec::new();
        for (name, time) in &launches {
            match kernels.iter_mut().find(|k| k.name == *name) {
                Some(k) => {
                    k.launches += 1;
                    k.total += *time;
                }
                None => kernels.push(KernelTime { name: name.clone(), launches: 1, total: *time }),
            }
        }
        kernels.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.name.cmp(&b.name)));
        let total = launches.iter().map(|(_, t)| *t).sum();
        Profile { clock, kernels, launches, total, elapsed }
    }

    /// The row of the kernel `name`, if it was launched.
    pub fn kernel(&self, name: &str) -> Option<&KernelTime> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The fraction of the total time `kernel` took (0 to 1; 0 when nothing
    /// took any time).
    pub fn share(&self, kernel: &KernelTime) -> f64 {
        let total = self.total.as_secs_f64();
        if total > 0.0 {
            kernel.total.as_secs_f64() / total
        } else {
            0.0
        }
    }

    /// The same launches as a [`Timing`] (names dropped).
    pub fn timing(&self) -> Timing {
        Timing {
            clock: self.clock,
            per_launch: self.launches.iter().map(|(_, t)| *t).collect(),
            total: self.total,
            elapsed: self.elapsed,
        }
    }
}

/// A duration as a person reads it: `812 ns`, `297.5 µs`, `12.31 ms`, `1.204 s`.
fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{} ns", d.as_nanos())
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self.kernels.iter().map(|k| k.name.chars().count()).max().unwrap_or(0).max("kernel".len());
        writeln!(f, "{:<width$}  {:>8}  {:>11}  {:>11}  {:>6}", "kernel", "launches", "total", "mean", "share")?;
        for k in &self.kernels {
            writeln!(
                f,
                "{:<width$}  {:>8}  {:>11}  {:>11}  {:>5.1}%",
                k.name,
                k.launches,
                human(k.total),
                human(k.mean()),
                100.0 * self.share(k)
            )?;
        }
        write!(
            f,
            "{:<width$}  {:>8}  {:>11}  {:>11}  {:>5.1}%  ({}; {} wall)",
            "total",
            self.launches.len(),
            human(self.total),
            "",
            if self.launches.is_empty() { 0.0 } else { 100.0 },
            self.clock,
            human(self.elapsed)
        )
    }
}
