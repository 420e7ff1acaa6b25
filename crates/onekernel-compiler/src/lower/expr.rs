//! Lowering expressions.

use super::function::{FnLowerer, Slot};
use crate::diagnostic::Diagnostic;
use crate::hir::{BinOp, ExprId, ExprKind, Lit, LogicOp, Place, Step, UnOp, VecCtor};
use crate::types::Ty;
use naga::{BinaryOperator, Expression, Handle, Literal, ScalarKind, Statement, UnaryOperator};

impl FnLowerer<'_> {
    /// Lowers `id`; None for unit values and after divergence.
    pub(crate) fn expr(&mut self, id: ExprId) -> Option<Handle<Expression>> {
        if self.dead {
            return None;
        }
        let span = self.span_of(id);
        let ty = self.ty_of(id);
        let hir = self.hir;
        match &hir.exprs[id].kind {
            ExprKind::Error => {
                self.errors.push(Diagnostic::new(span, "internal compiler error: lowering a rejected expression"));
                None
            }
            ExprKind::Lit(lit) => self.lit(*lit, ty, span, false),
            ExprKind::Const(c) => Some(self.const_bits(c.ty, c.bits, span)),
            ExprKind::ConstRef(c) => {
                let c = &hir.consts[*c];
                Some(self.const_bits(c.ty, c.bits, span))
            }
            ExprKind::Override(i) => {
                let o = self.mb.overrides[*i];
                Some(self.add(Expression::Override(o), span))
            }
            ExprKind::Local(l) => self.local_value(*l, span),
            ExprKind::Param(p) => match self.params[*p]? {
                Slot::Value(h) => Some(h),
                Slot::Var(v) => Some(self.load_var(v, span)),
            },
            ExprKind::Builtin { builtin, .. } => self.builtins.get(builtin).copied(),
            ExprKind::Array(xs) | ExprKind::Tuple(xs) => {
                let mut components = Vec::new();
                for x in xs {
                    components.push(self.expr(*x)?);
                }
                let ty = self.mb.ty(ty);
                Some(self.add(Expression::Compose { ty, components }, span))
            }
            ExprKind::Repeat(x, len) => {
                let naga_ty = self.mb.ty(ty);
                // `[0.0; 16]`: WGSL's zero value, not sixteen zeros.
                // Through nested repeats: `[[0.0; TN]; TM]`.
                let mut inner = *x;
                while let ExprKind::Repeat(v, _) = hir.exprs[inner].kind {
                    inner = v;
                }
                let zero = match hir.exprs[inner].kind {
                    ExprKind::Lit(Lit::Int(0, _) | Lit::Bool(false)) => true,
                    ExprKind::Lit(Lit::Float(v, _)) => v.double == 0.0,
                    ExprKind::Vector { ctor: VecCtor::Const(bits), .. } => bits == [0; 4],
                    _ => false,
                };
                if zero {
                    return Some(self.add(Expression::ZeroValue(naga_ty), span));
                }
                if let Some(sym) = self.mb.table.symbol(*len) {
                    let name = sym.name.clone();
                    self.errors.push(
                        Diagnostic::new(span, format!("an array of a value other than zero needs its length when the kernel is compiled, and `{name}` is set at the launch"))
                            .help(format!("write `[0.0; {name}]` (or the type's zero) and set the elements in a loop: `for i in 0..{name} {{ a[i] = v; }}`")),
                    );
                    return None;
                }
                let x = self.expr(*x)?;
                Some(self.add(Expression::Compose { ty: naga_ty, components: vec![x; *len as usize] }, span))
            }
            ExprKind::Element { .. } | ExprKind::Field(..) | ExprKind::NamedField(..) => {
                match self.place_pointer(id)? {
                    Some(pointer) => Some(self.add(Expression::Load { pointer }, span)),
                    // A field of a tuple or struct value.
                    None => {
                        let (base, n) = self.field_of(id)?;
                        let base = self.expr(base)?;
                        Some(self.add(Expression::AccessIndex { base, index: n }, span))
                    }
                }
            }
            ExprKind::StructLit { fields, .. } => {
                // Evaluated in the order written, composed in the order
                // declared.
                let mut values = vec![None; fields.len()];
                for (index, value) in fields {
                    values[*index as usize] = Some(self.expr(*value)?);
                }
                let components = values.into_iter().collect::<Option<Vec<_>>>()?;
                let ty = self.mb.ty(ty);
                Some(self.add(Expression::Compose { ty, components }, span))
            }
            ExprKind::ArrayLen(base) => {
                let (_, len) = self.mb.table.as_array(self.ty_of(*base))?;
                Some(self.len_value(len, span))
            }
            ExprKind::Vector { ty: vt, ctor, args, .. } => {
                let naga_ty = self.mb.ty(ty);
                match ctor {
                    VecCtor::New => {
                        let mut components = Vec::new();
                        for a in args {
                            components.push(self.expr(*a)?);
                        }
                        Some(self.add(Expression::Compose { ty: naga_ty, components }, span))
                    }
                    VecCtor::Splat => {
                        let value = self.expr(args[0])?;
                        Some(self.add(Expression::Splat { size: super::vector_size(vt.size), value }, span))
                    }
                    VecCtor::Const(bits) if bits.iter().all(|b| *b == 0) => {
                        Some(self.add(Expression::ZeroValue(naga_ty), span))
                    }
                    // `Vec4::ONE`: one value in every lane.
                    VecCtor::Const(bits) if bits[..usize::from(vt.size)].iter().all(|b| *b == bits[0]) => {
                        let value = self.const_bits(vt.lane.ty(), u64::from(bits[0]), span);
                        Some(self.add(Expression::Splat { size: super::vector_size(vt.size), value }, span))
                    }
                    VecCtor::Const(bits) => {
                        let lane = vt.lane.ty();
                        let components = bits[..usize::from(vt.size)]
                            .iter()
                            .map(|b| self.const_bits(lane, u64::from(*b), span))
                            .collect();
                        Some(self.add(Expression::Compose { ty: naga_ty, components }, span))
                    }
                }
            }
            ExprKind::Swizzle(base, lanes) => {
                let vector = self.expr(*base)?;
                let mut pattern = [naga::SwizzleComponent::X; 4];
                for (p, l) in pattern.iter_mut().zip(lanes) {
                    *p = naga::SwizzleComponent::XYZW[*l as usize];
                }
                let size = super::vector_size(lanes.len() as u8);
                Some(self.add(Expression::Swizzle { size, vector, pattern }, span))
            }
            // `.x` of a struct: its field; `.x` of a vector: its lane.
            ExprKind::Axis(base, _)
                if self.mb.table.as_struct(self.ty_of(*base)).is_some() || self.ty_of(*base).as_vector().is_some() =>
            {
                match self.place_pointer(id)? {
                    Some(pointer) => Some(self.add(Expression::Load { pointer }, span)),
                    None => {
                        let (base, n) = self.field_of(id)?;
                        let base = self.expr(base)?;
                        Some(self.add(Expression::AccessIndex { base, index: n }, span))
                    }
                }
            }
            ExprKind::Axis(base, axis) => {
                let base = self.expr(*base)?;
                Some(self.add(Expression::AccessIndex { base, index: *axis }, span))
            }
            ExprKind::Index { buffer, index } => {
                let pointer = self.element_pointer(*buffer, *index, span)?;
                Some(self.add(Expression::Load { pointer }, span))
            }
            ExprKind::SharedIndex { shared, indices } => {
                let pointer = self.shared_pointer(*shared, indices, span)?;
                Some(self.add(Expression::Load { pointer }, span))
            }
            ExprKind::Atomic { target, op, args, .. } => self.atomic(target, *op, args, span),
            ExprKind::Barrier { kind, .. } => {
                let flags = match kind {
                    crate::hir::BarrierKind::Workgroup => naga::Barrier::WORK_GROUP,
                    crate::hir::BarrierKind::Storage => naga::Barrier::STORAGE,
                };
                self.stmt(Statement::ControlBarrier(flags), span);
                None
            }
            ExprKind::Subgroup { op, args, .. } => self.subgroup(*op, args, ty, span),
            ExprKind::Tile { op, args, .. } => self.tile(*op, args, ty, span),
            ExprKind::UniformLoad { shared, indices, .. } => {
                let pointer = self.shared_pointer(*shared, indices, span)?;
                let ty = self.mb.ty(ty);
                // The result is produced by the statement, never emitted.
                self.flush();
                let nspan = self.mb.span(span);
                let result = self.func.expressions.append(Expression::WorkGroupUniformLoadResult { ty }, nspan);
                self.flush_skip();
                self.stmt(Statement::WorkGroupUniformLoad { pointer, result }, span);
                Some(result)
            }
            ExprKind::Len(buffer) => {
                let g = self.buffers[*buffer]?;
                let g = self.add(Expression::GlobalVariable(g), span);
                Some(self.buffer_len(*buffer, g, span))
            }
            ExprKind::Unary(op, x) => {
                // `-2147483648` is one literal in Rust.
                if let (UnOp::Neg, ExprKind::Lit(lit)) = (op, &hir.exprs[*x].kind) {
                    return self.lit(*lit, ty, span, true);
                }
                let operand = self.expr(*x)?;
                let op = match (op, ty) {
                    (UnOp::Neg, _) => UnaryOperator::Negate,
                    (UnOp::Not, Ty::Bool) => UnaryOperator::LogicalNot,
                    (UnOp::Not, _) => UnaryOperator::BitwiseNot,
                };
                Some(self.add(Expression::Unary { op, expr: operand }, span))
            }
            ExprKind::Binary(op, l, r) => {
                let (lt, rt) = (self.ty_of(*l), self.ty_of(*r));
                let left = self.expr(*l)?;
                let right = self.expr(*r)?;
                Some(self.binary(*op, left, lt, right, rt, span))
            }
            ExprKind::Logical(op, l, r) => self.logical(id, *op, *l, *r),
            ExprKind::Cast(x, to) | ExprKind::Convert(x, to) => {
                let from = self.ty_of(*x);
                let v = self.expr(*x)?;
                Some(self.convert(v, from, *to, span))
            }
            ExprKind::Typed(x, _) => self.expr(*x),
            ExprKind::Call { name, args } => {
                let mut values = Vec::new();
                for a in args {
                    values.push(self.expr(*a)?);
                }
                let Some(&(function, ret)) = self.mb.helpers.get(name) else {
                    self.errors.push(Diagnostic::left_to_rustc(span));
                    return None;
                };
                let result = self.call(function, values, ret != Ty::Unit, span);
                self.after_helper_call(name, span);
                result
            }
            ExprKind::Math(op, args) => {
                let recv_ty = self.ty_of(args[0]);
                let mut values = Vec::new();
                for a in args {
                    values.push(self.expr(*a)?);
                }
                Some(self.math(*op, recv_ty, &values, span))
            }
            ExprKind::Match { .. } if matches!(ty, Ty::Unit | Ty::Never) => {
                self.match_stmt(id, None);
                None
            }
            ExprKind::If { .. } | ExprKind::Block(_) if matches!(ty, Ty::Unit | Ty::Never) => {
                self.unit_control_flow(id);
                None
            }
            ExprKind::If { .. } | ExprKind::Block(_) | ExprKind::Match { .. } => {
                let name = match hir.exprs[id].kind {
                    ExprKind::If { .. } => "if_value",
                    ExprKind::Match { .. } => "match_value",
                    _ => "block_value",
                };
                let v = self.var(name, ty, span);
                self.expr_into(id, v);
                if self.dead {
                    return None;
                }
                Some(self.load_var(v, span))
            }
            ExprKind::Loop { label, kind, body } => self.loop_expr(id, label, kind, body),
            ExprKind::Break { label, value } => {
                self.jump(id, crate::hir::Function::label_name(label), *value, false);
                None
            }
            ExprKind::Continue { label } => {
                self.jump(id, crate::hir::Function::label_name(label), None, true);
                None
            }
            ExprKind::Return(value) => {
                let value = match value {
                    Some(v) => Some(self.expr(*v)?),
                    None => None,
                };
                self.stmt(Statement::Return { value }, span);
                self.dead = true;
                None
            }
            ExprKind::Assign { place, op, value, .. } => {
                self.assign(place, *op, *value, span);
                None
            }
            ExprKind::Debug(call) => self.debug(call, span),
        }
    }

    /// `if` and blocks used as statements.
    fn unit_control_flow(&mut self, id: ExprId) {
        let span = self.span_of(id);
        match &self.hir.exprs[id].kind {
            ExprKind::If { cond, then, else_, .. } => {
                let Some(c) = self.expr(*cond) else { return };
                let (then, else_) = (then.clone(), *else_);
                let accept = self.nested(|l| l.body_block(&then));
                let reject = self.nested(|l| {
                    if let Some(e) = else_ {
                        l.expr(e);
                    }
                });
                self.stmt(Statement::If { condition: c, accept, reject }, span);
                // Both branches diverging makes the rest unreachable.
                if crate::visit::expr_diverges(self.hir, id) {
                    self.dead = true;
                }
            }
            ExprKind::Block(b) => {
                let b = b.clone();
                let block = self.nested(|l| l.body_block(&b));
                if !block.is_empty() {
                    self.stmt(Statement::Block(block), span);
                }
                if crate::visit::block_diverges(self.hir, &b) {
                    self.dead = true;
                }
            }
            _ => {}
        }
    }

    fn element_pointer(
        &mut self,
        buffer: crate::hir::ParamId,
        index: ExprId,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        let i = self.expr(index)?;
        let g = self.buffers[buffer]?;
        let base = self.add(Expression::GlobalVariable(g), span);
        let i = if self.mb.checks.is_some() {
            let len = self.buffer_len(buffer, base, span);
            let name = self.hir.params[buffer].name.clone();
            self.checked_index(i, len, &name, span)
        } else {
            i
        };
        Some(self.add(Expression::Access { base, index: i }, span))
    }

    /// A pointer to `tile[i]` or `tile[r][c]`.
    fn shared_pointer(
        &mut self,
        shared: crate::hir::SharedId,
        indices: &[ExprId],
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        let mut values = Vec::new();
        for i in indices {
            values.push(self.expr(*i)?);
        }
        let g = self.shared[shared];
        let decl = &self.hir.shared[shared];
        let (name, dims) = (decl.name.clone(), decl.dims.clone());
        let mut p = self.add(Expression::GlobalVariable(g), span);
        for (v, len) in values.into_iter().zip(dims) {
            let v = self.checked_index_const(v, len, &name, span);
            p = self.add(Expression::Access { base: p, index: v }, span);
        }
        Some(p)
    }

    /// An atomic operation on a buffer or shared element. Orderings are
    /// dropped: WGSL's atomics are relaxed.
    fn atomic(
        &mut self,
        target: &crate::hir::AtomicTarget,
        op: crate::hir::AtomicOp,
        args: &[ExprId],
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        use crate::hir::{AtomicOp as Op, AtomicTarget};
        let mut values = Vec::new();
        for a in args {
            values.push(self.expr(*a)?);
        }
        let (pointer, elem) = match target {
            AtomicTarget::Buffer { param, index } => {
                (self.element_pointer(*param, *index, span)?, self.hir.params[*param].kind.ty())
            }
            AtomicTarget::Shared { shared, indices } => {
                (self.shared_pointer(*shared, indices, span)?, self.hir.shared[*shared].elem)
            }
        };
        let fun = match op {
            Op::Load => return Some(self.add(Expression::Load { pointer }, span)),
            Op::Store => {
                self.stmt(Statement::Store { pointer, value: values[0] }, span);
                return None;
            }
            Op::Swap => naga::AtomicFunction::Exchange { compare: None },
            Op::FetchAdd => naga::AtomicFunction::Add,
            Op::FetchSub => naga::AtomicFunction::Subtract,
            Op::FetchMin => naga::AtomicFunction::Min,
            Op::FetchMax => naga::AtomicFunction::Max,
            Op::FetchAnd => naga::AtomicFunction::And,
            Op::FetchOr => naga::AtomicFunction::InclusiveOr,
            Op::FetchXor => naga::AtomicFunction::ExclusiveOr,
            Op::CompareExchangeIsOk => naga::AtomicFunction::Exchange { compare: Some(values[0]) },
        };
        let value = *values.last()?;
        let comparison = op == Op::CompareExchangeIsOk;
        let ty = if comparison {
            let scalar = if elem == Ty::I32 { naga::Scalar::I32 } else { naga::Scalar::U32 };
            self.mb.module.generate_predeclared_type(naga::PredeclaredType::AtomicCompareExchangeWeakResult(scalar))
        } else {
            self.mb.ty(elem)
        };
        // The result is produced by the statement, never emitted.
        self.flush();
        let nspan = self.mb.span(span);
        let result = self.func.expressions.append(Expression::AtomicResult { ty, comparison }, nspan);
        self.flush_skip();
        self.stmt(Statement::Atomic { pointer, fun, value, result: Some(result) }, span);
        if comparison {
            // `.is_ok()`: the `exchanged` field.
            return Some(self.add(Expression::AccessIndex { base: result, index: 1 }, span));
        }
        Some(result)
    }

    /// A pointer to the element or field `id` denotes (`a[i][j]`, `t.0`),
    /// spilling a base that is a value (a call's result) into a variable.
    /// `Some(None)` for a field of a tuple value, which needs no pointer.
    fn place_pointer(&mut self, id: ExprId) -> Option<Option<Handle<Expression>>> {
        let span = self.span_of(id);
        match &self.hir.exprs[id].kind {
            ExprKind::Local(l) => match self.locals[*l]? {
                Slot::Var(v) => Some(Some(self.add(Expression::LocalVariable(v), span))),
                Slot::Value(_) => Some(None),
            },
            ExprKind::Param(p) => match self.params[*p]? {
                Slot::Var(v) => Some(Some(self.add(Expression::LocalVariable(v), span))),
                Slot::Value(_) => Some(None),
            },
            ExprKind::Element { base, index } => {
                let base_ptr = match self.place_pointer(*base)? {
                    Some(p) => p,
                    None => self.spill(*base)?,
                };
                let index = self.expr(*index)?;
                let index = match self.indexed(self.ty_of(*base), index, span)? {
                    Some((_, len)) => {
                        let what = self.place_name(*base);
                        self.checked_index_const(index, len, &what, span)
                    }
                    None => index,
                };
                Some(Some(self.add(Expression::Access { base: base_ptr, index }, span)))
            }
            ExprKind::Field(..) | ExprKind::NamedField(..) | ExprKind::Axis(..) => {
                let (base, n) = self.field_of(id)?;
                match self.place_pointer(base)? {
                    Some(p) => Some(Some(self.add(Expression::AccessIndex { base: p, index: n }, span))),
                    None => Some(None),
                }
            }
            _ => Some(None),
        }
    }

    /// The element type and length of what `ty` indexes: an array's
    /// elements, or a vector's lanes (`v[i]`); Some(None) for neither.
    /// `v[4]` on a `Vec4` is an error here (None after it): glam would
    /// panic when the kernel runs, and naga rejects the constant index.
    fn indexed(&mut self, ty: Ty, index: Handle<Expression>, span: proc_macro2::Span) -> Option<Option<(Ty, u32)>> {
        if let Some(array) = self.mb.table.as_array(ty) {
            return Some(Some(array));
        }
        let Some(v) = ty.as_vector() else { return Some(None) };
        let lanes = u32::from(v.size);
        if let Expression::Literal(Literal::U32(i)) = self.func.expressions[index] {
            if i >= lanes {
                let name = ty.rust_name();
                self.errors.push(
                    Diagnostic::new(span, format!("lane {i} is out of range: `{name}` has lanes 0 to {}", lanes - 1))
                        .help(format!("index a lane from 0 to {}, or name it: `.x`, `.y`, ...", lanes - 1)),
                );
                return None;
            }
        }
        Some(Some((ty.lane(), lanes)))
    }

    /// The base and member index of a tuple field (`t.0`) or a struct
    /// field (`p.vel`, `p.x`).
    fn field_of(&self, id: ExprId) -> Option<(ExprId, u32)> {
        let name = match &self.hir.exprs[id].kind {
            ExprKind::Field(base, n) => return Some((*base, *n)),
            ExprKind::Axis(base, axis) if self.ty_of(*base).as_vector().is_some() => return Some((*base, *axis)),
            ExprKind::NamedField(base, name) => (*base, name.as_str()),
            ExprKind::Axis(base, axis) => (*base, crate::infer::axis_name(*axis)),
            _ => return None,
        };
        let (base, field) = name;
        self.mb.table.struct_field(self.ty_of(base), field).map(|(n, _)| (base, n))
    }

    /// The name of the array a place expression indexes, for check sites:
    /// `grid` for `grid[i][j]`, `t.1` for `t.1[i]`.
    fn place_name(&self, id: ExprId) -> String {
        match &self.hir.exprs[id].kind {
            ExprKind::Local(l) => self.hir.locals[*l].name.clone(),
            ExprKind::Param(p) => self.hir.params[*p].name.clone(),
            ExprKind::Element { base, .. } => self.place_name(*base),
            ExprKind::Field(base, n) => format!("{}.{n}", self.place_name(*base)),
            ExprKind::NamedField(base, n) => format!("{}.{n}", self.place_name(*base)),
            _ => "array".to_string(),
        }
    }

    /// Stores the value of `e` in a new variable; a pointer to it.
    fn spill(&mut self, e: ExprId) -> Option<Handle<Expression>> {
        let span = self.span_of(e);
        let value = self.expr(e)?;
        let v = self.var("spilled", self.ty_of(e), span);
        self.store_var(v, value, span);
        Some(self.add(Expression::LocalVariable(v), span))
    }

    fn assign(&mut self, place: &Place, op: Option<BinOp>, value: ExprId, span: proc_macro2::Span) {
        let vt = self.ty_of(value);
        // Rust evaluates the right-hand side first for primitive types.
        let Some(v) = self.expr(value) else { return };
        let (pointer, pt) = match place {
            Place::Local(l) => {
                let ty = self.types.locals[*l];
                match self.locals[*l] {
                    Some(Slot::Var(var)) => (self.add(Expression::LocalVariable(var), span), ty),
                    _ => return,
                }
            }
            Place::Param(p) => match self.params[*p] {
                Some(Slot::Var(var)) => {
                    let ty = match self.hir.params[*p].kind {
                        crate::hir::ParamKind::Scalar { ty, .. } => ty,
                        _ => return,
                    };
                    (self.add(Expression::LocalVariable(var), span), ty)
                }
                _ => return,
            },
            Place::Index { buffer, index } => {
                let Some(p) = self.element_pointer(*buffer, *index, span) else { return };
                (p, self.hir.params[*buffer].kind.ty())
            }
            Place::Project { local, steps } => {
                let Some(Slot::Var(var)) = self.locals[*local] else { return };
                let mut p = self.add(Expression::LocalVariable(var), span);
                let mut ty = self.types.locals[*local];
                for step in steps {
                    let (next, elem) = match step {
                        Step::Index(i) => {
                            let Some(i) = self.expr(*i) else { return };
                            let Some(Some((elem, len))) = self.indexed(ty, i, span) else { return };
                            let what = self.hir.locals[*local].name.clone();
                            let i = self.checked_index_const(i, len, &what, span);
                            (Expression::Access { base: p, index: i }, Some(elem))
                        }
                        Step::Field(n) => (
                            Expression::AccessIndex { base: p, index: *n },
                            self.mb.table.as_tuple(ty).and_then(|t| t.get(*n as usize).copied()),
                        ),
                        Step::NamedField(name) if ty.as_vector().is_some() => {
                            let Some(lane) = crate::infer::lane_of(name) else { return };
                            (Expression::AccessIndex { base: p, index: lane }, Some(ty.lane()))
                        }
                        Step::NamedField(name) => {
                            let Some((n, field_ty)) = self.mb.table.struct_field(ty, name) else { return };
                            (Expression::AccessIndex { base: p, index: n }, Some(field_ty))
                        }
                    };
                    let Some(elem) = elem else { return };
                    p = self.add(next, span);
                    ty = elem;
                }
                (p, ty)
            }
            Place::Shared { shared, indices } => {
                let Some(p) = self.shared_pointer(*shared, indices, span) else { return };
                (p, self.hir.shared[*shared].elem)
            }
        };
        let value = match op {
            None => v,
            Some(op) => {
                let old = self.add(Expression::Load { pointer }, span);
                self.binary(op, old, pt, v, vt, span)
            }
        };
        self.stmt(Statement::Store { pointer, value }, span);
    }

    /// A binary operator on lowered operands of the given types.
    pub(crate) fn binary(
        &mut self,
        op: BinOp,
        left: Handle<Expression>,
        lt: Ty,
        right: Handle<Expression>,
        rt: Ty,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        let nop = match (op, lt) {
            (BinOp::Add, _) => BinaryOperator::Add,
            (BinOp::Sub, _) => BinaryOperator::Subtract,
            (BinOp::Mul, _) => BinaryOperator::Multiply,
            (BinOp::Div, _) => BinaryOperator::Divide,
            (BinOp::Rem, _) => BinaryOperator::Modulo,
            (BinOp::BitAnd, _) => BinaryOperator::And,
            (BinOp::BitOr, _) => BinaryOperator::InclusiveOr,
            // WGSL has no `^` on bool: a != b is the same thing.
            (BinOp::BitXor, Ty::Bool) => BinaryOperator::NotEqual,
            (BinOp::BitXor, _) => BinaryOperator::ExclusiveOr,
            (BinOp::Shl, _) => BinaryOperator::ShiftLeft,
            (BinOp::Shr, _) => BinaryOperator::ShiftRight,
            (BinOp::Eq, _) => BinaryOperator::Equal,
            (BinOp::Ne, _) => BinaryOperator::NotEqual,
            (BinOp::Lt, _) => BinaryOperator::Less,
            (BinOp::Le, _) => BinaryOperator::LessEqual,
            (BinOp::Gt, _) => BinaryOperator::Greater,
            (BinOp::Ge, _) => BinaryOperator::GreaterEqual,
        };
        if matches!(op, BinOp::Div | BinOp::Rem) {
            self.check_divisor(right, rt, if op == BinOp::Div { "/" } else { "%" }, span);
        }
        if let Some(v) = lt.as_vector().or(rt.as_vector()) {
            // glam's `v * 2.0` and `2.0 * v`: the scalar as a vector.
            let size = super::vector_size(v.size);
            let left =
                if lt.as_vector().is_none() { self.add(Expression::Splat { size, value: left }, span) } else { left };
            let right =
                if rt.as_vector().is_none() { self.add(Expression::Splat { size, value: right }, span) } else { right };
            let lanes = self.add(Expression::Binary { op: nop, left, right }, span);
            // Rust's `==` on vectors compares every lane.
            return match op {
                BinOp::Eq => {
                    self.add(Expression::Relational { fun: naga::RelationalFunction::All, argument: lanes }, span)
                }
                BinOp::Ne => {
                    self.add(Expression::Relational { fun: naga::RelationalFunction::Any, argument: lanes }, span)
                }
                _ => lanes,
            };
        }
        // WGSL shift amounts are u32, whatever the left side's type.
        let right = if op.is_shift() { self.convert(right, rt, Ty::U32, span) } else { right };
        self.add(Expression::Binary { op: nop, left, right }, span)
    }

    /// `a && b`, `a || b`: short-circuit as in Rust. When the right side
    /// needs statements (a call, a block) it runs only when it must.
    fn logical(&mut self, id: ExprId, op: LogicOp, l: ExprId, r: ExprId) -> Option<Handle<Expression>> {
        let span = self.span_of(id);
        let left = self.expr(l)?;
        if is_pure(self.hir, r) {
            let right = self.expr(r)?;
            let op = match op {
                LogicOp::And => BinaryOperator::LogicalAnd,
                LogicOp::Or => BinaryOperator::LogicalOr,
            };
            return Some(self.add(Expression::Binary { op, left, right }, span));
        }
        let v = self.var(
            match op {
                LogicOp::And => "and_value",
                LogicOp::Or => "or_value",
            },
            Ty::Bool,
            span,
        );
        self.store_var(v, left, span);
        let rhs = self.nested(|s| {
            if let Some(rv) = s.expr(r) {
                s.store_var(v, rv, span);
            }
        });
        let (accept, reject) = match op {
            LogicOp::And => (rhs, naga::Block::new()),
            LogicOp::Or => (naga::Block::new(), rhs),
        };
        self.stmt(Statement::If { condition: left, accept, reject }, span);
        Some(self.load_var(v, span))
    }

    /// A helper or polyfill call.
    pub(crate) fn call(
        &mut self,
        function: Handle<naga::Function>,
        arguments: Vec<Handle<Expression>>,
        has_result: bool,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        self.flush();
        let result = if has_result {
            // Call results are produced by the `Call` statement, never emitted.
            let nspan = self.mb.span(span);
            let h = self.func.expressions.append(Expression::CallResult(function), nspan);
            self.flush_skip();
            Some(h)
        } else {
            None
        };
        self.stmt(Statement::Call { function, arguments, result }, span);
        result
    }

    /// A literal of type `ty`; `negate` for a literal under unary minus.
    fn lit(&mut self, lit: Lit, ty: Ty, span: proc_macro2::Span, negate: bool) -> Option<Handle<Expression>> {
        let out_of_range = |this: &mut Self, what: &str| {
            this.errors.push(Diagnostic::new(span, format!("literal out of range for `{what}`")).help(
                "`i32` holds -2147483648..=2147483647, `u32` and `usize` (32 bits on the GPU) 0..=4294967295; `i64` and `u64` hold 64 bits",
            ));
            None
        };
        let sign = if negate { -1 } else { 1 };
        let literal = match (lit, ty) {
            (Lit::Bool(b), _) => Literal::Bool(if negate { !b } else { b }),
            (Lit::Int(v, _), Ty::I32) => match i32::try_from(v as i128 * sign) {
                Ok(v) => Literal::I32(v),
                Err(_) => return out_of_range(self, "i32"),
            },
            (Lit::Int(v, _), Ty::U32 | Ty::Usize) if !negate => match u32::try_from(v) {
                Ok(v) => Literal::U32(v),
                Err(_) => return out_of_range(self, ty.rust_name()),
            },
            (Lit::Int(v, _), Ty::I64) => match i64::try_from(v as i128 * sign) {
                Ok(v) => Literal::I64(v),
                Err(_) => return out_of_range(self, "i64"),
            },
            (Lit::Int(v, _), Ty::U64) if !negate => match u64::try_from(v) {
                Ok(v) => Literal::U64(v),
                Err(_) => return out_of_range(self, "u64"),
            },
            (Lit::Float(v, _), Ty::F32) => {
                let v = if negate { -v.single } else { v.single };
                if !v.is_finite() {
                    return out_of_range(self, "f32");
                }
                Literal::F32(v)
            }
            (Lit::Float(v, _), Ty::F64) => {
                let v = if negate { -v.double } else { v.double };
                if !v.is_finite() {
                    return out_of_range(self, "f64");
                }
                Literal::F64(v)
            }
            _ => {
                self.errors.push(Diagnostic::left_to_rustc(span));
                return None;
            }
        };
        Some(self.literal(literal, span))
    }

    /// A constant given by its bits (the low bits for types narrower than
    /// 64): NaN and infinities cannot be naga literals, so an `f32` one is
    /// a bitcast of the `u32` pattern, and an `f16` or `f64` one the `f32`
    /// one converted (which keeps infinities and NaN, and needs no 16- or
    /// 64-bit integers).
    pub(crate) fn const_bits(&mut self, ty: Ty, bits: u64, span: proc_macro2::Span) -> Handle<Expression> {
        match ty {
            Ty::F32 if f32::from_bits(bits as u32).is_finite() => {
                self.literal(Literal::F32(f32::from_bits(bits as u32)), span)
            }
            Ty::F32 => {
                let u = self.literal(Literal::U32(bits as u32), span);
                self.add(Expression::As { expr: u, kind: ScalarKind::Float, convert: None }, span)
            }
            Ty::F64 if f64::from_bits(bits).is_finite() => self.literal(Literal::F64(f64::from_bits(bits)), span),
            Ty::F16 if half::f16::from_bits(bits as u16).is_finite() => {
                self.literal(Literal::F16(half::f16::from_bits(bits as u16)), span)
            }
            Ty::F64 | Ty::F16 => {
                let v = if ty == Ty::F64 { f64::from_bits(bits) } else { half::f16::from_bits(bits as u16).to_f64() };
                let single = self.const_bits(Ty::F32, u64::from((v as f32).to_bits()), span);
                self.convert(single, Ty::F32, ty, span)
            }
            Ty::I32 => self.literal(Literal::I32(bits as u32 as i32), span),
            Ty::I64 => self.literal(Literal::I64(bits as i64), span),
            Ty::U64 => self.literal(Literal::U64(bits), span),
            Ty::Bool => self.literal(Literal::Bool(bits != 0), span),
            _ => self.literal(Literal::U32(bits as u32), span),
        }
    }

    /// A finite float constant of the float type `ty`.
    pub(crate) fn float(&mut self, ty: Ty, v: f64, span: proc_macro2::Span) -> Handle<Expression> {
        let lit = match ty {
            Ty::F16 => Literal::F16(half::f16::from_f64(v)),
            Ty::F64 => Literal::F64(v),
            _ => Literal::F32(v as f32),
        };
        self.literal(lit, span)
    }

    /// `x` is NaN, tested on its bits: GPU drivers may compile float
    /// comparisons as if NaN did not exist, so `x != x` is unreliable.
    pub(crate) fn is_nan(&mut self, x: Handle<Expression>, span: proc_macro2::Span) -> Handle<Expression> {
        let bits = self.add(Expression::As { expr: x, kind: ScalarKind::Uint, convert: None }, span);
        let mask = self.literal(Literal::U32(0x7fff_ffff), span);
        let magnitude = self.add(Expression::Binary { op: BinaryOperator::And, left: bits, right: mask }, span);
        let inf = self.literal(Literal::U32(0x7f80_0000), span);
        self.add(Expression::Binary { op: BinaryOperator::Greater, left: magnitude, right: inf }, span)
    }

    /// `x` of the float type `ty` as an `f32` whose class (NaN, infinite,
    /// finite) and sign are `x`'s: `f16` converts exactly; `f64` is scaled
    /// by 2^-1000 first (exact but for underflow, which stays finite), so
    /// that no finite value overflows to infinity. The `f32` bit tests then
    /// serve every float type, with no 16- or 64-bit integers.
    pub(crate) fn classify_as_f32(
        &mut self,
        x: Handle<Expression>,
        ty: Ty,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        match ty {
            Ty::F64 => {
                let scale = self.literal(Literal::F64(2f64.powi(-1000)), span);
                let scaled = self.add(Expression::Binary { op: BinaryOperator::Multiply, left: x, right: scale }, span);
                self.add(Expression::As { expr: scaled, kind: ScalarKind::Float, convert: Some(4) }, span)
            }
            Ty::F16 => self.add(Expression::As { expr: x, kind: ScalarKind::Float, convert: Some(4) }, span),
            _ => x,
        }
    }

    /// [`Self::is_nan`] for any float type.
    pub(crate) fn is_nan_of(&mut self, x: Handle<Expression>, ty: Ty, span: proc_macro2::Span) -> Handle<Expression> {
        let single = self.classify_as_f32(x, ty, span);
        self.is_nan(single, span)
    }

    /// The value 1 of an integer or float type.
    pub(crate) fn one(&mut self, ty: Ty, span: proc_macro2::Span) -> Handle<Expression> {
        let lit = match ty {
            Ty::F32 => Literal::F32(1.0),
            Ty::F16 => Literal::F16(half::f16::ONE),
            Ty::F64 => Literal::F64(1.0),
            Ty::I32 => Literal::I32(1),
            Ty::I64 => Literal::I64(1),
            Ty::U64 => Literal::U64(1),
            _ => Literal::U32(1),
        };
        self.literal(lit, span)
    }

    /// The bits of an integer as an unsigned integer of its width (`i32`
    /// and `i64` are reinterpreted; the unsigned types are already).
    pub(crate) fn convert_bits(
        &mut self,
        v: Handle<Expression>,
        ty: Ty,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        if matches!(ty, Ty::I32 | Ty::I64) {
            self.add(Expression::As { expr: v, kind: ScalarKind::Uint, convert: None }, span)
        } else {
            v
        }
    }

    /// `value as to`, with Rust's semantics: float → int saturates and maps
    /// NaN to 0 (WGSL leaves out-of-range conversions undefined); int →
    /// narrower int keeps the low bits, as SPIR-V's conversions do.
    pub(crate) fn convert(
        &mut self,
        v: Handle<Expression>,
        from: Ty,
        to: Ty,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        let same = |t: Ty| if t == Ty::Usize { Ty::U32 } else { t };
        if same(from) == same(to) {
            return v;
        }
        let kind = match to {
            Ty::F16 | Ty::F32 | Ty::F64 => ScalarKind::Float,
            Ty::I32 | Ty::I64 => ScalarKind::Sint,
            Ty::U32 | Ty::Usize | Ty::U64 => ScalarKind::Uint,
            _ => ScalarKind::Bool,
        };
        let width = match to {
            Ty::Bool => 1,
            Ty::F16 => 2,
            Ty::F64 | Ty::I64 | Ty::U64 => 8,
            _ => 4,
        };
        if from.is_float() && to.is_integer() {
            // The saturation bounds as floats of `from`: the integer type's
            // minimum (a power of two, exact), the largest float not above
            // its maximum, and 2^bits (or 2^(bits-1)), the first value that
            // saturates.
            let bits = if width == 8 { 64 } else { 32 };
            let signed = matches!(to, Ty::I32 | Ty::I64);
            let limit = if signed { 2f64.powi(bits - 1) } else { 2f64.powi(bits) };
            let lo = if signed { -limit } else { 0.0 };
            let ulp = match from {
                Ty::F64 => 2f64.powi(bits - if signed { 1 } else { 0 } - 53),
                _ => 2f64.powi(bits - if signed { 1 } else { 0 } - 24),
            };
            let hi = limit - ulp.max(1.0);
            let lo = self.float(from, lo, span);
            let hi = self.float(from, hi, span);
            let clamped = self.add(
                Expression::Math { fun: naga::MathFunction::Clamp, arg: v, arg1: Some(lo), arg2: Some(hi), arg3: None },
                span,
            );
            let converted = self.add(Expression::As { expr: clamped, kind, convert: Some(width) }, span);
            // Saturating: the largest float below 2^31 (for `i32`)
            // converts exactly, so values at or above 2^31 must map to
            // the maximum explicitly.
            let limit = self.float(from, limit, span);
            let too_big =
                self.add(Expression::Binary { op: BinaryOperator::GreaterEqual, left: v, right: limit }, span);
            let max_bits = match to {
                Ty::I32 => u64::from(i32::MAX as u32),
                Ty::I64 => i64::MAX as u64,
                Ty::U64 => u64::MAX,
                _ => u64::from(u32::MAX),
            };
            let max = self.const_bits(to, max_bits, span);
            let saturated = self.add(Expression::Select { condition: too_big, accept: max, reject: converted }, span);
            let is_nan = self.is_nan_of(v, from, span);
            let zero = self.const_bits(to, 0, span);
            return self.add(Expression::Select { condition: is_nan, accept: zero, reject: saturated }, span);
        }
        let from_width = if from.is_wide() { 8 } else { 4 };
        if from.is_integer() && to.is_integer() && width > from_width {
            // Rust widens by the source's signedness (`u32 as i64`
            // zero-extends, `i32 as u64` sign-extends); SPIR-V's conversion
            // follows the target's. So widen within the source's kind, then
            // reinterpret.
            let from_kind = if from.is_signed() { ScalarKind::Sint } else { ScalarKind::Uint };
            let widened = self.add(Expression::As { expr: v, kind: from_kind, convert: Some(width) }, span);
            if from_kind == kind {
                return widened;
            }
            return self.add(Expression::As { expr: widened, kind, convert: None }, span);
        }
        self.add(Expression::As { expr: v, kind, convert: Some(width) }, span)
    }
}

impl FnLowerer<'_> {
    /// A subgroup collective: a subgroup statement whose result expression
    /// is the value.
    fn subgroup(
        &mut self,
        collective: crate::hir::SubgroupCollective,
        args: &[ExprId],
        ty: Ty,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        use crate::hir::SubgroupCollective as C;
        use naga::{CollectiveOperation, GatherMode, SubgroupOperation};
        let mut values = Vec::new();
        for a in args {
            values.push(self.expr(*a)?);
        }
        let argument = values[0];
        // The result is produced by the statement, never emitted.
        self.flush();
        let nspan = self.mb.span(span);
        let result = match collective {
            // The whole `vec4<u32>`, as the kernel's `UVec4`.
            C::Ballot => Expression::SubgroupBallotResult,
            _ => Expression::SubgroupOperationResult { ty: self.mb.ty(ty) },
        };
        let result = self.func.expressions.append(result, nspan);
        self.flush_skip();
        let reduce = |op| Statement::SubgroupCollectiveOperation {
            op,
            collective_op: CollectiveOperation::Reduce,
            argument,
            result,
        };
        let gather = |mode| Statement::SubgroupGather { mode, argument, result };
        let statement = match collective {
            C::Add => reduce(SubgroupOperation::Add),
            C::Min => reduce(SubgroupOperation::Min),
            C::Max => reduce(SubgroupOperation::Max),
            C::Broadcast => gather(GatherMode::Broadcast(values[1])),
            C::Shuffle => gather(GatherMode::Shuffle(values[1])),
            C::ShuffleXor => gather(GatherMode::ShuffleXor(values[1])),
            C::ShuffleDown => gather(GatherMode::ShuffleDown(values[1])),
            C::Ballot => Statement::SubgroupBallot { result, predicate: Some(argument) },
        };
        self.stmt(statement, span);
        Some(result)
    }
}

/// True when lowering `e` needs no statements (so `a && e` can be a plain
/// WGSL `&&`, which short-circuits too).
fn is_pure(f: &crate::hir::Function, e: ExprId) -> bool {
    let mut pure = true;
    crate::visit::visit_expr(f, e, 0, &mut |_, k, _| {
        if matches!(
            k,
            ExprKind::Call { .. }
                | ExprKind::If { .. }
                | ExprKind::Block(_)
                | ExprKind::Loop { .. }
                | ExprKind::Assign { .. }
                | ExprKind::Break { .. }
                | ExprKind::Continue { .. }
                | ExprKind::Return(_)
                | ExprKind::Atomic { .. }
                | ExprKind::Barrier { .. }
                | ExprKind::Subgroup { .. }
                | ExprKind::Tile { .. }
                | ExprKind::UniformLoad { .. }
        ) || matches!(k, ExprKind::Math(op, _) if super::math::needs_call(*op))
        {
            pure = false;
        }
    });
    pure
}
