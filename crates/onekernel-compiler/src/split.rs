//! The phase split of a cooperative kernel: which of its code runs once
//! per workgroup and which in *phases*, loops over the workgroup's
//! invocations between two barriers (the CPU phase executor,
//! `onekernel-runtime`'s `cpu/phased.rs`). `analysis::cpu_plan` asks it
//! whether a kernel splits (`CpuPlan::Cooperative { phased }`), and
//! `expand/phases.rs` writes the split out.
//!
//! The body runs once per workgroup. Between two barriers, the statements
//! of every invocation run as one *phase*: a plain loop over the
//! workgroup's invocations (what CPU OpenCL implementations such as PoCL
//! do). The barriers themselves, and the control flow around them (`if`,
//! `while`, `loop`, `for` and blocks whose conditions the uniformity
//! analysis proved the same for every invocation), run once per workgroup,
//! around the phase loops:
//!
//! * a condition or loop bound computed from workgroup-wide values only
//!   (literals, parameters, `block_id()`, buffer lengths, and the locals
//!   below) is evaluated once;
//! * any other is evaluated by every invocation in a phase of its own, and
//!   they must agree (`agree`, a launch error if not: a second line of
//!   defence, as the futures executor's divergence check);
//! * a local whose every value is computed once per workgroup (a `let`
//!   and assignments, in that control flow, of workgroup-wide values, and
//!   the loop variables of `for` loops with barriers) is a Rust local of
//!   the workgroup's code;
//! * a local used in two phases is kept per invocation, in storage the
//!   executor allocates once per task (`PhaseLocals`); every other local is
//!   a Rust local of its phase's loop.
//!
//! Every invocation finishes a phase before any starts the next, so a
//! barrier's guarantee holds; the invocations of a phase run in the order
//! the futures executor polls them, so panics and results are the same.
//!
//! Kernels the splitter does not handle keep the futures executor
//! (`cooperative.rs`), and `splits` says why: subgroup collectives,
//! matrix tiles and `workgroup_uniform_load` (synchronising *inside* an
//! expression), a
//! barrier anywhere but in statements and the `if`/loop/block statements
//! around them (a `let x = { barrier(); .. }`, a `match` arm, a loop's
//! condition), an assignment to a parameter, and a local kept per
//! invocation whose type has no zero (a tuple of more than 8).
//!
//! A `return` before the body's last barrier is uniform (the uniformity
//! analysis makes everything after a divergent one divergent): it runs
//! once per workgroup and the whole workgroup returns. A `return` after
//! the last barrier ends the invocation's part of the last phase
//! (`continue '__inv`).

use crate::hir::*;
use crate::infer::Types;
use crate::types::{Compound, Ty, TypeTable};
use crate::uniformity::UniformityInfo;
use crate::visit::{operands, visit_expr};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A kernel split into the workgroup's code and phases.
pub(crate) struct PhaseSplit<'a> {
    /// What runs once per workgroup, and the workgroup's locals.
    pub split: Split<'a>,
    /// The workgroup's code.
    pub tree: Vec<Node<'a>>,
    /// The locals kept per invocation (used in two phases), in order.
    pub kept: Vec<LocalId>,
    /// The locals computed again where they are used (see
    /// `Split::recomputable`).
    pub recomputed: HashMap<LocalId, ExprId>,
}

/// Splits the kernel `f` into phases; `Err` says why the futures executor
/// must run it instead.
pub(crate) fn split<'a>(
    f: &'a Function,
    types: &Types,
    table: &TypeTable,
    uniformity: &'a UniformityInfo,
) -> Result<PhaseSplit<'a>, &'static str> {
    let mut split = Split::new(f, uniformity)?;
    split.lift_barriers()?;
    split.workgroup_locals()?;
    let tree = split.nodes(&f.body, true)?;
    // Which phases use each local.
    let mut used: BTreeMap<LocalId, BTreeSet<usize>> = BTreeMap::new();
    collect_uses(f, &tree, &mut used);
    let recomputed = split.recomputable();
    let mut kept = Vec::new();
    for (local, phases) in &used {
        if phases.len() < 2 || split.wg.contains(local) || recomputed.contains_key(local) {
            continue;
        }
        if !zeroable(types.locals[*local], table) {
            return Err("a local kept across a barrier has a type with no zero value");
        }
        if sized_by_const_param(types.locals[*local], table, f) {
            // The per-invocation state is a type outside the generic
            // bodies, where the parameter is not in scope.
            return Err("a local kept across a barrier is an array sized by a const parameter");
        }
        kept.push(*local);
    }
    Ok(PhaseSplit { split, tree, kept, recomputed })
}

/// Whether kernel `f` splits into phases (its plan is then
/// `CpuPlan::Cooperative { phased: true }`); `Err` says why the futures
/// executor must run it instead.
pub fn splits(f: &Function, types: &Types, table: &TypeTable, uniformity: &UniformityInfo) -> Result<(), &'static str> {
    split(f, types, table, uniformity).map(|_| ())
}

/// Whether `ty` is an array whose length (at some level) is a const
/// parameter of `f`.
fn sized_by_const_param(ty: Ty, table: &TypeTable, f: &Function) -> bool {
    match table.as_array(ty) {
        Some((elem, len)) => {
            table.symbol(len).is_some_and(|s| f.overrides.get(s.over).is_some_and(|o| o.generic))
                || sized_by_const_param(elem, table, f)
        }
        None => false,
    }
}

/// Whether `ty` has an all-zero value the runtime can make
/// (`bytemuck::Zeroable`).
fn zeroable(ty: Ty, table: &TypeTable) -> bool {
    match ty {
        Ty::Compound(id) => match table.get(id) {
            Compound::Array { elem, .. } => zeroable(*elem, table),
            Compound::Tuple(elems) => elems.len() <= 8 && elems.iter().all(|t| zeroable(*t, table)),
            Compound::Struct { .. } => true,
        },
        _ => true,
    }
}

/// A condition (or loop bounds) that controls barriers.
pub(crate) enum Cond {
    /// Evaluated once per workgroup.
    Once,
    /// Evaluated by every invocation, in this phase, which must agree.
    Agreed(usize),
}

/// The workgroup's code.
pub(crate) enum Node<'a> {
    /// Statements every invocation runs: one loop over the invocations.
    Phase { id: usize, stmts: Vec<&'a Stmt>, tail: Option<ExprId> },
    /// A statement run once: a workgroup-wide `let`, a shared array's
    /// view, a `const`.
    Once(&'a Stmt),
    /// A barrier, a `break` or a `continue`, or an assignment to a
    /// workgroup-wide local (once per workgroup).
    Expr(ExprId),
    /// An `if` with barriers.
    If { cond: ExprId, agree: Cond, then: Vec<Node<'a>>, else_: Option<Vec<Node<'a>>> },
    /// A loop with barriers (or a jump out of a loop with barriers).
    Loop { expr: ExprId, agree: Cond, body: Vec<Node<'a>> },
    /// A block with barriers.
    Block(Vec<Node<'a>>),
}

pub(crate) struct Split<'a> {
    f: &'a Function,
    /// Which values are the same in every invocation (the uniformity
    /// analysis' facts).
    uniformity: &'a UniformityInfo,
    /// Expressions that run once per workgroup: barriers, the control
    /// flow around them, and jumps out of loops with barriers.
    lifted: HashSet<ExprId>,
    /// Locals with one value per workgroup.
    wg: HashSet<LocalId>,
    /// The kernel has a `return`.
    returns: bool,
    /// The index of the last statement of the body (the tail is
    /// `stmts.len()`) with a barrier: code after it may `return`.
    last_lifted: Option<usize>,
    phases: usize,
}

impl<'a> Split<'a> {
    fn new(f: &'a Function, uniformity: &'a UniformityInfo) -> Result<Split<'a>, &'static str> {
        let mut returns = false;
        for (_, e) in f.exprs.iter() {
            match &e.kind {
                ExprKind::Subgroup { .. } => return Err("subgroup collectives synchronise inside expressions"),
                ExprKind::UniformLoad { .. } => {
                    return Err("`workgroup_uniform_load` synchronises inside an expression")
                }
                // On the CPU a tile load or store meets the workgroup (an
                // `.await`, see `cpu_body.rs`).
                ExprKind::Tile { .. } => return Err("matrix tile operations synchronise inside expressions"),
                ExprKind::Assign { place: Place::Param(_), .. } => return Err("a parameter is assigned"),
                ExprKind::Return(_) => returns = true,
                _ => {}
            }
        }
        Ok(Split { f, uniformity, lifted: HashSet::new(), wg: HashSet::new(), returns, last_lifted: None, phases: 0 })
    }

    /// Marks the barriers and everything around them, the jumps to loops
    /// with barriers and everything around those (until the loop), and
    /// the `return`s before the body's last barrier and everything around
    /// them. Such a `return` is uniform (the uniformity analysis makes the
    /// code after a divergent one divergent, so a barrier after it is an
    /// error): the whole workgroup returns. A `return` after the last
    /// barrier ends the invocation's last phase only.
    fn lift_barriers(&mut self) -> Result<(), &'static str> {
        let f = self.f;
        let body = &f.body;
        let mut paths = Vec::new();
        let mut jumps = Vec::new();
        let mut returns = Vec::new();
        // The statement (index; the tail's is `stmts.len()`) of each root.
        let mut statement = HashMap::new();
        for (i, s) in body.stmts.iter().enumerate() {
            for r in stmt_roots(s) {
                statement.insert(r, i);
            }
        }
        if let Some(t) = body.tail {
            statement.insert(t, body.stmts.len());
        }
        for root in roots(body) {
            walk(f, root, &mut Vec::new(), &mut Vec::new(), &mut paths, &mut jumps, &mut returns);
        }
        for path in &paths {
            self.lifted.extend(path.iter().copied());
        }
        // To a fixed point: lifting a jump or a `return` can lift a loop
        // that other jumps leave, or move the last barrier's statement.
        loop {
            let before = self.lifted.len();
            for (path, target) in &jumps {
                if self.lifted.contains(target) {
                    let at = path.iter().position(|e| e == target).map_or(0, |p| p + 1);
                    self.lifted.extend(path[at..].iter().copied());
                }
            }
            let last = statement.iter().filter(|(r, _)| self.lifted.contains(r)).map(|(_, i)| *i).max();
            self.last_lifted = last;
            for path in &returns {
                if last.is_some_and(|last| statement[&path[0]] <= last) {
                    self.lifted.extend(path.iter().copied());
                }
            }
            if self.lifted.len() == before {
                break;
            }
        }
        for e in &self.lifted {
            match &f.exprs[*e].kind {
                ExprKind::Barrier { .. }
                | ExprKind::If { .. }
                | ExprKind::Loop { .. }
                | ExprKind::Block(_)
                | ExprKind::Break { value: None, .. }
                | ExprKind::Continue { .. }
                | ExprKind::Return(None) => {}
                _ => return Err("a barrier inside an expression other than `if`, a loop or a block"),
            }
        }
        Ok(())
    }

    /// Whether statement `index` of a block runs where an invocation may
    /// already have returned (after the body's last barrier).
    fn after_returns(&self, top: bool, index: usize) -> bool {
        top && self.returns && self.last_lifted.is_none_or(|l| index > l)
    }

    /// The locals with one value per workgroup: the uniform locals (the
    /// uniformity analysis' facts) declared and assigned only in the
    /// workgroup's code, with values it can compute; to a fixed point,
    /// since one stops being computable there when a value assigned to it
    /// reads another that stopped.
    fn workgroup_locals(&mut self) -> Result<(), &'static str> {
        let f = self.f;
        // Each candidate's `let` value, and the assignments (value) that
        // are statements of the workgroup's code.
        let mut lets: HashMap<LocalId, ExprId> = HashMap::new();
        let mut direct: HashSet<ExprId> = HashSet::new();
        let mut loop_vars = Vec::new();
        self.lifted_statements(&f.body, true, &mut |s, after| match s {
            Stmt::Let { local, init: Some(init) } if !after => {
                lets.insert(*local, *init);
            }
            Stmt::Expr(e) if !after => {
                direct.insert(*e);
            }
            _ => {}
        });
        for e in &self.lifted {
            if let ExprKind::Loop { kind: LoopKind::For { var, .. }, .. } = &f.exprs[*e].kind {
                loop_vars.push(*var);
            }
        }
        // Every assignment to a local: (the assignment, its value).
        let mut writes: HashMap<LocalId, Vec<(ExprId, ExprId, bool)>> = HashMap::new();
        for (id, e) in f.exprs.iter() {
            if let ExprKind::Assign { place, value, .. } = &e.kind {
                let (local, whole) = match place {
                    Place::Local(l) => (*l, true),
                    Place::Project { local, .. } => (*local, false),
                    _ => continue,
                };
                writes.entry(local).or_default().push((id, *value, whole));
            }
        }
        for var in &loop_vars {
            if writes.contains_key(var) {
                return Err("the variable of a loop with barriers is assigned");
            }
        }
        self.wg.extend(loop_vars.iter().copied());
        // A `let` of the workgroup's code is a candidate if the uniformity
        // analysis found it uniform; it stays one if its values can be
        // computed there.
        self.wg.extend(lets.keys().copied().filter(|l| self.uniformity.local(*l)));
        loop {
            let mut changed = false;
            for (local, init) in &lets {
                if !self.wg.contains(local) {
                    continue;
                }
                let ok = self.once(*init)
                    && writes.get(local).is_none_or(|ws| {
                        ws.iter().all(|(assign, value, whole)| *whole && direct.contains(assign) && self.once(*value))
                    });
                if !ok {
                    self.wg.remove(local);
                    changed = true;
                }
            }
            if !changed {
                return Ok(());
            }
        }
    }

    /// Calls `visit` on each statement (and each tail, as a statement) of
    /// the workgroup's code, with whether an invocation may have returned.
    fn lifted_statements(&self, b: &Block, top: bool, visit: &mut dyn FnMut(&Stmt, bool)) {
        for (i, s) in b.stmts.iter().enumerate() {
            visit(s, self.after_returns(top, i));
            if let Stmt::Expr(e) = s {
                self.lifted_children(*e, visit);
            }
        }
        if let Some(t) = b.tail {
            visit(&Stmt::Expr(t), self.after_returns(top, b.stmts.len()));
            self.lifted_children(t, visit);
        }
    }

    fn lifted_children(&self, e: ExprId, visit: &mut dyn FnMut(&Stmt, bool)) {
        if !self.lifted.contains(&e) {
            return;
        }
        match &self.f.exprs[e].kind {
            ExprKind::If { then, else_, .. } => {
                self.lifted_statements(then, false, visit);
                if let Some(e) = else_ {
                    self.lifted_else(*e, visit);
                }
            }
            ExprKind::Loop { body, .. } => self.lifted_statements(body, false, visit),
            ExprKind::Block(b) => self.lifted_statements(b, false, visit),
            _ => {}
        }
    }

    /// The `else` of an `if` with barriers runs as workgroup code too.
    fn lifted_else(&self, e: ExprId, visit: &mut dyn FnMut(&Stmt, bool)) {
        match &self.f.exprs[e].kind {
            ExprKind::Block(b) => self.lifted_statements(b, false, visit),
            ExprKind::If { .. } if self.lifted.contains(&e) => self.lifted_children(e, visit),
            // An `else if` without barriers: a statement of its own.
            _ => visit(&Stmt::Expr(e), false),
        }
    }

    /// Whether `e` can be computed once for the workgroup: uniform (the
    /// uniformity analysis' fact), and a value the workgroup's code can
    /// compute (see [`Split::computable`]).
    pub(crate) fn once(&self, e: ExprId) -> bool {
        self.uniformity.expr(e) && self.computable(e)
    }

    /// Whether the workgroup's code can compute `e`: no effect, no control
    /// flow, and no local but the workgroup's own (whether the value is
    /// the same for every invocation is the uniformity analysis' answer,
    /// not this one's).
    fn computable(&self, e: ExprId) -> bool {
        let kind = &self.f.exprs[e].kind;
        match kind {
            ExprKind::Lit(_)
            | ExprKind::Const(_)
            | ExprKind::ConstRef(_)
            | ExprKind::Override(_)
            | ExprKind::Len(_)
            | ExprKind::Param(_)
            | ExprKind::Builtin { .. }
            | ExprKind::ArrayLen(_) => true,
            ExprKind::Local(l) => self.wg.contains(l),
            ExprKind::Axis(..)
            | ExprKind::Swizzle(..)
            | ExprKind::Unary(..)
            | ExprKind::Cast(..)
            | ExprKind::Convert(..)
            | ExprKind::Typed(..)
            | ExprKind::Repeat(..)
            | ExprKind::Field(..)
            | ExprKind::NamedField(..)
            | ExprKind::Array(_)
            | ExprKind::Tuple(_)
            | ExprKind::Vector { .. }
            | ExprKind::StructLit { .. }
            | ExprKind::Element { .. }
            | ExprKind::Binary(..)
            | ExprKind::Logical(..)
            | ExprKind::Call { .. }
            | ExprKind::Math(..) => operands(kind).into_iter().all(|x| self.computable(x)),
            // Memory, synchronisation, control flow and effects run per
            // invocation.
            ExprKind::Error
            | ExprKind::Index { .. }
            | ExprKind::SharedIndex { .. }
            | ExprKind::Atomic { .. }
            | ExprKind::Barrier { .. }
            | ExprKind::Subgroup { .. }
            | ExprKind::Tile { .. }
            | ExprKind::UniformLoad { .. }
            | ExprKind::If { .. }
            | ExprKind::Match { .. }
            | ExprKind::Block(_)
            | ExprKind::Loop { .. }
            | ExprKind::Break { .. }
            | ExprKind::Continue { .. }
            | ExprKind::Return(_)
            | ExprKind::Debug(_)
            | ExprKind::Assign { .. } => false,
        }
    }

    /// The locals whose value is computed again wherever they are used,
    /// instead of being stored per invocation: never assigned, and their
    /// `let` value made of the invocation's builtins, literals, arithmetic
    /// and other such locals only (`let t = thread_id().x;`, `let row =
    /// block_id().y * 16 + ty;`). That is as cheap as a load, and it lets
    /// the compiler see `t` is the phase loop's counter. (Parameters and
    /// other locals are left out: their names could mean another binding
    /// where the value is computed again.) Computing the value again gives
    /// the same value, and cannot panic where the `let` did not.
    fn recomputable(&self) -> HashMap<LocalId, ExprId> {
        let f = self.f;
        let mut assigned = HashSet::new();
        for (_, e) in f.exprs.iter() {
            if let ExprKind::Assign { place: Place::Local(l) | Place::Project { local: l, .. }, .. } = &e.kind {
                assigned.insert(*l);
            }
        }
        let mut lets = Vec::new();
        let mut all = |b: &Block| {
            for s in &b.stmts {
                if let Stmt::Let { local, init: Some(init) } = s {
                    lets.push((*local, *init));
                }
            }
        };
        all(&f.body);
        for (_, e) in f.exprs.iter() {
            match &e.kind {
                ExprKind::If { then, .. } => all(then),
                ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => all(b),
                _ => {}
            }
        }
        // In source order, so that a local's value can use earlier ones.
        lets.sort_by_key(|(l, _)| *l);
        let mut out: HashMap<LocalId, ExprId> = HashMap::new();
        for (local, init) in lets {
            if assigned.contains(&local) || self.wg.contains(&local) {
                continue;
            }
            let mut size = 0;
            let mut ok = true;
            visit_expr(f, init, 0, &mut |_, k, _| {
                size += 1;
                ok &= match k {
                    ExprKind::Builtin { .. } | ExprKind::Axis(..) | ExprKind::Lit(_) | ExprKind::Cast(..) => true,
                    ExprKind::Binary(op, ..) => !matches!(op, BinOp::Div | BinOp::Rem),
                    ExprKind::Local(l) => out.contains_key(l),
                    _ => false,
                };
            });
            if ok && size <= 12 {
                out.insert(local, init);
            }
        }
        out
    }

    fn agree(&mut self, exprs: &[ExprId]) -> Cond {
        if exprs.iter().all(|e| self.once(*e)) {
            Cond::Once
        } else {
            self.phases += 1;
            Cond::Agreed(self.phases - 1)
        }
    }

    /// The workgroup's code for a block of it.
    fn nodes(&mut self, b: &'a Block, top: bool) -> Result<Vec<Node<'a>>, &'static str> {
        let mut out = Vec::new();
        let mut phase: Vec<&'a Stmt> = Vec::new();
        let flush = |phase: &mut Vec<&'a Stmt>, out: &mut Vec<Node<'a>>, phases: &mut usize, tail: Option<ExprId>| {
            if !phase.is_empty() || tail.is_some() {
                out.push(Node::Phase { id: *phases, stmts: std::mem::take(phase), tail });
                *phases += 1;
            }
        };
        // Where an invocation may have returned, everything stays in one
        // phase (a `const` or a shared view too): its `continue '__inv`
        // skips the rest of the invocation's code.
        let once_expr = |this: &Self, e: ExprId, after: bool| {
            this.lifted.contains(&e)
                || (!after
                    && matches!(&this.f.exprs[e].kind,
                        ExprKind::Assign { place: Place::Local(l), .. } if this.wg.contains(l)))
        };
        for (i, s) in b.stmts.iter().enumerate() {
            let after = self.after_returns(top, i);
            let once = match s {
                Stmt::Shared(_) | Stmt::Const(_) => !after,
                Stmt::Let { local, .. } => !after && self.wg.contains(local),
                Stmt::Expr(e) => once_expr(self, *e, after),
                Stmt::LetTuple { .. } => false,
            };
            if let Stmt::Let { init: Some(e), .. } | Stmt::LetTuple { init: e, .. } = s {
                if self.lifted.contains(e) {
                    return Err("a barrier in the value of a `let`");
                }
            }
            if !once {
                phase.push(s);
                continue;
            }
            flush(&mut phase, &mut out, &mut self.phases, None);
            match s {
                Stmt::Expr(e) if self.lifted.contains(e) => out.push(self.lifted_node(*e)?),
                Stmt::Expr(e) => out.push(Node::Expr(*e)),
                _ => out.push(Node::Once(s)),
            }
        }
        match b.tail {
            Some(t) if once_expr(self, t, self.after_returns(top, b.stmts.len())) => {
                flush(&mut phase, &mut out, &mut self.phases, None);
                out.push(if self.lifted.contains(&t) { self.lifted_node(t)? } else { Node::Expr(t) });
            }
            tail => flush(&mut phase, &mut out, &mut self.phases, tail),
        }
        Ok(out)
    }

    fn lifted_node(&mut self, e: ExprId) -> Result<Node<'a>, &'static str> {
        let f = self.f;
        if operands(&f.exprs[e].kind).iter().any(|x| self.lifted.contains(x)) {
            return Err("a barrier in the condition or bounds of an `if` or a loop");
        }
        Ok(match &f.exprs[e].kind {
            ExprKind::If { cond, then, else_, .. } => {
                let agree = self.agree(&[*cond]);
                let then = self.nodes(then, false)?;
                let else_ = match else_ {
                    None => None,
                    Some(x) => Some(match &f.exprs[*x].kind {
                        ExprKind::Block(b) => self.nodes(b, false)?,
                        ExprKind::If { .. } if self.lifted.contains(x) => vec![self.lifted_node(*x)?],
                        _ => {
                            self.phases += 1;
                            vec![Node::Phase { id: self.phases - 1, stmts: Vec::new(), tail: Some(*x) }]
                        }
                    }),
                };
                Node::If { cond: *cond, agree, then, else_ }
            }
            ExprKind::Loop { kind, body, .. } => {
                let agree = match kind {
                    LoopKind::Loop => Cond::Once,
                    LoopKind::While { cond } => self.agree(&[*cond]),
                    LoopKind::For { .. } => self.agree(&operands(&f.exprs[e].kind)),
                };
                Node::Loop { expr: e, agree, body: self.nodes(body, false)? }
            }
            ExprKind::Block(b) => Node::Block(self.nodes(b, false)?),
            _ => Node::Expr(e),
        })
    }
}

/// The root expressions of a block's statements and tail.
fn roots(b: &Block) -> Vec<ExprId> {
    b.stmts.iter().flat_map(stmt_roots).chain(b.tail).collect()
}

fn stmt_roots(s: &Stmt) -> Vec<ExprId> {
    match s {
        Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) | Stmt::LetTuple { init: e, .. } => vec![*e],
        Stmt::Let { init: None, .. } | Stmt::Shared(_) | Stmt::Const(_) => vec![],
    }
}

/// Walks `e` with the path of expressions from its statement down
/// (`path`) and the enclosing loops: records the path to each barrier and
/// each `return`, and each jump's path and target loop.
fn walk(
    f: &Function,
    e: ExprId,
    path: &mut Vec<ExprId>,
    loops: &mut Vec<(ExprId, Option<String>)>,
    barriers: &mut Vec<Vec<ExprId>>,
    jumps: &mut Vec<(Vec<ExprId>, ExprId)>,
    returns: &mut Vec<Vec<ExprId>>,
) {
    path.push(e);
    let kind = &f.exprs[e].kind;
    match kind {
        ExprKind::Barrier { .. } => barriers.push(path.clone()),
        ExprKind::Return(_) => returns.push(path.clone()),
        ExprKind::Break { label, .. } | ExprKind::Continue { label } => {
            let target = match label {
                None => loops.last(),
                Some(l) => loops.iter().rev().find(|(_, name)| name.as_deref() == Some(l.name.as_str())),
            };
            if let Some((target, _)) = target {
                jumps.push((path.clone(), *target));
            }
        }
        _ => {}
    }
    for c in operands(kind) {
        walk(f, c, path, loops, barriers, jumps, returns);
    }
    let mut block = |b: &Block, path: &mut Vec<ExprId>, loops: &mut Vec<(ExprId, Option<String>)>| {
        for r in roots(b) {
            walk(f, r, path, loops, barriers, jumps, returns);
        }
    };
    match kind {
        ExprKind::If { then, else_, .. } => {
            block(then, path, loops);
            if let Some(x) = else_ {
                walk(f, *x, path, loops, barriers, jumps, returns);
            }
        }
        ExprKind::Block(b) => block(b, path, loops),
        ExprKind::Loop { body, label, .. } => {
            loops.push((e, label.as_ref().map(|l| l.name.clone())));
            block(body, path, loops);
            loops.pop();
        }
        ExprKind::Match { arms, .. } => {
            for arm in arms {
                walk(f, arm.body, path, loops, barriers, jumps, returns);
            }
        }
        _ => {}
    }
    path.pop();
}

/// Records, for each local, the phases that use it (agreed conditions are
/// phases too).
fn collect_uses(f: &Function, nodes: &[Node<'_>], used: &mut BTreeMap<LocalId, BTreeSet<usize>>) {
    for n in nodes {
        match n {
            Node::Phase { id, stmts, tail } => {
                let mut mark = |l: LocalId| {
                    used.entry(l).or_default().insert(*id);
                };
                for s in stmts {
                    match s {
                        Stmt::Let { local, .. } => mark(*local),
                        Stmt::LetTuple { locals, .. } => locals.iter().for_each(|l| mark(*l)),
                        _ => {}
                    }
                    for r in stmt_roots(s) {
                        expr_locals(f, r, &mut mark);
                    }
                }
                if let Some(t) = tail {
                    expr_locals(f, *t, &mut mark);
                }
            }
            Node::Once(_) | Node::Expr(_) => {}
            Node::If { cond, agree, then, else_ } => {
                if let Cond::Agreed(id) = agree {
                    expr_locals(f, *cond, &mut |l| {
                        used.entry(l).or_default().insert(*id);
                    });
                }
                collect_uses(f, then, used);
                if let Some(e) = else_ {
                    collect_uses(f, e, used);
                }
            }
            Node::Loop { expr, agree, body } => {
                if let Cond::Agreed(id) = agree {
                    for x in operands(&f.exprs[*expr].kind) {
                        expr_locals(f, x, &mut |l| {
                            used.entry(l).or_default().insert(*id);
                        });
                    }
                }
                collect_uses(f, body, used);
            }
            Node::Block(b) => collect_uses(f, b, used),
        }
    }
}

/// Calls `mark` on every local `e` reads, writes or declares.
fn expr_locals(f: &Function, e: ExprId, mark: &mut dyn FnMut(LocalId)) {
    visit_expr(f, e, 0, &mut |_, k, _| match k {
        ExprKind::Local(l) => mark(*l),
        ExprKind::Assign { place: Place::Local(l) | Place::Project { local: l, .. }, .. } => mark(*l),
        ExprKind::Loop { kind: LoopKind::For { var, .. }, .. } => mark(*var),
        ExprKind::Match { arms, .. } => arms.iter().filter_map(|a| a.binding).for_each(&mut *mark),
        ExprKind::If { then, .. } => block_lets(then, mark),
        ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => block_lets(b, mark),
        _ => {}
    });
}

/// The locals a block's own statements declare (its expressions are
/// visited by the caller).
fn block_lets(b: &Block, mark: &mut dyn FnMut(LocalId)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { local, .. } => mark(*local),
            Stmt::LetTuple { locals, .. } => locals.iter().for_each(|l| mark(*l)),
            _ => {}
        }
    }
}
