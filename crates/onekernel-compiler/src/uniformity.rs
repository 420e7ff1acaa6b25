//! Barriers must be reached by every thread of a workgroup: a barrier in
//! control flow that differs between threads hangs or computes garbage on
//! real GPUs. WGSL's uniformity analysis forbids it, but naga does not
//! implement that analysis, so this module does, on the HIR, and rejects
//! each divergent barrier with a spanned error that says why.
//!
//! A value is *uniform* when every thread of a workgroup computes the same
//! one: literals, constants, scalar parameters, `block_id()`,
//! `block_dim()`, `grid_dim()`, buffer lengths, and anything computed from
//! uniform values only. `global_id()`, `thread_id()` and values loaded
//! from memory (buffers, shared arrays, atomics) are not. A local is
//! uniform when every value assigned to it is, in uniform control flow.
//! Control flow stops being uniform inside an `if` or a `while` whose
//! condition is not uniform, inside a loop that some threads may leave
//! early (a `break`/`continue`/`return` in divergent control flow), and
//! after a `return` in divergent control flow.

use crate::diagnostic::Diagnostic;
use crate::hir::*;
use crate::visit::{operands, visit_block, visit_expr};
use std::collections::HashSet;

/// Why control flow is divergent at some point.
#[derive(Clone, Debug)]
struct Divergence {
    reason: String,
}

struct Uniformity<'a> {
    f: &'a Function,
    /// Locals that may differ between threads.
    varying: HashSet<LocalId>,
    changed: bool,
    errors: Vec<Diagnostic>,
    report: bool,
}

/// Checks every barrier of `f`; one error per divergent barrier.
pub fn check_barriers(f: &Function) -> Result<(), Vec<Diagnostic>> {
    if f.barriers == 0 {
        return Ok(());
    }
    let mut u = Uniformity { f, varying: HashSet::new(), changed: true, errors: Vec::new(), report: false };
    // Fixed point: a local becomes varying once any assignment to it is.
    while u.changed {
        u.changed = false;
        u.block(&f.body, None);
    }
    u.report = true;
    u.block(&f.body, None);
    if u.errors.is_empty() {
        Ok(())
    } else {
        Err(u.errors)
    }
}

impl Uniformity<'_> {
    fn mark(&mut self, l: LocalId) {
        if self.varying.insert(l) {
            self.changed = true;
        }
    }

    /// Whether `e` has the same value in every thread of a workgroup.
    fn uniform(&self, e: ExprId) -> bool {
        let f = self.f;
        match &f.exprs[e].kind {
            ExprKind::Error | ExprKind::Lit(_) | ExprKind::Const(_) | ExprKind::Param(_) | ExprKind::Len(_) => true,
            ExprKind::Builtin { builtin, .. } => {
                matches!(builtin, Builtin::BlockId | Builtin::BlockDim | Builtin::GridDim)
            }
            ExprKind::Index { .. } | ExprKind::SharedIndex { .. } | ExprKind::Atomic { .. } => false,
            ExprKind::Local(l) => !self.varying.contains(l),
            ExprKind::Axis(x, _) | ExprKind::Unary(_, x) | ExprKind::Cast(x, _) | ExprKind::Typed(x, _) => {
                self.uniform(*x)
            }
            ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => self.uniform(*a) && self.uniform(*b),
            ExprKind::Call { args, .. } | ExprKind::Math(_, args) => args.iter().all(|a| self.uniform(*a)),
            ExprKind::If { cond, then, else_, .. } => {
                self.uniform(*cond)
                    && then.tail.is_none_or(|t| self.uniform(t))
                    && else_.is_none_or(|e| self.uniform(e))
            }
            ExprKind::Block(b) => b.tail.is_none_or(|t| self.uniform(t)),
            // A loop's value depends on how its iterations went.
            ExprKind::Loop { .. } => false,
            ExprKind::Assign { .. }
            | ExprKind::Break { .. }
            | ExprKind::Continue { .. }
            | ExprKind::Return(_)
            | ExprKind::Barrier { .. } => true,
        }
    }

    /// What makes `e` vary, for messages.
    fn why_varying(&self, e: ExprId) -> String {
        let mut uses = Vec::new();
        visit_expr(self.f, e, 0, &mut |_, k, _| {
            let s = match k {
                ExprKind::Builtin { builtin: Builtin::GlobalId, .. } => "`global_id()`".to_string(),
                ExprKind::Builtin { builtin: Builtin::ThreadId, .. } => "`thread_id()`".to_string(),
                ExprKind::Index { buffer, .. } => format!("a value loaded from `{}`", self.f.params[*buffer].name),
                ExprKind::SharedIndex { shared, .. } => {
                    format!("a value loaded from `{}`", self.f.shared[*shared].name)
                }
                ExprKind::Atomic { .. } => "an atomic's value".to_string(),
                ExprKind::Local(l) if self.varying.contains(l) => format!("`{}`", self.f.locals[*l].name),
                _ => return,
            };
            if !uses.contains(&s) {
                uses.push(s);
            }
        });
        match uses.len() {
            0 => "a value that differs between threads".to_string(),
            _ => uses.join(", "),
        }
    }

    fn block(&mut self, b: &Block, mut div: Option<Divergence>) -> Option<Divergence> {
        for s in &b.stmts {
            let e = match s {
                Stmt::Let { local, init } => {
                    if let Some(init) = init {
                        div = self.expr(*init, div.clone()).or(div);
                        if div.is_some() || !self.uniform(*init) {
                            self.mark(*local);
                        }
                    }
                    continue;
                }
                Stmt::Expr(e) => *e,
                Stmt::Shared(_) => continue,
            };
            div = self.expr(e, div.clone()).or(div);
        }
        if let Some(t) = b.tail {
            div = self.expr(t, div.clone()).or(div);
        }
        div
    }

    /// Walks `e` in control flow `div` (None: uniform). Returns the
    /// divergence that holds after `e`, if `e` makes the rest divergent
    /// (a `return` that only some threads take).
    fn expr(&mut self, e: ExprId, div: Option<Divergence>) -> Option<Divergence> {
        let f = self.f;
        match &f.exprs[e].kind {
            ExprKind::Barrier { kind, .. } => {
                if let (Some(d), true) = (&div, self.report) {
                    let name = kind.name();
                    self.errors.push(
                        Diagnostic::new(f.exprs[e].span, format!("`{name}()` is not reached by every thread of the workgroup: it is {}", d.reason))
                            .help("every thread of a workgroup must reach each barrier: move the barrier out of the divergent code, or make the condition depend only on `block_id()`, sizes, scalar parameters and constants"),
                    );
                }
                None
            }
            ExprKind::If { cond, then, else_, cond_text } => {
                let after_cond = self.expr(*cond, div.clone());
                let div = after_cond.or(div);
                let inner = if div.is_some() {
                    div.clone()
                } else if !self.uniform(*cond) {
                    Some(Divergence {
                        reason: format!(
                            "inside `if {cond_text}`, and the condition depends on {}",
                            self.why_varying(*cond)
                        ),
                    })
                } else {
                    None
                };
                let then_out = self.block(then, inner.clone());
                let else_out = else_.and_then(|x| self.expr(x, inner.clone()));
                // A `return` in a divergent branch leaves only some threads
                // running afterwards.
                if inner.is_some() && div.is_none() {
                    let returns = branch_has(f, then, *else_, is_return);
                    if returns {
                        return Some(Divergence {
                            reason: format!("after a `return` that only some threads take (inside `if {cond_text}`, which depends on {})", self.why_varying(*cond)),
                        });
                    }
                }
                then_out
                    .filter(|_| div.is_none() && inner.is_none())
                    .or(else_out.filter(|_| div.is_none() && inner.is_none()))
            }
            ExprKind::Loop { kind, body, .. } => {
                let mut inner = div.clone();
                match kind {
                    LoopKind::While { cond } => {
                        self.expr(*cond, div.clone());
                        if inner.is_none() && !self.uniform(*cond) {
                            inner = Some(Divergence {
                                reason: format!(
                                    "inside a `while` loop whose condition depends on {}",
                                    self.why_varying(*cond)
                                ),
                            });
                        }
                    }
                    LoopKind::For { var, start, end, step, .. } => {
                        let bounds = [Some(*start), Some(*end), *step];
                        let varying: Vec<ExprId> =
                            bounds.iter().flatten().copied().filter(|b| !self.uniform(*b)).collect();
                        if div.is_some() || !varying.is_empty() {
                            self.mark(*var);
                        }
                        if inner.is_none() {
                            if let Some(b) = varying.first() {
                                inner = Some(Divergence {
                                    reason: format!(
                                        "inside a `for` loop whose range depends on {}",
                                        self.why_varying(*b)
                                    ),
                                });
                            }
                        }
                    }
                    LoopKind::Loop => {}
                }
                // Some threads may leave the loop early: every iteration
                // after that is divergent, so the whole body is.
                if inner.is_none() {
                    if let Some(reason) = self.early_exit(body) {
                        inner = Some(Divergence { reason });
                    }
                }
                self.block(body, inner);
                None
            }
            ExprKind::Block(b) => {
                let out = self.block(b, div.clone());
                out.filter(|_| div.is_none())
            }
            _ => {
                // Assignments mark their local; subexpressions are walked
                // for barriers (none can hide there) and nested blocks.
                if let ExprKind::Assign { place: Place::Local(l), value, .. } = &f.exprs[e].kind {
                    if div.is_some() || !self.uniform(*value) {
                        self.mark(*l);
                    }
                }
                let mut out = None;
                let children = operands(&f.exprs[e].kind);
                for c in children {
                    if let Some(d) = self.expr(c, div.clone().or(out.clone())) {
                        out = Some(d);
                    }
                }
                out
            }
        }
    }

    /// A reason when `body` has a `break`, `continue` or `return` that only
    /// some threads may take.
    fn early_exit(&self, body: &Block) -> Option<String> {
        let f = self.f;
        let mut found = None;
        // Walk the `if`s of the body: a jump under a varying condition.
        visit_block(f, body, 0, &mut |_, k, _| {
            if found.is_some() {
                return;
            }
            if let ExprKind::If { cond, then, else_, cond_text } = k {
                if !self.uniform(*cond) && branch_has(f, then, *else_, is_jump) {
                    found = Some(format!(
                        "inside a loop that some threads leave early (a `break`, `continue` or `return` under `if {cond_text}`, which depends on {})",
                        self.why_varying(*cond)
                    ));
                }
            }
        });
        found
    }
}

/// Whether an `if` branch (its `then` block and its `else` expression)
/// contains an expression for which `pred(kind, loop depth)` holds.
fn branch_has(f: &Function, then: &Block, else_: Option<ExprId>, pred: fn(&ExprKind, usize) -> bool) -> bool {
    let mut found = false;
    let mut visit = |_: ExprId, k: &ExprKind, depth| found |= pred(k, depth);
    visit_block(f, then, 0, &mut visit);
    if let Some(e) = else_ {
        visit_expr(f, e, 0, &mut visit);
    }
    found
}

fn is_return(k: &ExprKind, _depth: usize) -> bool {
    matches!(k, ExprKind::Return(_))
}

/// A `break`/`continue`/`return` that leaves the current iteration of the
/// enclosing loop (depth 0 jumps; labelled ones conservatively too).
fn is_jump(k: &ExprKind, depth: usize) -> bool {
    match k {
        ExprKind::Return(_) => true,
        ExprKind::Break { label, .. } | ExprKind::Continue { label } => depth == 0 || label.is_some(),
        _ => false,
    }
}
