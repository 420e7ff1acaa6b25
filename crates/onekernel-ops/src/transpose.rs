//! Transposes and strided 2-D copies of row-major matrices.
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::transpose::{self, Layout2d};
//!
//! let device = Device::cpu();
//! // 2 rows × 3 columns.
//! let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! assert_eq!(transpose::transpose(&device, &a, 2, 3)?.read()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//!
//! // Column 1 of `a` (2 elements, stride 3) into a buffer of 2.
//! let mut col = Buffer::<f32>::zeroed(&device, 2)?;
//! let src = Layout2d { offset: 1, row_stride: 3, col_stride: 1 };
//! transpose::copy_2d(&device, &a, src, &mut col, Layout2d::row_major(1), 2, 1)?;
//! assert_eq!(col.read()?, [2.0, 5.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How they run
//!
//! [`transpose_tiles`]: each workgroup of 32 × 8 threads moves a 32 × 32
//! tile through shared memory (each thread 4 elements, their loads
//! unbranched in whole tiles: on the H200 this took the transpose of
//! 8192² `f32` from 1493 to 3522 GB/s; two tiles a workgroup measured
//! half that), so that both the
//! reads of `src`'s rows and the writes of `dst`'s rows are coalesced;
//! the tile's rows are 33 elements long so that a column of the tile falls
//! in 32 different banks. [`copy_strided`]: one thread per element, any
//! strides (a copy whose source and destination are both row-major is
//! coalesced on both sides; any other is what its strides make it).
//!
//! Both are generic over every `Num` type (`f32`, `f16`, `f64`, `i32`,
//! `u32`, `i64`, `u64`) and run as kernels on every device, but for the
//! transpose on `Device::cpu()`, which runs a host implementation (64 × 64
//! blocks over rayon): the tiled kernel runs on the phase executor, one
//! invocation at a time per workgroup, where a plain blocked loop is the
//! fast way (`cargo bench -p onekernel-ops --bench ops -- --cpu` times
//! the op against rayon). The kernels run on `Device::cpu_serial()` and
//! `Device::cpu_race_checked()`, where the tests compare them.

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::Element;

/// `dst` (`cols × rows`) = the transpose of `src` (`rows × cols`), both
/// row-major: one workgroup of 32 × 8 threads per 32 × 32 tile
/// (`Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)])`).
#[kernel(workgroup_size = (32, 8))]
pub fn transpose_tiles<T: Num>(src: &[T], dst: &mut [T], rows: u32, cols: u32) {
    let tile = shared::<[[T; 33]; 32]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let cols = cols as usize;
    let c0 = block_id().x * 32;
    let r0 = block_id().y * 32;
    if r0 + 32 <= rows && c0 + 32 <= cols {
        // A whole tile (all but the edges): no branch around the loads,
        // so that a thread's four are in flight together.
        #[unroll]
        for k in 0..4 {
            tile[ty + k * 8][tx] = src[(r0 + ty + k * 8) * cols + c0 + tx];
        }
        workgroup_barrier();
        #[unroll]
        for k in 0..4 {
            dst[(c0 + ty + k * 8) * rows + r0 + tx] = tile[tx][ty + k * 8];
        }
    } else {
        #[unroll]
        for k in 0..4 {
            let r = r0 + ty + k * 8;
            let c = c0 + tx;
            if r < rows && c < cols {
                tile[ty + k * 8][tx] = src[r * cols + c];
            }
        }
        workgroup_barrier();
        #[unroll]
        for k in 0..4 {
            let c = c0 + ty + k * 8;
            let r = r0 + tx;
            if c < cols && r < rows {
                dst[c * rows + r] = tile[tx][ty + k * 8];
            }
        }
    }
}

/// `dst[dst_offset + r * dst_row + c * dst_col] = src[src_offset + r *
/// src_row + c * src_col]` for `r < rows`, `c < cols`: one thread per
/// element (`Grid::threads([cols, rows])`).
#[kernel(workgroup_size = (64, 4))]
#[allow(clippy::too_many_arguments)]
pub fn copy_strided<T: Num>(
    src: &[T],
    dst: &mut [T],
    cols: u32,
    rows: u32,
    src_offset: u32,
    src_row: u32,
    src_col: u32,
    dst_offset: u32,
    dst_row: u32,
    dst_col: u32,
) {
    let c = global_id().x;
    let r = global_id().y;
    if c < cols as usize && r < rows as usize {
        let s = src_offset as usize + r * src_row as usize + c * src_col as usize;
        let d = dst_offset as usize + r * dst_row as usize + c * dst_col as usize;
        dst[d] = src[s];
    }
}

/// The element types of the transposes and copies: every `Num` type.
pub trait TransposeElement: transpose_tiles::Instance + copy_strided::Instance + Element {}
impl<T: transpose_tiles::Instance + copy_strided::Instance + Element> TransposeElement for T {}

/// Where a matrix's elements are in a buffer: element `(r, c)` is at
/// `offset + r * row_stride + c * col_stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout2d {
    /// The index of element `(0, 0)`.
    pub offset: usize,
    /// Elements from one row to the next.
    pub row_stride: usize,
    /// Elements from one column to the next.
    pub col_stride: usize,
}

impl Layout2d {
    /// A row-major matrix of `cols` columns at the start of its buffer.
    pub fn row_major(cols: usize) -> Layout2d {
        Layout2d { offset: 0, row_stride: cols, col_stride: 1 }
    }

    /// A column-major matrix of `rows` rows (the transpose of a row-major
    /// one) at the start of its buffer.
    pub fn col_major(rows: usize) -> Layout2d {
        Layout2d { offset: 0, row_stride: 1, col_stride: rows }
    }

    /// The largest index a `rows × cols` matrix reaches (`None` when empty
    /// or past `usize`).
    fn last(self, rows: usize, cols: usize) -> Option<usize> {
        if rows == 0 || cols == 0 {
            return None;
        }
        self.offset
            .checked_add((rows - 1).checked_mul(self.row_stride)?)?
            .checked_add((cols - 1).checked_mul(self.col_stride)?)
    }
}

fn u32_arg(op: &'static str, arg: &'static str, v: usize) -> Result<u32, LaunchError> {
    u32::try_from(v).map_err(|_| LaunchError::InvalidArgument {
        kernel: op,
        arg,
        problem: format!("{v} is more than a kernel can index (u32::MAX)"),
    })
}

fn same_device<T: Element>(
    op: &'static str,
    arg: &'static str,
    device: &Device,
    b: &Buffer<T>,
) -> Result<(), LaunchError> {
    if b.device().id() != device.id() {
        return Err(LaunchError::WrongDevice {
            kernel: op,
            arg,
            buffer_device: b.device().name(),
            launch_device: device.name(),
        });
    }
    Ok(())
}

/// `dst` (`cols × rows`, row-major) = the transpose of `src` (`rows ×
/// cols`, row-major). No allocation: the form for loops and
/// `device.time(..)`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let a = Buffer::from_slice(&device, &[1u32, 2, 3, 4, 5, 6])?;
/// let mut t = Buffer::<u32>::zeroed(&device, 6)?;
/// onekernel::ops::transpose::transpose_into(&device, &a, 3, 2, &mut t)?;
/// assert_eq!(t.read()?, [1, 3, 5, 2, 4, 6]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::transpose` and the argument
/// when `src` or `dst` does not hold `rows * cols` elements; the launch's
/// errors (`GridTooLarge` past 65535 × 32 columns or rows).
pub fn transpose_into<T: TransposeElement>(
    device: &Device,
    src: &Buffer<T>,
    rows: usize,
    cols: usize,
    dst: &mut Buffer<T>,
) -> Result<(), LaunchError> {
    const OP: &str = "ops::transpose";
    same_device(OP, "src", device, src)?;
    same_device(OP, "dst", device, dst)?;
    let n = rows.checked_mul(cols);
    for (arg, len) in [("src", src.len()), ("dst", dst.len())] {
        if n != Some(len) {
            return Err(LaunchError::InvalidArgument {
                kernel: OP,
                arg,
                problem: format!("has {len} elements, needs rows * cols = {rows} * {cols}"),
            });
        }
    }
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let (r, c) = (u32_arg(OP, "rows", rows)?, u32_arg(OP, "cols", cols)?);
    if crate::reduce::runs_on_host(device) {
        let cpu = crate::reduce::cpu_of(device)?;
        let info = transpose_tiles::kernel_info::<T>();
        let input = onekernel::__private::cpu_slice(src, info, 0, cpu)?;
        let output = onekernel::__private::cpu_shared(dst, info, 1, cpu)?;
        host_transpose(input, &output, rows, cols);
        return Ok(());
    }
    transpose_tiles::launch::<T>(device, Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)]), src, dst, r, c)
}

/// The host implementation on the parallel CPU executor: 64 × 64 blocks
/// (both sides stay in cache), one rayon task per block row of `dst`.
fn host_transpose<T: Element>(src: &[T], dst: &onekernel::__private::SharedSliceMut<'_, T>, rows: usize, cols: usize) {
    use rayon::prelude::*;
    const B: usize = 64;
    (0..cols.div_ceil(B)).into_par_iter().for_each(|cb| {
        for rb in 0..rows.div_ceil(B) {
            for c in cb * B..((cb + 1) * B).min(cols) {
                for r in rb * B..((rb + 1) * B).min(rows) {
                    dst.store(c * rows + r, src[r * cols + c]);
                }
            }
        }
    });
}

/// [`transpose_into`] into a new buffer.
///
/// # Errors
/// As [`transpose_into`] (`OpError::Launch`); `OpError::Buffer` when the
/// allocation fails.
pub fn transpose<T: TransposeElement>(
    device: &Device,
    src: &Buffer<T>,
    rows: usize,
    cols: usize,
) -> Result<Buffer<T>, OpError> {
    let mut dst = Buffer::zeroed(device, src.len())?;
    transpose_into(device, src, rows, cols, &mut dst)?;
    Ok(dst)
}

/// Copies the `rows × cols` matrix at `src_layout` in `src` to
/// `dst_layout` in `dst`. Any strides, also 0 in `src` (a broadcast) and
/// swapped ones (a transpose, uncoalesced on one side: [`transpose_into`]
/// is the fast one). Where two elements of the matrix land on the same
/// element of `dst`, which one is written there is unspecified. No
/// allocation.
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::copy_2d` and `src_layout`
/// or `dst_layout` when the matrix reaches past its buffer (or an index
/// past `u32::MAX`); the launch's errors.
pub fn copy_2d<T: TransposeElement>(
    device: &Device,
    src: &Buffer<T>,
    src_layout: Layout2d,
    dst: &mut Buffer<T>,
    dst_layout: Layout2d,
    rows: usize,
    cols: usize,
) -> Result<(), LaunchError> {
    const OP: &str = "ops::copy_2d";
    same_device(OP, "src", device, src)?;
    same_device(OP, "dst", device, dst)?;
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    for (arg, layout, len) in [("src_layout", src_layout, src.len()), ("dst_layout", dst_layout, dst.len())] {
        match layout.last(rows, cols) {
            Some(last) if last < len && u32::try_from(last).is_ok() => {}
            _ => {
                return Err(LaunchError::InvalidArgument {
                    kernel: OP,
                    arg,
                    problem: format!("{layout:?} of a {rows} × {cols} matrix reaches past the buffer's {len} elements"),
                })
            }
        }
    }
    let (r, c) = (u32_arg(OP, "rows", rows)?, u32_arg(OP, "cols", cols)?);
    // Every value below is at most a last index, checked above.
    let v = |x: usize| x as u32;
    copy_strided::launch::<T>(
        device,
        Grid::threads([cols, rows]),
        src,
        dst,
        c,
        r,
        v(src_layout.offset),
        v(src_layout.row_stride),
        v(src_layout.col_stride),
        v(dst_layout.offset),
        v(dst_layout.row_stride),
        v(dst_layout.col_stride),
    )
}
