//! What [`Device::time`] measures: how long launches take ([`Timing`]),
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
