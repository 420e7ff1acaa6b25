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
