//! [`Device`]: where kernels run and buffers live — a wgpu GPU or the CPU
//! executor, behind one cheap-to-clone handle.

use crate::cpu::CpuDevice;
use crate::error::DeviceError;
use crate::gpu::GpuDevice;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Source of device ids. Ids are never reused, so a buffer can tell whether
/// it is passed to a launch on the device that owns it.
static NEXT_DEVICE_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh, process-unique device id.
pub(crate) fn next_device_id() -> u64 {
    NEXT_DEVICE_ID.fetch_add(1, Ordering::Relaxed)
}

/// A device kernels run on: a wgpu GPU or the CPU executor.
///
/// Cloning is cheap (an `Arc`); clones are the same device.
///
/// A handle may be *checked* ([`Device::checked`]): its GPU launches run
/// the kernel's checked variant, in which every index and integer divisor
/// is checked, and a failure is an `Err` naming the source line.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Backend>,
    checked: bool,
}

// Boxing the GPU variant would save nothing: the enum lives once per device
// inside the `Arc`.
#[allow(clippy::large_enum_variant)]
enum Backend {
    Gpu(GpuDevice),
    Cpu(CpuDevice),
}

/// Borrowed view of the concrete device behind a [`Device`], for generated
/// code that launches a kernel (see [`backend`]).
#[derive(Clone, Copy, Debug)]
pub enum DeviceBackend<'a> {
    /// A wgpu device.
    Gpu(&'a GpuDevice),
    /// The CPU executor.
    Cpu(&'a CpuDevice),
}

impl Device {
    /// The GPU chosen by wgpu.
    ///
    /// Honours `WGPU_BACKEND` (which backends to try), `WGPU_ADAPTER_NAME`
    /// (a substring of the adapter name), `WGPU_POWER_PREF` and wgpu's
    /// instance flags from the environment, and `ONEKERNEL_CHECKED=1` (a
    /// checked handle, see [`Device::checked`]). The device gets the adapter's
    /// full limits (so large buffers work) and `TIMESTAMP_QUERY` where the
    /// adapter has it.
    pub fn gpu() -> Result<Device, DeviceError> {
        let checked = std::env::var_os(CHECKED_ENV).is_some_and(|v| v != "0" && !v.is_empty());
        Ok(Device { inner: Arc::new(Backend::Gpu(GpuDevice::new(next_device_id())?)), checked })
    }

    /// The CPU executor: kernels run on all cores through rayon.
    pub fn cpu() -> Device {
        Device { inner: Arc::new(Backend::Cpu(CpuDevice::new(next_device_id()))), checked: false }
    }

    /// The GPU if one is available, else the CPU executor, with a one-line
    /// notice on stderr that says why there is no GPU.
    pub fn new() -> Device {
        match Device::gpu() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("kernel: no usable GPU ({e}); running kernels on the CPU executor");
                Device::cpu()
            }
        }
    }

    /// A handle to the same device whose GPU launches are checked: each runs
    /// the kernel's checked module, in which every buffer, shared-memory
    /// and local-array index is compared with its length and every integer
    /// divisor with zero. After the launch the runtime reads the report
    /// (so a checked launch waits for the GPU) and returns
    /// [`LaunchError::OutOfBounds`](crate::LaunchError::OutOfBounds) or
    /// [`LaunchError::DivisionByZero`](crate::LaunchError::DivisionByZero)
    /// naming the kernel, the source line, the parameter or array, the
    /// index and the length of the first failure; the failing access reads
    /// or writes element 0 instead, never another buffer's memory.
    ///
    /// The cost is a compare and a branch per index and a wait per launch
    /// (`docs/performance.md` has measurements). Buffers are shared with
    /// the unchecked handle. `ONEKERNEL_CHECKED=1` in the environment makes
    /// [`Device::gpu`] (and [`Device::new`]) return checked handles, to run
    /// a program's launches checked without changing it.
    ///
    /// The CPU executor always checks (Rust's own indexing): a failure there
    /// is [`LaunchError::CpuPanic`](crate::LaunchError::CpuPanic) at the
    /// same line, so this changes nothing on the CPU.
    pub fn checked(&self) -> Device {
        Device { inner: Arc::clone(&self.inner), checked: true }
    }

    /// Whether GPU launches through this handle are checked (see
    /// [`Device::checked`]).
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// The process-unique id of this device (shown as `#id` in errors).
    pub fn id(&self) -> u64 {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.id(),
            DeviceBackend::Cpu(c) => c.id(),
        }
    }

    /// Whether kernels run on a GPU.
    pub fn is_gpu(&self) -> bool {
        matches!(*self.inner, Backend::Gpu(_))
    }

    /// Whether kernels run on the CPU executor.
    pub fn is_cpu(&self) -> bool {
        matches!(*self.inner, Backend::Cpu(_))
    }

    /// A human-readable name, e.g. `llvmpipe (LLVM 19.1.7, 256 bits) — Vulkan, driver Mesa 25.0.7`
    /// or `CPU executor (rayon, 2 threads)`.
    pub fn name(&self) -> String {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.name(),
            DeviceBackend::Cpu(c) => c.name(),
        }
    }

    /// The concrete device.
    pub(crate) fn backend(&self) -> DeviceBackend<'_> {
        match &*self.inner {
            Backend::Gpu(g) => DeviceBackend::Gpu(g),
            Backend::Cpu(c) => DeviceBackend::Cpu(c),
        }
    }

    /// Waits until all work queued on the device has finished. On the GPU
    /// this also reports any wgpu error raised outside a launch.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.synchronize(),
            // The CPU executor is synchronous: nothing is ever queued.
            DeviceBackend::Cpu(_) => Ok(()),
        }
    }

    /// The underlying wgpu device and queue (for benchmarks and hand-written
    /// baselines); `None` on the CPU executor.
    pub fn wgpu(&self) -> Option<(&wgpu::Device, &wgpu::Queue)> {
        match self.backend() {
            DeviceBackend::Gpu(g) => Some((g.wgpu_device(), g.queue())),
            DeviceBackend::Cpu(_) => None,
        }
    }

    /// `#id (name)`, how errors refer to a device.
    pub(crate) fn describe(&self) -> String {
        format!("#{} ({})", self.id(), self.name())
    }
}

/// The environment variable that makes [`Device::gpu`] return checked
/// handles (see [`Device::checked`]).
pub const CHECKED_ENV: &str = "ONEKERNEL_CHECKED";

/// The concrete device behind `device`: the GPU or the CPU executor.
#[inline]
pub fn backend(device: &Device) -> DeviceBackend<'_> {
    device.backend()
}

impl Default for Device {
    /// Same as [`Device::new`].
    fn default() -> Device {
        Device::new()
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.id())
            .field("name", &self.name())
            .field("checked", &self.checked)
            .finish()
    }
}

/// Compile-time proof of the thread-safety the docs promise.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Device>();
};
