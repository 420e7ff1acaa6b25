//! Math methods: `x.sqrt()`, `a.min(b)`, ... → WGSL builtins, with exact
//! emulation where WGSL's builtin differs from Rust's method (`round`,
//! `signum`, `fract`, `powi`, integer `pow`). docs/semantics.md lists what
//! still differs.

use super::function::FnLowerer;
use crate::hir::MathOp;
use crate::types::{Ty, VecTy};
use naga::{BinaryOperator, Expression, Handle, Literal, MathFunction, ScalarKind};

/// True for the methods lowered to a call of a generated function.
pub(super) fn needs_call(op: MathOp) -> bool {
    matches!(op, MathOp::Powi | MathOp::Pow)
}

impl FnLowerer<'_> {
    /// The glam methods whose lowering on a vector differs from the
    /// scalar one's (the others are WGSL builtins that work lane-wise);
    /// None for those.
    fn vector_math(
        &mut self,
        op: MathOp,
        v: VecTy,
        a: &[Handle<Expression>],
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        use MathFunction as F;
        use MathOp::*;
        let x = a[0];
        let size = super::vector_size(v.size);
        let lane = |l: &mut Self, i: u32| l.add(Expression::AccessIndex { base: x, index: i }, span);
        // glam's order: `(x + y) + (z + w)` for four lanes (SIMD halves),
        // `(x + y) + z` for three.
        let fold = |l: &mut Self, op: BinaryOperator| {
            let (x0, y0) = (lane(l, 0), lane(l, 1));
            let xy = l.bin(op, x0, y0, span);
            match v.size {
                2 => xy,
                3 => {
                    let z = lane(l, 2);
                    l.bin(op, xy, z, span)
                }
                _ => {
                    let (z, w) = (lane(l, 2), lane(l, 3));
                    let zw = l.bin(op, z, w, span);
                    l.bin(op, xy, zw, span)
                }
            }
        };
        let fold_fn = |l: &mut Self, fun: F| {
            let (x0, y0) = (lane(l, 0), lane(l, 1));
            let xy = l.m(fun, &[x0, y0], span);
            match v.size {
                2 => xy,
                3 => {
                    let z = lane(l, 2);
                    l.m(fun, &[xy, z], span)
                }
                _ => {
                    let (z, w) = (lane(l, 2), lane(l, 3));
                    let zw = l.m(fun, &[z, w], span);
                    l.m(fun, &[xy, zw], span)
                }
            }
        };
        let splat = |l: &mut Self, value: Handle<Expression>| l.add(Expression::Splat { size, value }, span);
        Some(match op {
            Dot => self.m(F::Dot, a, span),
            Length => self.m(F::Length, a, span),
            LengthSquared => self.m(F::Dot, &[x, x], span),
            Normalize => self.m(F::Normalize, a, span),
            Distance => self.m(F::Distance, a, span),
            DistanceSquared => {
                let d = self.bin(BinaryOperator::Subtract, a[0], a[1], span);
                self.m(F::Dot, &[d, d], span)
            }
            ElementSum => fold(self, BinaryOperator::Add),
            ElementProduct => fold(self, BinaryOperator::Multiply),
            MinElement => fold_fn(self, F::Min),
            MaxElement => fold_fn(self, F::Max),
            // glam: `self * (1.0 - s) + rhs * s`.
            Lerp => {
                let one = self.f(1.0, span);
                let rest = self.bin(BinaryOperator::Subtract, one, a[2], span);
                let (rest, s) = (splat(self, rest), splat(self, a[2]));
                let p = self.bin(BinaryOperator::Multiply, a[0], rest, span);
                let q = self.bin(BinaryOperator::Multiply, a[1], s, span);
                self.bin(BinaryOperator::Add, p, q, span)
            }
            Cross => self.m(F::Cross, a, span),
            // `vec4<f16>(v)` rounds each lane to nearest even, as half's
            // `f16::from_f32` (Vulkan's default for OpFConvert);
            // `vec4<f32>(h)` is exact.
            FromVec2 | FromVec4 => {
                self.add(Expression::As { expr: x, kind: ScalarKind::Float, convert: Some(2) }, span)
            }
            ToVec2 | ToVec4 => self.add(Expression::As { expr: x, kind: ScalarKind::Float, convert: Some(4) }, span),
            Extend => {
                let ty = self.mb.ty(Ty::Vector(v.resized(v.size + 1).unaligned()));
                self.add(Expression::Compose { ty, components: a.to_vec() }, span)
            }
            Truncate => {
                let pattern = [
                    naga::SwizzleComponent::X,
                    naga::SwizzleComponent::Y,
                    naga::SwizzleComponent::Z,
                    naga::SwizzleComponent::W,
                ];
                self.add(Expression::Swizzle { size: super::vector_size(v.size - 1), vector: x, pattern }, span)
            }
            Recip => {
                let one = self.f(1.0, span);
                let one = splat(self, one);
                self.bin(BinaryOperator::Divide, one, x, span)
            }
            // As the scalar `round`, lane by lane (WGSL rounds to even).
            Round => {
                let t = self.m(F::Trunc, &[x], span);
                let diff = self.bin(BinaryOperator::Subtract, x, t, span);
                let dist = self.m(F::Abs, &[diff], span);
                let half = self.f(0.5, span);
                let half = splat(self, half);
                let away = self.bin(BinaryOperator::GreaterEqual, dist, half, span);
                let s = self.m(F::Sign, &[x], span);
                let up = self.bin(BinaryOperator::Add, t, s, span);
                self.add(Expression::Select { condition: away, accept: up, reject: t }, span)
            }
            _ => return None,
        })
    }

    fn m(&mut self, fun: MathFunction, args: &[Handle<Expression>], span: proc_macro2::Span) -> Handle<Expression> {
        self.add(
            Expression::Math { fun, arg: args[0], arg1: args.get(1).copied(), arg2: args.get(2).copied(), arg3: None },
            span,
        )
    }

    fn bin(
        &mut self,
        op: BinaryOperator,
        left: Handle<Expression>,
        right: Handle<Expression>,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        self.add(Expression::Binary { op, left, right }, span)
    }

    fn f(&mut self, v: f32, span: proc_macro2::Span) -> Handle<Expression> {
        self.literal(Literal::F32(v), span)
    }

    /// Lowers one math method; `ty` is the receiver's type.
    pub(crate) fn math(
        &mut self,
        op: MathOp,
        ty: Ty,
        a: &[Handle<Expression>],
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        use MathFunction as F;
        use MathOp::*;
        let x = a[0];
        if let Ty::Vector(v) = ty {
            if let Some(h) = self.vector_math(op, v, a, span) {
                return h;
            }
        }
        if let Some(r) = self.math_by_f32(op, ty, x, span) {
            return r;
        }
        match op {
            Abs => self.m(F::Abs, a, span),
            Sqrt => self.m(F::Sqrt, a, span),
            Exp => self.m(F::Exp, a, span),
            Exp2 => self.m(F::Exp2, a, span),
            Ln => self.m(F::Log, a, span),
            Log2 => self.m(F::Log2, a, span),
            Log10 => {
                let l = self.m(F::Log2, a, span);
                let k = self.f(std::f32::consts::LOG10_2, span);
                self.bin(BinaryOperator::Multiply, l, k, span)
            }
            Powf => self.m(F::Pow, a, span),
            Sin => self.m(F::Sin, a, span),
            Cos => self.m(F::Cos, a, span),
            Tan => self.m(F::Tan, a, span),
            Asin => self.m(F::Asin, a, span),
            Acos => self.m(F::Acos, a, span),
            Atan => self.m(F::Atan, a, span),
            Atan2 => self.m(F::Atan2, a, span),
            Sinh => self.m(F::Sinh, a, span),
            Cosh => self.m(F::Cosh, a, span),
            Tanh => self.m(F::Tanh, a, span),
            Floor => self.m(F::Floor, a, span),
            Ceil => self.m(F::Ceil, a, span),
            Trunc => self.m(F::Trunc, a, span),
            Min => self.m(F::Min, a, span),
            Max => self.m(F::Max, a, span),
            Clamp => self.m(F::Clamp, a, span),
            MulAdd => self
                .add(Expression::Math { fun: F::Fma, arg: a[0], arg1: Some(a[1]), arg2: Some(a[2]), arg3: None }, span),
            ToRadians => self.m(F::Radians, a, span),
            ToDegrees => self.m(F::Degrees, a, span),
            Recip => {
                let one = self.one(ty, span);
                self.bin(BinaryOperator::Divide, one, x, span)
            }
            Hypot => {
                let ty = self.mb.vec2_f32();
                let v = self.add(Expression::Compose { ty, components: vec![a[0], a[1]] }, span);
                self.m(F::Length, &[v], span)
            }
            // Rust rounds half away from zero; WGSL's round() to even.
            Round => {
                let t = self.m(F::Trunc, &[x], span);
                let diff = self.bin(BinaryOperator::Subtract, x, t, span);
                let dist = self.m(F::Abs, &[diff], span);
                let half = self.float(ty, 0.5, span);
                let away = self.bin(BinaryOperator::GreaterEqual, dist, half, span);
                let s = self.m(F::Sign, &[x], span);
                let up = self.bin(BinaryOperator::Add, t, s, span);
                self.add(Expression::Select { condition: away, accept: up, reject: t }, span)
            }
            // Rust: x - trunc(x); WGSL fract: x - floor(x).
            Fract => {
                let t = self.m(F::Trunc, &[x], span);
                self.bin(BinaryOperator::Subtract, x, t, span)
            }
            // Rust: ±1.0 by the sign bit (so signum(0.0) == 1.0), NaN stays
            // NaN; WGSL sign(0.0) is 0.0.
            Signum if ty == Ty::F32 => {
                let bits = self.add(Expression::As { expr: x, kind: ScalarKind::Uint, convert: None }, span);
                let mask = self.literal(Literal::U32(0x8000_0000), span);
                let sign = self.bin(BinaryOperator::And, bits, mask, span);
                let one = self.literal(Literal::U32(1.0f32.to_bits()), span);
                let or = self.bin(BinaryOperator::InclusiveOr, sign, one, span);
                let unit = self.add(Expression::As { expr: or, kind: ScalarKind::Float, convert: None }, span);
                let nan = self.is_nan(x, span);
                self.add(Expression::Select { condition: nan, accept: x, reject: unit }, span)
            }
            Signum => self.m(F::Sign, a, span),
            CountOnes | LeadingZeros | TrailingZeros => {
                let fun = match op {
                    CountOnes => F::CountOneBits,
                    LeadingZeros => F::CountLeadingZeros,
                    _ => F::CountTrailingZeros,
                };
                let r = self.m(fun, a, span);
                // Rust returns u32 whatever the receiver.
                self.convert(r, ty, Ty::U32, span)
            }
            ReverseBits => self.m(F::ReverseBits, a, span),
            WrappingAdd => self.bin(BinaryOperator::Add, a[0], a[1], span),
            WrappingSub => self.bin(BinaryOperator::Subtract, a[0], a[1], span),
            WrappingMul => self.bin(BinaryOperator::Multiply, a[0], a[1], span),
            // WGSL's `/` and `%` wrap `MIN / -1` as Rust's wrapping_ methods do.
            WrappingDiv => {
                self.check_divisor(a[1], ty, "wrapping_div", span);
                self.bin(BinaryOperator::Divide, a[0], a[1], span)
            }
            WrappingRem => {
                self.check_divisor(a[1], ty, "wrapping_rem", span);
                self.bin(BinaryOperator::Modulo, a[0], a[1], span)
            }
            WrappingNeg if ty.is_signed() => {
                self.add(Expression::Unary { op: naga::UnaryOperator::Negate, expr: x }, span)
            }
            WrappingNeg => {
                let zero = self.const_bits(ty, 0, span);
                self.bin(BinaryOperator::Subtract, zero, x, span)
            }
            // WGSL's abs(i32::MIN) is i32::MIN, as `wrapping_abs`.
            WrappingAbs if ty.is_signed() => self.m(F::Abs, a, span),
            WrappingAbs => x,
            RemEuclid => {
                self.check_divisor(a[1], ty, "rem_euclid", span);
                let r = self.bin(BinaryOperator::Modulo, a[0], a[1], span);
                match ty {
                    Ty::U32 | Ty::Usize | Ty::U64 => r,
                    Ty::F32 | Ty::F64 => {
                        let zero = self.float(ty, 0.0, span);
                        let neg = self.bin(BinaryOperator::Less, r, zero, span);
                        let b = self.m(F::Abs, &a[1..], span);
                        let up = self.bin(BinaryOperator::Add, r, b, span);
                        self.add(Expression::Select { condition: neg, accept: up, reject: r }, span)
                    }
                    _ => {
                        // r < 0: r + |b| (r - b when b < 0).
                        let zero = self.const_bits(ty, 0, span);
                        let neg = self.bin(BinaryOperator::Less, r, zero, span);
                        let b = self.m(F::Abs, &a[1..], span);
                        let up = self.bin(BinaryOperator::Add, r, b, span);
                        self.add(Expression::Select { condition: neg, accept: up, reject: r }, span)
                    }
                }
            }
            AbsDiff => {
                // As unsigned bits: the larger minus the smaller.
                let gt = self.bin(BinaryOperator::Greater, a[0], a[1], span);
                let (ua, ub) = (self.convert_bits(a[0], ty, span), self.convert_bits(a[1], ty, span));
                let d1 = self.bin(BinaryOperator::Subtract, ua, ub, span);
                let d2 = self.bin(BinaryOperator::Subtract, ub, ua, span);
                self.add(Expression::Select { condition: gt, accept: d1, reject: d2 }, span)
            }
            RotateLeft | RotateRight => {
                // WGSL takes shift amounts modulo 32, as `rotate_*` does.
                let bits = self.convert_bits(x, ty, span);
                let n = a[1];
                let thirty_two = self.literal(Literal::U32(32), span);
                let back = self.bin(BinaryOperator::Subtract, thirty_two, n, span);
                let (first, second) = if op == RotateLeft {
                    (BinaryOperator::ShiftLeft, BinaryOperator::ShiftRight)
                } else {
                    (BinaryOperator::ShiftRight, BinaryOperator::ShiftLeft)
                };
                let p = self.bin(first, bits, n, span);
                let q = self.bin(second, bits, back, span);
                let r = self.bin(BinaryOperator::InclusiveOr, p, q, span);
                if ty == Ty::I32 {
                    self.add(Expression::As { expr: r, kind: ScalarKind::Sint, convert: None }, span)
                } else {
                    r
                }
            }
            // On the bits: drivers may compile comparisons as if NaN did
            // not exist.
            IsNan => self.is_nan(x, span),
            IsFinite | IsInfinite => {
                let bits = self.add(Expression::As { expr: x, kind: ScalarKind::Uint, convert: None }, span);
                let mask = self.literal(Literal::U32(0x7fff_ffff), span);
                let magnitude = self.bin(BinaryOperator::And, bits, mask, span);
                let inf = self.literal(Literal::U32(0x7f80_0000), span);
                let op = if op == IsFinite { BinaryOperator::Less } else { BinaryOperator::Equal };
                self.bin(op, magnitude, inf, span)
            }
            ToBits => self.add(Expression::As { expr: x, kind: ScalarKind::Uint, convert: None }, span),
            FromBits => self.add(Expression::As { expr: x, kind: ScalarKind::Float, convert: None }, span),
            // half's conversions round to nearest, ties to even, as the
            // GPU's (Vulkan's default rounding mode for OpFConvert).
            F16FromF32 | F16FromF64 => self.convert(x, ty, Ty::F16, span),
            ToF32 => self.convert(x, Ty::F16, Ty::F32, span),
            ToF64 => self.convert(x, Ty::F16, Ty::F64, span),
            Cbrt => match self.polyfill("cbrt") {
                Some(f) => self.call(f, a.to_vec(), true, span).expect("cbrt has a result"),
                None => x,
            },
            Powi | Pow => {
                let name = match (op, ty) {
                    (Powi, _) => "powi",
                    (_, Ty::I32) => "pow_i32",
                    _ => "pow_u32",
                };
                match self.polyfill(name) {
                    Some(f) => self.call(f, a.to_vec(), true, span).expect("pow has a result"),
                    None => x,
                }
            }
            // Vector methods on a scalar: rustc rejects them, and typing
            // stops the lowering first.
            Dot | Length | LengthSquared | Normalize | Distance | DistanceSquared | ElementSum | ElementProduct
            | MinElement | MaxElement | Lerp | Cross | Extend | Truncate | FromVec2 | FromVec4 | ToVec2 | ToVec4 => x,
        }
    }

    /// The methods of `f16` and `f64` computed through `f32` (see
    /// [`FnLowerer::classify_as_f32`]): the sign and class tests, which
    /// work on `f32` bits so that no 16- or 64-bit integers are needed.
    /// None for every other method and type.
    fn math_by_f32(
        &mut self,
        op: MathOp,
        ty: Ty,
        x: Handle<Expression>,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        use MathOp::*;
        if !matches!(ty, Ty::F16 | Ty::F64) || !matches!(op, Signum | IsNan | IsFinite | IsInfinite) {
            return None;
        }
        // f64 → f32 keeps NaN and the sign of every value, so `signum` and
        // `is_nan` need no scaling; the class tests need it.
        let single = if matches!(op, Signum | IsNan) {
            self.add(Expression::As { expr: x, kind: ScalarKind::Float, convert: Some(4) }, span)
        } else {
            self.classify_as_f32(x, ty, span)
        };
        let r = self.math(op, Ty::F32, &[single], span);
        Some(if op == Signum { self.convert(r, Ty::F32, ty, span) } else { r })
    }
}
