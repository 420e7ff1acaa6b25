//! Constant expressions WGSL would reject, kept out of constant evaluation.
//!
//! wgpu compiles the WGSL text we write, and naga's WGSL front end
//! evaluates every expression whose operands are constants while it parses.
//! Where Rust computes a value (or panics) at run time, WGSL's constant
//! evaluation can be an error that fails the whole shader, even in a branch
//! never taken: `0.5 / 0.0` ("Float literal is infinite"), `(-1.0f32).sqrt()`
//! ("sqrt built-in function argument is out of valid range"), a constant
//! shift that drops bits (`21u32.max(65536) << 25`). The differential
//! fuzzer found all three.
//!
//! So before an expression of constants is appended, naga's own constant
//! evaluator (the one the front end will run) tries it on a scratch module.
//! If it fails for its value (not because naga does not evaluate such
//! expressions), the lowering stores one operand in a `var` and reads it
//! back: the expression is then computed at run time, by the GPU's run-time
//! rules, which are the semantics documented for every other value.

use super::function::FnLowerer;
use crate::types::Ty;
use naga::proc::{ConstantEvaluator, ConstantEvaluatorError, ExpressionKindTracker, Layouter};
use naga::{Arena, BinaryOperator, Expression, Handle, Literal, Span};

/// The operand slots of the expressions constant evaluation applies to
/// (empty for any other expression), in order.
fn operand_slots(e: &mut Expression) -> Vec<&mut Handle<Expression>> {
    match e {
        Expression::Binary { left, right, .. } => vec![left, right],
        Expression::Unary { expr, .. } | Expression::As { expr, .. } => vec![expr],
        Expression::Math { arg, arg1, arg2, arg3, .. } => {
            let mut v = vec![arg];
            v.extend([arg1, arg2, arg3].into_iter().flatten());
            v
        }
        Expression::Select { condition, accept, reject } => vec![condition, accept, reject],
        _ => Vec::new(),
    }
}

/// The operands of `e` (see [`operand_slots`]).
fn operands(e: &Expression) -> Vec<Handle<Expression>> {
    operand_slots(&mut e.clone()).into_iter().map(|h| *h).collect()
}

/// Whether `h` is a literal or one of the operators above over literals:
/// what naga's WGSL front end evaluates as a constant.
fn is_constant(exprs: &Arena<Expression>, h: Handle<Expression>) -> bool {
    match exprs[h] {
        Expression::Literal(_) => true,
        ref e => {
            let ops = operands(e);
            !ops.is_empty() && ops.into_iter().all(|o| is_constant(exprs, o))
        }
    }
}

/// Why an expression is not folded.
enum Refused {
    /// It is not a constant expression (or naga does not evaluate it).
    NotConstant,
    /// naga's constant evaluation fails for its value.
    Rejected,
}

/// Evaluates the constant expression `h` of `exprs` with `eval`, operands
/// first, as the WGSL front end does; the handle of its value.
fn evaluate(
    exprs: &Arena<Expression>,
    h: Handle<Expression>,
    eval: &mut ConstantEvaluator<'_>,
) -> Result<Handle<Expression>, Refused> {
    let e = &exprs[h];
    let copied = match *e {
        Expression::Literal(_) => e.clone(),
        _ => remap(exprs, e, eval)?,
    };
    eval.try_eval_and_append(copied, Span::UNDEFINED).map_err(refusal)
}

/// What an error of naga's constant evaluator means here.
fn refusal(e: ConstantEvaluatorError) -> Refused {
    match e {
        ConstantEvaluatorError::NotImplemented(_) => Refused::NotConstant,
        _ => Refused::Rejected,
    }
}

/// `e` with its operands evaluated.
fn remap(exprs: &Arena<Expression>, e: &Expression, eval: &mut ConstantEvaluator<'_>) -> Result<Expression, Refused> {
    let mut c = |h| evaluate(exprs, h, eval);
    Ok(match *e {
        Expression::Binary { op, left, right } => Expression::Binary { op, left: c(left)?, right: c(right)? },
        Expression::Unary { op, expr } => Expression::Unary { op, expr: c(expr)? },
        Expression::As { expr, kind, convert } => Expression::As { expr: c(expr)?, kind, convert },
        Expression::Math { fun, arg, arg1, arg2, arg3 } => Expression::Math {
            fun,
            arg: c(arg)?,
            arg1: arg1.map(&mut c).transpose()?,
            arg2: arg2.map(&mut c).transpose()?,
            arg3: arg3.map(&mut c).transpose()?,
        },
        Expression::Select { condition, accept, reject } => {
            Expression::Select { condition: c(condition)?, accept: c(accept)?, reject: c(reject)? }
        }
        _ => return Err(Refused::NotConstant),
    })
}

/// The first operand of `e` when naga's constant evaluator rejects `e`
/// (or an operand) for its value; None when `e` is fine, or not a
/// constant expression at all.
pub(super) fn rejected_operand(exprs: &Arena<Expression>, e: &Expression) -> Option<Handle<Expression>> {
    let ops = operands(e);
    // WGSL rejects an integer division by a constant zero even when the
    // dividend is not constant (`x / (false as i32)`, in code never run).
    if let Expression::Binary { op: BinaryOperator::Divide | BinaryOperator::Modulo, right, .. } = *e {
        if is_constant(exprs, right) && is_integer_zero(exprs, right) {
            return Some(right);
        }
    }
    // Most expressions have an operand that is not constant: no evaluator.
    if ops.is_empty() || !ops.iter().all(|&o| is_constant(exprs, o)) {
        return None;
    }
    // Types are not needed for literals and the operators over them.
    let mut module = naga::Module::default();
    let mut kinds = ExpressionKindTracker::new();
    let mut layouter = Layouter::default();
    let mut eval = ConstantEvaluator::for_wgsl_module(&mut module, &mut kinds, &mut layouter, false);
    match remap(exprs, e, &mut eval).and_then(|e| eval.try_eval_and_append(e, Span::UNDEFINED).map_err(refusal)) {
        Err(Refused::Rejected) => ops.first().copied(),
        Ok(_) | Err(Refused::NotConstant) => None,
    }
}

/// Whether the constant expression `h` is an integer zero.
fn is_integer_zero(exprs: &Arena<Expression>, h: Handle<Expression>) -> bool {
    let mut module = naga::Module::default();
    let mut kinds = ExpressionKindTracker::new();
    let mut layouter = Layouter::default();
    let mut eval = ConstantEvaluator::for_wgsl_module(&mut module, &mut kinds, &mut layouter, false);
    let Ok(value) = evaluate(exprs, h, &mut eval) else { return false };
    matches!(
        module.global_expressions[value],
        Expression::Literal(Literal::I32(0) | Literal::U32(0) | Literal::I64(0) | Literal::U64(0))
    )
}

impl FnLowerer<'_> {
    /// `e` with its operand `operand` replaced by a copy that is no
    /// constant: the copy's first literal is stored in a fresh `var` and
    /// read back, so the GPU computes the rest at run time.
    pub(super) fn hide_constant(&mut self, e: &mut Expression, operand: Handle<Expression>, span: proc_macro2::Span) {
        let hidden = self.opaque(operand, span);
        if let Some(slot) = operand_slots(e).into_iter().find(|s| **s == operand) {
            *slot = hidden;
        }
    }

    /// A copy of the constant expression `h` that is no constant.
    fn opaque(&mut self, h: Handle<Expression>, span: proc_macro2::Span) -> Handle<Expression> {
        let mut e = self.func.expressions[h].clone();
        if let Expression::Literal(l) = e {
            let var = self.var("opaque", literal_ty(l), span);
            self.store_var(var, h, span);
            return self.load_var(var, span);
        }
        let Some(&first) = operands(&e).first() else { return h };
        self.hide_constant(&mut e, first, span);
        self.add(e, span)
    }
}

/// The kernel type of a naga literal (for the `var` that hides it).
fn literal_ty(l: Literal) -> Ty {
    match l {
        Literal::F16(_) => Ty::F16,
        Literal::F64(_) | Literal::AbstractFloat(_) => Ty::F64,
        Literal::I32(_) | Literal::AbstractInt(_) => Ty::I32,
        Literal::I64(_) => Ty::I64,
        Literal::U64(_) => Ty::U64,
        Literal::Bool(_) => Ty::Bool,
        Literal::U32(_) => Ty::U32,
        _ => Ty::F32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naga::MathFunction;

    fn arena(lits: &[Literal]) -> (Arena<Expression>, Vec<Handle<Expression>>) {
        let mut a = Arena::new();
        let hs = lits.iter().map(|l| a.append(Expression::Literal(*l), Span::UNDEFINED)).collect();
        (a, hs)
    }

    #[test]
    fn values_wgsl_rejects_are_found() {
        let (a, h) = arena(&[Literal::F32(0.5), Literal::F32(0.0)]);
        let div = Expression::Binary { op: BinaryOperator::Divide, left: h[0], right: h[1] };
        assert_eq!(rejected_operand(&a, &div), Some(h[0]));
        let sqrt = Expression::Math { fun: MathFunction::Sqrt, arg: h[1], arg1: None, arg2: None, arg3: None };
        assert_eq!(rejected_operand(&a, &sqrt), None, "sqrt(0) is fine");
        let (a, h) = arena(&[Literal::F32(-1.0)]);
        let sqrt = Expression::Math { fun: MathFunction::Sqrt, arg: h[0], arg1: None, arg2: None, arg3: None };
        assert_eq!(rejected_operand(&a, &sqrt), Some(h[0]));
    }

    #[test]
    fn integer_division_by_a_constant_zero_is_found() {
        let (mut a, h) = arena(&[Literal::I32(7), Literal::Bool(false)]);
        let zero =
            a.append(Expression::As { expr: h[1], kind: naga::ScalarKind::Sint, convert: Some(4) }, Span::UNDEFINED);
        let x = a.append(Expression::FunctionArgument(0), Span::UNDEFINED);
        let div = Expression::Binary { op: BinaryOperator::Divide, left: x, right: zero };
        assert_eq!(rejected_operand(&a, &div), Some(zero));
        let div = Expression::Binary { op: BinaryOperator::Divide, left: x, right: h[0] };
        assert_eq!(rejected_operand(&a, &div), None);
    }

    #[test]
    fn nested_constants_are_evaluated_too() {
        let (mut a, h) = arena(&[Literal::U32(21), Literal::U32(65536), Literal::U32(25), Literal::U32(4)]);
        let max = a.append(
            Expression::Math { fun: MathFunction::Max, arg: h[0], arg1: Some(h[1]), arg2: None, arg3: None },
            Span::UNDEFINED,
        );
        let shl = Expression::Binary { op: BinaryOperator::ShiftLeft, left: max, right: h[2] };
        assert_eq!(rejected_operand(&a, &shl), Some(max));
        let fine = Expression::Binary { op: BinaryOperator::ShiftLeft, left: max, right: h[3] };
        assert_eq!(rejected_operand(&a, &fine), None, "65536 << 4 drops no bits");
    }
}
