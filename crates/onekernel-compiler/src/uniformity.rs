//! Barriers must be reached by every thread of a workgroup: a barrier in
//! control flow that differs between threads hangs or computes garbage on
//! real GPUs. WGSL's uniformity analysis forbids it, but naga does not
//! implement that analysis, so this module does, on the HIR, and rejects
//! each divergent barrier with a spanned error that says why.
//!
//! A value is *uniform* when every thread of a workgroup computes the same
//! one: literals, constants, `block_id()`, `block_dim()`, `grid_dim()`,
//! buffer lengths, scalar parameters that are never assigned a varying
//! value, and anything computed from uniform values only. `global_id()`,
//! `thread_id()` and values loaded from memory (buffers, shared arrays,
//! atomics) are not. A variable (a local or a `mut` parameter) is uniform
//! when every value assigned to it anywhere in the kernel is uniform and
//! every assignment happens in uniform control flow; since a later
//! assignment can make an earlier use varying (in a loop), this is a fixed
//! point over the whole body.
//!
//! Control flow stops being uniform:
//! * in the branches of an `if` whose condition is varying;
//! * in the right-hand side of `&&` / `||` whose left side is varying (it
//!   runs for some threads only);
//! * in a `while` or `for` whose condition or bounds are varying;
//! * in a whole loop body when some threads may leave an iteration early
//!   (a `break`, `continue` or `return` reached in divergent control flow
//!   inside the body): later iterations, and code before the jump, run for
//!   the others only;
//! * everywhere after a `return` reached in divergent control flow: the
//!   threads that returned never come back.
//!
//! Subgroup collectives (`subgroup_add`, ...) are checked like barriers,
//! at workgroup scope: stricter than WGSL, which asks for subgroup-uniform
//! control flow only, but a condition uniform within each subgroup and not
//! across the workgroup is rare, and the CPU executor could not run the
//! rest (its subgroups are not the GPU's). `workgroup_uniform_load(&a[i])`
//! is a barrier too, its index must be uniform, and its value is uniform:
//! it is how a value loaded from memory becomes usable in a condition that
//! guards a barrier.
//!
//! Matrix-tile operations (`MatrixA::load`, `mma`, `store`) are
//! collectives too (SPIR-V's cooperative matrices are scoped to the
//! subgroup, whose every invocation must execute each one), checked the
//! same way.
//!
//! Helpers cannot contain barriers (the recogniser rejects them), and a
//! helper computes its result from its arguments only, so a call is
//! uniform when its arguments are.
//!
//! The analysis keeps what it found ([`UniformityInfo`]: whether each
//! local, parameter and expression is uniform, after naga's
//! `valid::analyzer` `FunctionInfo`), kept in `Checked` for the back ends
//! that need it (the CPU phase splitter, `expand/phases.rs`).

use crate::arena::HandleMap;
use crate::diagnostic::Diagnostic;
use crate::hir::*;
use crate::visit::{operands, visit_expr};
use std::collections::HashSet;

/// Which values of a kernel are the same in every invocation of a
/// workgroup: the facts [`analyze`] found, flow-insensitive (a variable
/// is uniform when every value it is ever assigned is, in uniform control
/// flow).
#[derive(Clone, Debug)]
pub struct UniformityInfo {
    exprs: HandleMap<Expr, bool>,
    locals: HandleMap<Local, bool>,
    params: HandleMap<Param, bool>,
}

impl UniformityInfo {
    /// Whether expression `e` of the kernel has the same value in every
    /// invocation of a workgroup (an expression with no value, such as an
    /// assignment, counts as uniform; a loop's value does not).
    pub fn expr(&self, e: ExprId) -> bool {
        self.exprs[e]
    }

    /// Whether every value local `l` holds is uniform.
    pub fn local(&self, l: LocalId) -> bool {
        self.locals[l]
    }

    /// Whether parameter `p` is uniform (a `mut` parameter may not be).
    pub fn param(&self, p: ParamId) -> bool {
        self.params[p]
    }
}

/// Why control flow is divergent at some point.
#[derive(Clone, Debug)]
struct Divergence {
    reason: String,
}

struct Uniformity<'a> {
    f: &'a Function,
    /// Locals that may differ between threads.
    varying: HashSet<LocalId>,
    /// `mut` parameters that may differ between threads.
    varying_params: HashSet<ParamId>,
    /// Set when a fixed-point pass marked something new.
    changed: bool,
    /// Once a `return` is reached in divergent control flow, everything
    /// after it is divergent.
    returned: Option<Divergence>,
    /// Set by a jump (`break`/`continue` to an enclosing loop, `return`)
    /// reached in divergent control flow, for the loop that probes its body.
    jumped: bool,
    /// Loops entered, innermost last, with their labels: to tell jumps out
    /// of the probed loop from jumps out of loops nested in it.
    loops: Vec<Option<String>>,
    /// The depth (index in `loops`) of each loop whose body is being
    /// probed, innermost last.
    probes: Vec<usize>,
    errors: Vec<Diagnostic>,
    report: bool,
}

/// Works out which values of `f` are uniform, and checks every barrier,
/// subgroup collective and uniform load: one error per divergent one (or
/// per varying uniform-load index).
pub fn analyze(f: &Function) -> Result<UniformityInfo, Vec<Diagnostic>> {
    let mut u = Uniformity {
        f,
        varying: HashSet::new(),
        varying_params: HashSet::new(),
        changed: true,
        returned: None,
        jumped: false,
        loops: Vec::new(),
        probes: Vec::new(),
        errors: Vec::new(),
        report: false,
    };
    // Fixed point: a variable becomes varying once any assignment to it is.
    while u.changed {
        u.changed = false;
        u.returned = None;
        u.block(&f.body, None);
    }
    // Only synchronising sites report (a kernel without any has nothing
    // to check).
    if f.barriers > 0 {
        u.report = true;
        u.returned = None;
        u.block(&f.body, None);
    }
    if !u.errors.is_empty() {
        return Err(u.errors);
    }
    Ok(UniformityInfo {
        exprs: HandleMap::from_vec(f.exprs.handles().map(|e| u.uniform(e)).collect()),
        locals: HandleMap::from_vec(f.locals.handles().map(|l| !u.varying.contains(&l)).collect()),
        params: HandleMap::from_vec(f.params.handles().map(|p| !u.varying_params.contains(&p)).collect()),
    })
}

impl Uniformity<'_> {
    fn mark(&mut self, l: LocalId) {
        if self.varying.insert(l) {
            self.changed = true;
        }
    }

    fn mark_param(&mut self, p: ParamId) {
        if self.varying_params.insert(p) {
            self.changed = true;
        }
    }

    /// Whether `e` has the same value in every thread of a workgroup.
    fn uniform(&self, e: ExprId) -> bool {
        let f = self.f;
        match &f.exprs[e].kind {
            ExprKind::Error
            | ExprKind::Lit(_)
            | ExprKind::Const(_)
            | ExprKind::ConstRef(_)
            | ExprKind::Override(_)
            | ExprKind::Len(_) => true,
            ExprKind::Param(p) => !self.varying_params.contains(p),
            ExprKind::Builtin { builtin, .. } => builtin.is_workgroup_uniform(),
            ExprKind::Index { .. } | ExprKind::SharedIndex { .. } | ExprKind::Atomic { .. } => false,
            // A tile is spread over a subgroup's lanes: never a condition.
            ExprKind::Tile { .. } => false,
            // Collectives are the same within a subgroup only.
            ExprKind::Subgroup { .. } => false,
            // The point of `workgroup_uniform_load`: one value for the
            // whole workgroup (its index is checked to be uniform).
            ExprKind::UniformLoad { .. } => true,
            ExprKind::Local(l) => !self.varying.contains(l),
            ExprKind::Axis(x, _)
            | ExprKind::Swizzle(x, _)
            | ExprKind::Unary(_, x)
            | ExprKind::Cast(x, _)
            | ExprKind::Convert(x, _)
            | ExprKind::Typed(x, _)
            | ExprKind::Repeat(x, _)
            | ExprKind::Field(x, _)
            | ExprKind::NamedField(x, _) => self.uniform(*x),
            // A constant: the array's length.
            ExprKind::ArrayLen(_) => true,
            ExprKind::Array(xs) | ExprKind::Tuple(xs) | ExprKind::Vector { args: xs, .. } => {
                xs.iter().all(|x| self.uniform(*x))
            }
            ExprKind::StructLit { fields, .. } => fields.iter().all(|(_, x)| self.uniform(*x)),
            ExprKind::Element { base, index } => self.uniform(*base) && self.uniform(*index),
            ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => self.uniform(*a) && self.uniform(*b),
            ExprKind::Call { args, .. } | ExprKind::Math(_, args) => args.iter().all(|a| self.uniform(*a)),
            ExprKind::If { cond, then, else_, .. } => {
                self.uniform(*cond)
                    && then.tail.is_none_or(|t| self.uniform(t))
                    && else_.is_none_or(|e| self.uniform(e))
            }
            ExprKind::Block(b) => b.tail.is_none_or(|t| self.uniform(t)),
            ExprKind::Match { scrutinee, arms } => {
                self.uniform(*scrutinee) && arms.iter().all(|a| self.uniform(a.body))
            }
            // A loop's value depends on how its iterations went.
            ExprKind::Loop { .. } => false,
            ExprKind::Assign { .. }
            | ExprKind::Break { .. }
            | ExprKind::Continue { .. }
            | ExprKind::Return(_)
            | ExprKind::Debug(_)
            | ExprKind::Barrier { .. } => true,
        }
    }

    /// What makes `e` vary, for messages.
    fn why_varying(&self, e: ExprId) -> String {
        let mut uses = Vec::new();
        visit_expr(self.f, e, 0, &mut |_, k, _| {
            let s = match k {
                ExprKind::Builtin { builtin, .. } if !builtin.is_workgroup_uniform() => {
                    format!("`{}()`", builtin.name())
                }
                ExprKind::Index { buffer, .. } => format!("a value loaded from `{}`", self.f.params[*buffer].name),
                ExprKind::SharedIndex { shared, .. } => {
                    format!("a value loaded from `{}`", self.f.shared[*shared].name)
                }
                ExprKind::Atomic { .. } => "an atomic's value".to_string(),
                ExprKind::Subgroup { op, .. } => {
                    format!("`{}()`, whose value is the same within a subgroup only", op.name())
                }
                ExprKind::Local(l) if self.varying.contains(l) => format!("`{}`", self.f.locals[*l].name),
                ExprKind::Param(p) if self.varying_params.contains(p) => format!("`{}`", self.f.params[*p].name),
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

    /// The divergence in force: the one passed in, or the one a divergent
    /// `return` left behind.
    fn current(&self, div: &Option<Divergence>) -> Option<Divergence> {
        div.clone().or_else(|| self.returned.clone())
    }

    fn block(&mut self, b: &Block, div: Option<Divergence>) {
        for s in &b.stmts {
            match s {
                Stmt::Let { local, init } => {
                    if let Some(init) = init {
                        self.expr(*init, div.clone());
                        if self.current(&div).is_some() || !self.uniform(*init) {
                            self.mark(*local);
                        }
                    }
                }
                Stmt::Expr(e) => self.expr(*e, div.clone()),
                Stmt::Shared(_) | Stmt::Const(_) => {}
                Stmt::LetTuple { locals, init } => {
                    self.expr(*init, div.clone());
                    if self.current(&div).is_some() || !self.uniform(*init) {
                        for l in locals {
                            self.mark(*l);
                        }
                    }
                }
            }
        }
        if let Some(t) = b.tail {
            self.expr(t, div);
        }
    }

    /// Walks `e` in control flow `div` (None: uniform, unless a divergent
    /// `return` came before).
    fn expr(&mut self, e: ExprId, div: Option<Divergence>) {
        let f = self.f;
        let div = self.current(&div);
        match &f.exprs[e].kind {
            ExprKind::Barrier { kind, .. } => {
                if let (Some(d), true) = (&div, self.report) {
                    self.errors.push(
                        Diagnostic::new(
                            f.exprs[e].span,
                            format!("`{}()` is not reached by every thread of the workgroup: it is {}", kind.name(), d.reason),
                        )
                        .help("every thread of a workgroup must reach each barrier: move the barrier out of the divergent code, or make the condition depend only on `block_id()`, sizes, scalar parameters and constants"),
                    );
                }
            }
            ExprKind::Subgroup { op, args, .. } => {
                for a in args {
                    self.expr(*a, div.clone());
                }
                if let (Some(d), true) = (&div, self.report) {
                    self.errors.push(
                        Diagnostic::new(
                            f.exprs[e].span,
                            format!("`{}()` is not reached by every thread of the workgroup: it is {}", op.name(), d.reason),
                        )
                        .help("a subgroup operation combines the values of all the threads of a subgroup, so all must reach it: compute the value under the condition instead (`subgroup_add(if c { x } else { 0 })`), or make the condition depend only on `block_id()`, sizes, scalar parameters and constants"),
                    );
                }
            }
            ExprKind::Tile { op, args, .. } => {
                // `mma(load(..), load(..), c)` in divergent code is one
                // problem: reported at the outermost operation only.
                let reports = div.is_some() && op.is_collective() && self.report;
                let report = self.report;
                self.report = report && !reports;
                for a in args {
                    self.expr(*a, div.clone());
                }
                self.report = report;
                if let (Some(d), true, true) = (&div, op.is_collective(), self.report) {
                    self.errors.push(
                        Diagnostic::new(
                            f.exprs[e].span,
                            format!("the tile operation `{}` is not reached by every thread of the workgroup: it is {}", op.name(), d.reason),
                        )
                        .help("a whole subgroup loads, multiplies and stores a tile together (tensor cores), so every thread must reach it: move it out of the divergent code, or make the condition depend only on `block_id()`, sizes, scalar parameters and constants"),
                    );
                }
            }
            ExprKind::UniformLoad { indices, .. } => {
                for i in indices {
                    self.expr(*i, div.clone());
                }
                if !self.report {
                    return;
                }
                if let Some(d) = &div {
                    self.errors.push(
                        Diagnostic::new(
                            f.exprs[e].span,
                            format!("`workgroup_uniform_load()` is not reached by every thread of the workgroup: it is {}", d.reason),
                        )
                        .help("it is a barrier: every thread of a workgroup must reach it; move it out of the divergent code"),
                    );
                } else if let Some(i) = indices.iter().find(|i| !self.uniform(**i)) {
                    self.errors.push(
                        Diagnostic::new(
                            f.exprs[*i].span,
                            format!(
                                "the index of `workgroup_uniform_load` must be the same for every thread, and this one depends on {}",
                                self.why_varying(*i)
                            ),
                        )
                        .help("every thread reads the same element: index it with constants, `block_id()`, sizes, scalar parameters or uniform values"),
                    );
                }
            }
            ExprKind::If { cond, then, else_, cond_text } => {
                self.expr(*cond, div.clone());
                let inner = div.clone().or_else(|| {
                    (!self.uniform(*cond)).then(|| Divergence {
                        reason: format!(
                            "inside `if {cond_text}`, and the condition depends on {}",
                            self.why_varying(*cond)
                        ),
                    })
                });
                self.block(then, inner.clone());
                if let Some(x) = else_ {
                    self.expr(*x, inner);
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(*scrutinee, div.clone());
                let inner = div.clone().or_else(|| {
                    (!self.uniform(*scrutinee)).then(|| Divergence {
                        reason: format!(
                            "inside a `match` arm, and the matched value depends on {}",
                            self.why_varying(*scrutinee)
                        ),
                    })
                });
                for arm in arms {
                    if let (Some(l), true) = (arm.binding, inner.is_some() || !self.uniform(*scrutinee)) {
                        self.mark(l);
                    }
                    self.expr(arm.body, inner.clone());
                }
            }
            ExprKind::Logical(op, l, r) => {
                self.expr(*l, div.clone());
                let inner = div.clone().or_else(|| {
                    (!self.uniform(*l)).then(|| Divergence {
                        reason: format!(
                            "in the right-hand side of `{}`, which only the threads whose left-hand side is {} evaluate (it depends on {})",
                            match op {
                                LogicOp::And => "&&",
                                LogicOp::Or => "||",
                            },
                            match op {
                                LogicOp::And => "true",
                                LogicOp::Or => "false",
                            },
                            self.why_varying(*l)
                        ),
                    })
                });
                self.expr(*r, inner);
            }
            ExprKind::Loop { kind, body, label } => self.loop_expr(kind, body, label, div),
            ExprKind::Block(b) => self.block(b, div),
            ExprKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(*v, div.clone());
                }
                if let Some(d) = &div {
                    self.jumped = true;
                    self.returned.get_or_insert_with(|| Divergence {
                        reason: format!("after a `return` that only some threads take ({})", d.reason),
                    });
                }
            }
            ExprKind::Break { label, value } => {
                if let Some(v) = value {
                    self.expr(*v, div.clone());
                }
                self.jump(label, &div);
            }
            ExprKind::Continue { label } => self.jump(label, &div),
            ExprKind::Assign { place, value, .. } => {
                for o in operands(&f.exprs[e].kind) {
                    self.expr(o, div.clone());
                }
                let varying = div.is_some() || !self.uniform(*value);
                // An element assigned a varying value (or at a varying
                // index) makes the whole variable varying.
                let varying = varying
                    || match place {
                        Place::Project { steps, .. } => steps.iter().any(|s| match s {
                            Step::Index(i) => !self.uniform(*i),
                            Step::Field(_) | Step::NamedField(_) => false,
                        }),
                        _ => false,
                    };
                match place {
                    Place::Local(l) | Place::Project { local: l, .. } if varying => self.mark(*l),
                    Place::Param(p) if varying => self.mark_param(*p),
                    _ => {}
                }
            }
            kind => {
                for o in operands(kind) {
                    self.expr(o, div.clone());
                }
            }
        }
    }

    /// Whether `body` contains a `break`, `continue` or `return`.
    fn has_jump(&self, body: &Block) -> bool {
        let mut found = false;
        crate::visit::visit_block(self.f, body, 0, &mut |_, k, _| {
            found |= matches!(k, ExprKind::Break { .. } | ExprKind::Continue { .. } | ExprKind::Return(_));
        });
        found
    }

    /// A `break`/`continue` in control flow `div`: if divergent and it
    /// leaves the loop being probed (or one around it), the probe notes it.
    fn jump(&mut self, label: &Option<Label>, div: &Option<Divergence>) {
        if div.is_none() {
            return;
        }
        // Unlabelled jumps target the innermost loop; labelled ones the
        // loop with that label. A jump that stays inside a loop nested in
        // the probed one is that loop's business.
        let target_depth = match label {
            None => self.loops.len().checked_sub(1),
            Some(l) => self.loops.iter().rposition(|x| x.as_deref() == Some(l.name.as_str())),
        };
        let probed = self.probes.last().copied();
        if target_depth.zip(probed).is_some_and(|(target, probed)| target <= probed) {
            self.jumped = true;
        }
    }

    fn loop_expr(&mut self, kind: &LoopKind, body: &Block, label: &Option<Label>, div: Option<Divergence>) {
        let mut inner = div.clone();
        match kind {
            LoopKind::Loop => {}
            LoopKind::While { cond } => {
                self.expr(*cond, div.clone());
                if inner.is_none() && !self.uniform(*cond) {
                    inner = Some(Divergence {
                        reason: format!("inside a `while` loop whose condition depends on {}", self.why_varying(*cond)),
                    });
                }
            }
            LoopKind::For { var, start, end, step, .. } => {
                let bounds: Vec<ExprId> = [Some(*start), Some(*end), *step].into_iter().flatten().collect();
                for b in &bounds {
                    self.expr(*b, div.clone());
                }
                let varying = bounds.iter().find(|b| !self.uniform(**b)).copied();
                if div.is_some() || varying.is_some() {
                    self.mark(*var);
                }
                if let (None, Some(b)) = (&inner, varying) {
                    inner = Some(Divergence {
                        reason: format!("inside a `for` loop whose range depends on {}", self.why_varying(b)),
                    });
                }
            }
        }
        self.loops.push(label.as_ref().map(|l| l.name.clone()));
        if inner.is_none() && self.has_jump(body) {
            // Probe: does some thread leave an iteration early? Walk the
            // body as if it were uniform, without reporting; a jump out of
            // this loop in divergent control flow makes the whole body
            // divergent (later iterations run for the other threads only).
            // (A body without any jump cannot: no probe, so that nested
            // loops do not walk their bodies twice per level.)
            let (report, jumped, returned) = (self.report, self.jumped, self.returned.clone());
            self.report = false;
            self.jumped = false;
            self.probes.push(self.loops.len() - 1);
            self.block(body, None);
            self.probes.pop();
            let early = self.jumped;
            self.report = report;
            self.jumped = jumped;
            self.returned = returned;
            if early {
                inner = Some(Divergence {
                    reason: "inside a loop that some threads leave early (a `break`, `continue` or `return` in code that depends on the thread)".to_string(),
                });
            }
        }
        self.block(body, inner);
        self.loops.pop();
    }
}
