//! `println!`, `assert!`, `panic!`, ... on the GPU (see
//! `onekernel_abi::debug`): only a kernel with such sites gets the print
//! buffer and the two functions below, so every other kernel's module is
//! unchanged.
//!
//! A print evaluates its arguments, reserves a record with
//! `debug_reserve(words)` and, if it got room, writes the site, the
//! invocation's global id and each argument's bits (`words_of`). A failed
//! `assert!` or a `panic!` evaluates its message's arguments, writes its
//! record into the panic slot if it is the launch's first
//! (`debug_panic()`), and returns from the entry point: that invocation
//! ends, the others go on.
//!
//! A `#[helper]` the kernel calls may print and panic too (its sites follow
//! the kernel's in `KernelInfo::debug_sites`, `crate::debug::site_bases`).
//! A helper has no builtins, so the entry point stores its global id in
//! `var<private> debug_gid` for the helpers' records; a helper's panic
//! sets `var<private> debug_panicked` and returns (a zero value), and every
//! call of a helper that may panic is followed by
//! `if debug_panicked { return; }` in its caller, up to the entry point.
//! Only a program whose helpers print or panic gets these.

use super::function::FnLowerer;
use super::ModuleBuilder;
use crate::hir::{BinOp, DebugCall};
use crate::types::{Lane, Ty};
use naga::{
    AddressSpace, ArraySize, AtomicFunction, BinaryOperator, Block, Expression, Function, GlobalVariable, Handle,
    Literal, MemoryDecorations, ResourceBinding, ScalarKind, Statement, StorageAccess, StructMember, Type, TypeInner,
};
use onekernel_abi::debug::print_buffer;
use onekernel_abi::DebugKind;

/// No room: what both functions return then.
const NONE: u32 = u32::MAX;

/// The module's print buffer and its functions.
pub(crate) struct DebugBuffer {
    global: Handle<GlobalVariable>,
    /// `fn debug_reserve(n: u32) -> u32`: the index in `words` of `n`
    /// reserved words, or `NONE` (only in a kernel that prints).
    reserve: Option<Handle<Function>>,
    /// `fn debug_panic() -> u32`: 0 for the launch's first panic, else
    /// `NONE` (only in a kernel that may panic).
    panic: Option<Handle<Function>>,
    /// `var<private> debug_gid: vec3<u32>`: the invocation's global id,
    /// for the records of helpers (only when a helper has sites).
    gid: Option<Handle<GlobalVariable>>,
    /// `var<private> debug_panicked: bool`: set by a helper's panic (only
    /// when a helper may panic).
    panicked: Option<Handle<GlobalVariable>>,
    /// The helpers that may panic (themselves or through a helper they
    /// call), by name.
    panicking_helpers: std::collections::HashSet<String>,
    /// The index of the first site of the function being lowered (see
    /// `crate::debug::site_bases`).
    pub site_base: u32,
}

impl DebugBuffer {
    /// Declares what the debug sites of `program` need: the buffer at
    /// `@binding(binding)`, its functions and, for sites in helpers, the
    /// private variables; `None` for a program without sites.
    pub fn for_program(
        mb: &mut ModuleBuilder,
        program: &crate::hir::Program,
        kernel_types: &crate::infer::Types,
        helper_types: &[crate::infer::Types],
        binding: u32,
    ) -> Option<DebugBuffer> {
        if !crate::debug::program_has_sites(program) {
            return None;
        }
        let calls = crate::debug::program_calls(program, kernel_types, helper_types);
        let panic_words = calls
            .iter()
            .filter(|(_, c, _, _)| c.kind.panics())
            .map(|(_, c, types, _)| record_words(c, types, &program.types))
            .max()
            .unwrap_or(0);
        let prints = calls.iter().any(|(_, c, _, _)| !c.kind.panics());
        let mut buffer = DebugBuffer::declare(mb, binding, panic_words, prints);
        let private = |mb: &mut ModuleBuilder, name: &str, ty: Ty| {
            let ty = mb.ty(ty);
            let g = GlobalVariable {
                name: Some(name.into()),
                space: AddressSpace::Private,
                binding: None,
                ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            };
            mb.module.global_variables.append(g, naga::Span::UNDEFINED)
        };
        if program.helpers.iter().any(|h| h.debug_sites > 0) {
            buffer.gid = Some(private(mb, "debug_gid", Ty::Dim3));
        }
        // Callees come before callers.
        for h in &program.helpers {
            let own = crate::debug::calls(h).iter().any(|c| c.kind.panics());
            if own || h.calls.iter().any(|c| buffer.panicking_helpers.contains(&c.name)) {
                buffer.panicking_helpers.insert(h.name.clone());
            }
        }
        if !buffer.panicking_helpers.is_empty() {
            buffer.panicked = Some(private(mb, "debug_panicked", Ty::Bool));
        }
        Some(buffer)
    }

    /// Whether a helper has sites (the entry point then passes its global
    /// id in `debug_gid`).
    pub fn has_helper_sites(&self) -> bool {
        self.gid.is_some()
    }

    /// Declares the buffer at `@binding(binding)` and its functions;
    /// `panic_words` is the room before the print records.
    fn declare(mb: &mut ModuleBuilder, binding: u32, panic_words: u32, prints: bool) -> DebugBuffer {
        let u32_ty = mb.ty(Ty::U32);
        let atomic = mb.atomic(Ty::U32);
        let words = mb.module.types.insert(
            Type { name: None, inner: TypeInner::Array { base: u32_ty, size: ArraySize::Dynamic, stride: 4 } },
            naga::Span::UNDEFINED,
        );
        let member = |name: &str, ty, offset| StructMember { name: Some(name.into()), ty, binding: None, offset };
        let members = vec![
            member("cursor", atomic, print_buffer::CURSOR * 4),
            member("dropped", atomic, print_buffer::DROPPED * 4),
            member("panics", atomic, print_buffer::PANICS * 4),
            member("debug_assertions", u32_ty, print_buffer::DEBUG_ASSERTIONS * 4),
            member("words", words, print_buffer::HEADER * 4),
        ];
        let ty = mb.module.types.insert(
            Type {
                name: Some("DebugPrints".into()),
                inner: TypeInner::Struct { members, span: print_buffer::HEADER * 4 + 4 },
            },
            naga::Span::UNDEFINED,
        );
        let global = mb.module.global_variables.append(
            GlobalVariable {
                name: Some("debug_prints".into()),
                space: AddressSpace::Storage { access: StorageAccess::LOAD | StorageAccess::STORE },
                binding: Some(ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            naga::Span::UNDEFINED,
        );
        let reserve = prints
            .then(|| mb.module.functions.append(reserve_function(global, u32_ty, panic_words), naga::Span::UNDEFINED));
        let panic = (panic_words > 0)
            .then(|| mb.module.functions.append(panic_function(global, u32_ty), naga::Span::UNDEFINED));
        DebugBuffer {
            global,
            reserve,
            panic,
            gid: None,
            panicked: None,
            panicking_helpers: Default::default(),
            site_base: 0,
        }
    }
}

/// Appends expressions to a hand-built function, emitting each that needs it.
struct Builder {
    f: Function,
}

impl Builder {
    fn add(&mut self, block: &mut Block, e: Expression) -> Handle<Expression> {
        let pre = e.needs_pre_emit() || matches!(e, Expression::AtomicResult { .. });
        let h = self.f.expressions.append(e, naga::Span::UNDEFINED);
        if !pre {
            block.push(Statement::Emit(naga::Range::new_from_bounds(h, h)), naga::Span::UNDEFINED);
        }
        h
    }

    fn u32(&mut self, block: &mut Block, v: u32) -> Handle<Expression> {
        self.add(block, Expression::Literal(Literal::U32(v)))
    }

    fn member(&mut self, block: &mut Block, g: Handle<GlobalVariable>, index: u32) -> Handle<Expression> {
        let base = self.add(block, Expression::GlobalVariable(g));
        self.add(block, Expression::AccessIndex { base, index })
    }

    fn atomic_add(
        &mut self,
        block: &mut Block,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
        ty: Handle<Type>,
    ) -> Handle<Expression> {
        let result = self.add(block, Expression::AtomicResult { ty, comparison: false });
        block.push(
            Statement::Atomic { pointer, fun: AtomicFunction::Add, value, result: Some(result) },
            naga::Span::UNDEFINED,
        );
        result
    }

    fn ret(block: &mut Block, value: Handle<Expression>) {
        block.push(Statement::Return { value: Some(value) }, naga::Span::UNDEFINED);
    }
}

/// ```wgsl
/// fn debug_reserve(n: u32) -> u32 {
///     let room = arrayLength(&debug_prints.words) - PANIC_WORDS;
///     if atomicLoad(&debug_prints.cursor) < room {
///         let at = atomicAdd(&debug_prints.cursor, n);
///         if at + n <= room { return PANIC_WORDS + at; }
///     }
///     atomicAdd(&debug_prints.dropped, 1u);
///     return NONE;
/// }
/// ```
fn reserve_function(g: Handle<GlobalVariable>, u32_ty: Handle<Type>, panic_words: u32) -> Function {
    let mut b = Builder {
        f: Function {
            name: Some("debug_reserve".into()),
            result: Some(naga::FunctionResult { ty: u32_ty, binding: None }),
            ..Function::default()
        },
    };
    b.f.arguments.push(naga::FunctionArgument { name: Some("n".into()), ty: u32_ty, binding: None });
    let mut body = Block::new();
    let n = b.add(&mut body, Expression::FunctionArgument(0));
    let words = b.member(&mut body, g, 4);
    let len = b.add(&mut body, Expression::ArrayLength(words));
    let reserved = b.u32(&mut body, panic_words);
    let room = b.add(&mut body, Expression::Binary { op: BinaryOperator::Subtract, left: len, right: reserved });
    b.f.named_expressions.insert(room, "room".into());
    let cursor = b.member(&mut body, g, 0);
    let now = b.add(&mut body, Expression::Load { pointer: cursor });
    let open = b.add(&mut body, Expression::Binary { op: BinaryOperator::Less, left: now, right: room });
    let mut accept = Block::new();
    let at = b.atomic_add(&mut accept, cursor, n, u32_ty);
    b.f.named_expressions.insert(at, "at".into());
    let end = b.add(&mut accept, Expression::Binary { op: BinaryOperator::Add, left: at, right: n });
    let fits = b.add(&mut accept, Expression::Binary { op: BinaryOperator::LessEqual, left: end, right: room });
    let mut write = Block::new();
    let index = b.add(&mut write, Expression::Binary { op: BinaryOperator::Add, left: reserved, right: at });
    Builder::ret(&mut write, index);
    accept.push(Statement::If { condition: fits, accept: write, reject: Block::new() }, naga::Span::UNDEFINED);
    body.push(Statement::If { condition: open, accept, reject: Block::new() }, naga::Span::UNDEFINED);
    let dropped = b.member(&mut body, g, 1);
    let one = b.u32(&mut body, 1);
    b.atomic_add(&mut body, dropped, one, u32_ty);
    let none = b.u32(&mut body, NONE);
    Builder::ret(&mut body, none);
    b.f.body = body;
    b.f
}

/// ```wgsl
/// fn debug_panic() -> u32 {
///     if atomicAdd(&debug_prints.panics, 1u) == 0u { return 0u; }
///     return NONE;
/// }
/// ```
fn panic_function(g: Handle<GlobalVariable>, u32_ty: Handle<Type>) -> Function {
    let mut b = Builder {
        f: Function {
            name: Some("debug_panic".into()),
            result: Some(naga::FunctionResult { ty: u32_ty, binding: None }),
            ..Function::default()
        },
    };
    let mut body = Block::new();
    let panics = b.member(&mut body, g, 2);
    let one = b.u32(&mut body, 1);
    let before = b.atomic_add(&mut body, panics, one, u32_ty);
    let zero = b.u32(&mut body, 0);
    let first = b.add(&mut body, Expression::Binary { op: BinaryOperator::Equal, left: before, right: zero });
    let mut accept = Block::new();
    Builder::ret(&mut accept, zero);
    body.push(Statement::If { condition: first, accept, reject: Block::new() }, naga::Span::UNDEFINED);
    let none = b.u32(&mut body, NONE);
    Builder::ret(&mut body, none);
    b.f.body = body;
    b.f
}

impl FnLowerer<'_> {
    /// The entry point's start: its global id for the helpers' records.
    pub(super) fn debug_prologue(&mut self) {
        let Some(gid_var) = self.mb.debug.as_ref().and_then(|d| d.gid) else { return };
        let span = self.hir.span;
        let Some(gid) = self.builtins.get(&onekernel_abi::Builtin::GlobalId).copied() else {
            self.errors.push(crate::diagnostic::Diagnostic::new(
                span,
                "internal compiler error: a kernel whose helpers print has no global id",
            ));
            return;
        };
        let pointer = self.add(Expression::GlobalVariable(gid_var), span);
        self.stmt(Statement::Store { pointer, value: gid }, span);
    }

    /// After a call of the helper `name`: if it panicked, this function
    /// returns too (`if debug_panicked { return; }`).
    pub(super) fn after_helper_call(&mut self, name: &str, span: proc_macro2::Span) {
        let Some(panicked) =
            self.mb.debug.as_ref().filter(|d| d.panicking_helpers.contains(name)).and_then(|d| d.panicked)
        else {
            return;
        };
        let pointer = self.add(Expression::GlobalVariable(panicked), span);
        let condition = self.add(Expression::Load { pointer }, span);
        let accept = self.nested(|l| l.return_after_panic(false, span));
        self.stmt(Statement::If { condition, accept, reject: Block::new() }, span);
    }

    /// Ends the function after a panic: the entry point returns; a helper
    /// sets `debug_panicked` (`set`: its own panic, not a callee's) and
    /// returns a zero value.
    fn return_after_panic(&mut self, set: bool, span: proc_macro2::Span) {
        if !self.in_helper {
            self.stmt(Statement::Return { value: None }, span);
            return;
        }
        if let Some(panicked) = self.mb.debug.as_ref().and_then(|d| d.panicked).filter(|_| set) {
            let pointer = self.add(Expression::GlobalVariable(panicked), span);
            let value = self.literal(Literal::Bool(true), span);
            self.stmt(Statement::Store { pointer, value }, span);
        }
        let value = match self.hir.ret {
            Ty::Unit | Ty::Never => None,
            ret => {
                let ty = self.mb.ty(ret);
                Some(self.add(Expression::ZeroValue(ty), span))
            }
        };
        self.stmt(Statement::Return { value }, span);
    }

    /// A debug call site (see the module docs).
    pub(super) fn debug(&mut self, call: &DebugCall, span: proc_macro2::Span) -> Option<Handle<Expression>> {
        let Some(buffer) = self.mb.debug.as_ref().map(|d| (d.global, d.reserve, d.panic)) else {
            self.errors.push(crate::diagnostic::Diagnostic::new(
                span,
                "internal compiler error: a debug site without a print buffer",
            ));
            return None;
        };
        if call.debug_only {
            // `if debug_prints.debug_assertions != 0u { .. }`
            let g = self.add(Expression::GlobalVariable(buffer.0), span);
            let flag = self.add(Expression::AccessIndex { base: g, index: 3 }, span);
            let flag = self.add(Expression::Load { pointer: flag }, span);
            let zero = self.literal(Literal::U32(0), span);
            let on = self.add(Expression::Binary { op: BinaryOperator::NotEqual, left: flag, right: zero }, span);
            let accept = self.nested(|l| {
                l.debug_site(call, buffer, span);
            });
            self.stmt(Statement::If { condition: on, accept, reject: Block::new() }, span);
            return None;
        }
        self.debug_site(call, buffer, span);
        None
    }

    fn debug_site(
        &mut self,
        call: &DebugCall,
        (global, reserve, panic): (Handle<GlobalVariable>, Option<Handle<Function>>, Option<Handle<Function>>),
        span: proc_macro2::Span,
    ) -> Option<()> {
        match call.kind {
            DebugKind::Print { .. } => {
                // A kernel with a print has the reserve function.
                let reserve = reserve?;
                let words = self.record(call, &call.args, span)?;
                self.write_record(global, reserve, words, span);
            }
            DebugKind::Panic | DebugKind::Unreachable | DebugKind::Todo | DebugKind::Unimplemented => {
                // A kernel with a panicking site has the panic function.
                let panic = panic?;
                let words = self.record(call, &call.args, span)?;
                self.write_record(global, panic, words, span);
                self.return_after_panic(true, span);
                self.dead = true;
            }
            DebugKind::Assert | DebugKind::AssertEq | DebugKind::AssertNe => {
                let panic = panic?;
                let failed = match call.cond {
                    Some(c) => {
                        let c = self.expr(c)?;
                        self.add(Expression::Unary { op: naga::UnaryOperator::LogicalNot, expr: c }, span)
                    }
                    None => {
                        let (l, r) = (call.args[0].1, call.args[1].1);
                        let (lt, rt) = (self.ty_of(l), self.ty_of(r));
                        let left = self.expr(l)?;
                        let right = self.expr(r)?;
                        // The values compared are the values printed: the
                        // record reads the same handles.
                        self.debug_values = vec![left, right];
                        let op = if call.kind == DebugKind::AssertEq { BinOp::Ne } else { BinOp::Eq };
                        self.binary(op, left, lt, right, rt, span)
                    }
                };
                let accept = self.nested(|l| {
                    if let Some(words) = l.record(call, &call.args, span) {
                        l.write_record(global, panic, words, span);
                        l.return_after_panic(true, span);
                    }
                });
                self.debug_values.clear();
                self.stmt(Statement::If { condition: failed, accept, reject: Block::new() }, span);
            }
        }
        Some(())
    }

    /// The words of a record: the site, the global id and the arguments'
    /// bits (the leading ones of `assert_eq!` already evaluated).
    fn record(
        &mut self,
        call: &DebugCall,
        args: &[(Option<String>, crate::hir::ExprId)],
        span: proc_macro2::Span,
    ) -> Option<Vec<Handle<Expression>>> {
        let base = self.mb.debug.as_ref().map_or(0, |d| d.site_base);
        let mut words = vec![self.literal(Literal::U32(base + call.site), span)];
        let gid = match (self.in_helper, self.mb.debug.as_ref().and_then(|d| d.gid)) {
            (true, Some(gid)) => {
                let pointer = self.add(Expression::GlobalVariable(gid), span);
                self.add(Expression::Load { pointer }, span)
            }
            _ => self.builtins.get(&onekernel_abi::Builtin::GlobalId).copied()?,
        };
        for axis in 0..3 {
            words.push(self.add(Expression::AccessIndex { base: gid, index: axis }, span));
        }
        let leading = call.kind.leading_args();
        for (i, (_, a)) in args.iter().enumerate() {
            let ty = self.ty_of(*a);
            let v = match self.debug_values.get(i) {
                Some(v) if i < leading => *v,
                _ => self.expr(*a)?,
            };
            self.words_of(v, ty, &mut words, span);
        }
        Some(words)
    }

    /// `let at = f(len); if at != NONE { words[at + k] = word_k; }`.
    fn write_record(
        &mut self,
        global: Handle<GlobalVariable>,
        function: Handle<Function>,
        words: Vec<Handle<Expression>>,
        span: proc_macro2::Span,
    ) {
        let len = self.literal(Literal::U32(words.len() as u32), span);
        let args = if self.mb.debug.as_ref().is_some_and(|d| d.reserve == Some(function)) { vec![len] } else { vec![] };
        let Some(at) = self.call(function, args, true, span) else { return };
        let none = self.literal(Literal::U32(NONE), span);
        let got = self.add(Expression::Binary { op: BinaryOperator::NotEqual, left: at, right: none }, span);
        let accept = self.nested(|l| {
            let g = l.add(Expression::GlobalVariable(global), span);
            let array = l.add(Expression::AccessIndex { base: g, index: 4 }, span);
            for (k, w) in words.iter().enumerate() {
                let offset = l.literal(Literal::U32(k as u32), span);
                let index = l.add(Expression::Binary { op: BinaryOperator::Add, left: at, right: offset }, span);
                let pointer = l.add(Expression::Access { base: array, index }, span);
                l.stmt(Statement::Store { pointer, value: *w }, span);
            }
        });
        self.stmt(Statement::If { condition: got, accept, reject: Block::new() }, span);
    }

    /// The `u32` words of a value of type `ty` (see
    /// `onekernel_abi::PrintType::words`).
    fn words_of(&mut self, v: Handle<Expression>, ty: Ty, out: &mut Vec<Handle<Expression>>, span: proc_macro2::Span) {
        let bitcast =
            |l: &mut Self, v, width| l.add(Expression::As { expr: v, kind: ScalarKind::Uint, convert: width }, span);
        match ty {
            Ty::Bool => {
                let one = self.literal(Literal::U32(1), span);
                let zero = self.literal(Literal::U32(0), span);
                out.push(self.add(Expression::Select { condition: v, accept: one, reject: zero }, span));
            }
            Ty::U32 | Ty::Usize => out.push(v),
            Ty::I32 | Ty::F32 => out.push(bitcast(self, v, None)),
            Ty::F16 => {
                // As the `f32` of the same value (exact), whose bits the
                // host turns back into the `f16`: WGSL has no bit cast of
                // one `f16` to a word.
                let wide = self.add(Expression::As { expr: v, kind: ScalarKind::Float, convert: Some(4) }, span);
                out.push(bitcast(self, wide, None));
            }
            Ty::U64 | Ty::I64 | Ty::F64 => {
                let bits = if ty == Ty::U64 { v } else { bitcast(self, v, None) };
                let low = bitcast(self, bits, Some(4));
                let shift = self.literal(Literal::U32(32), span);
                let high =
                    self.add(Expression::Binary { op: BinaryOperator::ShiftRight, left: bits, right: shift }, span);
                let high = bitcast(self, high, Some(4));
                out.push(low);
                out.push(high);
            }
            Ty::Dim3 | Ty::Vector(_) => {
                let (lanes, lane) = match ty.as_vector() {
                    Some(vt) => (
                        u32::from(vt.size),
                        match vt.lane {
                            Lane::F32 => Ty::F32,
                            Lane::I32 => Ty::I32,
                            Lane::U32 => Ty::U32,
                            Lane::F16 => Ty::F16,
                        },
                    ),
                    None => (3, Ty::U32),
                };
                for i in 0..lanes {
                    let x = self.add(Expression::AccessIndex { base: v, index: i }, span);
                    self.words_of(x, lane, out, span);
                }
            }
            Ty::Compound(_) => {
                let fields: Vec<Ty> =
                    self.mb.table.as_struct(ty).map(|(_, f)| f.iter().map(|(_, t)| *t).collect()).unwrap_or_default();
                for (i, t) in fields.into_iter().enumerate() {
                    let x = self.add(Expression::AccessIndex { base: v, index: i as u32 }, span);
                    self.words_of(x, t, out, span);
                }
            }
            Ty::Tile(_) | Ty::Unit | Ty::Never => {}
        }
    }
}

/// The words of a record of the site `c`.
fn record_words(c: &DebugCall, types: &crate::infer::Types, table: &crate::types::TypeTable) -> u32 {
    print_buffer::RECORD_HEADER
        + c.args
            .iter()
            .map(|(_, a)| crate::debug::print_type(types.exprs[*a], table).map_or(0, |t| t.words()))
            .sum::<u32>()
}
