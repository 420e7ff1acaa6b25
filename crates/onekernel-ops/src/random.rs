//! Random numbers from a counter-based generator: Philox 4×32-10
//! (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011,
//! the generator of Random123, cuRAND and PyTorch).
//!
//! Number `e` of the stream of `seed` is word `e % 4` of
//! `philox4x32_10([q as u32, (q >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32])`
//! with `q = e / 4`; a call with `offset` fills its output with numbers
//! `offset ..` of the stream. So the numbers depend on the seed and the
//! position only: the same on the CPU executor and on every GPU, whatever
//! the grid (bit for bit for `u32` and uniform `f32`; normal `f32` goes
//! through `ln`, `sqrt`, `cos` and `sin`, whose last bits differ between
//! devices), and a stream can be drawn in pieces (`offset` advanced by the
//! length drawn) with the same result as at once.
//!
//! - [`random_u32_into`]: the words themselves;
//! - [`uniform_into`]: `(word >> 8) * 2^-24`, in `[0, 1)` (exact: 24 bits);
//! - [`normal_into`]: Box–Muller on the pairs (word 0, 1) and (2, 3) of
//!   each block: `sqrt(-2 ln u1) * (cos, sin)(2π u2)` with `u1 = ((w0 >> 8)
//!   + 1) * 2^-24` in `(0, 1]`, scaled by `std` and shifted by `mean`.
//!
//! Each thread computes one block of four numbers (ten rounds of
//! [`philox_round`] with two 32×32→64-bit
//! multiplies: one native 64-bit product each where the device has
//! `SHADER_INT64` (the `*_64` kernels, chosen from the device's features),
//! else from 16-bit halves, the same numbers). An output of whole vectors
//! drawn from an offset that is a multiple of 4 (the usual case) is seen
//! as `UVec4`s (`Buffer::view_as_mut`; `f32`s as their bits) and each
//! thread writes its block with one 16-byte store
//! ([`philox_vec`]); any other output goes through
//! [`philox_words`], where a block of 256 threads
//! stages its 1024 numbers in shared memory and writes them coalesced.
//! The `*_64` kernels take both words of each product from one `u64`
//! product (12% faster on the H200 than a high word from one product and
//! a `wrapping_mul` for the low one). Two or four blocks a thread, a grid
//! striding the output and the uniform float from the word's bits (no
//! integer-to-float conversion) were built and measured too, and were no
//! faster (`docs/performance.md`). The const parameter `MODE` of the four
//! kernels says what is drawn (words, uniform,
//! normal). On the CPU executor the same blocks are computed in plain
//! Rust with rayon and native 64-bit products (the same numbers: the
//! tests compare both); [`fill_into`]'s
//! `kernels_on_cpu` runs the kernels there instead.

use crate::prelude::*;
use crate::OpError;
use onekernel_runtime::Element;

/// The kernels of the generator (see the [module](self) docs).
#[kernels]
pub mod kernels {
    use onekernel::prelude::*;

    /// Philox's round multipliers and key increments (Weyl constants).
    pub const M0: u32 = 0xD251_1F53;
    /// The second multiplier.
    pub const M1: u32 = 0xCD9E_8D57;
    /// The first key increment.
    pub const W0: u32 = 0x9E37_79B9;
    /// The second key increment.
    pub const W1: u32 = 0xBB67_AE85;

    /// The high 32 bits of the 64-bit product `a * b`, from 16-bit halves.
    #[helper]
    pub fn mul_hi(a: u32, b: u32) -> u32 {
        let (al, ah) = (a & 0xffff, a >> 16);
        let (bl, bh) = (b & 0xffff, b >> 16);
        let lolo = al * bl;
        let lohi = al * bh;
        let hilo = ah * bl;
        let cross = (lolo >> 16) + (lohi & 0xffff) + (hilo & 0xffff);
        ah * bh + (lohi >> 16) + (hilo >> 16) + (cross >> 16)
    }

    /// One Philox round: `x` with its products `M0 * x.x` and `M1 * x.z`
    /// (their high words `hi0`, `hi1` computed by the caller, from 16-bit
    /// halves or one 64-bit product) under the round's key.
    #[helper]
    pub fn philox_round(x: UVec4, hi0: u32, hi1: u32, key0: u32, key1: u32) -> UVec4 {
        UVec4::new(hi1 ^ x.y ^ key0, M1.wrapping_mul(x.z), hi0 ^ x.w ^ key1, M0.wrapping_mul(x.x))
    }

    /// Philox 4×32 with 10 rounds: the block of counter `c` under key `k`
    /// (products from 16-bit halves: any device). The rounds are unrolled
    /// (`#[unroll]`, here and in the other forms): as a loop, wgpu's
    /// checked launches bound it with a counter of their own, and the
    /// kernels ran at 0.14 ms for 2^26 numbers on the H200 against 0.085
    /// unchecked; unrolled there is no loop to bound.
    #[helper]
    pub fn philox4x32_10(c: UVec4, k0: u32, k1: u32) -> UVec4 {
        let mut x = c;
        let mut key0 = k0;
        let mut key1 = k1;
        #[unroll]
        for _round in 0..10 {
            x = philox_round(x, mul_hi(M0, x.x), mul_hi(M1, x.z), key0, key1);
            // The key for the next round (unused after the tenth).
            key0 = key0.wrapping_add(W0);
            key1 = key1.wrapping_add(W1);
        }
        x
    }

    /// [`philox4x32_10`] with native 64-bit products (`SHADER_INT64`): the
    /// same numbers. Each round's two products are taken whole (one `u64`
    /// product gives both the high and the low word; on the H200 this ran
    /// 12% faster than a `mul_hi` from a `u64` product plus a
    /// `wrapping_mul`, 2026-12-04).
    #[helper]
    pub fn philox4x32_10_64(c: UVec4, k0: u32, k1: u32) -> UVec4 {
        let mut x = c;
        let mut key0 = k0;
        let mut key1 = k1;
        #[unroll]
        for _round in 0..10 {
            let p0 = u64::from(M0) * u64::from(x.x);
            let p1 = u64::from(M1) * u64::from(x.z);
            x = UVec4::new((p1 >> 32) as u32 ^ x.y ^ key0, p1 as u32, (p0 >> 32) as u32 ^ x.w ^ key1, p0 as u32);
            key0 = key0.wrapping_add(W0);
            key1 = key1.wrapping_add(W1);
        }
        x
    }

    /// The counter of the stream's block `q_lo + g` (with the carry into
    /// the high word of the block index).
    #[helper]
    pub fn counter(g: u32, q_lo: u32, q_hi: u32) -> UVec4 {
        let lo = q_lo.wrapping_add(g);
        let hi = q_hi + if lo < g { 1 } else { 0 };
        UVec4::new(lo, hi, 0, 0)
    }

    /// A word as a uniform `f32` in `[0, 1)`.
    #[helper]
    pub fn to_unit(w: u32) -> f32 {
        (w >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// A block's four words as uniform `f32`s (`normal` 0) or as normal
    /// ones (Box–Muller on each pair), times `std` plus `mean`.
    #[helper]
    pub fn to_f32s(w: UVec4, normal: u32, mean: f32, std: f32) -> Vec4 {
        if normal == 0 {
            Vec4::new(to_unit(w.x), to_unit(w.y), to_unit(w.z), to_unit(w.w))
        } else {
            let r0 = (-2.0 * (((w.x >> 8) + 1) as f32 * (1.0 / 16_777_216.0)).ln()).sqrt();
            let t0 = to_unit(w.y) * std::f32::consts::TAU;
            let r1 = (-2.0 * (((w.z >> 8) + 1) as f32 * (1.0 / 16_777_216.0)).ln()).sqrt();
            let t1 = to_unit(w.w) * std::f32::consts::TAU;
            Vec4::new(
                (r0 * t0.cos()).mul_add(std, mean),
                (r0 * t0.sin()).mul_add(std, mean),
                (r1 * t1.cos()).mul_add(std, mean),
                (r1 * t1.sin()).mul_add(std, mean),
            )
        }
    }

    /// A block's four words as what `MODE` draws, as bits: the words
    /// themselves (0), uniform `f32`s (1) or normal ones (2), see
    /// [`to_f32s`].
    #[helper]
    pub fn to_words(w: UVec4, mode: u32, mean: f32, std: f32) -> UVec4 {
        if mode == 0 {
            w
        } else {
            let z = to_f32s(w, mode - 1, mean, std);
            UVec4::new(z.x.to_bits(), z.y.to_bits(), z.z.to_bits(), z.w.to_bits())
        }
    }

    /// Thread `g` computes the block `q + g` of the stream (`q = offset /
    /// 4` as `(q_lo, q_hi)`) and writes it as one 16-byte vector: `out`
    /// is the output seen as `UVec4`s (its length a multiple of 4, the
    /// offset too). `MODE`: what is drawn, as [`to_words`] (`f32`s as
    /// their bits). Launch with one thread per vector.
    #[kernel(workgroup_size = 256)]
    pub fn philox_vec<const MODE: u32>(out: &mut [UVec4], q_lo: u32, q_hi: u32, k0: u32, k1: u32, mean: f32, std: f32) {
        let g = global_id().x;
        if g < out.len() {
            out[g] = to_words(philox4x32_10(counter(g as u32, q_lo, q_hi), k0, k1), MODE, mean, std);
        }
    }

    /// [`philox_vec`] with 64-bit products (`SHADER_INT64`).
    #[kernel(workgroup_size = 256)]
    pub fn philox_vec_64<const MODE: u32>(
        out: &mut [UVec4],
        q_lo: u32,
        q_hi: u32,
        k0: u32,
        k1: u32,
        mean: f32,
        std: f32,
    ) {
        let g = global_id().x;
        if g < out.len() {
            out[g] = to_words(philox4x32_10_64(counter(g as u32, q_lo, q_hi), k0, k1), MODE, mean, std);
        }
    }

    /// Any length and offset: thread `g` computes the block `q + g`; the
    /// block's 1024 words go through shared memory so that the writes are
    /// coalesced: thread `t` writes words `t`, `t + 256`, ... of the
    /// block's run, those inside `out` (shifted by `skip = offset % 4`).
    /// Launch with one thread per block of four, rounded up to whole
    /// blocks of 256.
    #[kernel(workgroup_size = 256)]
    #[allow(clippy::too_many_arguments)]
    pub fn philox_words<const MODE: u32>(
        out: &mut [u32],
        q_lo: u32,
        q_hi: u32,
        skip: u32,
        k0: u32,
        k1: u32,
        mean: f32,
        std: f32,
    ) {
        let staged = shared::<[u32; 1024]>();
        let g = global_id().x;
        let t = thread_id().x;
        let w = to_words(philox4x32_10(counter(g as u32, q_lo, q_hi), k0, k1), MODE, mean, std);
        staged[t * 4] = w.x;
        staged[t * 4 + 1] = w.y;
        staged[t * 4 + 2] = w.z;
        staged[t * 4 + 3] = w.w;
        workgroup_barrier();
        let base = (g - t) * 4;
        let skip = skip as usize;
        #[unroll]
        for k in 0..4 {
            let e = base + k * 256 + t;
            if e >= skip && e - skip < out.len() {
                out[e - skip] = staged[k * 256 + t];
            }
        }
    }

    /// [`philox_words`] with 64-bit products (`SHADER_INT64`).
    #[kernel(workgroup_size = 256)]
    #[allow(clippy::too_many_arguments)]
    pub fn philox_words_64<const MODE: u32>(
        out: &mut [u32],
        q_lo: u32,
        q_hi: u32,
        skip: u32,
        k0: u32,
        k1: u32,
        mean: f32,
        std: f32,
    ) {
        let staged = shared::<[u32; 1024]>();
        let g = global_id().x;
        let t = thread_id().x;
        let w = to_words(philox4x32_10_64(counter(g as u32, q_lo, q_hi), k0, k1), MODE, mean, std);
        staged[t * 4] = w.x;
        staged[t * 4 + 1] = w.y;
        staged[t * 4 + 2] = w.z;
        staged[t * 4 + 3] = w.w;
        workgroup_barrier();
        let base = (g - t) * 4;
        let skip = skip as usize;
        #[unroll]
        for k in 0..4 {
            let e = base + k * 256 + t;
            if e >= skip && e - skip < out.len() {
                out[e - skip] = staged[k * 256 + t];
            }
        }
    }
}

use kernels::*;

/// Philox 4×32-10 on the host: the block of counter `ctr` under key `key`
/// (the function the kernels run).
///
/// ```
/// use onekernel::ops::random::philox4x32_10;
/// // Random123's known answer for a zero counter and key.
/// assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    kernels::philox4x32_10(UVec4::from_array(ctr), key[0], key[1]).to_array()
}

/// What [`fill_into`] draws.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Uniform in `[0, 1)` ([`uniform_into`]).
    Uniform,
    /// Normal numbers of this mean and standard deviation.
    Normal {
        /// The mean.
        mean: f32,
        /// The standard deviation.
        std: f32,
    },
}

/// Philox with native 64-bit products: what the CPU executor runs (the
/// `*_64` kernels' rounds, [`kernels::philox4x32_10_64`], as plain Rust).
fn philox_host(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    kernels::philox4x32_10_64(UVec4::from_array(ctr), key[0], key[1]).to_array()
}

/// Numbers `offset .. offset + out.len()` of the stream on the CPU, each
/// block of four turned into outputs by `f`.
fn host_fill<T: Send + Copy>(out: &mut [T], seed: u64, offset: u64, f: impl Fn([u32; 4]) -> [T; 4] + Sync) {
    use rayon::prelude::*;
    let key = [seed as u32, (seed >> 32) as u32];
    out.par_chunks_mut(4096).enumerate().for_each(|(chunk, part)| {
        let mut block = (u64::MAX, f([0; 4]));
        for (e, slot) in (offset + chunk as u64 * 4096..).zip(part.iter_mut()) {
            let q = e / 4;
            if q != block.0 {
                block = (q, f(philox_host([q as u32, (q >> 32) as u32, 0, 0], key)));
            }
            *slot = block.1[(e % 4) as usize];
        }
    });
}

/// Fills `out` with `f32`s of `distribution` from numbers `offset ..` of
/// the stream of `seed`; on the CPU executor in plain Rust unless
/// `kernels_on_cpu`.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::random::{fill_into, Distribution};
/// let device = Device::cpu();
/// let (mut a, mut b) = (Buffer::<f32>::zeroed(&device, 9)?, Buffer::<f32>::zeroed(&device, 9)?);
/// fill_into(&device, &mut a, Distribution::Uniform, 5, 0, false)?;
/// fill_into(&device, &mut b, Distribution::Uniform, 5, 0, true)?; // the kernel
/// assert_eq!(a.read()?, b.read()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fill_into(
    device: &Device,
    out: &mut Buffer<f32>,
    distribution: Distribution,
    seed: u64,
    offset: u64,
    kernels_on_cpu: bool,
) -> Result<(), OpError> {
    check_range(out.len(), offset)?;
    if out.is_empty() {
        return Ok(());
    }
    if !device.is_gpu() && !kernels_on_cpu {
        let mut v = vec![0.0f32; out.len()];
        match distribution {
            Distribution::Uniform => host_fill(&mut v, seed, offset, |w| w.map(to_unit)),
            Distribution::Normal { mean, std } => host_fill(&mut v, seed, offset, |w| {
                let (r0, t0) = polar(w[0], w[1]);
                let (r1, t1) = polar(w[2], w[3]);
                [r0 * t0.cos(), r0 * t0.sin(), r1 * t1.cos(), r1 * t1.sin()].map(|z| z.mul_add(std, mean))
            }),
        }
        return Ok(out.write(&v)?);
    }
    let (mode, mean, std) = match distribution {
        Distribution::Uniform => (1, 0.0, 1.0),
        Distribution::Normal { mean, std } => (2, mean, std),
    };
    draw(device, out, mode, seed, offset, mean, std)
}

/// The kernels' launch for `out` (`u32`s or `f32`s, as bits): on a GPU,
/// `out` of whole vectors from an offset of whole blocks takes
/// [`philox_vec`] (one 16-byte store a thread, `out` seen as `UVec4`s),
/// anything else [`philox_words`]; on the CPU executor the words go
/// through a buffer of `u32`s.
#[allow(clippy::too_many_arguments)]
fn draw<T: Element>(
    device: &Device,
    out: &mut Buffer<T>,
    mode: u32,
    seed: u64,
    offset: u64,
    mean: f32,
    std: f32,
) -> Result<(), OpError> {
    let n = out.len();
    let (q, skip) = (offset / 4, (offset % 4) as u32);
    let (lo, hi, k0, k1) = (q as u32, (q >> 32) as u32, seed as u32, (seed >> 32) as u32);
    let int64 = has_int64(device);
    macro_rules! by_mode {
        (|$m:ident| $launch:expr) => {
            match mode {
                0 => {
                    const $m: u32 = 0;
                    $launch
                }
                1 => {
                    const $m: u32 = 1;
                    $launch
                }
                _ => {
                    const $m: u32 = 2;
                    $launch
                }
            }
        };
    }
    if device.is_gpu() && skip == 0 && n % 4 == 0 {
        let mut v = out.view_as_mut::<UVec4>()?;
        let grid = Grid::threads(n / 4);
        return Ok(if int64 {
            by_mode!(|M| philox_vec_64::launch::<M>(device, grid, &mut *v, lo, hi, k0, k1, mean, std))
        } else {
            by_mode!(|M| philox_vec::launch::<M>(device, grid, &mut *v, lo, hi, k0, k1, mean, std))
        }?);
    }
    // Whole blocks of 256 threads (each writes its block's 1024 words).
    let grid = Grid::threads((n + skip as usize).div_ceil(1024) * 256);
    let launch = |w: &mut Buffer<u32>| {
        if int64 {
            by_mode!(|M| philox_words_64::launch::<M>(device, grid, w, lo, hi, skip, k0, k1, mean, std))
        } else {
            by_mode!(|M| philox_words::launch::<M>(device, grid, w, lo, hi, skip, k0, k1, mean, std))
        }
    };
    if device.is_gpu() {
        return Ok(launch(&mut *out.view_as_mut::<u32>()?)?);
    }
    let mut words = Buffer::<u32>::zeroed(device, n)?;
    launch(&mut words)?;
    out.write(bytemuck::cast_slice(&words.read()?))?;
    Ok(())
}

/// Whether `device` has 64-bit integers (`SHADER_INT64`): then the
/// kernels multiply with them (`*_64`), else from 16-bit halves.
pub fn has_int64(device: &Device) -> bool {
    device.features().contains(onekernel_runtime::abi::Features::INT64)
}

/// Box–Muller's radius and angle from two words, as the kernel computes
/// them.
fn polar(w0: u32, w1: u32) -> (f32, f32) {
    let r = (-2.0 * (((w0 >> 8) + 1) as f32 * (1.0 / 16_777_216.0)).ln()).sqrt();
    (r, to_unit(w1) * std::f32::consts::TAU)
}

/// [`random_u32_into`], with `kernels_on_cpu` to run the kernel on the
/// CPU executor instead of plain Rust (for tests).
pub fn random_u32_with(
    device: &Device,
    out: &mut Buffer<u32>,
    seed: u64,
    offset: u64,
    kernels_on_cpu: bool,
) -> Result<(), OpError> {
    check_range(out.len(), offset)?;
    if out.is_empty() {
        return Ok(());
    }
    if !device.is_gpu() && !kernels_on_cpu {
        let mut v = vec![0u32; out.len()];
        host_fill(&mut v, seed, offset, |w| w);
        return Ok(out.write(&v)?);
    }
    draw(device, out, 0, seed, offset, 0.0, 1.0)
}

fn check_range(n: usize, offset: u64) -> Result<(), OpError> {
    // The per-thread block index is 32 bits within one call.
    if n as u64 / 4 >= u64::from(u32::MAX) || offset.checked_add(n as u64).is_none() {
        return Err(LaunchError::InvalidArgument {
            kernel: "ops::random",
            arg: "out",
            problem: format!("{n} numbers from offset {offset} run past the stream"),
        }
        .into());
    }
    Ok(())
}

/// Fills `out` with numbers `offset ..` of the `u32` stream of `seed`.
///
/// ```
/// use onekernel::prelude::*;
/// use onekernel::ops::random::random_u32_into;
/// let device = Device::cpu();
/// let mut all = Buffer::<u32>::zeroed(&device, 10)?;
/// random_u32_into(&device, &mut all, 42, 0)?;
/// // The same numbers drawn in two pieces.
/// let mut tail = Buffer::<u32>::zeroed(&device, 7)?;
/// random_u32_into(&device, &mut tail, 42, 3)?;
/// assert_eq!(all.read()?[3..], tail.read()?[..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn random_u32_into(device: &Device, out: &mut Buffer<u32>, seed: u64, offset: u64) -> Result<(), OpError> {
    random_u32_with(device, out, seed, offset, false)
}

/// Fills `out` with uniform `f32`s in `[0, 1)`: numbers `offset ..` of the
/// stream of `seed` (see the [module](self) docs).
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let mut u = Buffer::<f32>::zeroed(&device, 1000)?;
/// onekernel::ops::random::uniform_into(&device, &mut u, 7, 0)?;
/// let u = u.read()?;
/// assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
/// let mean = u.iter().sum::<f32>() / 1000.0;
/// assert!((mean - 0.5).abs() < 0.05);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn uniform_into(device: &Device, out: &mut Buffer<f32>, seed: u64, offset: u64) -> Result<(), OpError> {
    fill_into(device, out, Distribution::Uniform, seed, offset, false)
}

/// Fills `out` with normal `f32`s of mean `mean` and standard deviation
/// `std`: numbers `offset ..` of the stream of `seed`.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let mut z = Buffer::<f32>::zeroed(&device, 4000)?;
/// onekernel::ops::random::normal_into(&device, &mut z, 1, 0, 10.0, 2.0)?;
/// let z = z.read()?;
/// let mean = z.iter().sum::<f32>() / 4000.0;
/// assert!((mean - 10.0).abs() < 0.2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn normal_into(
    device: &Device,
    out: &mut Buffer<f32>,
    seed: u64,
    offset: u64,
    mean: f32,
    std: f32,
) -> Result<(), OpError> {
    fill_into(device, out, Distribution::Normal { mean, std }, seed, offset, false)
}

/// `n` uniform `f32`s in `[0, 1)` from offset 0 of the stream of `seed`,
/// in a new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let a = onekernel::ops::random::uniform(&device, 5, 3)?.read()?;
/// let b = onekernel::ops::random::uniform(&device, 5, 3)?.read()?;
/// assert_eq!(a, b);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn uniform(device: &Device, n: usize, seed: u64) -> Result<Buffer<f32>, OpError> {
    let mut out = Buffer::zeroed(device, n)?;
    uniform_into(device, &mut out, seed, 0)?;
    Ok(out)
}

/// `n` standard normal `f32`s from offset 0 of the stream of `seed`, in a
/// new buffer.
///
/// ```
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let z = onekernel::ops::random::normal(&device, 3, 9)?.read()?;
/// assert!(z.iter().all(|v| v.is_finite()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn normal(device: &Device, n: usize, seed: u64) -> Result<Buffer<f32>, OpError> {
    let mut out = Buffer::zeroed(device, n)?;
    normal_into(device, &mut out, seed, 0, 0.0, 1.0)?;
    Ok(out)
}
