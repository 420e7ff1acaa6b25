//! The three error types of the runtime. Every failure is reported as a
//! `Result`; nothing in this crate panics on bad input.
//!
//! Messages always name what failed (the kernel, the argument) and why, so
//! that a user can act on them without a debugger.

pub use crate::cpu::{DataRace, RaceAccess, RaceKind};
use crate::grid::Dim3;
use std::fmt;

/// Creating or using a device failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceError {
    /// No wgpu adapter matched the requested backends.
    NoAdapter {
        /// What wgpu said, and which backends were tried.
        reason: String,
    },
    /// `WGPU_ADAPTER_NAME` was set but no adapter's name contains it.
    AdapterNotFound {
        /// The value of `WGPU_ADAPTER_NAME`.
        wanted: String,
        /// The names of the adapters that do exist.
        available: Vec<String>,
    },
    /// The adapter refused to create a device.
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// What wgpu said.
        reason: String,
    },
    /// Waiting for the GPU failed (device lost, timeout).
    Poll {
        /// What wgpu said.
        reason: String,
    },
    /// wgpu reported an error outside any launch (for example a validation
    /// error raised by work recorded through [`crate::Device::wgpu`]).
    Gpu {
        /// What wgpu said.
        message: String,
    },
    /// The GPU device was lost (a driver reset, a removed GPU, or
    /// `wgpu::Device::destroy`); it cannot be used any more.
    Lost {
        /// The device, as `#id (name)`.
        device: String,
        /// Why, as wgpu reported it.
        reason: String,
    },
    /// [`crate::Device::time`] was called while the device is already
    /// timing (calls cannot nest or overlap).
    TimingInProgress {
        /// The device, as `#id (name)`.
        device: String,
    },
    /// A launch queued before this wait failed in a way only the wait
    /// sees (a kernel's `panic!` or failed `assert!` on the GPU:
    /// [`LaunchError::KernelPanic`]).
    Launch(Box<LaunchError>),
    /// [`crate::Device::record`] was called while launches on this device
    /// are already being recorded on this thread (calls cannot nest).
    RecordingInProgress {
        /// The device, as `#id (name)`.
        device: String,
    },
    /// A wgpu device given to [`crate::Device::from_wgpu`] cannot run
    /// kernels (it was created without compute shaders or storage
    /// buffers), or the adapter given is not the device's.
    Unsuitable {
        /// The adapter's name.
        device: String,
        /// What is missing.
        reason: String,
    },
    /// A GPU-only operation was asked of the CPU executor.
    NotAGpu {
        /// The method, such as `"Device::run_compute_pass"`.
        operation: &'static str,
        /// The device, as `#id (name)`.
        device: String,
    },
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceError::NoAdapter { reason } => write!(f, "no GPU adapter found: {reason}"),
            DeviceError::AdapterNotFound { wanted, available } => {
                write!(f, "WGPU_ADAPTER_NAME={wanted:?} matches no adapter; available: [{}]", available.join(", "))
            }
            DeviceError::RequestDevice { adapter, reason } => {
                write!(f, "adapter `{adapter}` refused to create a device: {reason}")
            }
            DeviceError::Poll { reason } => write!(f, "waiting for the GPU failed: {reason}"),
            DeviceError::Gpu { message } => write!(f, "GPU error: {message}"),
            DeviceError::Lost { device, reason } => write!(f, "GPU device {device} was lost ({reason})"),
            DeviceError::TimingInProgress { device } => {
                write!(f, "device {device} is already timing launches: Device::time calls cannot nest or overlap")
            }
            DeviceError::Launch(e) => write!(f, "{e}"),
            DeviceError::RecordingInProgress { device } => write!(
                f,
                "launches on device {device} are already being recorded on this thread: Device::record calls cannot nest"
            ),
            DeviceError::Unsuitable { device, reason } => {
                write!(f, "the wgpu device on `{device}` cannot run kernels: {reason}")
            }
            DeviceError::NotAGpu { operation, device } => {
                write!(f, "{operation} needs a GPU, but device {device} is the CPU executor")
            }
        }
    }
}

impl std::error::Error for DeviceError {}

/// Creating, writing or reading a [`crate::Buffer`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BufferError {
    /// The buffer would be larger than the device allows.
    TooLarge {
        /// Requested number of elements.
        len: usize,
        /// Their size in bytes.
        bytes: u64,
        /// The device's largest buffer in bytes.
        max_bytes: u64,
        /// The device, as `#id (name)`.
        device: String,
    },
    /// A slice or buffer of another length than the buffer's was given
    /// where the lengths must be equal ([`crate::Buffer::write`],
    /// [`crate::Buffer::read_into`], [`crate::Buffer::copy_from`]).
    LengthMismatch {
        /// The method, such as `"Buffer::write"`.
        operation: &'static str,
        /// The buffer's length.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A range of elements does not fit in the buffer.
    OutOfRange {
        /// The method, such as `"Buffer::read_range"`.
        operation: &'static str,
        /// The range asked for, such as `"3..9"` or `"2.."`.
        range: String,
        /// The buffer's length.
        len: usize,
    },
    /// Two buffers of an operation live on different devices.
    WrongDevice {
        /// The method, such as `"Buffer::copy_from"`.
        operation: &'static str,
        /// The device of the buffer the method was called on, as `#id (name)`.
        this_device: String,
        /// The device of the other buffer, as `#id (name)`.
        other_device: String,
    },
    /// wgpu failed (out of memory, mapping failed).
    Gpu {
        /// What was being done.
        operation: &'static str,
        /// What wgpu said.
        message: String,
    },
    /// The device failed while waiting for the buffer.
    Device(DeviceError),
    /// A launch queued before this wait failed in a way only the wait
    /// sees (a kernel's `panic!` or failed `assert!` on the GPU:
    /// [`LaunchError::KernelPanic`]).
    Launch(Box<LaunchError>),
    /// A buffer adopted with [`crate::Buffer::from_wgpu`] was created
    /// without a usage the operation needs: `STORAGE` for a kernel
    /// argument, `COPY_SRC` to read it (or copy from it), `COPY_DST` to
    /// write it (or copy into it).
    MissingUsage {
        /// The method, such as `"Buffer::read"`.
        operation: &'static str,
        /// The missing `wgpu::BufferUsages` flag, such as `"COPY_SRC"`.
        usage: &'static str,
    },
    /// A `wgpu::Buffer` cannot be adopted as a buffer of this length
    /// ([`crate::Buffer::from_wgpu`]), or a buffer cannot be viewed as
    /// another element type ([`crate::Buffer::cast`]).
    Layout {
        /// The method, such as `"Buffer::from_wgpu"`.
        operation: &'static str,
        /// What does not fit.
        problem: String,
    },
    /// The shape asked for holds another number of elements than the
    /// buffer (`ndarray` read-backs).
    ShapeMismatch {
        /// The method, such as `"Buffer::read_array"`.
        operation: &'static str,
        /// The shape asked for.
        shape: Vec<usize>,
        /// The buffer's length.
        len: usize,
    },
    /// The element type's [`crate::Element`] impl does not describe it (a
    /// hand-written impl whose `TYPE` has another size or alignment).
    InvalidElement {
        /// The Rust type, as `std::any::type_name` spells it.
        element: &'static str,
        /// What is wrong.
        problem: String,
    },
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::TooLarge { len, bytes, max_bytes, device } => write!(
                f,
                "buffer of {len} elements ({bytes} bytes) exceeds the max buffer size of {max_bytes} bytes of device {device}"
            ),
            BufferError::InvalidElement { element, problem } => {
                write!(f, "`{element}` cannot be a buffer element: {problem}")
            }
            BufferError::LengthMismatch { operation, expected, got } => write!(
                f,
                "{operation}: {got} elements given for a buffer of {expected} elements; the lengths must be equal"
            ),
            BufferError::OutOfRange { operation, range, len } => {
                write!(f, "{operation}: elements {range} are out of bounds of a buffer of {len} elements")
            }
            BufferError::WrongDevice { operation, this_device, other_device } => write!(
                f,
                "{operation}: the buffers live on different devices: this one on device {this_device}, the other on device {other_device}"
            ),
            BufferError::Gpu { operation, message } => write!(f, "{operation} failed on the GPU: {message}"),
            BufferError::Device(e) => write!(f, "{e}"),
            BufferError::Launch(e) => write!(f, "{e}"),
            BufferError::MissingUsage { operation, usage } => write!(
                f,
                "{operation}: the wgpu buffer was created without `wgpu::BufferUsages::{usage}`, which this needs"
            ),
            BufferError::Layout { operation, problem } => write!(f, "{operation}: {problem}"),
            BufferError::ShapeMismatch { operation, shape, len } => write!(
                f,
                "{operation}: shape {shape:?} holds {} elements, but the buffer has {len}",
                shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).map_or("more than usize::MAX".into(), |n| n.to_string())
            ),
        }
    }
}

impl std::error::Error for BufferError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BufferError::Device(e) => Some(e),
            BufferError::Launch(e) => Some(&**e),
            BufferError::TooLarge { .. }
            | BufferError::LengthMismatch { .. }
            | BufferError::OutOfRange { .. }
            | BufferError::WrongDevice { .. }
            | BufferError::InvalidElement { .. }
            | BufferError::MissingUsage { .. }
            | BufferError::Layout { .. }
            | BufferError::ShapeMismatch { .. }
            | BufferError::Gpu { .. } => None,
        }
    }
}

impl From<DeviceError> for BufferError {
    fn from(e: DeviceError) -> BufferError {
        BufferError::Device(e)
    }
}

/// A kernel launch failed. Every message names the kernel (and the argument
/// where one is at fault).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaunchError {
    /// A buffer argument lives on another device than the launch.
    WrongDevice {
        /// The kernel's name.
        kernel: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// The buffer's device, as `#id (name)`.
        buffer_device: String,
        /// The launch's device, as `#id (name)`.
        launch_device: String,
    },
    /// A buffer argument is larger than one storage binding may be.
    BindingTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The argument's name.
        arg: &'static str,
        /// The buffer's length in elements.
        len: usize,
        /// The device's `max_storage_buffer_binding_size`.
        max_bytes: u64,
    },
    /// A multi-dimensional grid has an axis beyond the per-dimension limit.
    GridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The logical number of workgroups.
        groups: Dim3,
        /// The device's `max_compute_workgroups_per_dimension`.
        max_per_dimension: u32,
    },
    /// A 1-D grid is too large even when folded into 2-D.
    FoldedGridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The logical number of workgroups in x.
        groups: usize,
        /// The device's `max_compute_workgroups_per_dimension`.
        max_per_dimension: u32,
    },
    /// The workgroup has more invocations than the device (or the kernel's
    /// declared maximum) allows.
    WorkgroupTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Invocations per workgroup.
        invocations: u64,
        /// The limit.
        max: u64,
    },
    /// The kernel's shared arrays need more workgroup memory than the
    /// device has (a kernel may declare more than the WebGPU default with
    /// `#[kernel(max_shared_bytes = ..)]`).
    SharedMemoryTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The bytes of shared memory the kernel declares.
        bytes: u64,
        /// The device's `max_compute_workgroup_storage_size`.
        max: u64,
    },
    /// One axis of the workgroup is larger than the device allows.
    WorkgroupAxisTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// `'x'`, `'y'` or `'z'`.
        axis: char,
        /// The workgroup size along that axis.
        size: u32,
        /// The device's `max_compute_workgroup_size_{axis}`.
        max: u32,
    },
    /// The race detector of a race-checked CPU executor
    /// ([`Device::cpu_race_checked`](crate::Device::cpu_race_checked))
    /// found a data race: two invocations writing one element, or one
    /// reading what another wrote, with no barrier (or workgroup) ordering
    /// them, or a read of shared memory nobody wrote.
    DataRace {
        /// The kernel's name.
        kernel: &'static str,
        /// The element, the two accesses and their source lines.
        race: Box<DataRace>,
    },
    /// A `panic!`, `unreachable!`, `todo!`, `unimplemented!` or failed
    /// `assert!`/`assert_eq!`/`assert_ne!` (or `debug_` form) in the
    /// kernel, on any device: the first one of the launch (on the GPU, a
    /// launch queued without waiting reports it at the next wait). The
    /// panicking invocation ended there; the others ran on (the CPU
    /// executor stops at the first).
    KernelPanic {
        /// The kernel's name.
        kernel: &'static str,
        /// The kernel's source file.
        file: String,
        /// The line of the macro (1-based).
        line: u32,
        /// Its column (1-based).
        column: u32,
        /// The panic's message, as Rust's panic writes it
        /// (``assertion `left == right` failed``, the user's message, ...).
        message: String,
        /// The global id of the invocation that panicked.
        invocation: Dim3,
        /// How many invocations panicked (on the CPU, 1).
        panics: u32,
    },
    /// The kernel body panicked on the CPU executor.
    CpuPanic {
        /// The kernel's name.
        kernel: &'static str,
        /// `file:line:col` of the panic, when the runtime's panic hook saw it.
        location: Option<String>,
        /// The panic message.
        message: String,
    },
    /// An argument does not match the kernel's parameter (a bug in generated
    /// code or a hand-written launch).
    InvalidArgument {
        /// The kernel's name.
        kernel: &'static str,
        /// The argument's name (`"?"` if the index is out of range).
        arg: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The `KernelInfo` itself is inconsistent (a bug in the compiler).
    InvalidKernel {
        /// The kernel's name.
        kernel: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// wgpu rejected the shader or the pipeline.
    Compile {
        /// The kernel's name.
        kernel: &'static str,
        /// What wgpu said.
        message: String,
    },
    /// The GPU device was lost before or during the launch.
    DeviceLost {
        /// The kernel's name.
        kernel: &'static str,
        /// What happened to the device.
        error: DeviceError,
    },
    /// wgpu reported an error while recording or submitting the launch.
    Gpu {
        /// The kernel's name.
        kernel: &'static str,
        /// What wgpu said.
        message: String,
    },
    /// The kernel needs device features (`f16`, `f64`, 64-bit integers,
    /// subgroups, cooperative matrices) that the device lacks.
    MissingFeature {
        /// The kernel's name.
        kernel: &'static str,
        /// The features it needs and the device lacks
        /// ([`crate::abi::Features::names`] gives wgpu's names).
        missing: onekernel_abi::Features,
        /// The device, as `#id (name)`.
        device: String,
    },
    /// The kernel multiplies tiles of a shape or type the device's
    /// cooperative matrices do not offer (`Device::cooperative_matrix_properties`).
    UnsupportedTileShape {
        /// The kernel's name.
        kernel: &'static str,
        /// The tile product it needs.
        shape: onekernel_abi::TileShape,
        /// The shapes the device offers, for the message.
        offered: String,
        /// The device, as `#id (name)`.
        device: String,
    },
    /// The kernel needs more of a resource than the device was created
    /// with (a device adopted with [`crate::Device::from_wgpu`] may have
    /// wgpu's default limits): `limit` is the `wgpu::Limits` field.
    LimitExceeded {
        /// The kernel's name.
        kernel: &'static str,
        /// The `wgpu::Limits` field, such as `"max_storage_buffers_per_shader_stage"`.
        limit: &'static str,
        /// What the launch needs.
        needed: u64,
        /// The device's limit.
        max: u64,
        /// The device, as `#id (name)`.
        device: String,
    },
    /// A launch recorded with [`crate::Device::record`] or
    /// [`crate::Device::record_pass`] could not be recorded there, or its
    /// checks or prints could not be read ([`crate::Recorded::check`]
    /// before the encoder was submitted).
    Recording {
        /// The kernel's name.
        kernel: &'static str,
        /// What went wrong.
        problem: String,
    },
    /// A checked launch ([`crate::Device::checked`]) indexed a buffer, a
    /// shared array or a local array out of bounds. The first failure is
    /// described; the access went to element 0 instead.
    OutOfBounds {
        /// The kernel's name.
        kernel: &'static str,
        /// `file:line:column` of the indexing expression.
        location: String,
        /// The parameter or array indexed.
        what: &'static str,
        /// The index.
        index: u32,
        /// The length it was checked against.
        len: u32,
        /// How many accesses failed in the launch (all invocations).
        failures: u32,
    },
    /// A checked launch divided an integer by zero (`/`, `%`,
    /// `wrapping_div`, `wrapping_rem` or `rem_euclid`; Rust panics there).
    DivisionByZero {
        /// The kernel's name.
        kernel: &'static str,
        /// `file:line:column` of the division.
        location: String,
        /// The operator or method.
        what: &'static str,
        /// How many divisions failed in the launch.
        failures: u32,
    },
    /// A checked launch ([`crate::Device::checked`]) ran an invocation's
    /// loops past the loop budget ([`crate::Device::with_loop_budget`],
    /// 2^24 iterations unless changed); its loops were ended.
    LoopBudget {
        /// The kernel's name.
        kernel: &'static str,
        /// `file:line:column` of the loop.
        location: String,
        /// Iterations allowed per invocation.
        budget: u32,
    },
}

impl LaunchError {
    /// The name of the kernel whose launch failed.
    pub fn kernel(&self) -> &'static str {
        match self {
            LaunchError::WrongDevice { kernel, .. }
            | LaunchError::BindingTooLarge { kernel, .. }
            | LaunchError::GridTooLarge { kernel, .. }
            | LaunchError::FoldedGridTooLarge { kernel, .. }
            | LaunchError::WorkgroupTooLarge { kernel, .. }
            | LaunchError::SharedMemoryTooLarge { kernel, .. }
            | LaunchError::WorkgroupAxisTooLarge { kernel, .. }
            | LaunchError::CpuPanic { kernel, .. }
            | LaunchError::KernelPanic { kernel, .. }
            | LaunchError::DataRace { kernel, .. }
            | LaunchError::InvalidArgument { kernel, .. }
            | LaunchError::InvalidKernel { kernel, .. }
            | LaunchError::Compile { kernel, .. }
            | LaunchError::DeviceLost { kernel, .. }
            | LaunchError::MissingFeature { kernel, .. }
            | LaunchError::UnsupportedTileShape { kernel, .. }
            | LaunchError::LimitExceeded { kernel, .. }
            | LaunchError::Recording { kernel, .. }
            | LaunchError::Gpu { kernel, .. }
            | LaunchError::OutOfBounds { kernel, .. }
            | LaunchError::DivisionByZero { kernel, .. }
            | LaunchError::LoopBudget { kernel, .. } => kernel,
        }
    }
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::WrongDevice { kernel, arg, buffer_device, launch_device } => write!(
                f,
                "kernel `{kernel}`, argument `{arg}`: buffer belongs to device {buffer_device}, but the launch is on device {launch_device}"
            ),
            LaunchError::BindingTooLarge { kernel, arg, len, max_bytes } => write!(
                f,
                "kernel `{kernel}`, argument `{arg}`: {len} elements exceed the device's max storage binding of {max_bytes} bytes"
            ),
            LaunchError::GridTooLarge { kernel, groups, max_per_dimension } => write!(
                f,
                "kernel `{kernel}`: grid of {groups} workgroups exceeds the device limit of {max_per_dimension} per dimension; only 1-D grids are folded"
            ),
            LaunchError::FoldedGridTooLarge { kernel, groups, max_per_dimension } => write!(
                f,
                "kernel `{kernel}`: grid of {groups} workgroups exceeds the device limit even when folded into 2-D (at most {max_per_dimension} x {max_per_dimension})"
            ),
            LaunchError::WorkgroupTooLarge { kernel, invocations, max } => write!(
                f,
                "kernel `{kernel}`: workgroup of {invocations} invocations exceeds the device limit of {max}"
            ),
            LaunchError::SharedMemoryTooLarge { kernel, bytes, max } => write!(
                f,
                "kernel `{kernel}`: {bytes} bytes of shared memory exceed the device limit of {max} bytes per workgroup"
            ),
            LaunchError::WorkgroupAxisTooLarge { kernel, axis, size, max } => write!(
                f,
                "kernel `{kernel}`: workgroup size {size} in {axis} exceeds the device limit of {max}"
            ),
            LaunchError::DataRace { kernel, race } => write!(f, "kernel `{kernel}`: data race: {race}"),
            LaunchError::KernelPanic { kernel, file, line, column, message, invocation, panics } => {
                let Dim3 { x, y, z } = invocation;
                write!(f, "kernel `{kernel}` panicked at {file}:{line}:{column} in invocation ({x}, {y}, {z}):\n{message}")?;
                match panics {
                    0 | 1 => Ok(()),
                    n => write!(f, "\n({} more invocations panicked)", n - 1),
                }
            }
            LaunchError::CpuPanic { kernel, location: Some(at), message } => {
                write!(f, "kernel `{kernel}`: panicked on the CPU at {at}: {message}")
            }
            LaunchError::CpuPanic { kernel, location: None, message } => {
                write!(f, "kernel `{kernel}`: panicked on the CPU: {message}")
            }
            LaunchError::InvalidArgument { kernel, arg, problem } => {
                write!(f, "kernel `{kernel}`, argument `{arg}`: {problem}")
            }
            LaunchError::InvalidKernel { kernel, problem } => {
                write!(f, "kernel `{kernel}`: invalid kernel description: {problem}")
            }
            LaunchError::Compile { kernel, message } => {
                write!(f, "kernel `{kernel}`: the GPU rejected the shader: {message}")
            }
            LaunchError::DeviceLost { kernel, error } => write!(f, "kernel `{kernel}`: {error}"),
            LaunchError::Gpu { kernel, message } => write!(f, "kernel `{kernel}`: GPU error: {message}"),
            LaunchError::MissingFeature { kernel, missing, device } => {
                let names: Vec<&str> = missing.names().collect();
                write!(
                    f,
                    "kernel `{kernel}` needs the device feature{} {}, which device {device} does not have",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", ")
                )
            }
            LaunchError::UnsupportedTileShape { kernel, shape, offered, device } => write!(
                f,
                "kernel `{kernel}` multiplies tiles of {shape}, which the cooperative matrices of device {device} do not offer (it offers: {offered})"
            ),
            LaunchError::LimitExceeded { kernel, limit, needed, max, device } => write!(
                f,
                "kernel `{kernel}` needs {limit} = {needed}, but device {device} was created with {max}"
            ),
            LaunchError::Recording { kernel, problem } => write!(f, "kernel `{kernel}`: {problem}"),
            LaunchError::OutOfBounds { kernel, location, what, index, len, failures } => {
                write!(f, "kernel `{kernel}`: index out of bounds at {location}: the len of `{what}` is {len} but the index is {index}")?;
                more_failures(f, *failures)
            }
            LaunchError::DivisionByZero { kernel, location, what, failures } => {
                write!(f, "kernel `{kernel}`: integer division by zero (`{what}`) at {location}")?;
                more_failures(f, *failures)
            }
            LaunchError::LoopBudget { kernel, location, budget } => write!(
                f,
                "kernel `{kernel}`: the loop at {location} ran past the budget of {budget} loop iterations per invocation; it was stopped"
            ),
        }
    }
}

impl std::error::Error for LaunchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LaunchError::DeviceLost { error, .. } => Some(error),
            LaunchError::WrongDevice { .. }
            | LaunchError::BindingTooLarge { .. }
            | LaunchError::GridTooLarge { .. }
            | LaunchError::FoldedGridTooLarge { .. }
            | LaunchError::WorkgroupTooLarge { .. }
            | LaunchError::SharedMemoryTooLarge { .. }
            | LaunchError::WorkgroupAxisTooLarge { .. }
            | LaunchError::CpuPanic { .. }
            | LaunchError::KernelPanic { .. }
            | LaunchError::DataRace { .. }
            | LaunchError::InvalidArgument { .. }
            | LaunchError::InvalidKernel { .. }
            | LaunchError::Compile { .. }
            | LaunchError::MissingFeature { .. }
            | LaunchError::UnsupportedTileShape { .. }
            | LaunchError::LimitExceeded { .. }
            | LaunchError::Recording { .. }
            | LaunchError::Gpu { .. }
            | LaunchError::OutOfBounds { .. }
            | LaunchError::DivisionByZero { .. }
            | LaunchError::LoopBudget { .. } => None,
        }
    }
}

/// ` (and N more failed checks)` after the first failure of a checked launch.
fn more_failures(f: &mut fmt::Formatter<'_>, failures: u32) -> fmt::Result {
    match failures {
        0 | 1 => Ok(()),
        2 => write!(f, " (and 1 more failed check)"),
        n => write!(f, " (and {} more failed checks)", n - 1),
    }
}
