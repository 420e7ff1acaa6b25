//! Type inference: gives every expression and local exactly the type rustc
//! gives it, so that the GPU computes in the same types as the CPU.
//!
//! It is a small unification over type variables. Unsuffixed literals start
//! as "some integer" or "some float" and default to `i32` / `f64` as in
//! rustc (`f64` is then reported: GPUs lack it). Problems that rustc reports
//! itself (mismatched types, a method on the wrong type) are recorded as
//! silent diagnostics: they stop the lowering but the user sees rustc's
//! message, once.

use crate::arena::HandleMap;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::hir::SubgroupCollective as C;
use crate::hir::*;
use crate::types::{Compound, Lane, Ty, TypeTable, VecTy};
use crate::visit::block_diverges;
use std::collections::HashMap;

/// The signature of a helper function, for checking calls.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Parameter types.
    pub params: Vec<Ty>,
    /// Result type.
    pub ret: Ty,
}

/// The resolved types of one function.
#[derive(Clone, Debug)]
pub struct Types {
    /// Type of each expression.
    pub exprs: HandleMap<Expr, Ty>,
    /// Type of each local.
    pub locals: HandleMap<Local, Ty>,
    /// For each override (`Function::overrides`): whether its uses leave
    /// it an integer of any type (`0..BLOCK`), typed `i32` as rustc types
    /// an unconstrained integer literal.
    pub any_int_overrides: Vec<bool>,
}

/// A type variable: what is known of a type so far. Compound types are
/// structural (`Array(element variable, length)`), so that `[0.0; 4]` can
/// have its element type decided later, as rustc does.
#[derive(Clone, Debug)]
enum Var {
    Link(usize),
    Unknown,
    Int,
    Float,
    Known(Ty),
    Array(usize, u32),
    Tuple(Vec<usize>),
}

struct Infer<'a> {
    f: &'a Function,
    sigs: &'a HashMap<String, Signature>,
    table: &'a mut TypeTable,
    vars: Vec<Var>,
    diags: Diagnostics,
    /// Type variable of each enclosing loop's `break` value (label, var).
    loops: Vec<(Option<String>, usize, bool)>,
}

/// Infers the types of `f`. `sigs` holds the helpers it may call; compound
/// types it resolves are interned in `table`.
pub fn infer(f: &Function, sigs: &HashMap<String, Signature>, table: &mut TypeTable) -> Result<Types, Vec<Diagnostic>> {
    // One variable per expression, per local and per override (a
    // constant of the kernel's scope has the type its uses give it).
    let n = f.exprs.len() + f.locals.len() + f.overrides.len();
    let mut cx =
        Infer { f, sigs, table, vars: vec![Var::Unknown; n], diags: Diagnostics::default(), loops: Vec::new() };
    for (i, o) in f.overrides.iter().enumerate() {
        if let Some(t) = o.ty {
            let (v, k) = (cx.override_var(i), cx.known(t));
            cx.unify(v, k);
        }
    }
    for (i, l) in f.locals.iter() {
        if let Some(t) = l.annotated {
            let (v, k) = (cx.local(i), cx.known(t));
            cx.unify(v, k);
        }
    }
    let body_ty = cx.block(&f.body);
    let ret = cx.known(f.ret);
    if !block_diverges(f, &f.body) {
        cx.unify(body_ty, ret);
    }
    cx.finish()
}

impl<'a> Infer<'a> {
    /// The type variable of an expression.
    fn var(&self, id: ExprId) -> usize {
        id.index()
    }

    /// The type variable of a local.
    fn local(&self, id: LocalId) -> usize {
        self.f.exprs.len() + id.index()
    }

    /// The type variable of an override (`Function::overrides[i]`).
    fn override_var(&self, i: usize) -> usize {
        self.f.exprs.len() + self.f.locals.len() + i
    }

    fn fresh(&mut self, v: Var) -> usize {
        self.vars.push(v);
        self.vars.len() - 1
    }

    /// A variable for the type `t`, compound types as structure.
    fn known(&mut self, t: Ty) -> usize {
        match t {
            Ty::Compound(id) => match self.table.get(id).clone() {
                Compound::Array { elem, len } => {
                    let e = self.known(elem);
                    self.fresh(Var::Array(e, len))
                }
                Compound::Tuple(elems) => {
                    let vars = elems.into_iter().map(|e| self.known(e)).collect();
                    self.fresh(Var::Tuple(vars))
                }
                // Structs are nominal: known as a whole.
                Compound::Struct { .. } => self.fresh(Var::Known(t)),
            },
            t => self.fresh(Var::Known(t)),
        }
    }

    /// The root of `v`'s class. Compresses the path: `unify` links one
    /// root under the other, and a variable assigned in every statement
    /// (`x = x * 2.0 + ..`) would otherwise sit at the end of a chain as
    /// long as the kernel, making the checks quadratic in its length.
    fn find(&mut self, v: usize) -> usize {
        let mut root = v;
        while let Var::Link(next) = self.vars[root] {
            root = next;
        }
        let mut at = v;
        while let Var::Link(next) = self.vars[at] {
            self.vars[at] = Var::Link(root);
            at = next;
        }
        root
    }

    fn unify(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let merged = match (self.vars[a].clone(), self.vars[b].clone()) {
            (Var::Unknown, x) | (x, Var::Unknown) => Some(x),
            (Var::Int, Var::Int) => Some(Var::Int),
            (Var::Float, Var::Float) => Some(Var::Float),
            (Var::Known(t), Var::Int) | (Var::Int, Var::Known(t)) if t.is_integer() => Some(Var::Known(t)),
            // A float literal is an `f32` or an `f64`; `half::f16` has none.
            (Var::Known(t @ (Ty::F32 | Ty::F64)), Var::Float) | (Var::Float, Var::Known(t @ (Ty::F32 | Ty::F64))) => {
                Some(Var::Known(t))
            }
            (Var::Known(x), Var::Known(y)) if x == y => Some(Var::Known(x)),
            (Var::Array(x, n), Var::Array(y, m)) if n == m => {
                self.vars[b] = Var::Link(a);
                self.unify(x, y);
                return;
            }
            (Var::Tuple(xs), Var::Tuple(ys)) if xs.len() == ys.len() => {
                self.vars[b] = Var::Link(a);
                for (x, y) in xs.into_iter().zip(ys) {
                    self.unify(x, y);
                }
                return;
            }
            _ => None,
        };
        match merged {
            Some(v) => {
                self.vars[a] = v;
                self.vars[b] = Var::Link(a);
            }
            // rustc reports "mismatched types" itself.
            None => self.diags.left_to_rustc(proc_macro2::Span::call_site()),
        }
    }

    /// The type of the field `name` when `v` is known to be a struct with
    /// such a field.
    fn struct_field_of(&mut self, v: usize, name: &str) -> Option<Ty> {
        let r = self.find(v);
        match self.vars[r] {
            Var::Known(t) => self.table.struct_field(t, name).map(|(_, ft)| ft),
            _ => None,
        }
    }

    /// The vector type `v` is known to be, if it is one.
    fn vector_of(&mut self, v: usize) -> Option<VecTy> {
        let r = self.find(v);
        match self.vars[r] {
            Var::Known(Ty::Vector(t)) => Some(t),
            _ => None,
        }
    }

    /// When exactly one of `l` and `r` is a vector: the other is one of its
    /// lanes (glam's `v * 2.0`, `2.0 * v`); the vector's variable.
    fn vector_scalar(&mut self, l: usize, r: usize) -> Option<usize> {
        let (vector, scalar, v) = match (self.vector_of(l), self.vector_of(r)) {
            (Some(v), None) => (l, r, v),
            (None, Some(v)) => (r, l, v),
            _ => return None,
        };
        let k = self.known(v.lane.ty());
        self.unify(scalar, k);
        Some(vector)
    }

    /// The element variable of an array variable, if `v` is one.
    fn array_elem(&mut self, v: usize) -> Option<usize> {
        let r = self.find(v);
        match self.vars[r] {
            Var::Array(e, _) => Some(e),
            _ => None,
        }
    }

    fn set(&mut self, e: ExprId, v: usize) -> usize {
        let e = self.var(e);
        self.unify(e, v);
        e
    }

    fn set_known(&mut self, e: ExprId, t: Ty) -> usize {
        let k = self.known(t);
        self.set(e, k)
    }

    fn block(&mut self, b: &Block) -> usize {
        for s in &b.stmts {
            match s {
                Stmt::Let { local, init } => {
                    let lv = self.local(*local);
                    if let Some(init) = init {
                        let t = self.expr(*init);
                        self.unify(lv, t);
                    }
                }
                Stmt::Expr(e) => {
                    self.expr(*e);
                }
                Stmt::Shared(_) | Stmt::Const(_) => {}
                Stmt::LetTuple { locals, init } => {
                    let t = self.expr(*init);
                    let vars: Vec<usize> = locals.iter().map(|l| self.local(*l)).collect();
                    let tuple = self.fresh(Var::Tuple(vars));
                    self.unify(tuple, t);
                }
            }
        }
        match b.tail {
            Some(t) => self.expr(t),
            None if block_diverges(self.f, b) => self.fresh(Var::Unknown),
            None => self.known(Ty::Unit),
        }
    }

    fn expr(&mut self, id: ExprId) -> usize {
        let f = self.f;
        match &f.exprs[id].kind {
            ExprKind::Lit(Lit::Int(_, Some(t))) | ExprKind::Lit(Lit::Float(_, Some(t))) => self.set_known(id, *t),
            ExprKind::Lit(Lit::Int(_, None)) => {
                let v = self.fresh(Var::Int);
                self.set(id, v)
            }
            ExprKind::Lit(Lit::Float(_, None)) => {
                let v = self.fresh(Var::Float);
                self.set(id, v)
            }
            ExprKind::Lit(Lit::Bool(_)) => self.set_known(id, Ty::Bool),
            ExprKind::Const(c) => self.set_known(id, c.ty),
            ExprKind::ConstRef(c) => self.set_known(id, f.consts[*c].ty),
            ExprKind::Override(i) => {
                let v = self.override_var(*i);
                self.set(id, v)
            }
            ExprKind::Local(l) => {
                let lv = self.local(*l);
                self.set(id, lv)
            }
            ExprKind::Param(p) => self.set_known(id, f.params[*p].kind.ty()),
            ExprKind::Builtin { builtin, .. } => self.set_known(
                id,
                match builtin.ty() {
                    BuiltinType::Axes => Ty::Dim3,
                    BuiltinType::U32 => Ty::U32,
                },
            ),
            // Never reached: a function with an error is not typed.
            ExprKind::Error => self.var(id),
            ExprKind::Axis(base, axis) => {
                let b = self.expr(*base);
                // `.x` of a struct is its field `x`.
                if let Some(field) = self.struct_field_of(b, axis_name(*axis)) {
                    return self.set_known(id, field);
                }
                // `.x` to `.w` of a vector: a lane.
                if let Some(v) = self.vector_of(b) {
                    if *axis >= u32::from(v.size) {
                        self.diags.left_to_rustc(f.exprs[id].span);
                    }
                    return self.set_known(id, v.lane.ty());
                }
                if *axis > 2 {
                    // `Dim3` has no `w`; rustc says so.
                    self.diags.left_to_rustc(f.exprs[id].span);
                }
                let d = self.known(Ty::Dim3);
                self.unify(b, d);
                self.set_known(id, Ty::Usize)
            }
            ExprKind::NamedField(base, name) => {
                let b = self.expr(*base);
                match self.struct_field_of(b, name) {
                    Some(t) => self.set_known(id, t),
                    None => {
                        // Not a struct, or no such field: rustc says so.
                        self.diags.left_to_rustc(f.exprs[id].span);
                        self.var(id)
                    }
                }
            }
            ExprKind::Vector { ty, args, .. } => {
                for a in args {
                    let v = self.expr(*a);
                    let k = self.known(ty.lane.ty());
                    self.unify(v, k);
                }
                self.set_known(id, Ty::Vector(*ty))
            }
            ExprKind::Swizzle(base, lanes) => {
                let b = self.expr(*base);
                match self.vector_of(b) {
                    // onekernel's `f16` vectors have no swizzles.
                    Some(v) if v.is_glam() && lanes.iter().all(|l| *l < u32::from(v.size)) => {
                        self.set_known(id, Ty::Vector(v.resized(lanes.len() as u8)))
                    }
                    _ => {
                        // Not a vector, or a lane it has not: rustc says
                        // there is no such method.
                        self.diags.left_to_rustc(f.exprs[id].span);
                        self.var(id)
                    }
                }
            }
            ExprKind::StructLit { ty, fields } => {
                for (index, value) in fields {
                    let v = self.expr(*value);
                    let field_ty = self.table.as_struct(*ty).map(|(_, fs)| fs[*index as usize].1);
                    if let Some(ft) = field_ty {
                        let k = self.known(ft);
                        self.unify(v, k);
                    }
                }
                self.set_known(id, *ty)
            }
            ExprKind::Index { buffer, index } => {
                let i = self.expr(*index);
                let u = self.known(Ty::Usize);
                self.unify(i, u);
                self.set_known(id, f.params[*buffer].kind.ty())
            }
            ExprKind::Len(_) => self.set_known(id, Ty::Usize),
            ExprKind::SharedIndex { shared, indices } => {
                for i in indices {
                    let v = self.expr(*i);
                    let u = self.known(Ty::Usize);
                    self.unify(v, u);
                }
                self.set_known(id, f.shared[*shared].elem)
            }
            ExprKind::Atomic { target, op, args, .. } => {
                let elem = self.atomic_target(target);
                for a in args {
                    let v = self.expr(*a);
                    let k = self.known(elem);
                    self.unify(v, k);
                }
                match op {
                    AtomicOp::Store => self.set_known(id, Ty::Unit),
                    AtomicOp::CompareExchangeIsOk => self.set_known(id, Ty::Bool),
                    _ => self.set_known(id, elem),
                }
            }
            ExprKind::Barrier { .. } => self.set_known(id, Ty::Unit),
            ExprKind::UniformLoad { shared, indices, .. } => {
                for i in indices {
                    let v = self.expr(*i);
                    let u = self.known(Ty::Usize);
                    self.unify(v, u);
                }
                self.set_known(id, f.shared[*shared].elem)
            }
            ExprKind::Subgroup { op, args, .. } => {
                let vars: Vec<usize> = args.iter().map(|a| self.expr(*a)).collect();
                match op {
                    C::Ballot => {
                        let b = self.known(Ty::Bool);
                        self.unify(vars[0], b);
                        // WGSL's `vec4<u32>`: lane `i` is bit `i % 32` of word `i / 32`.
                        self.set_known(id, Ty::Vector(VecTy { lane: Lane::U32, size: 4, aligned: false }))
                    }
                    C::Add | C::Min | C::Max => self.set(id, vars[0]),
                    C::Broadcast | C::Shuffle | C::ShuffleXor | C::ShuffleDown => {
                        let u = self.known(Ty::U32);
                        self.unify(vars[1], u);
                        self.set(id, vars[0])
                    }
                }
            }
            ExprKind::Tile { op, args, .. } => {
                let vars: Vec<usize> = args.iter().map(|a| self.expr(*a)).collect();
                // Offsets and strides are indices; the operands' roles and
                // shapes are checked once known (`check_tile`), with a
                // message that says which tile goes where.
                let usize_at = |this: &mut Self, i: usize| {
                    let u = this.known(Ty::Usize);
                    this.unify(vars[i], u);
                };
                match op {
                    TileOp::Zeros(t) => self.set_known(id, Ty::Tile(*t)),
                    TileOp::Load { tile, .. } => {
                        usize_at(self, 0);
                        usize_at(self, 1);
                        self.set_known(id, Ty::Tile(*tile))
                    }
                    TileOp::MulAdd => self.set(id, vars[2]),
                    TileOp::Store { .. } => {
                        usize_at(self, 1);
                        usize_at(self, 2);
                        self.set_known(id, Ty::Unit)
                    }
                }
            }
            ExprKind::Array(elems) => {
                let vars: Vec<usize> = elems.iter().map(|e| self.expr(*e)).collect();
                for v in &vars[1..] {
                    self.unify(vars[0], *v);
                }
                let a = self.fresh(Var::Array(vars[0], elems.len() as u32));
                self.set(id, a)
            }
            ExprKind::Repeat(x, len) => {
                let x = self.expr(*x);
                let a = self.fresh(Var::Array(x, *len));
                self.set(id, a)
            }
            ExprKind::Tuple(elems) => {
                let vars = elems.iter().map(|e| self.expr(*e)).collect();
                let t = self.fresh(Var::Tuple(vars));
                self.set(id, t)
            }
            ExprKind::Element { base, index } => {
                let b = self.expr(*base);
                let i = self.expr(*index);
                let u = self.known(Ty::Usize);
                self.unify(i, u);
                if let Some(v) = self.vector_of(b) {
                    // `v[i]` on a glam vector (its `Index<usize>`): a lane.
                    return self.set_known(id, v.lane.ty());
                }
                match self.array_elem(b) {
                    Some(e) => self.set(id, e),
                    None => {
                        // Not an array (or not known to be one yet): rustc
                        // says what is wrong.
                        self.diags.left_to_rustc(f.exprs[id].span);
                        self.var(id)
                    }
                }
            }
            ExprKind::Field(base, n) => {
                let b = self.expr(*base);
                let r = self.find(b);
                match self.vars[r].clone() {
                    Var::Tuple(vars) if (*n as usize) < vars.len() => self.set(id, vars[*n as usize]),
                    _ => {
                        self.diags.left_to_rustc(f.exprs[id].span);
                        self.var(id)
                    }
                }
            }
            ExprKind::ArrayLen(base) => {
                let b = self.expr(*base);
                if self.array_elem(b).is_none() {
                    self.diags.left_to_rustc(f.exprs[id].span);
                }
                self.set_known(id, Ty::Usize)
            }
            ExprKind::Unary(_, x) => {
                let x = self.expr(*x);
                self.set(id, x)
            }
            ExprKind::Binary(op, l, r) => {
                let (l, r) = (self.expr(*l), self.expr(*r));
                if op.is_shift() {
                    // The shift amount may be any integer type; an
                    // unconstrained literal defaults to i32 as in rustc.
                    self.set(id, l)
                } else if let Some(result) = self.vector_scalar(l, r) {
                    // `v * 2.0`, `2.0 * v`: glam's vector-scalar operators.
                    if op.is_comparison() {
                        self.set_known(id, Ty::Bool)
                    } else {
                        self.set(id, result)
                    }
                } else {
                    self.unify(l, r);
                    if op.is_comparison() {
                        self.set_known(id, Ty::Bool)
                    } else {
                        self.set(id, l)
                    }
                }
            }
            ExprKind::Logical(_, l, r) => {
                let (l, r) = (self.expr(*l), self.expr(*r));
                let b = self.known(Ty::Bool);
                self.unify(l, b);
                self.unify(r, b);
                self.set(id, b)
            }
            ExprKind::Cast(x, t) | ExprKind::Convert(x, t) => {
                self.expr(*x);
                self.set_known(id, *t)
            }
            ExprKind::Typed(x, t) => {
                let x = self.expr(*x);
                let k = self.known(*t);
                self.unify(x, k);
                self.set(id, k)
            }
            ExprKind::Call { name, args } => {
                let arg_vars: Vec<usize> = args.iter().map(|a| self.expr(*a)).collect();
                match self.sigs.get(name).cloned() {
                    Some(sig) => {
                        if sig.params.len() != arg_vars.len() {
                            self.diags.left_to_rustc(f.exprs[id].span);
                        }
                        for (a, t) in arg_vars.iter().zip(&sig.params) {
                            let k = self.known(*t);
                            self.unify(*a, k);
                        }
                        self.set_known(id, sig.ret)
                    }
                    None => self.var(id),
                }
            }
            ExprKind::Math(op, args) => self.math(id, *op, args),
            ExprKind::If { cond, then, else_, .. } => {
                let c = self.expr(*cond);
                let b = self.known(Ty::Bool);
                self.unify(c, b);
                let t = self.block(then);
                match else_ {
                    Some(e) => {
                        let e = self.expr(*e);
                        self.unify(t, e);
                        self.set(id, t)
                    }
                    None => {
                        if !block_diverges(f, then) {
                            let u = self.known(Ty::Unit);
                            self.unify(t, u);
                        }
                        self.set_known(id, Ty::Unit)
                    }
                }
            }
            ExprKind::Block(b) => {
                let t = self.block(b);
                self.set(id, t)
            }
            ExprKind::Match { scrutinee, arms } => {
                let s = self.expr(*scrutinee);
                let result = self.fresh(Var::Unknown);
                for arm in arms {
                    if let Some(l) = arm.binding {
                        let lv = self.local(l);
                        self.unify(lv, s);
                    }
                    let t = self.expr(arm.body);
                    if !crate::visit::expr_diverges(f, arm.body) {
                        self.unify(result, t);
                    }
                }
                self.set(id, result)
            }
            ExprKind::Loop { label, kind, body } => {
                let break_var = self.fresh(Var::Unknown);
                match kind {
                    LoopKind::Loop => {}
                    LoopKind::While { cond } => {
                        let c = self.expr(*cond);
                        let b = self.known(Ty::Bool);
                        self.unify(c, b);
                    }
                    LoopKind::For { var, start, end, step, .. } => {
                        let (s, e) = (self.expr(*start), self.expr(*end));
                        self.unify(s, e);
                        let lv = self.local(*var);
                        self.unify(lv, s);
                        if let Some(step) = step {
                            let st = self.expr(*step);
                            let u = self.known(Ty::Usize);
                            self.unify(st, u);
                        }
                    }
                }
                self.loops.push((label.as_ref().map(|l| l.name.clone()), break_var, false));
                let bt = self.block(body);
                let u = self.known(Ty::Unit);
                if !block_diverges(f, body) {
                    self.unify(bt, u);
                }
                let (_, _, broke) = self.loops.pop().expect("loop");
                match kind {
                    LoopKind::Loop if broke => self.set(id, break_var),
                    LoopKind::Loop => {
                        let never = self.fresh(Var::Unknown);
                        self.set(id, never)
                    }
                    _ => self.set_known(id, Ty::Unit),
                }
            }
            ExprKind::Break { label, value } => {
                let target = match label {
                    Some(l) => self.loops.iter().rposition(|(x, _, _)| x.as_deref() == Some(l.name.as_str())),
                    None => self.loops.len().checked_sub(1),
                };
                let v = match value {
                    Some(v) => self.expr(*v),
                    None => self.known(Ty::Unit),
                };
                if let Some(t) = target {
                    self.loops[t].2 = true;
                    let bv = self.loops[t].1;
                    self.unify(bv, v);
                }
                let never = self.fresh(Var::Unknown);
                self.set(id, never)
            }
            ExprKind::Continue { .. } => {
                let never = self.fresh(Var::Unknown);
                self.set(id, never)
            }
            ExprKind::Debug(call) => {
                if let Some(c) = call.cond {
                    let c = self.expr(c);
                    let b = self.known(Ty::Bool);
                    self.unify(c, b);
                }
                let args: Vec<usize> = call.args.iter().map(|(_, a)| self.expr(*a)).collect();
                if call.kind.leading_args() == 2 {
                    self.unify(args[0], args[1]);
                }
                if crate::visit::expr_diverges(f, id) {
                    let never = self.fresh(Var::Unknown);
                    self.set(id, never)
                } else {
                    self.set_known(id, Ty::Unit)
                }
            }
            ExprKind::Return(v) => {
                let v = match v {
                    Some(v) => self.expr(*v),
                    None => self.known(Ty::Unit),
                };
                let r = self.known(f.ret);
                self.unify(v, r);
                let never = self.fresh(Var::Unknown);
                self.set(id, never)
            }
            ExprKind::Assign { place, op, value, .. } => {
                let v = self.expr(*value);
                let p = match place {
                    Place::Local(l) => self.local(*l),
                    Place::Param(p) => match f.params[*p].kind {
                        ParamKind::Scalar { ty, .. } => self.known(ty),
                        _ => self.fresh(Var::Unknown),
                    },
                    Place::Index { buffer, index } => {
                        let i = self.expr(*index);
                        let u = self.known(Ty::Usize);
                        self.unify(i, u);
                        self.known(f.params[*buffer].kind.ty())
                    }
                    Place::Shared { shared, indices } => {
                        for i in indices {
                            let v = self.expr(*i);
                            let u = self.known(Ty::Usize);
                            self.unify(v, u);
                        }
                        self.known(f.shared[*shared].elem)
                    }
                    Place::Project { local, steps } => {
                        let mut cur = self.local(*local);
                        for step in steps {
                            let r = self.find(cur);
                            cur = match (step, self.vars[r].clone()) {
                                (Step::Index(i), Var::Array(e, _)) => {
                                    let iv = self.expr(*i);
                                    let u = self.known(Ty::Usize);
                                    self.unify(iv, u);
                                    e
                                }
                                // `v[i] = ..` on a glam vector: a lane.
                                (Step::Index(i), Var::Known(Ty::Vector(v))) => {
                                    let iv = self.expr(*i);
                                    let u = self.known(Ty::Usize);
                                    self.unify(iv, u);
                                    self.known(v.lane.ty())
                                }
                                (Step::Field(n), Var::Tuple(vars)) if (*n as usize) < vars.len() => vars[*n as usize],
                                (Step::NamedField(name), Var::Known(Ty::Vector(v)))
                                    if lane_of(name).is_some_and(|l| l < u32::from(v.size)) =>
                                {
                                    self.known(v.lane.ty())
                                }
                                (Step::NamedField(name), Var::Known(t))
                                    if self.table.struct_field(t, name).is_some() =>
                                {
                                    let (_, ft) = self.table.struct_field(t, name).expect("checked");
                                    self.known(ft)
                                }
                                _ => {
                                    self.diags.left_to_rustc(f.exprs[id].span);
                                    self.fresh(Var::Unknown)
                                }
                            };
                        }
                        cur
                    }
                };
                // `v *= 2.0`: a vector place takes a scalar too.
                if !op.map(BinOp::is_shift).unwrap_or(false)
                    && (op.is_none() || self.vector_of(p).is_none() || self.vector_scalar(p, v).is_none())
                {
                    self.unify(p, v);
                }
                self.set_known(id, Ty::Unit)
            }
        }
    }

    /// Types the index of an atomic target; returns the value type.
    fn atomic_target(&mut self, target: &AtomicTarget) -> Ty {
        let f = self.f;
        let (indices, elem): (Vec<ExprId>, Ty) = match target {
            AtomicTarget::Buffer { param, index } => (vec![*index], f.params[*param].kind.ty()),
            AtomicTarget::Shared { shared, indices } => (indices.clone(), f.shared[*shared].elem),
        };
        for i in indices {
            let v = self.expr(i);
            let u = self.known(Ty::Usize);
            self.unify(v, u);
        }
        elem
    }

    fn math(&mut self, id: ExprId, op: MathOp, args: &[ExprId]) -> usize {
        use MathOp::*;
        let vars: Vec<usize> = args.iter().map(|a| self.expr(*a)).collect();
        let r = vars[0];
        // The `f16` vectors' conversions: `F16Vec4::from_vec4(v)` (the
        // recogniser made `v` `Typed` as a `Vec4`) and `h.to_vec4()`.
        let f16_vec = |size: u8| VecTy { lane: Lane::F16, size, aligned: false };
        match op {
            FromVec2 | FromVec4 => return self.set_known(id, Ty::Vector(f16_vec(if op == FromVec2 { 2 } else { 4 }))),
            ToVec2 | ToVec4 => {
                let size = if op == ToVec2 { 2 } else { 4 };
                let k = self.known(Ty::Vector(f16_vec(size)));
                self.unify(r, k);
                return self.set_known(id, Ty::Vector(VecTy { lane: Lane::F32, ..f16_vec(size) }));
            }
            _ => {}
        }
        if let Some(v) = self.vector_of(r) {
            // glam's methods: lane-wise ones return the vector, the others
            // (`dot`, `length`, `min_element`, ...) one lane's type.
            let lane = v.lane.ty();
            for (k, a) in vars.iter().enumerate().skip(1) {
                // The other operand is a vector of the same type (`a.min(b)`,
                // `a.lerp(b, t)`), else one lane (`v.extend(w)`; and for
                // glam methods kernels lack, so that `v.powf(2.0)` gets one
                // error, not a literal typed `f64` too).
                let vector_arg = matches!(op, Min | Max | Clamp | MulAdd | Dot | Distance | DistanceSquared | Cross)
                    || (op == Lerp && k == 1);
                let want = if vector_arg { r } else { self.known(lane) };
                self.unify(*a, want);
            }
            return match op {
                // `Vec3::extend(w)` is a `Vec4`, `Vec4::truncate()` a `Vec3`.
                Extend if v.size < 4 => self.set_known(id, Ty::Vector(v.resized(v.size + 1).unaligned())),
                Truncate if v.size > 2 => self.set_known(id, Ty::Vector(v.resized(v.size - 1).unaligned())),
                Extend | Truncate => {
                    self.diags.left_to_rustc(f_span(self.f, id));
                    self.var(id)
                }
                Dot | Length | LengthSquared | Distance | DistanceSquared | ElementSum | ElementProduct
                | MinElement | MaxElement => self.set_known(id, lane),
                _ => self.set(id, r),
            };
        }
        match op {
            Powi => {
                let k = self.known(Ty::I32);
                self.unify(vars[1], k);
            }
            Pow | RotateLeft | RotateRight => {
                let k = self.known(Ty::U32);
                self.unify(vars[1], k);
            }
            _ => {
                for v in &vars[1..] {
                    self.unify(r, *v);
                }
            }
        }
        match op {
            CountOnes | LeadingZeros | TrailingZeros => self.set_known(id, Ty::U32),
            // `f64::to_bits` is a `u64`.
            ToBits => match self.resolve(r) {
                Some(Ty::F64) => self.set_known(id, Ty::U64),
                _ => self.set_known(id, Ty::U32),
            },
            IsNan | IsFinite | IsInfinite => self.set_known(id, Ty::Bool),
            // The receiver is `Typed` with the bits' type: `u32` for
            // `f32::from_bits`, `u64` for `f64::from_bits`.
            FromBits => match self.resolve(r) {
                Some(Ty::U64) => self.set_known(id, Ty::F64),
                _ => {
                    let k = self.known(Ty::U32);
                    self.unify(r, k);
                    self.set_known(id, Ty::F32)
                }
            },
            F16FromF32 | F16FromF64 => self.set_known(id, Ty::F16),
            ToF32 | ToF64 => {
                let k = self.known(Ty::F16);
                self.unify(r, k);
                self.set_known(id, if op == ToF32 { Ty::F32 } else { Ty::F64 })
            }
            // `i32::abs_diff` is a `u32`, `i64::abs_diff` a `u64`.
            AbsDiff => match self.resolve(r) {
                Some(Ty::I32) => self.set_known(id, Ty::U32),
                Some(Ty::I64) => self.set_known(id, Ty::U64),
                _ => self.set(id, r),
            },
            _ => self.set(id, r),
        }
    }

    /// The type `v` stands for; None for a float literal nothing
    /// constrained (rustc's `f64`, which kernels lack).
    fn resolve(&mut self, v: usize) -> Option<Ty> {
        let root = self.find(v);
        match self.vars[root].clone() {
            Var::Known(t) => Some(t),
            Var::Int => Some(Ty::I32),
            Var::Float => None,
            Var::Unknown => Some(Ty::Unit),
            Var::Array(e, len) => {
                let elem = self.resolve(e)?;
                Some(self.table.array(elem, len))
            }
            Var::Tuple(vars) => {
                let elems = vars.into_iter().map(|v| self.resolve(v)).collect::<Option<Vec<Ty>>>()?;
                Some(self.table.intern(Compound::Tuple(elems)))
            }
            Var::Link(_) => unreachable!("find returns a root"),
        }
    }

    fn finish(mut self) -> Result<Types, Vec<Diagnostic>> {
        let f = self.f;
        // A type error left to rustc (`h * 0.5` with `h: f16`) leaves its
        // literal untyped: rustc's message is the one to show.
        let type_error = !self.diags.is_empty();
        // A constant of the kernel's scope only ever cast (`BLOCK as u32`)
        // is an integer of any type, as an unsuffixed literal would be.
        for (_, e) in f.exprs.iter() {
            if let ExprKind::Cast(x, _) = e.kind {
                if let ExprKind::Override(i) = f.exprs[x].kind {
                    let root = self.find(self.override_var(i));
                    if matches!(self.vars[root], Var::Unknown) {
                        self.vars[root] = Var::Int;
                    }
                }
            }
        }
        let mut exprs = Vec::with_capacity(f.exprs.len());
        for id in f.exprs.handles() {
            let t = match self.resolve(id.index()) {
                Some(t) => t,
                None => {
                    if let (false, ExprKind::Lit(lit)) = (type_error, &f.exprs[id].kind) {
                        // Suggest the user's own value with the suffix.
                        let (single, double) = match lit {
                            Lit::Float(v, _) => (format!("{:?}f32", v.single), format!("{:?}f64", v.double)),
                            _ => ("1.0f32".to_string(), "1.0f64".to_string()),
                        };
                        self.diags.push(
                            Diagnostic::new(
                                f.exprs[id].span,
                                "this float literal is an `f64` here (Rust's default), and a kernel computes in `f64` only when asked",
                            )
                            .help(format!(
                                "write `{single}`, or give the variable a type: `let x: f32 = ...`; write `{double}` if you mean `f64` (it needs the device's SHADER_F64)"
                            )),
                        );
                    }
                    Ty::F32
                }
            };
            exprs.push(t);
        }
        let locals = f.locals.handles().map(|l| self.resolve(self.local(l)).unwrap_or(Ty::F32)).collect();
        let any_int_overrides = (0..f.overrides.len())
            .map(|i| {
                let root = self.find(self.override_var(i));
                matches!(self.vars[root], Var::Int)
            })
            .collect();
        let types = Types { exprs: HandleMap::from_vec(exprs), locals: HandleMap::from_vec(locals), any_int_overrides };
        check(f, &types, &mut self.diags);
        self.diags.finish(types)
    }
}

/// Checks that every operation is defined on its operands' types. What
/// rustc would reject anyway is silent; what rustc accepts but a GPU cannot
/// do gets a message.
fn check(f: &Function, t: &Types, diags: &mut Diagnostics) {
    use MathOp::*;
    for (_, e) in f.exprs.iter() {
        let ok = match &e.kind {
            ExprKind::Tile { op, args, .. } => {
                check_tile(f, t, *op, args, e.span, diags);
                true
            }
            ExprKind::Unary(UnOp::Neg, x) => t.exprs[*x].lane().is_signed(),
            ExprKind::Unary(UnOp::Not, x) => t.exprs[*x] == Ty::Bool || t.exprs[*x].lane().is_integer(),
            ExprKind::Binary(op, l, r) if t.exprs[*l].as_vector().is_some() || t.exprs[*r].as_vector().is_some() => {
                let (lt, rt) = (t.exprs[*l], t.exprs[*r]);
                let same_lanes = lt == rt || lt == rt.lane() || rt == lt.lane();
                // onekernel's `F16Vec2`/`F16Vec4` (`f16_vec`: the operand that
                // is one) have no `%` (rustc says so).
                let f16_vec = [lt, rt].into_iter().find_map(|t| t.as_vector().filter(|v| !v.is_glam()));
                match op {
                    BinOp::Rem if f16_vec.is_some() => false,
                    // `h * 2.0f32`: say how to write it (rustc would list
                    // the runtime's operator impls).
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div if !same_lanes && f16_vec.is_some() => {
                        let v = Ty::Vector(f16_vec.expect("matched"));
                        let other = if lt == v { rt } else { lt };
                        let n = f16_vec.map_or(4, |v| v.size);
                        diags.push(
                            Diagnostic::new(
                                e.span,
                                format!("`{}` on `{v}` and `{other}`: the lanes of `{v}` are `f16`", op.symbol()),
                            )
                            .help(format!(
                                "write the other operand as an `f16` (`f16::from_f32(2.0)`) or an `{v}`, or compute in `f32`: `v.to_vec{n}() {} ..` (a `Vec{n}`), then `{v}::from_vec{n}(..)`",
                                op.symbol()
                            )),
                        );
                        true
                    }
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => same_lanes,
                    BinOp::Eq | BinOp::Ne => lt == rt,
                    // rustc: glam vectors are not ordered.
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => false,
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                        diags.push(
                            Diagnostic::new(
                                e.span,
                                format!("`{}` on vectors is not supported in a kernel", op.symbol()),
                            )
                            .help("apply it lane by lane: `IVec2::new(a.x & b.x, a.y & b.y)`"),
                        );
                        true
                    }
                }
            }
            ExprKind::Math(op, args) if t.exprs[args[0]].as_vector().is_some() => {
                let v = t.exprs[args[0]].as_vector().expect("matched");
                let float = v.lane == Lane::F32;
                // `F16Vec4::from_vec4(v)`: the recogniser typed `v` as the
                // `f32` vector; a method call `v.from_vec4()` rustc rejects.
                let typed = matches!(f.exprs[args[0]].kind, ExprKind::Typed(..));
                let supported = match op {
                    _ if v.lane == Lane::F16 => match op {
                        Min | Max | Dot => Some(true),
                        ToVec2 | ToVec4 => Some(v.size == if *op == ToVec2 { 2 } else { 4 }),
                        FromVec2 | FromVec4 => Some(false),
                        _ => None,
                    },
                    FromVec2 | FromVec4 => Some(typed),
                    ToVec2 | ToVec4 => Some(false),
                    Min | Max | Clamp | Dot | ElementSum | ElementProduct | MinElement | MaxElement => Some(true),
                    // glam has no `abs` on unsigned vectors.
                    Abs => Some(v.lane != Lane::U32),
                    Sqrt | Exp | Exp2 | Ln | Log2 | Sin | Cos | Floor | Ceil | Round | Trunc | Fract | MulAdd
                    | Recip | Length | LengthSquared | Normalize | Distance | DistanceSquared | Lerp => Some(float),
                    Cross => Some(float && v.size == 3),
                    Extend => Some(v.size < 4),
                    Truncate => Some(v.size > 2),
                    _ => None,
                };
                match supported {
                    Some(ok) => ok,
                    None if v.lane == Lane::F16 => {
                        let (n, glam) = (v.size, VecTy { lane: Lane::F32, ..v }.name());
                        diags.push(
                            Diagnostic::new(
                                e.span,
                                format!("the method `{}` on `{}` is not supported in a kernel", op.name(), v.name()),
                            )
                            .help(format!(
                                "`{}` has `dot`, `min`, `max` and `+ - * /`; compute the rest in `f32`: `{}::from_vec{n}(v.to_vec{n}().{}(..))` (`v.to_vec{n}()` is a `{glam}`)",
                                v.name(),
                                v.name(),
                                op.name()
                            )),
                        );
                        true
                    }
                    None => {
                        let lanes = ["x", "y", "z", "w"][..usize::from(v.size)]
                            .iter()
                            .map(|l| format!("v.{l}.{}(..)", op.name()))
                            .collect::<Vec<_>>()
                            .join(", ");
                        diags.push(
                            Diagnostic::new(
                                e.span,
                                format!("the method `{}` on `{}` is not supported in a kernel", op.name(), v.name()),
                            )
                            .help(format!("apply it lane by lane: `{}::new({lanes})`", v.name())),
                        );
                        true
                    }
                }
            }
            ExprKind::Binary(_, l, _) if matches!(t.exprs[*l], Ty::Compound(_)) => {
                // rustc compares arrays and tuples; WGSL cannot.
                diags.push(
                    Diagnostic::new(e.span, "operators on arrays, tuples and structs are not supported in a kernel")
                        .help("compare or combine them element by element (field by field)"),
                );
                true
            }
            ExprKind::Binary(op, l, r) => {
                let (lt, rt) = (t.exprs[*l], t.exprs[*r]);
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => lt.is_numeric(),
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => lt.is_integer() || lt == Ty::Bool,
                    BinOp::Shl | BinOp::Shr => lt.is_integer() && rt.is_integer(),
                    BinOp::Eq | BinOp::Ne => lt.is_scalar(),
                    _ => lt.is_numeric(),
                }
            }
            ExprKind::Match { scrutinee, .. } if !t.exprs[*scrutinee].is_integer() => {
                diags.push(
                    Diagnostic::new(f.exprs[*scrutinee].span, "a kernel's `match` works on integers")
                        .help("test other values with `if` / `else if`"),
                );
                true
            }
            // `half::f16` is not a primitive: rustc has no `as` for it.
            ExprKind::Cast(x, to) => {
                let from = t.exprs[*x];
                from.is_scalar() && (*to != Ty::Bool || from == Ty::Bool) && from != Ty::F16 && *to != Ty::F16
            }
            ExprKind::Convert(x, to) => lossless(t.exprs[*x], *to),
            ExprKind::Math(op, args) if !r_is_32(t.exprs[args[0]]) => {
                wide_math(f, e.span, *op, args, t, diags);
                true
            }
            ExprKind::Subgroup { op, args, .. } if *op != SubgroupCollective::Ballot => {
                let v = t.exprs[args[0]];
                if !matches!(v, Ty::F32 | Ty::I32 | Ty::U32 | Ty::Usize) {
                    diags.push(
                        Diagnostic::new(
                            f.exprs[args[0]].span,
                            format!("`{}` works on `f32`, `i32`, `u32` and `usize`, not `{v}`", op.name()),
                        )
                        .help(match v {
                            Ty::Bool => "add `b as u32` (`subgroup_add(b as u32)` counts the lanes where `b` holds), or take their mask with `subgroup_ballot(b)`",
                            _ => "exchange the elements or fields one by one",
                        }),
                    );
                }
                true
            }
            ExprKind::Math(op, args) => {
                let r = t.exprs[args[0]];
                match op {
                    Abs => matches!(r, Ty::F32 | Ty::I32),
                    Min | Max | Clamp => r.is_numeric(),
                    Pow | CountOnes | LeadingZeros | TrailingZeros | ReverseBits | WrappingAdd | WrappingSub
                    | WrappingMul | WrappingDiv | WrappingRem | WrappingNeg | WrappingAbs | AbsDiff | RotateLeft
                    | RotateRight => r.is_integer(),
                    RemEuclid => r.is_numeric(),
                    FromBits => r == Ty::U32,
                    Signum => matches!(r, Ty::F32 | Ty::I32),
                    // Associated functions of `f16` with an `f32`/`f64`
                    // argument (the recogniser made the argument `Typed`).
                    F16FromF32 | F16FromF64 => matches!(f.exprs[args[0]].kind, ExprKind::Typed(..)),
                    ToF32 | ToF64 => false,
                    _ => r == Ty::F32,
                }
            }
            _ => true,
        };
        if !ok {
            diags.left_to_rustc(e.span);
        }
    }
}

/// The field an [`ExprKind::Axis`] names: `x`, `y`, `z` or `w`.
pub fn axis_name(axis: u32) -> &'static str {
    ["x", "y", "z", "w"].get(axis as usize).copied().unwrap_or("?")
}

fn f_span(f: &Function, id: ExprId) -> proc_macro2::Span {
    f.exprs[id].span
}

/// The lane a vector field names: `x` is 0, ..., `w` is 3.
pub fn lane_of(name: &str) -> Option<u32> {
    ["x", "y", "z", "w"].iter().position(|l| *l == name).map(|l| l as u32)
}

/// True for the receivers of 32-bit math (`f32`, `i32`, `u32`, `usize`,
/// and `bool` and friends, which the 32-bit rules reject).
fn r_is_32(t: Ty) -> bool {
    !matches!(t, Ty::F16 | Ty::F64 | Ty::I64 | Ty::U64)
}

/// Whether Rust has `From<from> for to` among the kernel's types: `T::from`
/// converts exactly these.
fn lossless(from: Ty, to: Ty) -> bool {
    use Ty::*;
    from == to
        || matches!(
            (from, to),
            (Bool, I32 | U32 | I64 | U64 | Usize | F32 | F64)
                | (I32, I64 | F64)
                | (U32, U64 | I64 | F64)
                | (F32, F64)
                | (F16, F32 | F64)
        )
}

/// Math methods of `f16`, `f64`, `i64` and `u64`. What rustc rejects
/// (half's `f16` has only `min`, `max`, `clamp`, `signum` and the `is_*`
/// tests) is left to rustc; what rustc accepts but the GPU lacks (64-bit
/// transcendental functions and bit counts: Vulkan's GLSL.std.450 and
/// `OpBitCount` are 32-bit only) gets an error that says how to compute it.
fn wide_math(f: &Function, span: proc_macro2::Span, op: MathOp, args: &[ExprId], t: &Types, diags: &mut Diagnostics) {
    use MathOp::*;
    let r = t.exprs[args[0]];
    let rustc_has = match r {
        Ty::F16 => matches!(op, Min | Max | Clamp | Signum | IsNan | IsFinite | IsInfinite | ToF32 | ToF64),
        Ty::F64 => {
            !matches!(
                op,
                Pow | CountOnes
                    | LeadingZeros
                    | TrailingZeros
                    | ReverseBits
                    | WrappingAdd
                    | WrappingSub
                    | WrappingMul
                    | WrappingDiv
                    | WrappingRem
                    | WrappingNeg
                    | WrappingAbs
                    | AbsDiff
                    | RotateLeft
                    | RotateRight
                    | FromBits
                    | ToF32
                    | ToF64
                    | F16FromF32
                    | FromVec2
                    | FromVec4
                    | ToVec2
                    | ToVec4
            ) || (op == F16FromF64 && matches!(f.exprs[args[0]].kind, ExprKind::Typed(..)))
        }
        Ty::I64 => !is_float_only(op) && !matches!(op, ToBits | FromBits),
        Ty::U64 => {
            (!is_float_only(op) && !matches!(op, ToBits | Abs | Signum | WrappingAbs))
                || (op == FromBits && matches!(f.exprs[args[0]].kind, ExprKind::Typed(..)))
        }
        _ => true,
    };
    if !rustc_has {
        diags.left_to_rustc(span);
        return;
    }
    let gpu_has = match r {
        // half's methods, computed in `f32` where WGSL's `f16` builtins differ.
        Ty::F16 => true,
        Ty::F64 => matches!(
            op,
            Abs | Sqrt
                | Floor
                | Ceil
                | Round
                | Trunc
                | Fract
                | Min
                | Max
                | Clamp
                | MulAdd
                | Signum
                | Recip
                | IsNan
                | IsFinite
                | IsInfinite
                | ToBits
                | RemEuclid
                | F16FromF64
        ),
        _ => matches!(
            op,
            Abs | Min
                | Max
                | Clamp
                | Signum
                | WrappingAdd
                | WrappingSub
                | WrappingMul
                | WrappingDiv
                | WrappingRem
                | WrappingNeg
                | WrappingAbs
                | RemEuclid
                | AbsDiff
                | FromBits
        ),
    };
    if !gpu_has {
        let help = if r == Ty::F64 {
            format!(
                "compute it in `f32`: `(x as f32).{}({}) as f64`; on the GPU, `f64` has `abs`, `sqrt`, `floor`, `ceil`, `round`, `trunc`, `fract`, `min`, `max`, `clamp`, `mul_add`, `signum`, `recip`, `rem_euclid` and the `is_*` tests",
                op.name(),
                if op.arity() == 1 { "" } else { ".." }
            )
        } else {
            format!(
                "compute it on the two 32-bit halves (`x as u32`, `(x >> 32) as u32`); on the GPU, `{r}` has `abs`, `min`, `max`, `clamp`, `signum`, `rem_euclid`, `abs_diff` and the `wrapping_` methods"
            )
        };
        diags.push(
            Diagnostic::new(span, format!("`{r}::{}` is not available on the GPU", op.name()))
                .note(format!(
                    "the GPU's {} instructions are 32-bit only",
                    if r == Ty::F64 { "transcendental and power" } else { "bit-counting, rotation and power" }
                ))
                .help(help),
        );
    }
}

/// The methods only floats have.
fn is_float_only(op: MathOp) -> bool {
    use MathOp::*;
    matches!(
        op,
        Sqrt | Exp
            | Exp2
            | Ln
            | Log2
            | Log10
            | Powf
            | Powi
            | Sin
            | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Atan2
            | Sinh
            | Cosh
            | Tanh
            | Floor
            | Ceil
            | Round
            | Trunc
            | Fract
            | MulAdd
            | Recip
            | ToRadians
            | ToDegrees
            | Hypot
            | IsNan
            | IsFinite
            | IsInfinite
            | ToBits
            | FromBits
            | Cbrt
            | F16FromF32
            | F16FromF64
            | ToF32
            | ToF64
            | FromVec2
            | FromVec4
            | ToVec2
            | ToVec4
    )
}

/// The operands of a tile operation: `mma(a, b, c)` takes a `MatrixA<M, K>`,
/// a `MatrixB<K, N>` and an `Accumulator<T, M, N>`, in that order; memory
/// holds the tile's element type. Reports each mismatch with what to write.
fn check_tile(f: &Function, t: &Types, op: TileOp, args: &[ExprId], span: proc_macro2::Span, diags: &mut Diagnostics) {
    use crate::types::{TileElem, TileRole, TileTy};
    let tile_of = |e: ExprId| match t.exprs[e] {
        Ty::Tile(tile) => Some(tile),
        _ => None,
    };
    match op {
        TileOp::Zeros(_) => {}
        TileOp::Load { tile, mem, .. } => {
            let elem = mem.elem(f);
            // An `f16` tile may be read from `F16Vec4`/`F16Vec2` memory too
            // (its lanes in order; offset and stride count vectors).
            let lanes = matches!(elem, Ty::Vector(v) if !v.is_glam() && tile.elem == TileElem::F16);
            if elem != tile.elem.ty() && !lanes {
                diags.push(
                    Diagnostic::new(span, format!("a `{}` is loaded from `{}` memory, not `{elem}`", tile.name(), tile.elem.ty()))
                        .help(if tile.role == TileRole::Acc {
                            "load an accumulator from memory of its own element type (`Accumulator::<f32, ..>` from `&[f32]`)".to_string()
                        } else {
                            "tensor cores multiply `f16` tiles: convert the data to `f16` first (a `&[f16]` or `&[F16Vec4]` buffer, or a `shared::<[f16; N]>()` or `shared::<[F16Vec4; N]>()`)".to_string()
                        }),
                );
            }
        }
        TileOp::Store { mem, .. } => {
            let Some(tile) = tile_of(args[0]) else {
                diags.push(
                    Diagnostic::new(f.exprs[args[0]].span, "only an `Accumulator` tile can be stored")
                        .help("compute it with `mma(a, b, c)`, then `c.store(&mut out, offset, stride)`"),
                );
                return;
            };
            let elem = mem.elem(f);
            if tile.role != TileRole::Acc {
                diags.push(
                    Diagnostic::new(
                        f.exprs[args[0]].span,
                        format!("a `{}` cannot be stored: only accumulators are", tile.name()),
                    )
                    .help("operand tiles are inputs: store the `Accumulator` that `mma` returns"),
                );
            } else if elem != tile.elem.ty() {
                diags.push(
                    Diagnostic::new(
                        span,
                        format!("a `{}` is stored to `{}` memory, not `{elem}`", tile.name(), tile.elem.ty()),
                    )
                    .help(format!("store it to a `&mut [{}]` buffer or shared array", tile.elem.ty())),
                );
            }
        }
        TileOp::MulAdd => {
            let want = [("a", TileRole::A), ("b", TileRole::B), ("c", TileRole::Acc)];
            let mut tiles: Vec<TileTy> = Vec::new();
            for (&arg, (name, role)) in args.iter().zip(want) {
                match tile_of(arg) {
                    Some(tile) if tile.role == role => tiles.push(tile),
                    got => {
                        let got = got.map_or_else(|| t.exprs[arg].rust_name().to_string(), |g| g.name());
                        diags.push(
                            Diagnostic::new(
                                f.exprs[arg].span,
                                format!("`mma(a, b, c)` takes a `{}` as `{name}`, not a `{got}`", role.name()),
                            )
                            .help("the operands go in the order of `a·b + c`: `mma(a, b, c)` with `a: MatrixA<M, K>`, `b: MatrixB<K, N>`, `c: Accumulator<T, M, N>`"),
                        );
                        return;
                    }
                }
            }
            let (a, b, c) = (tiles[0], tiles[1], tiles[2]);
            if a.cols != b.rows || a.rows != c.rows || b.cols != c.cols {
                diags.push(
                    Diagnostic::new(
                        span,
                        format!("the tiles' shapes do not fit: `{}` · `{}` + `{}`", a.name(), b.name(), c.name()),
                    )
                    .help("`a` is M×K, `b` K×N and `c` M×N: all three 16×16 (or all 8×8)"),
                );
            }
        }
    }
}
