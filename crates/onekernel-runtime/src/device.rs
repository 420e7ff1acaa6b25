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
#[derive(Clone)]
pub struct Device {
    inner: Arc<Backend>,
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
    /// instance flags from the environment. The device gets the adapter's
    /// full limits (so large buffers work) and `TIMESTAMP_QUERY` where the
    /// adapter has it.
    pub fn gpu() -> Result<Device, DeviceError> {
        Ok(Device { inner: Arc::new(Backend::Gpu(GpuDevice::new(next_device_id())?)) })
    }

    /// The CPU executor: kernels run on all cores through rayon.
    pub fn cpu() -> Device {
        Device { inner: Arc::new(Backend::Cpu(CpuDevice::new(next_device_id()))) }
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
        f.debug_struct("Device").field("id", &self.id()).field("name", &self.name()).finish()
    }
}

/// Compile-time proof of the thread-safety the docs promise.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Device>();
};
