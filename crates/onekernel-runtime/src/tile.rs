//! Matrix tiles: the kernel language's tensor-core operands
//! (`onekernel::tile`).
//!
//! In a `#[kernel]`, a tile is held by a whole subgroup together: on the GPU
//! it is a cooperative matrix (Vulkan's `VK_KHR_cooperative_matrix`, the
//! tensor cores of NVIDIA GPUs), spread over the subgroup's registers in a
//! layout only the driver knows. On the CPU executor each invocation holds
//! the whole tile as a small matrix of these types, and the operations are
//! computed exactly as documented here (docs/semantics.md):
//!
//! * a load reads every element from memory (each invocation of the
//!   subgroup reads the same elements);
//! * [`mma`] computes `a·b + c` element by element in `f32`: for each
//!   (i, j), `c[i][j]` (converted to `f32`) plus the products
//!   `a[i][k] · b[k][j]` for k = 0, 1, ..., K-1 in that order, each product
//!   exact (two `f16`s multiply exactly in `f32`), each addition rounded to
//!   `f32`; an `f16` accumulator is rounded to `f16` once, at the end;
//! * a store writes each element once: lane `l` of an `n`-lane subgroup
//!   writes the elements `l, l + n, l + 2n, ...` (row-major numbering), as
//!   the GPU's lanes each write their own share, so the stores of a
//!   subgroup never race with each other.
//!
//! The GPU adds the K products in an order (and with an internal precision)
//! the hardware chooses, so its results may differ from the CPU's by
//! rounding.
//!
//! Outside a kernel the types are plain matrices: [`MatrixA::from_fn`],
//! [`mma`] and [`Accumulator::get`] compute a tile product on the host.

use crate::{F16Vec2, F16Vec4};
use half::f16;

/// Memory a tile is loaded from: a slice of the tile's element type, or
/// (for `f16` tiles) a slice of `f16` vectors read as its flat lanes, as
/// the GPU's cooperative load reads a pointer into a `vec4<f16>` array.
/// `offset` and `stride` count the slice's elements (vectors); row r of
/// a row-major tile starts at lane `(offset + r * stride) * LANES`.
pub trait TileMemory<E> {
    /// Lanes per element of the slice: 1 for scalars, 2 or 4 for vectors.
    const LANES: usize;
    /// The `i`-th lane, counting every element's lanes in order.
    ///
    /// # Panics
    /// When `i` is outside the memory.
    fn lane(&self, i: usize) -> E;
}

impl<E: Copy> TileMemory<E> for [E] {
    const LANES: usize = 1;
    fn lane(&self, i: usize) -> E {
        self[i]
    }
}

impl TileMemory<f16> for [F16Vec2] {
    const LANES: usize = 2;
    fn lane(&self, i: usize) -> f16 {
        self[i / 2][i % 2]
    }
}

impl TileMemory<f16> for [F16Vec4] {
    const LANES: usize = 4;
    fn lane(&self, i: usize) -> f16 {
        self[i / 4][i % 4]
    }
}

// What a call passes for a slice: a `Vec`, an array (a kernel's shared
// array), or a reference to one (`&buf` of a `&[T]` parameter), as deref
// coercion would have reached the slice.
macro_rules! tile_memory_through {
    ($($elem:ty => $e:ty),*) => {$(
        impl<const N: usize> TileMemory<$e> for [$elem; N] {
            const LANES: usize = <[$elem] as TileMemory<$e>>::LANES;
            fn lane(&self, i: usize) -> $e {
                self[..].lane(i)
            }
        }
        impl TileMemory<$e> for Vec<$elem> {
            const LANES: usize = <[$elem] as TileMemory<$e>>::LANES;
            fn lane(&self, i: usize) -> $e {
                self[..].lane(i)
            }
        }
    )*};
}
tile_memory_through!(f16 => f16, f32 => f32, F16Vec2 => f16, F16Vec4 => f16);

impl<E, M: TileMemory<E> + ?Sized> TileMemory<E> for &M {
    const LANES: usize = M::LANES;
    fn lane(&self, i: usize) -> E {
        (**self).lane(i)
    }
}

impl<E, M: TileMemory<E> + ?Sized> TileMemory<E> for &mut M {
    const LANES: usize = M::LANES;
    fn lane(&self, i: usize) -> E {
        (**self).lane(i)
    }
}

/// The element type of an [`Accumulator`]: `f32` or `f16`.
pub trait TileElement: Copy + Default + Send + Sync + 'static {
    /// The value in `f32` (exact for both).
    fn to_f32(self) -> f32;
    /// The value rounded from `f32` (round to nearest even).
    fn from_f32(v: f32) -> Self;
}

impl TileElement for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> Self {
        v
    }
}

impl TileElement for f16 {
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}

macro_rules! tile_type {
    ($(#[$doc:meta])* $name:ident <$(type $t:ident,)? const $r:ident, const $c:ident>, $elem:ty, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name<$($t: TileElement,)? const $r: usize, const $c: usize> {
            elems: [[$elem; $c]; $r],
        }

        impl<$($t: TileElement,)? const $r: usize, const $c: usize> $name<$($t,)? $r, $c> {
            #[doc = concat!("The ", $what, " whose element (r, c) is `f(r, c)`: how the CPU executor loads it.")]
            pub fn from_fn(mut f: impl FnMut(usize, usize) -> $elem) -> Self {
                Self { elems: std::array::from_fn(|r| std::array::from_fn(|c| f(r, c))) }
            }

            /// Element (r, c).
            ///
            /// # Panics
            /// When `r` or `c` is outside the tile.
            pub fn get(&self, r: usize, c: usize) -> $elem {
                self.elems[r][c]
            }

            #[doc = concat!("Loads the ", $what, " from `mem`: element (r, c) is `mem[offset + r * stride + c]` (row-major, `stride` the leading dimension). In a kernel, `mem` may also be a shared array, and every invocation of the subgroup must reach the load together (it is checked like a barrier).")]
            ///
            /// `mem` may also be an array of `f16` vectors ([`F16Vec4`],
            /// [`F16Vec2`]): `offset` and `stride` then count vectors, as
            /// indexing the array does, and row r starts at its lane
            /// `(offset + r * stride) * LANES` (see [`TileMemory`]).
            ///
            /// # Panics
            /// When an element is outside `mem`.
            pub fn load<Mem: TileMemory<$elem> + ?Sized>(mem: &Mem, offset: usize, stride: usize) -> Self {
                let l = Mem::LANES;
                Self::from_fn(|r, c| mem.lane((offset + r * stride) * l + c))
            }

            #[doc = concat!("Loads the ", $what, " stored column by column: element (r, c) is `mem[offset + c * stride + r]` (with vectors, lane `(offset + c * stride) * LANES + r`).")]
            ///
            /// # Panics
            /// When an element is outside `mem`.
            pub fn load_col_major<Mem: TileMemory<$elem> + ?Sized>(mem: &Mem, offset: usize, stride: usize) -> Self {
                let l = Mem::LANES;
                Self::from_fn(|r, c| mem.lane((offset + c * stride) * l + r))
            }
        }
    };
}

tile_type!(
    /// The left operand of a tile product, an M×K tile of `f16`
    /// (CUDA's `wmma::fragment<matrix_a, ..>`, naga's `coop_mat<f16, A>`).
    /// See the [module](self) for its semantics.
    MatrixA<const M, const K>, f16, "A tile"
);
tile_type!(
    /// The right operand of a tile product, a K×N tile of `f16`
    /// (naga's `coop_mat<f16, B>`). See the [module](self).
    MatrixB<const K, const N>, f16, "B tile"
);
tile_type!(
    /// An M×N accumulator tile of `T` (`f32` or `f16`): the `c` and the
    /// result of [`mma`] (naga's `coop_mat<T, C>`). See the [module](self).
    Accumulator<type T, const M, const N>, T, "accumulator"
);

impl<T: TileElement, const M: usize, const N: usize> Accumulator<T, M, N> {
    /// The tile of zeros: the usual start of a sum of products.
    pub fn zeros() -> Self {
        Self { elems: [[T::default(); N]; M] }
    }

    /// Stores the tile to `mem`: element (r, c) to `mem[offset + r * stride + c]`.
    /// In a kernel, `mem` may also be a `&mut [T]` parameter or a shared
    /// array, and every invocation of the subgroup must reach the store
    /// together; each writes its share of the elements.
    ///
    /// # Panics
    /// When an element is outside `mem`.
    pub fn store(&self, mem: &mut [T], offset: usize, stride: usize) {
        self.for_lane(0, 1, |r, c, v| mem[offset + r * stride + c] = v);
    }

    /// Stores the tile column by column: element (r, c) to `mem[offset + c * stride + r]`.
    ///
    /// # Panics
    /// When an element is outside `mem`.
    pub fn store_col_major(&self, mem: &mut [T], offset: usize, stride: usize) {
        self.for_lane(0, 1, |r, c, v| mem[offset + c * stride + r] = v);
    }

    /// Calls `f(r, c, value)` for the elements lane `lane` of a `lanes`-lane
    /// subgroup stores: `lane, lane + lanes, ...` in row-major order.
    #[doc(hidden)]
    pub fn for_lane(&self, lane: usize, lanes: usize, mut f: impl FnMut(usize, usize, T)) {
        for e in (lane..M * N).step_by(lanes.max(1)) {
            f(e / N, e % N, self.elems[e / N][e % N]);
        }
    }
}

/// `a·b + c`: the tile product on tensor cores (CUDA's `wmma::mma_sync`,
/// naga's `coopMultiplyAdd`). `a` is M×K, `b` K×N and `c` M×N; devices
/// offer M×N×K of 16×16×16, 16×8×16 and 16×8×8.
///
/// On the CPU each element is `c[i][j]` plus `a[i][k]·b[k][j]` for k
/// ascending, in `f32` (each product exact, each sum rounded), rounded
/// once to `T`. In a kernel every invocation of the subgroup must reach it
/// together.
pub fn mma<T: TileElement, const M: usize, const N: usize, const K: usize>(
    a: MatrixA<M, K>,
    b: MatrixB<K, N>,
    c: Accumulator<T, M, N>,
) -> Accumulator<T, M, N> {
    // Each input converted once (not once a product: in a debug build the
    // conversions were 3/4 of the CPU executor's time in tile-heavy tests).
    let a: [[f32; K]; M] = std::array::from_fn(|i| std::array::from_fn(|k| a.elems[i][k].to_f32()));
    let b: [[f32; N]; K] = std::array::from_fn(|k| std::array::from_fn(|j| b.elems[k][j].to_f32()));
    Accumulator::from_fn(|i, j| {
        let mut sum = c.elems[i][j].to_f32();
        for k in 0..K {
            sum += a[i][k] * b[k][j];
        }
        T::from_f32(sum)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mma_is_the_matrix_product_in_k_order() {
        let a = MatrixA::<16, 8>::from_fn(|r, c| f16::from_f32((r * 8 + c) as f32 / 64.0));
        let b = MatrixB::<8, 16>::from_fn(|r, c| f16::from_f32(c as f32 - r as f32));
        let c = Accumulator::<f32, 16, 16>::from_fn(|r, c| (r + c) as f32);
        let d = mma(a, b, c);
        for i in 0..16 {
            for j in 0..16 {
                let mut want = (i + j) as f32;
                for k in 0..8 {
                    want += a.get(i, k).to_f32() * b.get(k, j).to_f32();
                }
                assert_eq!(d.get(i, j), want);
            }
        }
        let mut out = vec![0.0f32; 16 * 20];
        d.store(&mut out, 4, 20);
        assert_eq!(Accumulator::<f32, 16, 16>::load(&out, 4, 20), d);
        out.fill(0.0);
        d.store_col_major(&mut out, 0, 16);
        assert_eq!(Accumulator::<f32, 16, 16>::load_col_major(&out, 0, 16), d);
    }

    #[test]
    fn vector_memory_is_read_as_its_lanes() {
        let flat: Vec<f16> = (0..16 * 24).map(|i| f16::from_f32(i as f32)).collect();
        let v4: &[F16Vec4] = bytemuck::cast_slice(&flat);
        let v2: &[F16Vec2] = bytemuck::cast_slice(&flat);
        // Offset and stride in vectors: 2 and 6 vec4s are lanes 8 and 24.
        let a = MatrixA::<16, 16>::load(&flat[..], 8, 24);
        assert_eq!(MatrixA::<16, 16>::load(v4, 2, 6), a);
        assert_eq!(MatrixA::<16, 16>::load(v2, 4, 12), a);
        let b = MatrixB::<16, 16>::load_col_major(&flat[..], 4, 24);
        assert_eq!(MatrixB::<16, 16>::load_col_major(v4, 1, 6), b);
    }

    #[test]
    fn lanes_store_each_element_once() {
        let t = Accumulator::<f16, 16, 8>::from_fn(|r, c| f16::from_f32((r * 8 + c) as f32));
        let mut seen = vec![0u32; 128];
        for lane in 0..32 {
            t.for_lane(lane, 32, |r, c, v| {
                assert_eq!(v.to_f32(), (r * 8 + c) as f32);
                seen[r * 8 + c] += 1;
            });
        }
        assert!(seen.iter().all(|&n| n == 1));
    }
}
