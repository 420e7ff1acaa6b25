//! The CPU path: [`CpuDevice`] runs kernels on all cores through rayon.

mod cooperative;
mod executor;
mod kernel;
mod owned;
mod panic_capture;
mod phased;
pub(crate) mod racecheck;
mod serial;
mod shared;
mod subgroup;
mod workgroup;

pub use executor::Chunk;
pub use kernel::CpuKernel;
pub use owned::{OutputSlice, Outputs, OwnedChunk, WindowToken};
pub use phased::{agree, agreed, per_invocation};
pub use racecheck::{DataRace, RaceAccess, RaceKind};
pub use shared::SharedSliceMut;
pub use subgroup::{SubgroupBallot, SubgroupCall, SubgroupCollective, SubgroupValue, CPU_SUBGROUP_SIZE};
pub use workgroup::{Barrier, Shared, SharedArray, Workgroup, WorkgroupPool};

use crate::device::Device;
use crate::error::{DeviceError, LaunchError};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The CPU executor. Launches are synchronous: when `execute` returns, the
/// kernel has run.
pub struct CpuDevice {
    id: u64,
    /// How launches run: in parallel, race-checked or serially.
    mode: CpuMode,
    /// The open `Device::time` scope: the device's `#id (name)` and each
    /// launch's kernel name and wall time.
    timing: Mutex<Option<(String, Launches)>>,
}

/// Each timed launch's kernel name and wall time, in order.
type Launches = Vec<(String, Duration)>;

/// How a CPU device runs its launches (chosen when the device is made;
/// [`CpuDevice::launch`] picks each launch's executor from it and the
/// kernel's plan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuMode {
    /// On all cores through rayon (`Device::cpu`).
    Parallel,
    /// One workgroup at a time on the calling thread, every shared-memory
    /// and output access recorded (`racecheck.rs`,
    /// `Device::cpu_race_checked`).
    RaceChecked,
    /// One workgroup at a time on the calling thread, invocations in a
    /// fixed order (`serial.rs`, `Device::cpu_serial`).
    Serial,
}

impl CpuDevice {
    pub(crate) fn new(id: u64, mode: CpuMode) -> CpuDevice {
        CpuDevice { id, mode, timing: Mutex::new(None) }
    }

    /// How launches run on this executor (`Device::kind`).
    pub(crate) fn mode(&self) -> CpuMode {
        self.mode
    }

    /// Whether launches on this executor are race-checked (see
    /// `Device::cpu_race_checked`).
    pub fn is_race_checked(&self) -> bool {
        self.mode == CpuMode::RaceChecked
    }

    fn timing(&self) -> MutexGuard<'_, Option<(String, Launches)>> {
        // Updates are single assignments or pushes: a poisoned scope is
        // still consistent.
        self.timing.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the timing scope of `Device::time`.
    pub(crate) fn begin_timing(&self, device: &Device) -> Result<(), DeviceError> {
        let mut timing = self.timing();
        if let Some((device, _)) = &*timing {
            return Err(DeviceError::TimingInProgress { device: device.clone() });
        }
        *timing = Some((device.describe(), Vec::new()));
        Ok(())
    }

    /// Closes the scope without a result (the closure panicked).
    pub(crate) fn abandon_timing(&self) {
        self.timing().take();
    }

    /// Closes the scope: each launch's kernel name and wall time, in order.
    pub(crate) fn end_timing(&self) -> Launches {
        self.timing().take().map(|(_, v)| v).unwrap_or_default()
    }

    /// Runs one launch of the kernel `name` that does work; inside a
    /// timing scope, records its wall time if it succeeds.
    pub(crate) fn timed<R>(
        &self,
        name: &str,
        launch: impl FnOnce() -> Result<R, LaunchError>,
    ) -> Result<R, LaunchError> {
        let start = Instant::now();
        let r = launch()?;
        let elapsed = start.elapsed();
        if let Some((_, launches)) = self.timing().as_mut() {
            launches.push((name.to_owned(), elapsed));
        }
        Ok(r)
    }

    /// The process-unique device id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `CPU executor (rayon, N threads)`.
    pub fn name(&self) -> String {
        match self.mode {
            CpuMode::RaceChecked => return "CPU executor (race-checked, 1 thread)".to_owned(),
            CpuMode::Serial => return "CPU executor (serial, 1 thread)".to_owned(),
            CpuMode::Parallel => {}
        }
        let n = rayon::current_num_threads();
        format!("CPU executor (rayon, {n} thread{})", if n == 1 { "" } else { "s" })
    }

    /// `#id (name)`, how errors refer to this device.
    pub(crate) fn describe(&self) -> String {
        format!("#{} ({})", self.id, self.name())
    }
}

impl std::fmt::Debug for CpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuDevice").field("id", &self.id).field("name", &self.name()).field("mode", &self.mode).finish()
    }
}
