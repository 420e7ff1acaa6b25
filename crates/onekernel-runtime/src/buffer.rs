//! [`Buffer`]: an array of [`Element`]s owned by one device, and the checks
//! that turn it into a kernel argument.

use crate::cpu::{CpuDevice, SharedSliceMut};
use crate::device::{Device, DeviceBackend};
use crate::error::{BufferError, LaunchError};
use crate::gpu::{GpuArg, GpuDevice, GpuMemory};
use onekernel_abi::{KernelInfo, ParamKind, ScalarType};

mod sealed {
    /// Restricts [`super::Element`] to the 4-byte types kernels support.
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
}

/// A type a [`Buffer`] can hold: `f32`, `i32` or `u32`.
pub trait Element: bytemuck::Pod + Send + Sync + sealed::Sealed {
    /// The matching kernel scalar type.
    const TYPE: ScalarType;
}

impl Element for f32 {
    const TYPE: ScalarType = ScalarType::F32;
}
impl Element for i32 {
    const TYPE: ScalarType = ScalarType::I32;
}
impl Element for u32 {
    const TYPE: ScalarType = ScalarType::U32;
}

/// Element types with a matching atomic type, for `&[AtomicU32]` /
/// `&[AtomicI32]` kernel parameters.
pub trait AtomicElement: Element {
    /// `AtomicU32` for `u32`, `AtomicI32` for `i32`.
    type Atomic: Sync;
    /// Views an exclusively borrowed slice as atomics.
    fn as_atomics(slice: &mut [Self]) -> &[Self::Atomic];
}

impl AtomicElement for u32 {
    type Atomic = std::sync::atomic::AtomicU32;
    fn as_atomics(slice: &mut [u32]) -> &[std::sync::atomic::AtomicU32] {
        // SAFETY: AtomicU32 has the same size and alignment as u32, and the
        // exclusive borrow means every access for its lifetime goes through
        // the returned atomics.
        unsafe { std::slice::from_raw_parts(slice.as_mut_ptr().cast(), slice.len()) }
    }
}

impl AtomicElement for i32 {
    type Atomic = std::sync::atomic::AtomicI32;
    fn as_atomics(slice: &mut [i32]) -> &[std::sync::atomic::AtomicI32] {
        // SAFETY: as for u32.
        unsafe { std::slice::from_raw_parts(slice.as_mut_ptr().cast(), slice.len()) }
    }
}

enum Storage<T> {
    Gpu(GpuMemory),
    Cpu(Vec<T>),
}

/// An array of `T` owned by one [`Device`]. Not `Clone`: a copy would be a
/// second allocation on the device, which should be explicit.
pub struct Buffer<T: Element> {
    device: Device,
    len: usize,
    storage: Storage<T>,
}

impl<T: Element> Buffer<T> {
    /// A buffer on `device` holding a copy of `data`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self, BufferError> {
        let storage = match device.backend() {
            DeviceBackend::Gpu(g) => Storage::Gpu(g.upload(data.len(), bytemuck::cast_slice(data))?),
            DeviceBackend::Cpu(_) => Storage::Cpu(data.to_vec()),
        };
        Ok(Buffer { device: device.clone(), len: data.len(), storage })
    }

    /// A buffer on `device` of `len` zeros.
    pub fn zeroed(device: &Device, len: usize) -> Result<Self, BufferError> {
        let storage = match device.backend() {
            DeviceBackend::Gpu(g) => Storage::Gpu(g.zeroed(len)?),
            DeviceBackend::Cpu(_) => Storage::Cpu(vec![T::zeroed(); len]),
        };
        Ok(Buffer { device: device.clone(), len, storage })
    }

    /// Overwrites the whole buffer with `data`, which must have the same
    /// length. On the GPU the write is queued after earlier launches.
    pub fn write(&mut self, data: &[T]) -> Result<(), BufferError> {
        if data.len() != self.len {
            return Err(BufferError::LengthMismatch { expected: self.len, got: data.len() });
        }
        match (&mut self.storage, self.device.backend()) {
            (Storage::Gpu(m), DeviceBackend::Gpu(g)) => g.write(m, bytemuck::cast_slice(data)),
            (Storage::Cpu(v), _) => {
                v.copy_from_slice(data);
                Ok(())
            }
            (Storage::Gpu(_), DeviceBackend::Cpu(_)) => Err(storage_mismatch()),
        }
    }

    /// A copy of the contents, after all queued work touching the buffer.
    pub fn read(&self) -> Result<Vec<T>, BufferError> {
        match (&self.storage, self.device.backend()) {
            (Storage::Gpu(m), DeviceBackend::Gpu(g)) => {
                let mut out = vec![T::zeroed(); self.len];
                g.read(m, bytemuck::cast_slice_mut(&mut out))?;
                Ok(out)
            }
            (Storage::Cpu(v), _) => Ok(v.clone()),
            (Storage::Gpu(_), DeviceBackend::Cpu(_)) => Err(storage_mismatch()),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device that owns the buffer.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The wgpu buffer, for hand-written baselines (`None` on the CPU or
    /// when the buffer is empty).
    pub fn wgpu_buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.storage {
            Storage::Gpu(m) => m.buffer.as_ref(),
            Storage::Cpu(_) => None,
        }
    }

    /// Checks shared by both paths: device, parameter kind and type, and
    /// non-emptiness.
    fn check_arg(
        &self,
        kernel: &'static KernelInfo,
        param: usize,
        device_id: u64,
        launch_device: impl FnOnce() -> String,
        access: Access,
    ) -> Result<(), LaunchError> {
        let arg = kernel.param_name(param);
        let invalid = |problem: String| Err(LaunchError::InvalidArgument { kernel: &kernel.name, arg, problem });
        let Some(info) = kernel.params.get(param) else {
            return invalid(format!("the kernel has no parameter #{param}"));
        };
        if !access.accepts(info.kind) {
            return invalid(format!(
                "passed as {} but the parameter is {}",
                access.describe(),
                describe_kind(info.kind)
            ));
        }
        if info.ty != T::TYPE {
            return invalid(format!("buffer of {} passed for a parameter of {}", T::TYPE, info.ty));
        }
        if self.device.id() != device_id {
            return Err(LaunchError::WrongDevice {
                kernel: &kernel.name,
                arg,
                buffer_device: self.device.describe(),
                launch_device: launch_device(),
            });
        }
        if self.len == 0 {
            return Err(LaunchError::EmptyBuffer { kernel: &kernel.name, arg });
        }
        Ok(())
    }

    fn gpu_arg_impl(
        &self,
        kernel: &'static KernelInfo,
        param: usize,
        gpu: &GpuDevice,
        access: Access,
    ) -> Result<GpuArg<'_>, LaunchError> {
        self.check_arg(kernel, param, gpu.id(), || gpu.describe(), access)?;
        let max_bytes = gpu.limits().max_storage_buffer_binding_size;
        if (self.len as u64).saturating_mul(4) > max_bytes {
            return Err(LaunchError::BindingTooLarge {
                kernel: &kernel.name,
                arg: kernel.param_name(param),
                len: self.len,
                max_bytes,
            });
        }
        match &self.storage {
            Storage::Gpu(GpuMemory { buffer: Some(buffer) }) => Ok(GpuArg { buffer, param }),
            // Unreachable after the device and emptiness checks; reported
            // rather than panicking all the same.
            _ => Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg: kernel.param_name(param),
                problem: "buffer has no GPU storage".into(),
            }),
        }
    }

    /// This buffer as the `&[T]` argument `param` of a GPU launch of
    /// `kernel`.
    pub(crate) fn gpu_arg(
        &self,
        kernel: &'static KernelInfo,
        param: usize,
        gpu: &GpuDevice,
    ) -> Result<GpuArg<'_>, LaunchError> {
        self.gpu_arg_impl(kernel, param, gpu, Access::Read)
    }

    /// This buffer as the `&mut [T]` (or atomic) argument `param` of a GPU
    /// launch of `kernel`. Takes `&mut self` so that the borrow checker sees
    /// the kernel writing to it.
    pub(crate) fn gpu_arg_mut(
        &mut self,
        kernel: &'static KernelInfo,
        param: usize,
        gpu: &GpuDevice,
    ) -> Result<GpuArg<'_>, LaunchError> {
        self.gpu_arg_impl(kernel, param, gpu, Access::Writable)
    }

    /// The buffer as the atomics of an `&[AtomicU32]` / `&[AtomicI32]`
    /// kernel parameter on the CPU, after the same checks as
    /// [`Buffer::cpu_shared`].
    pub(crate) fn cpu_atomics(
        &mut self,
        kernel: &'static KernelInfo,
        param: usize,
        cpu: &CpuDevice,
    ) -> Result<&[T::Atomic], LaunchError>
    where
        T: AtomicElement,
    {
        self.check_arg(kernel, param, cpu.id(), || cpu.describe(), Access::Atomics)?;
        match &mut self.storage {
            Storage::Cpu(v) => Ok(T::as_atomics(v)),
            Storage::Gpu(_) => Err(no_cpu_storage(kernel, param)),
        }
    }

    /// This buffer as the `&[T]` argument `param` of a CPU launch of
    /// `kernel`.
    pub(crate) fn cpu_slice(
        &self,
        kernel: &'static KernelInfo,
        param: usize,
        cpu: &CpuDevice,
    ) -> Result<&[T], LaunchError> {
        self.check_arg(kernel, param, cpu.id(), || cpu.describe(), Access::Read)?;
        match &self.storage {
            Storage::Cpu(v) => Ok(v),
            Storage::Gpu(_) => Err(no_cpu_storage(kernel, param)),
        }
    }

    /// This buffer as the `&mut [T]` argument `param` of a CPU launch of
    /// `kernel`, shared by all invocations.
    pub(crate) fn cpu_shared(
        &mut self,
        kernel: &'static KernelInfo,
        param: usize,
        cpu: &CpuDevice,
    ) -> Result<SharedSliceMut<'_, T>, LaunchError> {
        self.check_arg(kernel, param, cpu.id(), || cpu.describe(), Access::ReadWrite)?;
        match &mut self.storage {
            Storage::Cpu(v) => Ok(SharedSliceMut::new(v)),
            Storage::Gpu(_) => Err(no_cpu_storage(kernel, param)),
        }
    }
}

/// How a launch uses a buffer argument, checked against the parameter's
/// [`ParamKind`].
#[derive(Clone, Copy, Debug)]
enum Access {
    /// `&Buffer` for a `&[T]` parameter.
    Read,
    /// `&mut Buffer` for a `&mut [T]` parameter, on the CPU.
    ReadWrite,
    /// `&mut Buffer` for a `&[AtomicU32]`/`&[AtomicI32]` parameter, on the CPU.
    Atomics,
    /// `&mut Buffer` for any parameter the kernel writes, on the GPU (both
    /// are `read_write` storage bindings there).
    Writable,
}

impl Access {
    fn accepts(self, kind: ParamKind) -> bool {
        match self {
            Access::Read => match kind {
                ParamKind::ReadOnlyBuffer => true,
                ParamKind::ReadWriteBuffer | ParamKind::AtomicBuffer | ParamKind::Scalar => false,
            },
            Access::ReadWrite => match kind {
                ParamKind::ReadWriteBuffer => true,
                ParamKind::ReadOnlyBuffer | ParamKind::AtomicBuffer | ParamKind::Scalar => false,
            },
            Access::Atomics => match kind {
                ParamKind::AtomicBuffer => true,
                ParamKind::ReadOnlyBuffer | ParamKind::ReadWriteBuffer | ParamKind::Scalar => false,
            },
            Access::Writable => match kind {
                ParamKind::ReadWriteBuffer | ParamKind::AtomicBuffer => true,
                ParamKind::ReadOnlyBuffer | ParamKind::Scalar => false,
            },
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Access::Read => "a `&[T]` buffer",
            Access::ReadWrite => "a `&mut [T]` buffer",
            Access::Atomics => "an atomic buffer",
            Access::Writable => "a writable buffer",
        }
    }
}

/// A parameter kind as the Rust the user wrote.
fn describe_kind(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::ReadOnlyBuffer => "a `&[T]` buffer",
        ParamKind::ReadWriteBuffer => "a `&mut [T]` buffer",
        ParamKind::AtomicBuffer => "an atomic buffer",
        ParamKind::Scalar => "a scalar",
    }
}

/// Unreachable after the device check; an error rather than a panic.
fn no_cpu_storage(kernel: &'static KernelInfo, param: usize) -> LaunchError {
    LaunchError::InvalidArgument {
        kernel: &kernel.name,
        arg: kernel.param_name(param),
        problem: "buffer has no CPU storage".into(),
    }
}

/// A buffer's storage always matches its device's kind (set at creation);
/// should that invariant ever break, say so instead of panicking.
fn storage_mismatch() -> BufferError {
    BufferError::Gpu { operation: "accessing a buffer", message: "internal error: GPU storage on a CPU device".into() }
}

impl<T: Element + std::fmt::Debug> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("type", &T::TYPE)
            .field("len", &self.len)
            .field("device", &self.device.describe())
            .finish()
    }
}
