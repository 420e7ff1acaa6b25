//! Constant folding of 64-bit literals (`i64`, `u64`, `f64`).
//!
//! naga 30's constant evaluator, which its WGSL front end runs on every
//! expression whose operands are constants, has no `f64` math functions
//! and no conversions from 64-bit literals: `abs(2.5lf)` or `i32(5li)` in
//! the WGSL we write would not parse back (wgpu compiles that text). So
//! such expressions never reach the WGSL: they are computed here, as the
//! GPU computes them (wrapping integer arithmetic, Rust's `as` rules, which
//! the lowering's saturating conversions spell out anyway). What is not
//! folded here naga evaluates itself or leaves to run time.

use naga::{Arena, BinaryOperator as B, Expression, Handle, Literal, MathFunction as M, ScalarKind};

/// The literal `e` computes, when its operands are literals and one of
/// them, or its result, is 64-bit; None otherwise.
pub(super) fn fold(exprs: &Arena<Expression>, e: &Expression) -> Option<Literal> {
    let lit = |h: Handle<Expression>| match exprs[h] {
        Expression::Literal(l) => Some(l),
        _ => None,
    };
    match *e {
        Expression::Binary { op, left, right } => binary(op, lit(left)?, lit(right)?),
        Expression::Math { fun, arg, arg1, arg2, arg3: None } => {
            let a = lit(arg)?;
            let b = arg1.map(lit);
            let c = arg2.map(lit);
            math(fun, a, b.map(|x| x.ok_or(())), c.map(|x| x.ok_or(())))
        }
        Expression::As { expr, kind, convert } => convert_literal(lit(expr)?, kind, convert),
        // The saturating conversions select between literals.
        Expression::Select { condition, accept, reject } => match (lit(condition)?, lit(accept)?, lit(reject)?) {
            (Literal::Bool(c), a @ (Literal::F64(_) | Literal::I64(_) | Literal::U64(_)), r) => {
                Some(if c { a } else { r })
            }
            _ => None,
        },
        _ => None,
    }
}

fn binary(op: B, a: Literal, b: Literal) -> Option<Literal> {
    use Literal as L;
    Some(match (a, b) {
        (L::I64(a), L::I64(b)) => match op {
            B::Add => L::I64(a.wrapping_add(b)),
            B::Subtract => L::I64(a.wrapping_sub(b)),
            B::Multiply => L::I64(a.wrapping_mul(b)),
            B::Divide if b != 0 => L::I64(a.wrapping_div(b)),
            B::Modulo if b != 0 => L::I64(a.wrapping_rem(b)),
            B::And => L::I64(a & b),
            B::InclusiveOr => L::I64(a | b),
            B::ExclusiveOr => L::I64(a ^ b),
            _ => L::Bool(compare(op, a.cmp(&b))?),
        },
        (L::U64(a), L::U64(b)) => match op {
            B::Add => L::U64(a.wrapping_add(b)),
            B::Subtract => L::U64(a.wrapping_sub(b)),
            B::Multiply => L::U64(a.wrapping_mul(b)),
            B::Divide if b != 0 => L::U64(a / b),
            B::Modulo if b != 0 => L::U64(a % b),
            B::And => L::U64(a & b),
            B::InclusiveOr => L::U64(a | b),
            B::ExclusiveOr => L::U64(a ^ b),
            _ => L::Bool(compare(op, a.cmp(&b))?),
        },
        (L::I64(a), L::U32(n)) => match op {
            B::ShiftLeft => L::I64(a.wrapping_shl(n)),
            B::ShiftRight => L::I64(a.wrapping_shr(n)),
            _ => return None,
        },
        (L::U64(a), L::U32(n)) => match op {
            B::ShiftLeft => L::U64(a.wrapping_shl(n)),
            B::ShiftRight => L::U64(a.wrapping_shr(n)),
            _ => return None,
        },
        // `%` is WGSL's truncated remainder: left to run time.
        (L::F64(a), L::F64(b)) => match op {
            B::Add => L::F64(a + b),
            B::Subtract => L::F64(a - b),
            B::Multiply => L::F64(a * b),
            B::Divide => L::F64(a / b),
            _ => L::Bool(compare(op, a.partial_cmp(&b)?)?),
        },
        _ => return None,
    })
    .filter(finite)
}

fn compare(op: B, o: std::cmp::Ordering) -> Option<bool> {
    use std::cmp::Ordering::*;
    Some(match op {
        B::Equal => o == Equal,
        B::NotEqual => o != Equal,
        B::Less => o == Less,
        B::LessEqual => o != Greater,
        B::Greater => o == Greater,
        B::GreaterEqual => o != Less,
        _ => return None,
    })
}

/// naga literals may not be NaN or infinite.
fn finite(l: &Literal) -> bool {
    match *l {
        Literal::F64(v) => v.is_finite(),
        Literal::F32(v) => v.is_finite(),
        Literal::F16(v) => v.is_finite(),
        _ => true,
    }
}

type Arg = Option<Result<Literal, ()>>;

fn math(fun: M, a: Literal, b: Arg, c: Arg) -> Option<Literal> {
    use Literal as L;
    let b = b.transpose().ok()?;
    let c = c.transpose().ok()?;
    Some(match (a, b, c) {
        (L::F64(x), None, None) => L::F64(match fun {
            M::Abs => x.abs(),
            M::Sqrt => x.sqrt(),
            M::Floor => x.floor(),
            M::Ceil => x.ceil(),
            M::Trunc => x.trunc(),
            M::Sign if x == 0.0 => 0.0,
            M::Sign => x.signum(),
            _ => return None,
        }),
        (L::F64(x), Some(L::F64(y)), None) => L::F64(match fun {
            M::Min => x.min(y),
            M::Max => x.max(y),
            _ => return None,
        }),
        (L::F64(x), Some(L::F64(y)), Some(L::F64(z))) => L::F64(match fun {
            M::Clamp if y <= z => x.max(y).min(z),
            M::Fma => x.mul_add(y, z),
            _ => return None,
        }),
        _ => return None,
    })
    .filter(finite)
}

/// `as` on a literal, when the literal or the result is 64-bit: `convert`
/// is the result's width (None: a bitcast of the same width).
fn convert_literal(l: Literal, kind: ScalarKind, convert: Option<u8>) -> Option<Literal> {
    use Literal as L;
    let wide = |l: &Literal| matches!(l, L::F64(_) | L::I64(_) | L::U64(_));
    if !wide(&l) && convert != Some(8) {
        return None;
    }
    let out = match convert {
        None => match (l, kind) {
            (L::F64(v), ScalarKind::Uint) => L::U64(v.to_bits()),
            (L::F64(v), ScalarKind::Sint) => L::I64(v.to_bits() as i64),
            (L::U64(v), ScalarKind::Float) => L::F64(f64::from_bits(v)),
            (L::I64(v), ScalarKind::Float) => L::F64(f64::from_bits(v as u64)),
            (L::U64(v), ScalarKind::Sint) => L::I64(v as i64),
            (L::I64(v), ScalarKind::Uint) => L::U64(v as u64),
            _ => return None,
        },
        Some(width) => {
            // The value, exactly: integers as i128, floats as f64.
            enum V {
                I(i128),
                F(f64),
            }
            let v = match l {
                L::I64(v) => V::I(v.into()),
                L::U64(v) => V::I(v.into()),
                L::I32(v) => V::I(v.into()),
                L::U32(v) => V::I(v.into()),
                L::Bool(v) => V::I(v.into()),
                L::F64(v) => V::F(v),
                L::F32(v) => V::F(v.into()),
                L::F16(v) => V::F(v.to_f64()),
                _ => return None,
            };
            match (kind, width, v) {
                // Integer to integer keeps the low bits, as Rust's `as`.
                (ScalarKind::Sint, 8, V::I(i)) => L::I64(i as i64),
                (ScalarKind::Uint, 8, V::I(i)) => L::U64(i as u64),
                (ScalarKind::Sint, 4, V::I(i)) => L::I32(i as i32),
                (ScalarKind::Uint, 4, V::I(i)) => L::U32(i as u32),
                // Float to integer saturates, as Rust's `as` (the
                // lowering clamps first anyway).
                (ScalarKind::Sint, 8, V::F(f)) => L::I64(f as i64),
                (ScalarKind::Uint, 8, V::F(f)) => L::U64(f as u64),
                (ScalarKind::Sint, 4, V::F(f)) => L::I32(f as i32),
                (ScalarKind::Uint, 4, V::F(f)) => L::U32(f as u32),
                (ScalarKind::Float, 8, V::I(i)) => L::F64(i as f64),
                (ScalarKind::Float, 4, V::I(i)) => L::F32(i as f32),
                (ScalarKind::Float, 2, V::I(i)) => L::F16(half::f16::from_f64(i as f64)),
                (ScalarKind::Float, 8, V::F(f)) => L::F64(f),
                (ScalarKind::Float, 4, V::F(f)) => L::F32(f as f32),
                (ScalarKind::Float, 2, V::F(f)) => L::F16(half::f16::from_f64(f)),
                (ScalarKind::Bool, _, V::I(i)) => L::Bool(i != 0),
                _ => return None,
            }
        }
    };
    Some(out).filter(finite)
}
