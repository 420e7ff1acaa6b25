//! What a kernel's `launch` accepts for a buffer parameter.
//!
//! `launch` takes `&impl BufferArg<T>` for a `&[T]` parameter (and
//! `&mut impl BufferArg<T>` for `&mut [T]`) rather than `&Buffer<T>`, for
//! one reason: when a user passes host data (`&Vec<f32>`, `&[f32]`,
//! `&ndarray::Array1<f32>`) or a buffer of the wrong element type, rustc
//! prints this trait's message, which says how to make a [`Buffer`], instead
//! of a bare "expected `&Buffer<f32>`". [`Buffer<T>`] is the only
//! implementation (the trait is sealed), so type inference works as with a
//! concrete parameter type: `Buffer::zeroed(&device, n)?` passed to a
//! `&mut [f32]` parameter is a `Buffer<f32>`.

use crate::buffer::{Buffer, Element};

mod sealed {
    pub trait Sealed {}
    impl<T: crate::buffer::Element> Sealed for crate::buffer::Buffer<T> {}
}

/// A buffer argument of a kernel launch: a [`Buffer<T>`] on the launch's
/// device, and nothing else.
///
/// A `launch` with a `&[f32]` parameter `a` takes `a: &impl BufferArg<f32>`:
///
/// ```
/// use onekernel_runtime::{Buffer, BufferArg, Device};
///
/// fn launch_like(_a: &impl BufferArg<f32>) {}
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let device = Device::cpu();
/// let host = vec![1.0f32, 2.0];
/// let a = Buffer::from_slice(&device, &host)?; // upload first
/// launch_like(&a);
/// # Ok(()) }
/// ```
///
/// Host data, and a buffer of another element type, are refused at compile
/// time with the expected and the found type, and a note saying how to
/// make the right buffer:
///
/// ```compile_fail
/// # use onekernel_runtime::BufferArg;
/// fn launch_like(_a: &impl BufferArg<f32>) {}
/// launch_like(&vec![1.0f32, 2.0]);
/// ```
#[diagnostic::on_unimplemented(
    message = "a kernel's buffer parameter takes a `Buffer<{T}>` on the device, not `{Self}`",
    label = "expected `Buffer<{T}>`, found `{Self}`",
    note = "the parameter is `[{T}]`: pass a `Buffer<{T}>` (`&buf`, or `&mut buf` for `&mut [{T}]`); a buffer's element type must be the parameter's, and host data is uploaded first: `Buffer::from_slice(&device, &data)?` (or make one with `Buffer::<{T}>::zeroed(&device, len)?`)"
)]
pub trait BufferArg<T: Element>: sealed::Sealed {
    /// The buffer.
    #[doc(hidden)]
    fn buffer(&self) -> &Buffer<T>;
    /// The buffer, for a parameter the kernel writes.
    #[doc(hidden)]
    fn buffer_mut(&mut self) -> &mut Buffer<T>;
}

impl<T: Element> BufferArg<T> for Buffer<T> {
    #[inline]
    fn buffer(&self) -> &Buffer<T> {
        self
    }
    #[inline]
    fn buffer_mut(&mut self) -> &mut Buffer<T> {
        self
    }
}
