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
//! unbranched in whole tiles), so that both the reads of `src`'s rows and
//! the writes of `dst`'s rows are coalesced; the tile's rows are 33
//! elements long so that a column of the tile falls in 32 different banks.
//! [`transpose_words`]: 4-byte elements as `u32`s, 64 × 32 tiles (8
//! elements a thread, all loads in flight before the stores; on the H200
//! 8192² `f32` in 0.146 ms against 0.153 for the tiles).
//! [`transpose_pairs`]: 2-byte elements (`f16`) of even `rows` and `cols`
//! moved as `u32` pairs, a 64 × 64 tile a workgroup (half the loads and
//! stores of the scalar kernel, each twice as wide).
//! [`transpose_quads`] (4-byte elements), [`transpose_octets`] (2-byte) and
//! [`transpose_duos`] (8-byte): no shared memory at all, each thread a
//! 4 × 4, 8 × 8 or 2 × 2 block transposed in registers (the quads and
//! octets also two blocks a thread: more bytes in flight), read and written as
//! `UVec4`s (`rows` and `cols` multiples of the block's side; on the H200
//! 8192² `f16` in 0.078 ms against 0.083 for the pairs). Which of these
//! runs on a GPU is the tuner's choice ([`crate::tuning`],
//! [`candidates`]).
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
/// (`Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)])`), tiles in the
/// grid's order.
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

/// The transpose of a `rows × cols` matrix of 4-byte elements (`f32`,
/// `i32`, `u32`, moved as their bits): a workgroup of 32 × 8 threads moves
/// a tile of 64 rows × 32 columns through shared memory (rows of 33 words:
/// the writes of a row and the reads of a column both fall in 32 different
/// banks), 8 elements a thread, all of a whole tile's loads issued before
/// any store: twice the bytes in flight of [`transpose_tiles`]' 4, and
/// each output row's piece 256 bytes long. The shared tile is sized
/// exactly (8.4 KB): its size limits how many workgroups an SM holds (on
/// the H200 a 32 × 32 tile in a 16.6 KB array ran at half the speed of the
/// same tile in 4.2 KB). Launch `Grid::blocks([cols.div_ceil(32),
/// rows.div_ceil(64)])`.
#[kernel(workgroup_size = (32, 8))]
pub fn transpose_words(src: &[u32], dst: &mut [u32], rows: u32, cols: u32) {
    let tile = shared::<[[u32; 33]; 64]>();
    let tx = thread_id().x;
    let ty = thread_id().y;
    let rows = rows as usize;
    let cols = cols as usize;
    let c0 = block_id().x * 32;
    let r0 = block_id().y * 64;
    if r0 + 64 <= rows && c0 + 32 <= cols {
        // A whole tile: no branch around the loads, so that they are all
        // in flight together.
        #[unroll]
        for k in 0..8 {
            tile[ty + k * 8][tx] = src[(r0 + ty + k * 8) * cols + c0 + tx];
        }
        workgroup_barrier();
        // Output row c0 + oc (source column oc), elements r0 + tx + 32 h.
        #[unroll]
        for k in 0..4 {
            let oc = ty + k * 8;
            #[unroll]
            for h in 0..2 {
                let r = tx + h * 32;
                dst[(c0 + oc) * rows + r0 + r] = tile[r][oc];
            }
        }
    } else {
        #[unroll]
        for k in 0..8 {
            let r = ty + k * 8;
            if r0 + r < rows && c0 + tx < cols {
                tile[r][tx] = src[(r0 + r) * cols + c0 + tx];
            }
        }
        workgroup_barrier();
        #[unroll]
        for k in 0..4 {
            let oc = ty + k * 8;
            #[unroll]
            for h in 0..2 {
                let r = tx + h * 32;
                if c0 + oc < cols && r0 + r < rows {
                    dst[(c0 + oc) * rows + r0 + r] = tile[r][oc];
                }
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
        let c = w0 * 2 + oc;
        let wr = r0 / 2 + tx;
        // Past the edge the tile holds nothing: read only what is written.
        if c < wcols * 2 && wr < wrows {
            let a = (tile[tx][oc / 2] >> shift) & 0xffff;
            let b = (tile[32 + tx][oc / 2] >> shift) & 0xffff;
            dst[c * wrows + wr] = a | (b << 16);
        }
    }
}

/// The block (down the rows, along them) thread `t` of workgroup `(bx, by)`
/// moves in [`transpose_quads`], [`transpose_octets`] and
/// [`transpose_duos`]: a subgroup of 32 takes 8 blocks down the columns by
/// 4 along the rows (its stores: four output rows of 128 contiguous bytes
/// an instruction; its loads: eight input rows of 64), the workgroup's 8
/// subgroups 2 down by 4 along: 16 × 16 blocks a workgroup. (On the H200,
/// 2026-12-05, this layout moved an 8192² `f16` matrix in 0.0776 ms and
/// an `f32` one in 0.1454, against 0.0839 and 0.1528 with lane pairs down
/// and sixteen pairs along, whose stores were sixteen rows of 32 bytes an
/// instruction.)
#[helper]
fn register_block(t: usize, bx: usize, by: usize) -> (usize, usize) {
    (by * 16 + ((t / 32) % 2) * 8 + t % 8, bx * 16 + (t / 64) * 4 + (t / 8) % 4)
}

/// The transpose of a `rows × cols` matrix of 4-byte elements (`rows` and
/// `cols` multiples of 4) read and written as `UVec4`s, with no shared
/// memory and no barrier: `src` holds `rows × cols / 4` of them (four
/// neighbouring columns each), `dst` `cols × rows / 4`. Each thread loads
/// `K` 4 × 4 blocks (four `UVec4`s each, one from each of four rows; the
/// blocks 16 apart along the rows), transposes them in registers and
/// stores four `UVec4`s a block, one into each of four rows of `dst`, all
/// loads issued before the first store. Neighbouring lanes take
/// neighbouring blocks so that every memory access is whole sectors (8
/// blocks down the columns, 4 along the rows a subgroup:
/// `register_block`). A workgroup of 256 threads covers 64 rows × 64 `K`
/// columns. Why: the shared-memory tiles are held back by how many of them
/// an SM keeps (the H200's figures in `docs/performance.md`), and their
/// 4-byte accesses issue four times the memory instructions of a `Vec4`
/// copy; this kernel holds its `64 K` bytes in registers and moves them in
/// 16-byte accesses on both sides (`K` 2: twice the bytes in flight a
/// thread). Launch `Grid::blocks([(cols / 4).div_ceil(16 K), (rows /
/// 4).div_ceil(16)])`.
#[kernel(workgroup_size = 256)]
pub fn transpose_quads<const K: usize>(src: &[UVec4], dst: &mut [UVec4], rows: u32, cols: u32) {
    // Blocks down the rows (= `UVec4`s in a row of `dst`) and along them.
    let down = rows as usize / 4;
    let along = cols as usize / 4;
    let (b, j) = register_block(thread_id().x, block_id().x * K, block_id().y);
    if b < down && j < along {
        let mut a = [[UVec4::ZERO; 4]; K];
        #[unroll]
        for k in 0..K {
            // A block past the last column loads the last one again (so
            // that the loads stay unbranched) and is not stored.
            let s = b * 4 * along + (j + 16 * k).min(along - 1);
            #[unroll]
            for i in 0..4 {
                a[k][i] = src[s + i * along];
            }
        }
        #[unroll]
        for k in 0..K {
            if j + 16 * k < along {
                // Row 4 (j + 16 k) + i of `dst` holds column i of block k.
                let o = (j + 16 * k) * 4 * down + b;
                // (Indexed, not copied whole: a copied array leaves the
                // registers.)
                dst[o] = UVec4::new(a[k][0].x, a[k][1].x, a[k][2].x, a[k][3].x);
                dst[o + down] = UVec4::new(a[k][0].y, a[k][1].y, a[k][2].y, a[k][3].y);
                dst[o + 2 * down] = UVec4::new(a[k][0].z, a[k][1].z, a[k][2].z, a[k][3].z);
                dst[o + 3 * down] = UVec4::new(a[k][0].w, a[k][1].w, a[k][2].w, a[k][3].w);
            }
        }
    }
}

/// Lane by lane, the low halves of `a` and `b` in one word each: `a`'s
/// low, `b`'s high (two `f16`s of one column, from rows `r` and `r + 1`).
#[helper]
fn low_halves(a: UVec4, b: UVec4) -> UVec4 {
    UVec4::new(
        (a.x & 0xffff) | (b.x << 16),
        (a.y & 0xffff) | (b.y << 16),
        (a.z & 0xffff) | (b.z << 16),
        (a.w & 0xffff) | (b.w << 16),
    )
}

/// Lane by lane, the high halves of `a` and `b` in one word each: `a`'s
/// low, `b`'s high.
#[helper]
fn high_halves(a: UVec4, b: UVec4) -> UVec4 {
    UVec4::new(
        (a.x >> 16) | (b.x & 0xffff_0000),
        (a.y >> 16) | (b.y & 0xffff_0000),
        (a.z >> 16) | (b.z & 0xffff_0000),
        (a.w >> 16) | (b.w & 0xffff_0000),
    )
}

/// The transpose of a `rows × cols` matrix of 2-byte elements (`f16`;
/// `rows` and `cols` multiples of 8) read and written as `UVec4`s of eight
/// halves, with no shared memory and no barrier: [`transpose_quads`] with
/// 8 × 8 blocks of halves (eight `UVec4`s in and out a block, 128 bytes;
/// `K` blocks a thread, 16 apart along the rows), each output word put
/// together from the halves of two input words with shifts and masks (no
/// `f16` arithmetic: any device). A workgroup of 256 threads covers 128
/// rows × 128 `K` columns. Launch `Grid::blocks([(cols / 8).div_ceil(16
/// K), (rows / 8).div_ceil(16)])`.
#[kernel(workgroup_size = 256)]
pub fn transpose_octets<const K: usize>(src: &[UVec4], dst: &mut [UVec4], rows: u32, cols: u32) {
    let down = rows as usize / 8;
    let along = cols as usize / 8;
    let (b, j) = register_block(thread_id().x, block_id().x * K, block_id().y);
    if b < down && j < along {
        let mut a = [[UVec4::ZERO; 8]; K];
        #[unroll]
        for k in 0..K {
            // Past the last column: the last block again, not stored.
            let s = b * 8 * along + (j + 16 * k).min(along - 1);
            #[unroll]
            for i in 0..8 {
                a[k][i] = src[s + i * along];
            }
        }
        #[unroll]
        for k in 0..K {
            if j + 16 * k < along {
                // Lane `q` of `l01`: column 2 q of rows 0 and 1 (one word
                // of `dst`'s row 8 j + 2 q); of `h01`: column 2 q + 1.
                let l01 = low_halves(a[k][0], a[k][1]);
                let l23 = low_halves(a[k][2], a[k][3]);
                let l45 = low_halves(a[k][4], a[k][5]);
                let l67 = low_halves(a[k][6], a[k][7]);
                let h01 = high_halves(a[k][0], a[k][1]);
                let h23 = high_halves(a[k][2], a[k][3]);
                let h45 = high_halves(a[k][4], a[k][5]);
                let h67 = high_halves(a[k][6], a[k][7]);
                let o = (j + 16 * k) * 8 * down + b;
                dst[o] = UVec4::new(l01.x, l23.x, l45.x, l67.x);
                dst[o + down] = UVec4::new(h01.x, h23.x, h45.x, h67.x);
                dst[o + 2 * down] = UVec4::new(l01.y, l23.y, l45.y, l67.y);
                dst[o + 3 * down] = UVec4::new(h01.y, h23.y, h45.y, h67.y);
                dst[o + 4 * down] = UVec4::new(l01.z, l23.z, l45.z, l67.z);
                dst[o + 5 * down] = UVec4::new(h01.z, h23.z, h45.z, h67.z);
                dst[o + 6 * down] = UVec4::new(l01.w, l23.w, l45.w, l67.w);
                dst[o + 7 * down] = UVec4::new(h01.w, h23.w, h45.w, h67.w);
            }
        }
    }
}

/// The transpose of a `rows × cols` matrix of 8-byte elements (`f64`,
/// `i64`, `u64`; `rows` and `cols` even) read and written as `UVec4`s of
/// two elements: [`transpose_quads`] with 2 × 2 blocks (two `UVec4`s in and
/// out a thread, each element two words that move together). A workgroup
/// of 256 threads covers 32 × 32 elements. Launch
/// `Grid::blocks([(cols / 2).div_ceil(16), (rows / 2).div_ceil(16)])`.
#[kernel(workgroup_size = 256)]
pub fn transpose_duos(src: &[UVec4], dst: &mut [UVec4], rows: u32, cols: u32) {
    let down = rows as usize / 2;
    let along = cols as usize / 2;
    let (b, j) = register_block(thread_id().x, block_id().x, block_id().y);
    if b < down && j < along {
        let s = b * 2 * along + j;
        let a0 = src[s];
        let a1 = src[s + along];
        // Row 2 j of `dst`: the first element of each source row; row
        // 2 j + 1: the second.
        let o = j * 2 * down + b;
        dst[o] = UVec4::new(a0.x, a0.y, a1.x, a1.y);
        dst[o + down] = UVec4::new(a0.z, a0.w, a1.z, a1.w);
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
            .size("cols", cols);
        let named: Vec<(&str, TransposePlan)> = plans.iter().map(|p| (p.name(), *p)).collect();
        let i = crate::tuning::choose(
            device,
            OP,
            include_str!("transpose.rs"),
            &key,
            &named,
            |(_, p), purpose| -> Result<Option<Vec<u8>>, OpError> {
                run_plan(device, src, (r, c), dst, *p)?;
                purpose.output(|| Ok(bytemuck::cast_slice(&dst.read()?).to_vec()))
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
    /// [`transpose_tiles`]: any element type, 32 × 32 tiles.
    Tiles,
    /// [`transpose_words`]: 4-byte elements as `u32`s, 64 × 32 tiles (on a
    /// GPU).
    Words,
    /// [`transpose_pairs`]: 2-byte elements as `u32` pairs (even `rows` and
    /// `cols`, on a GPU).
    Pairs,
    /// [`transpose_quads`]: 4-byte elements as `UVec4`s, 4 × 4 blocks a
    /// thread, no shared memory (`rows` and `cols` multiples of 4, on a
    /// GPU).
    Quads,
    /// [`transpose_quads`] with two blocks a thread (twice the bytes in
    /// flight).
    Quads2,
    /// [`transpose_octets`]: 2-byte elements as `UVec4`s, 8 × 8 blocks a
    /// thread, no shared memory (`rows` and `cols` multiples of 8, on a
    /// GPU).
    Octets,
    /// [`transpose_octets`] with two blocks a thread.
    Octets2,
    /// [`transpose_duos`]: 8-byte elements as `UVec4`s, 2 × 2 blocks a
    /// thread, no shared memory (even `rows` and `cols`, on a GPU).
    Duos,
}

impl TransposePlan {
    /// The plan's name, as the tuning cache keeps it.
    pub fn name(&self) -> &'static str {
        match self {
            TransposePlan::Tiles => "tiles",
            TransposePlan::Words => "words_tall",
            TransposePlan::Pairs => "u32_pairs",
            TransposePlan::Quads => "quads_4x4",
            TransposePlan::Quads2 => "quads_4x4x2",
            TransposePlan::Octets => "octets_8x8",
            TransposePlan::Octets2 => "octets_8x8x2",
            TransposePlan::Duos => "duos_2x2",
        }
    }
}

/// The plans the tuner times for a `rows × cols` transpose of `T` on
/// `device`, the default first: on a GPU, for 2-byte elements the octets
/// (one block a thread, then two) where `rows` and `cols` are multiples of
/// 8, then the `u32` pairs where they are even; for 4-byte elements the
/// words (then the quads, one block a thread and two, where `rows` and
/// `cols` are multiples of 4: one block as fast as the words on the H200);
/// then the tiles (then, for 8-byte elements of even `rows` and `cols`,
/// the duos); on the CPU executor the tiles.
pub fn candidates<T: Element>(device: &Device, rows: usize, cols: usize) -> Vec<TransposePlan> {
    if !device.is_gpu() {
        return vec![TransposePlan::Tiles];
    }
    use TransposePlan::*;
    [Octets, Octets2, Pairs, Words, Quads, Quads2, Tiles, Duos]
        .into_iter()
        .filter(|p| fits::<T>(*p, rows, cols))
        .collect()
}

/// Whether `plan` moves a `rows × cols` matrix of `T`: the tiles any, the
/// words 4-byte elements, the pairs 2-byte ones of even `rows` and `cols`,
/// the quads 4-byte ones, the octets 2-byte ones and the duos 8-byte ones
/// where `rows` and `cols` are multiples of their blocks' side (4, 8, 2).
fn fits<T: Element>(plan: TransposePlan, rows: usize, cols: usize) -> bool {
    let (size, multiple) = (std::mem::size_of::<T>(), |k: usize| rows % k == 0 && cols % k == 0);
    match plan {
        TransposePlan::Tiles => true,
        TransposePlan::Words => size == 4,
        TransposePlan::Pairs => size == 2 && multiple(2),
        TransposePlan::Quads | TransposePlan::Quads2 => size == 4 && multiple(4),
        TransposePlan::Octets | TransposePlan::Octets2 => size == 2 && multiple(8),
        TransposePlan::Duos => size == 8 && multiple(2),
    }
}

/// [`transpose_into`] with `plan` (one that does not fit runs as
/// [`TransposePlan::Tiles`]; off a GPU, [`transpose_into`]): the tests
/// run every plan through this on the GPU, and through [`words_plan`],
/// [`pairs_plan`] and [`blocks_plan`] on the CPU executor.
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
    same_device(OP, "src", device, src)?;
    same_device(OP, "dst", device, dst)?;
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let (r, c) = (u32_arg(OP, "rows", rows)?, u32_arg(OP, "cols", cols)?);
    let plan = if fits::<T>(plan, rows, cols) { plan } else { TransposePlan::Tiles };
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
    let view =
        |e: onekernel_runtime::BufferError| LaunchError::Gpu { kernel: "ops::transpose", message: e.to_string() };
    match plan {
        TransposePlan::Tiles => {
            transpose_tiles::launch::<T>(device, Grid::blocks([cols.div_ceil(32), rows.div_ceil(32)]), src, dst, r, c)?
        }
        // The other plans see both buffers as `u32`s or `UVec4`s: borrowed
        // views (`Buffer::view_as`), so a loop of calls allocates nothing
        // and reuses its bind groups (a `Buffer::from_wgpu` handle's drop
        // takes them out of the bind cache). The plans fit the lengths:
        // `fits` gives them for the element sizes and the multiples of
        // `rows` and `cols` they move whole, the callers `rows * cols`
        // elements on both sides.
        TransposePlan::Words => {
            let (s, mut d) = (src.view_as::<u32>().map_err(view)?, dst.view_as_mut::<u32>().map_err(view)?);
            words_plan(device, &s, &mut d, r, c)?
        }
        TransposePlan::Pairs => {
            let (s, mut d) = (src.view_as::<u32>().map_err(view)?, dst.view_as_mut::<u32>().map_err(view)?);
            pairs_plan(device, &s, &mut d, r, c)?
        }
        TransposePlan::Quads
        | TransposePlan::Quads2
        | TransposePlan::Octets
        | TransposePlan::Octets2
        | TransposePlan::Duos => {
            // The block's side: as many elements as a `UVec4`'s 16 bytes hold.
            let side = 16 / std::mem::size_of::<T>();
            let blocks = if matches!(plan, TransposePlan::Quads2 | TransposePlan::Octets2) { 2 } else { 1 };
            let (s, mut d) = (src.view_as::<UVec4>().map_err(view)?, dst.view_as_mut::<UVec4>().map_err(view)?);
            blocks_plan(device, side, blocks, &s, &mut d, r, c)?
        }
    }
    Ok(())
}

/// The transpose of `rows × cols` 4-byte elements held as `u32`s by
/// [`transpose_words`] (the tests run it on the CPU executor, where
/// `Buffer::view_as` is not).
///
/// # Errors
/// The launch's.
#[doc(hidden)]
pub fn words_plan(device: &Device, s: &Buffer<u32>, d: &mut Buffer<u32>, r: u32, c: u32) -> Result<(), LaunchError> {
    let g = Grid::blocks([(c as usize).div_ceil(32), (r as usize).div_ceil(64)]);
    transpose_words::launch(device, g, s, d, r, c)
}

/// The transpose of `rows × cols` 2-byte elements (even `rows` and
/// `cols`) held as `u32` pairs by [`transpose_pairs`] (the tests run it on
/// the CPU executor).
///
/// # Errors
/// The launch's.
#[doc(hidden)]
pub fn pairs_plan(device: &Device, s: &Buffer<u32>, d: &mut Buffer<u32>, r: u32, c: u32) -> Result<(), LaunchError> {
    let g = Grid::blocks([(c as usize).div_ceil(64), (r as usize).div_ceil(64)]);
    transpose_pairs::launch(device, g, s, d, r, c)
}

/// The transpose of `rows × cols` elements held as `UVec4`s by the
/// register-block kernel for `side × side` blocks, `blocks` of them a
/// thread: [`transpose_duos`] (2: 8-byte elements; one block),
/// [`transpose_quads`] (4: 4-byte ones) or [`transpose_octets`] (8: 2-byte
/// ones; one block or two), `rows` and `cols` multiples of `side` (the
/// tests run it on the CPU executor).
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `side` when it is not 2, 4 or 8,
/// or `blocks` when it is not 1 or 2 (1 for the duos); the launch's.
#[doc(hidden)]
pub fn blocks_plan(
    device: &Device,
    side: usize,
    blocks: usize,
    s: &Buffer<UVec4>,
    d: &mut Buffer<UVec4>,
    r: u32,
    c: u32,
) -> Result<(), LaunchError> {
    let invalid = |arg, problem: String| Err(LaunchError::InvalidArgument { kernel: "ops::transpose", arg, problem });
    let g = || Grid::blocks([(c as usize / side).div_ceil(16 * blocks), (r as usize / side).div_ceil(16)]);
    match (side, blocks) {
        (2, 1) => transpose_duos::launch(device, g(), s, d, r, c),
        (4, 1) => transpose_quads::launch::<1>(device, g(), s, d, r, c),
        (4, 2) => transpose_quads::launch::<2>(device, g(), s, d, r, c),
        (8, 1) => transpose_octets::launch::<1>(device, g(), s, d, r, c),
        (8, 2) => transpose_octets::launch::<2>(device, g(), s, d, r, c),
        (2 | 4 | 8, _) => invalid("blocks", format!("is {blocks}: the duos take 1 block a thread, the others 1 or 2")),
        _ => invalid("side", format!("is {side}: the register blocks are 2, 4 or 8 elements a side")),
    }
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
