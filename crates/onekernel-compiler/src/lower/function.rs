//! Lowering one function body: the emitter discipline, statements, control
//! flow, the kernel's prologue and helper functions.
//!
//! naga evaluates an expression where an `Emit` statement covers it, so the
//! lowerer keeps one open range of expressions and closes it (pushing an
//! `Emit`) before every statement; "pre-emitted" expressions (literals,
//! variables, arguments) must never be inside such a range.

use super::{KernelGlobals, ModuleBuilder};
use crate::arena::HandleMap;
use crate::diagnostic::Diagnostic;
use crate::hir::{self, Block, Builtin, BuiltinType, ExprId, ExprKind, Label, LocalId, LoopKind, ParamKind, Stmt};
use crate::infer::Types;
use crate::types::Ty;
use crate::visit;
use naga::{
    BinaryOperator, Binding, BuiltIn, EntryPoint, Expression, Function, FunctionArgument, FunctionResult, Handle,
    Literal, LocalVariable, ShaderStage, Statement,
};
use std::collections::HashMap;

/// Where a HIR local lives.
#[derive(Clone, Copy, Debug)]
pub(super) enum Slot {
    /// A `var`: loads and stores.
    Var(Handle<LocalVariable>),
    /// An immutable value (a `let` without `mut`).
    Value(Handle<Expression>),
}

/// One enclosing loop, for `break` and `continue`.
pub(super) struct LoopCtx {
    pub label: Option<String>,
    /// Set by a labelled `break` from an inner loop; checked after it.
    pub break_flag: Option<Handle<LocalVariable>>,
    /// Set by a labelled `continue` from an inner loop.
    pub continue_flag: Option<Handle<LocalVariable>>,
    /// Where `break value` puts its value.
    pub result: Option<Handle<LocalVariable>>,
}

/// Lowers one function.
pub(crate) struct FnLowerer<'a> {
    pub(super) mb: &'a mut ModuleBuilder,
    pub(super) hir: &'a hir::Function,
    pub(super) types: &'a Types,
    pub(super) func: Function,
    /// The block statements are being added to.
    pub(super) cur: naga::Block,
    /// Arena length where the open `Emit` range starts.
    emit_start: usize,
    pub(super) locals: HandleMap<hir::Local, Option<Slot>>,
    /// Scalar parameters: value or var.
    pub(super) params: HandleMap<hir::Param, Option<Slot>>,
    pub(super) buffers: HandleMap<hir::Param, Option<Handle<naga::GlobalVariable>>>,
    /// Buffers whose length is a word of the uniform block (`f16`
    /// elements, see `layout.rs`): the block's global and the member.
    pub(super) length_words: HandleMap<hir::Param, Option<(Handle<naga::GlobalVariable>, u32)>>,
    /// Shared arrays' `var<workgroup>`s.
    pub(super) shared: HandleMap<hir::SharedDecl, Handle<naga::GlobalVariable>>,
    /// The builtin values the body uses: entry point arguments, or values
    /// the prologue computes (`block_dim()`, the folded module's ids).
    pub(super) builtins: HashMap<Builtin, Handle<Expression>>,
    pub(super) loops: Vec<LoopCtx>,
    /// True after a `return`/`break`/`continue` in the current block:
    /// the rest of the block is unreachable and not lowered.
    pub(super) dead: bool,
    pub(super) errors: Vec<Diagnostic>,
    /// Explain mode: the Rust line of the last line marker pushed.
    last_line: Option<usize>,
    /// Whether this function is the user's code (not a polyfill's): only
    /// the user's lines get explain markers and checks.
    pub(super) user_code: bool,
    /// Lowering a `#[helper]` (not the entry point, not a polyfill).
    pub(super) in_helper: bool,
    /// `assert_eq!`'s `left` and `right`, already evaluated, while its
    /// failure's record is lowered (`debug.rs`).
    pub(super) debug_values: Vec<Handle<Expression>>,
}

impl<'a> FnLowerer<'a> {
    fn new(mb: &'a mut ModuleBuilder, hir: &'a hir::Function, types: &'a Types) -> Self {
        FnLowerer {
            mb,
            hir,
            types,
            func: Function { name: Some(hir.name.clone()), ..Function::default() },
            cur: naga::Block::new(),
            emit_start: 0,
            locals: HandleMap::filled(hir.locals.len(), None),
            params: HandleMap::filled(hir.params.len(), None),
            buffers: HandleMap::filled(hir.params.len(), None),
            length_words: HandleMap::filled(hir.params.len(), None),
            shared: HandleMap::from_vec(Vec::new()),
            builtins: HashMap::new(),
            loops: Vec::new(),
            dead: false,
            errors: Vec::new(),
            last_line: None,
            debug_values: Vec::new(),
            user_code: true,
            in_helper: false,
        }
    }

    // ---- the emitter ----------------------------------------------------

    /// Closes the open `Emit` range into the current block.
    pub(super) fn flush(&mut self) {
        let len = self.func.expressions.len();
        if len > self.emit_start {
            let range = self.func.expressions.range_from(self.emit_start);
            self.cur.push(Statement::Emit(range), naga::Span::UNDEFINED);
        }
        self.emit_start = len;
    }

    /// Starts the next `Emit` range after everything appended so far (used
    /// after appending a call result, which must never be emitted).
    pub(super) fn flush_skip(&mut self) {
        self.emit_start = self.func.expressions.len();
    }

    /// Appends an expression, keeping pre-emitted ones out of `Emit` ranges.
    pub(super) fn add(&mut self, e: Expression, span: proc_macro2::Span) -> Handle<Expression> {
        let mut e = self.fold(e);
        if let Some(operand) = super::const_reject::rejected_operand(&self.func.expressions, &e) {
            // WGSL would reject this constant (see `const_reject.rs`): the
            // operand goes through a `var`, and the GPU computes it.
            self.hide_constant(&mut e, operand, span);
        }
        let span = self.mb.span(span);
        if e.needs_pre_emit() {
            self.flush();
            let h = self.func.expressions.append(e, span);
            self.emit_start = self.func.expressions.len();
            h
        } else {
            self.func.expressions.append(e, span)
        }
    }

    /// Integer arithmetic on literals, and integer literals converted to
    /// `f32`, as one literal (unrolled loops make many: `r[(3u + 1u) % 8u]`
    /// reads `r[4u]`). Folded with the GPU's own rules (wrapping, WGSL's
    /// `x / 0 == x`), so the value is the one the GPU would compute.
    fn fold(&self, e: Expression) -> Expression {
        use naga::BinaryOperator as B;
        let lit = |h: Handle<Expression>| match self.func.expressions[h] {
            Expression::Literal(l) => Some(l),
            _ => None,
        };
        if let Some(l) = super::fold_wide::fold(&self.func.expressions, &e) {
            return Expression::Literal(l);
        }
        let folded = match &e {
            Expression::Binary { op, left, right } => match (lit(*left), lit(*right)) {
                (Some(Literal::U32(a)), Some(Literal::U32(b))) => match op {
                    B::Add => Some(Literal::U32(a.wrapping_add(b))),
                    B::Subtract => Some(Literal::U32(a.wrapping_sub(b))),
                    B::Multiply => Some(Literal::U32(a.wrapping_mul(b))),
                    B::Divide => Some(Literal::U32(a.checked_div(b).unwrap_or(a))),
                    B::Modulo => Some(Literal::U32(a.checked_rem(b).unwrap_or(0))),
                    B::And => Some(Literal::U32(a & b)),
                    B::InclusiveOr => Some(Literal::U32(a | b)),
                    B::ExclusiveOr => Some(Literal::U32(a ^ b)),
                    B::ShiftLeft => Some(Literal::U32(a << (b & 31))),
                    B::ShiftRight => Some(Literal::U32(a >> (b & 31))),
                    _ => None,
                },
                (Some(Literal::I32(a)), Some(Literal::I32(b))) => match op {
                    B::Add => Some(Literal::I32(a.wrapping_add(b))),
                    B::Subtract => Some(Literal::I32(a.wrapping_sub(b))),
                    B::Multiply => Some(Literal::I32(a.wrapping_mul(b))),
                    B::Divide if b != 0 => Some(Literal::I32(a.wrapping_div(b))),
                    B::Modulo if b != 0 => Some(Literal::I32(a.wrapping_rem(b))),
                    B::And => Some(Literal::I32(a & b)),
                    B::InclusiveOr => Some(Literal::I32(a | b)),
                    B::ExclusiveOr => Some(Literal::I32(a ^ b)),
                    _ => None,
                },
                // Shift amounts are converted to `u32` (folded below), so a
                // shift of an `i32` literal meets a `u32` one. WGSL rejects
                // a constant shift that overflows (`2147483647i << 19u`);
                // Rust (and the GPU at run time) just shifts the bits out.
                (Some(Literal::I32(a)), Some(Literal::U32(b))) => match op {
                    B::ShiftLeft => Some(Literal::I32(a << (b & 31))),
                    B::ShiftRight => Some(Literal::I32(a >> (b & 31))),
                    _ => None,
                },
                _ => None,
            },
            // Negated literals: WGSL rejects the constant `-(-2147483648i)`,
            // which `i32::MIN.wrapping_neg()` lowers to; it wraps.
            Expression::Unary { op: naga::UnaryOperator::Negate, expr } => match lit(*expr) {
                Some(Literal::I32(a)) => Some(Literal::I32(a.wrapping_neg())),
                _ => None,
            },
            // `i32`/`u32` conversions of literals keep the bits.
            Expression::As { expr, kind: naga::ScalarKind::Uint, convert: Some(4) } => match lit(*expr) {
                Some(Literal::I32(a)) => Some(Literal::U32(a as u32)),
                _ => None,
            },
            Expression::As { expr, kind: naga::ScalarKind::Sint, convert: Some(4) } => match lit(*expr) {
                Some(Literal::U32(a)) => Some(Literal::I32(a as i32)),
                _ => None,
            },
            // Small integers convert to `f32` exactly.
            Expression::As { expr, kind: naga::ScalarKind::Float, convert: Some(4) } => match lit(*expr) {
                Some(Literal::U32(a)) if a < 1 << 24 => Some(Literal::F32(a as f32)),
                Some(Literal::I32(a)) if a.unsigned_abs() < 1 << 24 => Some(Literal::F32(a as f32)),
                _ => None,
            },
            _ => None,
        };
        match folded {
            Some(l) => Expression::Literal(l),
            None => e,
        }
    }

    /// Appends a statement after the expressions it uses.
    pub(super) fn stmt(&mut self, s: Statement, span: proc_macro2::Span) {
        self.flush();
        let span = self.mb.span(span);
        self.cur.push(s, span);
    }

    /// Lowers `f` into a fresh block and returns it.
    pub(super) fn nested(&mut self, f: impl FnOnce(&mut Self)) -> naga::Block {
        self.flush();
        let saved = std::mem::take(&mut self.cur);
        let was_dead = self.dead;
        self.dead = false;
        f(self);
        self.flush();
        self.dead = was_dead;
        std::mem::replace(&mut self.cur, saved)
    }

    /// A new `var` in this function.
    pub(super) fn var(&mut self, name: &str, ty: Ty, span: proc_macro2::Span) -> Handle<LocalVariable> {
        let ty = self.mb.ty(ty);
        let span = self.mb.span(span);
        self.func.local_variables.append(LocalVariable { name: Some(name.to_string()), ty, init: None }, span)
    }

    /// `var = value;`
    pub(super) fn store_var(&mut self, var: Handle<LocalVariable>, value: Handle<Expression>, span: proc_macro2::Span) {
        let pointer = self.add(Expression::LocalVariable(var), span);
        self.stmt(Statement::Store { pointer, value }, span);
    }

    /// The value of a `var`.
    pub(super) fn load_var(&mut self, var: Handle<LocalVariable>, span: proc_macro2::Span) -> Handle<Expression> {
        let pointer = self.add(Expression::LocalVariable(var), span);
        self.add(Expression::Load { pointer }, span)
    }

    /// The length of buffer parameter `buffer` (whose global is `base`):
    /// `arrayLength(&base)`, or for a buffer of sub-word elements, whose
    /// binding is rounded up to whole words, the length the runtime wrote
    /// into the uniform block (`params.base_len`).
    pub(super) fn buffer_len(
        &mut self,
        buffer: hir::ParamId,
        base: Handle<Expression>,
        span: proc_macro2::Span,
    ) -> Handle<Expression> {
        match self.length_words[buffer] {
            Some((params, member)) => {
                let params = self.add(Expression::GlobalVariable(params), span);
                let pointer = self.add(Expression::AccessIndex { base: params, index: member }, span);
                let len = self.add(Expression::Load { pointer }, span);
                self.name(len, &format!("{}_len", self.hir.params[buffer].name));
                len
            }
            None => self.add(Expression::ArrayLength(base), span),
        }
    }

    pub(super) fn literal(&mut self, lit: Literal, span: proc_macro2::Span) -> Handle<Expression> {
        self.add(Expression::Literal(lit), span)
    }

    /// Gives `h` a name in the WGSL output (`let name = ...;`).
    pub(super) fn name(&mut self, h: Handle<Expression>, name: &str) {
        if !self.func.expressions[h].needs_pre_emit() && !self.func.named_expressions.contains_key(&h) && name != "_" {
            self.func.named_expressions.insert(h, name.to_string());
        }
    }

    pub(super) fn ty_of(&self, e: ExprId) -> Ty {
        self.types.exprs[e]
    }

    pub(super) fn span_of(&self, e: ExprId) -> proc_macro2::Span {
        self.hir.exprs[e].span
    }

    // ---- functions ------------------------------------------------------

    /// Lowers the kernel into a compute entry point.
    pub(crate) fn lower_kernel(
        mb: &'a mut ModuleBuilder,
        hir: &'a hir::Function,
        types: &'a Types,
        globals: &KernelGlobals,
        workgroup_size: [u32; 3],
        folded: bool,
    ) -> Result<EntryPoint, Vec<Diagnostic>> {
        let mut l = FnLowerer::new(mb, hir, types);
        l.buffers = globals.buffers.clone();
        l.length_words = HandleMap::from_vec(
            hir.params.iter().map(|(id, _)| globals.length_members[id].map(|m| (globals.params, m))).collect(),
        );
        l.shared = globals.shared.clone();
        l.prologue(globals, workgroup_size, folded);
        l.debug_prologue();
        l.body_block(&hir.body);
        l.flush();
        if !l.errors.is_empty() {
            return Err(l.errors);
        }
        let mut func = l.func;
        func.body = l.cur;
        Ok(EntryPoint {
            name: hir.name.clone(),
            stage: ShaderStage::Compute,
            early_depth_test: None,
            workgroup_size,
            workgroup_size_overrides: None,
            function: func,
            mesh_info: None,
            task_payload: None,
            incoming_ray_payload: None,
        })
    }

    /// Lowers a polyfill (see `lower::polyfill`): a helper without line
    /// markers.
    pub(super) fn lower_polyfill(
        mb: &'a mut ModuleBuilder,
        hir: &'a hir::Function,
        types: &'a Types,
    ) -> Result<Handle<Function>, Vec<Diagnostic>> {
        Self::lower_function(mb, hir, types, false)
    }

    /// Lowers a helper into a naga function.
    pub(crate) fn lower_helper(
        mb: &'a mut ModuleBuilder,
        hir: &'a hir::Function,
        types: &'a Types,
    ) -> Result<Handle<Function>, Vec<Diagnostic>> {
        Self::lower_function(mb, hir, types, true)
    }

    fn lower_function(
        mb: &'a mut ModuleBuilder,
        hir: &'a hir::Function,
        types: &'a Types,
        user_code: bool,
    ) -> Result<Handle<Function>, Vec<Diagnostic>> {
        let mut l = FnLowerer::new(mb, hir, types);
        l.user_code = user_code;
        l.in_helper = user_code;
        for (i, p) in hir.params.iter() {
            let ParamKind::Scalar { ty, mutable } = p.kind else { continue };
            let nty = l.mb.ty(ty);
            let index = l.func.arguments.len() as u32;
            l.func.arguments.push(FunctionArgument { name: Some(p.name.clone()), ty: nty, binding: None });
            let arg = l.add(Expression::FunctionArgument(index), p.span);
            // Arrays live in variables so that they can be indexed.
            l.params[i] = Some(if mutable || l.mb.table.contains_array(ty) {
                let v = l.var(&p.name, ty, p.span);
                l.store_var(v, arg, p.span);
                Slot::Var(v)
            } else {
                Slot::Value(arg)
            });
        }
        if hir.ret != Ty::Unit {
            let ty = l.mb.ty(hir.ret);
            l.func.result = Some(FunctionResult { ty, binding: None });
        }
        let value = l.block_value(&hir.body);
        if !l.dead {
            let span = hir.body.tail.map(|t| hir.exprs[t].span).unwrap_or(hir.span);
            l.stmt(Statement::Return { value }, span);
        }
        l.flush();
        if !l.errors.is_empty() {
            return Err(l.errors);
        }
        let mut func = l.func;
        func.body = l.cur;
        let span = l.mb.span(hir.span);
        Ok(l.mb.module.functions.append(func, span))
    }

    /// The entry point's arguments, the uniform reads, and the builtins the
    /// body uses.
    ///
    /// Plain module: the builtins are WGSL's own (`global_invocation_id`,
    /// `workgroup_id`, `num_workgroups`, ...), just as a person would write.
    ///
    /// Folded module: a 1-D grid longer than the device's 65535 workgroups
    /// per axis is dispatched as full rows `(65535, rows, 1)` plus, when
    /// needed, a second dispatch for the remainder (`params.block_offset`
    /// says where it starts), so no padding workgroups exist and no guard
    /// is needed (an early-return guard measurably cost bandwidth). The
    /// logical ids are rebuilt from the physical ones:
    /// `block_id = (block_offset + workgroup_id.x + num_workgroups.x * workgroup_id.y, 0, 0)`
    /// and `grid_dim = params.grid_dim`.
    fn prologue(&mut self, g: &KernelGlobals, workgroup_size: [u32; 3], folded: bool) {
        let span = self.hir.span;
        let mut used = visit::used_builtins(self.hir);
        // The helpers' debug records carry the invocation's global id.
        if self.mb.debug.as_ref().is_some_and(|d| d.has_helper_sites()) && !used.contains(&Builtin::GlobalId) {
            used.push(Builtin::GlobalId);
        }
        let uses = |b: Builtin| used.contains(&b);
        let v3 = self.mb.ty(Ty::Dim3);
        let arg_of = |l: &mut Self, name: &str, ty, b: BuiltIn| {
            let index = l.func.arguments.len() as u32;
            l.func.arguments.push(FunctionArgument { name: Some(name.into()), ty, binding: Some(Binding::BuiltIn(b)) });
            l.add(Expression::FunctionArgument(index), span)
        };
        let arg = |l: &mut Self, name: &str, b: BuiltIn| arg_of(l, name, v3, b);

        // Scalar parameters: read once from the uniform block.
        for (i, p) in self.hir.params.iter() {
            let (ParamKind::Scalar { ty, mutable }, Some(member)) = (p.kind, g.scalar_members[i]) else { continue };
            let params = self.add(Expression::GlobalVariable(g.params), p.span);
            let ptr = self.add(Expression::AccessIndex { base: params, index: member }, p.span);
            let value = self.add(Expression::Load { pointer: ptr }, p.span);
            self.params[i] = Some(if mutable {
                let v = self.var(&p.name, ty, p.span);
                self.store_var(v, value, p.span);
                Slot::Var(v)
            } else {
                self.name(value, &p.name);
                Slot::Value(value)
            });
        }
        // The `u32` builtins (`subgroup_size()`, ...): arguments, first and
        // the same in both modules, only when used (they need the SUBGROUP
        // capability).
        for b in Builtin::ALL.into_iter().filter(|b| b.ty() == BuiltinType::U32 && uses(*b)) {
            let Some(naga_builtin) = naga_builtin(b) else { continue };
            let u32_ty = self.mb.ty(Ty::U32);
            let h = arg_of(self, b.name(), u32_ty, naga_builtin);
            self.builtins.insert(b, h);
        }
        let block_dim = |l: &mut Self| {
            // A size the launch sets is its override (`len_value`).
            let dims: Vec<_> = workgroup_size.iter().map(|&s| l.len_value(s, span)).collect();
            l.add(Expression::Compose { ty: v3, components: dims }, span)
        };

        if !folded {
            // In the order of `Builtin::ALL`, so that the entry point's
            // arguments do not depend on the order of first use.
            for b in Builtin::ALL.into_iter().filter(|b| b.ty() == BuiltinType::Axes && uses(*b)) {
                let h = match naga_builtin(b) {
                    Some(naga_builtin) => arg(self, b.name(), naga_builtin),
                    None => block_dim(self),
                };
                self.builtins.insert(b, h);
            }
            return;
        }

        let uniform = |l: &mut Self, index: u32, name: &str| {
            let params = l.add(Expression::GlobalVariable(g.params), span);
            let ptr = l.add(Expression::AccessIndex { base: params, index }, span);
            let value = l.add(Expression::Load { pointer: ptr }, span);
            l.name(value, name);
            value
        };
        let thread_id = (uses(Builtin::ThreadId) || uses(Builtin::GlobalId))
            .then(|| arg(self, "thread_id", BuiltIn::LocalInvocationId));
        if uses(Builtin::GridDim) {
            // The logical grid, as launched (not the folded dispatch).
            let grid_dim = uniform(self, 0, "grid_dim");
            self.builtins.insert(Builtin::GridDim, grid_dim);
        }
        if uses(Builtin::BlockId) || uses(Builtin::GlobalId) {
            let wg = arg(self, "workgroup_id", BuiltIn::WorkGroupId);
            let nwg = arg(self, "num_workgroups", BuiltIn::NumWorkGroups);
            let offset = uniform(self, 1, "block_offset");
            let c = |l: &mut Self, e, i| l.add(Expression::AccessIndex { base: e, index: i }, span);
            let (wx, wy, nx) = (c(self, wg, 0), c(self, wg, 1), c(self, nwg, 0));
            let bin = |l: &mut Self, op, a, b| l.add(Expression::Binary { op, left: a, right: b }, span);
            let row = bin(self, BinaryOperator::Multiply, nx, wy);
            let t = bin(self, BinaryOperator::Add, offset, wx);
            let linear = bin(self, BinaryOperator::Add, t, row);
            let zero = self.literal(Literal::U32(0), span);
            let block_id = self.add(Expression::Compose { ty: v3, components: vec![linear, zero, zero] }, span);
            self.name(block_id, "block_id");
            self.builtins.insert(Builtin::BlockId, block_id);
            if let Some(thread_id) = thread_id.filter(|_| uses(Builtin::GlobalId)) {
                let d = block_dim(self);
                let t = bin(self, BinaryOperator::Multiply, block_id, d);
                let global_id = bin(self, BinaryOperator::Add, t, thread_id);
                self.name(global_id, "global_id");
                self.builtins.insert(Builtin::GlobalId, global_id);
            }
        }
        if uses(Builtin::BlockDim) {
            let d = block_dim(self);
            self.builtins.insert(Builtin::BlockDim, d);
        }
        if let Some(thread_id) = thread_id {
            self.builtins.insert(Builtin::ThreadId, thread_id);
        }
        for b in used {
            if !self.builtins.contains_key(&b) {
                let msg = format!("internal compiler error: `{}()` has no value in the folded module", b.name());
                self.errors.push(Diagnostic::new(span, msg));
            }
        }
    }

    // ---- blocks and statements -----------------------------------------

    /// Lowers a block for its effects.
    pub(super) fn body_block(&mut self, b: &Block) {
        let v = self.block_value(b);
        let _ = v;
    }

    /// Lowers a block and returns its value (None for unit or divergence).
    pub(super) fn block_value(&mut self, b: &Block) -> Option<Handle<Expression>> {
        for s in &b.stmts {
            if self.dead {
                return None;
            }
            let span = match s {
                Stmt::Let { local, .. } => self.hir.locals[*local].span,
                Stmt::Expr(e) | Stmt::LetTuple { init: e, .. } => self.span_of(*e),
                // Declared as a module-scope `var<workgroup>`; folded.
                Stmt::Shared(_) | Stmt::Const(_) => continue,
            };
            self.mark_line(span);
            match s {
                Stmt::Let { local, init } => self.let_stmt(*local, *init),
                Stmt::Expr(e) => {
                    self.expr(*e);
                }
                Stmt::LetTuple { locals, init } => self.let_tuple(locals, *init),
                Stmt::Shared(_) | Stmt::Const(_) => {}
            }
        }
        if self.dead {
            return None;
        }
        if let Some(t) = b.tail {
            self.mark_line(self.span_of(t));
        }
        b.tail.and_then(|t| self.expr(t))
    }

    /// Explain mode only: `explain_line = N;` where the Rust source line
    /// changes (see `lower_program_explain`). A no-op otherwise.
    fn mark_line(&mut self, span: proc_macro2::Span) {
        let Some(global) = self.mb.explain_line.filter(|_| self.user_code) else { return };
        let line = span.start().line;
        if line == 0 || self.last_line == Some(line) {
            return;
        }
        self.last_line = Some(line);
        let pointer = self.add(Expression::GlobalVariable(global), span);
        let value = self.literal(Literal::U32(line as u32), span);
        self.stmt(Statement::Store { pointer, value }, span);
    }

    fn let_stmt(&mut self, local: LocalId, init: Option<ExprId>) {
        let decl = &self.hir.locals[local];
        let ty = self.types.locals[local];
        if matches!(ty, Ty::Unit | Ty::Never) {
            if let Some(init) = init {
                self.expr(init);
            }
            return;
        }
        let (name, span, mutable) = (decl.name.clone(), decl.span, decl.mutable);
        match init {
            // `let x = if ... { a } else { b };` writes straight into `x`;
            // arrays live in variables so that they can be indexed.
            Some(init)
                if mutable || is_control_flow(&self.hir.exprs[init].kind) || self.mb.table.contains_array(ty) =>
            {
                let v = self.var(&name, ty, span);
                self.locals[local] = Some(Slot::Var(v));
                self.expr_into(init, v);
            }
            Some(init) => {
                if let Some(value) = self.expr(init) {
                    self.name(value, &name);
                    self.locals[local] = Some(Slot::Value(value));
                }
            }
            None => {
                let v = self.var(&name, ty, span);
                self.locals[local] = Some(Slot::Var(v));
            }
        }
    }

    /// `let (a, b) = init;`: each local takes its element of the tuple.
    fn let_tuple(&mut self, locals: &[LocalId], init: ExprId) {
        let Some(tuple) = self.expr(init) else { return };
        for (i, &local) in locals.iter().enumerate() {
            let decl = &self.hir.locals[local];
            let (name, span, mutable) = (decl.name.clone(), decl.span, decl.mutable);
            let ty = self.types.locals[local];
            let value = self.add(Expression::AccessIndex { base: tuple, index: i as u32 }, span);
            self.locals[local] = Some(if mutable || self.mb.table.contains_array(ty) {
                let v = self.var(&name, ty, span);
                self.store_var(v, value, span);
                Slot::Var(v)
            } else {
                self.name(value, &name);
                Slot::Value(value)
            });
        }
    }

    /// Evaluates `e` and stores its value into `dest`, pushing the store
    /// into the branches of `if`s and blocks so that no temporary is needed.
    pub(super) fn expr_into(&mut self, e: ExprId, dest: Handle<LocalVariable>) {
        let span = self.span_of(e);
        match &self.hir.exprs[e].kind {
            ExprKind::If { cond, then, else_, .. } => {
                let Some(c) = self.expr(*cond) else { return };
                let (then, else_) = (then.clone(), *else_);
                let accept = self.nested(|l| {
                    l.block_into(&then, dest);
                });
                let reject = self.nested(|l| {
                    if let Some(e) = else_ {
                        l.expr_into(e, dest);
                    }
                });
                self.stmt(Statement::If { condition: c, accept, reject }, span);
            }
            ExprKind::Block(b) => {
                let b = b.clone();
                self.block_into(&b, dest);
            }
            ExprKind::Match { .. } => self.match_stmt(e, Some(dest)),
            _ => {
                if let Some(v) = self.expr(e) {
                    if !self.dead {
                        self.store_var(dest, v, span);
                    }
                }
            }
        }
    }

    fn block_into(&mut self, b: &Block, dest: Handle<LocalVariable>) {
        let stmts_only = Block { stmts: b.stmts.clone(), tail: None };
        self.body_block(&stmts_only);
        if let (Some(t), false) = (b.tail, self.dead) {
            self.expr_into(t, dest);
        }
    }

    /// The value of a local.
    pub(super) fn local_value(&mut self, local: LocalId, span: proc_macro2::Span) -> Option<Handle<Expression>> {
        match self.locals[local]? {
            Slot::Value(h) => Some(h),
            Slot::Var(v) => Some(self.load_var(v, span)),
        }
    }

    // ---- loops ----------------------------------------------------------

    pub(super) fn loop_expr(
        &mut self,
        id: ExprId,
        label: &Option<Label>,
        kind: &LoopKind,
        body: &Block,
    ) -> Option<Handle<Expression>> {
        let span = self.span_of(id);
        let ty = self.ty_of(id);
        if let LoopKind::For { var, unroll: Some(values), .. } = kind {
            self.unrolled(*var, values, body, span);
            return None;
        }
        let result = (!matches!(ty, Ty::Unit | Ty::Never)).then(|| self.var("loop_value", ty, span));
        let label = hir::Function::label_name(label).map(str::to_string);
        let mut ctx = LoopCtx { label: label.clone(), break_flag: None, continue_flag: None, result };
        // Flags for labelled jumps from inner loops, reset on entry.
        if label.is_some() && visit::has_labelled_jump(self.hir, body, label.as_deref().unwrap_or("")) {
            let name = label.as_deref().unwrap_or("loop").trim_start_matches('\'');
            let bf = self.var(&format!("break_{name}"), Ty::Bool, span);
            let cf = self.var(&format!("continue_{name}"), Ty::Bool, span);
            for f in [bf, cf] {
                let no = self.literal(Literal::Bool(false), span);
                self.store_var(f, no, span);
            }
            ctx.break_flag = Some(bf);
            ctx.continue_flag = Some(cf);
        }
        let mut continuing = naga::Block::new();
        let mut break_if = None;
        let mut guard = None;
        let naga_body = match kind {
            LoopKind::Loop => {
                self.loops.push(ctx);
                let b = self.nested(|l| {
                    l.loop_budget(span);
                    l.body_block(body)
                });
                self.loops.pop();
                b
            }
            LoopKind::While { cond } => {
                let cond = *cond;
                self.loops.push(ctx);
                let b = self.nested(|l| {
                    l.loop_budget(span);
                    l.break_unless(cond);
                    if !l.dead {
                        l.body_block(body);
                    }
                });
                self.loops.pop();
                b
            }
            LoopKind::For { var, start, end, inclusive, step, reverse, late_unroll, .. } => {
                let var_ty = self.types.locals[*var];
                let decl = self.hir.locals[*var].clone();
                let start_v = self.expr(*start)?;
                let end_v = self.expr(*end)?;
                self.name(end_v, &format!("{}_end", decl.name));
                let step_v = match step {
                    Some(s) => {
                        let s = self.expr(*s)?;
                        Some(self.convert(s, Ty::Usize, var_ty, span))
                    }
                    None => None,
                };
                let (inclusive, reverse) = (*inclusive, *reverse);
                let counter = if *late_unroll {
                    self.var(&format!("{}{}", onekernel_abi::UNROLL_PREFIX, decl.name), var_ty, decl.span)
                } else {
                    self.var(&decl.name, var_ty, decl.span)
                };
                self.store_var(counter, if reverse { end_v } else { start_v }, span);
                // An inclusive range runs only when it is not empty; it then
                // stops itself at its bound, so `..=u32::MAX` ends too.
                if inclusive {
                    let le = BinaryOperator::LessEqual;
                    guard = Some(self.add(Expression::Binary { op: le, left: start_v, right: end_v }, span));
                }
                self.loops.push(ctx);
                // A loop the specialisation unrolls counts no budget when it
                // steps by one: a counter that only grows by one up to a
                // `u32` bound ends, and the count would hide the loop's
                // shape from the unroller (`onekernel_abi::unroll_marked_loops`),
                // leaving a checked launch with the slow loop.
                let budget = !(*late_unroll && step.is_none());
                let b = self.nested(|l| {
                    if budget {
                        l.loop_budget(span);
                    }
                    if !inclusive {
                        let i = l.load_var(counter, span);
                        let (op, bound) =
                            if reverse { (BinaryOperator::Greater, start_v) } else { (BinaryOperator::Less, end_v) };
                        let in_range = l.add(Expression::Binary { op, left: i, right: bound }, span);
                        l.break_if_not(in_range, span);
                        if reverse {
                            // `(a..b).rev()` counts down from `b - 1`.
                            let one = l.one(var_ty, span);
                            let prev =
                                l.add(Expression::Binary { op: BinaryOperator::Subtract, left: i, right: one }, span);
                            l.store_var(counter, prev, span);
                        }
                    }
                    // The loop variable is a fresh binding each iteration: an
                    // immutable one can read the counter itself (the body
                    // cannot change it); a `mut` one gets its own copy.
                    l.locals[*var] = Some(if decl.mutable {
                        let value = l.load_var(counter, decl.span);
                        let v = l.var(&decl.name, var_ty, decl.span);
                        l.store_var(v, value, decl.span);
                        Slot::Var(v)
                    } else {
                        Slot::Var(counter)
                    });
                    l.body_block(body);
                });
                self.loops.pop();
                // continuing { .. }: the next value, and whether there is one.
                let saved = std::mem::take(&mut self.cur);
                self.flush();
                let i = self.load_var(counter, span);
                let bin = |l: &mut Self, op, left, right| l.add(Expression::Binary { op, left, right }, span);
                match (reverse, inclusive, step_v) {
                    // Checked at the top of the body.
                    (true, false, _) => {}
                    (false, false, None) => {
                        let one = self.one(var_ty, span);
                        let next = bin(self, BinaryOperator::Add, i, one);
                        self.store_var(counter, next, span);
                    }
                    (false, true, None) => {
                        // `a..=b`: stop after `b`, before stepping past it.
                        let done = bin(self, BinaryOperator::Equal, i, end_v);
                        let one = self.one(var_ty, span);
                        let next = bin(self, BinaryOperator::Add, i, one);
                        self.store_var(counter, next, span);
                        break_if = Some(done);
                    }
                    (true, true, _) => {
                        // Stop after `start`, before stepping below it.
                        let done = bin(self, BinaryOperator::Equal, i, start_v);
                        let one = self.one(var_ty, span);
                        let next = bin(self, BinaryOperator::Subtract, i, one);
                        self.store_var(counter, next, span);
                        break_if = Some(done);
                    }
                    (false, _, step_v) => {
                        // Stop when the next value would pass the bound:
                        // `end - i` (as an unsigned distance) against the
                        // step, so the counter never overflows.
                        let s = match step_v {
                            Some(s) => s,
                            None => self.one(var_ty, span),
                        };
                        let diff = bin(self, BinaryOperator::Subtract, end_v, i);
                        let dist = self.convert_bits(diff, var_ty, span);
                        let step_u = self.convert_bits(s, var_ty, span);
                        let op = if inclusive { BinaryOperator::Less } else { BinaryOperator::LessEqual };
                        let done = bin(self, op, dist, step_u);
                        let next = bin(self, BinaryOperator::Add, i, s);
                        self.store_var(counter, next, span);
                        break_if = Some(done);
                    }
                }
                self.flush();
                continuing = std::mem::replace(&mut self.cur, saved);
                b
            }
        };
        let lp = Statement::Loop { body: naga_body, continuing, break_if };
        match guard {
            Some(condition) => {
                let mut accept = naga::Block::new();
                let nspan = self.mb.span(span);
                accept.push(lp, nspan);
                self.stmt(Statement::If { condition, accept, reject: naga::Block::new() }, span);
            }
            None => self.stmt(lp, span),
        }
        self.after_inner_loop(label.as_deref(), body);
        result.map(|r| self.load_var(r, span))
    }

    /// An unrolled `for` loop: the body once per value of the loop
    /// variable, each in its own block, the variable a constant there.
    fn unrolled(&mut self, var: LocalId, values: &[i64], body: &Block, span: proc_macro2::Span) {
        let var_ty = self.types.locals[var];
        let decl = self.hir.locals[var].clone();
        for &v in values {
            if self.dead {
                return;
            }
            let block = self.nested(|l| {
                let value = l.const_bits(var_ty, v as u64, decl.span);
                l.locals[var] = Some(if decl.mutable {
                    let x = l.var(&decl.name, var_ty, decl.span);
                    l.store_var(x, value, decl.span);
                    Slot::Var(x)
                } else {
                    Slot::Value(value)
                });
                l.body_block(body);
            });
            if !block.is_empty() {
                let nspan = self.mb.span(span);
                self.flush();
                self.cur.push(Statement::Block(block), nspan);
            }
            // A `return` in the body ends the rest.
            if visit::block_diverges(self.hir, body) {
                self.dead = true;
            }
        }
    }

    /// `if !cond { break; }` at the top of a `while` body.
    fn break_unless(&mut self, cond: ExprId) {
        let span = self.span_of(cond);
        if let Some(c) = self.expr(cond) {
            self.break_if_not(c, span);
        }
    }

    fn break_if_not(&mut self, c: Handle<Expression>, span: proc_macro2::Span) {
        let mut brk = naga::Block::new();
        brk.push(Statement::Break, naga::Span::UNDEFINED);
        let not = self.add(Expression::Unary { op: naga::UnaryOperator::LogicalNot, expr: c }, span);
        self.stmt(Statement::If { condition: not, accept: brk, reject: naga::Block::new() }, span);
    }

    /// After an inner loop: forward labelled `break`/`continue` aimed at
    /// enclosing loops (WGSL's `break` only leaves the innermost loop).
    fn after_inner_loop(&mut self, own_label: Option<&str>, body: &Block) {
        let Some(parent) = self.loops.len().checked_sub(1) else { return };
        let targets = visit::labelled_jumps(self.hir, body, own_label);
        for (depth_from_parent, ctx_index) in (0..=parent).rev().enumerate() {
            let ctx = &self.loops[ctx_index];
            let Some(label) = ctx.label.clone() else { continue };
            if !targets.contains(&label) {
                continue;
            }
            let (bf, cf) = (ctx.break_flag, ctx.continue_flag);
            let span = self.hir.span;
            for (flag, is_continue) in [(bf, false), (cf, true)] {
                let Some(flag) = flag else { continue };
                let set = self.load_var(flag, span);
                let accept = self.nested(|l| {
                    if depth_from_parent == 0 && is_continue {
                        let no = l.literal(Literal::Bool(false), span);
                        l.store_var(flag, no, span);
                        l.stmt(Statement::Continue, span);
                    } else {
                        l.stmt(Statement::Break, span);
                    }
                });
                self.stmt(Statement::If { condition: set, accept, reject: naga::Block::new() }, span);
            }
        }
    }

    pub(super) fn jump(&mut self, id: ExprId, label: Option<&str>, value: Option<ExprId>, is_continue: bool) {
        let span = self.span_of(id);
        let target = match label {
            Some(l) => self.loops.iter().rposition(|c| c.label.as_deref() == Some(l)),
            None => self.loops.len().checked_sub(1),
        };
        let Some(target) = target else { return };
        if let Some(v) = value {
            if let (Some(v), Some(r)) = (self.expr(v), self.loops[target].result) {
                self.store_var(r, v, span);
            }
        }
        if target + 1 == self.loops.len() {
            self.stmt(if is_continue { Statement::Continue } else { Statement::Break }, span);
        } else {
            let flag = if is_continue { self.loops[target].continue_flag } else { self.loops[target].break_flag };
            if let Some(flag) = flag {
                let yes = self.literal(Literal::Bool(true), span);
                self.store_var(flag, yes, span);
            }
            self.stmt(Statement::Break, span);
        }
        self.dead = true;
    }
}

fn is_control_flow(k: &ExprKind) -> bool {
    matches!(k, ExprKind::If { .. } | ExprKind::Block(_) | ExprKind::Match { .. })
}

/// WGSL's builtin for a builtin value, or `None` for `block_dim()` (the
/// workgroup size, a constant of the module).
fn naga_builtin(b: Builtin) -> Option<BuiltIn> {
    Some(match b {
        Builtin::GlobalId => BuiltIn::GlobalInvocationId,
        Builtin::ThreadId => BuiltIn::LocalInvocationId,
        Builtin::BlockId => BuiltIn::WorkGroupId,
        Builtin::GridDim => BuiltIn::NumWorkGroups,
        Builtin::BlockDim => return None,
        Builtin::SubgroupSize => BuiltIn::SubgroupSize,
        Builtin::SubgroupInvocationId => BuiltIn::SubgroupInvocationId,
        Builtin::SubgroupId => BuiltIn::SubgroupId,
        Builtin::NumSubgroups => BuiltIn::NumSubgroups,
    })
}
