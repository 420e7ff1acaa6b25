//! [`Buffer`]: an array of [`Element`]s owned by one device, and the checks
//! that turn it into a kernel argument.

use crate::cpu::{CpuDevice, SharedSliceMut};
use crate::device::{Device, DeviceBackend};
use crate::error::{BufferError, LaunchError};
use crate::gpu::{GpuArg, GpuDevice, GpuMemory};
use onekernel_abi::{DataType, KernelInfo, ParamKind, ScalarType};
use std::ops::{Bound, Range, RangeBounds};

/// A type a [`Buffer`] can hold and a kernel can take as an element of a
/// `&[T]` / `&mut [T]` parameter or as a scalar parameter: its bytes are
/// exactly what the GPU sees.
///
/// Implemented for `f32`, `i32`, `u32`, [`half::f16`], `f64`, `i64`,
/// `u64`, and the glam vectors whose size is WGSL's array stride:
/// [`Vec2`](glam::Vec2), [`Vec3A`](glam::Vec3A), [`Vec4`](glam::Vec4),
/// [`IVec2`](glam::IVec2), [`IVec4`](glam::IVec4), [`UVec2`](glam::UVec2),
/// [`UVec4`](glam::UVec4) (and their `f64`/`i64`/`u64` versions `DVec2`,
/// `DVec4`, `I64Vec2`, `I64Vec4`, `U64Vec2`, `U64Vec4`), and onekernel's
/// `f16` vectors [`F16Vec2`](crate::F16Vec2) and [`F16Vec4`](crate::F16Vec4).
/// glam's `Vec3`, `IVec3` and `UVec3` are 12 bytes while an array of WGSL `vec3<T>` takes
/// 16 bytes per element, so they are not elements (use `Vec3A`; the
/// 3-lane types are fine as scalar parameters, where a `vec3<T>` takes 12
/// bytes).
///
/// `#[kernel]` implements it for the user structs a kernel uses, after
/// checking their `#[repr(C)]` layout against WGSL's. A hand-written impl
/// is allowed; one whose [`Element::TYPE`] does not describe the type (its
/// size is not [`DataType::stride`], or it is aligned more strictly than
/// [`DataType::align`]) is refused with an `Err` when a buffer of it is
/// created or a scalar of it is passed, never undefined behaviour: the
/// runtime's soundness rests only on `bytemuck::Pod`.
pub trait Element: bytemuck::Pod + Send + Sync {
    /// The matching kernel data type (WGSL layout).
    const TYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $e:expr),* $(,)?) => {$(
        impl Element for $t {
            const TYPE: DataType = $e;
        }
    )*};
}

const fn vector(elem: ScalarType, lanes: u8) -> DataType {
    DataType::Vector { elem, lanes }
}

elements! {
    f32 => DataType::F32,
    i32 => DataType::I32,
    u32 => DataType::U32,
    half::f16 => DataType::Scalar(ScalarType::F16),
    f64 => DataType::Scalar(ScalarType::F64),
    i64 => DataType::Scalar(ScalarType::I64),
    u64 => DataType::Scalar(ScalarType::U64),
    glam::Vec2 => vector(ScalarType::F32, 2),
    glam::Vec3A => vector(ScalarType::F32, 3),
    glam::Vec4 => vector(ScalarType::F32, 4),
    glam::IVec2 => vector(ScalarType::I32, 2),
    glam::IVec4 => vector(ScalarType::I32, 4),
    glam::UVec2 => vector(ScalarType::U32, 2),
    glam::UVec4 => vector(ScalarType::U32, 4),
    glam::DVec2 => vector(ScalarType::F64, 2),
    glam::DVec4 => vector(ScalarType::F64, 4),
    glam::I64Vec2 => vector(ScalarType::I64, 2),
    glam::I64Vec4 => vector(ScalarType::I64, 4),
    glam::U64Vec2 => vector(ScalarType::U64, 2),
    glam::U64Vec4 => vector(ScalarType::U64, 4),
    crate::F16Vec2 => vector(ScalarType::F16, 2),
    crate::F16Vec4 => vector(ScalarType::F16, 4),
}

/// Checks that `T`'s Rust layout is the one its [`Element::TYPE`] claims:
/// its size is the WGSL array stride, and it is aligned no more strictly
/// than WGSL aligns it. `Err` says what is wrong.
pub(crate) fn check_element<T: Element>() -> Result<(), String> {
    let ty = T::TYPE;
    let (size, align) = (size_of::<T>(), align_of::<T>());
    let (stride, wgsl_align) = (ty.stride() as usize, ty.align() as usize);
    if !wgsl_align.is_power_of_two() || stride == 0 || !stride.is_multiple_of(wgsl_align) {
        return Err(format!(
            "it claims the kernel type {} with stride {stride} and alignment {wgsl_align}, which is no WGSL layout",
            ty.wgsl_name()
        ));
    }
    if size != stride {
        return Err(format!(
            "it is {size} bytes, but its kernel type {} (`{}`) takes {stride} bytes per array element",
            ty.rust_name(),
            ty.wgsl_name()
        ));
    }
    if align > wgsl_align {
        return Err(format!(
            "it is aligned to {align} bytes, more than its kernel type {} (`{}`, {wgsl_align})",
            ty.rust_name(),
            ty.wgsl_name()
        ));
    }
    Ok(())
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

/// An array of `T` (any [`Element`]: `f32`, `i32`, `u32`, `f16`, `f64`,
/// `i64`, `u64`, glam vectors, [`F16Vec2`](crate::F16Vec2) and
/// [`F16Vec4`](crate::F16Vec4), and the structs of a
/// `#[onekernel::kernels]` module) owned by one [`Device`]: the arguments
/// of kernel launches.
///
/// On a GPU the data lives in GPU memory, and every operation is queued in
/// order with launches: a write or copy issued after a launch happens
/// after it, and a read waits for everything queued before it. On the CPU
/// executor the data is a `Vec<T>` and everything happens at once.
///
/// ```
/// use onekernel_runtime::{Buffer, Device};
///
/// let device = Device::cpu();
/// let mut a = Buffer::from_slice(&device, &[1u32, 2, 3, 4])?;
/// a.write_range(2, &[30, 40])?;
/// let mut b = Buffer::<u32>::zeroed(&device, 4)?;
/// b.copy_from(&a)?;
/// assert_eq!(b.read()?, [1, 2, 30, 40]);
/// assert_eq!(b.read_range(1..3)?, [2, 30]);
/// # Ok::<(), onekernel_runtime::BufferError>(())
/// ```
///
/// Any contiguous slice uploads; with the `ndarray` feature, any
/// `ndarray` array does (`Buffer::from_array`, `Buffer::read_array` with
/// its shape). A `wgpu::Buffer` of your own becomes a `Buffer` with
/// [`Buffer::from_wgpu`], and [`Buffer::to_device`] moves one to another
/// device (docs/interop.md).
///
/// Not `Clone`: a copy is a second allocation on the device, which should
/// be explicit ([`Buffer::zeroed`] then [`Buffer::copy_from`]).
pub struct Buffer<T: Element> {
    device: Device,
    len: usize,
    storage: Storage<T>,
}

impl<T: Element> Drop for Buffer<T> {
    /// A GPU buffer leaves the device's bind cache with its last handle
    /// here, so that no cached bind group keeps its memory alive.
    fn drop(&mut self) {
        if let (Storage::Gpu(GpuMemory { buffer: Some(buffer) }), DeviceBackend::Gpu(gpu)) =
            (&self.storage, self.device.backend())
        {
            gpu.forget_buffer(buffer);
        }
    }
}

/// A typed, read-only view of another [`Buffer`]'s GPU memory
/// ([`Buffer::view_as`]): a `Buffer<U>` (through `Deref`) for as long as
/// the buffer is borrowed.
pub struct BufferView<'a, U: Element> {
    buffer: Buffer<U>,
    _owner: std::marker::PhantomData<&'a ()>,
}

/// A typed, writable view of another [`Buffer`]'s GPU memory
/// ([`Buffer::view_as_mut`]).
pub struct BufferViewMut<'a, U: Element> {
    buffer: Buffer<U>,
    _owner: std::marker::PhantomData<&'a mut ()>,
}

impl<U: Element> std::ops::Deref for BufferView<'_, U> {
    type Target = Buffer<U>;
    fn deref(&self) -> &Buffer<U> {
        &self.buffer
    }
}

impl<U: Element> std::ops::Deref for BufferViewMut<'_, U> {
    type Target = Buffer<U>;
    fn deref(&self) -> &Buffer<U> {
        &self.buffer
    }
}

impl<U: Element> std::ops::DerefMut for BufferViewMut<'_, U> {
    fn deref_mut(&mut self) -> &mut Buffer<U> {
        &mut self.buffer
    }
}

impl<U: Element> Drop for BufferView<'_, U> {
    /// The handle is emptied first: the borrowed buffer owns the memory
    /// and its bind-cache entries (dropped with it).
    fn drop(&mut self) {
        self.buffer.storage = Storage::Gpu(GpuMemory { buffer: None });
    }
}

impl<U: Element> Drop for BufferViewMut<'_, U> {
    /// As [`BufferView`]'s.
    fn drop(&mut self) {
        self.buffer.storage = Storage::Gpu(GpuMemory { buffer: None });
    }
}

/// The storage of a buffer with the device that owns it.
enum Parts<'a, T> {
    Gpu(&'a GpuDevice, &'a GpuMemory),
    Cpu(&'a Vec<T>),
}

impl<T: Element> Buffer<T> {
    /// A buffer on `device` holding a copy of `data` (which may be empty).
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[1.5f32, 2.5])?;
    /// assert_eq!(buf.len(), 2);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::TooLarge`] past the device's largest buffer;
    /// [`BufferError::Gpu`] when the GPU is out of memory or lost;
    /// [`BufferError::InvalidElement`] when `T`'s [`Element`] impl does not
    /// describe it.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self, BufferError> {
        check_element::<T>().map_err(invalid_element::<T>)?;
        let storage = match device.backend() {
            DeviceBackend::Gpu(g) => {
                Storage::Gpu(g.upload(data.len(), bytemuck::cast_slice(data)).map_err(|e| g.explain(e))?)
            }
            DeviceBackend::Cpu(_) => Storage::Cpu(data.to_vec()),
        };
        Ok(Buffer { device: device.clone(), len: data.len(), storage })
    }

    /// A buffer on `device` of `len` zeros (`len` may be 0).
    ///
    /// # Errors
    /// As [`Buffer::from_slice`].
    pub fn zeroed(device: &Device, len: usize) -> Result<Self, BufferError> {
        check_element::<T>().map_err(invalid_element::<T>)?;
        let storage = match device.backend() {
            DeviceBackend::Gpu(g) => Storage::Gpu(g.zeroed(len, byte_offset::<T>(len)).map_err(|e| g.explain(e))?),
            DeviceBackend::Cpu(_) => Storage::Cpu(vec![T::zeroed(); len]),
        };
        Ok(Buffer { device: device.clone(), len, storage })
    }

    fn parts(&self) -> Result<Parts<'_, T>, BufferError> {
        match (&self.storage, self.device.backend()) {
            (Storage::Gpu(m), DeviceBackend::Gpu(g)) => Ok(Parts::Gpu(g, m)),
            (Storage::Cpu(v), DeviceBackend::Cpu(_)) => Ok(Parts::Cpu(v)),
            (Storage::Gpu(_), DeviceBackend::Cpu(_)) | (Storage::Cpu(_), DeviceBackend::Gpu(_)) => {
                Err(storage_mismatch())
            }
        }
    }

    /// Overwrites the whole buffer with `data`, which must have the same
    /// length. On the GPU the write is queued after earlier launches.
    ///
    /// # Errors
    /// [`BufferError::LengthMismatch`] when `data.len() != self.len()`.
    pub fn write(&mut self, data: &[T]) -> Result<(), BufferError> {
        if data.len() != self.len {
            return Err(BufferError::LengthMismatch {
                operation: "Buffer::write",
                expected: self.len,
                got: data.len(),
            });
        }
        self.write_range(0, data)
    }

    /// Overwrites the elements `offset..offset + data.len()` with `data`.
    /// On the GPU the write is queued after earlier launches.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let mut buf = Buffer::<i32>::zeroed(&device, 5)?;
    /// buf.write_range(3, &[7, 8])?;
    /// assert_eq!(buf.read()?, [0, 0, 0, 7, 8]);
    /// assert!(buf.write_range(4, &[1, 2]).is_err()); // past the end
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::OutOfRange`] when the range does not fit in the buffer.
    pub fn write_range(&mut self, offset: usize, data: &[T]) -> Result<(), BufferError> {
        let range = checked_range(
            "Buffer::write_range",
            (Bound::Included(offset), offset.checked_add(data.len()).map_or(Bound::Unbounded, Bound::Excluded)),
            self.len,
            Some((offset, data.len())),
        )?;
        if data.is_empty() {
            return Ok(());
        }
        self.require("Buffer::write_range", wgpu::BufferUsages::COPY_DST)?;
        let (start, end) = (byte_offset::<T>(range.start), byte_offset::<T>(range.end));
        if !start.is_multiple_of(4) || !end.is_multiple_of(4) {
            // The words at the ends are read back first (see `memory.rs`).
            self.require("Buffer::write_range", wgpu::BufferUsages::COPY_SRC)?;
        }
        match (&mut self.storage, self.device.backend()) {
            (Storage::Gpu(m), DeviceBackend::Gpu(g)) => {
                g.write(m, byte_offset::<T>(range.start), bytemuck::cast_slice(data)).map_err(|e| g.explain(e))
            }
            (Storage::Cpu(v), DeviceBackend::Cpu(_)) => {
                v[range].copy_from_slice(data);
                Ok(())
            }
            (Storage::Gpu(_), DeviceBackend::Cpu(_)) | (Storage::Cpu(_), DeviceBackend::Gpu(_)) => {
                Err(storage_mismatch())
            }
        }
    }

    /// A copy of the contents, after all queued work touching the buffer.
    ///
    /// # Errors
    /// [`BufferError::Gpu`] or [`BufferError::Device`] when the GPU fails
    /// (for example when the device is lost).
    pub fn read(&self) -> Result<Vec<T>, BufferError> {
        self.read_range(..)
    }

    /// Copies the contents into `out`, which must have the buffer's length
    /// (no allocation on the host; on a GPU the staging buffer is reused
    /// from the device's pool).
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[1u32, 2, 3])?;
    /// let mut out = [0u32; 3];
    /// buf.read_into(&mut out)?;
    /// assert_eq!(out, [1, 2, 3]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::LengthMismatch`] when `out.len() != self.len()`, and
    /// those of [`Buffer::read`].
    pub fn read_into(&self, out: &mut [T]) -> Result<(), BufferError> {
        if out.len() != self.len {
            return Err(BufferError::LengthMismatch {
                operation: "Buffer::read_into",
                expected: self.len,
                got: out.len(),
            });
        }
        self.read_range_into(0..self.len, out)
    }

    /// A copy of the elements in `range` (any range syntax: `2..5`, `..3`,
    /// `4..`, `..`), after all queued work touching the buffer. Only those
    /// elements travel from the GPU.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[10u32, 11, 12, 13])?;
    /// assert_eq!(buf.read_range(1..3)?, [11, 12]);
    /// assert_eq!(buf.read_range(2..)?, [12, 13]);
    /// assert!(buf.read_range(3..9).is_err());
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::OutOfRange`] when `range` is not within the buffer,
    /// and those of [`Buffer::read`].
    pub fn read_range(&self, range: impl RangeBounds<usize>) -> Result<Vec<T>, BufferError> {
        let range = checked_range("Buffer::read_range", bounds(&range), self.len, None)?;
        let mut out = vec![T::zeroed(); range.len()];
        self.read_range_into(range, &mut out)?;
        Ok(out)
    }

    /// Reads the checked `range` into `out` (of the same length).
    fn read_range_into(&self, range: Range<usize>, out: &mut [T]) -> Result<(), BufferError> {
        if !range.is_empty() {
            self.require("Buffer::read", wgpu::BufferUsages::COPY_SRC)?;
        }
        match self.parts()? {
            Parts::Gpu(g, m) => {
                g.read(m, byte_range::<T>(&range), bytemuck::cast_slice_mut(out)).map_err(|e| g.explain(e))?;
                // The wait covered every launch queued before: their
                // prints, and their panics as this read's error.
                g.drain_prints().map_err(|e| BufferError::Launch(Box::new(e)))
            }
            Parts::Cpu(v) => {
                out.copy_from_slice(&v[range]);
                Ok(())
            }
        }
    }

    /// Like [`Buffer::read`], without blocking the thread: an `async fn` that
    /// works with any executor (it needs no runtime: the device's own poller
    /// thread waits for the GPU and wakes the task). On the CPU executor it
    /// is ready at once.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[1.0f32, 2.0])?;
    /// let data = pollster::block_on(buf.read_async())?; // or `.await` in async code
    /// assert_eq!(data, [1.0, 2.0]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Buffer::read`].
    pub async fn read_async(&self) -> Result<Vec<T>, BufferError> {
        self.read_range_async(..).await
    }

    /// Like [`Buffer::read_range`], without blocking the thread (see
    /// [`Buffer::read_async`]).
    ///
    /// # Errors
    /// As [`Buffer::read_range`].
    pub async fn read_range_async(&self, range: impl RangeBounds<usize>) -> Result<Vec<T>, BufferError> {
        let range = checked_range("Buffer::read_range_async", bounds(&range), self.len, None)?;
        let mut out = vec![T::zeroed(); range.len()];
        if !range.is_empty() {
            self.require("Buffer::read_async", wgpu::BufferUsages::COPY_SRC)?;
        }
        match self.parts()? {
            Parts::Gpu(g, m) => g
                .read_async(m, byte_range::<T>(&range), bytemuck::cast_slice_mut(&mut out))
                .await
                .map_err(|e| g.explain(e))?,
            Parts::Cpu(v) => out.copy_from_slice(&v[range]),
        }
        Ok(out)
    }

    /// Overwrites this buffer with the contents of `src`, a buffer of the
    /// same length on the same device. On the GPU the copy is queued in
    /// order with launches and never leaves GPU memory.
    ///
    /// # Errors
    /// [`BufferError::LengthMismatch`] for different lengths,
    /// [`BufferError::WrongDevice`] for buffers on different devices.
    pub fn copy_from(&mut self, src: &Buffer<T>) -> Result<(), BufferError> {
        if src.len != self.len {
            return Err(BufferError::LengthMismatch {
                operation: "Buffer::copy_from",
                expected: self.len,
                got: src.len,
            });
        }
        self.copy_range_from(0, src, ..)
    }

    /// Copies the elements `src_range` of `src` into this buffer, starting
    /// at element `offset`.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let src = Buffer::from_slice(&device, &[1u32, 2, 3, 4])?;
    /// let mut dst = Buffer::<u32>::zeroed(&device, 3)?;
    /// dst.copy_range_from(1, &src, 2..4)?;
    /// assert_eq!(dst.read()?, [0, 3, 4]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::OutOfRange`] when either range does not fit its
    /// buffer, [`BufferError::WrongDevice`] for buffers on different
    /// devices.
    pub fn copy_range_from(
        &mut self,
        offset: usize,
        src: &Buffer<T>,
        src_range: impl RangeBounds<usize>,
    ) -> Result<(), BufferError> {
        const OP: &str = "Buffer::copy_range_from";
        if src.device.id() != self.device.id() {
            return Err(BufferError::WrongDevice {
                operation: OP,
                this_device: self.device.describe(),
                other_device: src.device.describe(),
            });
        }
        let from = checked_range(OP, bounds(&src_range), src.len, None)?;
        let to = checked_range(
            OP,
            (Bound::Included(offset), offset.checked_add(from.len()).map_or(Bound::Unbounded, Bound::Excluded)),
            self.len,
            Some((offset, from.len())),
        )?;
        if from.is_empty() {
            return Ok(());
        }
        src.require(OP, wgpu::BufferUsages::COPY_SRC)?;
        self.require(OP, wgpu::BufferUsages::COPY_DST)?;
        match (&mut self.storage, src.parts()?) {
            (Storage::Gpu(dst), Parts::Gpu(g, src)) => g
                .copy(src, byte_offset::<T>(from.start), dst, byte_offset::<T>(to.start), byte_offset::<T>(from.len()))
                .map_err(|e| g.explain(e)),
            (Storage::Cpu(dst), Parts::Cpu(src)) => {
                dst[to].copy_from_slice(&src[from]);
                Ok(())
            }
            (Storage::Gpu(_), Parts::Cpu(_)) | (Storage::Cpu(_), Parts::Gpu(..)) => Err(storage_mismatch()),
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

    /// The elements of a CPU executor's buffer, borrowed (no copy); `None`
    /// for a GPU buffer. For host code running next to the CPU executor's
    /// kernels (the kernel library's host paths on `Device::cpu()`): CPU
    /// launches are synchronous, so nothing else touches the data while
    /// the borrow lives.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let mut b = Buffer::from_slice(&device, &[1u32, 2, 3])?;
    /// if let Some(data) = b.host_slice_mut() {
    ///     data.iter_mut().for_each(|v| *v *= 10);
    /// }
    /// assert_eq!(b.host_slice(), Some(&[10, 20, 30][..]));
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    pub fn host_slice(&self) -> Option<&[T]> {
        match &self.storage {
            Storage::Cpu(v) => Some(v),
            Storage::Gpu(_) => None,
        }
    }

    /// [`Buffer::host_slice`], mutably: the CPU executor's buffer written
    /// in place (no copy); `None` for a GPU buffer.
    pub fn host_slice_mut(&mut self) -> Option<&mut [T]> {
        match &mut self.storage {
            Storage::Cpu(v) => Some(v),
            Storage::Gpu(_) => None,
        }
    }

    /// `Err(BufferError::MissingUsage)` if the wgpu buffer lacks `usage`
    /// (only a buffer adopted with [`Buffer::from_wgpu`] can: the runtime
    /// creates its own with `STORAGE | COPY_SRC | COPY_DST`).
    fn require(&self, operation: &'static str, usage: wgpu::BufferUsages) -> Result<(), BufferError> {
        let Storage::Gpu(GpuMemory { buffer: Some(buffer) }) = &self.storage else { return Ok(()) };
        if buffer.usage().contains(usage) {
            return Ok(());
        }
        let usage = match usage {
            wgpu::BufferUsages::STORAGE => "STORAGE",
            wgpu::BufferUsages::COPY_SRC => "COPY_SRC",
            wgpu::BufferUsages::COPY_DST => "COPY_DST",
            _ => "(internal error: an unnamed usage)",
        };
        Err(BufferError::MissingUsage { operation, usage })
    }

    /// A buffer of `len` elements over `buffer`, a `wgpu::Buffer` your
    /// program created on `device`'s wgpu device (a vertex buffer your
    /// renderer draws from, say): kernels read and write its memory, no
    /// copy is made. The `Buffer` holds a clone of the handle (wgpu
    /// handles are reference-counted): your `wgpu::Buffer` stays yours and
    /// valid, and dropping the `Buffer` frees nothing while you hold it.
    ///
    /// Checked here: `device` is a GPU, `T` is an [`Element`], and the
    /// buffer holds `len` elements from offset 0, rounded up to a whole
    /// 4-byte word (wgpu copies whole words; `size()` may be larger: the
    /// `Buffer` uses the first `len` elements, and a kernel's `len()` is
    /// `len`). Checked at each operation, which returns
    /// [`BufferError::MissingUsage`] naming the flag (and a launch
    /// [`LaunchError::InvalidArgument`] saying so) when the buffer was
    /// created without it: `STORAGE` to be a kernel argument, `COPY_SRC` to
    /// read it or copy from it, `COPY_DST` to write it or copy into it (a
    /// write of 2-byte elements that starts or ends inside a word also
    /// reads, so it needs `COPY_SRC` too). So a buffer made only for
    /// kernels and your own passes (`VERTEX | STORAGE`) is fine until you
    /// read it.
    ///
    /// The buffer must belong to `device`'s wgpu device (wgpu reports
    /// another device's buffer at its first use, as a `BufferError::Gpu`
    /// or `LaunchError::Gpu`) and not be mapped while the runtime uses
    /// it. Its operations are ordered with your own work on the queue as
    /// any operation is: writes and launches are queued, reads wait for
    /// everything submitted before them.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    /// # let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    /// # let (device, queue) = pollster::block_on(adapter.request_device(&Default::default()))?;
    /// let gpu = Device::from_wgpu(&adapter, &device, &queue)?;
    /// let vertices = device.create_buffer(&wgpu::BufferDescriptor {
    ///     label: Some("positions"),
    ///     size: 1024 * 16,
    ///     usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    ///     mapped_at_creation: false,
    /// });
    /// let mut positions = Buffer::<glam::Vec4>::from_wgpu(&gpu, &vertices, 1024)?;
    /// positions.write(&vec![glam::Vec4::ZERO; 1024])?; // COPY_DST: fine
    /// assert!(positions.read().is_err()); // no COPY_SRC
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`BufferError::Device`] ([`DeviceError::NotAGpu`](crate::DeviceError::NotAGpu))
    /// on the CPU executor; [`BufferError::Layout`] when the buffer is too
    /// small for `len` elements; [`BufferError::InvalidElement`] as
    /// [`Buffer::from_slice`].
    pub fn from_wgpu(device: &Device, buffer: &wgpu::Buffer, len: usize) -> Result<Self, BufferError> {
        const OP: &str = "Buffer::from_wgpu";
        check_element::<T>().map_err(invalid_element::<T>)?;
        let DeviceBackend::Gpu(_) = device.backend() else {
            return Err(BufferError::Device(crate::DeviceError::NotAGpu { operation: OP, device: device.describe() }));
        };
        let bytes = (len as u64).checked_mul(size_of::<T>() as u64).and_then(|b| b.checked_next_multiple_of(4));
        match bytes {
            Some(bytes) if bytes <= buffer.size() => {}
            _ => {
                return Err(BufferError::Layout {
                    operation: OP,
                    problem: format!(
                        "{len} elements of `{}` ({} bytes each, in whole 4-byte words) do not fit in the wgpu buffer of {} bytes",
                        std::any::type_name::<T>(),
                        size_of::<T>(),
                        buffer.size()
                    ),
                })
            }
        }
        let memory = GpuMemory { buffer: (len > 0).then(|| buffer.clone()) };
        Ok(Buffer { device: device.clone(), len, storage: Storage::Gpu(memory) })
    }

    /// The same memory as a buffer of `U`, without a copy on the GPU (the
    /// same `wgpu::Buffer`): `f32`s as `u32` bits, `Vec4`s as 4 × as many
    /// `f32`s, `u32` words as pairs of `f16`. The length is the buffer's
    /// bytes over `U`'s size, which must divide them. On the CPU executor
    /// the `Vec` is reused where `T` and `U` have the same alignment and
    /// copied where they do not.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let v = Buffer::from_slice(&device, &[glam::Vec4::new(1.0, 2.0, 3.0, 4.0)])?;
    /// let lanes = v.cast::<f32>().map_err(|(e, _)| e)?;
    /// assert_eq!(lanes.read()?, [1.0, 2.0, 3.0, 4.0]);
    /// let bits = lanes.cast::<u32>().map_err(|(e, _)| e)?;
    /// assert_eq!(bits.read()?[0], 1.0f32.to_bits());
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::Layout`] when `U`'s size does not divide the
    /// buffer's bytes, [`BufferError::InvalidElement`] as
    /// [`Buffer::from_slice`]; either way with the buffer, unchanged.
    #[allow(clippy::result_large_err)]
    pub fn cast<U: Element>(mut self) -> Result<Buffer<U>, (BufferError, Buffer<T>)> {
        if let Err(e) = check_element::<U>() {
            return Err((invalid_element::<U>(e), self));
        }
        let len = match recast_len::<T, U>(self.len, "Buffer::cast") {
            Ok(len) => len,
            Err(e) => return Err((e, self)),
        };
        // `self` is dropped with empty storage, so that its drop forgets nothing.
        let storage = match std::mem::replace(&mut self.storage, Storage::Gpu(GpuMemory { buffer: None })) {
            Storage::Gpu(m) => Storage::Gpu(m),
            Storage::Cpu(v) => Storage::Cpu(match bytemuck::allocation::try_cast_vec::<T, U>(v) {
                Ok(same) => same,
                Err((_, v)) => bytemuck::allocation::pod_collect_to_vec(&v),
            }),
        };
        Ok(Buffer { device: self.device.clone(), len, storage })
    }

    /// The same GPU memory seen as `U`s, borrowed: a typed view of the
    /// same `wgpu::Buffer` (no copy, no allocation), for a kernel that
    /// reads `f32`s as `Vec4`s. Its length is the buffer's bytes over
    /// `U`'s size, which must divide them. Unlike [`Buffer::from_wgpu`]
    /// on [`Buffer::wgpu_buffer`], dropping the view leaves the device's
    /// cached bind groups alone (the buffer still owns the memory), so a
    /// loop that views the same buffers launch after launch reuses them.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let x = Buffer::from_slice(&device, &[1.0f32; 8])?;
    /// assert!(x.view_as::<glam::Vec4>().is_err()); // a GPU buffer only
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::Device`] ([`DeviceError::NotAGpu`](crate::DeviceError::NotAGpu))
    /// on the CPU executor (whose `Vec` cannot be seen as another type in
    /// place); [`BufferError::Layout`] and [`BufferError::InvalidElement`]
    /// as [`Buffer::cast`].
    pub fn view_as<U: Element>(&self) -> Result<BufferView<'_, U>, BufferError> {
        Ok(BufferView { buffer: self.view_buffer("Buffer::view_as", None)?, _owner: std::marker::PhantomData })
    }

    /// [`Buffer::view_as`] of the first `len` `U`s of the memory (which
    /// must hold them): `n` `f32`s read as their `n / 4` whole `Vec4`s,
    /// the last `n % 4` left to a scalar view.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let x = Buffer::from_slice(&device, &[1.0f32; 7])?;
    /// assert!(x.view_prefix_as::<glam::Vec4>(1).is_err()); // a GPU buffer only
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Buffer::view_as`]; [`BufferError::Layout`] when `len` `U`s are
    /// more bytes than the buffer holds.
    pub fn view_prefix_as<U: Element>(&self, len: usize) -> Result<BufferView<'_, U>, BufferError> {
        let buffer = self.view_buffer("Buffer::view_prefix_as", Some(len))?;
        Ok(BufferView { buffer, _owner: std::marker::PhantomData })
    }

    /// [`Buffer::view_as`], writable: the view borrows `self` mutably.
    ///
    /// # Errors
    /// As [`Buffer::view_as`].
    pub fn view_as_mut<U: Element>(&mut self) -> Result<BufferViewMut<'_, U>, BufferError> {
        Ok(BufferViewMut { buffer: self.view_buffer("Buffer::view_as_mut", None)?, _owner: std::marker::PhantomData })
    }

    /// [`Buffer::view_prefix_as`], writable: the first `len` `U`s of the
    /// memory (`n` `u32`s written as their `n / 4` whole `UVec4`s, the
    /// last `n % 4` through a scalar view after it is dropped).
    ///
    /// # Errors
    /// As [`Buffer::view_prefix_as`].
    pub fn view_prefix_as_mut<U: Element>(&mut self, len: usize) -> Result<BufferViewMut<'_, U>, BufferError> {
        let buffer = self.view_buffer("Buffer::view_prefix_as_mut", Some(len))?;
        Ok(BufferViewMut { buffer, _owner: std::marker::PhantomData })
    }

    /// A second `Buffer<U>` handle on this buffer's GPU memory, of `prefix`
    /// `U`s or all of it (the views' drops empty it before it is dropped).
    fn view_buffer<U: Element>(
        &self,
        operation: &'static str,
        prefix: Option<usize>,
    ) -> Result<Buffer<U>, BufferError> {
        check_element::<U>().map_err(invalid_element::<U>)?;
        let Storage::Gpu(memory) = &self.storage else {
            return Err(BufferError::Device(crate::DeviceError::NotAGpu { operation, device: self.device.describe() }));
        };
        let len = match prefix {
            None => recast_len::<T, U>(self.len, operation)?,
            Some(len) => {
                let (want, have) = (byte_offset::<U>(len), byte_offset::<T>(self.len));
                if want > have {
                    let problem = format!(
                        "{len} elements of `{}` are {want} bytes, more than the {have} of {} elements of `{}`",
                        std::any::type_name::<U>(),
                        self.len,
                        std::any::type_name::<T>()
                    );
                    return Err(BufferError::Layout { operation, problem });
                }
                len
            }
        };
        let storage = Storage::Gpu(GpuMemory { buffer: memory.buffer.clone() });
        Ok(Buffer { device: self.device.clone(), len, storage })
    }

    /// A buffer of `T` holding the bytes of `data`, a slice of any `Pod`
    /// type `U` (`u16` bits as `f16`, `[f32; 4]` as `Vec4`, bytes as
    /// `u32`): no host copy where `data` is aligned for `T` (bytemuck's
    /// cast), one where it is not. The bytes must be a whole number of
    /// `T`s.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// # use half::f16;
    /// let device = Device::cpu();
    /// let bits: Vec<u16> = [1.0f32, -2.5].iter().map(|&x| f16::from_f32(x).to_bits()).collect();
    /// let h = Buffer::<f16>::from_pod_slice(&device, &bits)?;
    /// assert_eq!(h.read()?, [f16::from_f32(1.0), f16::from_f32(-2.5)]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::Layout`] when the bytes are not a whole number of
    /// `T`s, and those of [`Buffer::from_slice`].
    pub fn from_pod_slice<U: bytemuck::Pod>(device: &Device, data: &[U]) -> Result<Self, BufferError> {
        let bytes = std::mem::size_of_val(data);
        if !bytes.is_multiple_of(size_of::<T>()) {
            return Err(BufferError::Layout {
                operation: "Buffer::from_pod_slice",
                problem: format!(
                    "{bytes} bytes of `{}` are not a whole number of `{}` ({} bytes)",
                    std::any::type_name::<U>(),
                    std::any::type_name::<T>(),
                    size_of::<T>()
                ),
            });
        }
        match bytemuck::try_cast_slice::<U, T>(data) {
            Ok(same) => Buffer::from_slice(device, same),
            Err(bytemuck::PodCastError::TargetAlignmentGreaterAndInputNotAligned) => {
                Buffer::from_slice(device, &bytemuck::allocation::pod_collect_to_vec::<U, T>(data))
            }
            Err(e) => Err(BufferError::Layout {
                operation: "Buffer::from_pod_slice",
                problem: format!(
                    "{} bytes of `{}` are not a whole number of `{}` ({} bytes): {e:?}",
                    std::mem::size_of_val(data),
                    std::any::type_name::<U>(),
                    std::any::type_name::<T>(),
                    size_of::<T>()
                ),
            }),
        }
    }

    /// A copy of this buffer on `device`: on the same device a copy in the
    /// device's memory (queued like [`Buffer::copy_from`]); on another
    /// device (two GPUs, a GPU and the CPU executor) a read-back to the
    /// host and an upload, which waits for the work queued on this
    /// buffer's device. Nothing faster exists across wgpu devices: they
    /// share no memory.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let (a, b) = (Device::cpu(), Device::cpu_serial());
    /// let x = Buffer::from_slice(&a, &[1u32, 2, 3])?;
    /// let y = x.to_device(&b)?;
    /// assert_eq!((y.device().id(), y.read()?), (b.id(), vec![1, 2, 3]));
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`Buffer::read`] on this device and [`Buffer::from_slice`]
    /// on `device`.
    pub fn to_device(&self, device: &Device) -> Result<Buffer<T>, BufferError> {
        if device.id() == self.device.id() {
            let mut copy = Buffer::zeroed(device, self.len)?;
            copy.copy_from(self)?;
            return Ok(copy);
        }
        Buffer::from_slice(device, &self.read()?)
    }

    /// The wgpu buffer, for hand-written baselines (`None` on the CPU or
    /// when the buffer is empty).
    pub fn wgpu_buffer(&self) -> Option<&wgpu::Buffer> {
        match &self.storage {
            Storage::Gpu(m) => m.buffer.as_ref(),
            Storage::Cpu(_) => None,
        }
    }

    /// Checks shared by both paths: device, parameter kind and type. (Empty
    /// buffers are fine: the kernel sees `len() == 0`.)
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
        // (Any length binds: WebGPU binds storage buffers in whole 4-byte
        // words, so a GPU buffer of an odd number of `f16`s is allocated one
        // element longer, and the kernel reads its length from the launch
        // block instead of the binding's size: `DataType::needs_length_word`.)
        if self.device.id() != device_id {
            return Err(LaunchError::WrongDevice {
                kernel: &kernel.name,
                arg,
                buffer_device: self.device.describe(),
                launch_device: launch_device(),
            });
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
        if let Err(e) = self.require("a launch", wgpu::BufferUsages::STORAGE) {
            let problem = match e {
                BufferError::MissingUsage { usage, .. } => {
                    format!("its wgpu buffer was created without `wgpu::BufferUsages::{usage}`, which a kernel's buffer needs")
                }
                other => other.to_string(),
            };
            return Err(LaunchError::InvalidArgument { kernel: &kernel.name, arg: kernel.param_name(param), problem });
        }
        let max_bytes = gpu.limits().max_storage_buffer_binding_size;
        // The binding is the whole allocation, rounded up to a word.
        if byte_offset::<T>(self.len).next_multiple_of(4) > max_bytes {
            return Err(LaunchError::BindingTooLarge {
                kernel: &kernel.name,
                arg: kernel.param_name(param),
                len: self.len,
                max_bytes,
            });
        }
        match &self.storage {
            Storage::Gpu(GpuMemory { buffer }) => Ok(GpuArg { buffer: buffer.as_ref(), param, len: self.len }),
            // Unreachable after the device check; reported rather than
            // panicking all the same.
            Storage::Cpu(_) => Err(LaunchError::InvalidArgument {
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
            Storage::Cpu(v) => {
                let view = SharedSliceMut::new(v);
                if cpu.is_race_checked() {
                    let name: &'static str = kernel.params.get(param).map_or("?", |p| &*p.name);
                    return Ok(view.race_checked(name));
                }
                Ok(view)
            }
            Storage::Gpu(_) => Err(no_cpu_storage(kernel, param)),
        }
    }
}

impl Buffer<half::f16> {
    /// A buffer of `f16` holding `data` rounded to half precision (one
    /// host conversion, vectorised by `half` where the CPU has F16C).
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let h = Buffer::<half::f16>::from_f32s(&device, &[0.5, 1.0e6])?;
    /// assert_eq!(h.read_f32s()?, [0.5, f32::INFINITY]); // 1e6 is past f16's range
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Buffer::from_slice`].
    pub fn from_f32s(device: &Device, data: &[f32]) -> Result<Self, BufferError> {
        use half::slice::HalfFloatSliceExt;
        let mut halves = vec![half::f16::ZERO; data.len()];
        halves.convert_from_f32_slice(data);
        Buffer::from_slice(device, &halves)
    }

    /// The contents widened to `f32` (exactly: every `f16` is an `f32`).
    ///
    /// # Errors
    /// As [`Buffer::read`].
    pub fn read_f32s(&self) -> Result<Vec<f32>, BufferError> {
        use half::slice::HalfFloatSliceExt;
        Ok(self.read()?.to_f32_vec())
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

/// The byte offset of element `i` (saturating: sizes past `u64` are
/// refused as too large anyway).
fn byte_offset<T>(i: usize) -> u64 {
    (i as u64).saturating_mul(size_of::<T>() as u64)
}

/// The bytes of the elements `range`.
fn byte_range<T>(range: &Range<usize>) -> Range<u64> {
    byte_offset::<T>(range.start)..byte_offset::<T>(range.end)
}

/// [`check_element`]'s complaint as a [`BufferError`].
fn invalid_element<T>(problem: String) -> BufferError {
    BufferError::InvalidElement { element: std::any::type_name::<T>(), problem }
}

/// A range's bounds, copied out of the `RangeBounds`.
fn bounds(range: &impl RangeBounds<usize>) -> (Bound<usize>, Bound<usize>) {
    (range.start_bound().cloned(), range.end_bound().cloned())
}

/// `bounds` as a range within `0..len`, or [`BufferError::OutOfRange`].
/// `requested` is `(offset, count)` for ranges given that way (a write at
/// an offset), so that the message shows what was asked even on overflow.
fn checked_range(
    operation: &'static str,
    bounds: (Bound<usize>, Bound<usize>),
    len: usize,
    requested: Option<(usize, usize)>,
) -> Result<Range<usize>, BufferError> {
    let start = match bounds.0 {
        Bound::Included(s) => Some(s),
        Bound::Excluded(s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match bounds.1 {
        Bound::Included(e) => e.checked_add(1),
        Bound::Excluded(e) => Some(e),
        Bound::Unbounded => {
            if requested.is_some() {
                None // offset + count overflowed
            } else {
                Some(len)
            }
        }
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => Ok(start..end),
        _ => {
            let describe = |b: Bound<usize>| match b {
                Bound::Included(v) | Bound::Excluded(v) => v.to_string(),
                Bound::Unbounded => String::new(),
            };
            let range = match requested {
                Some((offset, count)) => match offset.checked_add(count) {
                    Some(end) => format!("{offset}..{end}"),
                    None => format!("{offset}..{offset} + {count}"),
                },
                None => format!(
                    "{}{}{}",
                    describe(bounds.0),
                    if matches!(bounds.1, Bound::Included(_)) { "..=" } else { ".." },
                    describe(bounds.1)
                ),
            };
            Err(BufferError::OutOfRange { operation, range, len })
        }
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

/// The length of `len` `T`s seen as `U`s ([`Buffer::cast`],
/// [`Buffer::view_as`]): `U`'s size must divide their bytes.
fn recast_len<T, U>(len: usize, operation: &'static str) -> Result<usize, BufferError> {
    let bytes = byte_offset::<T>(len);
    let unit = size_of::<U>() as u64;
    if !bytes.is_multiple_of(unit) {
        let problem = format!(
            "{len} elements of `{}` are {bytes} bytes, not a whole number of `{}` ({unit} bytes)",
            std::any::type_name::<T>(),
            std::any::type_name::<U>()
        );
        return Err(BufferError::Layout { operation, problem });
    }
    Ok((bytes / unit) as usize)
}
