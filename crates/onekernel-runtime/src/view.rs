//! 2-D views of a buffer: rows, columns and sub-blocks of a row-major
//! matrix, as the kernel library's ops take them (`onekernel::ops`).
//!
//! A view is a window `offset, (rows, cols), row_stride`: element `(r, c)`
//! is the buffer's element `offset + r * row_stride + c`. Making one checks
//! its bounds once (`BufferError::Layout` naming the method and what does
//! not fit); an op then reads only the view's elements.

use crate::buffer::{Buffer, Element};
use crate::error::BufferError;
use std::ops::{Bound, Range, RangeBounds};

/// Where a 2-D view's elements are in its buffer: element `(r, c)` is at
/// `offset + r * row_stride + c`, for `r < rows`, `c < cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout2d {
    /// The buffer index of element `(0, 0)`.
    pub offset: usize,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The distance between the starts of two consecutive rows (at least
    /// `cols` when there is more than one row).
    pub row_stride: usize,
}

impl Layout2d {
    /// Number of elements (`rows * cols`).
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// Whether the elements are one contiguous range of the buffer (a
    /// single row, or rows as long as the stride).
    pub fn is_contiguous(&self) -> bool {
        self.rows <= 1 || self.cols == self.row_stride
    }

    /// The buffer range from the first to one past the last element (empty
    /// for an empty view).
    pub fn span(&self) -> Range<usize> {
        if self.is_empty() {
            return self.offset..self.offset;
        }
        self.offset..self.offset + (self.rows - 1) * self.row_stride + self.cols
    }

    /// Checks that the layout fits a buffer of `len` elements and that its
    /// rows do not overlap.
    fn check(&self, operation: &'static str, len: usize) -> Result<(), BufferError> {
        let bad = |problem: String| Err(BufferError::Layout { operation, problem });
        if self.rows > 1 && self.cols > self.row_stride {
            return bad(format!(
                "rows of {} columns overlap with a row stride of {} (the stride must be at least the number of columns)",
                self.cols, self.row_stride
            ));
        }
        let end = if self.is_empty() {
            Some(self.offset)
        } else {
            (self.rows - 1)
                .checked_mul(self.row_stride)
                .and_then(|v| v.checked_add(self.cols))
                .and_then(|v| v.checked_add(self.offset))
        };
        match end {
            Some(end) if end <= len => Ok(()),
            _ => bad(format!(
                "a view of {} rows × {} columns at offset {} with row stride {} ends past the buffer's {len} elements",
                self.rows, self.cols, self.offset, self.row_stride
            )),
        }
    }
}

fn resolve(
    operation: &'static str,
    what: &str,
    range: &impl RangeBounds<usize>,
    len: usize,
) -> Result<Range<usize>, BufferError> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok(s..e),
        _ => Err(BufferError::Layout {
            operation,
            problem: format!(
                "{what} {:?}..{:?} are not within the view's {len} {what}",
                range.start_bound(),
                range.end_bound()
            ),
        }),
    }
}

/// A 2-D window of a [`Buffer`] (rows, columns or a block of a row-major
/// matrix), read by the ops of `onekernel::ops` that take views
/// (`reduce::reduce_rows_view_into`, `reduce::reduce_cols_view_into`,
/// `scan::scan_view_into`) and read back to the host with
/// [`View2d::read`] (or `read_array`, feature `ndarray`).
///
/// ```
/// # use onekernel_runtime::{Buffer, Device};
/// let device = Device::cpu();
/// // A 3 × 4 matrix.
/// let m = Buffer::from_slice(&device, &[0u32, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23])?;
/// let v = m.view_2d(3, 4)?;
/// assert_eq!(v.slice_rows(1..)?.slice_cols(1..3)?.read()?, [11, 12, 21, 22]);
/// assert_eq!(v.col(3)?.read()?, [3, 13, 23]);
/// assert!(v.slice_rows(2..5).is_err()); // past the last row
/// # Ok::<(), onekernel_runtime::BufferError>(())
/// ```
#[derive(Clone, Copy)]
pub struct View2d<'a, T: Element> {
    buffer: &'a Buffer<T>,
    layout: Layout2d,
}

impl<T: Element> std::fmt::Debug for View2d<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View2d").field("buffer_len", &self.buffer.len()).field("layout", &self.layout).finish()
    }
}

/// A mutable 2-D window of a [`Buffer`]: an op's output (or a block written
/// from the host with [`View2dMut::write`]).
pub struct View2dMut<'a, T: Element> {
    buffer: &'a mut Buffer<T>,
    layout: Layout2d,
}

impl<T: Element> Buffer<T> {
    /// The buffer as a row-major matrix of `rows × cols` elements (its
    /// first `rows * cols` elements; the rest, if any, are not in the
    /// view).
    ///
    /// # Errors
    /// [`BufferError::Layout`] naming `Buffer::view_2d` when `rows * cols`
    /// is more than the buffer holds.
    pub fn view_2d(&self, rows: usize, cols: usize) -> Result<View2d<'_, T>, BufferError> {
        let layout = Layout2d { offset: 0, rows, cols, row_stride: cols };
        layout.check("Buffer::view_2d", self.len())?;
        Ok(View2d { buffer: self, layout })
    }

    /// A view of any layout: `(r, c)` at `offset + r * row_stride + c`.
    ///
    /// # Errors
    /// [`BufferError::Layout`] naming `Buffer::view_strided` when the last
    /// element is past the buffer's end or rows overlap (`cols >
    /// row_stride` with more than one row).
    pub fn view_strided(&self, layout: Layout2d) -> Result<View2d<'_, T>, BufferError> {
        layout.check("Buffer::view_strided", self.len())?;
        Ok(View2d { buffer: self, layout })
    }

    /// [`Buffer::view_2d`], writable.
    ///
    /// # Errors
    /// As [`Buffer::view_2d`], naming `Buffer::view_2d_mut`.
    pub fn view_2d_mut(&mut self, rows: usize, cols: usize) -> Result<View2dMut<'_, T>, BufferError> {
        let layout = Layout2d { offset: 0, rows, cols, row_stride: cols };
        layout.check("Buffer::view_2d_mut", self.len())?;
        Ok(View2dMut { buffer: self, layout })
    }

    /// [`Buffer::view_strided`], writable.
    ///
    /// # Errors
    /// As [`Buffer::view_strided`], naming `Buffer::view_strided_mut`.
    pub fn view_strided_mut(&mut self, layout: Layout2d) -> Result<View2dMut<'_, T>, BufferError> {
        layout.check("Buffer::view_strided_mut", self.len())?;
        Ok(View2dMut { buffer: self, layout })
    }
}

/// The sub-views both kinds of view make (`slice_rows`, `slice_cols`).
fn sub_layout(
    l: &Layout2d,
    rows: impl RangeBounds<usize>,
    cols: impl RangeBounds<usize>,
    operation: &'static str,
) -> Result<Layout2d, BufferError> {
    let r = resolve(operation, "rows", &rows, l.rows)?;
    let c = resolve(operation, "columns", &cols, l.cols)?;
    Ok(Layout2d {
        offset: l.offset + r.start * l.row_stride + c.start,
        rows: r.len(),
        cols: c.len(),
        row_stride: l.row_stride,
    })
}

impl<'a, T: Element> View2d<'a, T> {
    /// The buffer the view looks into.
    pub fn buffer(&self) -> &'a Buffer<T> {
        self.buffer
    }

    /// Where the view's elements are.
    pub fn layout(&self) -> Layout2d {
        self.layout
    }

    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.layout.rows, self.layout.cols)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// The rows `rows` (a range of this view's rows), all columns.
    ///
    /// # Errors
    /// [`BufferError::Layout`] naming `View2d::slice_rows` when the range
    /// is not within the view's rows.
    pub fn slice_rows(&self, rows: impl RangeBounds<usize>) -> Result<Self, BufferError> {
        let layout = sub_layout(&self.layout, rows, .., "View2d::slice_rows")?;
        Ok(View2d { buffer: self.buffer, layout })
    }

    /// The columns `cols` (a range of this view's columns), all rows.
    ///
    /// # Errors
    /// [`BufferError::Layout`] naming `View2d::slice_cols` when the range
    /// is not within the view's columns.
    pub fn slice_cols(&self, cols: impl RangeBounds<usize>) -> Result<Self, BufferError> {
        let layout = sub_layout(&self.layout, .., cols, "View2d::slice_cols")?;
        Ok(View2d { buffer: self.buffer, layout })
    }

    /// Row `r` as a view of one row.
    ///
    /// # Errors
    /// As [`View2d::slice_rows`].
    pub fn row(&self, r: usize) -> Result<Self, BufferError> {
        self.slice_rows(r..r.saturating_add(1))
    }

    /// Column `c` as a view of one column.
    ///
    /// # Errors
    /// As [`View2d::slice_cols`].
    pub fn col(&self, c: usize) -> Result<Self, BufferError> {
        self.slice_cols(c..c.saturating_add(1))
    }

    /// The view's elements, row after row (one read of the span the view
    /// covers, gathered on the host).
    ///
    /// # Errors
    /// Those of [`Buffer::read_range`].
    pub fn read(&self) -> Result<Vec<T>, BufferError> {
        let l = self.layout;
        if l.is_empty() {
            return Ok(Vec::new());
        }
        let span = l.span();
        if l.is_contiguous() {
            return self.buffer.read_range(span);
        }
        let data = self.buffer.read_range(span)?;
        let mut out = Vec::with_capacity(l.len());
        for r in 0..l.rows {
            out.extend_from_slice(&data[r * l.row_stride..r * l.row_stride + l.cols]);
        }
        Ok(out)
    }
}

impl<'a, T: Element> View2dMut<'a, T> {
    /// The view, read-only (for an op's input, or to read it back).
    pub fn as_view(&self) -> View2d<'_, T> {
        View2d { buffer: self.buffer, layout: self.layout }
    }

    /// The buffer the view writes into, and where.
    pub fn parts(&mut self) -> (&mut Buffer<T>, Layout2d) {
        (self.buffer, self.layout)
    }

    /// Where the view's elements are.
    pub fn layout(&self) -> Layout2d {
        self.layout
    }

    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.layout.rows, self.layout.cols)
    }

    /// The rows `rows` of this view, writable.
    ///
    /// # Errors
    /// As [`View2d::slice_rows`], naming `View2dMut::slice_rows`.
    pub fn slice_rows(self, rows: impl RangeBounds<usize>) -> Result<Self, BufferError> {
        let layout = sub_layout(&self.layout, rows, .., "View2dMut::slice_rows")?;
        Ok(View2dMut { buffer: self.buffer, layout })
    }

    /// The columns `cols` of this view, writable.
    ///
    /// # Errors
    /// As [`View2d::slice_cols`], naming `View2dMut::slice_cols`.
    pub fn slice_cols(self, cols: impl RangeBounds<usize>) -> Result<Self, BufferError> {
        let layout = sub_layout(&self.layout, .., cols, "View2dMut::slice_cols")?;
        Ok(View2dMut { buffer: self.buffer, layout })
    }

    /// Overwrites the view's elements with `data` (row after row; as many
    /// elements as the view): one write per row, or one for a contiguous
    /// view.
    ///
    /// ```
    /// # use onekernel_runtime::{Buffer, Device};
    /// let device = Device::cpu();
    /// let mut m = Buffer::<i32>::zeroed(&device, 6)?; // 2 × 3
    /// m.view_2d_mut(2, 3)?.slice_cols(1..)?.write(&[1, 2, 3, 4])?;
    /// assert_eq!(m.read()?, [0, 1, 2, 0, 3, 4]);
    /// # Ok::<(), onekernel_runtime::BufferError>(())
    /// ```
    ///
    /// # Errors
    /// [`BufferError::LengthMismatch`] naming `View2dMut::write`, and those
    /// of [`Buffer::write_range`].
    pub fn write(&mut self, data: &[T]) -> Result<(), BufferError> {
        let l = self.layout;
        if data.len() != l.len() {
            return Err(BufferError::LengthMismatch {
                operation: "View2dMut::write",
                expected: l.len(),
                got: data.len(),
            });
        }
        if l.is_empty() {
            return Ok(());
        }
        if l.is_contiguous() {
            return self.buffer.write_range(l.offset, data);
        }
        for (r, row) in data.chunks_exact(l.cols).enumerate() {
            self.buffer.write_range(l.offset + r * l.row_stride, row)?;
        }
        Ok(())
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    use super::{View2d, View2dMut};
    use crate::buffer::Element;
    use crate::error::BufferError;
    use ndarray::{Array2, ArrayBase, Data, Ix2};

    /// A shape that is not the view's, as the error naming the method.
    fn shape_error(operation: &'static str, asked: (usize, usize), view: (usize, usize)) -> BufferError {
        BufferError::Layout { operation, problem: format!("shape {asked:?} given for a view of shape {view:?}") }
    }

    impl<T: Element> View2d<'_, T> {
        /// The view as an `Array2` of `shape`, which must be the view's
        /// `(rows, cols)` (feature `ndarray`).
        ///
        /// ```
        /// # use onekernel_runtime::{Buffer, Device, BufferError};
        /// let device = Device::cpu();
        /// let a = ndarray::Array2::from_shape_fn((4, 5), |(r, c)| (10 * r + c) as f32);
        /// let buf = Buffer::from_array(&device, &a)?;
        /// let block = buf.view_2d(4, 5)?.slice_rows(1..3)?.slice_cols(2..)?;
        /// assert_eq!(block.read_array((2, 3))?, a.slice(ndarray::s![1..3, 2..]));
        /// assert!(matches!(block.read_array((3, 2)), Err(BufferError::Layout { .. })));
        /// # Ok::<(), BufferError>(())
        /// ```
        ///
        /// # Errors
        /// [`BufferError::Layout`] naming `View2d::read_array` when
        /// `shape` is not the view's shape; those of [`View2d::read`].
        pub fn read_array(&self, shape: (usize, usize)) -> Result<Array2<T>, BufferError> {
            const OP: &str = "View2d::read_array";
            if shape != self.shape() {
                return Err(shape_error(OP, shape, self.shape()));
            }
            Array2::from_shape_vec(shape, self.read()?)
                .map_err(|e| BufferError::Layout { operation: OP, problem: format!("shape {shape:?}: {e}") })
        }
    }

    impl<T: Element> View2dMut<'_, T> {
        /// Overwrites the view with a 2-D array of its shape (any layout:
        /// gathered into row order when not standard; feature `ndarray`).
        ///
        /// # Errors
        /// [`BufferError::Layout`] naming `View2dMut::write_array`
        /// when the array's shape is not the view's; those of
        /// [`View2dMut::write`].
        pub fn write_array<S: Data<Elem = T>>(&mut self, array: &ArrayBase<S, Ix2>) -> Result<(), BufferError> {
            let (r, c) = array.dim();
            if (r, c) != self.shape() {
                return Err(shape_error("View2dMut::write_array", (r, c), self.shape()));
            }
            match array.as_slice() {
                Some(standard) => self.write(standard),
                None => self.write(&array.iter().copied().collect::<Vec<T>>()),
            }
        }
    }
}
