//! `ndarray` arrays in and out of [`Buffer`]s (feature `ndarray`).
//!
//! A buffer is flat: it holds an array's elements in standard (row-major,
//! "C") order, whatever the array's memory layout, and the shape is given
//! again when reading back. An array already in standard layout uploads
//! from its own memory (no host copy); any other (a transposed view, a
//! column, a strided slice) is gathered into standard order first.

use crate::buffer::{Buffer, Element};
use crate::device::Device;
use crate::error::BufferError;
use ndarray::{Array, ArrayBase, Data, DataMut, Dimension, IntoDimension};

impl<T: Element> Buffer<T> {
    /// A buffer on `device` holding the elements of `array` (any
    /// `ArrayBase`: an owned array, a view, a slice of one) in standard
    /// order: without a host copy when the array is in standard layout,
    /// after gathering them when it is not.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let m = ndarray::array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    /// let rows = Buffer::from_array(&device, &m)?; // standard layout: uploaded as is
    /// assert_eq!(rows.read_array((2, 3))?, m);
    /// let cols = Buffer::from_array(&device, &m.t())?; // transposed: gathered
    /// assert_eq!(cols.read()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Buffer::from_slice`].
    pub fn from_array<S: Data<Elem = T>, D: Dimension>(
        device: &Device,
        array: &ArrayBase<S, D>,
    ) -> Result<Self, BufferError> {
        match array.as_slice() {
            Some(standard) => Buffer::from_slice(device, standard),
            None => Buffer::from_slice(device, &array.iter().copied().collect::<Vec<T>>()),
        }
    }

    /// Overwrites the buffer with the elements of `array` in standard
    /// order (as [`Buffer::from_array`]); the array must have the buffer's
    /// number of elements.
    ///
    /// # Errors
    /// [`BufferError::LengthMismatch`], and those of [`Buffer::write`].
    pub fn write_array<S: Data<Elem = T>, D: Dimension>(&mut self, array: &ArrayBase<S, D>) -> Result<(), BufferError> {
        if array.len() != self.len() {
            return Err(BufferError::LengthMismatch {
                operation: "Buffer::write_array",
                expected: self.len(),
                got: array.len(),
            });
        }
        match array.as_slice() {
            Some(standard) => self.write(standard),
            None => self.write(&array.iter().copied().collect::<Vec<T>>()),
        }
    }

    /// The contents as an array of `shape` (`(rows, cols)`, `[2, 3, 4]`,
    /// `ndarray::IxDyn(&[..])`), in standard layout; the shape must hold
    /// exactly the buffer's elements.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device, BufferError};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[1u32, 2, 3, 4, 5, 6])?;
    /// let m = buf.read_array((3, 2))?;
    /// assert_eq!(m[[2, 1]], 6);
    /// assert!(matches!(buf.read_array((4, 2)), Err(BufferError::ShapeMismatch { .. })));
    /// # Ok::<(), BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::ShapeMismatch`] when the shape's size is not the
    /// buffer's length, and those of [`Buffer::read`].
    pub fn read_array<Sh: IntoDimension>(&self, shape: Sh) -> Result<Array<T, Sh::Dim>, BufferError> {
        const OP: &str = "Buffer::read_array";
        let dim = shape.into_dimension();
        if dim.size_checked() != Some(self.len()) {
            return Err(BufferError::ShapeMismatch { operation: OP, shape: dim.slice().to_vec(), len: self.len() });
        }
        let shape = dim.slice().to_vec();
        Array::from_shape_vec(dim, self.read()?)
            .map_err(|e| BufferError::Layout { operation: OP, problem: format!("shape {shape:?}: {e}") })
    }

    /// Copies the contents into `out`, an array (or mutable view) of the
    /// buffer's number of elements, in standard order: straight into its
    /// memory when it is in standard layout, through a host copy when not.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let buf = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let mut m = ndarray::Array2::<f32>::zeros((2, 2));
    /// buf.read_into_array(&mut m.view_mut().reversed_axes())?; // a transposed view: written in its order
    /// assert_eq!(m, ndarray::array![[1.0, 3.0], [2.0, 4.0]]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::ShapeMismatch`] when `out` has another number of
    /// elements, and those of [`Buffer::read`].
    pub fn read_into_array<S: DataMut<Elem = T>, D: Dimension>(
        &self,
        out: &mut ArrayBase<S, D>,
    ) -> Result<(), BufferError> {
        if out.len() != self.len() {
            return Err(BufferError::ShapeMismatch {
                operation: "Buffer::read_into_array",
                shape: out.shape().to_vec(),
                len: self.len(),
            });
        }
        if let Some(standard) = out.as_slice_mut() {
            return self.read_into(standard);
        }
        for (o, v) in out.iter_mut().zip(self.read()?) {
            *o = v;
        }
        Ok(())
    }
}
