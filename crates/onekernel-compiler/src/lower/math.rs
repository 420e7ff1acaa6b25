//! Math methods: `x.sqrt()`, `a.min(b)`, ... → WGSL builtins, with exact
//! emulation where WGSL's builtin differs from Rust's method (`round`,
//! `signum`, `fract`, `powi`, integer `pow`). docs/semantics.md lists what
//! still differs.

use super::function::FnLowerer;
use crate::hir::MathOp;
use crate::types::Ty;
use naga::{
    BinaryOperator, Expression, Function, FunctionArgument, FunctionResult, Handle, Literal, LocalVariable,
    MathFunction, ScalarKind, Statement,
};

/// True for the methods lowered to a call of a generated function.
pub(super) fn needs_call(op: MathOp) -> bool {
    matches!(op, MathOp::Powi | MathOp::Pow)
}

impl FnLowerer<'_> {
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
                let one = self.f(1.0, span);
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
                let half = self.f(0.5, span);
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
            Powi | Pow => {
                let f = self.pow_function(op, ty);
                self.call(f, a.to_vec(), true, span).expect("pow has a result")
            }
        }
    }

    /// `powi` and integer `pow` by repeated squaring, the way compiler-rt's
    /// `__powisf2` (what `f32::powi` calls) does, so results match the CPU
    /// bit for bit. Generated once per module.
    fn pow_function(&mut self, op: MathOp, ty: Ty) -> Handle<Function> {
        let name = match op {
            MathOp::Powi => "powi".to_string(),
            _ => format!("pow_{}", if ty == Ty::Usize { "u32" } else { ty.rust_name() }),
        };
        if let Some(h) = self.mb.polyfills.get(&name) {
            return *h;
        }
        let exp_ty = if op == MathOp::Powi { Ty::I32 } else { Ty::U32 };
        let span = naga::Span::UNDEFINED;
        let base_t = self.mb.ty(ty);
        let exp_t = self.mb.ty(exp_ty);
        let u32_t = self.mb.ty(Ty::U32);
        let mut f = Function { name: Some(name.clone()), ..Function::default() };
        f.arguments.push(FunctionArgument { name: Some("pow_base".into()), ty: base_t, binding: None });
        f.arguments.push(FunctionArgument { name: Some("pow_exp".into()), ty: exp_t, binding: None });
        f.result = Some(FunctionResult { ty: base_t, binding: None });
        let lv = |f: &mut Function, n: &str, t| {
            f.local_variables.append(LocalVariable { name: Some(n.into()), ty: t, init: None }, span)
        };
        let (r, a, b) =
            (lv(&mut f, "pow_result", base_t), lv(&mut f, "pow_square", base_t), lv(&mut f, "pow_bits", u32_t));
        let e_ = &mut f.expressions;
        let mut body = naga::Block::new();
        let one = match ty {
            Ty::F32 => Literal::F32(1.0),
            Ty::I32 => Literal::I32(1),
            _ => Literal::U32(1),
        };
        let arg0 = e_.append(Expression::FunctionArgument(0), span);
        let arg1 = e_.append(Expression::FunctionArgument(1), span);
        let one_e = e_.append(Expression::Literal(one), span);
        let (rp, ap, bp) = (
            e_.append(Expression::LocalVariable(r), span),
            e_.append(Expression::LocalVariable(a), span),
            e_.append(Expression::LocalVariable(b), span),
        );
        let u1 = e_.append(Expression::Literal(Literal::U32(1)), span);
        let u0 = e_.append(Expression::Literal(Literal::U32(0)), span);
        body.push(Statement::Store { pointer: rp, value: one_e }, span);
        body.push(Statement::Store { pointer: ap, value: arg0 }, span);
        // n = |exp| as u32
        let start = e_.len();
        let n = if op == MathOp::Powi {
            let abs = e_.append(
                Expression::Math { fun: MathFunction::Abs, arg: arg1, arg1: None, arg2: None, arg3: None },
                span,
            );
            e_.append(Expression::As { expr: abs, kind: ScalarKind::Uint, convert: Some(4) }, span)
        } else {
            e_.append(Expression::As { expr: arg1, kind: ScalarKind::Uint, convert: Some(4) }, span)
        };
        body.push(Statement::Emit(e_.range_from(start)), span);
        body.push(Statement::Store { pointer: bp, value: n }, span);
        // loop { if n & 1 != 0 { r *= a } n >>= 1; if n == 0 { break } a *= a }
        let mut lb = naga::Block::new();
        let s = e_.len();
        let nv = e_.append(Expression::Load { pointer: bp }, span);
        let bit = e_.append(Expression::Binary { op: BinaryOperator::And, left: nv, right: u1 }, span);
        let odd = e_.append(Expression::Binary { op: BinaryOperator::NotEqual, left: bit, right: u0 }, span);
        lb.push(Statement::Emit(e_.range_from(s)), span);
        let mut mul = naga::Block::new();
        let s = e_.len();
        let rv = e_.append(Expression::Load { pointer: rp }, span);
        let av = e_.append(Expression::Load { pointer: ap }, span);
        let prod = e_.append(Expression::Binary { op: BinaryOperator::Multiply, left: rv, right: av }, span);
        mul.push(Statement::Emit(e_.range_from(s)), span);
        mul.push(Statement::Store { pointer: rp, value: prod }, span);
        lb.push(Statement::If { condition: odd, accept: mul, reject: naga::Block::new() }, span);
        let s = e_.len();
        let nv = e_.append(Expression::Load { pointer: bp }, span);
        let half = e_.append(Expression::Binary { op: BinaryOperator::ShiftRight, left: nv, right: u1 }, span);
        let done = e_.append(Expression::Binary { op: BinaryOperator::Equal, left: half, right: u0 }, span);
        lb.push(Statement::Emit(e_.range_from(s)), span);
        lb.push(Statement::Store { pointer: bp, value: half }, span);
        let mut brk = naga::Block::new();
        brk.push(Statement::Break, span);
        lb.push(Statement::If { condition: done, accept: brk, reject: naga::Block::new() }, span);
        let s = e_.len();
        let av = e_.append(Expression::Load { pointer: ap }, span);
        let sq = e_.append(Expression::Binary { op: BinaryOperator::Multiply, left: av, right: av }, span);
        lb.push(Statement::Emit(e_.range_from(s)), span);
        lb.push(Statement::Store { pointer: ap, value: sq }, span);
        body.push(Statement::Loop { body: lb, continuing: naga::Block::new(), break_if: None }, span);
        // powi with a negative exponent: 1 / r
        let zero = e_.append(Expression::Literal(Literal::I32(0)), span);
        let s = e_.len();
        let rv = e_.append(Expression::Load { pointer: rp }, span);
        let result = if op == MathOp::Powi {
            let neg = e_.append(Expression::Binary { op: BinaryOperator::Less, left: arg1, right: zero }, span);
            let inv = e_.append(Expression::Binary { op: BinaryOperator::Divide, left: one_e, right: rv }, span);
            e_.append(Expression::Select { condition: neg, accept: inv, reject: rv }, span)
        } else {
            rv
        };
        body.push(Statement::Emit(e_.range_from(s)), span);
        body.push(Statement::Return { value: Some(result) }, span);
        f.body = body;
        let h = self.mb.module.functions.append(f, span);
        self.mb.polyfills.insert(name, h);
        h
    }
}
