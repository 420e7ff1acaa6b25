//! [`F16Vec2`] and [`F16Vec4`]: vectors of [`half::f16`] lanes, WGSL's
//! `vec2<f16>` and `vec4<f16>`.
//!
//! glam has no `f16` vectors, so these are onekernel's own, named and
//! shaped as glam's are (`I16Vec4`, `DVec4`): public lanes `x, y, (z, w)`,
//! `new`, `splat`, `ZERO`, `ONE`, lane-wise `+ - * /` (with a vector or an
//! `f16`), unary `-`, `dot`, `min`, `max`, `v[i]`, and the conversions to
//! and from glam's `f32` vectors. Their Rust layout is WGSL's (`F16Vec2`:
//! 4 bytes aligned to 4; `F16Vec4`: 8 bytes aligned to 8), so they are
//! buffer elements, shared-array elements and struct fields, and a host
//! turns `&[f16]` into them with `bytemuck::cast_slice` (no copy).
//!
//! Each lane of an operation rounds to `f16` as a scalar `f16` operation
//! does (half computes it in `f32` and rounds once, which for `+ - * /` is
//! the correctly rounded `f16` result). `dot` multiplies and adds in lane
//! order, rounding each step to `f16`; a GPU may fuse or reorder those
//! steps (docs/semantics.md).

use half::f16;
use std::ops::{Add, AddAssign, Div, DivAssign, Index, IndexMut, Mul, MulAssign, Neg, Sub, SubAssign};

macro_rules! f16_vector {
    (
        $(#[$doc:meta])*
        $name:ident, $n:literal lanes, align $align:literal, $glam:ident, $from:ident, $to:ident,
        [$first:ident $(, $lane:ident)*]
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(C, align($align))]
        pub struct $name {
            #[doc = concat!("Lane `", stringify!($first), "`.")]
            pub $first: f16,
            $(
                #[doc = concat!("Lane `", stringify!($lane), "`.")]
                pub $lane: f16,
            )*
        }

        impl $name {
            /// Every lane 0.
            pub const ZERO: Self = Self::splat(f16::ZERO);
            /// Every lane 1.
            pub const ONE: Self = Self::splat(f16::ONE);

            /// The vector of these lanes.
            pub const fn new($first: f16 $(, $lane: f16)*) -> Self {
                Self { $first $(, $lane)* }
            }

            /// The vector with `v` in every lane.
            pub const fn splat(v: f16) -> Self {
                Self { $first: v $(, $lane: v)* }
            }

            #[doc = concat!("Each lane of `v` rounded to `f16` (to nearest, ties to even; WGSL's `vec", stringify!($n), "<f16>(v)`).")]
            pub fn $from(v: glam::$glam) -> Self {
                Self { $first: f16::from_f32(v.$first) $(, $lane: f16::from_f32(v.$lane))* }
            }

            #[doc = concat!("Each lane as an `f32` (exact; WGSL's `vec", stringify!($n), "<f32>(h)`).")]
            pub fn $to(self) -> glam::$glam {
                glam::$glam::new(self.$first.to_f32() $(, self.$lane.to_f32())*)
            }

            /// The dot product: the lanes' products added in lane order,
            /// each step rounded to `f16`.
            pub fn dot(self, rhs: Self) -> f16 {
                self.$first * rhs.$first $(+ self.$lane * rhs.$lane)*
            }

            /// The smaller of each pair of lanes (`f16::min`: a NaN lane
            /// gives the other one).
            pub fn min(self, rhs: Self) -> Self {
                Self { $first: self.$first.min(rhs.$first) $(, $lane: self.$lane.min(rhs.$lane))* }
            }

            /// The larger of each pair of lanes (`f16::max`).
            pub fn max(self, rhs: Self) -> Self {
                Self { $first: self.$first.max(rhs.$first) $(, $lane: self.$lane.max(rhs.$lane))* }
            }

            fn lanes_mut(&mut self) -> &mut [f16] {
                bytemuck::cast_slice_mut(std::slice::from_mut(self))
            }

            fn lanes(&self) -> &[f16] {
                bytemuck::cast_slice(std::slice::from_ref(self))
            }
        }

        /// Lane `i`, as glam's vectors index.
        ///
        /// # Panics
        /// When `i` is not a lane.
        impl Index<usize> for $name {
            type Output = f16;
            fn index(&self, i: usize) -> &f16 {
                &self.lanes()[i]
            }
        }

        impl IndexMut<usize> for $name {
            fn index_mut(&mut self, i: usize) -> &mut f16 {
                &mut self.lanes_mut()[i]
            }
        }

        impl Neg for $name {
            type Output = Self;
            fn neg(self) -> Self {
                Self { $first: -self.$first $(, $lane: -self.$lane)* }
            }
        }

        f16_vector!(@op $name [$first $(, $lane)*] Add add AddAssign add_assign +);
        f16_vector!(@op $name [$first $(, $lane)*] Sub sub SubAssign sub_assign -);
        f16_vector!(@op $name [$first $(, $lane)*] Mul mul MulAssign mul_assign *);
        f16_vector!(@op $name [$first $(, $lane)*] Div div DivAssign div_assign /);
    };
    // One lane-wise operator: vector with vector, vector with `f16`, `f16`
    // with vector, and the compound assignments.
    (@op $name:ident [$($lane:ident),+] $tr:ident $m:ident $tra:ident $ma:ident $op:tt) => {
        impl $tr for $name {
            type Output = Self;
            fn $m(self, rhs: Self) -> Self {
                Self { $($lane: self.$lane $op rhs.$lane),+ }
            }
        }
        impl $tr<f16> for $name {
            type Output = Self;
            fn $m(self, rhs: f16) -> Self {
                Self { $($lane: self.$lane $op rhs),+ }
            }
        }
        impl $tr<$name> for f16 {
            type Output = $name;
            fn $m(self, rhs: $name) -> $name {
                $name { $($lane: self $op rhs.$lane),+ }
            }
        }
        impl $tra for $name {
            fn $ma(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
        impl $tra<f16> for $name {
            fn $ma(&mut self, rhs: f16) {
                *self = *self $op rhs;
            }
        }
    };
}

f16_vector!(
    /// Two `f16` lanes: WGSL's `vec2<f16>` (4 bytes, aligned to 4); as
    /// [`F16Vec4`] with two lanes.
    F16Vec2, 2 lanes, align 4, Vec2, from_vec2, to_vec2, [x, y]
);
f16_vector!(
    /// Four `f16` lanes: WGSL's `vec4<f16>` (8 bytes, aligned to 8).
    ///
    /// glam has no `f16` vectors: this is onekernel's own, named and shaped
    /// as glam's are (`I16Vec4`, `DVec4`), with a small API: public lanes,
    /// `new`, `splat`, `ZERO`, `ONE`, lane-wise `+ - * /` (with a vector or
    /// an `f16` on either side) and their `op=`, unary `-`, `==`, `v[i]`,
    /// `dot`, `min`, `max`, and [`F16Vec4::from_vec4`] / [`F16Vec4::to_vec4`]
    /// to and from glam's `Vec4`. Its Rust layout is WGSL's, so it is a
    /// buffer element, a shared-array element and a struct field, and a
    /// host turns `&[f16]` into it with `bytemuck::cast_slice` (no copy;
    /// the slice's length must be a multiple of 4 and its address of 8,
    /// as a `Vec<f16>`'s from the system allocator is; `cast_slice` panics
    /// otherwise):
    ///
    /// ```
    /// use onekernel_runtime::{half::f16, F16Vec4};
    ///
    /// let halves: Vec<f16> = (0..8).map(|i| f16::from_f32(i as f32)).collect();
    /// let vectors: &[F16Vec4] = bytemuck::cast_slice(&halves);
    /// assert_eq!(vectors[1].y, f16::from_f32(5.0));
    /// ```
    ///
    /// Each lane of an operation rounds to `f16` as a scalar `f16`
    /// operation does; `dot` multiplies and adds in lane order, rounding
    /// each step. A GPU may fuse or reorder those steps (docs/semantics.md).
    F16Vec4, 4 lanes, align 8, Vec4, from_vec4, to_vec4, [x, y, z, w]
);
#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: f32) -> f16 {
        f16::from_f32(v)
    }

    #[test]
    fn layout_is_wgsl() {
        assert_eq!((size_of::<F16Vec2>(), align_of::<F16Vec2>()), (4, 4));
        assert_eq!((size_of::<F16Vec4>(), align_of::<F16Vec4>()), (8, 8));
        let v = F16Vec4::new(h(1.0), h(2.0), h(3.0), h(4.0));
        let lanes: &[f16] = bytemuck::cast_slice(std::slice::from_ref(&v));
        assert_eq!(lanes, [h(1.0), h(2.0), h(3.0), h(4.0)]);
    }

    #[test]
    fn lane_wise_operations_round_each_lane() {
        let (a, b) = (F16Vec2::new(h(1.0), h(2048.0)), F16Vec2::new(h(0.5), h(1.0)));
        // 2048 + 1 is not an f16: it rounds to even.
        assert_eq!(a + b, F16Vec2::new(h(1.5), h(2048.0)));
        assert_eq!(a * h(2.0) - b, F16Vec2::new(h(1.5), h(4095.0)));
        assert_eq!(h(1.0) / b, F16Vec2::new(h(2.0), h(1.0)));
        assert_eq!(-a, F16Vec2::new(h(-1.0), h(-2048.0)));
        let mut c = F16Vec4::ONE;
        c += F16Vec4::splat(h(2.0));
        c /= h(2.0);
        c[3] = h(7.0);
        assert_eq!((c, c[0], c.dot(F16Vec4::ONE)), (F16Vec4::new(h(1.5), h(1.5), h(1.5), h(7.0)), h(1.5), h(11.5)));
        assert_eq!(a.min(b).max(F16Vec2::ZERO), F16Vec2::new(h(0.5), h(1.0)));
        let f = glam::Vec4::new(0.1, 1.0, 65520.0, -2.5);
        assert_eq!(F16Vec4::from_vec4(f).to_vec4(), glam::Vec4::new(h(0.1).to_f32(), 1.0, f32::INFINITY, -2.5));
    }
}
