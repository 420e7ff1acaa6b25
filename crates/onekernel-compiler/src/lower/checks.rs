//! The checked modules' instrumentation (see `onekernel_abi::ModuleKey::checked`).
//!
//! Every index into a buffer, a shared array or a local array is compared
//! with its length, and every integer divisor with zero. A failed check
//! calls `check_failed(site, index, len)`, a function this module adds once
//! per module: it counts the failure in the report buffer
//! (`onekernel_abi::report`) and, for the first failure only, records the
//! site and the values it saw. The access then goes ahead at index 0,
//! which is in bounds whenever the buffer is not empty, so a checked
//! launch never writes inside another element; the division goes ahead as
//! WGSL defines it. The runtime reads the report after the launch and
//! turns it into an `Err` naming the kernel's source line.
//!
//! Every loop iteration also counts into a private counter, and each loop
//! breaks once the counter passes the loop budget, the pipeline-overridable
//! constant `@id(0) override loop_budget: u32` (`onekernel_abi::report::LOOP_BUDGET_ID`,
//! set by the runtime when it creates the pipeline): an endless loop ends,
//! and the report names it.

use super::function::FnLowerer;
use super::ModuleBuilder;
use crate::types::Ty;
use naga::{
    AddressSpace, ArraySize, AtomicFunction, BinaryOperator, Block, Expression, Function, FunctionArgument,
    GlobalVariable, Handle, Literal, MemoryDecorations, ResourceBinding, Statement, StorageAccess, Type, TypeInner,
};
use onekernel_abi::{report, CheckKind, CheckSite};
use std::borrow::Cow;

/// The checked variant's module-wide state.
pub(crate) struct Checks {
    /// `fn check_failed(site: u32, index: u32, len: u32)`.
    fail: Handle<Function>,
    /// The sites, by the index a failure reports.
    pub sites: Vec<CheckSite>,
    /// The budget (`override loop_budget: u32`) and the counter
    /// (`var<private> loop_iterations: u32`).
    loop_budget: (Handle<naga::Override>, Handle<GlobalVariable>),
}

impl Checks {
    /// Declares the report buffer at `@binding(binding)`
    /// (`var<storage, read_write> check_report: array<atomic<u32>, 4>`) and
    /// the `check_failed` function, and the loop budget with its default
    /// `loop_budget` (`report::DEFAULT_LOOP_BUDGET` unless a tool chose
    /// another).
    pub fn declare(mb: &mut ModuleBuilder, binding: u32, loop_budget: Option<u32>) -> Checks {
        let u32_ty = mb.ty(Ty::U32);
        let atomic = mb.atomic(Ty::U32);
        let words = std::num::NonZeroU32::new(report::WORDS).expect("the report has words");
        let array = mb.module.types.insert(
            Type { name: None, inner: TypeInner::Array { base: atomic, size: ArraySize::Constant(words), stride: 4 } },
            naga::Span::UNDEFINED,
        );
        let report_global = mb.module.global_variables.append(
            GlobalVariable {
                name: Some("check_report".into()),
                space: AddressSpace::Storage { access: StorageAccess::LOAD | StorageAccess::STORE },
                binding: Some(ResourceBinding { group: 0, binding }),
                ty: array,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            naga::Span::UNDEFINED,
        );
        let default = mb.module.global_expressions.append(
            Expression::Literal(Literal::U32(loop_budget.unwrap_or(report::DEFAULT_LOOP_BUDGET))),
            naga::Span::UNDEFINED,
        );
        let budget = mb.module.overrides.append(
            naga::Override {
                name: Some("loop_budget".into()),
                id: Some(report::LOOP_BUDGET_ID),
                ty: u32_ty,
                init: Some(default),
            },
            naga::Span::UNDEFINED,
        );
        let counter = mb.module.global_variables.append(
            GlobalVariable {
                name: Some("loop_iterations".into()),
                space: AddressSpace::Private,
                binding: None,
                ty: u32_ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            naga::Span::UNDEFINED,
        );
        let loop_budget = (budget, counter);
        let fail = mb.module.functions.append(fail_function(report_global, u32_ty), naga::Span::UNDEFINED);
        Checks { fail, sites: Vec::new(), loop_budget }
    }
}

/// ```wgsl
/// fn check_failed(site: u32, index: u32, len: u32) {
///     let first = atomicAdd(&check_report[0], 1u);
///     if first == 0u {
///         atomicStore(&check_report[1], site);
///         atomicStore(&check_report[2], index);
///         atomicStore(&check_report[3], len);
///     }
/// }
/// ```
fn fail_function(report_global: Handle<GlobalVariable>, u32_ty: Handle<Type>) -> Function {
    let mut f = Function { name: Some("check_failed".into()), ..Function::default() };
    let span = naga::Span::UNDEFINED;
    let mut args = Vec::new();
    for name in ["site", "index", "len"] {
        let index = f.arguments.len() as u32;
        f.arguments.push(FunctionArgument { name: Some(name.into()), ty: u32_ty, binding: None });
        args.push(f.expressions.append(Expression::FunctionArgument(index), span));
    }
    let g = f.expressions.append(Expression::GlobalVariable(report_global), span);
    let one = f.expressions.append(Expression::Literal(Literal::U32(1)), span);
    let zero = f.expressions.append(Expression::Literal(Literal::U32(0)), span);
    let count = f.expressions.append(Expression::AccessIndex { base: g, index: report::COUNT }, span);
    let first = f.expressions.append(Expression::AtomicResult { ty: u32_ty, comparison: false }, span);
    let is_first =
        f.expressions.append(Expression::Binary { op: BinaryOperator::Equal, left: first, right: zero }, span);
    let words: Vec<_> = [report::SITE, report::INDEX, report::LEN]
        .iter()
        .map(|&index| f.expressions.append(Expression::AccessIndex { base: g, index }, span))
        .collect();
    f.named_expressions.insert(first, "first".into());
    let emit = |a, b| Statement::Emit(naga::Range::new_from_bounds(a, b));
    let mut accept = Block::new();
    accept.push(emit(words[0], words[2]), span);
    for (pointer, value) in words.iter().zip(&args) {
        accept.push(Statement::Store { pointer: *pointer, value: *value }, span);
    }
    f.body.push(emit(count, count), span);
    f.body.push(Statement::Atomic { pointer: count, fun: AtomicFunction::Add, value: one, result: Some(first) }, span);
    f.body.push(emit(is_first, is_first), span);
    f.body.push(Statement::If { condition: is_first, accept, reject: Block::new() }, span);
    f.body.push(Statement::Return { value: None }, span);
    f
}

impl FnLowerer<'_> {
    /// Whether this function gets checks: the checked variant, and the
    /// user's code (not a polyfill's).
    fn checking(&self) -> bool {
        self.mb.checks.is_some() && self.user_code
    }

    /// Records a site; its index.
    fn site(&mut self, kind: CheckKind, span: proc_macro2::Span, what: &str) -> u32 {
        let checks = self.mb.checks.as_mut().expect("only called when checking");
        let at = span.start();
        checks.sites.push(CheckSite {
            kind,
            line: at.line as u32,
            column: at.column as u32 + 1,
            what: Cow::Owned(what.to_string()),
        });
        checks.sites.len() as u32 - 1
    }

    /// `if !ok { check_failed(site, index, len); }`
    fn fail_unless(
        &mut self,
        ok: Handle<Expression>,
        site: u32,
        index: Handle<Expression>,
        len: Handle<Expression>,
        span: proc_macro2::Span,
    ) {
        let fail = self.mb.checks.as_ref().expect("only called when checking").fail;
        let failed = self.add(Expression::Unary { op: naga::UnaryOperator::LogicalNot, expr: ok }, span);
        let accept = self.nested(|l| {
            let site = l.literal(Literal::U32(site), span);
            l.stmt(Statement::Call { function: fail, arguments: vec![site, index, len], result: None }, span);
        });
        self.stmt(Statement::If { condition: failed, accept, reject: Block::new() }, span);
    }

    /// In the checked variant, `index` checked against `len` (a `u32`):
    /// a failure is reported and the access goes to index 0 instead.
    /// Elsewhere, `index` itself.
    pub(super) fn checked_index(
        &mut self,
        index: Handle<Expression>,
        len: Handle<Expression>,
        what: &str,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        if !self.checking() {
            return index;
        }
        let site = self.site(CheckKind::OutOfBounds, span, what);
        let ok = self.add(Expression::Binary { op: BinaryOperator::Less, left: index, right: len }, span);
        // `let a_len = arrayLength(&a); let a_in_bounds = i < a_len;`
        let ident: String = what.chars().map(|c| if c.is_alphanumeric() { c } else { '_' }).collect();
        self.name(len, &format!("{ident}_len"));
        self.name(ok, &format!("{ident}_in_bounds"));
        self.fail_unless(ok, site, index, len, span);
        let zero = self.literal(Literal::U32(0), span);
        self.add(Expression::Select { condition: ok, accept: index, reject: zero }, span)
    }

    /// [`Self::checked_index`] against a constant length; a constant index
    /// in bounds is not checked (rustc rejects one out of bounds).
    pub(super) fn checked_index_const(
        &mut self,
        index: Handle<Expression>,
        len: u32,
        what: &str,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        if !self.checking() {
            return index;
        }
        if let Expression::Literal(Literal::U32(i)) = self.func.expressions[index] {
            if i < len && self.mb.table.symbol(len).is_none() {
                return index;
            }
        }
        let len = self.len_value(len, span);
        self.checked_index(index, len, what, span)
    }

    /// An array's length as a `u32` value: a literal, or for a length the
    /// launch sets ([`crate::types::Symbol`]) its override, so that the
    /// WGSL names it and no placeholder reaches the text.
    pub(super) fn len_value(&mut self, len: u32, span: proc_macro2::Span) -> Handle<Expression> {
        let Some(over) = self.mb.table.symbol(len).map(|s| s.over) else {
            return self.literal(Literal::U32(len), span);
        };
        let o = self.mb.overrides[over];
        let value = self.add(Expression::Override(o), span);
        let ty = self.mb.module.overrides[o].ty;
        match self.mb.module.types[ty].inner {
            naga::TypeInner::Scalar(naga::Scalar { kind: naga::ScalarKind::Uint, .. }) => value,
            _ => self.add(Expression::As { expr: value, kind: naga::ScalarKind::Uint, convert: Some(4) }, span),
        }
    }

    /// In the checked variant, reports an integer divisor of zero (`what`
    /// is the operator). Constant divisors other than zero are not checked.
    pub(super) fn check_divisor(&mut self, divisor: Handle<Expression>, ty: Ty, what: &str, span: proc_macro2::Span) {
        if !self.checking() || !ty.lane().is_integer() {
            return;
        }
        if let Ty::Vector(_) = ty {
            // Lane by lane, as glam divides: any zero lane fails.
            let site = self.site(CheckKind::DivisionByZero, span, what);
            let zero = self.mb.ty(ty);
            let zero = self.add(Expression::ZeroValue(zero), span);
            let lanes = self.add(Expression::Binary { op: BinaryOperator::NotEqual, left: divisor, right: zero }, span);
            let ok = self.add(Expression::Relational { fun: naga::RelationalFunction::All, argument: lanes }, span);
            self.name(ok, "nonzero_divisor");
            let zero_u = self.literal(Literal::U32(0), span);
            self.fail_unless(ok, site, zero_u, zero_u, span);
            return;
        }
        if let Expression::Literal(Literal::U32(d)) = self.func.expressions[divisor] {
            if d != 0 {
                return;
            }
        }
        if let Expression::Literal(Literal::I32(d)) = self.func.expressions[divisor] {
            if d != 0 {
                return;
            }
        }
        if let Expression::Literal(Literal::I64(d)) = self.func.expressions[divisor] {
            if d != 0 {
                return;
            }
        }
        if let Expression::Literal(Literal::U64(d)) = self.func.expressions[divisor] {
            if d != 0 {
                return;
            }
        }
        let site = self.site(CheckKind::DivisionByZero, span, what);
        let zero = self.const_bits(ty, 0, span);
        let ok = self.add(Expression::Binary { op: BinaryOperator::NotEqual, left: divisor, right: zero }, span);
        self.name(ok, "nonzero_divisor");
        let zero_u = self.literal(Literal::U32(0), span);
        self.fail_unless(ok, site, zero_u, zero_u, span);
    }

    /// In the checked variant, at the top of a loop body: counts the
    /// iteration, and past the budget reports it and breaks.
    pub(super) fn loop_budget(&mut self, span: proc_macro2::Span) {
        if !self.checking() {
            return;
        }
        let (budget, counter) = self.mb.checks.as_ref().expect("checking").loop_budget;
        let site = self.site(CheckKind::LoopBudget, span, "loop");
        let pointer = self.add(Expression::GlobalVariable(counter), span);
        let old = self.add(Expression::Load { pointer }, span);
        let one = self.literal(Literal::U32(1), span);
        let count = self.add(Expression::Binary { op: BinaryOperator::Add, left: old, right: one }, span);
        self.stmt(Statement::Store { pointer, value: count }, span);
        let budget = self.add(Expression::Override(budget), span);
        let ok = self.add(Expression::Binary { op: BinaryOperator::LessEqual, left: count, right: budget }, span);
        let fail = self.mb.checks.as_ref().expect("checked above").fail;
        let failed = self.add(Expression::Unary { op: naga::UnaryOperator::LogicalNot, expr: ok }, span);
        let accept = self.nested(|l| {
            let site = l.literal(Literal::U32(site), span);
            l.stmt(Statement::Call { function: fail, arguments: vec![site, count, budget], result: None }, span);
            l.stmt(Statement::Break, span);
        });
        self.stmt(Statement::If { condition: failed, accept, reject: Block::new() }, span);
    }
}
