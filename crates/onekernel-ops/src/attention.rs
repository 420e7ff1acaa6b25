//! Fused attention (flash-attention style): `out = softmax(q·kᵀ·scale
//! [+ causal mask])·v` in one pass over the keys, without writing the
//! `seq_q × seq_kv` score matrix to memory. `f16` in and out, `f32` sums.
//!
//! Layouts (row-major): `q` and `out` are `[batch, heads, seq_q,
//! head_dim]`; `k` and `v` are `[batch, heads, kv_capacity, head_dim]` of
//! which the first `seq_kv` rows of each head are used (a key/value cache
//! used in place). With `causal`, `seq_q ≤ seq_kv` and query `i` sits at
//! position `seq_kv - seq_q + i`: it sees the keys up to that position
//! (decode is `seq_q = 1`: the new token sees the whole cache).
//!
//! # How it works
//!
//! Each kernel walks over the keys with an *online softmax*: per query
//! row it keeps the largest score seen so far `m` and the sum `l` of
//! `exp(score - m)`, and adds `exp(score - m)·v` into the output
//! accumulator, so a block of scores lives only in shared memory. Which
//! kernel runs is chosen per call ([`AttentionKernel::Auto`]):
//!
//! - **Tiles** (`flash_*` and `blk*`, head dimensions 64 and 128, devices with
//!   16 × 16 × 16 `f16` → `f32` matrix tiles: tensor cores): a block of
//!   four subgroups owns 64 query rows of one (batch, head); each subgroup
//!   keeps its 16 rows of `q` in tiles and its output in accumulator tiles
//!   for the whole walk. Per step of `BC` keys: `S = Q·Kᵀ` on tiles, the
//!   scores through shared memory to the softmax (a tile has no per-row
//!   access), the probabilities back as `f16` tiles, `O += P·V` on tiles.
//!   `K` of the next step and `V` of this one are copied into shared
//!   memory from registers loaded a step ahead, so a step has two
//!   barriers. An accumulator tile cannot be scaled row by row, so the
//!   kernel keeps a row's reference maximum until the row's maximum grows
//!   past it by `2^8` (the probabilities stay below 256: exact enough in
//!   `f16`) and only then rescales the output through shared memory:
//!   rarely, and the block decides together.
//!
//!   Above 64 query rows the tile path runs the block kernels
//!   (`blk_d64`, `blk2_d128`; [`tile_variant`]): eight subgroups, 128
//!   query rows a block, so that each tile loaded from shared memory
//!   feeds more products. For `S = Q·Kᵀ` a subgroup owns 32 rows × 16 keys
//!   (its `Q` tiles in registers; each `K` tile feeds two products); the
//!   block's 128 × 32 scores go through shared memory to the softmax (two
//!   threads a row, `P` written back as `F16Vec4`s); for `O += P·V` a
//!   subgroup owns 32 rows × `D / 2` columns (per key tile 2 `P` and
//!   `D / 32` `V` loads for `D / 16` products). `blk2_*` stores the scores
//!   row-major (a thread's 16 scores contiguous) and skips the mask where
//!   all of a thread's keys are visible.
//! - **Simple** (`attention_simple`, any head dimension that is a multiple
//!   of 4 up to 128, every device): one thread per query row, its query
//!   and output in registers, keys and values read straight from memory
//!   (the threads of a block read the same row at once), no barriers. The fallback where there are no matrix tiles (lavapipe,
//!   WebGPU) and the CPU executor's choice (it runs plain loops fastest).
//! - **Decode** (`decode_part` + `decode_combine`, for `seq_q ≤ 4`): one
//!   block per (query row, chunk of 256 keys) computes the chunk's
//!   partial softmax (`m`, `l` and the unnormalised output) with all 64 of
//!   its threads, and a second kernel combines the chunks: the keys are
//!   split over blocks, since one query row is too little work for one.
//!
//! All three are checked against an `f64` reference on the CPU executor
//! (which runs matrix tiles exactly) and on the GPU.

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::abi::Features;
use onekernel_runtime::F16Vec4;

/// The shape of one attention call; see the [module](self) for layouts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionShape {
    /// Independent sequences.
    pub batch: u32,
    /// Heads per sequence.
    pub heads: u32,
    /// Query rows per head (1 in decode).
    pub seq_q: u32,
    /// Key/value rows per head that take part.
    pub seq_kv: u32,
    /// Key/value rows per head in `k` and `v` (at least `seq_kv`).
    pub kv_capacity: u32,
    /// Features per row: a multiple of 4 up to 128 (64 and 128 run on
    /// matrix tiles).
    pub head_dim: u32,
    /// Whether query `i` sees only the keys up to position `seq_kv - seq_q + i`.
    pub causal: bool,
    /// The factor of the scores, usually `1 / sqrt(head_dim)`.
    pub scale: f32,
}

impl AttentionShape {
    /// Floating-point operations as flash attention counts them: two
    /// products of `seq_q · seq_kv · head_dim` multiply-adds per head,
    /// about half of them under a causal mask with `seq_q = seq_kv`.
    pub fn flops(&self) -> f64 {
        let (q, kv) = (f64::from(self.seq_q), f64::from(self.seq_kv));
        let pairs = if self.causal { q * kv - q * (q - 1.0) / 2.0 } else { q * kv };
        4.0 * f64::from(self.batch) * f64::from(self.heads) * pairs * f64::from(self.head_dim)
    }
}

/// Which kernel [`attention_with`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AttentionKernel {
    /// [`AttentionKernel::Decode`] for `seq_q ≤ 4`, else
    /// [`AttentionKernel::Tiles`] where the GPU has 16 × 16 × 16 `f16`
    /// tiles and `head_dim` is 64 or 128, else [`AttentionKernel::Simple`].
    #[default]
    Auto,
    /// Matrix tiles (tensor cores), `head_dim` 64 or 128.
    Tiles,
    /// One thread per query row, no tiles.
    Simple,
    /// Keys split over blocks, then combined: for a few query rows.
    Decode,
    /// A tile kernel by its variant name (`"flash_d64"`, `"v1_d64"`, ...):
    /// for benchmarks comparing them; see [`TILE_VARIANTS`].
    #[doc(hidden)]
    Variant(&'static str),
}

/// `out = softmax(q·kᵀ·scale [+ causal mask])·v`, the kernel chosen for
/// the device and shape ([`AttentionKernel::Auto`]). Shapes and layouts:
/// [`AttentionShape`] and the [module](self).
///
/// ```
/// use onekernel::ops::attention::{attention, AttentionShape};
/// use onekernel::{half::f16, Buffer, Device};
/// let device = Device::cpu();
/// let shape = AttentionShape {
///     batch: 1, heads: 1, seq_q: 2, seq_kv: 2, kv_capacity: 2, head_dim: 4, causal: true, scale: 0.5,
/// };
/// let h = |x: f32| f16::from_f32(x);
/// let q = Buffer::from_slice(&device, &[h(1.0); 8])?;
/// let k = Buffer::from_slice(&device, &[h(0.0); 8])?;
/// let v = Buffer::from_slice(&device, &[h(1.0), h(2.0), h(3.0), h(4.0), h(3.0), h(4.0), h(5.0), h(6.0)])?;
/// let mut out = Buffer::<f16>::zeroed(&device, 8)?;
/// attention(&device, &q, &k, &v, &mut out, &shape)?;
/// // Row 0 sees key 0 only; row 1 both keys, with equal scores.
/// assert_eq!(out.read()?.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0, 2.0, 3.0, 4.0, 5.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`OpError::Launch`] with `LaunchError::InvalidArgument` naming
/// `ops::attention` and the argument when a size is zero, `head_dim` is
/// not a multiple of 4 up to 128, `seq_kv > kv_capacity`, a causal
/// `seq_q > seq_kv`, `scale` is not finite, or a buffer's length does not
/// match the shape; launch and buffer errors otherwise.
pub fn attention(
    device: &Device,
    q: &Buffer<f16>,
    k: &Buffer<f16>,
    v: &Buffer<f16>,
    out: &mut Buffer<f16>,
    shape: &AttentionShape,
) -> Result<(), OpError> {
    attention_with(device, q, k, v, out, shape, AttentionKernel::Auto)
}

/// [`attention`] with the kernel named: the tests run every kernel on
/// every device. [`AttentionKernel::Tiles`] on a GPU without matrix tiles
/// is an `Err` (`LaunchError::MissingFeature` or `UnsupportedTileShape`),
/// and with a `head_dim` other than 64 or 128 an `InvalidArgument`.
///
/// # Errors
/// Those of [`attention`].
pub fn attention_with(
    device: &Device,
    q: &Buffer<f16>,
    k: &Buffer<f16>,
    v: &Buffer<f16>,
    out: &mut Buffer<f16>,
    shape: &AttentionShape,
    kernel: AttentionKernel,
) -> Result<(), OpError> {
    check(q, k, v, out, shape)?;
    let kernel = match kernel {
        AttentionKernel::Auto => choose(device, shape),
        AttentionKernel::Tiles if !matches!(shape.head_dim, 64 | 128) => {
            let problem = format!("the tile kernel takes head dimensions 64 and 128, not {}", shape.head_dim);
            return Err(arg_error("head_dim", problem).into());
        }
        other => other,
    };
    // The kernels read four features at a time: the buffers seen as
    // `F16Vec4`s (`check` made every length a multiple of 4).
    let (qv, kv, vv) = (Vec4s::of(device, q)?, Vec4s::of(device, k)?, Vec4s::of(device, v)?);
    let mut ov = Vec4sMut::of(device, out)?;
    match kernel {
        AttentionKernel::Decode => decode(device, &qv, &kv, &vv, &mut ov, shape)?,
        AttentionKernel::Simple => simple(device, &qv, &kv, &vv, &mut ov, shape)?,
        AttentionKernel::Tiles => tiles(device, tile_variant(shape), &qv, &kv, &vv, &mut ov, shape)?,
        AttentionKernel::Variant(name) => tiles(device, name, &qv, &kv, &vv, &mut ov, shape)?,
        AttentionKernel::Auto => unreachable!("chosen above"),
    }
    ov.finish()
}

/// The kernel [`AttentionKernel::Auto`] picks for `shape` on `device`.
pub fn choose(device: &Device, shape: &AttentionShape) -> AttentionKernel {
    if shape.seq_q <= DECODE_ROWS && decode_fits(shape) {
        AttentionKernel::Decode
    } else if device.is_gpu() && matches!(shape.head_dim, 64 | 128) && has_tiles(device) {
        AttentionKernel::Tiles
    } else {
        AttentionKernel::Simple
    }
}

/// Query rows up to which [`AttentionKernel::Auto`] takes the decode kernel.
const DECODE_ROWS: u32 = 4;
/// Keys per block of the decode kernel.
const CHUNK: u32 = 256;
/// The most blocks per grid dimension every device launches.
const MAX_BLOCKS: u32 = 65535;

fn decode_fits(shape: &AttentionShape) -> bool {
    let rows = u64::from(shape.batch) * u64::from(shape.heads) * u64::from(shape.seq_q);
    rows <= u64::from(MAX_BLOCKS) && shape.seq_kv.div_ceil(CHUNK) <= MAX_BLOCKS
}

/// Whether `device` multiplies 16 × 16 × 16 `f16` tiles into `f32` (the
/// CPU executor runs any tile).
pub fn has_tiles(device: &Device) -> bool {
    use onekernel_runtime::wgpu::CooperativeScalarType as S;
    device.features().contains(Features::COOPERATIVE_MATRIX)
        && (!device.is_gpu()
            || device
                .cooperative_matrix_properties()
                .iter()
                .any(|p| (p.m_size, p.n_size, p.k_size) == (16, 16, 16) && p.ab_type == S::F16 && p.cr_type == S::F32))
}

fn arg_error(arg: &'static str, problem: String) -> LaunchError {
    LaunchError::InvalidArgument { kernel: "ops::attention", arg, problem }
}

fn check(
    q: &Buffer<f16>,
    k: &Buffer<f16>,
    v: &Buffer<f16>,
    out: &Buffer<f16>,
    s: &AttentionShape,
) -> Result<(), LaunchError> {
    for (arg, value) in [("batch", s.batch), ("heads", s.heads), ("seq_q", s.seq_q), ("seq_kv", s.seq_kv)] {
        if value == 0 {
            return Err(arg_error(arg, format!("{arg} is 0: attention needs at least one")));
        }
    }
    if s.head_dim == 0 || !s.head_dim.is_multiple_of(4) || s.head_dim > 128 {
        return Err(arg_error("head_dim", format!("head_dim {} is not a multiple of 4 from 4 to 128", s.head_dim)));
    }
    if s.seq_kv > s.kv_capacity {
        return Err(arg_error("seq_kv", format!("seq_kv {} is past kv_capacity {}", s.seq_kv, s.kv_capacity)));
    }
    if s.causal && s.seq_q > s.seq_kv {
        let problem = format!(
            "a causal seq_q ({}) must not exceed seq_kv ({}): query i sits at position seq_kv - seq_q + i",
            s.seq_q, s.seq_kv
        );
        return Err(arg_error("seq_q", problem));
    }
    if !s.scale.is_finite() {
        return Err(arg_error("scale", format!("scale {} is not finite", s.scale)));
    }
    let heads = u64::from(s.batch) * u64::from(s.heads) * u64::from(s.head_dim);
    let want_q = heads * u64::from(s.seq_q);
    let want_kv = heads * u64::from(s.kv_capacity);
    for (arg, len, want, dims) in [
        ("q", q.len(), want_q, "[batch, heads, seq_q, head_dim]"),
        ("k", k.len(), want_kv, "[batch, heads, kv_capacity, head_dim]"),
        ("v", v.len(), want_kv, "[batch, heads, kv_capacity, head_dim]"),
        ("out", out.len(), want_q, "[batch, heads, seq_q, head_dim]"),
    ] {
        if len as u64 != want {
            return Err(arg_error(arg, format!("{arg} holds {len} values, not the {want} of {dims}")));
        }
    }
    // Offsets are `u32` in the kernels (in vectors of four).
    if want_kv.max(want_q) / 4 > u64::from(u32::MAX) {
        return Err(arg_error("kv_capacity", "the tensors have more than 2^32 vectors of four values".into()));
    }
    Ok(())
}

/// An `f16` buffer (of a multiple of 4 values) seen as `F16Vec4`s: on a
/// GPU a borrowed view of the same memory (no copy, and a loop of calls
/// keeps its bind groups, which a `Buffer::from_wgpu` handle's drop would
/// take out of the bind cache); on the CPU executor, which has no views, a
/// copy.
enum Vec4s<'a> {
    View(onekernel_runtime::BufferView<'a, F16Vec4>),
    Copy(Buffer<F16Vec4>),
}

impl<'a> Vec4s<'a> {
    fn of(device: &Device, buf: &'a Buffer<f16>) -> Result<Self, OpError> {
        Ok(if device.is_gpu() {
            Vec4s::View(buf.view_as()?)
        } else {
            Vec4s::Copy(Buffer::from_pod_slice(device, &buf.read()?)?)
        })
    }
}

impl std::ops::Deref for Vec4s<'_> {
    type Target = Buffer<F16Vec4>;
    fn deref(&self) -> &Buffer<F16Vec4> {
        match self {
            Vec4s::View(v) => v,
            Vec4s::Copy(b) => b,
        }
    }
}

/// [`Vec4s`], written: on the CPU executor [`Vec4sMut::finish`] copies the
/// kernel's output back into the buffer.
enum Vec4sMut<'a> {
    View(onekernel_runtime::BufferViewMut<'a, F16Vec4>),
    Copy(Buffer<F16Vec4>, &'a mut Buffer<f16>),
}

impl<'a> Vec4sMut<'a> {
    fn of(device: &Device, buf: &'a mut Buffer<f16>) -> Result<Self, OpError> {
        if device.is_gpu() {
            return Ok(Vec4sMut::View(buf.view_as_mut()?));
        }
        let copy = Buffer::from_pod_slice(device, &buf.read()?)?;
        Ok(Vec4sMut::Copy(copy, buf))
    }

    fn finish(self) -> Result<(), OpError> {
        if let Vec4sMut::Copy(copy, buf) = self {
            buf.write(bytemuck::cast_slice(&copy.read()?))?;
        }
        Ok(())
    }
}

impl std::ops::Deref for Vec4sMut<'_> {
    type Target = Buffer<F16Vec4>;
    fn deref(&self) -> &Buffer<F16Vec4> {
        match self {
            Vec4sMut::View(v) => v,
            Vec4sMut::Copy(b, _) => b,
        }
    }
}

impl std::ops::DerefMut for Vec4sMut<'_> {
    fn deref_mut(&mut self) -> &mut Buffer<F16Vec4> {
        match self {
            Vec4sMut::View(v) => v,
            Vec4sMut::Copy(b, _) => b,
        }
    }
}

/// The numbers every kernel takes: `[seq_q, seq_kv, kv_capacity, offset,
/// causal]` (offset: the position of query 0).
fn sizes(s: &AttentionShape) -> [u32; 5] {
    [s.seq_q, s.seq_kv, s.kv_capacity, s.seq_kv.saturating_sub(s.seq_q), u32::from(s.causal)]
}

fn scale_log2(s: &AttentionShape) -> f32 {
    s.scale * std::f32::consts::LOG2_E
}

fn simple(
    device: &Device,
    q: &Buffer<F16Vec4>,
    k: &Buffer<F16Vec4>,
    v: &Buffer<F16Vec4>,
    o: &mut Buffer<F16Vec4>,
    s: &AttentionShape,
) -> Result<(), LaunchError> {
    let grid = Grid::blocks([s.seq_q.div_ceil(64) as usize, (s.batch * s.heads) as usize]);
    let sz = sizes(s);
    simple::attention_simple::launch(
        device,
        grid,
        q,
        k,
        v,
        o,
        sz[0],
        sz[1],
        sz[2],
        sz[3],
        sz[4],
        s.head_dim,
        scale_log2(s),
    )
}

fn decode(
    device: &Device,
    q: &Buffer<F16Vec4>,
    k: &Buffer<F16Vec4>,
    v: &Buffer<F16Vec4>,
    o: &mut Buffer<F16Vec4>,
    s: &AttentionShape,
) -> Result<(), OpError> {
    let rows = s.batch * s.heads * s.seq_q;
    let chunks = s.seq_kv.div_ceil(CHUNK);
    let dv = s.head_dim / 4;
    let mut part = Buffer::<Vec4>::zeroed(device, (rows * chunks * (dv + 1)) as usize)?;
    let grid = Grid::blocks([chunks as usize, rows as usize]);
    let sz = sizes(s);
    decode::decode_part::launch(
        device,
        grid,
        q,
        k,
        v,
        &mut part,
        sz[0],
        sz[1],
        sz[2],
        sz[3],
        sz[4],
        s.head_dim,
        scale_log2(s),
        chunks,
    )?;
    decode::decode_combine::launch(device, Grid::blocks(rows as usize), &part, o, s.head_dim, chunks)?;
    Ok(())
}

/// The tile kernel variants by name: `flash_d64`, `flash_d128` (64 query
/// rows a block, what [`AttentionKernel::Tiles`] runs for short query
/// sequences), `blk_d64` and `blk2_d128` (128 rows a block, for long ones;
/// see [`tile_variant`]). The variants measured and dropped on the way
/// (`blk_d128`, `blk2_d64`, more subgroups, `Q` from shared memory, no
/// prefetch, four-subgroup blocks, and the profiling variants without the
/// softmax or `P·V`) are in docs/performance.md, "Fused attention, fifth
/// session".
pub const TILE_VARIANTS: [&str; 4] = ["flash_d64", "flash_d128", "blk_d64", "blk2_d128"];

/// The tile kernel [`AttentionKernel::Tiles`] runs at `shape` (head
/// dimension 64 or 128): the block kernels of 128 query rows (`blk2_d128`,
/// `blk_d64`: the fastest on the H200, docs/performance.md, "Fused
/// attention, fifth session") when there are more than 64 query rows, else
/// `flash_d64`/`flash_d128` (64 rows a block: less idle work on short
/// sequences).
pub fn tile_variant(shape: &AttentionShape) -> &'static str {
    match (shape.head_dim == 64, shape.seq_q > 64) {
        (true, true) => "blk_d64",
        (true, false) => "flash_d64",
        (false, true) => "blk2_d128",
        (false, false) => "flash_d128",
    }
}

fn tiles(
    device: &Device,
    variant: &str,
    q: &Buffer<F16Vec4>,
    k: &Buffer<F16Vec4>,
    v: &Buffer<F16Vec4>,
    o: &mut Buffer<F16Vec4>,
    s: &AttentionShape,
) -> Result<(), LaunchError> {
    let bh = (s.batch * s.heads) as usize;
    let (sz, sl) = (sizes(s), scale_log2(s));
    let want = if variant.ends_with("_d64") { 64 } else { 128 };
    if s.head_dim != want {
        return Err(arg_error(
            "head_dim",
            format!("the tile kernel {variant} takes head_dim {want}, not {}", s.head_dim),
        ));
    }
    let rows = |br: u32| Grid::blocks([s.seq_q.div_ceil(br) as usize, bh]);
    // One arm per variant, from the list that `TILE_VARIANTS` names.
    macro_rules! launch {
        ($($name:ident),*) => {
            match variant {
                $(stringify!($name) => $name::$name::launch(
                    device,
                    rows($name::BR as u32),
                    q,
                    k,
                    v,
                    o,
                    sz[0],
                    sz[1],
                    sz[2],
                    sz[3],
                    sz[4],
                    sl,
                ),)*
                other => Err(arg_error("kernel", format!("no tile kernel variant `{other}` (see TILE_VARIANTS)"))),
            }
        };
    }
    launch!(flash_d64, flash_d128, blk_d64, blk2_d128)
}

/// One tile kernel: head dimension `D`, `NSG` subgroups of 32 threads
/// (16 query rows each), `BC` keys per step; `KVR` rows of `K`/`V`/`Q`
/// staging (the larger of `2 BC` and the `16 NSG` query rows) and the
/// workgroup size `NT = 32 NSG` as literals; `QREG`: `Q`'s tiles in
/// registers for the whole walk (else loaded from shared memory at every
/// step, `QSR` rows of it, fewer registers); `PREFETCH`: the next step's
/// `K` and `V` loaded into registers a step ahead (else loaded after the
/// scores' barrier and stored before the softmax's, fewer registers). A
/// module per variant, as tiles and register arrays need their sizes as
/// constants.
macro_rules! flash_kernel {
    ($module:ident, $d:tt, $nsg:tt, $bc:tt, $kvr:tt, $nt:tt, $qreg:tt, $pf:tt, $qsr:tt) => {
        #[kernels]
        pub mod $module {
            use onekernel::prelude::*;
            use onekernel_runtime::half::f16;
            use onekernel_runtime::tile::{mma, Accumulator, MatrixA, MatrixB};
            use onekernel_runtime::F16Vec4;

            /// The head dimension.
            pub const D: usize = $d;
            /// Subgroups per block.
            const NSG: usize = $nsg;
            /// Threads per block.
            const NT: usize = $nt;
            /// Query rows per block: 16 per subgroup.
            pub const BR: usize = 16 * NSG;
            /// Keys per step.
            const BC: usize = $bc;
            /// Rows of the staging array: `K` (rows `0..BC`) and `V` (rows
            /// `BC..2 BC`) of a step, `Q`'s `BR` rows before the walk.
            const KVR: usize = $kvr;
            /// The side of a tensor-core tile.
            const T: usize = 16;
            /// `f16` values per `F16Vec4`.
            const L: usize = 4;
            /// A staged row in vectors: `D / 4` and two of padding (so that
            /// the 16 rows a tile load reads start in different banks; 16
            /// bytes of padding keep every row 16-byte aligned).
            const KS: usize = D / L + 2;
            /// Tiles across a row of `Q`, `K`, `V` or `O`.
            const DT: usize = D / T;
            /// Key tiles per step.
            const CT: usize = BC / T;
            /// A 16 × 16 score tile stored column by column, and 16 words of
            /// padding (the next tile's columns in the other half of the banks).
            const ST: usize = T * T + 16;
            /// The same for a probability tile (`f16`): 16 halves of padding.
            const PT: usize = T * T + 16;
            /// Vectors of `K` (of `V`) each thread copies per step.
            const NV: usize = BC * (D / L) / NT;
            /// Whether `Q`'s tiles stay in registers.
            const QREG: bool = $qreg;
            /// Whether `K` and `V` are loaded a step ahead into registers.
            const PREFETCH: bool = $pf;
            /// Rows of the shared copy of `Q` (a placeholder with `QREG`).
            const QSR: usize = $qsr;
            /// How far (in powers of two) a row's maximum may grow past its
            /// reference before the output is rescaled.
            const SLACK: f32 = 8.0;

            /// One block per `BR` query rows (`block_id().x`, the last rows
            /// first: under a causal mask they have the most keys) of one
            /// (batch, head) (`block_id().y`). `sizes`: `[seq_q, seq_kv,
            /// kv_capacity, offset, causal]`; `scale_log2`: the scale times
            /// `log2(e)` (the kernel uses `exp2`).
            #[kernel(workgroup_size = $nt, max_shared_bytes = 49152)]
            pub fn $module(
                q: &[F16Vec4],
                k: &[F16Vec4],
                v: &[F16Vec4],
                o: &mut [F16Vec4],
                seq_q: u32,
                seq_kv: u32,
                cap: u32,
                off: u32,
                causal: u32,
                scale_log2: f32,
            ) {
                let kv = shared::<[F16Vec4; KVR * KS]>();
                let qs = shared::<[F16Vec4; QSR * KS]>();
                // Each subgroup's scores (f32) and probabilities (f16) of a step.
                let s_s = shared::<[f32; NSG * CT * ST]>();
                let p_s = shared::<[f16; NSG * CT * PT]>();
                // Whether some row must rescale its output, for even and odd steps.
                let flags = shared::<[u32; 4]>();
                let (seq_q, seq_kv, cap, off) = (seq_q as usize, seq_kv as usize, cap as usize, off as usize);
                let dv = D / L;
                let t = thread_id().x;
                let sg = t / 32;
                let lane = t % 32;
                // This thread's share of the softmax: row rr of its subgroup's 16,
                // the even (half 0) or odd (half 1) keys.
                let rr = lane / 2;
                let half = lane % 2;
                let bh = block_id().y;
                let (base_q, base_kv) = (bh * seq_q * dv, bh * cap * dv);
                let q0 = (grid_dim().x - 1 - block_id().x) * BR;
                let qi = q0 + sg * T + rr;
                let pos = off + qi;
                let (s_at, p_at) = (sg * CT * ST, sg * CT * PT);
                // Element (rr, column c) of key tile j: `mine_s + j * ST + c * T`.
                let mine_s = s_at + half * T + rr;
                let mine_p = p_at + half * T + rr;
                if t == 0 {
                    flags[0] = 0;
                    flags[1] = 0;
                }

                // Q's rows (zeros past the end), then each subgroup's 16 as tiles.
                #[unroll]
                for i in 0..BR * (D / L) / NT {
                    let e = t + i * NT;
                    let r = e / dv;
                    let inside = q0 + r < seq_q;
                    let x = if inside { q[base_q + (q0 + r) * dv + e % dv] } else { F16Vec4::ZERO };
                    if QREG {
                        kv[r * KS + e % dv] = x;
                    } else {
                        qs[r * KS + e % dv] = x;
                    }
                }
                workgroup_barrier();
                let mut qa = [MatrixA::<T, T>::load(&kv, sg * T * KS, KS); DT];
                #[unroll]
                for f in 1..DT {
                    qa[f] = MatrixA::<T, T>::load(&kv, sg * T * KS + f * T / L, KS);
                }
                let mut acc = [Accumulator::<f32, T, T>::zeros(); DT];
                let mut m_ref = f32::NEG_INFINITY;
                let mut l = 0.0f32;
                let kend = if causal != 0 { seq_kv.min(off + q0 + BR) } else { seq_kv };
                // K of the next step and V of this one, loaded a step ahead:
                // thread t copies vectors t, t + NT, ... of the BC rows (zeros
                // past the end).
                let mut next_k = [F16Vec4::ZERO; NV];
                let mut next_v = [F16Vec4::ZERO; NV];
                #[unroll]
                for i in 0..NV {
                    let e = t + i * NT;
                    if e / dv < kend {
                        next_k[i] = k[base_kv + e];
                        if PREFETCH {
                            next_v[i] = v[base_kv + e];
                        }
                    }
                }
                // Every subgroup has its Q tiles: K of step 0 goes where Q was.
                workgroup_barrier();
                #[unroll]
                for i in 0..NV {
                    let e = t + i * NT;
                    kv[e / dv * KS + e % dv] = next_k[i];
                    next_k[i] = F16Vec4::ZERO;
                    if PREFETCH && BC + e / dv < kend {
                        next_k[i] = k[base_kv + BC * dv + e];
                    }
                }
                workgroup_barrier();
                let mut k0 = 0;
                let mut parity = 0;
                while k0 < kend {
                    // Scores: 16 rows × BC keys per subgroup, CT tiles, summed over D.
                    let mut s = [Accumulator::<f32, T, T>::zeros(); CT];
                    if QREG {
                        #[unroll]
                        for f in 0..DT {
                            #[unroll]
                            for j in 0..CT {
                                // Element (feature, key) of a key tile is K[key][feature]: Kᵀ.
                                let kt = MatrixB::<T, T>::load_col_major(&kv, j * T * KS + f * T / L, KS);
                                s[j] = mma(qa[f], kt, s[j]);
                            }
                        }
                    } else {
                        #[unroll]
                        for f in 0..DT {
                            let qt = MatrixA::<T, T>::load(&qs, sg * T * KS + f * T / L, KS);
                            #[unroll]
                            for j in 0..CT {
                                let kt = MatrixB::<T, T>::load_col_major(&kv, j * T * KS + f * T / L, KS);
                                s[j] = mma(qt, kt, s[j]);
                            }
                        }
                    }
                    #[unroll]
                    for j in 0..CT {
                        s[j].store_col_major(&mut s_s, s_at + j * ST, T);
                    }
                    // The scores are visible, and every subgroup is done
                    // with this step's K and the last step's V.
                    workgroup_barrier();
                    let kn = k0 + BC;
                    if PREFETCH {
                        #[unroll]
                        for i in 0..NV {
                            let e = t + i * NT;
                            kv[e / dv * KS + e % dv] = next_k[i];
                            kv[(BC + e / dv) * KS + e % dv] = next_v[i];
                        }
                        #[unroll]
                        for i in 0..NV {
                            let e = t + i * NT;
                            let kr = kn + BC + e / dv;
                            next_k[i] = if kr < kend { k[base_kv + (kn + BC) * dv + e] } else { F16Vec4::ZERO };
                            let vr = kn + e / dv;
                            next_v[i] = if vr < kend { v[base_kv + kn * dv + e] } else { F16Vec4::ZERO };
                        }
                    } else {
                        // K of the next step and V of this one, stored after the softmax.
                        #[unroll]
                        for i in 0..NV {
                            let e = t + i * NT;
                            let kr = kn + e / dv;
                            next_k[i] = if kr < kend { k[base_kv + kn * dv + e] } else { F16Vec4::ZERO };
                            let vr = k0 + e / dv;
                            next_v[i] = if vr < kend { v[base_kv + k0 * dv + e] } else { F16Vec4::ZERO };
                        }
                    }

                    // The online softmax of this thread's BC / 2 scores.
                    let mut x = [0.0f32; BC / 2];
                    let mut top = f32::NEG_INFINITY;
                    #[unroll]
                    for j in 0..BC / 2 {
                        let key = k0 + half + 2 * j;
                        let valid = key < seq_kv && (causal == 0 || key <= pos);
                        let at = mine_s + (2 * j / T) * ST + (2 * j % T) * T;
                        x[j] = if valid { s_s[at] * scale_log2 } else { f32::NEG_INFINITY };
                        top = top.max(x[j]);
                    }
                    top = top.max(subgroup_shuffle_xor(top, 1));
                    let mut alpha = 1.0f32;
                    if top > m_ref + SLACK {
                        if m_ref > f32::NEG_INFINITY {
                            alpha = (m_ref - top).exp2();
                            flags[parity] = 1;
                        }
                        m_ref = top;
                    }
                    let mut sum = 0.0f32;
                    #[unroll]
                    for j in 0..BC / 2 {
                        let p = if x[j] > f32::NEG_INFINITY { f16::from_f32((x[j] - m_ref).exp2()) } else { f16::ZERO };
                        p_s[mine_p + (2 * j / T) * PT + (2 * j % T) * T] = p;
                        sum += p.to_f32();
                    }
                    sum += subgroup_shuffle_xor(sum, 1);
                    l = l * alpha + sum;
                    if !PREFETCH {
                        #[unroll]
                        for i in 0..NV {
                            let e = t + i * NT;
                            kv[e / dv * KS + e % dv] = next_k[i];
                            kv[(BC + e / dv) * KS + e % dv] = next_v[i];
                        }
                    }
                    // The probabilities, the next K and this V are visible;
                    // whether any row must rescale, read by all.
                    let rescale = workgroup_uniform_load(&flags[parity]);
                    if t == 0 {
                        flags[1 - parity] = 0;
                    }
                    // Rare: a maximum grew past the slack. Scale the output
                    // tiles two at a time through the scores' shared memory
                    // (element (rr, c) of tile `half`: `out_s + c * T`).
                    if rescale != 0 {
                        let out_s = s_at + half * ST + rr;
                        #[unroll]
                        for j in 0..DT / 2 {
                            acc[2 * j].store_col_major(&mut s_s, s_at, T);
                            acc[2 * j + 1].store_col_major(&mut s_s, s_at + ST, T);
                            workgroup_barrier();
                            #[unroll]
                            for c in 0..T {
                                s_s[out_s + c * T] *= alpha;
                            }
                            workgroup_barrier();
                            acc[2 * j] = Accumulator::<f32, T, T>::load_col_major(&s_s, s_at, T);
                            acc[2 * j + 1] = Accumulator::<f32, T, T>::load_col_major(&s_s, s_at + ST, T);
                            workgroup_barrier();
                        }
                    }

                    // O += P·V: P's 16 × BC as CT tiles, V's BC × D as CT × DT.
                    #[unroll]
                    for j in 0..CT {
                        let p = MatrixA::<T, T>::load_col_major(&p_s, p_at + j * PT, T);
                        #[unroll]
                        for f in 0..DT {
                            let vt = MatrixB::<T, T>::load(&kv, (BC + j * T) * KS + f * T / L, KS);
                            acc[f] = mma(p, vt, acc[f]);
                        }
                    }
                    k0 = kn;
                    parity = 1 - parity;
                }

                // O / l, two tiles at a time through shared memory, to f16.
                let inv = 1.0 / l;
                let out_s = s_at + half * ST + rr;
                #[unroll]
                for j in 0..DT / 2 {
                    workgroup_barrier();
                    acc[2 * j].store_col_major(&mut s_s, s_at, T);
                    acc[2 * j + 1].store_col_major(&mut s_s, s_at + ST, T);
                    workgroup_barrier();
                    if qi < seq_q {
                        #[unroll]
                        for c in 0..T / L {
                            let at = out_s + c * L * T;
                            let out = Vec4::new(s_s[at], s_s[at + T], s_s[at + 2 * T], s_s[at + 3 * T]) * inv;
                            o[base_q + qi * dv + j * 2 * T / L + half * T / L + c] = F16Vec4::from_vec4(out);
                        }
                    }
                }
            }
        }
    };
}

// Four subgroups, 32 keys per step, Q in registers, K and V a step ahead
// (29 KiB of shared memory at D = 128).
flash_kernel!(flash_d64, 64, 4, 32, 64, 128, true, true, 8);
flash_kernel!(flash_d128, 128, 4, 32, 64, 128, true, true, 8);

/// The block tile kernel (fifth session): `$nt` = 256 threads, eight
/// subgroups, 128 query rows per block, 32 keys per step, head dimension
/// `$d`. Fewer shared-memory tile loads per tile product than
/// [`flash_d128`]'s 16 rows per subgroup: for `S = Q·Kᵀ` a subgroup owns
/// 32 query rows × 16 keys (its 2 × `D / 16` tiles of `Q` in registers,
/// each `K` tile it loads feeds two products), the softmax runs over the
/// block's 128 × 32 scores in shared memory (two threads a row) and writes
/// `P` as `F16Vec4`s, and for `O += P·V` a subgroup owns 32 rows × `D / 2`
/// columns (2 × `D / 32` accumulators: per key tile 2 `P` and `D / 32`
/// `V` loads for `D / 16` products). `$mode`: 0 the kernel, 4 the scores
/// stored row-major (`blk2_*`); bits 1 and 2 leave out the softmax pass and
/// `P·V` to time the rest (wrong answers, so no such instance is kept: add
/// one, e.g. `block_kernel!(qk_d128, 128, 8, 256, 3)`, and a launch arm to
/// measure the parts again).
macro_rules! block_kernel {
    ($module:ident, $d:tt, $nsg:tt, $nt:tt, $mode:tt) => {
        #[kernels]
        pub mod $module {
            use onekernel::prelude::*;
            use onekernel_runtime::tile::{mma, Accumulator, MatrixA, MatrixB};
            use onekernel_runtime::F16Vec4;

            /// The head dimension.
            pub const D: usize = $d;
            /// Subgroups per block: 8, or 4 (only with `MODE` bit 2).
            const NSG: usize = $nsg;
            /// Threads per block.
            const NT: usize = $nt;
            /// Query rows per block.
            pub const BR: usize = 128;
            /// Keys per step.
            const BC: usize = 32;
            /// The side of a tensor-core tile.
            const T: usize = 16;
            /// `f16` values per `F16Vec4`.
            const L: usize = 4;
            /// A staged row of `K`, `V` or `Q` in vectors, 16 bytes of padding.
            const KS: usize = D / L + 2;
            /// Tiles across a row of `Q`, `K`, `V` or `O`.
            const DT: usize = D / T;
            /// Key tiles per step.
            const CT: usize = BC / T;
            /// Groups of 32 query rows (two row tiles): subgroup `sg` owns group `sg % RG`.
            const RG: usize = 4;
            /// Output column tiles per subgroup.
            const OC: usize = DT * RG / NSG;
            /// A 16 × 16 score tile stored column by column, and 16 words of padding.
            const ST: usize = T * T + 16;
            /// A row of `P` in vectors: 32 keys and 16 bytes of padding.
            const PS: usize = BC / L + 2;
            /// Where `V` (`P`) starts in the staging array.
            const VO: usize = BC * KS;
            const PO: usize = 2 * BC * KS;
            /// Vectors of `K` (of `V`) each thread copies per step.
            const NV: usize = BC * (D / L) / NT;
            /// Vectors of `Q` each thread stages per pass (64 rows a pass).
            const NQ: usize = RG * T * (D / L) / NT;
            /// Key tiles of `S` per subgroup.
            const SK: usize = CT * RG / NSG;
            /// Threads of the softmax a row (2, or 1 with four subgroups).
            const TPR: usize = NT / BR;
            /// Scores each thread of the softmax owns.
            const KPT: usize = BC / TPR;
            /// How far (in powers of two) a row's maximum may grow past its
            /// reference before the output is rescaled.
            const SLACK: f32 = 8.0;
            /// 0: the kernel; bit 0: no softmax pass; bit 1: no `P·V`; bit 2:
            /// the scores row-major (each thread's 16 in a row) and no mask
            /// where every key is visible.
            const MODE: u32 = $mode;
            /// Whether the scores are stored row-major (`MODE` bit 2).
            const ROWS: bool = MODE & 4 != 0;
            /// A row of the row-major scores: 32 and 16 bytes of padding
            /// (the 8 rows a quarter subgroup reads start in different banks).
            const SR: usize = BC + 4;

            /// One block per 128 query rows (`block_id().x`, the last rows
            /// first) of one (batch, head) (`block_id().y`); arguments as
            /// for the other tile kernels.
            #[kernel(workgroup_size = $nt, max_shared_bytes = 49152)]
            pub fn $module(
                q: &[F16Vec4],
                k: &[F16Vec4],
                v: &[F16Vec4],
                o: &mut [F16Vec4],
                seq_q: u32,
                seq_kv: u32,
                cap: u32,
                off: u32,
                causal: u32,
                scale_log2: f32,
            ) {
                // K (rows 0..BC), V (rows BC..2 BC), then P (128 rows of PS);
                // before the walk, 64 rows of Q at a time where K and V go.
                let kvp = shared::<[F16Vec4; 2 * BC * KS + BR * PS]>();
                // The block's scores: tile (row tile i, key tile j) at (i CT + j) ST.
                // (`ROWS`: row-major, 128 rows of SR; either way its first
                // 2 NSG tiles of ST also carry the output tiles.)
                let s_s = shared::<[f32; BR * SR]>();
                let alpha_s = shared::<[f32; BR]>();
                let l_s = shared::<[f32; BR]>();
                let flags = shared::<[u32; 4]>();
                let (seq_q, seq_kv, cap, off) = (seq_q as usize, seq_kv as usize, cap as usize, off as usize);
                let dv = D / L;
                let t = thread_id().x;
                let sg = t / 32;
                let lane = t % 32;
                let rg = sg % RG;
                // S: key tiles `kb .. kb + SK`; O: column tiles `cb .. cb + OC`.
                let kb = (sg / RG) * SK;
                let cb = (sg / RG) * OC;
                // The softmax: row r, keys h KPT .. (h + 1) KPT.
                let r = t / TPR;
                let h = t % TPR;
                let bh = block_id().y;
                let (base_q, base_kv) = (bh * seq_q * dv, bh * cap * dv);
                let q0 = (grid_dim().x - 1 - block_id().x) * BR;
                let pos = off + q0 + r;
                // Score j of this thread (column-major tiles, or rows).
                let mine_s = if ROWS { r * SR + h * KPT } else { ((r / T) * CT + h) * ST + r % T };
                let step_s = if ROWS { 1 } else { T };
                if t == 0 {
                    flags[0] = 0;
                    flags[1] = 0;
                }

                // Q in two passes: pass p stages row tile p of each group
                // (staged row 16 g + i is query row 32 g + 16 p + i).
                #[unroll]
                for i in 0..NQ {
                    let e = t + i * NT;
                    let sr = e / dv;
                    let qr = q0 + (sr / T) * 2 * T + sr % T;
                    kvp[sr * KS + e % dv] = if qr < seq_q { q[base_q + qr * dv + e % dv] } else { F16Vec4::ZERO };
                }
                workgroup_barrier();
                let mut qa = [MatrixA::<T, T>::load(&kvp, rg * T * KS, KS); 2 * DT];
                #[unroll]
                for f in 1..DT {
                    qa[f] = MatrixA::<T, T>::load(&kvp, rg * T * KS + f * T / L, KS);
                }
                workgroup_barrier();
                #[unroll]
                for i in 0..NQ {
                    let e = t + i * NT;
                    let sr = e / dv;
                    let qr = q0 + (sr / T) * 2 * T + T + sr % T;
                    kvp[sr * KS + e % dv] = if qr < seq_q { q[base_q + qr * dv + e % dv] } else { F16Vec4::ZERO };
                }
                workgroup_barrier();
                #[unroll]
                for f in 0..DT {
                    qa[DT + f] = MatrixA::<T, T>::load(&kvp, rg * T * KS + f * T / L, KS);
                }
                let mut acc = [Accumulator::<f32, T, T>::zeros(); 2 * OC];
                let mut m_ref = f32::NEG_INFINITY;
                let mut l = 0.0f32;
                let kend = if causal != 0 { seq_kv.min(off + q0 + BR) } else { seq_kv };
                // K of the next step and V of this one, a step ahead.
                let mut next_k = [F16Vec4::ZERO; NV];
                let mut next_v = [F16Vec4::ZERO; NV];
                #[unroll]
                for i in 0..NV {
                    let e = t + i * NT;
                    if e / dv < kend {
                        next_k[i] = k[base_kv + e];
                        next_v[i] = v[base_kv + e];
                    }
                }
                // Every subgroup has its Q tiles: K of step 0 goes where Q was.
                workgroup_barrier();
                #[unroll]
                for i in 0..NV {
                    let e = t + i * NT;
                    kvp[e / dv * KS + e % dv] = next_k[i];
                    next_k[i] = F16Vec4::ZERO;
                    if BC + e / dv < kend {
                        next_k[i] = k[base_kv + BC * dv + e];
                    }
                }
                workgroup_barrier();
                let mut k0 = 0;
                let mut parity = 0;
                while k0 < kend {
                    // S: 32 rows × 16 SK keys per subgroup; each K tile feeds two products.
                    let mut s = [Accumulator::<f32, T, T>::zeros(); 2 * SK];
                    #[unroll]
                    for f in 0..DT {
                        #[unroll]
                        for j in 0..SK {
                            let kt = MatrixB::<T, T>::load_col_major(&kvp, (kb + j) * T * KS + f * T / L, KS);
                            s[j] = mma(qa[f], kt, s[j]);
                            s[SK + j] = mma(qa[DT + f], kt, s[SK + j]);
                        }
                    }
                    #[unroll]
                    for j in 0..SK {
                        if ROWS {
                            s[j].store(&mut s_s, 2 * rg * T * SR + (kb + j) * T, SR);
                            s[SK + j].store(&mut s_s, (2 * rg + 1) * T * SR + (kb + j) * T, SR);
                        } else {
                            s[j].store_col_major(&mut s_s, (2 * rg * CT + kb + j) * ST, T);
                            s[SK + j].store_col_major(&mut s_s, ((2 * rg + 1) * CT + kb + j) * ST, T);
                        }
                    }
                    // The scores are visible; every subgroup is done with this
                    // step's K, the last step's V and P.
                    workgroup_barrier();
                    let kn = k0 + BC;
                    #[unroll]
                    for i in 0..NV {
                        let e = t + i * NT;
                        kvp[e / dv * KS + e % dv] = next_k[i];
                        kvp[VO + e / dv * KS + e % dv] = next_v[i];
                    }
                    #[unroll]
                    for i in 0..NV {
                        let e = t + i * NT;
                        let kr = kn + BC + e / dv;
                        next_k[i] = if kr < kend { k[base_kv + (kn + BC) * dv + e] } else { F16Vec4::ZERO };
                        let vr = kn + e / dv;
                        next_v[i] = if vr < kend { v[base_kv + kn * dv + e] } else { F16Vec4::ZERO };
                    }

                    if MODE & 1 == 0 {
                        // The online softmax of this thread's 16 scores.
                        let mut x = [0.0f32; KPT];
                        let mut top = f32::NEG_INFINITY;
                        // With ROWS, a thread whose keys are all visible skips the mask.
                        let k1 = k0 + h * KPT + KPT;
                        if ROWS && k1 <= seq_kv && (causal == 0 || k1 <= pos + 1) {
                            #[unroll]
                            for j in 0..KPT {
                                x[j] = s_s[mine_s + j] * scale_log2;
                                top = top.max(x[j]);
                            }
                        } else {
                            #[unroll]
                            for j in 0..KPT {
                                let key = k0 + h * KPT + j;
                                let valid = key < seq_kv && (causal == 0 || key <= pos);
                                x[j] = if valid { s_s[mine_s + j * step_s] * scale_log2 } else { f32::NEG_INFINITY };
                                top = top.max(x[j]);
                            }
                        }
                        // The row's other thread (with two a row).
                        let other = subgroup_shuffle_xor(top, 1);
                        if TPR == 2 {
                            top = top.max(other);
                        }
                        let mut alpha = 1.0f32;
                        if top > m_ref + SLACK {
                            if m_ref > f32::NEG_INFINITY {
                                alpha = (m_ref - top).exp2();
                                flags[parity] = 1;
                            }
                            m_ref = top;
                        }
                        let mut p = [0.0f32; KPT];
                        #[unroll]
                        for j in 0..KPT {
                            p[j] = if x[j] > f32::NEG_INFINITY { (x[j] - m_ref).exp2() } else { 0.0 };
                        }
                        let mut sum = 0.0f32;
                        #[unroll]
                        for c in 0..KPT / L {
                            let e4 = Vec4::new(p[c * L], p[c * L + 1], p[c * L + 2], p[c * L + 3]);
                            let p4 = F16Vec4::from_vec4(e4);
                            kvp[PO + r * PS + h * (KPT / L) + c] = p4;
                            let back = p4.to_vec4();
                            sum += back.x + back.y + back.z + back.w;
                        }
                        let other = subgroup_shuffle_xor(sum, 1);
                        if TPR == 2 {
                            sum += other;
                        }
                        l = l * alpha + sum;
                        if h == 0 {
                            alpha_s[r] = alpha;
                        }
                    }
                    // P, the next K and this V are visible; whether any row
                    // must rescale, read by all.
                    let rescale = workgroup_uniform_load(&flags[parity]);
                    if t == 0 {
                        flags[1 - parity] = 0;
                    }
                    // Rare: scale the output tiles, two at a time, through
                    // this subgroup's two tiles of the scores' memory (lane
                    // `lane` scales query row 32 rg + lane).
                    if rescale != 0 {
                        let mine_o = sg * 2 * ST + (lane / T) * ST + lane % T;
                        let a = alpha_s[rg * 2 * T + lane];
                        #[unroll]
                        for j in 0..OC {
                            acc[j].store_col_major(&mut s_s, sg * 2 * ST, T);
                            acc[OC + j].store_col_major(&mut s_s, sg * 2 * ST + ST, T);
                            workgroup_barrier();
                            #[unroll]
                            for c in 0..T {
                                s_s[mine_o + c * T] *= a;
                            }
                            workgroup_barrier();
                            acc[j] = Accumulator::<f32, T, T>::load_col_major(&s_s, sg * 2 * ST, T);
                            acc[OC + j] = Accumulator::<f32, T, T>::load_col_major(&s_s, sg * 2 * ST + ST, T);
                            workgroup_barrier();
                        }
                    }

                    if MODE & 2 == 0 {
                        // O += P·V: per key tile 2 P tiles and OC V tiles, 2 OC products.
                        #[unroll]
                        for j in 0..CT {
                            let p0 = MatrixA::<T, T>::load(&kvp, PO + rg * 2 * T * PS + j * T / L, PS);
                            let p1 = MatrixA::<T, T>::load(&kvp, PO + (rg * 2 + 1) * T * PS + j * T / L, PS);
                            #[unroll]
                            for c in 0..OC {
                                let vt = MatrixB::<T, T>::load(&kvp, VO + j * T * KS + (cb + c) * T / L, KS);
                                acc[c] = mma(p0, vt, acc[c]);
                                acc[OC + c] = mma(p1, vt, acc[OC + c]);
                            }
                        }
                    }
                    k0 = kn;
                    parity = 1 - parity;
                }

                // O / l, two tiles at a time through the scores' memory, to f16.
                if h == 0 {
                    l_s[r] = l;
                }
                let row = rg * 2 * T + lane;
                let qi = q0 + row;
                let mine_o = sg * 2 * ST + (lane / T) * ST + lane % T;
                #[unroll]
                for j in 0..OC {
                    workgroup_barrier();
                    acc[j].store_col_major(&mut s_s, sg * 2 * ST, T);
                    acc[OC + j].store_col_major(&mut s_s, sg * 2 * ST + ST, T);
                    workgroup_barrier();
                    if qi < seq_q {
                        let inv = 1.0 / l_s[row];
                        #[unroll]
                        for c in 0..T / L {
                            let at = mine_o + c * L * T;
                            let out = Vec4::new(s_s[at], s_s[at + T], s_s[at + 2 * T], s_s[at + 3 * T]) * inv;
                            o[base_q + qi * dv + (cb + j) * T / L + c] = F16Vec4::from_vec4(out);
                        }
                    }
                }
            }
        }
    };
}

block_kernel!(blk_d64, 64, 8, 256, 0);
block_kernel!(blk2_d128, 128, 8, 256, 4);

#[kernels]
mod simple {
    use onekernel::prelude::*;
    use onekernel_runtime::F16Vec4;

    /// Query rows per block: one per thread.
    const BR: usize = 64;
    /// Keys per step of the online softmax.
    const BC: usize = 32;
    /// The largest head dimension, in vectors of four.
    #[allow(dead_code)] // sizes the kernel's register arrays (the CPU body inlines it)
    const DV: usize = 32;

    /// Thread `t` of block `x` owns query row `64 x + t` of the (batch,
    /// head) `block_id().y`, with its query and output in registers, and
    /// reads the keys and values straight from memory (every thread of a
    /// block reads the same row at once: one broadcast load), 32 keys per
    /// step of the online softmax; no shared memory, no barrier. Through an
    /// unchecked handle lavapipe takes minutes to compile it (LLVM's
    /// coroutine lowering of its register arrays: docs/performance.md);
    /// checked, a second.
    #[kernel(workgroup_size = 64)]
    pub fn attention_simple(
        q: &[F16Vec4],
        k: &[F16Vec4],
        v: &[F16Vec4],
        o: &mut [F16Vec4],
        seq_q: u32,
        seq_kv: u32,
        cap: u32,
        off: u32,
        causal: u32,
        dim: u32,
        scale_log2: f32,
    ) {
        let (seq_q, seq_kv, cap, off) = (seq_q as usize, seq_kv as usize, cap as usize, off as usize);
        let dv = dim as usize / 4;
        let bh = block_id().y;
        let (base_q, base_kv) = (bh * seq_q * dv, bh * cap * dv);
        let qi = block_id().x * BR + thread_id().x;
        if qi < seq_q {
            let pos = off + qi;
            let mut qr = [Vec4::ZERO; DV];
            let mut acc = [Vec4::ZERO; DV];
            for c in 0..dv {
                qr[c] = q[base_q + qi * dv + c].to_vec4() * scale_log2;
            }
            let mut m = f32::NEG_INFINITY;
            let mut l = 0.0f32;
            let kend = if causal != 0 { seq_kv.min(pos + 1) } else { seq_kv };
            let mut k0 = 0;
            while k0 < kend {
                let n = BC.min(kend - k0);
                let mut s = [0.0f32; BC];
                let mut top = f32::NEG_INFINITY;
                for j in 0..n {
                    let at = base_kv + (k0 + j) * dv;
                    let mut d = 0.0f32;
                    for c in 0..dv {
                        d += qr[c].dot(k[at + c].to_vec4());
                    }
                    s[j] = d;
                    top = top.max(d);
                }
                let m_new = m.max(top);
                let alpha = if m > f32::NEG_INFINITY { (m - m_new).exp2() } else { 0.0 };
                for c in 0..dv {
                    acc[c] *= alpha;
                }
                l *= alpha;
                for j in 0..n {
                    let p = (s[j] - m_new).exp2();
                    l += p;
                    let at = base_kv + (k0 + j) * dv;
                    for c in 0..dv {
                        acc[c] += v[at + c].to_vec4() * p;
                    }
                }
                m = m_new;
                k0 += BC;
            }
            for c in 0..dv {
                o[base_q + qi * dv + c] = F16Vec4::from_vec4(acc[c] / l);
            }
        }
    }
}

#[kernels]
mod decode {
    use onekernel::prelude::*;
    use onekernel_runtime::F16Vec4;

    /// Keys per block.
    const CH: usize = 256;
    /// Threads per block.
    const NT: usize = 64;

    /// The partial softmax of keys `CH x .. CH (x + 1)` (`block_id().x`)
    /// for query row `block_id().y` (of all heads' rows): `part[(row ·
    /// chunks + x) · (dv + 1) ..]` gets the unnormalised output's `dv`
    /// vectors, then `(m, l, 0, 0)`. `sizes` as for the other kernels.
    #[kernel(workgroup_size = 64)]
    pub fn decode_part(
        q: &[F16Vec4],
        k: &[F16Vec4],
        v: &[F16Vec4],
        part: &mut [Vec4],
        seq_q: u32,
        seq_kv: u32,
        cap: u32,
        off: u32,
        causal: u32,
        dim: u32,
        scale_log2: f32,
        chunks: u32,
    ) {
        let qs = shared::<[Vec4; 32]>();
        let ss = shared::<[f32; CH]>();
        let red = shared::<[f32; NT]>();
        let sums = shared::<[Vec4; NT]>();
        let (seq_q, seq_kv, cap, off) = (seq_q as usize, seq_kv as usize, cap as usize, off as usize);
        let dv = dim as usize / 4;
        let t = thread_id().x;
        let row = block_id().y;
        let (bh, i) = (row / seq_q, row % seq_q);
        let base_kv = bh * cap * dv;
        if t < dv {
            qs[t] = q[row * dv + t].to_vec4() * scale_log2;
        }
        workgroup_barrier();
        let c0 = block_id().x * CH;
        let kend = if causal != 0 { seq_kv.min(off + i + 1) } else { seq_kv };
        let n = if kend > c0 { CH.min(kend - c0) } else { 0 };
        // Scores, and this thread's largest.
        let mut top = f32::NEG_INFINITY;
        let mut j = t;
        while j < CH {
            let mut x = f32::NEG_INFINITY;
            if j < n {
                let at = base_kv + (c0 + j) * dv;
                let mut d = 0.0f32;
                for c in 0..dv {
                    d += qs[c].dot(k[at + c].to_vec4());
                }
                x = d;
            }
            ss[j] = x;
            top = top.max(x);
            j += NT;
        }
        red[t] = top;
        workgroup_barrier();
        let mut w = NT / 2;
        while w > 0 {
            if t < w {
                red[t] = red[t].max(red[t + w]);
            }
            workgroup_barrier();
            w /= 2;
        }
        let m = red[0];
        workgroup_barrier();
        // Probabilities, and this thread's sum.
        let mut sum = 0.0f32;
        j = t;
        while j < CH {
            let p = if ss[j] > f32::NEG_INFINITY { (ss[j] - m).exp2() } else { 0.0 };
            ss[j] = p;
            sum += p;
            j += NT;
        }
        red[t] = sum;
        workgroup_barrier();
        w = NT / 2;
        while w > 0 {
            if t < w {
                red[t] += red[t + w];
            }
            workgroup_barrier();
            w /= 2;
        }
        let l = red[0];
        // P·V: thread t sums feature vector t % dv over the keys
        // t / dv, t / dv + g, ... (g = 64 / dv groups), then the groups add up.
        let g = NT / dv;
        let mut acc = Vec4::ZERO;
        if t < g * dv {
            let c = t % dv;
            j = t / dv;
            while j < n {
                acc += v[base_kv + (c0 + j) * dv + c].to_vec4() * ss[j];
                j += g;
            }
        }
        sums[t] = acc;
        workgroup_barrier();
        let out = (row * chunks as usize + block_id().x) * (dv + 1);
        if t < dv {
            let mut total = Vec4::ZERO;
            for h in 0..g {
                total += sums[h * dv + t];
            }
            part[out + t] = total;
        }
        if t == 0 {
            part[out + dv] = Vec4::new(m, l, 0.0, 0.0);
        }
    }

    /// Query row `block_id().x`: the chunks' partial results of
    /// `decode_part` combined (each scaled by `2^(m - max m)`), divided by
    /// the total `l`, as `f16`.
    #[kernel(workgroup_size = 32)]
    pub fn decode_combine(part: &[Vec4], o: &mut [F16Vec4], dim: u32, chunks: u32) {
        let dv = dim as usize / 4;
        let nc = chunks as usize;
        let row = block_id().x;
        let t = thread_id().x;
        let at = row * nc * (dv + 1);
        let mut top = f32::NEG_INFINITY;
        for c in 0..nc {
            top = top.max(part[at + c * (dv + 1) + dv].x);
        }
        let mut l = 0.0f32;
        let mut acc = Vec4::ZERO;
        for c in 0..nc {
            let ml = part[at + c * (dv + 1) + dv];
            let w = if ml.x > f32::NEG_INFINITY { (ml.x - top).exp2() } else { 0.0 };
            l += ml.y * w;
            if t < dv {
                acc += part[at + c * (dv + 1) + t] * w;
            }
        }
        if t < dv {
            o[row * dv + t] = F16Vec4::from_vec4(acc / l);
        }
    }
}
