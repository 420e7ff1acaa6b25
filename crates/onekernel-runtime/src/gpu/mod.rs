//! The wgpu path: device creation ([`GpuDevice`]), the pipeline cache and
//! launches.

mod launch;
mod memory;
mod pipeline_cache;
mod timing;

pub use launch::{GpuArg, PreparedDispatch, PreparedPart};
pub(crate) use memory::GpuMemory;

use crate::error::DeviceError;
use crate::plan::LaunchLimits;
use pipeline_cache::PipelineCache;
use std::sync::{Arc, Mutex};

/// Optional features requested when the adapter has them.
const WANTED_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY;

/// A wgpu device and queue, with the per-device pipeline cache.
pub struct GpuDevice {
    id: u64,
    adapter_info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    launch_limits: LaunchLimits,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipelines: PipelineCache,
    /// Read-back buffers, reused across reads.
    staging: memory::StagingPool,
    /// The thread that drives `async` reads.
    poller: memory::Poller,
    /// The open `Device::time` scope, if any.
    timing: timing::GpuTiming,
    /// Time on the wall clock even with timestamp queries (tests).
    wall_clock_only: std::sync::atomic::AtomicBool,
    /// Errors wgpu reported outside any error scope. Without a handler wgpu
    /// panics on them; we keep them and report them from `synchronize`.
    uncaptured: Arc<Mutex<Vec<String>>>,
}

impl GpuDevice {
    /// Picks an adapter from the environment and creates the device.
    pub(crate) fn new(id: u64) -> Result<GpuDevice, DeviceError> {
        let desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        let backends = desc.backends;
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(pick_adapter(&instance, backends))?;
        let adapter_info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("onekernel-runtime"),
            required_features: adapter.features() & WANTED_FEATURES,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| DeviceError::RequestDevice { adapter: adapter_info.name.clone(), reason: e.to_string() })?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        Ok(GpuDevice {
            id,
            launch_limits: LaunchLimits::from_wgpu(&limits),
            adapter_info,
            limits,
            device,
            queue,
            pipelines: PipelineCache::default(),
            staging: memory::StagingPool::default(),
            poller: memory::Poller::default(),
            timing: timing::GpuTiming::default(),
            wall_clock_only: std::sync::atomic::AtomicBool::new(false),
            uncaptured,
        })
    }

    /// The process-unique device id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `adapter — Backend, driver info`.
    pub fn name(&self) -> String {
        let i = &self.adapter_info;
        let backend = match i.backend {
            wgpu::Backend::Vulkan => "Vulkan",
            wgpu::Backend::Metal => "Metal",
            wgpu::Backend::Dx12 => "DirectX 12",
            wgpu::Backend::Gl => "OpenGL",
            wgpu::Backend::BrowserWebGpu => "WebGPU",
            wgpu::Backend::Noop => "no-op",
        };
        let driver = if i.driver_info.is_empty() { &i.driver } else { &i.driver_info };
        if driver.is_empty() {
            format!("{} — {backend}", i.name)
        } else {
            format!("{} — {backend}, driver {driver}", i.name)
        }
    }

    /// What wgpu reports about the adapter.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.adapter_info
    }

    /// The device's limits (the adapter's best).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The features enabled on the device.
    pub fn features(&self) -> wgpu::Features {
        self.device.features()
    }

    /// The wgpu device.
    pub fn wgpu_device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// Makes `Device::time` use the wall clock as it does on GPUs without
    /// timestamp queries (for the runtime's tests of that path).
    pub fn time_on_wall_clock(&self, wall_clock: bool) {
        self.wall_clock_only.store(wall_clock, std::sync::atomic::Ordering::Relaxed);
    }

    /// Number of staging (read-back) buffers created on this device so far;
    /// reads reuse them, so this grows only with new size classes.
    pub fn staging_buffers_created(&self) -> usize {
        self.staging.created()
    }

    /// `#id (name)`, how errors refer to this device.
    pub(crate) fn describe(&self) -> String {
        format!("#{} ({})", self.id, self.name())
    }

    pub(crate) fn launch_limits(&self) -> &LaunchLimits {
        &self.launch_limits
    }

    /// Waits for all submitted work, then reports errors wgpu raised outside
    /// the runtime's own error scopes.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        self.wait(None)?;
        self.take_uncaptured()
    }

    /// Blocks until `submission` (or everything submitted so far) is done.
    pub(crate) fn wait(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), DeviceError> {
        self.device
            .poll(wgpu::PollType::Wait { submission_index: submission, timeout: None })
            .map(drop)
            .map_err(|e| DeviceError::Poll { reason: e.to_string() })
    }

    fn take_uncaptured(&self) -> Result<(), DeviceError> {
        let mut errors = match self.uncaptured.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if errors.is_empty() {
            return Ok(());
        }
        let message = errors.join("; ");
        errors.clear();
        Err(DeviceError::Gpu { message })
    }

    /// Runs `f` with wgpu errors captured instead of sent to the uncaptured
    /// handler, so that they become `Err` of the operation that caused them.
    /// Error scopes are thread-local, so concurrent users do not interfere.
    pub(crate) fn capture<R>(&self, f: impl FnOnce() -> R) -> Result<R, String> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let r = f();
        // On native wgpu these futures are ready at once.
        let errors =
            [pollster::block_on(internal.pop()), pollster::block_on(validation.pop()), pollster::block_on(oom.pop())];
        match errors.into_iter().flatten().map(|e| e.to_string()).collect::<Vec<_>>() {
            v if v.is_empty() => Ok(r),
            v => Err(v.join("; ")),
        }
    }
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice").field("id", &self.id).field("name", &self.name()).finish()
    }
}

/// `WGPU_ADAPTER_NAME` if set (error if nothing matches), else wgpu's
/// default choice under `WGPU_POWER_PREF`. This mirrors
/// `wgpu::util::initialize_adapter_from_env_or_default`, which panics when
/// the named adapter is missing; we return an error instead.
async fn pick_adapter(instance: &wgpu::Instance, backends: wgpu::Backends) -> Result<wgpu::Adapter, DeviceError> {
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let needle = wanted.to_lowercase();
        let adapters = instance.enumerate_adapters(backends).await;
        let mut available = Vec::new();
        for adapter in adapters {
            let info = adapter.get_info();
            if info.name.to_lowercase().contains(&needle) {
                return Ok(adapter);
            }
            available.push(format!("{} ({:?})", info.name, info.backend));
        }
        return Err(DeviceError::AdapterNotFound { wanted, available });
    }
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env().unwrap_or_default(),
            ..Default::default()
        })
        .await
        .map_err(|e| DeviceError::NoAdapter { reason: format!("{e} (backends tried: {backends:?})") })
}
