// The kernel of `examples/gemm_f16.rs`, in a file of its own so that
// `examples/gpt.rs` runs the same kernel (both `include!` it; the book
// includes the part between the anchors).

// ANCHOR: kernel
#[onekernel::kernels]
mod gemm {
    use onekernel::prelude::*;
    use onekernel::tile::{mma, Accumulator, MatrixA, MatrixB};

    /// Rows of `C` a block computes.
    pub const BM: usize = 256;
    /// Columns of `C` a block computes.
    pub const BN: usize = 128;
    /// The step along `k`: columns of `A` (rows of `B`) staged per step.
    pub const BK: usize = 32;
    /// The side of a tensor-core tile.
    pub const T: usize = 16;
    /// `f16` values per `F16Vec4`: the kernel moves memory four values at a time.
    const L: usize = 4;
    /// A staged row of `A` in vectors: `BK / 4` and two more of padding, so that
    /// the 16 rows a tile load reads start in different shared-memory banks.
    const SA: usize = BK / L + 2;
    /// A staged row of `B` in vectors, padded the same way.
    const SB: usize = BN / L + 2;
    /// Vectors of `A` (of `B`) each of the 256 threads copies per step.
    const QA: usize = BM * BK / L / 256;
    const QB: usize = BK * BN / L / 256;

    /// `gemm_f16_t` at the block picked by hand for the H200 (256 × 128,
    /// 256 threads): `c = a × b` for row-major `a` (`m × k`), `b` (`k × n`),
    /// `c` (`m × n`), `a` and `b` as vectors of four `f16`; `m` a multiple
    /// of 256, `n` of 128, `k` of 32. Launch with
    /// `Grid::blocks([n / 128, m / 256])` (or `[n / 128, m / 256, splits]`:
    /// split `k`, see `gemm_f16_t`). Its shared arrays take 29 KiB:
    /// more than the 16 KiB every WebGPU device has, so the kernel says so
    /// (`max_shared_bytes`), and a launch on a device with less is an
    /// `Err`. One kernel: this is `gemm_f16_t::launch::<VALUES..>`.
    // Each program including this file uses some of these names.
    #[allow(dead_code)]
    pub mod gemm_f16 {
        use super::{BK, BM, BN, L, QA, QB, SA, SB};
        use onekernel::prelude::*;

        /// `gemm_f16_t`'s parameters for the 256 × 128 block, in order:
        /// `TBM`, `TBN`, `TSB`, `AS`, `BS`, `QA`, `QB`, `NT`, `WCOLS`.
        pub const VALUES: [usize; 9] = [BM, BN, SB, BM * SA, BK * SB, QA, QB, NT, BN / 64];
        /// Threads per block: a subgroup of 32 per 64 × 64 square.
        const NT: usize = BM / 64 * (BN / 64) * 32;
        const _: () = assert!(BN / L + 2 == SB && NT == 256);

        /// The kernel (`gemm_f16_t`'s description).
        pub static KERNEL: &onekernel::abi::KernelInfo = &super::gemm_f16_t::KERNEL;
        /// Its WGSL (`gemm_f16_t`'s, the parameters `override`s).
        pub const WGSL: &str = super::gemm_f16_t::WGSL;

        /// `gemm_f16_t::launch::<VALUES..>(..)`.
        pub fn launch(
            device: &Device,
            grid: impl Into<Grid>,
            a: &(impl onekernel::BufferArg<F16Vec4> + ?Sized),
            b: &(impl onekernel::BufferArg<F16Vec4> + ?Sized),
            c: &mut (impl onekernel::BufferArg<f32> + ?Sized),
            k: u32,
            n: u32,
        ) -> Result<(), onekernel::LaunchError> {
            const V: [usize; 9] = VALUES;
            super::gemm_f16_t::launch::<{ V[0] }, { V[1] }, { V[2] }, { V[3] }, { V[4] }, { V[5] }, { V[6] }, { V[7] }, { V[8] }>(
                device, grid, a, b, c, k, n,
            )
        }
    }

    /// The tensor-core GEMM with its block shape as parameters: a `TBM × TBN` block
    /// of `C` (`NT = TBM / 64 × TBN / 64 × 32` threads, a subgroup per 64 ×
    /// 64 square, `WCOLS = TBN / 64` of them a row), `B`'s staged rows
    /// `TSB = TBN / 4 + 2` vectors long, the shared arrays `AS = TBM × SA`
    /// and `BS = BK × TSB` vectors, and `QA`, `QB` vectors of `A` and `B`
    /// a thread copies per step. Launch with
    /// `Grid::blocks([n / TBN, m / TBM])`; `m`, `n` multiples of the block,
    /// `k` of 32.
    ///
    /// Split `k`: with `Grid::blocks([n / TBN, m / TBM, splits])`, block
    /// `z` sums only the `k / splits` columns of `a` (rows of `b`) from
    /// `z · k / splits` and writes its partial product to
    /// `c[z · m · n ..]` (`c` then holds `splits · m · n` values, which the
    /// caller adds up); `k / splits` a multiple of 32. More blocks for a
    /// product whose grid of blocks is small and whose `k` is long (GPT-2's
    /// prefill: 24 blocks of 256 × 128 for `n = 768`, on a GPU of 132
    /// multiprocessors). One split (`z` = 1) is the plain product.
    #[kernel(workgroup_size = NT, max_workgroup_invocations = 1024, max_shared_bytes = 49152)]
    pub fn gemm_f16_t<
        const TBM: usize,
        const TBN: usize,
        const TSB: usize,
        const AS: usize,
        const BS: usize,
        const QA: usize,
        const QB: usize,
        const NT: usize,
        const WCOLS: usize,
    >(
        a: &[F16Vec4],
        b: &[F16Vec4],
        c: &mut [f32],
        k: u32,
        n: u32,
    ) {
        let a_s = shared::<[F16Vec4; AS]>();
        let b_s = shared::<[F16Vec4; BS]>();
        let (k, n) = (k as usize, n as usize);
        let (kv, nv) = (k / L, n / L); // row lengths in vectors
        let t = thread_id().x;
        // The subgroup's 64 × 64 square of the block's `TBM × TBN`.
        let subgroup = t / 32;
        let (wr, wc) = (subgroup / WCOLS * 64, subgroup % WCOLS * 64);
        let (row0, col0) = (block_id().y * TBM, block_id().x * TBN);
        // This block's part of `k` (all of it without a split).
        let kc = k / grid_dim().z;
        let k0 = block_id().z * kc;
        // 4 × 4 accumulators: acc[i * 4 + j] is rows wr + 16i, columns wc + 16j.
        let mut acc = [Accumulator::<f32, T, T>::zeros(); 16];

        // The next step's vectors, loaded into registers while the tensor
        // cores work on this one. Thread t copies vectors t, t + NT, ... of
        // the block's staged tiles.
        let mut a_at = [0usize; QA];
        let mut b_at = [0usize; QB];
        let mut next_a = [F16Vec4::ZERO; QA];
        let mut next_b = [F16Vec4::ZERO; QB];
        #[unroll]
        for q in 0..QA {
            let e = t + q * NT;
            a_at[q] = (row0 + e / (BK / L)) * kv + k0 / L + e % (BK / L);
            next_a[q] = a[a_at[q]];
        }
        #[unroll]
        for q in 0..QB {
            let e = t + q * NT;
            b_at[q] = (k0 + e / (TBN / L)) * nv + col0 / L + e % (TBN / L);
            next_b[q] = b[b_at[q]];
        }
        let mut kk = 0;
        while kk < kc {
            #[unroll]
            for q in 0..QA {
                let e = t + q * NT;
                a_s[e / (BK / L) * SA + e % (BK / L)] = next_a[q];
            }
            #[unroll]
            for q in 0..QB {
                let e = t + q * NT;
                b_s[e / (TBN / L) * TSB + e % (TBN / L)] = next_b[q];
            }
            workgroup_barrier();
            let kn = kk + BK;
            if kn < kc {
                #[unroll]
                for q in 0..QA {
                    next_a[q] = a[a_at[q] + kn / L];
                }
                #[unroll]
                for q in 0..QB {
                    next_b[q] = b[b_at[q] + kn * nv];
                }
            }
            #[unroll]
            for s in 0..BK / T {
                // Tile offsets and strides count vectors, like indexing a_s.
                let b0 = MatrixB::<T, T>::load(&b_s, s * T * TSB + wc / L, TSB);
                let b1 = MatrixB::<T, T>::load(&b_s, s * T * TSB + (wc + T) / L, TSB);
                let b2 = MatrixB::<T, T>::load(&b_s, s * T * TSB + (wc + 2 * T) / L, TSB);
                let b3 = MatrixB::<T, T>::load(&b_s, s * T * TSB + (wc + 3 * T) / L, TSB);
                #[unroll]
                for i in 0..4 {
                    let ta = MatrixA::<T, T>::load(&a_s, (wr + i * T) * SA + s * T / L, SA);
                    acc[i * 4] = mma(ta, b0, acc[i * 4]);
                    acc[i * 4 + 1] = mma(ta, b1, acc[i * 4 + 1]);
                    acc[i * 4 + 2] = mma(ta, b2, acc[i * 4 + 2]);
                    acc[i * 4 + 3] = mma(ta, b3, acc[i * 4 + 3]);
                }
            }
            workgroup_barrier();
            kk = kn;
        }
        // The split's slice of `c` (`m · n` values each).
        let part = block_id().z * (grid_dim().y * TBM) * n;
        #[unroll]
        for i in 0..4 {
            #[unroll]
            for j in 0..4 {
                let at = part + (row0 + wr + i * T) * n + col0 + wc + j * T;
                acc[i * 4 + j].store(&mut c, at, n);
            }
        }
    }
}
// ANCHOR_END: kernel
