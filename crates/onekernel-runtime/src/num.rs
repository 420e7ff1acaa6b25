//! The bounds of a generic kernel's element type: `fn axpy<T: Num>(..)`.
//!
//! Each trait is sealed and implemented for exactly the kernel scalar types
//! it names, so that `#[kernel]` can compile the kernel once per type of
//! the bound (and the kernel's `Instance` trait, implemented for each of
//! those types, picks the instantiation a launch runs), and rustc
//! type-checks the generic body once with the bound: a body that
//! uses something a type of the bound lacks is rustc's error at the
//! generic function, not a surprise at one instantiation.
//!
//! | Trait | Types | What a generic body may use |
//! |---|---|---|
//! | [`Num`] | `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64` | `+ - * / %` and their `=` forms, comparisons, `T::ZERO`, `T::ONE`, `T::MIN`, `T::MAX`, `min`, `max`, `clamp` |
//! | [`Float`] | `f32`, `f64` | [`Num`], unary `-`, `abs`, `sqrt`, `floor`, `ceil`, `round`, `trunc`, `fract`, `mul_add`, `signum`, `recip`, `is_nan`, `is_finite`, `is_infinite` |
//! | [`Int`] | `i32`, `u32`, `i64`, `u64` | [`Num`], `& \| ^ !`, `<< >>` by a `u32` and their `=` forms, `wrapping_add`, `wrapping_sub`, `wrapping_mul` |
//!
//! `f16` is a [`Num`] but not a [`Float`]: `half::f16` has none of the math
//! methods (`sqrt`, `abs`, ...), and a generic body must be Rust that every
//! type of its bound runs on the CPU. The methods live in the supertraits
//! [`NumMethods`], [`FloatMethods`] and [`IntMethods`], which the prelude
//! does not import: a type parameter bounded by `Num` sees them through
//! the bound, while a concrete `i32`'s `a.min(b)` stays `Ord::min`, not an
//! ambiguity between two traits in scope.

use crate::Element;
use core::fmt::Debug;
use core::ops::{
    Add, AddAssign, BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Div, DivAssign, Mul, MulAssign,
    Neg, Not, Rem, RemAssign, Shl, ShlAssign, Shr, ShrAssign, Sub, SubAssign,
};
use half::f16;
use onekernel_abi::ScalarType;

mod sealed {
    /// Only the kernel scalar types are element types.
    pub trait Sealed {}
}

/// The methods every [`Num`] has (see the [module](self) for why they are
/// a supertrait).
pub trait NumMethods: Sized {
    /// The smaller of two values (`f32::min`, `Ord::min`, ...).
    fn min(self, other: Self) -> Self;
    /// The larger of two values.
    fn max(self, other: Self) -> Self;
    /// `self` limited to `min..=max`.
    fn clamp(self, min: Self, max: Self) -> Self;
}

/// A kernel scalar type: `f32`, `i32`, `u32`, `f16`, `f64`, `i64` or
/// `u64`, the bound of a kernel generic over all of them.
///
/// A generic kernel, `fn axpy<T: Num>(..)`, is compiled once per type (see
/// `onekernel::kernel`); host code can be generic the same way:
///
/// ```
/// use onekernel_runtime::num::Num;
///
/// fn sum<T: Num>(xs: &[T]) -> T {
///     let mut acc = T::ZERO;
///     for &x in xs {
///         acc += x;
///     }
///     acc
/// }
///
/// assert_eq!(sum(&[1u32, 2, 3]), 6);
/// assert_eq!(sum(&[0.5f64, 0.25]), 0.75);
/// ```
pub trait Num:
    sealed::Sealed
    + Element
    + Copy
    + Debug
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + RemAssign
    + NumMethods
    + 'static
{
    /// `0`.
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// The smallest finite value (`f32::MIN`, `i32::MIN`, `0` for unsigned
    /// types).
    const MIN: Self;
    /// The largest finite value.
    const MAX: Self;
    /// Which type this is, as the compiler–runtime contract names it
    /// (`KernelInfo` describes parameters with it).
    const SCALAR: ScalarType;
}

/// The math methods every [`Float`] has, each the kernel builtin of the
/// same name.
// The `is_*` tests take `self` like `f32::is_nan`: `Float` types are `Copy`.
#[allow(clippy::wrong_self_convention)]
pub trait FloatMethods: Sized {
    /// `|self|`.
    fn abs(self) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// Rounds toward −∞.
    fn floor(self) -> Self;
    /// Rounds toward +∞.
    fn ceil(self) -> Self;
    /// Rounds half away from zero.
    fn round(self) -> Self;
    /// Rounds toward zero.
    fn trunc(self) -> Self;
    /// `self - self.trunc()`.
    fn fract(self) -> Self;
    /// `self * a + b` (fused where the hardware fuses).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `1`, `-1` or NaN.
    fn signum(self) -> Self;
    /// `1 / self`.
    fn recip(self) -> Self;
    /// Whether this is NaN.
    fn is_nan(self) -> bool;
    /// Whether this is neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// Whether this is ±∞.
    fn is_infinite(self) -> bool;
}

/// A floating-point kernel type with the math methods: `f32` or `f64`
/// (see the [module](self) for why not `f16`).
pub trait Float: Num + Neg<Output = Self> + FloatMethods {}

/// The methods every [`Int`] has.
pub trait IntMethods: Sized {
    /// `self + other`, wrapping around at the type's bounds.
    fn wrapping_add(self, other: Self) -> Self;
    /// `self - other`, wrapping.
    fn wrapping_sub(self, other: Self) -> Self;
    /// `self * other`, wrapping.
    fn wrapping_mul(self, other: Self) -> Self;
}

/// An integer kernel type: `i32`, `u32`, `i64` or `u64`.
pub trait Int:
    Num
    + Eq
    + Ord
    + Not<Output = Self>
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
    + ShlAssign<u32>
    + ShrAssign<u32>
    + IntMethods
{
}

macro_rules! num {
    ($($t:ty => $scalar:ident, $zero:expr, $one:expr, $cmp:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl NumMethods for $t {
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                $cmp::min(self, other)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                $cmp::max(self, other)
            }
            #[inline(always)]
            fn clamp(self, min: Self, max: Self) -> Self {
                $cmp::clamp(self, min, max)
            }
        }
        impl Num for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
            const SCALAR: ScalarType = ScalarType::$scalar;
        }
    )*};
}

// `min`, `max` and `clamp` are the floats' own methods and the integers'
// `Ord` ones: what a concrete kernel's `a.min(b)` calls.
num! {
    f32 => F32, 0.0, 1.0, f32;
    i32 => I32, 0, 1, Ord;
    u32 => U32, 0, 1, Ord;
    f16 => F16, f16::ZERO, f16::ONE, f16;
    f64 => F64, 0.0, 1.0, f64;
    i64 => I64, 0, 1, Ord;
    u64 => U64, 0, 1, Ord;
}

macro_rules! float {
    ($($t:ty),*) => {$(
        impl FloatMethods for $t {
            #[inline(always)]
            fn abs(self) -> Self { <$t>::abs(self) }
            #[inline(always)]
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            #[inline(always)]
            fn floor(self) -> Self { <$t>::floor(self) }
            #[inline(always)]
            fn ceil(self) -> Self { <$t>::ceil(self) }
            #[inline(always)]
            fn round(self) -> Self { <$t>::round(self) }
            #[inline(always)]
            fn trunc(self) -> Self { <$t>::trunc(self) }
            #[inline(always)]
            fn fract(self) -> Self { <$t>::fract(self) }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self { <$t>::mul_add(self, a, b) }
            #[inline(always)]
            fn signum(self) -> Self { <$t>::signum(self) }
            #[inline(always)]
            fn recip(self) -> Self { <$t>::recip(self) }
            #[inline(always)]
            fn is_nan(self) -> bool { <$t>::is_nan(self) }
            #[inline(always)]
            fn is_finite(self) -> bool { <$t>::is_finite(self) }
            #[inline(always)]
            fn is_infinite(self) -> bool { <$t>::is_infinite(self) }
        }
        impl Float for $t {}
    )*};
}

float!(f32, f64);

macro_rules! int {
    ($($t:ty),*) => {$(
        impl IntMethods for $t {
            #[inline(always)]
            fn wrapping_add(self, other: Self) -> Self { <$t>::wrapping_add(self, other) }
            #[inline(always)]
            fn wrapping_sub(self, other: Self) -> Self { <$t>::wrapping_sub(self, other) }
            #[inline(always)]
            fn wrapping_mul(self, other: Self) -> Self { <$t>::wrapping_mul(self, other) }
        }
        impl Int for $t {}
    )*};
}

int!(i32, u32, i64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    fn sum<T: Num>(xs: &[T]) -> T {
        let mut acc = T::ZERO;
        for &x in xs {
            acc += x;
        }
        acc
    }

    #[test]
    fn the_bounds_compute_as_the_types_do() {
        assert_eq!(sum(&[1.5f32, 2.0]), 3.5);
        assert_eq!(sum(&[f16::ONE, f16::ONE]), f16::from_f32(2.0));
        assert_eq!(IntMethods::wrapping_add(u64::MAX, 1), 0);
        assert_eq!(NumMethods::clamp(7i32, 0, 5), 5);
        assert_eq!(FloatMethods::mul_add(2.0f64, 3.0, 1.0), 7.0);
        assert_eq!(<u32 as Num>::SCALAR, ScalarType::U32);
    }
}
