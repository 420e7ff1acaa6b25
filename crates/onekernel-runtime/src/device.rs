//! [`Device`]: where kernels run and buffers live — a wgpu GPU or the CPU
//! executor, behind one cheap-to-clone handle. Every public method of
//! `Device` is here, in one `impl` block (timing included: [`Device::time`];
//! the types it returns are in [`crate::timing`]).

use crate::cpu::{CpuDevice, CpuMode};
use crate::error::DeviceError;
use crate::gpu::GpuDevice;
use crate::timing::{Clock, Profile, Timing};
use onekernel_abi::Features;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    /// The loop budget of checked launches ([`Device::with_loop_budget`]).
    loop_budget: Option<u32>,
}

// Boxing the GPU variant would save nothing: the enum lives once per device
// inside the `Arc`.
#[allow(clippy::large_enum_variant)]
enum Backend {
    Gpu(GpuDevice),
    Cpu(CpuDevice),
}

/// What a [`Device`] runs kernels on ([`Device::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceKind {
    /// A wgpu device (its own, [`Device::gpu`], or adopted,
    /// [`Device::from_wgpu`]).
    Gpu,
    /// The CPU executor on all cores ([`Device::cpu`]).
    CpuParallel,
    /// The CPU executor, one workgroup at a time in a fixed order
    /// ([`Device::cpu_serial`]).
    CpuSerial,
    /// The CPU executor with its race detector ([`Device::cpu_race_checked`]).
    CpuRaceChecked,
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
    /// checked handle, see [`Device::checked`]). The device gets the
    /// adapter's full limits (so large buffers work), `TIMESTAMP_QUERY`, and
    /// the kernel features of [`Device::features`] (plus `SUBGROUP_BARRIER`)
    /// where the adapter has them.
    pub fn gpu() -> Result<Device, DeviceError> {
        let checked = std::env::var_os(CHECKED_ENV).is_some_and(|v| v != "0" && !v.is_empty());
        Ok(Device {
            inner: Arc::new(Backend::Gpu(GpuDevice::new(next_device_id(), Features::NONE)?)),
            checked,
            loop_budget: None,
        })
    }

    /// [`Device::gpu`], created without the kernel features `without` even
    /// where the adapter has them: a device like the ones that lack them,
    /// to test what a program does there (a launch of a kernel that needs
    /// one is [`LaunchError::MissingFeature`](crate::LaunchError::MissingFeature)).
    ///
    /// ```no_run
    /// # use onekernel_runtime::{abi::Features, Device};
    /// let no_f64 = Device::gpu_without(Features::F64)?;
    /// assert!(!no_f64.features().contains(Features::F64));
    /// # Ok::<(), onekernel_runtime::DeviceError>(())
    /// ```
    pub fn gpu_without(without: Features) -> Result<Device, DeviceError> {
        let checked = std::env::var_os(CHECKED_ENV).is_some_and(|v| v != "0" && !v.is_empty());
        Ok(Device {
            inner: Arc::new(Backend::Gpu(GpuDevice::new(next_device_id(), without)?)),
            checked,
            loop_budget: None,
        })
    }

    /// Adopts a wgpu device your program created (a renderer's, a game
    /// engine's): kernels run on it, next to your own work, on its queue.
    /// `adapter`, `device` and `queue` are shared, not copied (the handle
    /// keeps clones of them: wgpu handles are reference-counted).
    ///
    /// What the runtime needs is checked here, once: the device can run
    /// compute shaders on storage buffers (a device created with
    /// `wgpu::Limits::downlevel_webgl2_defaults()` cannot), and `adapter` is
    /// the device's. Everything else is per kernel, at its launch, against
    /// the features and limits the device was *created* with (not what the
    /// adapter could give): a kernel needing a feature it lacks (`f16`,
    /// `f64`, subgroups, ...) fails with
    /// [`LaunchError::MissingFeature`](crate::LaunchError::MissingFeature), one
    /// needing more storage buffers, workgroup memory or a larger workgroup
    /// than its limits with
    /// [`LaunchError::LimitExceeded`](crate::LaunchError::LimitExceeded) or
    /// the existing limit errors (`WorkgroupTooLarge`,
    /// `SharedMemoryTooLarge`, `BindingTooLarge`, ...), each naming the
    /// limit, never a wgpu validation error. Without
    /// `wgpu::Features::TIMESTAMP_QUERY`, [`Device::time`] uses the wall
    /// clock. Request the features of [`Device::features`] you want kernels
    /// to have (`wgpu::Features::SHADER_F16`, ...) when you create the
    /// device.
    ///
    /// **The same device.** Two handles are the same device when they hold
    /// the same `wgpu::Device` (clones of one; wgpu compares handles by
    /// identity): adopting it again, or adopting the device of
    /// [`Device::gpu`] through [`Device::wgpu`], returns a handle with the
    /// same [`Device::id`], pipeline cache and buffers (a buffer of one is
    /// an argument of a launch on the other). Two `wgpu::Device`s are two
    /// devices even on one adapter: their buffers are not shared
    /// ([`Buffer::to_device`](crate::Buffer::to_device) copies between them).
    ///
    /// The runtime installs no uncaptured-error handler and no device-lost
    /// callback on an adopted device (they are your program's): its own
    /// operations capture their errors in wgpu error scopes and return
    /// them, and a lost device shows as the `Gpu` error wgpu gives.
    /// `ONEKERNEL_CHECKED=1` makes the handle checked, as for
    /// [`Device::gpu`].
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    /// let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    /// let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    /// // ... your renderer keeps `device` and `queue` ...
    /// let gpu = Device::from_wgpu(&adapter, &device, &queue)?;
    /// assert_eq!(Device::from_wgpu(&adapter, &device, &queue)?.id(), gpu.id());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`DeviceError::Unsuitable`] naming what is missing.
    pub fn from_wgpu(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
    ) -> Result<Device, DeviceError> {
        let checked = std::env::var_os(CHECKED_ENV).is_some_and(|v| v != "0" && !v.is_empty());
        let gpu = GpuDevice::adopt(next_device_id, adapter, device, queue)?;
        Ok(Device { inner: Arc::new(Backend::Gpu(gpu)), checked, loop_budget: None })
    }

    /// Every device kernels can run on here: each adapter wgpu finds (on
    /// the backends `WGPU_BACKEND` allows, all by default), then the CPU
    /// executor, with their names, backends and kernel features;
    /// [`AvailableDevice::open`] opens one. [`Device::gpu`] picks one of
    /// the same adapters for you.
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// for d in Device::available() {
    ///     println!("{d}"); // e.g. `llvmpipe (LLVM 19.1.7, 256 bits) (Vulkan, Cpu): f16, f64, ...`
    /// }
    /// let cpu = Device::available().into_iter().find(|d| d.is_cpu()).expect("always listed");
    /// assert!(cpu.open()?.is_cpu());
    /// # Ok::<(), onekernel_runtime::DeviceError>(())
    /// ```
    pub fn available() -> Vec<AvailableDevice> {
        let desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        let backends = desc.backends;
        let instance = wgpu::Instance::new(desc);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let mut list: Vec<AvailableDevice> = adapters
            .into_iter()
            .map(|adapter| {
                let info = adapter.get_info();
                AvailableDevice {
                    name: info.name.clone(),
                    backend: Some(info.backend),
                    device_type: Some(info.device_type),
                    features: crate::gpu::kernel_features(adapter.features()),
                    timestamps: adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY),
                    adapter: Some(adapter),
                }
            })
            .collect();
        list.push(AvailableDevice {
            name: Device::cpu().name(),
            backend: None,
            device_type: None,
            features: Features::ALL.iter().fold(Features::NONE, |all, (f, _)| all.union(*f)),
            timestamps: false,
            adapter: None,
        });
        list
    }

    /// The CPU executor: kernels run on all cores through rayon.
    ///
    /// With `ONEKERNEL_RACECHECK=1` in the environment this is
    /// [`Device::cpu_race_checked`] instead, to check a program's launches
    /// for data races without changing it.
    pub fn cpu() -> Device {
        let race_check = std::env::var_os(RACECHECK_ENV).is_some_and(|v| v != "0" && !v.is_empty());
        let mode = if race_check { CpuMode::RaceChecked } else { CpuMode::Parallel };
        Device {
            inner: Arc::new(Backend::Cpu(CpuDevice::new(next_device_id(), mode))),
            checked: false,
            loop_budget: None,
        }
    }

    /// The CPU executor with its race detector on (after CUDA's
    /// `compute-sanitizer --tool racecheck`). Each launch runs one
    /// workgroup at a time on the calling thread and records, per phase of
    /// a workgroup (between two barriers), which invocation wrote and read
    /// each shared-memory element, and for the whole launch which wrote and
    /// read each element of every `&mut [T]` output. The launch fails with
    /// [`LaunchError::DataRace`](crate::LaunchError::DataRace), naming the
    /// kernel, the element, the two invocations and the source line of each
    /// access, at the first of:
    ///
    /// - two invocations writing one element with nothing ordering them
    ///   (the same phase of one workgroup, or two workgroups);
    /// - one invocation reading an element another one wrote (or writing
    ///   one it read) with nothing ordering them;
    /// - a read of a shared-memory element no invocation of the workgroup
    ///   has written.
    ///
    /// Atomics never race and are not recorded. A race found here is a
    /// race on every GPU; a launch that passes is free of races *for these
    /// inputs and this grid* (the detector sees the accesses that happen,
    /// as compute-sanitizer does). Slow: one thread and a hash map per
    /// launch; for tests.
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// let device = Device::cpu_race_checked();
    /// assert!(device.is_cpu() && device.is_race_checked());
    /// ```
    pub fn cpu_race_checked() -> Device {
        Device {
            inner: Arc::new(Backend::Cpu(CpuDevice::new(next_device_id(), CpuMode::RaceChecked))),
            checked: false,
            loop_budget: None,
        }
    }

    /// The CPU executor run serially: each launch on the calling thread,
    /// one workgroup at a time in order (x fastest), the invocations of
    /// each in order too (between two barriers, invocation 0 first), so
    /// that everything a kernel does happens in one fixed, repeatable
    /// order. For debugging; slow.
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// let device = Device::cpu_serial();
    /// assert!(device.is_cpu() && !device.is_race_checked());
    /// ```
    pub fn cpu_serial() -> Device {
        Device {
            inner: Arc::new(Backend::Cpu(CpuDevice::new(next_device_id(), CpuMode::Serial))),
            checked: false,
            loop_budget: None,
        }
    }

    /// Whether this is a race-checked CPU executor
    /// ([`Device::cpu_race_checked`]).
    pub fn is_race_checked(&self) -> bool {
        match self.backend() {
            DeviceBackend::Cpu(c) => c.is_race_checked(),
            DeviceBackend::Gpu(_) => false,
        }
    }

    /// The GPU if one is available, else the CPU executor, with a one-line
    /// notice on stderr that says why there is no GPU.
    pub fn new() -> Device {
        match Device::gpu() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("onekernel: no usable GPU ({e}); running kernels on the CPU executor");
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
    /// A checked launch also bounds loops: every loop iteration of an
    /// invocation counts, and once an invocation has run more than the
    /// *loop budget* (2^24 iterations over all its loops unless changed,
    /// `onekernel_abi::report::DEFAULT_LOOP_BUDGET`) its loops break and
    /// the launch returns
    /// [`LaunchError::LoopBudget`](crate::LaunchError::LoopBudget) naming
    /// the loop's line: an endless loop ends in seconds instead of hanging
    /// the program. Change the budget with [`Device::with_loop_budget`] or,
    /// for every checked handle without one, `ONEKERNEL_LOOP_BUDGET=N` in
    /// the environment.
    ///
    /// The CPU executor always checks indices (Rust's own indexing): a
    /// failure there is [`LaunchError::CpuPanic`](crate::LaunchError::CpuPanic)
    /// at the same line, so this changes nothing on the CPU (which has no
    /// loop budget: an endless loop runs on there).
    ///
    /// On an [`unchecked`](Device::unchecked) handle this gives a checked
    /// one: checked launches always run the checked module with wgpu's own
    /// checks too.
    pub fn checked(&self) -> Device {
        Device { inner: Arc::clone(&self.inner), checked: true, loop_budget: self.loop_budget }
    }

    /// A checked handle (see [`Device::checked`]) whose launches allow each
    /// invocation `budget` loop iterations (counted over all its loops)
    /// before its loops break and the launch returns
    /// [`LaunchError::LoopBudget`](crate::LaunchError::LoopBudget).
    /// `u32::MAX` bounds nothing. The GPU compiles the checked pipeline of
    /// a kernel once per budget it runs with.
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// let device = Device::cpu().with_loop_budget(1 << 20);
    /// assert!(device.is_checked());
    /// assert_eq!(device.loop_budget(), Some(1 << 20));
    /// ```
    pub fn with_loop_budget(&self, budget: u32) -> Device {
        Device { inner: Arc::clone(&self.inner), checked: true, loop_budget: Some(budget) }
    }

    /// The loop budget set by [`Device::with_loop_budget`]; `None` for the
    /// default (`ONEKERNEL_LOOP_BUDGET` from the environment, or 2^24).
    pub fn loop_budget(&self) -> Option<u32> {
        self.loop_budget
    }

    /// Whether GPU launches through this handle are checked (see
    /// [`Device::checked`]).
    pub fn is_checked(&self) -> bool {
        self.checked
    }

    /// How GPU launches through this handle are checked, for the generated
    /// code's `GpuDevice::dispatch_with`.
    #[doc(hidden)]
    pub fn launch_checks(&self) -> crate::gpu::LaunchChecks {
        crate::gpu::LaunchChecks { checked: self.checked, loop_budget: self.loop_budget }
    }

    /// The process-unique id of this device (shown as `#id` in errors).
    pub fn id(&self) -> u64 {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.id(),
            DeviceBackend::Cpu(c) => c.id(),
        }
    }

    /// What the device runs kernels on: a GPU, or the CPU executor in
    /// parallel, serially or race-checked. A library picks its path from
    /// it (the kernel library runs host code on
    /// [`DeviceKind::CpuParallel`], its kernels elsewhere).
    ///
    /// ```
    /// # use onekernel_runtime::{Device, DeviceKind};
    /// assert_eq!(Device::cpu_serial().kind(), DeviceKind::CpuSerial);
    /// assert_eq!(Device::cpu_race_checked().kind(), DeviceKind::CpuRaceChecked);
    /// ```
    pub fn kind(&self) -> DeviceKind {
        match self.backend() {
            DeviceBackend::Gpu(_) => DeviceKind::Gpu,
            DeviceBackend::Cpu(c) => match c.mode() {
                crate::cpu::CpuMode::Parallel => DeviceKind::CpuParallel,
                crate::cpu::CpuMode::Serial => DeviceKind::CpuSerial,
                crate::cpu::CpuMode::RaceChecked => DeviceKind::CpuRaceChecked,
            },
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

    /// The optional kernel features the device has: `f16` (`SHADER_F16`),
    /// `f64` (`SHADER_F64`), 64-bit integers (`SHADER_INT64`), subgroups
    /// (`SUBGROUP`) and cooperative matrices
    /// (`EXPERIMENTAL_COOPERATIVE_MATRIX`). A GPU device is created with
    /// every one of them its adapter offers; the CPU executor has them all.
    /// Launching a kernel that needs one the device lacks
    /// (`KernelInfo::features`) is [`LaunchError::MissingFeature`](crate::LaunchError::MissingFeature).
    ///
    /// ```
    /// # use onekernel_runtime::{abi::Features, Device};
    /// let device = Device::cpu();
    /// assert!(device.features().contains(Features::F16.union(Features::SUBGROUP)));
    /// println!("{:?}", device.features().names().collect::<Vec<_>>());
    /// ```
    pub fn features(&self) -> Features {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.kernel_features(),
            DeviceBackend::Cpu(_) => Features::ALL.iter().fold(Features::NONE, |all, (f, _)| all.union(*f)),
        }
    }

    /// The smallest and largest subgroup size of the GPU (wgpu's
    /// `AdapterInfo::subgroup_min_size` and `subgroup_max_size`), when it
    /// has subgroups; `None` otherwise and on the CPU executor.
    pub fn subgroup_sizes(&self) -> Option<(u32, u32)> {
        match self.backend() {
            DeviceBackend::Gpu(g) if g.kernel_features().contains(Features::SUBGROUP) => {
                let info = g.adapter_info();
                Some((info.subgroup_min_size, info.subgroup_max_size))
            }
            DeviceBackend::Gpu(_) | DeviceBackend::Cpu(_) => None,
        }
    }

    /// The cooperative matrix shapes and types the GPU offers (wgpu's
    /// `Adapter::cooperative_matrix_properties`): empty without the
    /// feature, and on the CPU executor.
    pub fn cooperative_matrix_properties(&self) -> Vec<wgpu::CooperativeMatrixProperties> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.cooperative_matrix_properties().to_vec(),
            DeviceBackend::Cpu(_) => Vec::new(),
        }
    }

    /// A handle to the same device whose launches run without wgpu's
    /// shader runtime checks: no bounds check on buffer or workgroup-array
    /// accesses, no guard on integer division, no bound on loops. Buffers
    /// are shared with `self` (the handle has the same id); pipelines are
    /// compiled again for it, once per kernel. On the CPU executor it is a
    /// plain clone: the CPU body is Rust, and stays checked.
    ///
    /// wgpu's checks cost a quarter of a tuned matrix multiply's speed on
    /// an H200, and two thirds of a naive one's
    /// (`docs/performance.md`).
    ///
    /// # Safety
    /// For every launch through the returned handle (and its clones):
    /// - every access of the kernel to a buffer or a shared array is in
    ///   bounds: with the checks, an out-of-bounds read gives 0 or a clamped
    ///   element and a write is dropped; without them, it reads or writes
    ///   whatever memory lies there, which is undefined behaviour;
    /// - every loop of the kernel terminates (the GPU compiler may assume
    ///   it, and miscompile code around a loop that does not);
    /// - no integer division or remainder divides by zero or overflows
    ///   (`i32::MIN / -1`): WGSL defines them, unchecked they are
    ///   undefined.
    ///
    /// The CPU executor panics on the first two (an `Err` from the launch)
    /// and on a division by zero, so run a kernel there, or through a
    /// checked handle with inputs that exercise its edges, before trusting
    /// it to an unchecked one. Kernels that guard every access with
    /// `if i < buf.len()` meet the first condition by construction.
    ///
    /// ```
    /// # use onekernel_runtime::Device;
    /// let device = Device::cpu();
    /// // SAFETY: the kernels launched through `fast` stay in bounds (tested
    /// // on the CPU executor).
    /// let fast = unsafe { device.unchecked() };
    /// assert!(fast.is_unchecked() || fast.is_cpu());
    /// ```
    pub unsafe fn unchecked(&self) -> Device {
        match &*self.inner {
            // An unchecked handle is never checked: the two are opposite.
            Backend::Gpu(g) => {
                // SAFETY: forwarded to our caller (same contract).
                let fast = unsafe { g.unchecked_handle() };
                Device { inner: Arc::new(Backend::Gpu(fast)), checked: false, loop_budget: None }
            }
            Backend::Cpu(_) => self.clone(),
        }
    }

    /// Whether launches through this handle skip wgpu's runtime checks
    /// ([`Device::unchecked`]); always false on the CPU executor.
    pub fn is_unchecked(&self) -> bool {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.is_unchecked(),
            DeviceBackend::Cpu(_) => false,
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

    /// Sets the room for printed lines of each later launch of a kernel with
    /// `println!` (its print buffer on the GPU: 1 MiB unless set), in bytes,
    /// rounded down to whole 4-byte words. A launch whose prints do not fit
    /// prints the lines that did and says how many were dropped
    /// (`... N printed lines dropped: the print buffer was full`). It holds
    /// for every handle of this device (`checked`, `unchecked`, clones).
    /// A record takes 16 bytes plus 4 per 32-bit word of its values. On the
    /// CPU executor, which prints as it runs, it changes nothing.
    ///
    /// A size over the device's `max_storage_buffer_binding_size` makes
    /// the launches of printing kernels fail with an `Err` naming the
    /// kernel.
    pub fn set_print_buffer_size(&self, bytes: usize) {
        if let DeviceBackend::Gpu(g) = self.backend() {
            g.set_print_words(u32::try_from(bytes / 4).unwrap_or(u32::MAX));
        }
    }

    /// The room for printed lines of each launch, in bytes (see
    /// [`Device::set_print_buffer_size`]); 0 on the CPU executor.
    pub fn print_buffer_size(&self) -> usize {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.print_words() as usize * 4,
            DeviceBackend::Cpu(_) => 0,
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

    /// Runs `f` and times every launch it makes on this device (from any
    /// thread), on the GPU's own clock where the device has timestamp
    /// queries, else on the wall clock ([`Timing::clock`] says which).
    /// Returns what `f` returned, and the [`Timing`].
    ///
    /// ```
    /// use onekernel_runtime::timing::Clock;
    /// use onekernel_runtime::{Buffer, Device};
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
        let (r, profile) = self.profile(f)?;
        Ok((r, profile.timing()))
    }

    /// Runs `f` and times every launch it makes on this device, as
    /// [`Device::time`] does, grouped by kernel name: a [`Profile`] (count,
    /// total, mean and share of each kernel), whose `Display` is a table.
    ///
    /// ```
    /// use onekernel_runtime::Device;
    ///
    /// let device = Device::cpu();
    /// // Launches go inside the closure, e.g. `matmul::launch(&device, ..)`.
    /// let ((), profile) = device.profile(|| ())?;
    /// assert_eq!(profile.launches.len(), 0);
    /// println!("{profile}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// The clock is the GPU's timestamps where the device has
    /// `TIMESTAMP_QUERY` (lavapipe has it too), else the wall clock around
    /// each launch (with a wait for each: see [`Clock::Wall`]), and always
    /// the wall clock on the CPU executor.
    ///
    /// # Errors
    /// As [`Device::time`].
    pub fn profile<R>(&self, f: impl FnOnce() -> R) -> Result<(R, Profile), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.begin_timing(self)?,
            DeviceBackend::Cpu(c) => c.begin_timing(self)?,
        }
        let mut guard = ScopeGuard { device: self, armed: true };
        let start = Instant::now();
        let r = f();
        guard.armed = false;
        let (clock, launches) = match self.backend() {
            DeviceBackend::Gpu(g) => g.end_timing()?,
            DeviceBackend::Cpu(c) => (Clock::Wall, c.end_timing()),
        };
        Ok((r, Profile::new(clock, launches, start.elapsed())))
    }

    /// Runs `f` and records every launch it makes on this device (from this
    /// thread; through any handle of the device) into your `encoder`
    /// instead of submitting it: one compute pass per launch, in launch
    /// order, after what the encoder already holds and before what you
    /// record next. Nothing is submitted; your `queue.submit` runs the
    /// launches with your own passes, in one submission, in the order you
    /// recorded them (a frame's simulation, then the render pass that
    /// draws its result).
    ///
    /// Each launch is checked, and its pipeline and bind group made, when
    /// `f` launches it: its errors are its `Err`, as usual. What differs
    /// from a submitted launch:
    ///
    /// - **Checked launches** (a [`checked`](Device::checked) handle)
    ///   report their errors through [`Recorded::check`](crate::Recorded::check),
    ///   which you call after submitting the encoder; the launch itself
    ///   returns `Ok` (its check cannot be read before it ran). The encoder
    ///   gets a copy of the report after the launch's pass.
    /// - **Timing**: the launches are not timed by [`Device::time`] (the
    ///   runtime does not submit them); time your submission with your own
    ///   timestamp queries or the wall clock.
    /// - **Buffer operations** in `f` are not recorded: a write is queued
    ///   on the queue and lands before your next submission, so before the
    ///   recorded launches; a read waits for what was submitted, not for
    ///   the launches recorded so far. Write before, read after your
    ///   submit.
    /// - The encoder must be one of this device's (wgpu reports another
    ///   device's at `finish` or submit).
    ///
    /// On another thread, or another device, launches are submitted as
    /// usual meanwhile.
    ///
    /// ```
    /// use onekernel::prelude::*;
    ///
    /// #[kernel(workgroup_size = 64)]
    /// fn double(x: &mut [f32]) {
    ///     let i = global_id().x;
    ///     if i < x.len() {
    ///         x[i] = x[i] * 2.0;
    ///     }
    /// }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let gpu = Device::gpu()?;
    /// let mut x = Buffer::from_slice(&gpu, &[1.0f32, 2.0])?;
    /// let (device, queue) = gpu.wgpu().expect("a GPU");
    /// let mut encoder = device.create_command_encoder(&Default::default());
    /// let (launched, recorded) = gpu.record(&mut encoder, || double::launch(&gpu, 2, &mut x))?;
    /// launched?;
    /// // ... your render pass, recorded after the launch ...
    /// assert_eq!(x.read()?, [1.0, 2.0]); // recorded, not run yet
    /// queue.submit([encoder.finish()]);
    /// recorded.check()?; // checked launches' errors and kernels' prints and panics, if any
    /// assert_eq!(x.read()?, [2.0, 4.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`DeviceError::NotAGpu`] on the CPU executor (which has no encoder:
    /// launch as usual there); [`DeviceError::RecordingInProgress`] inside
    /// another `record` of this device on this thread;
    /// [`DeviceError::Lost`]; [`DeviceError::Gpu`] when a checked launch's
    /// read-back buffer cannot be made.
    pub fn record<R>(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        f: impl FnOnce() -> R,
    ) -> Result<(R, crate::Recorded), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.record(self, encoder, f),
            DeviceBackend::Cpu(_) => Err(DeviceError::NotAGpu { operation: "Device::record", device: self.describe() }),
        }
    }

    /// [`Device::record`] into an open compute pass of yours: each launch
    /// `f` makes on this device (from this thread) is recorded into `pass`
    /// (its pipeline, bind group 0 and dispatches) after what the pass
    /// already holds; your next `set_pipeline`/`set_bind_group` take over
    /// again. Dispatches in one pass see each other's writes, in order,
    /// as in separate passes.
    ///
    /// A checked launch cannot be recorded into a pass (its report is
    /// copied out after its pass): it returns
    /// [`LaunchError::Recording`](crate::LaunchError::Recording); record
    /// it with [`Device::record`]. Timing, buffer operations and printing
    /// kernels are as there, except that [`Recorded::check`](crate::Recorded::check)
    /// cannot tell a pass not yet submitted: call it after the submit.
    ///
    /// # Errors
    /// As [`Device::record`].
    pub fn record_pass<R>(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        f: impl FnOnce() -> R,
    ) -> Result<(R, crate::Recorded), DeviceError> {
        match self.backend() {
            DeviceBackend::Gpu(g) => g.record_pass(self, pass, f),
            DeviceBackend::Cpu(_) => {
                Err(DeviceError::NotAGpu { operation: "Device::record_pass", device: self.describe() })
            }
        }
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

/// A device [`Device::available`] lists: a wgpu adapter or the CPU
/// executor, and what kernels would get on it. [`AvailableDevice::open`]
/// opens it.
#[derive(Clone, Debug)]
pub struct AvailableDevice {
    /// The adapter's name (`NVIDIA H200`, `llvmpipe (LLVM 19.1.7, 256 bits)`)
    /// or the CPU executor's.
    pub name: String,
    /// The wgpu backend (`Vulkan`, `Metal`, ...); `None` for the CPU
    /// executor.
    pub backend: Option<wgpu::Backend>,
    /// Discrete, integrated, virtual or CPU (a software GPU such as
    /// lavapipe); `None` for the CPU executor.
    pub device_type: Option<wgpu::DeviceType>,
    /// The kernel features a device opened on it has.
    pub features: Features,
    /// Whether [`Device::time`] would use the GPU's timestamps there.
    pub timestamps: bool,
    adapter: Option<wgpu::Adapter>,
}

impl AvailableDevice {
    /// Whether this is the CPU executor.
    pub fn is_cpu(&self) -> bool {
        self.adapter.is_none()
    }

    /// The wgpu adapter; `None` for the CPU executor.
    pub fn adapter(&self) -> Option<&wgpu::Adapter> {
        self.adapter.as_ref()
    }

    /// Opens a device on it: as [`Device::gpu`] does on the adapter it
    /// picks (full limits, every kernel feature and timestamps where
    /// offered), or [`Device::cpu`]. Each call opens a new device.
    ///
    /// # Errors
    /// [`DeviceError::RequestDevice`] when the adapter refuses.
    pub fn open(&self) -> Result<Device, DeviceError> {
        match &self.adapter {
            Some(adapter) => {
                let checked = std::env::var_os(CHECKED_ENV).is_some_and(|v| v != "0" && !v.is_empty());
                let gpu = GpuDevice::open(next_device_id(), adapter, Features::NONE)?;
                Ok(Device { inner: Arc::new(Backend::Gpu(gpu)), checked, loop_budget: None })
            }
            None => Ok(Device::cpu()),
        }
    }
}

impl std::fmt::Display for AvailableDevice {
    /// `name (backend, type): features`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.backend, self.device_type) {
            (Some(b), Some(t)) => write!(f, "{} ({b:?}, {t:?})", self.name)?,
            _ => f.write_str(&self.name)?,
        }
        let mut names: Vec<&str> = self.features.names().collect();
        if self.timestamps {
            names.push("TIMESTAMP_QUERY");
        }
        if names.is_empty() {
            names.push("no optional features");
        }
        write!(f, ": {}", names.join(", "))
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

/// The environment variable that makes [`Device::gpu`] return checked
/// handles (see [`Device::checked`]).
pub const CHECKED_ENV: &str = "ONEKERNEL_CHECKED";

/// The environment variable that makes [`Device::cpu`] return a
/// race-checked executor (see [`Device::cpu_race_checked`]).
pub const RACECHECK_ENV: &str = "ONEKERNEL_RACECHECK";

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
            .field("unchecked", &self.is_unchecked())
            .finish()
    }
}

/// Compile-time proof of the thread-safety the docs promise.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Device>();
};
