//! [`Device::time`]: how long launches take, and on which clock.

use crate::device::{Device, DeviceBackend};
use crate::error::DeviceError;
use std::fmt;
use std::time::{Duration, Instant};

/// The clock a [`Timing`] was measured with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clock {
    /// The GPU's own timestamps (wgpu timestamp queries at the start and
    /// end of each launch's compute pass): the kernels alone, without
    /// recording, submission or waiting. Used on GPUs with
    /// `TIMESTAMP_QUERY`.
    GpuTimestamps,
    /// The host's monotonic clock ([`Instant`]). On the CPU executor, each
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

/// Ends a device's timing scope even if the closure panics.
struct ScopeGuard<'d> {
    device: &'d Device,
    armed: bool,
}

impl Drop for ScopeGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            match self.device.backend() {
                DeviceBackend::Gpu(g) => g.abandon_timing(),
                DeviceBackend::Cpu(c) => c.abandon_timing(),
            }
        }
    }
}

impl Device {
    /// Runs `f` and times every launch it makes on this device (from any
    /// thread), on the GPU's own clock where the device has timestamp
    /// queries, else on the wall clock ([`Timing::clock`] says which).
    /// Returns what `f` returned, and the [`Timing`].
    ///
    /// ```
    /// use onekernel_runtime::{Buffer, Clock, Device};
    ///
    /// let device = Device::cpu();
    /// let mut buf = Buffer::<f32>::zeroed(&device, 1024)?;
    /// // Launches go inside the closure, e.g. `saxpy::launch(&device, ..)`;
    /// // buffer operations are not counted.
    /// let (result, timing) = device.time(|| buf.write(&[1.0; 1024]))?;
    /// result?;
    /// assert_eq!(timing.clock, Clock::Wall); // the CPU executor
    /// assert_eq!(timing.launches(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// On a GPU, launches are still submitted one by one as usual; `time`
    /// waits for the device before returning, since the timestamps are only
    /// known then. Without timestamp queries, each launch inside `f` waits
    /// for the GPU to finish it.
    ///
    /// # Errors
    /// [`DeviceError::TimingInProgress`] if this device is already timing
    /// (calls cannot nest or overlap, even from different threads);
    /// [`DeviceError::Poll`] or [`DeviceError::Gpu`] if the GPU fails while
    /// the timestamps are read back.
    pub fn time<R>(&self, f: impl FnOnce() -> R) -> Result<(R, Timing), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.begin_timing(self)?,
            DeviceBackend::Cpu(c) => c.begin_timing(self)?,
        }
        let mut guard = ScopeGuard { device: self, armed: true };
        let start = Instant::now();
        let r = f();
        guard.armed = false;
        let (clock, per_launch) = match self.backend() {
            DeviceBackend::Gpu(g) => g.end_timing()?,
            DeviceBackend::Cpu(c) => (Clock::Wall, c.end_timing()),
        };
        let elapsed = start.elapsed();
        let total = per_launch.iter().sum();
        Ok((r, Timing { clock, per_launch, total, elapsed }))
    }

    /// Records and submits one compute pass of your own on the GPU, in
    /// order with launches: `record` sets pipelines and bind groups and
    /// dispatches, with raw wgpu (for example a hand-written WGSL baseline
    /// in a benchmark). Inside [`Device::time`] the pass is timed exactly
    /// like a launch.
    ///
    /// ```no_run
    /// # use onekernel_runtime::Device;
    /// # fn baseline(pipeline: &wgpu::ComputePipeline, bind_group: &wgpu::BindGroup) -> Result<(), Box<dyn std::error::Error>> {
    /// let device = Device::gpu()?;
    /// let (submitted, timing) = device.time(|| {
    ///     device.run_compute_pass("baseline", |pass| {
    ///         pass.set_pipeline(pipeline);
    ///         pass.set_bind_group(0, bind_group, &[]);
    ///         pass.dispatch_workgroups(64, 1, 1);
    ///     })
    /// })?;
    /// submitted?;
    /// println!("{timing}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`DeviceError::NotAGpu`] on the CPU executor; [`DeviceError::Gpu`]
    /// when wgpu rejects what `record` recorded.
    pub fn run_compute_pass(
        &self,
        label: &str,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) -> Result<(), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => {
                g.check_alive()?;
                g.submit_pass(label, record).map_err(|message| g.explain_device(DeviceError::Gpu { message }))
            }
            DeviceBackend::Cpu(_) => {
                Err(DeviceError::NotAGpu { operation: "Device::run_compute_pass", device: self.describe() })
            }
        }
    }
}
