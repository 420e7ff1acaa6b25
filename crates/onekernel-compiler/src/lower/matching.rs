//! `match` on integers: a WGSL `switch` when its arms are literals and `_`
//! (the form a reader expects), an `if` chain otherwise (ranges, and arms
//! that `break` or `continue` an enclosing loop, which inside a `switch`
//! would leave the `switch` instead).

use super::function::{FnLowerer, Slot};
use crate::hir::{Arm, ExprId, ExprKind, Pat};
use crate::types::Ty;
use naga::{BinaryOperator, Expression, Handle, Literal, LocalVariable, Statement, SwitchCase, SwitchValue};

impl FnLowerer<'_> {
    /// Lowers the `match` `id`; each arm's value goes into `dest` when
    /// there is one.
    pub(super) fn match_stmt(&mut self, id: ExprId, dest: Option<Handle<LocalVariable>>) {
        let ExprKind::Match { scrutinee, arms } = &self.hir.exprs[id].kind else { return };
        let span = self.span_of(id);
        let ty = self.ty_of(*scrutinee);
        let Some(value) = self.expr(*scrutinee) else { return };
        let arms = arms.clone();
        let simple = arms.iter().all(|a| a.pats.iter().all(|p| matches!(p, Pat::Int(_) | Pat::Wild)));
        let jumps = arms.iter().any(|a| self.jumps_out(a.body));
        // WGSL's `switch` selects on 32-bit integers only.
        if simple && !jumps && !ty.is_wide() {
            self.switch(value, ty, &arms, dest, span);
        } else {
            self.if_chain(value, ty, &arms, dest, span);
        }
        if crate::visit::expr_diverges(self.hir, id) {
            self.dead = true;
        }
    }

    /// Whether `e` has a `break` or `continue` that leaves `e` (one not
    /// inside a loop of its own).
    fn jumps_out(&self, e: ExprId) -> bool {
        let mut found = false;
        crate::visit::visit_expr(self.hir, e, 0, &mut |_, k, depth| {
            found |= match k {
                ExprKind::Break { label, .. } | ExprKind::Continue { label } => depth == 0 || label.is_some(),
                _ => false,
            };
        });
        found
    }

    /// Lowers an arm's body (binding its name first).
    fn arm_body(&mut self, arm: &Arm, value: Handle<Expression>, dest: Option<Handle<LocalVariable>>) {
        if let Some(l) = arm.binding {
            self.locals[l] = Some(Slot::Value(value));
        }
        match dest {
            Some(d) => self.expr_into(arm.body, d),
            None => {
                self.expr(arm.body);
            }
        }
    }

    fn switch(
        &mut self,
        value: Handle<Expression>,
        ty: Ty,
        arms: &[Arm],
        dest: Option<Handle<LocalVariable>>,
        span: proc_macro2::Span,
    ) {
        let mut cases = Vec::new();
        let mut seen: Vec<i128> = Vec::new();
        let mut has_default = false;
        for (i, arm) in arms.iter().enumerate() {
            if has_default {
                break; // unreachable arms (rustc warns)
            }
            // Without a `_`, the last arm takes what is left: the match is
            // exhaustive, or rustc would have rejected it.
            let default = arm.pats.contains(&Pat::Wild) || i + 1 == arms.len();
            let mut values: Vec<SwitchValue> = Vec::new();
            if !default {
                for p in &arm.pats {
                    let Pat::Int(v) = *p else { continue };
                    if seen.contains(&v) {
                        continue;
                    }
                    seen.push(v);
                    match switch_value(v, ty) {
                        Some(sv) => values.push(sv),
                        None => {
                            self.errors.push(crate::diagnostic::Diagnostic::new(
                                span,
                                format!("the pattern `{v}` is out of range for `{ty}`"),
                            ));
                            return;
                        }
                    }
                }
                if values.is_empty() {
                    continue;
                }
            } else {
                values.push(SwitchValue::Default);
                has_default = true;
            }
            let body = self.nested(|l| l.arm_body(arm, value, dest));
            let last = values.len() - 1;
            for (k, v) in values.into_iter().enumerate() {
                let (body, fall_through) = if k == last { (body.clone(), false) } else { (naga::Block::new(), true) };
                cases.push(SwitchCase { value: v, body, fall_through });
            }
        }
        // WGSL needs `u32`/`i32` selectors; `usize` is `u32` on the GPU.
        self.stmt(Statement::Switch { selector: value, cases }, span);
    }

    fn if_chain(
        &mut self,
        value: Handle<Expression>,
        ty: Ty,
        arms: &[Arm],
        dest: Option<Handle<LocalVariable>>,
        span: proc_macro2::Span,
    ) {
        let Some((arm, rest)) = arms.split_first() else { return };
        if arm.pats.contains(&Pat::Wild) || rest.is_empty() {
            // The `else` of the chain: no test, no block of its own.
            self.arm_body(arm, value, dest);
            return;
        }
        let mut cond: Option<Handle<Expression>> = None;
        for p in &arm.pats {
            let Some(test) = self.pattern_test(value, ty, *p, span) else { return };
            cond = Some(match cond {
                None => test,
                Some(c) => self.add(Expression::Binary { op: BinaryOperator::LogicalOr, left: c, right: test }, span),
            });
        }
        let Some(condition) = cond else { return };
        let accept = self.nested(|l| l.arm_body(arm, value, dest));
        let reject = self.nested(|l| l.if_chain(value, ty, rest, dest, span));
        self.stmt(Statement::If { condition, accept, reject }, span);
    }

    /// `value` matches `p`, as a `bool` expression.
    fn pattern_test(
        &mut self,
        value: Handle<Expression>,
        ty: Ty,
        p: Pat,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        let lit = |l: &mut Self, v: i128| match literal(v, ty) {
            Some(lit) => Some(l.literal(lit, span)),
            None => {
                l.errors.push(crate::diagnostic::Diagnostic::new(
                    span,
                    format!("the pattern `{v}` is out of range for `{ty}`"),
                ));
                None
            }
        };
        let cmp = |l: &mut Self, op, bound| l.add(Expression::Binary { op, left: value, right: bound }, span);
        Some(match p {
            Pat::Int(v) => {
                let b = lit(self, v)?;
                cmp(self, BinaryOperator::Equal, b)
            }
            Pat::Range { lo, hi, inclusive } => {
                // `0..` on an unsigned value tests nothing.
                let lo = lo.filter(|&v| v != 0 || ty.is_signed());
                let lo = match lo {
                    Some(v) => {
                        let b = lit(self, v)?;
                        Some(cmp(self, BinaryOperator::GreaterEqual, b))
                    }
                    None => None,
                };
                let hi = match hi {
                    Some(v) => {
                        let b = lit(self, v)?;
                        let op = if inclusive { BinaryOperator::LessEqual } else { BinaryOperator::Less };
                        Some(cmp(self, op, b))
                    }
                    None => None,
                };
                match (lo, hi) {
                    (Some(a), Some(b)) => {
                        self.add(Expression::Binary { op: BinaryOperator::LogicalAnd, left: a, right: b }, span)
                    }
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => self.literal(Literal::Bool(true), span),
                }
            }
            Pat::Wild => self.literal(Literal::Bool(true), span),
        })
    }
}

/// A case selector of type `ty`.
fn switch_value(v: i128, ty: Ty) -> Option<SwitchValue> {
    match literal(v, ty)? {
        Literal::I32(x) => Some(SwitchValue::I32(x)),
        Literal::U32(x) => Some(SwitchValue::U32(x)),
        _ => None,
    }
}

/// `v` as a literal of the integer type `ty`, if it fits.
fn literal(v: i128, ty: Ty) -> Option<Literal> {
    match ty {
        Ty::I32 => i32::try_from(v).ok().map(Literal::I32),
        Ty::U32 | Ty::Usize => u32::try_from(v).ok().map(Literal::U32),
        Ty::I64 => i64::try_from(v).ok().map(Literal::I64),
        Ty::U64 => u64::try_from(v).ok().map(Literal::U64),
        _ => None,
    }
}
