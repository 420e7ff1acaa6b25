//! Transposes and 2-D copies of views of row-major matrices.
//!
//! ```
//! use onekernel::prelude::*;
//! use onekernel::ops::transpose;
//!
//! let device = Device::cpu();
//! // 2 rows × 3 columns.
//! let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! assert_eq!(transpose::transpose(&device, &a, 2, 3)?.read()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
//!
//! // Column 1 of `a` (a view of 2 rows, 1 column, row stride 3) into a buffer of 2.
//! let mut col = Buffer::<f32>::zeroed(&device, 2)?;
//! transpose::copy_2d(&device, a.view_2d(2, 3)?.col(1)?, &mut col.view_2d_mut(2, 1)?)?;
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
//! in 32 different banks; `DIAG` walks the tiles in diagonal order.
//! [`transpose_pairs`]: 2-byte elements (`f16`) of even `rows` and `cols`
//! moved as `u32` pairs, a 64 × 64 tile a workgroup (half the loads and
//! stores of the scalar kernel, each twice as wide). [`transpose_vec4`]:
//! 4-byte elements of `rows` and `cols` multiples of 4 moved as `UVec4`s
//! (16-byte loads and stores, a quarter of the memory instructions);
//! [`transpose_halves_vec4`]: 2-byte ones of multiples of 8, eight to a
//! `UVec4`. Which of these runs on
//! a GPU is the tuner's choice ([`crate::tuning`], [`candidates`]).
//! [`copy_strided`]: one thread per element of two views (the runtime's
//! [`View2d`] and [`View2dMut`]: an offset and a row stride), coalesced
//! along the rows on both sides.
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
use onekernel_runtime::{Element, View2d, View2dMut};

/// `dst` (`cols × rows`) = the transpose of `src` (`rows × cols`), both
/// row-major: one workgroup of 32 × 8 threads per 32 × 32 tile
/// (`Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)])`).
///
/// `DIAG` 1 (a square grid of tiles only): workgroup `(x, y)` moves tile
/// `((x + y) % grid_dim().x, x)`, so that the workgroups running at once
/// write tiles spread over `dst`'s rows rather than one column of tiles
/// (the diagonal order of NVIDIA's transpose paper); 0: tile `(x, y)`.
#[kernel(workgroup_size = (32, 8))]
pub fn transpose_tiles<T: Num, const DIAG: u32>(src: &[T], dst: &mut [T], rows: u32, cols: u32) {
    let tile = shared::<[[T; 33]; 32]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let cols = cols as usize;
    let mut bx = block_id().x;
    let mut by = block_id().y;
    if DIAG != 0 {
        bx = (block_id().x + block_id().y) % grid_dim().x;
        by = block_id().x;
    }
    let c0 = bx * 32;
    let r0 = by * 32;
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

/// The transpose of a `rows × cols` matrix of 2-byte elements (`f16`,
/// even `rows` and `cols`) read and written as `u32` pairs: `src` holds
/// `rows × cols / 2` words (two neighbouring columns each), `dst` `cols ×
/// rows / 2` (two neighbouring rows of the source each). A workgroup of 32
/// × 8 threads moves a 64 × 64 tile: 8 words a thread in, coalesced, into
/// shared memory (even and odd rows apart, 33 words a row: conflict-free
/// reads), then each output word is put together from the halves of two
/// words with shifts and masks (no `f16` arithmetic: any device), and
/// written coalesced. Launch `Grid::blocks([cols.div_ceil(64),
/// rows.div_ceil(64)])`.
#[kernel(workgroup_size = (32, 8))]
pub fn transpose_pairs(src: &[u32], dst: &mut [u32], rows: u32, cols: u32) {
    // tile[(r % 2) * 32 + r / 2][w]: word w (columns 2w, 2w + 1) of tile row r.
    let tile = shared::<[[u32; 33]; 64]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let wcols = cols as usize / 2;
    let wrows = rows / 2;
    let w0 = block_id().x * 32;
    let r0 = block_id().y * 64;
    if r0 + 64 <= rows && w0 + 32 <= wcols {
        #[unroll]
        for k in 0..8 {
            let r = ty + k * 8;
            tile[(r % 2) * 32 + r / 2][tx] = src[(r0 + r) * wcols + w0 + tx];
        }
    } else {
        #[unroll]
        for k in 0..8 {
            let r = ty + k * 8;
            if r0 + r < rows && w0 + tx < wcols {
                tile[(r % 2) * 32 + r / 2][tx] = src[(r0 + r) * wcols + w0 + tx];
            }
        }
    }
    workgroup_barrier();
    // Output row c0 + oc (source column), word r0 / 2 + tx (source rows
    // r0 + 2 tx and r0 + 2 tx + 1).
    #[unroll]
    for k in 0..8 {
        let oc = ty + k * 8;
        let shift = (oc as u32 % 2) * 16;
        let a = (tile[tx][oc / 2] >> shift) & 0xffff;
        let b = (tile[32 + tx][oc / 2] >> shift) & 0xffff;
        let c = w0 * 2 + oc;
        let wr = r0 / 2 + tx;
        if c < wcols * 2 && wr < wrows {
            dst[c * wrows + wr] = a | (b << 16);
        }
    }
}

/// The transpose of a `rows × cols` matrix of 4-byte elements (`f32`,
/// `i32`, `u32`, as their bits; `rows` and `cols` multiples of 4) read and
/// written as `UVec4`s: `src` holds `rows × cols / 4` vectors (four
/// neighbouring columns each), `dst` `cols × rows / 4` (four neighbouring
/// rows of the source each). A workgroup of 8 × 32 threads moves a tile of
/// `32 * R` rows × 32 columns: `R` 16-byte loads a thread (each warp reads
/// four 128-byte row pieces), into shared memory as words (rows of 33:
/// both the stores, `tile[r][4 tx + j]`, and the reads, `tile[4 tx +
/// j][c]`, fall in 32 different banks across a warp), then `R` 16-byte
/// stores a thread (`32 * R * 4`-byte row pieces of `dst`). A quarter of
/// the scalar kernel's memory instructions. `R` is 1 or 2. Launch
/// `Grid::blocks([cols.div_ceil(32), rows.div_ceil(32 * R)])`.
#[kernel(workgroup_size = (8, 32))]
pub fn transpose_vec4<const R: u32>(src: &[UVec4], dst: &mut [UVec4], rows: u32, cols: u32) {
    let tile = shared::<[[u32; 33]; 64]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let cols = cols as usize;
    let (rows4, cols4) = (rows / 4, cols / 4);
    let c0 = block_id().x * 32;
    let r0 = block_id().y * 32 * R as usize;
    let whole = r0 + 32 * R as usize <= rows && c0 + 32 <= cols;
    #[unroll]
    for k in 0..R {
        let r = ty + k as usize * 32;
        if whole || (r0 + r < rows && c0 / 4 + tx < cols4) {
            let v = src[(r0 + r) * cols4 + c0 / 4 + tx];
            tile[r][4 * tx] = v.x;
            tile[r][4 * tx + 1] = v.y;
            tile[r][4 * tx + 2] = v.z;
            tile[r][4 * tx + 3] = v.w;
        }
    }
    workgroup_barrier();
    // Output row c0 + ty (source column), vector r0 / 4 + q (source rows
    // r0 + 4 q .. r0 + 4 q + 4).
    #[unroll]
    for k in 0..R {
        let q = tx + k as usize * 8;
        if whole || (c0 + ty < cols && r0 / 4 + q < rows4) {
            let v = UVec4::new(tile[4 * q][ty], tile[4 * q + 1][ty], tile[4 * q + 2][ty], tile[4 * q + 3][ty]);
            dst[(c0 + ty) * rows4 + r0 / 4 + q] = v;
        }
    }
}

/// The transpose of a `rows × cols` matrix of 2-byte elements (`f16`;
/// `rows` and `cols` multiples of 8) read and written as `UVec4`s of eight
/// elements: a workgroup of 8 × 32 threads moves a tile of `32 * R` rows ×
/// 64 columns: `R` 16-byte loads a thread (eight elements of a row, each
/// kept in a shared word of its own, rows of 65 words), then `R` 16-byte
/// stores, each eight elements of a column of the tile put together with
/// shifts and ors (no `f16` arithmetic: any device). `R` is 1 or 2. Launch
/// `Grid::blocks([cols.div_ceil(64), rows.div_ceil(32 * R)])`.
#[kernel(workgroup_size = (8, 32), max_shared_bytes = 16640)]
pub fn transpose_halves_vec4<const R: u32>(src: &[UVec4], dst: &mut [UVec4], rows: u32, cols: u32) {
    let tile = shared::<[[u32; 65]; 64]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let cols = cols as usize;
    let (rows8, cols8) = (rows / 8, cols / 8);
    let c0 = block_id().x * 64;
    let r0 = block_id().y * 32 * R as usize;
    let whole = r0 + 32 * R as usize <= rows && c0 + 64 <= cols;
    #[unroll]
    for k in 0..R {
        let r = ty + k as usize * 32;
        if whole || (r0 + r < rows && c0 / 8 + tx < cols8) {
            let v = src[(r0 + r) * cols8 + c0 / 8 + tx];
            tile[r][8 * tx] = v.x & 0xffff;
            tile[r][8 * tx + 1] = v.x >> 16;
            tile[r][8 * tx + 2] = v.y & 0xffff;
            tile[r][8 * tx + 3] = v.y >> 16;
            tile[r][8 * tx + 4] = v.z & 0xffff;
            tile[r][8 * tx + 5] = v.z >> 16;
            tile[r][8 * tx + 6] = v.w & 0xffff;
            tile[r][8 * tx + 7] = v.w >> 16;
        }
    }
    workgroup_barrier();
    // Vector e of the tile's output: row c0 + oc (source column), vector
    // r0 / 8 + q (source rows r0 + 8 q .. r0 + 8 q + 8).
    let t = ty * 8 + tx;
    #[unroll]
    for k in 0..R {
        let e = t + k as usize * 256;
        let oc = e / (4 * R as usize);
        let q = e % (4 * R as usize);
        if whole || (c0 + oc < cols && r0 / 8 + q < rows8) {
            let b = 8 * q;
            let v = UVec4::new(
                tile[b][oc] | (tile[b + 1][oc] << 16),
                tile[b + 2][oc] | (tile[b + 3][oc] << 16),
                tile[b + 4][oc] | (tile[b + 5][oc] << 16),
                tile[b + 6][oc] | (tile[b + 7][oc] << 16),
            );
            dst[(c0 + oc) * rows8 + r0 / 8 + q] = v;
        }
    }
}

/// `dst[dst_offset + r * dst_row + c] = src[src_offset + r * src_row + c]`
/// for `r < rows`, `c < cols`: one thread per element
/// (`Grid::threads([cols, rows])`), coalesced on both sides.
#[kernel(workgroup_size = (64, 4))]
#[allow(clippy::too_many_arguments)]
pub fn copy_strided<T: Num>(
    src: &[T],
    dst: &mut [T],
    cols: u32,
    rows: u32,
    src_offset: u32,
    src_row: u32,
    dst_offset: u32,
    dst_row: u32,
) {
    let c = global_id().x;
    let r = global_id().y;
    if c < cols as usize && r < rows as usize {
        let s = src_offset as usize + r * src_row as usize + c;
        let d = dst_offset as usize + r * dst_row as usize + c;
        dst[d] = src[s];
    }
}

/// The element types of the transposes and copies: every `Num` type.
pub trait TransposeElement: transpose_tiles::Instance + copy_strided::Instance + Element {}
impl<T: transpose_tiles::Instance + copy_strided::Instance + Element> TransposeElement for T {}

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
    let plans = candidates::<T>(device, rows, cols);
    let plan = if plans.len() == 1 {
        plans[0]
    } else {
        let key = onekernel_runtime::tune::Key::new()
            .value("bytes", std::mem::size_of::<T>())
            .size("rows", rows)
            .size("cols", cols)
            .value("square", plans.contains(&TransposePlan::Diagonal));
        let named: Vec<(&str, TransposePlan)> = plans.iter().map(|p| (p.name(), *p)).collect();
        let i = crate::tuning::choose(
            device,
            OP,
            include_str!("transpose.rs"),
            &key,
            &named,
            |(_, p), purpose| -> Result<Option<Vec<u8>>, OpError> {
                run_plan(device, src, (r, c), dst, *p)?;
                Ok(if purpose == crate::tuning::Purpose::Check {
                    Some(bytemuck::cast_slice(&dst.read()?).to_vec())
                } else {
                    None
                })
            },
            |a, b| a == b,
        );
        plans[i]
    };
    run_plan(device, src, (r, c), dst, plan)
}

/// One way to run a transpose: what the tuner ([`crate::tuning`]) chooses
/// among.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransposePlan {
    /// [`transpose_tiles`], tiles in the grid's order.
    Tiles,
    /// [`transpose_tiles`] in diagonal order (a square grid of tiles).
    Diagonal,
    /// [`transpose_pairs`]: 2-byte elements as `u32` pairs (even `rows` and
    /// `cols`, on a GPU).
    Pairs,
    /// [`transpose_vec4`] with `R` = 1: 4-byte elements as `UVec4`s
    /// (`rows` and `cols` multiples of 4, on a GPU), 32 × 32 tiles.
    Vec4,
    /// [`transpose_vec4`] with `R` = 2: 64 × 32 tiles.
    Vec4Tall,
    /// [`transpose_halves_vec4`] with `R` = 1: 2-byte elements as `UVec4`s
    /// of eight (`rows` and `cols` multiples of 8, on a GPU), 32 × 64
    /// tiles.
    HalvesVec4,
    /// [`transpose_halves_vec4`] with `R` = 2: 64 × 64 tiles.
    HalvesVec4Tall,
}

impl TransposePlan {
    /// The plan's name, as the tuning cache keeps it.
    pub fn name(&self) -> &'static str {
        match self {
            TransposePlan::Tiles => "tiles",
            TransposePlan::Diagonal => "tiles_diagonal",
            TransposePlan::Pairs => "u32_pairs",
            TransposePlan::Vec4 => "vec4",
            TransposePlan::Vec4Tall => "vec4_tall",
            TransposePlan::HalvesVec4 => "halves_vec4",
            TransposePlan::HalvesVec4Tall => "halves_vec4_tall",
        }
    }
}

/// The plans the tuner times for a `rows × cols` transpose of `T` on
/// `device`, the default first: on a GPU, `u32` pairs for 2-byte elements
/// of even `rows` and `cols` (first), the tiles in the grid's order and,
/// for a square grid of tiles, in diagonal order, then `UVec4`s for 4-byte
/// elements of `rows` and `cols` multiples of 4 (32 × 32 and 64 × 32
/// tiles) and for 2-byte ones of multiples of 8 (eight a vector, 32 × 64
/// and 64 × 64 tiles); on the CPU executor the tiles.
pub fn candidates<T: Element>(device: &Device, rows: usize, cols: usize) -> Vec<TransposePlan> {
    if !device.is_gpu() {
        return vec![TransposePlan::Tiles];
    }
    let mut plans = Vec::new();
    if std::mem::size_of::<T>() == 2 && rows % 2 == 0 && cols % 2 == 0 {
        plans.push(TransposePlan::Pairs);
    }
    plans.push(TransposePlan::Tiles);
    if rows.div_ceil(32) == cols.div_ceil(32) && rows > 32 {
        plans.push(TransposePlan::Diagonal);
    }
    if std::mem::size_of::<T>() == 4 && rows % 4 == 0 && cols % 4 == 0 {
        plans.extend([TransposePlan::Vec4, TransposePlan::Vec4Tall]);
    }
    if std::mem::size_of::<T>() == 2 && rows % 8 == 0 && cols % 8 == 0 {
        plans.extend([TransposePlan::HalvesVec4, TransposePlan::HalvesVec4Tall]);
    }
    plans
}

/// [`transpose_into`] with `plan` (one that does not fit runs as
/// [`TransposePlan::Tiles`]): the tests run every plan through this.
///
/// # Errors
/// As [`transpose_into`].
#[doc(hidden)]
pub fn transpose_with_plan<T: TransposeElement>(
    device: &Device,
    src: &Buffer<T>,
    rows: usize,
    cols: usize,
    dst: &mut Buffer<T>,
    plan: TransposePlan,
) -> Result<(), OpError> {
    const OP: &str = "ops::transpose";
    let n = rows.checked_mul(cols);
    if n != Some(src.len()) || n != Some(dst.len()) || !device.is_gpu() {
        return Ok(transpose_into(device, src, rows, cols, dst)?);
    }
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let (r, c) = (u32_arg(OP, "rows", rows)?, u32_arg(OP, "cols", cols)?);
    let plan = if candidates::<T>(device, rows, cols).contains(&plan) { plan } else { TransposePlan::Tiles };
    Ok(run_plan(device, src, (r, c), dst, plan)?)
}

fn run_plan<T: TransposeElement>(
    device: &Device,
    src: &Buffer<T>,
    (r, c): (u32, u32),
    dst: &mut Buffer<T>,
    plan: TransposePlan,
) -> Result<(), LaunchError> {
    let (rows, cols) = (r as usize, c as usize);
    let tiles = Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)]);
    let view =
        |e: onekernel_runtime::BufferError| LaunchError::Gpu { kernel: "ops::transpose", message: e.to_string() };
    match plan {
        TransposePlan::Tiles => transpose_tiles::launch::<T, 0>(device, tiles, src, dst, r, c)?,
        TransposePlan::Diagonal => transpose_tiles::launch::<T, 1>(device, tiles, src, dst, r, c)?,
        // The other plans see both buffers as wider elements: borrowed
        // views (`Buffer::view_as`), so a loop of calls allocates nothing
        // and reuses its bind groups (a `Buffer::from_wgpu` handle's drop
        // takes them out of the bind cache). The plans fit the lengths:
        // `candidates` requires the multiples, the callers `rows * cols`
        // elements on both sides.
        TransposePlan::HalvesVec4 | TransposePlan::HalvesVec4Tall => {
            let (s8, mut d8) = (src.view_as::<UVec4>().map_err(view)?, dst.view_as_mut::<UVec4>().map_err(view)?);
            if plan == TransposePlan::HalvesVec4 {
                let g = Grid::blocks([cols.div_ceil(64), rows.div_ceil(32)]);
                transpose_halves_vec4::launch::<1>(device, g, &*s8, &mut *d8, r, c)?;
            } else {
                let g = Grid::blocks([cols.div_ceil(64), rows.div_ceil(64)]);
                transpose_halves_vec4::launch::<2>(device, g, &*s8, &mut *d8, r, c)?;
            }
        }
        TransposePlan::Vec4 | TransposePlan::Vec4Tall => {
            let (s4, mut d4) = (src.view_as::<UVec4>().map_err(view)?, dst.view_as_mut::<UVec4>().map_err(view)?);
            if plan == TransposePlan::Vec4 {
                let g = Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)]);
                transpose_vec4::launch::<1>(device, g, &*s4, &mut *d4, r, c)?;
            } else {
                let g = Grid::blocks([cols.div_ceil(32), rows.div_ceil(64)]);
                transpose_vec4::launch::<2>(device, g, &*s4, &mut *d4, r, c)?;
            }
        }
        TransposePlan::Pairs => {
            let (s32, mut d32) = (src.view_as::<u32>().map_err(view)?, dst.view_as_mut::<u32>().map_err(view)?);
            let g = Grid::blocks([cols.div_ceil(64), rows.div_ceil(64)]);
            transpose_pairs::launch(device, g, &*s32, &mut *d32, r, c)?;
        }
    }
    Ok(())
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

/// Copies the view `src` into the view `dst` of the same shape (rows,
/// columns or a block of a matrix: [`View2d`], [`View2dMut`], the
/// runtime's views with a row stride): one thread per element, coalesced
/// along the rows on both sides. No allocation. (A transpose is
/// [`transpose_into`].)
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// // Columns 1..3 of a 2 × 3 matrix into a 2 × 2 buffer.
/// let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let mut b = Buffer::<f32>::zeroed(&device, 4)?;
/// let src = a.view_2d(2, 3)?.slice_cols(1..)?;
/// onekernel::ops::transpose::copy_2d(&device, src, &mut b.view_2d_mut(2, 2)?)?;
/// assert_eq!(b.read()?, [2.0, 3.0, 5.0, 6.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::copy_2d` and `dst` when
/// the shapes differ, or `src`/`dst` when an index is past `u32::MAX`;
/// `WrongDevice`; the launch's errors.
pub fn copy_2d<T: TransposeElement>(
    device: &Device,
    src: View2d<'_, T>,
    dst: &mut View2dMut<'_, T>,
) -> Result<(), LaunchError> {
    const OP: &str = "ops::copy_2d";
    let (sl, dl) = (src.layout(), dst.layout());
    let (db, _) = dst.parts();
    same_device(OP, "src", device, src.buffer())?;
    same_device(OP, "dst", device, db)?;
    if (sl.rows, sl.cols) != (dl.rows, dl.cols) {
        return Err(LaunchError::InvalidArgument {
            kernel: OP,
            arg: "dst",
            problem: format!("is {} × {}, `src` {} × {}", dl.rows, dl.cols, sl.rows, sl.cols),
        });
    }
    if sl.is_empty() {
        return Ok(());
    }
    let ws = crate::reduce::Window::of(OP, "src", sl)?;
    let wd = crate::reduce::Window::of(OP, "dst", dl)?;
    copy_strided::launch::<T>(
        device,
        Grid::threads([sl.cols, sl.rows]),
        src.buffer(),
        db,
        ws.cols,
        ws.rows,
        ws.offset,
        ws.row_stride,
        wd.offset,
        wd.row_stride,
    )
}
