//! The wgpu path: device creation ([`GpuDevice`]), the pipeline cache and
//! launches.

mod bind_cache;
mod empty_bindings;
mod launch;
mod memory;
mod pipeline_cache;
mod record;
mod timing;

pub use launch::{GpuArg, LaunchChecks, PreparedDispatch, PreparedPart};
pub(crate) use memory::GpuMemory;
pub use record::Recorded;

use crate::error::DeviceError;
use crate::plan::LaunchLimits;
use onekernel_abi::Features;
use pipeline_cache::PipelineCache;
use std::sync::{Arc, Mutex};

/// Optional features requested when the adapter has them: timestamps for
/// `Device::time`, and what kernels may need (`KernelInfo::features`).
const WANTED_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::SHADER_F64)
    .union(wgpu::Features::SHADER_INT64)
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SUBGROUP_BARRIER)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);

/// Each kernel feature (the ABI's [`Features`]) and the wgpu feature that
/// provides it.
const KERNEL_FEATURES: [(Features, wgpu::Features); 5] = [
    (Features::F16, wgpu::Features::SHADER_F16),
    (Features::F64, wgpu::Features::SHADER_F64),
    (Features::INT64, wgpu::Features::SHADER_INT64),
    (Features::SUBGROUP, wgpu::Features::SUBGROUP),
    (Features::COOPERATIVE_MATRIX, wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
];

/// The kernel features (the ABI's [`Features`]) a set of wgpu features
/// provides.
pub(crate) fn kernel_features(wgpu_features: wgpu::Features) -> Features {
    let mut f = Features::NONE;
    for (bit, wgpu_bit) in KERNEL_FEATURES {
        if wgpu_features.contains(wgpu_bit) {
            f = f.union(bit);
        }
    }
    f
}

/// A wgpu device and queue, with the per-device pipeline cache: one handle.
/// [`crate::Device::unchecked`] makes a second handle to the same device
/// whose pipelines have wgpu's shader runtime checks off.
pub struct GpuDevice {
    shared: Arc<GpuShared>,
    /// Whether pipelines compiled through this handle skip wgpu's runtime
    /// checks (`create_shader_module_trusted`).
    unchecked: bool,
}

/// Everything the handles of one wgpu device share.
struct GpuShared {
    id: u64,
    adapter_info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    launch_limits: LaunchLimits,
    /// The kernel features the device has.
    features: Features,
    /// The cooperative matrix shapes the adapter offers (empty without the
    /// feature).
    cooperative_matrices: Vec<wgpu::CooperativeMatrixProperties>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Whether the program created the wgpu device (`Device::from_wgpu`):
    /// the runtime then installed no error handler or lost callback.
    adopted: bool,
    /// Checked and unchecked pipelines (the key says which).
    pipelines: PipelineCache,
    /// Read-back buffers, reused across reads.
    staging: memory::StagingPool,
    /// Bind groups and uniform buffers, reused across launches.
    binds: bind_cache::BindCache,
    /// The thread that drives `async` reads.
    poller: memory::Poller,
    /// The open `Device::time` scope, if any.
    timing: timing::GpuTiming,
    /// Time on the wall clock even with timestamp queries (tests).
    wall_clock_only: std::sync::atomic::AtomicBool,
    /// Errors wgpu reported outside any error scope. Without a handler wgpu
    /// panics on them; we keep them and report them from `synchronize`.
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// Why the device was lost, once it is: every operation then fails at
    /// once with that reason instead of reaching wgpu.
    lost: Arc<Mutex<Option<String>>>,
    /// The print buffers of launches not yet waited for (kernels with
    /// `println!`, `assert!`, ...), in launch order: drained by the next
    /// wait (`read`, `synchronize`).
    prints: Mutex<Vec<(&'static onekernel_abi::KernelInfo, memory::GpuMemory, u32)>>,
    /// The room for print records of each launch's print buffer, in words
    /// (`Device::set_print_buffer_size`).
    print_words: std::sync::atomic::AtomicU32,
}

impl GpuDevice {
    /// Picks an adapter from the environment and creates the device,
    /// without the kernel features in `without` even where the adapter has
    /// them.
    pub(crate) fn new(id: u64, without: Features) -> Result<GpuDevice, DeviceError> {
        let desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        let backends = desc.backends;
        let instance = wgpu::Instance::new(desc);
        let adapter = pollster::block_on(pick_adapter(&instance, backends))?;
        GpuDevice::open(id, &adapter, without)
    }

    /// Creates a device on `adapter` with the adapter's full limits and
    /// every feature of [`WANTED_FEATURES`] it has, less the kernel
    /// features in `without`.
    pub(crate) fn open(id: u64, adapter: &wgpu::Adapter, without: Features) -> Result<GpuDevice, DeviceError> {
        let adapter_info = adapter.get_info();
        let limits = adapter.limits();
        let mut wanted = WANTED_FEATURES;
        for (bit, wgpu_bit) in KERNEL_FEATURES {
            if without.contains(bit) {
                wanted.remove(wgpu_bit);
            }
        }
        let required_features = adapter.features() & wanted;
        let experimental_features = if required_features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: wgpu's contract for experimental features is that their
            // implementation may still have bugs that cause undefined
            // behaviour when they are *used*. The only one requested is
            // EXPERIMENTAL_COOPERATIVE_MATRIX, and only where the adapter
            // reports it; nothing in the runtime uses it, and a kernel can
            // use it only by saying so in `KernelInfo::features` (checked at
            // launch) with cooperative-matrix types in its shader, which
            // wgpu validates like any other. We accept wgpu's terms for
            // those kernels, as a user who enabled the feature would.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("onekernel-runtime"),
            required_features,
            required_limits: limits,
            experimental_features,
            ..Default::default()
        }))
        .map_err(|e| DeviceError::RequestDevice { adapter: adapter_info.name.clone(), reason: e.to_string() })?;
        let mut registry = registry::lock();
        let shared = Arc::new(GpuShared::new(id, adapter, device, queue, true));
        registry.retain(|w| w.strong_count() > 0);
        registry.push(Arc::downgrade(&shared));
        Ok(GpuDevice { shared, unchecked: false })
    }

    /// The runtime's handle on a wgpu device the program created
    /// (`Device::from_wgpu`): the one it already has if the same
    /// `wgpu::Device` (a clone of it: wgpu compares handles by identity)
    /// was adopted or opened before and is still in use, else a new one
    /// with the id `id()` gives, after checking once that the device can
    /// run kernels at all. Installs no error handler or device-lost
    /// callback: those stay the program's.
    pub(crate) fn adopt(
        id: impl FnOnce() -> u64,
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<GpuDevice, DeviceError> {
        let mut registry = registry::lock();
        if let Some(shared) =
            registry.iter().filter_map(std::sync::Weak::upgrade).find(|s| registry::same_device(&s.device, device))
        {
            return Ok(GpuDevice { shared, unchecked: false });
        }
        let info = device.adapter_info();
        let unsuitable = |reason: String| DeviceError::Unsuitable { device: info.name.clone(), reason };
        if adapter.get_info() != info {
            return Err(unsuitable(format!(
                "the adapter given is `{}` ({:?}), but the device was created on `{}` ({:?})",
                adapter.get_info().name,
                adapter.get_info().backend,
                info.name,
                info.backend
            )));
        }
        let limits = device.limits();
        let needed = [
            ("max_bind_groups", limits.max_bind_groups),
            ("max_storage_buffers_per_shader_stage", limits.max_storage_buffers_per_shader_stage),
            ("max_compute_workgroups_per_dimension", limits.max_compute_workgroups_per_dimension),
            ("max_compute_invocations_per_workgroup", limits.max_compute_invocations_per_workgroup),
            ("max_compute_workgroup_size_x", limits.max_compute_workgroup_size_x),
        ];
        if let Some((name, _)) = needed.iter().find(|(_, v)| *v == 0) {
            return Err(unsuitable(format!(
                "it was created with the limit `{name}` = 0: kernels need compute shaders and storage buffers \
                 (request at least `wgpu::Limits::downlevel_defaults()`)"
            )));
        }
        let shared = Arc::new(GpuShared::new(id(), adapter, device.clone(), queue.clone(), false));
        registry.retain(|w| w.strong_count() > 0);
        registry.push(Arc::downgrade(&shared));
        Ok(GpuDevice { shared, unchecked: false })
    }

    /// A handle to the same device whose launches compile their pipelines
    /// without wgpu's shader runtime checks (see `Device::unchecked`).
    ///
    /// # Safety
    /// Every kernel launched through the handle must access only elements
    /// within its buffers (and meet the rest of `Device::unchecked`'s
    /// contract).
    pub(crate) unsafe fn unchecked_handle(&self) -> GpuDevice {
        GpuDevice { shared: Arc::clone(&self.shared), unchecked: true }
    }

    /// Whether this handle launches kernels without wgpu's runtime checks.
    pub fn is_unchecked(&self) -> bool {
        self.unchecked
    }

    /// Whether the program created the wgpu device (`Device::from_wgpu`).
    pub fn is_adopted(&self) -> bool {
        self.shared.adopted
    }

    /// The kernel features the device has (the ABI's [`Features`]).
    pub fn kernel_features(&self) -> Features {
        self.shared.features
    }

    /// The cooperative matrix shapes the adapter offers (empty without
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX`).
    pub fn cooperative_matrix_properties(&self) -> &[wgpu::CooperativeMatrixProperties] {
        &self.shared.cooperative_matrices
    }

    /// The process-unique device id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// `adapter — Backend, driver info`.
    pub fn name(&self) -> String {
        let i = &self.shared.adapter_info;
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
        &self.shared.adapter_info
    }

    /// The device's limits (the adapter's best on a device the runtime
    /// created; those it was created with on an adopted one).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.shared.limits
    }

    /// The features enabled on the device.
    pub fn features(&self) -> wgpu::Features {
        self.shared.device.features()
    }

    /// The wgpu device.
    pub fn wgpu_device(&self) -> &wgpu::Device {
        &self.shared.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.shared.queue
    }

    /// Makes `Device::time` use the wall clock as it does on GPUs without
    /// timestamp queries (for the runtime's tests of that path).
    pub fn time_on_wall_clock(&self, wall_clock: bool) {
        self.shared.wall_clock_only.store(wall_clock, std::sync::atomic::Ordering::Relaxed);
    }

    /// Number of staging (read-back) buffers created on this device so far;
    /// reads reuse them, so this grows only with new size classes.
    pub fn staging_buffers_created(&self) -> usize {
        self.shared.staging.created()
    }

    /// `#id (name)`, how errors refer to this device.
    pub(crate) fn describe(&self) -> String {
        format!("#{} ({})", self.shared.id, self.name())
    }

    pub(crate) fn launch_limits(&self) -> &LaunchLimits {
        &self.shared.launch_limits
    }

    /// `Err(DeviceError::Lost)` once the device is lost.
    pub(crate) fn check_alive(&self) -> Result<(), DeviceError> {
        match &*self.shared.lost.lock().unwrap_or_else(|p| p.into_inner()) {
            None => Ok(()),
            Some(reason) => Err(DeviceError::Lost { device: self.describe(), reason: reason.clone() }),
        }
    }

    /// The device's loss, if it is lost, noticed by polling (which runs
    /// wgpu's device-lost callback). For error paths only (it may wait up
    /// to ~100 ms for the callback of a device that is not lost): when an
    /// operation fails because the device is gone, wgpu's own message (a
    /// validation error about an invalid buffer, a failed wait) hides the
    /// cause.
    pub(crate) fn lost(&self) -> Option<DeviceError> {
        if self.check_alive().is_ok() {
            let _ = self.shared.device.poll(wgpu::PollType::Poll);
        }
        if self.check_alive().is_ok() {
            // wgpu runs the lost callback of a destroyed device only once
            // its queue is empty, from whichever thread polls (maybe the
            // poller thread, after other callbacks): wait for the queue,
            // then give that callback a moment. Only error paths get here.
            let wait =
                wgpu::PollType::Wait { submission_index: None, timeout: Some(std::time::Duration::from_secs(2)) };
            let _ = self.shared.device.poll(wait);
            for _ in 0..20 {
                if self.check_alive().is_err() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        self.check_alive().err()
    }

    /// A failed buffer operation's error, or the device's loss behind it.
    pub(crate) fn explain(&self, e: crate::error::BufferError) -> crate::error::BufferError {
        use crate::error::BufferError as B;
        match e {
            B::Gpu { .. } | B::Device(_) => self.lost().map_or(e, B::Device),
            B::TooLarge { .. }
            | B::LengthMismatch { .. }
            | B::OutOfRange { .. }
            | B::WrongDevice { .. }
            | B::InvalidElement { .. }
            | B::Launch(_) => e,
            B::MissingUsage { .. } | B::Layout { .. } | B::ShapeMismatch { .. } => e,
        }
    }

    /// A failed launch's error, or the device's loss behind it.
    pub(crate) fn explain_launch(&self, e: crate::error::LaunchError) -> crate::error::LaunchError {
        use crate::error::LaunchError as L;
        match e {
            L::Gpu { kernel, .. } | L::Compile { kernel, .. } => match self.lost() {
                Some(error) => L::DeviceLost { kernel, error },
                None => e,
            },
            L::WrongDevice { .. }
            | L::BindingTooLarge { .. }
            | L::GridTooLarge { .. }
            | L::FoldedGridTooLarge { .. }
            | L::WorkgroupTooLarge { .. }
            | L::SharedMemoryTooLarge { .. }
            | L::WorkgroupAxisTooLarge { .. }
            | L::CpuPanic { .. }
            | L::KernelPanic { .. }
            | L::DataRace { .. }
            | L::InvalidArgument { .. }
            | L::InvalidKernel { .. }
            | L::MissingFeature { .. }
            | L::UnsupportedTileShape { .. }
            | L::LimitExceeded { .. }
            | L::Recording { .. }
            | L::DeviceLost { .. }
            | L::OutOfBounds { .. }
            | L::DivisionByZero { .. }
            | L::LoopBudget { .. } => e,
        }
    }

    /// A failed device operation's error, or the device's loss behind it.
    pub(crate) fn explain_device(&self, e: DeviceError) -> DeviceError {
        match e {
            DeviceError::Poll { .. } | DeviceError::Gpu { .. } => self.lost().unwrap_or(e),
            DeviceError::NoAdapter { .. }
            | DeviceError::AdapterNotFound { .. }
            | DeviceError::RequestDevice { .. }
            | DeviceError::Lost { .. }
            | DeviceError::TimingInProgress { .. }
            | DeviceError::Launch(_)
            | DeviceError::RecordingInProgress { .. }
            | DeviceError::Unsuitable { .. }
            | DeviceError::NotAGpu { .. } => e,
        }
    }

    /// Waits for all submitted work, then reports errors wgpu raised outside
    /// the runtime's own error scopes.
    pub fn synchronize(&self) -> Result<(), DeviceError> {
        self.check_alive()?;
        self.wait(None).map_err(|e| self.explain_device(e))?;
        self.check_alive()?;
        self.take_uncaptured().map_err(|e| self.explain_device(e))?;
        self.drain_prints().map_err(|e| DeviceError::Launch(Box::new(e)))
    }

    /// Reads back the print buffers of the launches queued so far, prints
    /// their lines (`crate::debug`), and returns the first launch's panic.
    pub(crate) fn drain_prints(&self) -> Result<(), crate::error::LaunchError> {
        let pending = std::mem::take(&mut *self.shared.prints.lock().unwrap_or_else(|p| p.into_inner()));
        let mut result = Ok(());
        for (kernel, memory, words) in pending {
            let r = self.drain_one(kernel, &memory, words);
            if result.is_ok() {
                result = r;
            }
        }
        result
    }

    /// Reads one launch's print buffer and prints its lines.
    pub(crate) fn drain_one(
        &self,
        kernel: &'static onekernel_abi::KernelInfo,
        memory: &memory::GpuMemory,
        words: u32,
    ) -> Result<(), crate::error::LaunchError> {
        let mut bytes = vec![0u8; words as usize * 4];
        self.read(memory, 0..bytes.len() as u64, &mut bytes).map_err(|e| self.buffer_failure(kernel, e))?;
        let words: Vec<u32> =
            bytes.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes"))).collect();
        crate::debug::drain(kernel, &words)
    }

    /// The room for print records of later launches' print buffers, in
    /// words.
    pub(crate) fn print_words(&self) -> u32 {
        self.shared.print_words.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets [`GpuDevice::print_words`].
    pub(crate) fn set_print_words(&self, words: u32) {
        self.shared.print_words.store(words, std::sync::atomic::Ordering::Relaxed);
    }

    /// Queues a launch's print buffer for the next wait.
    pub(crate) fn defer_prints(
        &self,
        kernel: &'static onekernel_abi::KernelInfo,
        memory: memory::GpuMemory,
        words: u32,
    ) {
        self.shared.prints.lock().unwrap_or_else(|p| p.into_inner()).push((kernel, memory, words));
    }

    /// Blocks until `submission` (or everything submitted so far) is done.
    pub(crate) fn wait(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), DeviceError> {
        self.shared
            .device
            .poll(wgpu::PollType::Wait { submission_index: submission, timeout: None })
            .map(drop)
            .map_err(|e| DeviceError::Poll { reason: e.to_string() })
    }

    fn take_uncaptured(&self) -> Result<(), DeviceError> {
        let mut errors = match self.shared.uncaptured.lock() {
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
        let oom = self.shared.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.shared.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.shared.device.push_error_scope(wgpu::ErrorFilter::Internal);
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

impl GpuShared {
    /// The runtime's state around a wgpu device. `handlers`: install the
    /// uncaptured-error handler and the device-lost callback (on devices
    /// the runtime created; an adopted device keeps the program's).
    fn new(id: u64, adapter: &wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue, handlers: bool) -> GpuShared {
        let adapter_info = device.adapter_info();
        let limits = device.limits();
        let features = kernel_features(device.features());
        let cooperative_matrices = if features.contains(Features::COOPERATIVE_MATRIX) {
            adapter.cooperative_matrix_properties()
        } else {
            Vec::new()
        };
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let lost = Arc::new(Mutex::new(None));
        if handlers {
            let sink = Arc::clone(&uncaptured);
            device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                if let Ok(mut v) = sink.lock() {
                    v.push(e.to_string());
                }
            }));
            let lost_sink = Arc::clone(&lost);
            device.set_device_lost_callback(move |reason, message| {
                let mut lost = lost_sink.lock().unwrap_or_else(|p| p.into_inner());
                let why = match reason {
                    wgpu::DeviceLostReason::Destroyed => "destroyed",
                    wgpu::DeviceLostReason::Unknown => "lost",
                };
                lost.get_or_insert(if message.is_empty() { why.to_string() } else { format!("{why}: {message}") });
            });
        }
        GpuShared {
            id,
            launch_limits: LaunchLimits::from_wgpu(&limits),
            adapter_info,
            limits,
            features,
            cooperative_matrices,
            device,
            queue,
            adopted: !handlers,
            pipelines: PipelineCache::default(),
            staging: memory::StagingPool::default(),
            binds: bind_cache::BindCache::default(),
            poller: memory::Poller::default(),
            timing: timing::GpuTiming::default(),
            wall_clock_only: std::sync::atomic::AtomicBool::new(false),
            uncaptured,
            lost,
            prints: Mutex::new(Vec::new()),
            print_words: std::sync::atomic::AtomicU32::new(onekernel_abi::debug::print_buffer::DEFAULT_WORDS),
        }
    }
}

/// Every live wgpu device the runtime has a handle on, so that adopting a
/// device again (`Device::from_wgpu`) gives the same handle, id and caches.
mod registry {
    use super::GpuShared;
    use std::sync::{Mutex, MutexGuard, Weak};

    static DEVICES: Mutex<Vec<Weak<GpuShared>>> = Mutex::new(Vec::new());

    /// The list, locked (a poisoned list is intact: every change is one call).
    pub(super) fn lock() -> MutexGuard<'static, Vec<Weak<GpuShared>>> {
        DEVICES.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `a` and `b` are handles of one wgpu device. wgpu compares
    /// devices by their id in their `wgpu::Instance`, and two instances
    /// number their devices alike (the first device of each is equal to
    /// the other's), so equal handles are then told apart by where an
    /// error raised on `a` goes: into an error scope of `b` (this thread's
    /// innermost scope of the device) only if `b` is `a`. The error is a
    /// buffer with no usage, which wgpu refuses before allocating
    /// anything; an outer scope on `a` catches it otherwise, so neither
    /// device's error handler sees it.
    pub(super) fn same_device(a: &wgpu::Device, b: &wgpu::Device) -> bool {
        if a != b {
            return false;
        }
        let outer = a.push_error_scope(wgpu::ErrorFilter::Validation);
        let inner = b.push_error_scope(wgpu::ErrorFilter::Validation);
        let _refused = a.create_buffer(&wgpu::BufferDescriptor {
            label: Some("onekernel device identity probe"),
            size: 4,
            usage: wgpu::BufferUsages::empty(),
            mapped_at_creation: false,
        });
        // On native wgpu these futures are ready at once.
        let caught_by_b = pollster::block_on(inner.pop()).is_some();
        let _ = pollster::block_on(outer.pop());
        caught_by_b
    }
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice")
            .field("id", &self.shared.id)
            .field("name", &self.name())
            .field("unchecked", &self.unchecked)
            .finish()
    }
}

/// The smallest binding of an array of `ty`: one element, in whole 4-byte
/// words (the layout's `min_binding_size`, and the size of the stand-in
/// bound for an empty buffer).
pub(crate) fn stand_in_size(ty: &onekernel_abi::DataType) -> u64 {
    u64::from(ty.stride()).max(1).div_ceil(4) * 4
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
