//! The CPU path: [`CpuDevice`] runs kernels on all cores through rayon.

mod cooperative;
mod executor;
mod owned;
mod panic_capture;
mod shared;
mod workgroup;

pub use executor::Chunk;
pub use owned::{OutputSlice, Outputs, OwnedChunk, WindowToken};
pub use shared::SharedSliceMut;
pub use workgroup::{Barrier, Shared, SharedArray, Workgroup, WorkgroupPool};

/// The CPU executor. Launches are synchronous: when `execute` returns, the
/// kernel has run.
pub struct CpuDevice {
    id: u64,
}

impl CpuDevice {
    pub(crate) fn new(id: u64) -> CpuDevice {
        CpuDevice { id }
    }

    /// The process-unique device id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `CPU executor (rayon, N threads)`.
    pub fn name(&self) -> String {
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
        f.debug_struct("CpuDevice").field("id", &self.id).field("name", &self.name()).finish()
    }
}
