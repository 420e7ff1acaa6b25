//! Expressions.

use super::{strip, Binding, FnRole, Parser};
use crate::builtins::{self, BuiltinFn};
use crate::diagnostic::Diagnostic;
use crate::hir::*;
use crate::types::{unsupported_type_help, Ty, VecTy};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// The builtin a call's path names: `global_id` or `onekernel::global_id`
/// (any path through the `onekernel` crate). Other paths are not builtins,
/// whatever their last segment.
pub(super) fn builtin_of(path: &syn::Path) -> Option<BuiltinFn> {
    let first = path.segments.first()?;
    if path.segments.len() > 1 && first.ident != "onekernel" {
        return None;
    }
    builtins::function(&path.segments.last()?.ident.to_string())
}

/// True for a name written like a constant (`SCALE`, `TILE_SIZE`).
pub(crate) fn looks_like_const(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_ascii_lowercase())
}

impl Parser<'_> {
    /// Recognises one expression.
    pub(super) fn expr(&mut self, e: &syn::Expr) -> ExprId {
        let span = e.span();
        match e {
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Lit(l) => self.lit(&l.lit),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Field(f) => self.field(f),
            syn::Expr::Index(ix) => self.index(e, ix),
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ if self.is_rejected(&u.expr) => return self.already_reported(span),
                    _ => {
                        return self.error(
                            u.op.span(),
                            "dereferencing is not supported in a kernel",
                            Some("kernels work with values: remove the `*`"),
                        )
                    }
                };
                let x = self.expr(&u.expr);
                if self.is_error(x) {
                    return x;
                }
                self.push(ExprKind::Unary(op, x), span)
            }
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Assign(a) => {
                let place = self.place(&a.left);
                let value = self.expr(&a.right);
                let name_span = root_name_span(&a.left);
                match place {
                    Some(place) => self.push(ExprKind::Assign { place, op: None, value, name_span }, span),
                    None => self.already_reported(span),
                }
            }
            syn::Expr::Cast(c) => {
                let x = self.expr(&c.expr);
                match self.scalar_type(&c.ty) {
                    Some(t) if t.is_scalar() => self.push(ExprKind::Cast(x, t), span),
                    Some(t) => self.error(c.ty.span(), format!("cannot cast to `{t}`"), None),
                    None => self.already_reported(span),
                }
            }
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    return self.error(
                        l.span(),
                        "labelled blocks are not supported in a kernel",
                        Some("use a labelled `loop` that ends in `break`: `'a: loop { ...; break 'a; }`"),
                    );
                }
                let block = self.block(&b.block);
                self.push(ExprKind::Block(block), span)
            }
            syn::Expr::Unsafe(u) => self.error(
                u.unsafe_token.span(),
                "`unsafe` is not allowed in a kernel",
                Some("kernels are safe Rust; remove the `unsafe` block"),
            ),
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::While(w) => {
                if let syn::Expr::Let(l) = &*w.cond {
                    return self.error(
                        l.span(),
                        "`while let` is not supported in a kernel",
                        Some("patterns are not supported; loop over indices instead, e.g. `for j in 0..a.len() { ... a[j] ... }`"),
                    );
                }
                let label = label_of(w.label.as_ref());
                let cond = self.expr(&w.cond);
                let body = self.loop_body(&label, &w.body);
                self.push(ExprKind::Loop { label, kind: LoopKind::While { cond }, body }, span)
            }
            syn::Expr::Loop(l) => {
                let label = label_of(l.label.as_ref());
                let body = self.loop_body(&label, &l.body);
                self.push(ExprKind::Loop { label, kind: LoopKind::Loop, body }, span)
            }
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => {
                let label = b.label.as_ref().map(|l| Label { name: l.to_string(), span: l.span() });
                if !self.check_label(label.as_ref()) {
                    return self.left_to_rustc(span);
                }
                let value = b.expr.as_ref().map(|v| self.expr(v));
                self.push(ExprKind::Break { label, value }, span)
            }
            syn::Expr::Continue(c) => {
                let label = c.label.as_ref().map(|l| Label { name: l.to_string(), span: l.span() });
                if !self.check_label(label.as_ref()) {
                    return self.left_to_rustc(span);
                }
                self.push(ExprKind::Continue { label }, span)
            }
            syn::Expr::Return(r) => {
                let value = r.expr.as_ref().map(|v| self.expr(v));
                if value.is_some() && self.role == FnRole::Kernel {
                    return self.error(
                        span,
                        "a kernel cannot return a value",
                        Some("write the value into a `&mut [T]` parameter, then `return;`"),
                    );
                }
                self.push(ExprKind::Return(value), span)
            }
            syn::Expr::Macro(m) => match self.debug_macro(&m.mac) {
                Some(id) => id,
                None => self.macro_error(&m.mac),
            },
            syn::Expr::Closure(_) => self.error(
                span,
                "closures are not supported in a kernel",
                Some("write a `#[helper]` function and call it"),
            ),
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::Tuple(t) if t.elems.len() >= 2 => {
                let elems = t.elems.iter().map(|e| self.expr(e)).collect();
                self.push(ExprKind::Tuple(elems), span)
            }
            syn::Expr::Tuple(_) => self.error(
                span,
                "tuples of fewer than two values are not supported in a kernel",
                Some("use the value itself"),
            ),
            syn::Expr::Array(a) if !a.elems.is_empty() => {
                let elems = a.elems.iter().map(|e| self.expr(e)).collect();
                self.push(ExprKind::Array(elems), span)
            }
            syn::Expr::Array(_) => {
                self.error(span, "an array in a kernel has at least one element", Some("write `[0.0f32; 4]`"))
            }
            syn::Expr::Repeat(r) => {
                let value = self.expr(&r.expr);
                match self.array_len(&r.len) {
                    Some(len) => {
                        // Elements through nested repeats: `[[0.0; N]; M]`.
                        let mut elements = self.types.len_elements(len);
                        let mut inner = value;
                        while let ExprKind::Repeat(v, n) = self.f.exprs[inner].kind {
                            elements = elements.saturating_mul(self.types.len_elements(n));
                            inner = v;
                        }
                        match self.check_array_size(elements, r.len.span()) {
                            Some(()) => self.push(ExprKind::Repeat(value, len), span),
                            None => self.already_reported(span),
                        }
                    }
                    None => self.already_reported(span),
                }
            }
            syn::Expr::Reference(_) => self.error(
                span,
                "references are not supported in a kernel",
                Some("use the value itself: scalars are copied"),
            ),
            syn::Expr::Struct(lit) => self.struct_lit(lit),
            syn::Expr::Range(_) => {
                self.error(span, "ranges can only be used in `for` loops", Some("write `for i in a..b { ... }`"))
            }
            syn::Expr::Let(_) => self.error(
                span,
                "`if let` is not supported in a kernel",
                Some("patterns are not supported; test a condition instead, e.g. `if i < a.len() { ... a[i] ... }`"),
            ),
            syn::Expr::Async(_) | syn::Expr::Await(_) => self.error(span, "`async` is not supported in a kernel", None),
            syn::Expr::Try(_) | syn::Expr::TryBlock(_) => self.error(
                span,
                "`?` is not supported in a kernel",
                Some("kernels have no `Result`; use `if` and `return`"),
            ),
            _ => self.error(
                span,
                "this expression is not supported in a kernel",
                Some("see docs/supported-rust.md for the subset"),
            ),
        }
    }

    fn lit(&mut self, lit: &syn::Lit) -> ExprId {
        let span = lit.span();
        match lit {
            syn::Lit::Int(i) => {
                let ty = match i.suffix() {
                    "" => None,
                    // `1f32`, `2f64`: float literals written without a point.
                    s @ ("f32" | "f64") => {
                        let v = float_lit(i.base10_digits()).unwrap_or(FloatLit::exact(0.0));
                        return self.push(ExprKind::Lit(Lit::Float(v, Ty::from_name(s))), span);
                    }
                    s => match Ty::from_name(s).filter(|t| t.is_integer()) {
                        Some(t) => Some(t),
                        None => {
                            let help = unsupported_type_help(s)
                                .unwrap_or("use an `i32`, `u32`, `usize`, `i64` or `u64` literal");
                            return self.error(
                                span,
                                format!("`{s}` literals are not supported in a kernel"),
                                Some(help),
                            );
                        }
                    },
                };
                match i.base10_parse::<u128>() {
                    Ok(v) => self.push(ExprKind::Lit(Lit::Int(v, ty)), span),
                    Err(_) => self.error(span, "integer literal is too large", None),
                }
            }
            syn::Lit::Float(fl) => {
                let ty = match fl.suffix() {
                    "" => None,
                    "f32" => Some(Ty::F32),
                    "f64" => Some(Ty::F64),
                    s => {
                        let help = unsupported_type_help(s).unwrap_or("write an `f32` literal such as `1.0f32`");
                        return self.error(span, format!("`{s}` literals are not supported in a kernel"), Some(help));
                    }
                };
                match float_lit(fl.base10_digits()) {
                    Some(v) => self.push(ExprKind::Lit(Lit::Float(v, ty)), span),
                    None => self.error(span, "malformed float literal", None),
                }
            }
            syn::Lit::Bool(b) => self.push(ExprKind::Lit(Lit::Bool(b.value)), span),
            _ => self.error(
                span,
                "only numeric and `bool` literals are supported in a kernel",
                Some("kernels compute with numbers"),
            ),
        }
    }

    fn path_expr(&mut self, p: &syn::ExprPath) -> ExprId {
        let span = p.span();
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 1 && p.qself.is_none() {
            let name = &segs[0];
            return match self.lookup_or_module_const(name) {
                Some(Binding::Local(id)) => self.push(ExprKind::Local(id), span),
                Some(Binding::Param(id)) if !self.f.params[id].kind.is_buffer() => self.push(ExprKind::Param(id), span),
                Some(Binding::Param(_)) => self.error(
                    span,
                    format!("the buffer `{name}` can only be indexed or measured here"),
                    Some(&format!("write `{name}[i]` or `{name}.len()`")),
                ),
                Some(Binding::Rejected) => self.already_reported(span),
                Some(Binding::Const(id)) => self.push(ExprKind::ConstRef(id), span),
                Some(Binding::Override(i)) => self.push(ExprKind::Override(i), span),
                Some(Binding::Shared(_)) => self.error(
                    span,
                    format!("the shared array `{name}` can only be indexed or measured here"),
                    Some(&format!("write `{name}[i]` or `{name}.len()`")),
                ),
                None if builtin_of(&p.path).is_some() => {
                    self.error(span, format!("`{name}` is a function"), Some(&format!("call it: `{name}()`")))
                }
                // A constant of the kernel's Rust scope: the launch supplies
                // its value (a helper's body is lowered on its own, so it
                // still sees only its own).
                None if looks_like_const(name) && self.role == FnRole::Kernel => {
                    let i = self.scope_constant(name, span);
                    self.push(ExprKind::Override(i), span)
                }
                None if looks_like_const(name) => self.outside_constant(name, span),
                // rustc reports unknown names itself, with suggestions.
                None => self.left_to_rustc(span),
            };
        }
        if let [.., ty, name] = &segs[..] {
            if let Some(vt) = VecTy::from_name(ty) {
                return match builtins::vector_const(vt, name) {
                    Some(bits) => self.push(
                        ExprKind::Vector { ty: vt, ctor: VecCtor::Const(bits), args: Vec::new(), callee: p.path.clone() },
                        span,
                    ),
                    None if !vt.is_glam() => self.error(
                        span,
                        format!("`{}` is not supported in a kernel", segs.join("::")),
                        Some(&format!("`{ty}` has the constants `{ty}::ZERO` and `{ty}::ONE`; write others with `{ty}::splat(..)` or `{ty}::new(..)`")),
                    ),
                    None => self.error(
                        span,
                        format!("`{}` is not supported in a kernel", segs.join("::")),
                        Some(&format!(
                            "kernels know `{ty}::ZERO`, `ONE`, `X`, `Y`, ... (each lane the vector has), `NEG_ONE`/`NEG_X`/... for signed lanes, `MIN` and `MAX`"
                        )),
                    ),
                };
            }
        }
        // `T::ZERO` in a generic kernel: the constant of the instantiation's
        // type (`onekernel::num::Num`'s associated constants).
        if let ([param, name], Some((generic, ty))) = (&segs[..], &self.instance) {
            if param == generic {
                let ty = *ty;
                return match builtins::element_const(ty, name) {
                    Some(c) => self.push(ExprKind::Const(c), span),
                    None => self.error(
                        span,
                        format!("`{}` is not supported in a kernel", segs.join("::")),
                        Some(&format!(
                            "a generic kernel knows `{param}::ZERO`, `{param}::ONE`, `{param}::MIN` and `{param}::MAX`"
                        )),
                    ),
                };
            }
        }
        match builtins::named_const(&segs) {
            Some(c) => self.push(ExprKind::Const(c), span),
            None => {
                let help = if segs.last().is_some_and(|s| s == "MAX" || s == "MIN") && segs.iter().any(|s| s == "usize")
                {
                    "`usize` is 32 bits on the GPU but 64 on the CPU; use `u32::MAX`"
                } else {
                    "kernels know `f32::MAX/MIN/EPSILON/INFINITY/NEG_INFINITY/NAN`, `i32::MAX/MIN`, `u32::MAX/MIN` and `std::f32::consts::*`"
                };
                self.error(span, format!("`{}` is not supported in a kernel", segs.join("::")), Some(help))
            }
        }
    }

    /// A constant defined outside the kernel (`SCALE`): the compiler only
    /// sees the kernel's own tokens. Reported once per name.
    fn outside_constant(&mut self, name: &str, span: Span) -> ExprId {
        self.scopes[0].insert(name.to_string(), Binding::Rejected);
        self.error(
            span,
            format!("the kernel cannot see `{name}`: a `#[kernel]` alone sees only its own body"),
            Some(&format!(
                "put the kernel and `const {name}` in one `#[onekernel::kernels] mod`, which shows its kernels its constants and structs; or define `{name}` inside the kernel's body"
            )),
        )
    }

    /// A constant of the kernel's Rust scope (`BLOCK`, defined beside the
    /// kernel or imported): an override the launch sets to its value,
    /// declared at its first use (its type is inferred from its uses).
    pub(super) fn scope_constant(&mut self, name: &str, span: Span) -> usize {
        let index = self.f.overrides.len();
        self.f.overrides.push(crate::hir::OverrideDecl {
            name: name.to_string(),
            ty: None,
            span,
            generic: false,
            any_int: false,
        });
        self.scopes[0].insert(name.to_string(), Binding::Override(index));
        index
    }

    /// `Name { a: x, b }`: a value of a struct of the kernel's module.
    fn struct_lit(&mut self, lit: &syn::ExprStruct) -> ExprId {
        let span = lit.span();
        if let Some(rest) = &lit.rest {
            return self.error(
                rest.span(),
                "`..base` in a struct literal is not supported in a kernel",
                Some("write every field: `Name { a: base.a, b: x }`, or copy the struct and assign the field: `let mut p = base; p.b = x;`"),
            );
        }
        let name = match lit.path.segments.last() {
            Some(s) if lit.qself.is_none() => s.ident.to_string(),
            _ => return self.left_to_rustc(span),
        };
        let Some(ty) = self.types.struct_named(&name) else {
            return self.error(
                lit.path.span(),
                format!("the kernel cannot see the struct `{name}`"),
                Some(&format!(
                    "declare `{name}` in the same `#[onekernel::kernels] mod` as the kernel, which shows the kernel its structs and constants"
                )),
            );
        };
        let mut fields = Vec::new();
        for fv in &lit.fields {
            let value = self.expr(&fv.expr);
            let field = match &fv.member {
                syn::Member::Named(n) => n.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            match self.types.struct_field(ty, &field) {
                Some((index, _)) => fields.push((index, value)),
                // rustc: "struct has no field named ...".
                None => return self.left_to_rustc(fv.member.span()),
            }
        }
        if fields.iter().any(|(_, v)| self.is_error(*v)) {
            return self.already_reported(span);
        }
        self.push(ExprKind::StructLit { ty, fields }, span)
    }

    fn field(&mut self, f: &syn::ExprField) -> ExprId {
        let span = f.span();
        let base = self.expr(&f.base);
        if self.is_error(base) {
            return base;
        }
        let axis = match &f.member {
            syn::Member::Named(id) if id == "x" => 0,
            syn::Member::Named(id) if id == "y" => 1,
            syn::Member::Named(id) if id == "z" => 2,
            // A vector's fourth lane (or a struct's field `w`).
            syn::Member::Named(id) if id == "w" => 3,
            syn::Member::Unnamed(i) => return self.push(ExprKind::Field(base, i.index), span),
            // A struct's field, resolved by the base's type; rustc reports
            // a field that does not exist.
            syn::Member::Named(id) => return self.push(ExprKind::NamedField(base, id.to_string()), span),
        };
        self.push(ExprKind::Axis(base, axis), span)
    }

    fn index(&mut self, e: &syn::Expr, ix: &syn::ExprIndex) -> ExprId {
        let span = e.span();
        if let Some(read) = self.shared_read(e) {
            return read;
        }
        match self.buffer_of(&ix.expr) {
            Some(buffer) if matches!(self.f.params[buffer].kind, ParamKind::Atomics { .. }) => {
                let name = self.f.params[buffer].name.clone();
                self.error(
                    span,
                    format!("`{name}` holds atomics"),
                    Some("use an atomic method: `.load(Ordering::Relaxed)`, `.fetch_add(v, Ordering::Relaxed)`, ..."),
                )
            }
            Some(buffer) => {
                let index = self.expr(&ix.index);
                self.push(ExprKind::Index { buffer, index }, span)
            }
            None if self.is_rejected(&ix.expr) => self.already_reported(span),
            None => match strip(&ix.expr) {
                syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Deref(_), .. }) => self.error(
                    ix.expr.span(),
                    "dereferencing is not supported in a kernel",
                    Some("index the buffer itself: `a[i]`"),
                ),
                _ => {
                    // An array value: a local, an element of one, a call's
                    // result; inference checks that it is an array.
                    let base = self.expr(&ix.expr);
                    if self.is_error(base) {
                        return base;
                    }
                    let index = self.expr(&ix.index);
                    self.push(ExprKind::Element { base, index }, span)
                }
            },
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> ExprId {
        let span = c.span();
        let syn::Expr::Path(p) = strip(&c.func) else {
            return self.error(c.func.span(), "only named functions can be called in a kernel", None);
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let name = segs.last().cloned().unwrap_or_default();
        if let Some(e) = self.tile_call(c, &p.path) {
            return e;
        }
        match builtin_of(&p.path) {
            Some(BuiltinFn::Value(builtin)) => {
                if !c.args.is_empty() {
                    return self.error(c.args.span(), format!("`{name}()` takes no arguments"), None);
                }
                if self.role == FnRole::Helper {
                    return self.error(
                        span,
                        format!("`{name}()` can only be called in a kernel's body"),
                        Some("pass the value to the helper as a parameter"),
                    );
                }
                return self.push(ExprKind::Builtin { builtin, callee: p.path.clone() }, span);
            }
            Some(BuiltinFn::Barrier(kind)) => return self.barrier(kind, c, &p.path),
            Some(BuiltinFn::Subgroup(op)) => return self.subgroup(op, c, &p.path),
            Some(BuiltinFn::UniformLoad) => return self.uniform_load(c, &p.path),
            Some(BuiltinFn::Shared) => {
                return self.error(
                    span,
                    "`shared::<..>()` declares shared memory: bind it with `let` at the top of the kernel",
                    Some("write `let tile = shared::<[f32; 256]>();`"),
                )
            }
            None => {}
        }
        if let Some(v) = self.vector_ctor(&p.path, &segs, c) {
            return v;
        }
        // `Vec4::dot(a, b)`: the method, with its receiver first.
        if let [.., ty, method] = &segs[..] {
            if let (Some(vt), Some(op)) = (VecTy::from_name(ty), builtins::math_method(method)) {
                let mut args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
                if args.len() != op.arity() || args.iter().any(|a| self.is_error(*a)) {
                    return self.left_to_rustc(span);
                }
                // `F16Vec4::from_vec4(v)` takes the `f32` vector: typed so
                // (a `Vec4::from_vec4(v)` stays untyped, and rustc rejects it).
                let from = match op {
                    MathOp::FromVec2 => Some(2),
                    MathOp::FromVec4 => Some(4),
                    _ => None,
                };
                if let Some(size) = from.filter(|n| !vt.is_glam() && vt.size == *n) {
                    let glam = Ty::Vector(VecTy { lane: crate::types::Lane::F32, size, aligned: false });
                    args[0] = self.push(ExprKind::Typed(args[0], glam), self.f.exprs[args[0]].span);
                }
                return self.push(ExprKind::Math(op, args), span);
            }
        }
        if segs.len() == 1 {
            return self.helper_call(&name, c);
        }
        // `f32::sqrt(x)`, `f32::max(a, b)`: the method on a type path
        // (`half::f16::from_f32(x)` too).
        let type_path = segs.len() == 2 || (segs.len() == 3 && segs[1] == "f16");
        if type_path {
            let ty_seg = &segs[segs.len() - 2];
            let segs = &segs[segs.len() - 2..];
            let ty = if segs.len() == 2 { self.named_ty(ty_seg) } else { Ty::from_name(ty_seg) };
            if let Some(ty) = ty.filter(|t| t.is_numeric()) {
                if let Some(op) = builtins::math_method(&segs[1]) {
                    let mut args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
                    if args.len() != op.arity() {
                        return self.error(
                            span,
                            format!("`{}` takes {} argument(s)", segs.join("::"), op.arity()),
                            None,
                        );
                    }
                    // `f32::sqrt(x)` pins the receiver's type, as rustc does;
                    // `f32::from_bits(x)` takes the bits (a `u32`, a `u64`
                    // for `f64`), `f16::from_f32(x)` an `f32`.
                    let receiver_span = self.f.exprs[args[0]].span;
                    let receiver_ty = match op {
                        MathOp::FromBits if ty == Ty::F64 => Ty::U64,
                        MathOp::FromBits => Ty::U32,
                        MathOp::F16FromF32 => Ty::F32,
                        MathOp::F16FromF64 => Ty::F64,
                        _ => ty,
                    };
                    args[0] = self.push(ExprKind::Typed(args[0], receiver_ty), receiver_span);
                    return self.push(ExprKind::Math(op, args), span);
                }
                // `u32::from(flag)`, `f32::from(h)`: a lossless conversion.
                if segs[1] == "from" && c.args.len() == 1 {
                    let x = self.expr(&c.args[0]);
                    return self.push(ExprKind::Convert(x, ty), span);
                }
            }
        }
        // `std::cmp::min(a, b)`, `cmp::max(a, b)`: the methods.
        let cmp =
            matches!(segs.iter().map(String::as_str).collect::<Vec<_>>()[..], ["std" | "core", "cmp", _] | ["cmp", _]);
        if cmp && c.args.len() == 2 {
            let op = match name.as_str() {
                "min" => Some(MathOp::Min),
                "max" => Some(MathOp::Max),
                _ => None,
            };
            if let Some(op) = op {
                let args = c.args.iter().map(|a| self.expr(a)).collect();
                return self.push(ExprKind::Math(op, args), span);
            }
        }
        if let Some(help) = segs.first().and_then(|s| unsupported_type_help(s)) {
            return self.error(span, format!("`{}` cannot be called in a kernel", segs.join("::")), Some(help));
        }
        self.error(
            span,
            format!("`{}` cannot be called in a kernel", segs.join("::")),
            Some("kernels can call the math methods (`x.sqrt()`), thread indexing (`global_id()`) and `#[helper]` functions"),
        )
    }

    /// `Vec4::new(..)`, `Vec4::splat(x)`, `vec4(..)` (any path through
    /// glam or onekernel's re-export of it); None for other calls.
    fn vector_ctor(&mut self, path: &syn::Path, segs: &[String], c: &syn::ExprCall) -> Option<ExprId> {
        let span = c.span();
        let (ty, ctor) = match segs {
            [.., ty, f] if f == "new" || f == "splat" => {
                (VecTy::from_name(ty)?, if f == "new" { VecCtor::New } else { VecCtor::Splat })
            }
            // `vec4(..)`, unless the name is a local or a parameter.
            [.., f] if self.lookup(f).is_none() => (VecTy::from_fn_name(f)?, VecCtor::New),
            _ => return None,
        };
        let want = if ctor == VecCtor::Splat { 1 } else { usize::from(ty.size) };
        if c.args.len() != want {
            // rustc: "this function takes N arguments".
            return Some(self.left_to_rustc(span));
        }
        let args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
        if args.iter().any(|a| self.is_error(*a)) {
            return Some(self.already_reported(span));
        }
        Some(self.push(ExprKind::Vector { ty, ctor, args, callee: path.clone() }, span))
    }

    /// `name(args)`: a call of a `#[helper]` function.
    fn helper_call(&mut self, name: &str, c: &syn::ExprCall) -> ExprId {
        let span = c.span();
        // `min(a, b)` with `use std::cmp::min;`.
        if (name == "min" || name == "max") && c.args.len() == 2 && self.lookup(name).is_none() {
            let op = if name == "min" { MathOp::Min } else { MathOp::Max };
            let args = c.args.iter().map(|a| self.expr(a)).collect();
            return self.push(ExprKind::Math(op, args), span);
        }
        match self.lookup(name) {
            Some(Binding::Rejected) => return self.already_reported(span),
            Some(_) => return self.error(span, format!("`{name}` is a value, not a function"), None),
            None => {}
        }
        let not_here = match name {
            "Some" | "None" | "Ok" | "Err" => Some("kernels have no `Option` or `Result`; use a `bool` flag"),
            "drop" => Some("values are dropped at the end of their scope; remove the call"),
            "Box" | "Vec" | "String" => Some("a kernel cannot allocate"),
            _ => None,
        };
        if let Some(h) = not_here {
            return self.error(span, format!("`{name}` is not supported in a kernel"), Some(h));
        }
        if name == self.f.name {
            return self.error(
                span,
                format!("recursion is not supported: `{name}` calls itself"),
                Some("GPUs have no call stack; rewrite it as a loop"),
            );
        }
        let mut args = Vec::new();
        for a in &c.args {
            // Reported once the callee is known: see `Function::buffer_args`.
            args.push(match self.buffer_of(a) {
                Some(_) => {
                    self.f.buffer_args.push(a.span());
                    self.already_reported(a.span())
                }
                None => self.expr(a),
            });
        }
        if !self.f.calls.iter().any(|c| c.name == name) {
            self.f.calls.push(CallSite { name: name.to_string(), span });
        }
        self.push(ExprKind::Call { name: name.to_string(), args }, span)
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> ExprId {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            return self.error(m.turbofish.span(), "turbofish is not supported in a kernel", None);
        }
        if let Some(e) = self.tile_store(m) {
            return e;
        }
        if let Some(e) = self.atomic_call(m) {
            return e;
        }
        if name == "len" || name == "is_empty" {
            if let Some(b) = self.buffer_of(&m.receiver) {
                let len = self.push(ExprKind::Len(b), span);
                if name == "len" {
                    return len;
                }
                let zero = self.push(ExprKind::Lit(Lit::Int(0, Some(Ty::Usize))), span);
                return self.push(ExprKind::Binary(BinOp::Eq, len, zero), span);
            }
            if let syn::Expr::Path(p) = strip(&m.receiver) {
                if let Some(Binding::Shared(id)) = p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                    let n = self.f.shared[id].dims[0];
                    if let (Some(sym), "len") = (self.types.symbol(n), name.as_str()) {
                        let over = sym.over;
                        return self.push(ExprKind::Override(over), span);
                    }
                    // A length the launch sets is at least 1 (the launch checks).
                    let v = if name == "len" { Lit::Int(u128::from(n), Some(Ty::Usize)) } else { Lit::Bool(n == 0) };
                    return self.push(ExprKind::Lit(v), span);
                }
            }
        }
        if self.is_rejected(&m.receiver) {
            return self.already_reported(span);
        }
        if let Some(lanes) = builtins::swizzle(&name, 4).filter(|_| m.args.is_empty()) {
            // `v.xy()`: inference checks that `v` is a vector with those lanes.
            let base = self.expr(&m.receiver);
            if self.is_error(base) {
                return base;
            }
            return self.push(ExprKind::Swizzle(base, lanes), span);
        }
        if name == "len" && m.args.is_empty() {
            // An array value's length (inference checks it is an array).
            let base = self.expr(&m.receiver);
            return self.push(ExprKind::ArrayLen(base), span);
        }
        let Some(op) = builtins::math_method(&name) else {
            if let Some(b) = self.buffer_of(&m.receiver) {
                let buffer = self.f.params[b].name.clone();
                return self.error(
                    m.method.span(),
                    format!("the method `{name}` is not supported on a buffer"),
                    Some(&format!(
                        "buffers have `len()` and `is_empty()`; loop over the indices instead: `for j in 0..{buffer}.len() {{ ... {buffer}[j] ... }}`"
                    )),
                );
            }
            // `a.iter().sum()`: report the first unsupported call of the chain only.
            if matches!(strip(&m.receiver), syn::Expr::MethodCall(_)) {
                let receiver = self.expr(&m.receiver);
                if self.is_error(receiver) {
                    return receiver;
                }
            }
            let help = builtins::suggest_method(&name);
            return self.error(
                m.method.span(),
                format!("the method `{name}` is not supported in a kernel"),
                Some(&help),
            );
        };
        let mut args = vec![self.expr(&m.receiver)];
        args.extend(m.args.iter().map(|a| self.expr(a)));
        if args.len() != op.arity() {
            return self.error(span, format!("`{name}` takes {} argument(s)", op.arity() - 1), None);
        }
        self.push(ExprKind::Math(op, args), span)
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> ExprId {
        use syn::BinOp as B;
        let span = b.span();
        let compound = match b.op {
            B::AddAssign(_) => Some(BinOp::Add),
            B::SubAssign(_) => Some(BinOp::Sub),
            B::MulAssign(_) => Some(BinOp::Mul),
            B::DivAssign(_) => Some(BinOp::Div),
            B::RemAssign(_) => Some(BinOp::Rem),
            B::BitAndAssign(_) => Some(BinOp::BitAnd),
            B::BitOrAssign(_) => Some(BinOp::BitOr),
            B::BitXorAssign(_) => Some(BinOp::BitXor),
            B::ShlAssign(_) => Some(BinOp::Shl),
            B::ShrAssign(_) => Some(BinOp::Shr),
            _ => None,
        };
        if let Some(op) = compound {
            let place = self.place(&b.left);
            let value = self.expr(&b.right);
            let name_span = root_name_span(&b.left);
            return match place {
                Some(place) => self.push(ExprKind::Assign { place, op: Some(op), value, name_span }, span),
                None => self.already_reported(span),
            };
        }
        let left = self.expr(&b.left);
        let right = self.expr(&b.right);
        let kind = match b.op {
            B::And(_) => ExprKind::Logical(LogicOp::And, left, right),
            B::Or(_) => ExprKind::Logical(LogicOp::Or, left, right),
            op => {
                let op = match op {
                    B::Add(_) => BinOp::Add,
                    B::Sub(_) => BinOp::Sub,
                    B::Mul(_) => BinOp::Mul,
                    B::Div(_) => BinOp::Div,
                    B::Rem(_) => BinOp::Rem,
                    B::BitAnd(_) => BinOp::BitAnd,
                    B::BitOr(_) => BinOp::BitOr,
                    B::BitXor(_) => BinOp::BitXor,
                    B::Shl(_) => BinOp::Shl,
                    B::Shr(_) => BinOp::Shr,
                    B::Eq(_) => BinOp::Eq,
                    B::Ne(_) => BinOp::Ne,
                    B::Lt(_) => BinOp::Lt,
                    B::Le(_) => BinOp::Le,
                    B::Gt(_) => BinOp::Gt,
                    B::Ge(_) => BinOp::Ge,
                    _ => return self.error(b.op.span(), "this operator is not supported in a kernel", None),
                };
                ExprKind::Binary(op, left, right)
            }
        };
        self.push(kind, span)
    }

    /// The place of an assignment; None after an error (reported).
    fn place(&mut self, e: &syn::Expr) -> Option<Place> {
        if let Some(place) = self.shared_place(e) {
            return place;
        }
        let span = e.span();
        match strip(e) {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Binding::Local(id)) => Some(Place::Local(id)),
                    Some(Binding::Param(id)) if !self.f.params[id].kind.is_buffer() => Some(Place::Param(id)),
                    Some(Binding::Param(_)) => {
                        self.error(
                            span,
                            format!("cannot assign to the buffer `{name}` itself"),
                            Some(&format!("assign to an element: `{name}[i] = value`")),
                        );
                        None
                    }
                    Some(Binding::Shared(_)) => {
                        self.error(
                            span,
                            format!("cannot assign to the shared array `{name}` itself"),
                            Some(&format!("assign to an element: `{name}[i] = value`")),
                        );
                        None
                    }
                    Some(Binding::Rejected) => None,
                    // rustc says a constant cannot be assigned to.
                    Some(Binding::Const(_) | Binding::Override(_)) => {
                        self.diags.left_to_rustc(span);
                        None
                    }
                    None if looks_like_const(&name) => {
                        self.outside_constant(&name, span);
                        None
                    }
                    None => {
                        self.diags.left_to_rustc(span);
                        None
                    }
                }
            }
            syn::Expr::Index(_) | syn::Expr::Field(_) if self.local_root(e).is_some() => self.projection(e),
            syn::Expr::Index(ix) => match self.buffer_of(&ix.expr) {
                Some(buffer) => {
                    if let ParamKind::Buffer { .. } = self.f.params[buffer].kind {
                        let name = self.f.params[buffer].name.clone();
                        self.error(
                            ix.expr.span(),
                            format!("cannot write to `{name}`: it is a read-only `&[T]` buffer"),
                            Some(&format!("declare the parameter as `{name}: &mut [T]`")),
                        );
                        return None;
                    }
                    let index = self.expr(&ix.index);
                    Some(Place::Index { buffer, index })
                }
                None if self.is_rejected(&ix.expr) => None,
                None => {
                    self.error(ix.expr.span(), "only buffer parameters can be indexed", None);
                    None
                }
            },
            _ if self.is_rejected(e) => None,
            // `ps[i].a = v`: the CPU would write the whole element back.
            syn::Expr::Field(f) if buffer_element_root(&f.base).is_some_and(|b| self.buffer_of(b).is_some()) => {
                let text = crate::diagnostic::code(&f.base);
                let field = crate::diagnostic::code(&f.member);
                // `out[i].x` of a vector buffer: a lane, not a field.
                let vector = buffer_element_root(&f.base).and_then(|b| self.buffer_of(b)).is_some_and(|b| {
                    self.f.params[b].kind.ty().as_vector().is_some() && matches!(strip(&f.base), syn::Expr::Index(_))
                });
                let what = if vector { "a lane" } else { "a field" };
                self.error(
                    span,
                    format!("{what} of a buffer element cannot be assigned: `{text}.{field} = ..`"),
                    Some(&format!("copy the element, change it, and store it back: `let mut e = {text}; e.{field} = ..; {text} = e;`")),
                );
                None
            }
            _ => {
                self.error(
                    span,
                    "cannot assign to this expression",
                    Some("assign to a `let mut` local or to a buffer element `out[i]`"),
                );
                None
            }
        }
    }

    /// The local at the root of `a[i][j]` or `t.0`, if it is one.
    fn local_root(&self, e: &syn::Expr) -> Option<LocalId> {
        match strip(e) {
            syn::Expr::Index(ix) => self.local_root(&ix.expr),
            syn::Expr::Field(f) => self.local_root(&f.base),
            syn::Expr::Path(p) => match self.lookup(&p.path.get_ident()?.to_string())? {
                Binding::Local(id) => Some(id),
                _ => None,
            },
            _ => None,
        }
    }

    /// `a[i][j] = ..` or `t.0 = ..` on a local: the local and the steps.
    fn projection(&mut self, e: &syn::Expr) -> Option<Place> {
        enum Raw<'e> {
            Index(&'e syn::Expr),
            Field(u32),
            Named(String),
        }
        // From the outermost step down to the local.
        let mut raw = Vec::new();
        let mut cur = strip(e);
        let local = loop {
            match cur {
                syn::Expr::Index(ix) => {
                    raw.push(Raw::Index(&ix.index));
                    cur = strip(&ix.expr);
                }
                syn::Expr::Field(f) => match &f.member {
                    syn::Member::Unnamed(i) => {
                        raw.push(Raw::Field(i.index));
                        cur = strip(&f.base);
                    }
                    syn::Member::Named(n) => {
                        raw.push(Raw::Named(n.to_string()));
                        cur = strip(&f.base);
                    }
                },
                _ => break self.local_root(cur)?,
            }
        };
        // Root first: the order the indices appear (and are evaluated) in.
        let steps = raw
            .into_iter()
            .rev()
            .map(|r| match r {
                Raw::Index(i) => Step::Index(self.expr(i)),
                Raw::Field(n) => Step::Field(n),
                Raw::Named(n) => Step::NamedField(n),
            })
            .collect();
        Some(Place::Project { local, steps })
    }

    /// `match n { 0 => .., 1 | 2 => .., 3..=9 => .., _ => .. }` on an
    /// integer.
    fn match_expr(&mut self, m: &syn::ExprMatch) -> ExprId {
        let span = m.span();
        let scrutinee = self.expr(&m.expr);
        let mut arms = Vec::new();
        for arm in &m.arms {
            if let Some((_, guard)) = &arm.guard {
                return self.error(
                    guard.span(),
                    "`match` guards are not supported in a kernel",
                    Some("test the condition inside the arm with `if`"),
                );
            }
            let mut pats = Vec::new();
            let mut binding = None;
            let alternatives: Vec<&syn::Pat> = match &arm.pat {
                syn::Pat::Or(o) => o.cases.iter().collect(),
                p => vec![p],
            };
            for p in alternatives {
                match self.pattern(p) {
                    Some((pat, name)) => {
                        pats.push(pat);
                        if name.is_some() {
                            binding = name;
                        }
                    }
                    None => return self.already_reported(span),
                }
            }
            self.scopes.push(HashMap::new());
            let binding = binding.map(|(name, span)| self.declare(name, span, false, None));
            let body = self.expr(&arm.body);
            self.scopes.pop();
            arms.push(Arm { pats, binding, body });
        }
        if arms.is_empty() {
            return self.error(span, "a `match` in a kernel needs at least one arm", None);
        }
        self.push(ExprKind::Match { scrutinee, arms }, span)
    }

    /// One pattern of an integer `match`; with the name it binds.
    fn pattern(&mut self, p: &syn::Pat) -> Option<(Pat, Option<(String, Span)>)> {
        fn unsupported<T>(this: &mut Parser<'_>, span: Span) -> Option<T> {
            this.diags.push(
                crate::diagnostic::Diagnostic::new(span, "only integer patterns are supported in a kernel's `match`").help(
                    "match integers with literals (`3`), ranges (`1..=9`), `|` and `_`; matching enums, tuples and other patterns is not supported",
                ),
            );
            None
        }
        match p {
            syn::Pat::Wild(_) => Some((Pat::Wild, None)),
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() => {
                Some((Pat::Wild, Some((pi.ident.to_string(), pi.ident.span()))))
            }
            syn::Pat::Lit(l) => match self.pattern_int(&syn::Expr::Lit(l.clone())) {
                Some(v) => Some((Pat::Int(v), None)),
                None => unsupported(self, l.span()),
            },
            syn::Pat::Range(r) => {
                let lo = match &r.start {
                    Some(e) => Some(self.pattern_int(e).or_else(|| unsupported(self, e.span()))?),
                    None => None,
                };
                let hi = match &r.end {
                    Some(e) => Some(self.pattern_int(e).or_else(|| unsupported(self, e.span()))?),
                    None => None,
                };
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                Some((Pat::Range { lo, hi, inclusive }, None))
            }
            syn::Pat::Paren(p) => self.pattern(&p.pat),
            other => {
                // `-1` is an expression pattern in syn.
                if let syn::Pat::Verbatim(_) = other {
                    if let Ok(e) = syn::parse2::<syn::Expr>(quote::ToTokens::to_token_stream(other)) {
                        if let Some(v) = self.pattern_int(&e) {
                            return Some((Pat::Int(v), None));
                        }
                    }
                }
                unsupported(self, other.span())
            }
        }
    }

    /// The value of an integer pattern bound: a literal, maybe negated, or
    /// a named constant such as `u32::MAX`.
    fn pattern_int(&mut self, e: &syn::Expr) -> Option<i128> {
        match strip(e) {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<i128>().ok(),
            syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), expr, .. }) => Some(-self.pattern_int(expr)?),
            syn::Expr::Path(p) => {
                let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                match builtins::named_const(&segs)?.value() {
                    ConstValue::Int(v) => Some(v),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> ExprId {
        let span = i.span();
        if let syn::Expr::Let(l) = &*i.cond {
            return self.error(
                l.span(),
                "`if let` is not supported in a kernel",
                Some("patterns are not supported; test a condition instead, e.g. `if i < a.len() { ... a[i] ... }`"),
            );
        }
        let cond = self.expr(&i.cond);
        let cond_text = crate::diagnostic::code(&i.cond);
        let then = self.block(&i.then_branch);
        let else_ = i.else_branch.as_ref().map(|(_, e)| self.expr(e));
        self.push(ExprKind::If { cond, then, else_, cond_text }, span)
    }

    fn loop_body(&mut self, label: &Option<Label>, body: &syn::Block) -> Block {
        self.loop_labels.push(label.as_ref().map(|l| l.name.clone()));
        let b = self.block(body);
        self.loop_labels.pop();
        b
    }

    /// False for a `break`/`continue` outside a loop or to an unknown
    /// label: rustc reports those itself.
    fn check_label(&self, label: Option<&Label>) -> bool {
        !self.loop_labels.is_empty()
            && label.is_none_or(|l| self.loop_labels.iter().any(|x| x.as_deref() == Some(l.name.as_str())))
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> ExprId {
        let span = f.span();
        let label = label_of(f.label.as_ref());
        // `a..b`, `a..=b`, `(a..b).step_by(s)` or `(a..b).rev()`.
        let (range, step, reverse) = match strip(&f.expr) {
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip(&m.receiver), Some(&m.args[0]), false)
            }
            syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => (strip(&m.receiver), None, true),
            other => (other, None, false),
        };
        let syn::Expr::Range(r) = range else {
            let help = if matches!(range, syn::Expr::MethodCall(_)) {
                "write `for i in start..end`, `(start..end).step_by(s)` or `(start..end).rev()`; `rev` and `step_by` do not combine"
            } else {
                "write `for i in start..end` or `for i in (start..end).step_by(s)`"
            };
            return self.error(f.expr.span(), "`for` loops run over integer ranges only", Some(help));
        };
        if let Some(s) = step {
            if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) = strip(s) {
                if i.base10_parse::<u128>().ok() == Some(0) {
                    return self.error(
                        s.span(),
                        "`step_by(0)` would never end on the GPU (on the CPU it panics)",
                        Some("step by at least 1"),
                    );
                }
            }
        }
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            return self.error(r.span(), "a `for` range needs a start and an end", Some("write `start..end`"));
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let start = self.expr(start);
        let end = self.expr(end);
        let step = step.map(|s| self.expr(s));
        self.scopes.push(HashMap::new());
        let var = match &*f.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                self.declare(pi.ident.to_string(), pi.ident.span(), pi.mutability.is_some(), None)
            }
            syn::Pat::Wild(w) => self.declare("_".into(), w.span(), false, None),
            other => {
                self.scopes.pop();
                return self.error(
                    other.span(),
                    "the loop variable must be a plain name",
                    Some("write `for i in a..b`"),
                );
            }
        };
        let body = self.loop_body(&label, &f.body);
        self.scopes.pop();
        let (unroll, late_unroll) = match self.unroll(f, &body, var, &label, inclusive, reverse) {
            Unroll::Values(v) => (Some(v), false),
            Unroll::AtSpecialisation => (None, true),
            Unroll::No => (None, false),
        };
        self.push(
            ExprKind::Loop {
                label,
                kind: LoopKind::For { var, start, end, inclusive, step, reverse, unroll, late_unroll },
                body,
            },
            span,
        )
    }

    /// The values of an unrolled loop's variable: `#[unroll]` asks for it
    /// (its bounds must be constants); a loop of at most
    /// [`AUTO_UNROLL`] constant iterations that indexes a local array with
    /// its variable is unrolled without asking, so that the array stays in
    /// registers on the GPU (dynamically indexed, it goes to memory).
    fn unroll(
        &mut self,
        f: &syn::ExprForLoop,
        body: &Block,
        var: LocalId,
        label: &Option<Label>,
        inclusive: bool,
        reverse: bool,
    ) -> Unroll {
        let asked = f.attrs.iter().find(|a| a.path().is_ident("unroll"));
        let (range, step) = match strip(&f.expr) {
            syn::Expr::MethodCall(m) if m.method == "step_by" => (strip(&m.receiver), m.args.first()),
            syn::Expr::MethodCall(m) => (strip(&m.receiver), None),
            other => (other, None),
        };
        let syn::Expr::Range(r) = range else { return Unroll::No };
        let (Some(start), Some(end)) = (r.start.as_deref(), r.end.as_deref()) else { return Unroll::No };
        let int = |p: &mut Self, e: &syn::Expr| match p.const_eval(e) {
            Some(crate::hir::ConstValue::Int(v)) => i64::try_from(v).ok(),
            _ => None,
        };
        let values = match (int(self, start), int(self, end), step.map(|s| int(self, s))) {
            (Some(a), Some(b), None) => Some((a, b, 1)),
            (Some(a), Some(b), Some(Some(s))) if s > 0 => Some((a, b, s)),
            _ => None,
        }
        .map(|(a, b, s)| {
            let last = if inclusive { b } else { b - 1 };
            let count = if last < a { 0 } else { (last - a) / s + 1 };
            (a, last, s, count)
        });
        let jump = crate::visit::jump_out_of_loop(&self.f, body, Function::label_name(label));
        match (asked, values) {
            (Some(_), _) if jump.is_some() => {
                self.diags.push(
                    Diagnostic::new(jump.expect("checked"), "a `#[unroll]` loop cannot `break` or `continue`")
                        .help("guard the rest of the body with `if` instead, or drop `#[unroll]`"),
                );
                Unroll::No
            }
            // A bound the launch sets (`0..TM`): the loop stays a loop in
            // the module, marked (its counter `unroll_r`), and each
            // specialisation unrolls it once the values are constants
            // (`onekernel_abi::unroll_marked_loops`). Counting down or to an
            // inclusive bound stays a loop.
            (Some(_), None)
                if [Some(start), Some(end), step].into_iter().flatten().any(|e| self.mentions_launch_value(e)) =>
            {
                if reverse || inclusive {
                    Unroll::No
                } else {
                    Unroll::AtSpecialisation
                }
            }
            (Some(attr), None) => {
                self.diags.push(
                    Diagnostic::new(attr.span(), "`#[unroll]` needs a loop whose bounds are known when the kernel is compiled")
                        .help("use literals or constants: `for k in 0..TILE` with `const TILE: usize = 8;`; or drop `#[unroll]`"),
                );
                Unroll::No
            }
            (Some(attr), Some((_, _, _, count))) if count > MAX_UNROLL => {
                self.diags.push(
                    Diagnostic::new(attr.span(), format!("`#[unroll]` of {count} iterations would make a huge shader"))
                        .help(format!(
                            "unroll at most {MAX_UNROLL} iterations: unroll an inner loop, or drop `#[unroll]`"
                        )),
                );
                Unroll::No
            }
            (Some(_), Some((a, _, s, count))) => Unroll::Values(sequence(a, s, count, reverse)),
            (None, Some((a, _, s, count)))
                if count <= AUTO_UNROLL && jump.is_none() && crate::visit::indexes_array_with(&self.f, body, var) =>
            {
                Unroll::Values(sequence(a, s, count, reverse))
            }
            (None, _) => Unroll::No,
        }
    }
}

/// What becomes of a `for` loop's repetition.
enum Unroll {
    /// A loop.
    No,
    /// The body once per value, when the kernel is compiled.
    Values(Vec<i64>),
    /// A marked loop, unrolled by each specialisation.
    AtSpecialisation,
}

/// The most iterations `#[unroll]` repeats.
pub const MAX_UNROLL: i64 = 256;

/// The most iterations a loop is unrolled without `#[unroll]`.
pub const AUTO_UNROLL: i64 = 16;

/// `count` values from `start` in steps of `step`, last first if `reverse`.
fn sequence(start: i64, step: i64, count: i64, reverse: bool) -> Vec<i64> {
    let mut v: Vec<i64> = (0..count).map(|k| start + k * step).collect();
    if reverse {
        v.reverse();
    }
    v
}

fn label_of(l: Option<&syn::Label>) -> Option<Label> {
    l.map(|l| Label { name: l.name.to_string(), span: l.name.span() })
}

/// A float literal's digits read as each float type, as rustc reads them:
/// straight to `f32` or `f64`, never through the other (which could round
/// twice).
fn float_lit(digits: &str) -> Option<FloatLit> {
    Some(FloatLit { single: digits.parse().ok()?, double: digits.parse().ok()? })
}

/// The buffer expression of `buf[i]`, `buf[i].a` or `buf[i].a.b`.
fn buffer_element_root(e: &syn::Expr) -> Option<&syn::Expr> {
    match strip(e) {
        syn::Expr::Index(ix) => Some(&ix.expr),
        syn::Expr::Field(f) => buffer_element_root(&f.base),
        _ => None,
    }
}

/// The span of the name at the root of an assignment's place (`acc` of
/// `acc[k].0`), the token itself: rustc resolves a name by its token's
/// hygiene, and the span of a whole expression joins tokens of other
/// origins (a `macro_rules!` metavariable next to the macro's own tokens).
fn root_name_span(e: &syn::Expr) -> Span {
    match strip(e) {
        syn::Expr::Index(ix) => root_name_span(&ix.expr),
        syn::Expr::Field(f) => root_name_span(&f.base),
        syn::Expr::Path(p) => p.path.get_ident().map_or_else(|| e.span(), |i| i.span()),
        other => other.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_paths() {
        let p = |s: &str| syn::parse_str::<syn::Path>(s).unwrap();
        assert!(builtin_of(&p("global_id")).is_some());
        assert!(builtin_of(&p("onekernel::global_id")).is_some());
        assert!(builtin_of(&p("other::global_id")).is_none());
        assert!(
            looks_like_const("TILE_SIZE") && looks_like_const("N") && !looks_like_const("n") && !looks_like_const("_")
        );
    }
}
