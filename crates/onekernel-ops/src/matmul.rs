//! Matrix multiplication: `c = a × b` for a batch of matrices, `f32` of
//! any shape with either operand transposed, and `f16` inputs with `f32`
//! accumulation on matrix tiles (tensor cores) where the device has them.
//!
//! # How it works
//!
//! - [`sgemm_strided`] is the register-blocked kernel of
//!   `examples/sgemm.rs` (a block of 16 × 16 threads computes a 128 × 128
//!   square of `C`, each thread 8 × 8 of it in registers) with every load
//!   and store guarded, so any `m`, `k`, `n` works, and each operand read
//!   through its layout (row-major or transposed: the tile is loaded with
//!   neighbouring threads at neighbouring addresses either way). The batch
//!   is the grid's `z`.
//! - [`sgemm_tiled`] is `examples/sgemm.rs`'s `Vec4` kernel with its
//!   blocking as const parameters (`examples/sgemm_tuned.rs` tunes this
//!   kernel too, over more candidates), over the same GPU memory viewed as
//!   `Vec4`s: for row-major operands on a GPU whose shape one of its tiles
//!   divides (`m` a multiple of 32, `n` of 64, `k` of 16 at least). The
//!   tile is chosen per shape by the ops' tuner ([`crate::tuning`]: its
//!   mode, cache directory and picks, as for the other ops), so the first
//!   product of a new shape times each tile that fits.
//! - [`sgemm_fast`] is `examples/sgemm.rs`'s `sgemm_vec4` over `f32`
//!   buffers (four neighbouring `f32`s where that kernel reads a `Vec4`):
//!   for row-major operands with `m`, `n` multiples of 128 and `k` of 16
//!   where [`sgemm_tiled`] cannot run (the kernels on the CPU executor).
//! - [`hgemm_tiles`]: `f16` × `f16` → `f32` on 16 × 16 matrix tiles, each
//!   subgroup of 32 a 32 × 64 piece of a 128 × 128 block, its tiles read
//!   straight from memory (cached); for `m`, `n` multiples of 128 and `k`
//!   of 16 on devices with cooperative matrices. Other shapes and devices
//!   take `hgemm_strided`, the `f32` kernel reading `f16` (fallback).
//!
//! On the CPU executor the product runs as plain Rust over the rows of `C`
//! with rayon (faster there than the cooperative kernels);
//! [`matmul_with`]'s `kernels_on_cpu` runs the kernels instead (the tests
//! do).

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::abi::Features;
use rayon::prelude::*;

/// How an operand is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Row-major as the product reads it: `a` is `m × k`, `b` is `k × n`.
    #[default]
    RowMajor,
    /// Stored transposed (row-major of the transpose): `a` as `k × m`,
    /// `b` as `n × k`.
    Transposed,
}

/// The sizes of a (batched) product: `batch` products of `m × k` by
/// `k × n`, each matrix after the previous one in its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shape {
    /// The number of products.
    pub batch: usize,
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `a`, rows of `b`.
    pub k: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
}

impl Shape {
    /// One product of `m × k` by `k × n`.
    pub fn new(m: usize, k: usize, n: usize) -> Shape {
        Shape { batch: 1, m, k, n }
    }

    /// `batch` products of these sizes.
    pub fn batched(batch: usize, m: usize, k: usize, n: usize) -> Shape {
        Shape { batch, m, k, n }
    }
}

macro_rules! strided_kernel {
    ($(#[$doc:meta])* $name:ident, $T:ty, |$w:ident| $widen:expr) => {
        $(#[$doc])*
        #[kernel(workgroup_size = (16, 16))]
        pub fn $name(a: &[$T], b: &[$T], c: &mut [f32], m: u32, k: u32, n: u32, a_trans: u32, b_trans: u32) {
            let a_tile = shared::<[[f32; 128]; 8]>();
            let b_tile = shared::<[[f32; 128]; 8]>();
            let (m, k, n) = (m as usize, k as usize, n as usize);
            let (tx, ty) = (thread_id().x, thread_id().y);
            let id = ty * 16 + tx;
            let row0 = block_id().y * 128;
            let col0 = block_id().x * 128;
            let batch = block_id().z;
            let (a_off, b_off, c_off) = (batch * m * k, batch * k * n, batch * m * n);

            let mut acc = [[0.0f32; 8]; 8];
            let mut a_frag = [0.0f32; 8];
            let mut b_frag = [0.0f32; 8];
            let steps = (k + 7) / 8;
            for step in 0..steps {
                let j0 = step * 8;
                #[unroll]
                for q in 0..4 {
                    let e = id + q * 256;
                    // A: neighbouring threads along its memory rows.
                    let (r, j) = if a_trans == 0 { (e / 8, e % 8) } else { (e % 128, e / 128) };
                    let (gr, gj) = (row0 + r, j0 + j);
                    a_tile[j][r] = if gr < m && gj < k {
                        let $w = if a_trans == 0 { a[a_off + gr * k + gj] } else { a[a_off + gj * m + gr] };
                        $widen
                    } else {
                        0.0
                    };
                    let (j, cc) = if b_trans == 0 { (e / 128, e % 128) } else { (e % 8, e / 8) };
                    let (gj, gc) = (j0 + j, col0 + cc);
                    b_tile[j][cc] = if gj < k && gc < n {
                        let $w = if b_trans == 0 { b[b_off + gj * n + gc] } else { b[b_off + gc * k + gj] };
                        $widen
                    } else {
                        0.0
                    };
                }
                workgroup_barrier();
                #[unroll]
                for j in 0..8 {
                    #[unroll]
                    for r in 0..8 {
                        a_frag[r] = a_tile[j][ty + r * 16];
                    }
                    #[unroll]
                    for cc in 0..8 {
                        b_frag[cc] = b_tile[j][tx + cc * 16];
                    }
                    #[unroll]
                    for r in 0..8 {
                        #[unroll]
                        for cc in 0..8 {
                            acc[r][cc] = a_frag[r].mul_add(b_frag[cc], acc[r][cc]);
                        }
                    }
                }
                workgroup_barrier();
            }
            #[unroll]
            for r in 0..8 {
                #[unroll]
                for cc in 0..8 {
                    let (gr, gc) = (row0 + ty + r * 16, col0 + tx + cc * 16);
                    if gr < m && gc < n {
                        c[c_off + gr * n + gc] = acc[r][cc];
                    }
                }
            }
        }
    };
}

strided_kernel!(
    /// `c = a × b` for every matrix of the batch (`block_id().z`), any
    /// sizes, `a_trans`/`b_trans` non-zero for transposed operands. Launch
    /// with `Grid::blocks([n.div_ceil(128), m.div_ceil(128), batch])`.
    sgemm_strided, f32, |w| w
);
strided_kernel!(
    /// [`sgemm_strided`] over `f16` operands, in `f32`: the fallback of
    /// [`matmul_f16_into`] (`SHADER_F16`).
    hgemm_strided, f16, |w| w.to_f32()
);

/// The `Vec4` kernel's row of outputs `i` (0..8) for thread row `ty`.
#[helper]
fn out_row(i: usize, ty: usize) -> usize {
    (i / 4) * 64 + ty * 4 + i % 4
}

/// `examples/sgemm.rs`'s `sgemm_vec4` over `f32` buffers: row-major
/// operands, `m`, `n` multiples of 128 and `k` of 16, the batch in
/// `block_id().z`. Launch with `Grid::blocks([n / 128, m / 128, batch])`.
#[kernel(workgroup_size = 256)]
pub fn sgemm_fast(a: &[f32], b: &[f32], c: &mut [f32], m: u32, k: u32, n: u32) {
    let a_tile = shared::<[Vec4; 512]>();
    let b_tile = shared::<[Vec4; 512]>();
    let (m, k, n) = (m as usize, k as usize, n as usize);
    let batch = block_id().z;
    let (a_off, b_off, c_off) = (batch * m * k, batch * k * n, batch * m * n);
    let t = thread_id().x;
    let (tx, ty) = (t % 16, t / 16);
    let row0 = block_id().y * 128;
    let col0 = block_id().x * 128;
    // Element offsets of this thread's four-float pieces: of `A`, piece
    // `t % 4` of rows `t / 4` and `64 + t / 4`; of `B`, piece `t % 32` of
    // rows `t / 32` and `8 + t / 32`.
    let a_at = a_off + (row0 + t / 4) * k + (t % 4) * 4;
    let b_at = b_off + (t / 32) * n + col0 + (t % 32) * 4;
    let mut acc = [[Vec4::ZERO; 2]; 8];
    let mut a_frag = [Vec4::ZERO; 8];
    let steps = k / 16;
    let mut a0 = Vec4::new(a[a_at], a[a_at + 1], a[a_at + 2], a[a_at + 3]);
    let a1_at = a_at + 64 * k;
    let mut a1 = Vec4::new(a[a1_at], a[a1_at + 1], a[a1_at + 2], a[a1_at + 3]);
    let mut b0n = Vec4::new(b[b_at], b[b_at + 1], b[b_at + 2], b[b_at + 3]);
    let b1_at = b_at + 8 * n;
    let mut b1n = Vec4::new(b[b1_at], b[b1_at + 1], b[b1_at + 2], b[b1_at + 3]);
    for step in 0..steps {
        a_tile[t] = a0;
        a_tile[t + 256] = a1;
        b_tile[t] = b0n;
        b_tile[t + 256] = b1n;
        workgroup_barrier();
        if step + 1 < steps {
            let pa = a_at + (step + 1) * 16;
            let pa1 = pa + 64 * k;
            let pb = b_at + (step + 1) * 16 * n;
            let pb1 = pb + 8 * n;
            a0 = Vec4::new(a[pa], a[pa + 1], a[pa + 2], a[pa + 3]);
            a1 = Vec4::new(a[pa1], a[pa1 + 1], a[pa1 + 2], a[pa1 + 3]);
            b0n = Vec4::new(b[pb], b[pb + 1], b[pb + 2], b[pb + 3]);
            b1n = Vec4::new(b[pb1], b[pb1 + 1], b[pb1 + 2], b[pb1 + 3]);
        }
        #[unroll]
        for q in 0..4 {
            #[unroll]
            for i in 0..8 {
                a_frag[i] = a_tile[out_row(i, ty) * 4 + q];
            }
            #[unroll]
            for kk in 0..4 {
                let j = q * 4 + kk;
                let b0 = b_tile[j * 32 + tx];
                let b1 = b_tile[j * 32 + 16 + tx];
                #[unroll]
                for i in 0..8 {
                    let x = Vec4::splat(a_frag[i][kk]);
                    acc[i][0] = x.mul_add(b0, acc[i][0]);
                    acc[i][1] = x.mul_add(b1, acc[i][1]);
                }
            }
        }
        workgroup_barrier();
    }
    #[unroll]
    for i in 0..8 {
        let at = c_off + (row0 + out_row(i, ty)) * n + col0 + tx * 4;
        let v0 = acc[i][0];
        let v1 = acc[i][1];
        c[at] = v0.x;
        c[at + 1] = v0.y;
        c[at + 2] = v0.z;
        c[at + 3] = v0.w;
        c[at + 64] = v1.x;
        c[at + 65] = v1.y;
        c[at + 66] = v1.z;
        c[at + 67] = v1.w;
    }
}

// ANCHOR: kernel4
/// `sgemm.rs`'s `sgemm_vec4` with its blocking as parameters (the one
/// tunable `Vec4` SGEMM: `examples/sgemm_tuned.rs` tunes it too), batched:
/// row-major operands read and written as `Vec4`s, a block computing `BM`
/// rows by `BNV`
/// `Vec4`s of `C` (threads `TX × TY`, each `TM` rows by `TNV` `Vec4`s,
/// staging `LA` and `LB` `Vec4`s of the tiles of `A` and `B` per step of
/// `BK = 4 × BKV`), the batch in `block_id().z`. `m` a multiple of `BM`,
/// `n` of `4 × BNV`, `k` of `BK`. Its loops over parameters are
/// `#[unroll]`: each specialisation is straight-line code over
/// registers. [`matmul_into`] picks the tile with the autotuner.
#[kernel(workgroup_size = (TX, TY), max_workgroup_invocations = 1024, max_shared_bytes = 32768)]
pub fn sgemm_tiled<
    const BM: usize,
    const BK: usize,
    const BNV: usize,
    const BKV: usize,
    const TM: usize,
    const TNV: usize,
    const TX: usize,
    const TY: usize,
    const LA: usize,
    const LB: usize,
>(
    a: &[Vec4],
    b: &[Vec4],
    c: &mut [Vec4],
    m: u32,
    k: u32,
    n: u32,
) {
    let a_tile = shared::<[[Vec4; BKV]; BM]>();
    let b_tile = shared::<[[Vec4; BNV]; BK]>();
    let (m, k4, n4) = (m as usize, k as usize / 4, n as usize / 4);
    let batch = block_id().z;
    let (a0, b0, c0) = (batch * m * k4, batch * k4 * 4 * n4, batch * m * n4);
    let (tx, ty) = (thread_id().x, thread_id().y);
    let t = ty * TX + tx;
    let row0 = block_id().y * BM;
    let col0 = block_id().x * BNV;

    let mut acc = [[Vec4::ZERO; TNV]; TM];
    let mut a_frag = [Vec4::ZERO; TM];
    let mut b_frag = [Vec4::ZERO; TNV];
    let mut a_next = [Vec4::ZERO; LA];
    let mut b_next = [Vec4::ZERO; LB];
    #[unroll]
    for s in 0..LA {
        let e = t + s * TX * TY;
        a_next[s] = a[a0 + (row0 + e / BKV) * k4 + e % BKV];
    }
    #[unroll]
    for s in 0..LB {
        let e = t + s * TX * TY;
        b_next[s] = b[b0 + (e / BNV) * n4 + col0 + e % BNV];
    }
    let steps = k4 * 4 / BK;
    for step in 0..steps {
        #[unroll]
        for s in 0..LA {
            let e = t + s * TX * TY;
            a_tile[e / BKV][e % BKV] = a_next[s];
        }
        #[unroll]
        for s in 0..LB {
            let e = t + s * TX * TY;
            b_tile[e / BNV][e % BNV] = b_next[s];
        }
        workgroup_barrier();
        if step + 1 < steps {
            let (da, db) = ((step + 1) * BKV, (step + 1) * BK * n4);
            #[unroll]
            for s in 0..LA {
                let e = t + s * TX * TY;
                a_next[s] = a[a0 + (row0 + e / BKV) * k4 + e % BKV + da];
            }
            #[unroll]
            for s in 0..LB {
                let e = t + s * TX * TY;
                b_next[s] = b[b0 + (e / BNV) * n4 + col0 + e % BNV + db];
            }
        }
        #[unroll]
        for q in 0..BKV {
            #[unroll]
            for i in 0..TM {
                a_frag[i] = a_tile[ty + i * TY][q];
            }
            #[unroll]
            for kk in 0..4 {
                #[unroll]
                for j in 0..TNV {
                    b_frag[j] = b_tile[q * 4 + kk][tx + j * TX];
                }
                #[unroll]
                for i in 0..TM {
                    let x = Vec4::splat(a_frag[i][kk]);
                    #[unroll]
                    for j in 0..TNV {
                        acc[i][j] = x.mul_add(b_frag[j], acc[i][j]);
                    }
                }
            }
        }
        workgroup_barrier();
    }
    #[unroll]
    for i in 0..TM {
        #[unroll]
        for j in 0..TNV {
            c[c0 + (row0 + ty + i * TY) * n4 + col0 + tx + j * TX] = acc[i][j];
        }
    }
}

// ANCHOR_END: kernel4

/// A tile of [`sgemm_tiled`]: `BM`, `BN` (columns of `C`), `BK`, `TM`,
/// `TNV`.
type Tile = [usize; 5];

/// The tiles the tuner times for [`sgemm_tiled`] (those that divide the
/// shape), named as in `examples/sgemm_tuned.rs`.
const TILES: [(&str, Tile); 6] = [
    ("v4_bm128_bn128_bk16_tm8_tn2", [128, 128, 16, 8, 2]),
    ("v4_bm128_bn128_bk8_tm8_tn2", [128, 128, 8, 8, 2]),
    ("v4_bm64_bn128_bk16_tm4_tn2", [64, 128, 16, 4, 2]),
    ("v4_bm128_bn64_bk16_tm8_tn2", [128, 64, 16, 8, 2]),
    ("v4_bm64_bn64_bk16_tm4_tn2", [64, 64, 16, 4, 2]),
    ("v4_bm32_bn64_bk16_tm4_tn2", [32, 64, 16, 4, 2]),
];

/// One launch of [`sgemm_tiled`] for `tile` (each tuple written out: const
/// generic arguments are part of the source).
fn launch_tiled(
    device: &Device,
    tile: Tile,
    (a, b, c): (&Buffer<Vec4>, &Buffer<Vec4>, &mut Buffer<Vec4>),
    s: Shape,
) -> Result<(), LaunchError> {
    let grid = Grid::blocks([s.n / tile[1], s.m / tile[0], s.batch]);
    let (m, k, n) = (s.m as u32, s.k as u32, s.n as u32);
    macro_rules! tuples {
        ($([$bm:literal, $bn:literal, $bk:literal, $tm:literal, $tn:literal]),*) => {
            match tile {
                $([$bm, $bn, $bk, $tm, $tn] => sgemm_tiled::launch::<
                    $bm, $bk, { $bn / 4 }, { $bk / 4 }, $tm, $tn,
                    { $bn / 4 / $tn }, { $bm / $tm },
                    { $bm * $bk / 4 / ($bn / 4 / $tn * ($bm / $tm)) },
                    { $bk * $bn / 4 / ($bn / 4 / $tn * ($bm / $tm)) },
                >(device, grid, a, b, c, m, k, n),)*
                other => Err(arg_error("tile", format!("no launch is written for {other:?}"))),
            }
        };
    }
    tuples!(
        [128, 128, 16, 8, 2],
        [128, 128, 8, 8, 2],
        [64, 128, 16, 4, 2],
        [128, 64, 16, 8, 2],
        [64, 64, 16, 4, 2],
        [32, 64, 16, 4, 2]
    )
}

/// `c = a × b` with the tuner's tile of [`sgemm_tiled`], if some tile
/// divides the shape and the buffers are GPU buffers: `Ok(false)` when not.
fn matmul_tiled(
    device: &Device,
    a: &Buffer<f32>,
    b: &Buffer<f32>,
    c: &mut Buffer<f32>,
    s: Shape,
) -> Result<bool, LaunchError> {
    let fits: Vec<(&str, Tile)> =
        TILES.iter().copied().filter(|(_, t)| s.m % t[0] == 0 && s.n % t[1] == 0 && s.k % t[2] == 0).collect();
    if fits.is_empty() || s.k == 0 {
        return Ok(false);
    }
    // The same memory seen as `Vec4`s (the tiled kernel reads and writes
    // them): borrowed views, so that a loop of products allocates nothing
    // and keeps the buffers' bind groups (a `Buffer::from_wgpu` handle's
    // drop takes them out of the bind cache). A tile that fits makes every
    // length a multiple of 4 (`check_shape`: exact lengths); on the CPU
    // executor there is no view and the caller runs another kernel.
    let (Ok(a4), Ok(b4), Ok(mut c4)) = (a.view_as::<Vec4>(), b.view_as::<Vec4>(), c.view_as_mut::<Vec4>()) else {
        return Ok(false);
    };
    let key = onekernel_runtime::tune::Key::new()
        .size("batch", s.batch)
        .size("m", s.m)
        .size("k", s.k)
        .size("n", s.n)
        .value("fits", fits.len());
    // The ops' tuner (`crate::tuning`: its mode, cache directory and
    // picks). One that cannot time (a product inside the caller's
    // `Device::time`, which cannot nest) leaves the first tile that fits;
    // a later product outside it tunes.
    let i = crate::tuning::choose(
        device,
        "ops::matmul",
        include_str!("matmul.rs"),
        &key,
        &fits,
        |&(_, tile), purpose| -> Result<Option<Vec<Vec4>>, LaunchError> {
            launch_tiled(device, tile, (&a4, &b4, &mut *c4), s)?;
            // Only the check reads the product back (compared with the
            // first tile's); the timed runs only launch.
            purpose.output(|| c4.read().map_err(|e| LaunchError::Gpu { kernel: "ops::matmul", message: e.to_string() }))
        },
        |a, b| a == b,
    );
    let tile = fits[i].1;
    launch_tiled(device, tile, (&a4, &b4, &mut *c4), s)?;
    Ok(true)
}

/// The matrix-tile kernel (see the [module](self) docs).
#[kernels]
pub mod tiles {
    use onekernel::prelude::*;
    use onekernel_runtime::tile::{mma, Accumulator, MatrixA, MatrixB};

    /// `c = a × b` on 16 × 16 `f16` tiles with `f32` accumulators: a block
    /// of 8 subgroups of 32 computes a 128 × 128 square of `C`, subgroup
    /// `s` rows `s / 2 * 32 ..` (two tiles) and columns `s % 2 * 64 ..`
    /// (four). Row-major operands, `m`, `n` multiples of 128, `k` of 16;
    /// the batch in `block_id().z`. Launch with
    /// `Grid::blocks([n / 128, m / 128, batch])`.
    #[kernel(workgroup_size = 256)]
    pub fn hgemm_tiles(a: &[f16], b: &[f16], c: &mut [f32], m: u32, k: u32, n: u32) {
        let (m, k, n) = (m as usize, k as usize, n as usize);
        let batch = block_id().z;
        let (a_off, b_off, c_off) = (batch * m * k, batch * k * n, batch * m * n);
        let s = thread_id().x / 32;
        let row = block_id().y * 128 + s / 2 * 32;
        let col = block_id().x * 128 + s % 2 * 64;
        let mut acc = [Accumulator::<f32, 16, 16>::zeros(); 8];
        let mut kk = 0;
        while kk < k {
            let b0 = MatrixB::<16, 16>::load(&b, b_off + kk * n + col, n);
            let b1 = MatrixB::<16, 16>::load(&b, b_off + kk * n + col + 16, n);
            let b2 = MatrixB::<16, 16>::load(&b, b_off + kk * n + col + 32, n);
            let b3 = MatrixB::<16, 16>::load(&b, b_off + kk * n + col + 48, n);
            #[unroll]
            for i in 0..2 {
                let ta = MatrixA::<16, 16>::load(&a, a_off + (row + i * 16) * k + kk, k);
                acc[i * 4] = mma(ta, b0, acc[i * 4]);
                acc[i * 4 + 1] = mma(ta, b1, acc[i * 4 + 1]);
                acc[i * 4 + 2] = mma(ta, b2, acc[i * 4 + 2]);
                acc[i * 4 + 3] = mma(ta, b3, acc[i * 4 + 3]);
            }
            kk += 16;
        }
        #[unroll]
        for i in 0..2 {
            #[unroll]
            for j in 0..4 {
                acc[i * 4 + j].store(&mut c, c_off + (row + i * 16) * n + col + j * 16, n);
            }
        }
    }
}

pub use tiles::hgemm_tiles;

/// The op's name in errors.
const OP: &str = "ops::matmul";

fn arg_error(arg: &'static str, problem: String) -> LaunchError {
    LaunchError::InvalidArgument { kernel: OP, arg, problem }
}

fn check_shape(a: usize, b: usize, c: usize, s: Shape) -> Result<(), LaunchError> {
    let want = |arg: &'static str, len: usize, rows: usize, cols: usize| {
        if len == s.batch * rows * cols {
            Ok(())
        } else {
            Err(arg_error(arg, format!("has {len} elements, not {} × {rows} × {cols}", s.batch)))
        }
    };
    want("a", a, s.m, s.k)?;
    want("b", b, s.k, s.n)?;
    want("c", c, s.m, s.n)?;
    if s.m.max(s.n).div_ceil(128) > 65535 || s.batch > 65535 {
        return Err(arg_error("shape", format!("{s:?} needs more than 65535 blocks along an axis")));
    }
    Ok(())
}

/// Whether `device` runs [`hgemm_tiles`]: cooperative matrices with
/// 16 × 16 × 16 `f16` products accumulating in `f32`, and subgroups of 32.
pub fn has_tiles(device: &Device) -> bool {
    if !device.is_gpu() {
        return false;
    }
    let sizes_ok = device.subgroup_sizes().is_some_and(|(lo, hi)| lo == 32 && hi == 32);
    let f = device.features();
    sizes_ok
        && f.contains(Features::COOPERATIVE_MATRIX)
        && f.contains(Features::F16)
        && device.cooperative_matrix_properties().iter().any(|p| {
            p.m_size == 16
                && p.n_size == 16
                && p.k_size == 16
                && p.ab_type == wgpu::CooperativeScalarType::F16
                && p.cr_type == wgpu::CooperativeScalarType::F32
        })
}

use onekernel_runtime::wgpu;

/// `c = a × b` for each matrix of the batch, `f32`, any shape, operands in
/// either layout. No allocation.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::matmul::{matmul_into, Layout, Shape};
/// let device = Device::cpu();
/// let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0, 4.0])?; // [[1, 2], [3, 4]]
/// let b = Buffer::from_slice(&device, &[1.0f32, 0.0, 1.0, 1.0])?; // stored as bᵀ
/// let mut c = Buffer::<f32>::zeroed(&device, 4)?;
/// matmul_into(&device, &a, Layout::RowMajor, &b, Layout::Transposed, &mut c, Shape::new(2, 2, 2))?;
/// assert_eq!(c.read()?, [1.0, 3.0, 3.0, 7.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// `LaunchError::InvalidArgument` naming `ops::matmul` and the buffer
/// whose length is not `batch × rows × cols`; a launch's error.
pub fn matmul_into(
    device: &Device,
    a: &Buffer<f32>,
    a_layout: Layout,
    b: &Buffer<f32>,
    b_layout: Layout,
    c: &mut Buffer<f32>,
    shape: Shape,
) -> Result<(), LaunchError> {
    matmul_with(device, a, a_layout, b, b_layout, c, shape, false)
}

/// [`matmul_into`], with `kernels_on_cpu` to run the kernels on the CPU
/// executor instead of the plain-Rust product (for tests).
#[allow(clippy::too_many_arguments)]
pub fn matmul_with(
    device: &Device,
    a: &Buffer<f32>,
    a_layout: Layout,
    b: &Buffer<f32>,
    b_layout: Layout,
    c: &mut Buffer<f32>,
    shape: Shape,
    kernels_on_cpu: bool,
) -> Result<(), LaunchError> {
    check_shape(a.len(), b.len(), c.len(), shape)?;
    let Shape { batch, m, k, n } = shape;
    if c.is_empty() {
        return Ok(());
    }
    if k == 0 && (device.is_gpu() || kernels_on_cpu) {
        // Empty sums (and no empty operands bound).
        return crate::fill::fill_kernel::launch::<f32>(device, Grid::threads(c.len()), c, 0.0);
    }
    let (at, bt) = (a_layout == Layout::Transposed, b_layout == Layout::Transposed);
    if !device.is_gpu() && !kernels_on_cpu {
        let (a, b) = (crate::reduce::host_data(OP, a)?, crate::reduce::host_data(OP, b)?);
        cpu_product(a, at, b, bt, shape, crate::reduce::host_data_mut(OP, c)?);
        return Ok(());
    }
    if !at && !bt && device.is_gpu() && matmul_tiled(device, a, b, c, shape)? {
        return Ok(());
    }
    let (m32, k32, n32) = (m as u32, k as u32, n as u32);
    if !at && !bt && m % 128 == 0 && n % 128 == 0 && k % 16 == 0 && k > 0 {
        let grid = Grid::blocks([n / 128, m / 128, batch]);
        return sgemm_fast::launch(device, grid, a, b, c, m32, k32, n32);
    }
    let grid = Grid::blocks([n.div_ceil(128), m.div_ceil(128), batch]);
    sgemm_strided::launch(device, grid, a, b, c, m32, k32, n32, u32::from(at), u32::from(bt))
}

/// `c = a × b` in a new buffer (see [`matmul_into`]).
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::matmul::{matmul, Layout, Shape};
/// let device = Device::cpu();
/// let a = Buffer::from_slice(&device, &[1.0f32, 2.0, 3.0])?; // 1 × 3
/// let b = Buffer::from_slice(&device, &[4.0f32, 5.0, 6.0])?; // 3 × 1
/// let c = matmul(&device, &a, Layout::RowMajor, &b, Layout::RowMajor, Shape::new(1, 3, 1))?;
/// assert_eq!(c.read()?, [32.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn matmul(
    device: &Device,
    a: &Buffer<f32>,
    a_layout: Layout,
    b: &Buffer<f32>,
    b_layout: Layout,
    shape: Shape,
) -> Result<Buffer<f32>, OpError> {
    let mut c = Buffer::zeroed(device, shape.batch * shape.m * shape.n)?;
    matmul_into(device, a, a_layout, b, b_layout, &mut c, shape)?;
    Ok(c)
}

/// `c = a × b` for row-major `f16` operands, `f32` accumulation and
/// result: on matrix tiles where [`has_tiles`] and the shape fits (`m`,
/// `n` multiples of 128, `k` of 16), else `hgemm_strided` (needs
/// `SHADER_F16`), and plain Rust on the CPU executor. No allocation.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::matmul::{matmul_f16_into, Shape};
/// let device = Device::cpu();
/// let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
/// let a = Buffer::from_slice(&device, &h(&[1.0, 2.0, 3.0, 4.0]))?;
/// let b = Buffer::from_slice(&device, &h(&[0.5, 0.0, 0.0, 0.5]))?;
/// let mut c = Buffer::<f32>::zeroed(&device, 4)?;
/// matmul_f16_into(&device, &a, &b, &mut c, Shape::new(2, 2, 2))?;
/// assert_eq!(c.read()?, [0.5, 1.0, 1.5, 2.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn matmul_f16_into(
    device: &Device,
    a: &Buffer<f16>,
    b: &Buffer<f16>,
    c: &mut Buffer<f32>,
    shape: Shape,
) -> Result<(), LaunchError> {
    matmul_f16_with(device, a, b, c, shape, false)
}

/// [`matmul_f16_into`], with `kernels_on_cpu` to run the kernels (the
/// fallback `hgemm_strided`) on the CPU executor (for tests).
pub fn matmul_f16_with(
    device: &Device,
    a: &Buffer<f16>,
    b: &Buffer<f16>,
    c: &mut Buffer<f32>,
    shape: Shape,
    kernels_on_cpu: bool,
) -> Result<(), LaunchError> {
    check_shape(a.len(), b.len(), c.len(), shape)?;
    let Shape { batch, m, k, n } = shape;
    if c.is_empty() {
        return Ok(());
    }
    if k == 0 && (device.is_gpu() || kernels_on_cpu) {
        // Empty sums (and no empty operands bound).
        return crate::fill::fill_kernel::launch::<f32>(device, Grid::threads(c.len()), c, 0.0);
    }
    if !device.is_gpu() && !kernels_on_cpu {
        let wide = |v: &[f16]| v.iter().map(|x| x.to_f32()).collect::<Vec<_>>();
        let (a, b) = (wide(crate::reduce::host_data(OP, a)?), wide(crate::reduce::host_data(OP, b)?));
        cpu_product(&a, false, &b, false, shape, crate::reduce::host_data_mut(OP, c)?);
        return Ok(());
    }
    let (m32, k32, n32) = (m as u32, k as u32, n as u32);
    if m % 128 == 0 && n % 128 == 0 && k % 16 == 0 && k > 0 && has_tiles(device) {
        let grid = Grid::blocks([n / 128, m / 128, batch]);
        return hgemm_tiles::launch(device, grid, a, b, c, m32, k32, n32);
    }
    let grid = Grid::blocks([n.div_ceil(128), m.div_ceil(128), batch]);
    hgemm_strided::launch(device, grid, a, b, c, m32, k32, n32, 0, 0)
}

/// The product on the CPU, into `c` (the CPU executor's buffer, in
/// place): rows of `C` in parallel, each an `i-k-j` loop (the inner loop
/// over a row of `B`, which LLVM vectorises), `f32` sums in the kernels'
/// order along `k`. A multiply then an add, where the kernels fuse them
/// (`fma`): the last bit of a sum can differ from the GPU's (exact sums
/// agree). `f32::mul_add` would match it, but on a CPU built without FMA
/// (the default x86-64 target) it is a libm call per term: the product
/// ran 25× slower than this loop.
fn cpu_product(a: &[f32], at: bool, b: &[f32], bt: bool, s: Shape, c: &mut [f32]) {
    let Shape { batch, m, k, n } = s;
    // `B` row-major for the inner loop.
    let transposed: Vec<f32>;
    let b_rows: &[f32] = if bt {
        let mut t = vec![0.0f32; b.len()];
        for p in 0..batch {
            for j in 0..k {
                for col in 0..n {
                    t[p * k * n + j * n + col] = b[p * k * n + col * k + j];
                }
            }
        }
        transposed = t;
        &transposed
    } else {
        b
    };
    c.par_chunks_mut(n).enumerate().for_each(|(row, out)| {
        out.fill(0.0);
        let (p, r) = (row / m, row % m);
        let bp = &b_rows[p * k * n..(p + 1) * k * n];
        for j in 0..k {
            let x = if at { a[p * m * k + j * m + r] } else { a[p * m * k + r * k + j] };
            for (o, &y) in out.iter_mut().zip(&bp[j * n..(j + 1) * n]) {
                *o += x * y;
            }
        }
    });
}
