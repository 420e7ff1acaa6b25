//! syn's AST → [`crate::hir`]: accepts exactly the documented subset of Rust
//! and turns everything else into a spanned [`Diagnostic`] that says what to
//! write instead. Parsing continues after an error so that independent
//! problems are all reported in one build.

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::hir::*;
use crate::types::{unsupported_type_help, Ty};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// What a function is: the kernel (entry point) or a helper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnRole {
    /// The `#[kernel]` function.
    Kernel,
    /// A `#[helper]` function, callable from kernels.
    Helper,
}

/// Parses one function of the given role.
pub fn parse_function(item: &syn::ItemFn, role: FnRole) -> Result<Function, Vec<Diagnostic>> {
    let mut p =
        Parser { diags: Diagnostics::default(), f: None, scopes: vec![HashMap::new()], role, loop_labels: Vec::new() };
    let f = p.function(item);
    p.diags.finish(f)
}

#[derive(Clone, Copy)]
enum Binding {
    Local(LocalId),
    Param(ParamId),
    /// A parameter whose type was rejected (and reported): its uses are
    /// not reported again.
    Rejected,
    /// A workgroup shared array.
    Shared(SharedId),
}

struct Parser {
    diags: Diagnostics,
    f: Option<Function>,
    scopes: Vec<HashMap<String, Binding>>,
    role: FnRole,
    /// Labels of the enclosing loops, innermost last (None = unlabelled).
    loop_labels: Vec<Option<String>>,
}

/// A placeholder expression after an error; never lowered.
const ERROR_LIT: ExprKind = ExprKind::Lit(Lit::Bool(false));

impl Parser {
    fn func(&mut self) -> &mut Function {
        self.f.as_mut().expect("function under construction")
    }

    fn push(&mut self, kind: ExprKind, span: Span) -> ExprId {
        let f = self.func();
        f.exprs.push(Expr { kind, span });
        f.exprs.len() - 1
    }

    fn error(&mut self, span: Span, msg: impl Into<String>, help: Option<&str>) -> ExprId {
        let mut d = Diagnostic::new(span, msg);
        if let Some(h) = help {
            d = d.help(h);
        }
        self.diags.push(d);
        self.push(ERROR_LIT, span)
    }

    fn function(&mut self, item: &syn::ItemFn) -> Function {
        let sig = &item.sig;
        let what = match self.role {
            FnRole::Kernel => "a kernel",
            FnRole::Helper => "a helper function",
        };
        if let Some(a) = &sig.asyncness {
            self.diags.push(Diagnostic::new(a.span(), format!("{what} cannot be `async`")));
        }
        if let Some(u) = &sig.unsafety {
            self.diags.push(
                Diagnostic::new(u.span(), format!("{what} cannot be `unsafe`"))
                    .help("remove `unsafe`: kernels are safe Rust"),
            );
        }
        if let Some(c) = &sig.constness {
            self.diags.push(Diagnostic::new(c.span(), format!("{what} cannot be `const`")));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.diags.push(
                Diagnostic::new(sig.generics.span(), format!("{what} cannot be generic"))
                    .help("write one function per element type, e.g. `fn scale_f32(...)`"),
            );
        }
        if let Some(v) = &sig.variadic {
            self.diags.push(Diagnostic::new(v.span(), "variadic functions are not supported"));
        }
        let ret = match (&sig.output, self.role) {
            (syn::ReturnType::Default, _) => Ty::Unit,
            (syn::ReturnType::Type(_, ty), FnRole::Kernel) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "a kernel cannot return a value")
                        .help("write results into a `&mut [T]` parameter, e.g. `out[i] = value;`"),
                );
                Ty::Unit
            }
            (syn::ReturnType::Type(_, ty), FnRole::Helper) => self.scalar_type(ty).unwrap_or(Ty::Unit),
        };
        self.f = Some(Function {
            name: sig.ident.to_string(),
            span: sig.ident.span(),
            params: Vec::new(),
            ret,
            locals: Vec::new(),
            exprs: Vec::new(),
            body: Block::default(),
            calls: Vec::new(),
            buffer_args: Vec::new(),
            shared: Vec::new(),
            barriers: 0,
        });
        for input in &sig.inputs {
            self.param(input);
        }
        let body = self.block(&item.block);
        let mut f = self.f.take().expect("function");
        f.body = body;
        f
    }

    fn param(&mut self, input: &syn::FnArg) {
        let syn::FnArg::Typed(pt) = input else {
            self.diags
                .push(Diagnostic::new(input.span(), "kernels and helpers are free functions; `self` is not supported"));
            return;
        };
        let (name, mutable) = match &*pt.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (pi.ident.to_string(), pi.mutability.is_some())
            }
            other => {
                self.diags
                    .push(Diagnostic::new(other.span(), "parameters must be plain names").help("write `name: Type`"));
                return;
            }
        };
        let kind = match &*pt.ty {
            syn::Type::Reference(r) => {
                let mutable_ref = r.mutability.is_some();
                // `&[AtomicU32]` / `&[AtomicI32]`: a buffer of atomics.
                if let syn::Type::Slice(s) = &*r.elem {
                    if let Some(elem) = atomic_elem(&s.elem) {
                        if self.role == FnRole::Helper {
                            self.diags.push(
                                Diagnostic::new(pt.ty.span(), "helper functions cannot take buffers")
                                    .help("do the atomic operation in the kernel"),
                            );
                            return;
                        }
                        if mutable_ref {
                            self.diags.push(
                                Diagnostic::new(
                                    pt.ty.span(),
                                    "a buffer of atomics is written through a shared reference",
                                )
                                .help(format!(
                                    "write `&[Atomic{}]`: atomics are changed through `&`, like in Rust",
                                    if elem == Ty::I32 { "I32" } else { "U32" }
                                )),
                            );
                            return;
                        }
                        self.add_param(name, pt.pat.span(), ParamKind::Atomics { elem });
                        return;
                    }
                }
                let elem = match &*r.elem {
                    syn::Type::Slice(s) => self.scalar_type(&s.elem),
                    // `&dyn Fn(..)`, `&impl Trait`, `&*const T`: say what the
                    // pointee is rather than "a reference".
                    other @ (syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) | syn::Type::Ptr(_)) => {
                        self.scalar_type(other);
                        None
                    }
                    other => {
                        let help = if mutable_ref {
                            "a kernel cannot write through `&mut` to a single value; take a `&mut [T]` buffer and write element 0"
                        } else {
                            "pass scalars by value (`x: f32`) or buffers as `&[T]`"
                        };
                        self.diags.push(
                            Diagnostic::new(
                                other.span(),
                                "references to single values are not supported as parameters",
                            )
                            .help(help),
                        );
                        None
                    }
                };
                if self.role == FnRole::Helper {
                    self.diags.push(
                        Diagnostic::new(pt.ty.span(), "helper functions cannot take buffers")
                            .help("pass the element values (`a[i]`) to the helper and store its result in the kernel"),
                    );
                }
                if mutable {
                    self.diags.push(
                        Diagnostic::new(pt.pat.span(), "a buffer parameter cannot be `mut`")
                            .help("remove `mut`; `&mut [T]` already lets the kernel write elements"),
                    );
                }
                match elem {
                    Some(elem) if elem.is_numeric() && elem != Ty::Usize => {
                        if mutable_ref {
                            ParamKind::BufferMut { elem }
                        } else {
                            ParamKind::Buffer { elem }
                        }
                    }
                    Some(elem) => {
                        self.diags.push(
                            Diagnostic::new(r.elem.span(), format!("buffers of `{elem}` are not supported"))
                                .help("buffer elements are `f32`, `i32` or `u32`"),
                        );
                        return self.reject(name);
                    }
                    None => return self.reject(name),
                }
            }
            ty => match self.scalar_type(ty) {
                Some(t @ (Ty::F32 | Ty::I32 | Ty::U32)) => ParamKind::Scalar { ty: t, mutable },
                Some(t @ (Ty::Bool | Ty::Usize)) if self.role == FnRole::Helper => ParamKind::Scalar { ty: t, mutable },
                Some(t) => {
                    self.diags
                        .push(Diagnostic::new(ty.span(), format!("a kernel cannot take a `{t}` parameter")).help(
                        "kernel scalars are `f32`, `i32` or `u32` (uniform data); pass a `u32` and convert with `as`",
                    ));
                    return self.reject(name);
                }
                None => return self.reject(name),
            },
        };
        self.add_param(name, pt.pat.span(), kind);
    }

    fn add_param(&mut self, name: String, span: Span, kind: ParamKind) {
        let f = self.func();
        f.params.push(Param { name: name.clone(), span, kind });
        let id = f.params.len() - 1;
        self.scopes[0].insert(name, Binding::Param(id));
    }

    /// `let tile = shared::<[f32; 256]>();`: declares a shared array.
    /// Returns false when `init` is not a `shared::<..>()` call.
    fn shared_decl(&mut self, local: &syn::Local, init: &syn::Expr) -> bool {
        let syn::Expr::Call(c) = strip_parens(init) else { return false };
        let syn::Expr::Path(p) = &*c.func else { return false };
        if p.path.segments.len() != 1 || p.path.segments[0].ident != "shared" {
            return false;
        }
        let span = init.span();
        let syn::Pat::Ident(pi) = &local.pat else {
            self.diags.push(
                Diagnostic::new(local.pat.span(), "a shared array is bound to a plain name")
                    .help("write `let tile = shared::<[f32; 256]>();`"),
            );
            return true;
        };
        if self.role == FnRole::Helper {
            self.diags.push(
                Diagnostic::new(span, "shared memory can only be declared in a kernel's body")
                    .help("declare it in the kernel"),
            );
            return true;
        }
        if self.scopes.len() != 2 {
            self.diags.push(
                Diagnostic::new(span, "shared memory must be declared at the top of the kernel's body")
                    .help("it lives as long as the workgroup: move the `let` out of the block or loop"),
            );
            return true;
        }
        if !c.args.is_empty() {
            self.diags.push(
                Diagnostic::new(c.args.span(), "`shared()` takes no arguments").help("write `shared::<[f32; 256]>()`"),
            );
            return true;
        }
        let ty = match &p.path.segments[0].arguments {
            syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                syn::GenericArgument::Type(t) => t,
                other => {
                    self.diags.push(
                        Diagnostic::new(other.span(), "expected an array type").help("write `shared::<[f32; 256]>()`"),
                    );
                    return true;
                }
            },
            _ => {
                self.diags.push(
                    Diagnostic::new(span, "a shared array needs its type")
                        .help("write `shared::<[f32; 256]>()` or `shared::<[[f32; 16]; 16]>()`"),
                );
                return true;
            }
        };
        let Some((elem, atomic, dims)) = self.shared_type(ty) else { return true };
        let words: u64 = dims.iter().map(|&d| u64::from(d)).product();
        let used: u64 = self.func().shared.iter().map(|d| u64::from(d.words())).sum();
        if (used + words) * 4 > 16384 {
            self.diags.push(
                Diagnostic::new(
                    ty.span(),
                    format!(
                        "{} bytes of shared memory exceed the 16384 bytes every WebGPU device provides",
                        (used + words) * 4
                    ),
                )
                .help("use smaller tiles, or fewer shared arrays"),
            );
            return true;
        }
        let name = pi.ident.to_string();
        let decl = SharedDecl { name: name.clone(), span: pi.ident.span(), elem, atomic, dims };
        let f = self.func();
        f.shared.push(decl);
        let id = f.shared.len() - 1;
        self.scopes.last_mut().expect("scope").insert(name, Binding::Shared(id));
        true
    }

    /// `[T; N]`, `[[T; C]; R]`, `[AtomicU32; N]`: (element, atomic, dims).
    fn shared_type(&mut self, ty: &syn::Type) -> Option<(Ty, bool, Vec<u32>)> {
        let syn::Type::Array(outer) = ty else {
            self.diags.push(
                Diagnostic::new(ty.span(), "shared memory is an array")
                    .help("write `shared::<[f32; 256]>()` or `shared::<[[f32; 16]; 16]>()`"),
            );
            return None;
        };
        let n = self.array_len(&outer.len)?;
        match &*outer.elem {
            syn::Type::Array(inner) => {
                let m = self.array_len(&inner.len)?;
                if atomic_elem(&inner.elem).is_some() {
                    self.diags.push(
                        Diagnostic::new(inner.elem.span(), "shared atomics are one-dimensional")
                            .help("write `shared::<[AtomicU32; N]>()` and index it with `r * cols + c`"),
                    );
                    return None;
                }
                let elem = self.shared_elem(&inner.elem)?;
                Some((elem, false, vec![n, m]))
            }
            e => match atomic_elem(e) {
                Some(elem) => Some((elem, true, vec![n])),
                None => Some((self.shared_elem(e)?, false, vec![n])),
            },
        }
    }

    fn shared_elem(&mut self, ty: &syn::Type) -> Option<Ty> {
        match self.scalar_type(ty)? {
            t @ (Ty::F32 | Ty::I32 | Ty::U32) => Some(t),
            t => {
                self.diags.push(
                    Diagnostic::new(ty.span(), format!("shared arrays of `{t}` are not supported"))
                        .help("shared elements are `f32`, `i32`, `u32`, `AtomicU32` or `AtomicI32`"),
                );
                None
            }
        }
    }

    /// The length of a shared array dimension: an integer literal.
    fn array_len(&mut self, e: &syn::Expr) -> Option<u32> {
        if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) = strip_parens(e) {
            if let Ok(n @ 1..) = i.base10_parse::<u32>() {
                return Some(n);
            }
        }
        self.diags.push(
            Diagnostic::new(e.span(), "shared memory needs a size fixed when the kernel is compiled")
                .help("write the length as an integer literal such as `256`; the GPU allocates shared memory before the kernel runs"),
        );
        None
    }

    /// `tile[i]` or `tile[r][c]` on a shared array: `Ok((array, index
    /// exprs))`, or `Err(diagnostic)` when the number of indices does not
    /// match the array's dimensions; None when `e` is not a shared array
    /// access. Reports nothing itself: the caller reports the error once.
    fn shared_of<'e>(&self, e: &'e syn::Expr) -> Option<Result<(SharedId, Vec<&'e syn::Expr>), Diagnostic>> {
        let syn::Expr::Index(ix) = strip_parens(e) else { return None };
        let mut indices = vec![&*ix.index];
        let mut base = strip_parens(&ix.expr);
        if let syn::Expr::Index(inner) = base {
            indices.insert(0, &*inner.index);
            base = strip_parens(&inner.expr);
        }
        let syn::Expr::Path(p) = base else { return None };
        let Some(Binding::Shared(id)) = self.lookup(&p.path.get_ident()?.to_string()) else { return None };
        let decl = &self.f.as_ref()?.shared[id];
        Some(match (decl.dims.len(), indices.len()) {
            (d, n) if d == n => Ok((id, indices)),
            (2, 1) => Err(Diagnostic::new(e.span(), "a row of a 2-D shared array cannot be used as a value")
                .help(format!("index both dimensions: `{}[r][c]`", decl.name))),
            _ => Err(Diagnostic::new(e.span(), format!("`{}` is a one-dimensional shared array", decl.name))
                .help(format!("index it once: `{}[i]`", decl.name))),
        })
    }

    /// An atomic element: `hist[i]` on an `&[AtomicU32]` parameter or a
    /// shared atomic array.
    fn atomic_target(&mut self, e: &syn::Expr) -> Option<AtomicTarget> {
        if let syn::Expr::Index(ix) = strip_parens(e) {
            if let Some(param) = self.buffer_of(&ix.expr) {
                if matches!(self.func().params[param].kind, ParamKind::Atomics { .. }) {
                    let index = self.expr(&ix.index);
                    return Some(AtomicTarget::Buffer { param, index });
                }
            }
        }
        // A mis-indexed array is reported where it is evaluated.
        let (shared, indices) = self.shared_of(e)?.ok()?;
        if !self.func().shared[shared].atomic {
            return None;
        }
        let indices = indices.into_iter().map(|i| self.expr(i)).collect();
        Some(AtomicTarget::Shared { shared, indices })
    }

    /// `x.fetch_add(v, Ordering::Relaxed)` and friends on an atomic element.
    fn atomic_call(&mut self, m: &syn::ExprMethodCall) -> Option<ExprId> {
        let name = m.method.to_string();
        let span = m.span();
        let (op, values) = match name.as_str() {
            "load" => (AtomicOp::Load, 0),
            "store" => (AtomicOp::Store, 1),
            "swap" => (AtomicOp::Swap, 1),
            "fetch_add" => (AtomicOp::FetchAdd, 1),
            "fetch_sub" => (AtomicOp::FetchSub, 1),
            "fetch_min" => (AtomicOp::FetchMin, 1),
            "fetch_max" => (AtomicOp::FetchMax, 1),
            "fetch_and" => (AtomicOp::FetchAnd, 1),
            "fetch_or" => (AtomicOp::FetchOr, 1),
            "fetch_xor" => (AtomicOp::FetchXor, 1),
            "compare_exchange" | "compare_exchange_weak" => {
                let target = self.atomic_target(&m.receiver)?;
                self.error(
                    span,
                    format!("`{name}` must be followed by `.is_ok()` in a kernel"),
                    Some(&format!("write `.{name}(current, new, Ordering::Relaxed, Ordering::Relaxed).is_ok()`: kernels have no `Result`")),
                );
                let _ = target;
                return Some(self.push(ERROR_LIT, span));
            }
            _ => return None,
        };
        let target = self.atomic_target(&m.receiver)?;
        // The value operands, then one ordering (ignored: GPU atomics are relaxed).
        if m.args.len() != values + 1 {
            return Some(self.error(span, format!("`{name}` takes {} argument(s) and an `Ordering`", values), None));
        }
        let args = m.args.iter().take(values).map(|a| self.expr(a)).collect();
        Some(self.push(ExprKind::Atomic { target, op, args }, span))
    }

    /// `x.compare_exchange(current, new, o1, o2).is_ok()`.
    fn compare_exchange_is_ok(&mut self, m: &syn::ExprMethodCall) -> Option<ExprId> {
        let syn::Expr::MethodCall(inner) = strip_parens(&m.receiver) else { return None };
        if m.method != "is_ok"
            || !(inner.method == "compare_exchange" || inner.method == "compare_exchange_weak")
            || !m.args.is_empty()
        {
            return None;
        }
        let target = self.atomic_target(&inner.receiver)?;
        let span = m.span();
        if inner.args.len() != 4 {
            return Some(self.error(
                inner.span(),
                "`compare_exchange` takes the current value, the new value and two `Ordering`s",
                None,
            ));
        }
        let args = inner.args.iter().take(2).map(|a| self.expr(a)).collect();
        Some(self.push(ExprKind::Atomic { target, op: AtomicOp::CompareExchangeIsOk, args }, span))
    }

    /// Binds a parameter whose type was rejected, so that its uses in the
    /// body do not cascade into more errors.
    fn reject(&mut self, name: String) {
        self.scopes.last_mut().expect("scope").insert(name, Binding::Rejected);
    }

    /// True when `e` is (a deref, index or field of) a rejected parameter.
    fn is_rejected(&self, e: &syn::Expr) -> bool {
        match e {
            syn::Expr::Path(p) => {
                p.path.get_ident().is_some_and(|i| matches!(self.lookup(&i.to_string()), Some(Binding::Rejected)))
            }
            syn::Expr::Paren(p) => self.is_rejected(&p.expr),
            syn::Expr::Unary(u) => self.is_rejected(&u.expr),
            syn::Expr::Index(ix) => self.is_rejected(&ix.expr),
            syn::Expr::Field(f) => self.is_rejected(&f.base),
            syn::Expr::MethodCall(m) => self.is_rejected(&m.receiver),
            _ => false,
        }
    }

    /// A scalar type such as `f32`; reports and returns None otherwise.
    fn scalar_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        match ty {
            syn::Type::Path(tp) if tp.qself.is_none() => {
                let last = tp.path.segments.last()?;
                let name = last.ident.to_string();
                if let Some(t) = Ty::from_name(&name).filter(|t| *t != Ty::Dim3 || tp.path.segments.len() >= 1) {
                    if last.arguments.is_empty() {
                        return Some(t);
                    }
                }
                let help = unsupported_type_help(&name)
                    .unwrap_or("kernels compute with `f32`, `i32`, `u32`, `usize` and `bool`");
                self.diags.push(
                    Diagnostic::new(ty.span(), format!("`{}` is not supported in a kernel", type_text(ty))).help(help),
                );
                None
            }
            syn::Type::Tuple(t) if t.elems.is_empty() => Some(Ty::Unit),
            syn::Type::Ptr(_) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "raw pointers are not supported in a kernel")
                        .help("index a buffer parameter instead"),
                );
                None
            }
            syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "trait objects and `impl Trait` are not supported in a kernel")
                        .help("a kernel cannot take a function or closure; write a `#[helper]` function and call it, or pass an `f32`, `i32` or `u32`"),
                );
                None
            }
            syn::Type::Reference(_) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "references are not supported here")
                        .help("use values: kernels copy scalars"),
                );
                None
            }
            syn::Type::Array(_) | syn::Type::Slice(_) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "arrays are not supported here").help("take a `&[T]` buffer parameter"),
                );
                None
            }
            _ => {
                self.diags.push(
                    Diagnostic::new(ty.span(), format!("the type `{}` is not supported in a kernel", type_text(ty)))
                        .help("kernels compute with `f32`, `i32`, `u32`, `usize` and `bool`"),
                );
                None
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn declare(&mut self, name: String, span: Span, mutable: bool, annotated: Option<Ty>) -> LocalId {
        let f = self.func();
        f.locals.push(Local { name: name.clone(), span, mutable, annotated });
        let id = f.locals.len() - 1;
        self.scopes.last_mut().expect("scope").insert(name, Binding::Local(id));
        id
    }

    fn block(&mut self, block: &syn::Block) -> Block {
        self.scopes.push(HashMap::new());
        let mut out = Block::default();
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                syn::Stmt::Local(local) => self.let_stmt(local, &mut out),
                syn::Stmt::Expr(e, semi) => {
                    let id = self.expr(e);
                    if last && semi.is_none() {
                        out.tail = Some(id);
                    } else {
                        out.stmts.push(Stmt::Expr(id));
                    }
                }
                syn::Stmt::Item(item) => {
                    self.diags.push(
                        Diagnostic::new(item.span(), "items cannot be declared inside a kernel")
                            .help("move the item out of the kernel; helper functions take `#[helper]`"),
                    );
                }
                syn::Stmt::Macro(m) => {
                    let id = self.macro_error(&m.mac);
                    out.stmts.push(Stmt::Expr(id));
                }
            }
        }
        self.scopes.pop();
        out
    }

    fn let_stmt(&mut self, local: &syn::Local, out: &mut Block) {
        if let Some(diverge) = &local.init.as_ref().and_then(|i| i.diverge.as_ref()) {
            self.diags.push(
                Diagnostic::new(diverge.1.span(), "`let ... else` is not supported in a kernel")
                    .help("use `if` / `else`"),
            );
        }
        if let Some(init) = &local.init {
            let before = self.diags.len();
            if self.shared_decl(local, &init.expr) {
                // A rejected declaration is reported once: its uses are not.
                if self.diags.len() > before {
                    if let syn::Pat::Ident(pi) = &local.pat {
                        self.reject(pi.ident.to_string());
                    }
                }
                return;
            }
        }
        let before = self.diags.len();
        let (pat, annotated) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, self.scalar_type(&pt.ty)),
            p => (p, None),
        };
        // A rejected type annotation is the one problem of this `let`: its
        // initializer (`Vec::new()`, `Box::new(x)`) is not reported again.
        let init = if self.diags.len() > before { None } else { local.init.as_ref().map(|i| self.expr(&i.expr)) };
        // After an error in the type or the initializer (`let r = &x;`,
        // `let v = a.get(i)?;`), uses of the name (`*r`) are not reported.
        let failed = self.diags.len() > before;
        match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() && failed => {
                self.reject(pi.ident.to_string());
            }
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                // The initializer is parsed before the new name is in scope,
                // as in Rust (`let x = x + 1;` reads the old `x`).
                let id = self.declare(pi.ident.to_string(), pi.ident.span(), pi.mutability.is_some(), annotated);
                out.stmts.push(Stmt::Let { local: id, init });
            }
            syn::Pat::Wild(w) => {
                let id = self.declare("_".into(), w.span(), false, annotated);
                out.stmts.push(Stmt::Let { local: id, init });
            }
            other => {
                self.diags.push(
                    Diagnostic::new(other.span(), "only simple `let name = ...` bindings are supported")
                        .help("bind each value to its own name: `let a = ...; let b = ...;`"),
                );
            }
        }
    }

    fn macro_error(&mut self, mac: &syn::Macro) -> ExprId {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let help = match name.as_str() {
            "println" | "print" | "eprintln" | "eprint" | "dbg" => {
                "a GPU cannot print; write the value into an output buffer and read it on the host"
            }
            "panic" | "unreachable" | "todo" | "unimplemented" | "assert" | "assert_eq" | "assert_ne"
            | "debug_assert" => "a GPU cannot panic; write an error flag into an output buffer, or `return` early",
            "vec" => "a kernel cannot allocate; take a `&mut [T]` buffer parameter",
            "format" | "write" | "writeln" => {
                "a kernel has no strings; write the numbers into an output buffer and format them on the host"
            }
            _ => "expand the macro by hand",
        };
        self.error(mac.span(), format!("macros such as `{name}!` are not supported in a kernel"), Some(help))
    }

    fn expr(&mut self, e: &syn::Expr) -> ExprId {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Field(f) => {
                let base = self.expr(&f.base);
                let axis = match &f.member {
                    syn::Member::Named(id) if id == "x" => Some(0),
                    syn::Member::Named(id) if id == "y" => Some(1),
                    syn::Member::Named(id) if id == "z" => Some(2),
                    _ => None,
                };
                match axis {
                    Some(a) => self.push(ExprKind::Axis(base, a), span),
                    None => self.error(
                        f.member.span(),
                        "only the `.x`, `.y` and `.z` fields of a thread index exist",
                        Some("write `global_id().x`"),
                    ),
                }
            }
            syn::Expr::Index(_) if self.shared_of(e).is_some() => {
                let (shared, indices) = match self.shared_of(e).expect("checked") {
                    Ok(access) => access,
                    Err(d) => {
                        self.diags.push(d);
                        return self.push(ERROR_LIT, span);
                    }
                };
                if self.func().shared[shared].atomic {
                    let name = self.func().shared[shared].name.clone();
                    return self.error(
                        span,
                        format!("`{name}` holds atomics"),
                        Some(
                            "use an atomic method: `.load(Ordering::Relaxed)`, `.fetch_add(v, Ordering::Relaxed)`, ...",
                        ),
                    );
                }
                let indices = indices.into_iter().map(|i| self.expr(i)).collect();
                self.push(ExprKind::SharedIndex { shared, indices }, span)
            }
            syn::Expr::Index(ix) => {
                match self.buffer_of(&ix.expr) {
                    Some(buffer) if matches!(self.func().params[buffer].kind, ParamKind::Atomics { .. }) => {
                        let name = self.func().params[buffer].name.clone();
                        self.error(span, format!("`{name}` holds atomics"), Some("use an atomic method: `.load(Ordering::Relaxed)`, `.fetch_add(v, Ordering::Relaxed)`, ..."))
                    }
                    Some(buffer) => {
                        let index = self.expr(&ix.index);
                        self.push(ExprKind::Index { buffer, index }, span)
                    }
                    None if self.is_rejected(&ix.expr) => {
                        self.report_silently();
                        self.push(ERROR_LIT, span)
                    }
                    None if matches!(
                        strip_parens(&ix.expr),
                        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Deref(_), .. })
                    ) =>
                    {
                        let syn::Expr::Unary(u) = strip_parens(&ix.expr) else { unreachable!() };
                        self.error(
                            u.op.span(),
                            "dereferencing is not supported in a kernel",
                            Some("index the buffer itself: `a[i]`"),
                        )
                    }
                    None => self.error(
                        ix.expr.span(),
                        "only buffer parameters can be indexed",
                        Some("index a `&[T]` or `&mut [T]` parameter: `a[i]`"),
                    ),
                }
            }
            syn::Expr::Unary(u) => {
                let op = match u.op {
                    syn::UnOp::Neg(_) => UnOp::Neg,
                    syn::UnOp::Not(_) => UnOp::Not,
                    _ if self.is_rejected(&u.expr) => {
                        self.report_silently();
                        return self.push(ERROR_LIT, span);
                    }
                    _ => {
                        return self.error(
                            u.op.span(),
                            "dereferencing is not supported in a kernel",
                            Some("kernels work with values: remove the `*`"),
                        )
                    }
                };
                let x = self.expr(&u.expr);
                self.push(ExprKind::Unary(op, x), span)
            }
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Assign(a) => {
                let place = self.place(&a.left);
                let value = self.expr(&a.right);
                match place {
                    Some(place) => self.push(ExprKind::Assign { place, op: None, value }, span),
                    None => self.push(ERROR_LIT, span),
                }
            }
            syn::Expr::Cast(c) => {
                let x = self.expr(&c.expr);
                match self.scalar_type(&c.ty) {
                    Some(t) if t.is_scalar() => self.push(ExprKind::Cast(x, t), span),
                    Some(t) => self.error(c.ty.span(), format!("cannot cast to `{t}`"), None),
                    None => self.push(ERROR_LIT, span),
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
                    return self.error(l.span(), "`while let` is not supported in a kernel", Some("patterns are not supported; loop over indices instead, e.g. `for j in 0..a.len() { ... a[j] ... }`"));
                }
                let label = w.label.as_ref().map(|l| l.name.ident.to_string());
                let cond = self.expr(&w.cond);
                let body = self.loop_body(label.clone(), &w.body);
                self.push(ExprKind::Loop { label, kind: LoopKind::While { cond }, body }, span)
            }
            syn::Expr::Loop(l) => {
                let label = l.label.as_ref().map(|l| l.name.ident.to_string());
                let body = self.loop_body(label.clone(), &l.body);
                self.push(ExprKind::Loop { label, kind: LoopKind::Loop, body }, span)
            }
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::Break(b) => {
                let label = b.label.as_ref().map(|l| l.ident.to_string());
                self.check_label(label.as_deref(), b.label.as_ref().map(|l| l.span()).unwrap_or(span), "break");
                let value = b.expr.as_ref().map(|v| self.expr(v));
                self.push(ExprKind::Break { label, value }, span)
            }
            syn::Expr::Continue(c) => {
                let label = c.label.as_ref().map(|l| l.ident.to_string());
                self.check_label(label.as_deref(), c.label.as_ref().map(|l| l.span()).unwrap_or(span), "continue");
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
            syn::Expr::Macro(m) => self.macro_error(&m.mac),
            syn::Expr::Closure(_) => self.error(
                span,
                "closures are not supported in a kernel",
                Some("write a `#[helper]` function and call it"),
            ),
            syn::Expr::Match(_) => {
                self.error(span, "`match` is not supported in a kernel yet", Some("use `if` / `else if` / `else`"))
            }
            syn::Expr::Tuple(_) => {
                self.error(span, "tuples are not supported in a kernel", Some("use one `let` per value"))
            }
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => self.error(
                span,
                "arrays are not supported in a kernel",
                Some("take a `&[T]` or `&mut [T]` buffer parameter"),
            ),
            syn::Expr::Reference(_) => self.error(
                span,
                "references are not supported in a kernel",
                Some("use the value itself: scalars are copied"),
            ),
            syn::Expr::Struct(_) => {
                self.error(span, "struct literals are not supported in a kernel", Some("use separate scalar values"))
            }
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
                let suffix = i.suffix();
                let ty = match suffix {
                    "" => None,
                    "f32" => {
                        let v: f64 = i.base10_digits().parse().unwrap_or(0.0);
                        return self.push(ExprKind::Lit(Lit::Float(v, Some(Ty::F32))), span);
                    }
                    s => match Ty::from_name(s).filter(|t| t.is_integer()) {
                        Some(t) => Some(t),
                        None => {
                            let help = unsupported_type_help(s).unwrap_or("use an `i32`, `u32` or `usize` literal");
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
                    s => {
                        let help = unsupported_type_help(s).unwrap_or("write an `f32` literal such as `1.0f32`");
                        return self.error(span, format!("`{s}` literals are not supported in a kernel"), Some(help));
                    }
                };
                // Parse straight to f32 (as rustc rounds an f32 literal),
                // not through f64, which could round twice.
                match fl.base10_parse::<f32>() {
                    Ok(v) => self.push(ExprKind::Lit(Lit::Float(v as f64, ty)), span),
                    Err(_) => self.error(span, "malformed float literal", None),
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
            return match self.lookup(name) {
                Some(Binding::Local(id)) => self.push(ExprKind::Local(id), span),
                Some(Binding::Param(id)) => match self.func().params[id].kind {
                    ParamKind::Scalar { .. } => self.push(ExprKind::Param(id), span),
                    _ => self.error(
                        span,
                        format!("the buffer `{name}` can only be indexed or measured here"),
                        Some(&format!("write `{name}[i]` or `{name}.len()`")),
                    ),
                },
                Some(Binding::Rejected) => {
                    self.report_silently();
                    self.push(ERROR_LIT, span)
                }
                Some(Binding::Shared(_)) => self.error(
                    span,
                    format!("the shared array `{name}` can only be indexed or measured here"),
                    Some(&format!("write `{name}[i]` or `{name}.len()`")),
                ),
                None => {
                    if Builtin::from_name(name).is_some() {
                        self.error(span, format!("`{name}` is a function"), Some(&format!("call it: `{name}()`")))
                    } else {
                        // rustc reports unknown names itself; don't repeat it.
                        self.report_silently();
                        self.push(ERROR_LIT, span)
                    }
                }
            };
        }
        match named_const(&segs) {
            Some(c) => self.push(ExprKind::Const(c), span),
            None => {
                let help = if segs.last().map(|s| s == "MAX" || s == "MIN").unwrap_or(false)
                    && segs.iter().any(|s| s == "usize")
                {
                    "`usize` is 32 bits on the GPU but 64 on the CPU; use `u32::MAX`"
                } else {
                    "kernels know `f32::MAX/MIN/EPSILON/INFINITY/NEG_INFINITY/NAN`, `i32::MAX/MIN`, `u32::MAX/MIN` and `std::f32::consts::*`"
                };
                self.error(span, format!("`{}` is not supported in a kernel", segs.join("::")), Some(help))
            }
        }
    }

    /// Unknown names are left for rustc to report (it does so with its own
    /// suggestions); the kernel is then not lowered.
    fn report_silently(&mut self) {
        self.diags.push(Diagnostic::silent());
    }

    fn buffer_of(&mut self, e: &syn::Expr) -> Option<ParamId> {
        if let syn::Expr::Path(p) = e {
            if let Some(ident) = p.path.get_ident() {
                if let Some(Binding::Param(id)) = self.lookup(&ident.to_string()) {
                    if !matches!(self.func().params[id].kind, ParamKind::Scalar { .. }) {
                        return Some(id);
                    }
                }
            }
        }
        None
    }

    fn call(&mut self, c: &syn::ExprCall) -> ExprId {
        let span = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            return self.error(c.func.span(), "only named functions can be called in a kernel", None);
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 1 {
            let name = &segs[0];
            if name == "workgroup_barrier" || name == "storage_barrier" {
                if !c.args.is_empty() {
                    return self.error(c.args.span(), format!("`{name}()` takes no arguments"), None);
                }
                if self.role == FnRole::Helper {
                    return self.error(
                        span,
                        format!("`{name}()` can only be called in a kernel's body"),
                        Some("every thread must reach a barrier; call it in the kernel, around the helper call"),
                    );
                }
                let kind = if name == "workgroup_barrier" { BarrierKind::Workgroup } else { BarrierKind::Storage };
                let f = self.func();
                let site = f.barriers;
                f.barriers += 1;
                return self.push(ExprKind::Barrier(kind, site), span);
            }
            if name == "shared" {
                return self.error(
                    span,
                    "`shared::<..>()` declares shared memory: bind it with `let` at the top of the kernel",
                    Some("write `let tile = shared::<[f32; 256]>();`"),
                );
            }
            if let Some(b) = Builtin::from_name(name) {
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
                return self.push(ExprKind::Builtin(b), span);
            }
            if matches!(self.lookup(name), Some(Binding::Rejected)) {
                self.report_silently();
                return self.push(ERROR_LIT, span);
            }
            if matches!(self.lookup(name), Some(_)) {
                return self.error(span, format!("`{name}` is a value, not a function"), None);
            }
            let help_for = |n: &str| -> Option<&'static str> {
                Some(match n {
                    "Some" | "None" | "Ok" | "Err" => "kernels have no `Option` or `Result`; use a `bool` flag",
                    "drop" => "values are dropped at the end of their scope; remove the call",
                    "Box" | "Vec" | "String" => "a kernel cannot allocate",
                    _ => return None,
                })
            };
            if let Some(h) = help_for(name) {
                return self.error(span, format!("`{name}` is not supported in a kernel"), Some(h));
            }
            let mut args = Vec::new();
            for a in &c.args {
                // Reported once the callee is known: see `Function::buffer_args`.
                args.push(match self.buffer_of(a) {
                    Some(_) => {
                        self.func().buffer_args.push(a.span());
                        self.push(ERROR_LIT, a.span())
                    }
                    None => self.expr(a),
                });
            }
            let f = self.func();
            if !f.calls.contains(name) {
                f.calls.push(name.clone());
            }
            if *name == f.name {
                return self.error(
                    span,
                    format!("recursion is not supported: `{name}` calls itself"),
                    Some("GPUs have no call stack; rewrite it as a loop"),
                );
            }
            return self.push(ExprKind::Call { name: name.clone(), args }, span);
        }
        // `f32::sqrt(x)`, `f32::max(a, b)`: the method on a type path.
        if segs.len() == 2 {
            if let Some(ty) = Ty::from_name(&segs[0]).filter(|t| t.is_numeric()) {
                if let Some(op) = math_op(&segs[1]) {
                    let mut args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
                    if args.len() != math_arity(op) {
                        return self.error(
                            span,
                            format!("`{}` takes {} argument(s)", segs.join("::"), math_arity(op)),
                            None,
                        );
                    }
                    // `f32::sqrt(x)` pins the receiver's type, as rustc does.
                    let receiver_span = self.func().exprs[args[0]].span;
                    args[0] = self.push(ExprKind::Typed(args[0], ty), receiver_span);
                    return self.push(ExprKind::Math(op, args), span);
                }
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

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> ExprId {
        let span = m.span();
        let name = m.method.to_string();
        if m.turbofish.is_some() {
            return self.error(m.turbofish.span(), "turbofish is not supported in a kernel", None);
        }
        if let Some(e) = self.compare_exchange_is_ok(m) {
            return e;
        }
        if let Some(e) = self.atomic_call(m) {
            return e;
        }
        if name == "len" {
            if let Some(b) = self.buffer_of(&m.receiver) {
                return self.push(ExprKind::Len(b), span);
            }
            if let syn::Expr::Path(p) = strip_parens(&m.receiver) {
                if let Some(Binding::Shared(id)) = p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                    let n = self.func().shared[id].dims[0];
                    return self.push(ExprKind::Lit(Lit::Int(u128::from(n), Some(Ty::Usize))), span);
                }
            }
        }
        if name == "is_empty" {
            if let Some(b) = self.buffer_of(&m.receiver) {
                let len = self.push(ExprKind::Len(b), span);
                let zero = self.push(ExprKind::Lit(Lit::Int(0, Some(Ty::Usize))), span);
                return self.push(ExprKind::Binary(BinOp::Eq, len, zero), span);
            }
        }
        if self.is_rejected(&m.receiver) {
            self.report_silently();
            return self.push(ERROR_LIT, span);
        }
        let Some(op) = math_op(&name) else {
            if let Some(b) = self.buffer_of(&m.receiver) {
                let buffer = self.func().params[b].name.clone();
                return self.error(
                    m.method.span(),
                    format!("the method `{name}` is not supported on a buffer"),
                    Some(&format!("buffers have `len()` and `is_empty()`; loop over the indices instead: `for j in 0..{buffer}.len() {{ ... {buffer}[j] ... }}`")),
                );
            }
            // `a.iter().sum()`: report the first unsupported call of the chain only.
            if matches!(strip_parens(&m.receiver), syn::Expr::MethodCall(_)) {
                let before = self.diags.len();
                self.expr(&m.receiver);
                if self.diags.len() > before {
                    return self.push(ERROR_LIT, span);
                }
            }
            let help = suggest_method(&name);
            return self.error(
                m.method.span(),
                format!("the method `{name}` is not supported in a kernel"),
                Some(&help),
            );
        };
        let mut args = vec![self.expr(&m.receiver)];
        args.extend(m.args.iter().map(|a| self.expr(a)));
        let want = math_arity(op);
        if args.len() != want {
            return self.error(span, format!("`{name}` takes {} argument(s)", want - 1), None);
        }
        self.push(ExprKind::Math(op, args), span)
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> ExprId {
        use syn::BinOp as B;
        let span = b.span();
        let assign_op = match b.op {
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
        if let Some(op) = assign_op {
            let place = self.place(&b.left);
            let value = self.expr(&b.right);
            return match place {
                Some(place) => self.push(ExprKind::Assign { place, op: Some(op), value }, span),
                None => self.push(ERROR_LIT, span),
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

    fn place(&mut self, e: &syn::Expr) -> Option<Place> {
        if let Some(access) = self.shared_of(e) {
            let (shared, indices) = match access {
                Ok(access) => access,
                Err(d) => {
                    self.diags.push(d);
                    return None;
                }
            };
            if self.func().shared[shared].atomic {
                let name = self.func().shared[shared].name.clone();
                self.error(
                    e.span(),
                    format!("`{name}` holds atomics"),
                    Some("use `.store(v, Ordering::Relaxed)` or another atomic method"),
                );
                return None;
            }
            let indices = indices.into_iter().map(|i| self.expr(i)).collect();
            return Some(Place::Shared { shared, indices });
        }
        match e {
            syn::Expr::Paren(p) => self.place(&p.expr),
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Binding::Local(id)) => Some(Place::Local(id)),
                    Some(Binding::Param(id)) => match self.func().params[id].kind {
                        ParamKind::Scalar { .. } => Some(Place::Param(id)),
                        _ => {
                            self.error(
                                e.span(),
                                format!("cannot assign to the buffer `{name}` itself"),
                                Some(&format!("assign to an element: `{name}[i] = value`")),
                            );
                            None
                        }
                    },
                    Some(Binding::Rejected) => {
                        self.report_silently();
                        None
                    }
                    Some(Binding::Shared(_)) => {
                        self.error(
                            e.span(),
                            format!("cannot assign to the shared array `{name}` itself"),
                            Some(&format!("assign to an element: `{name}[i] = value`")),
                        );
                        None
                    }
                    None => {
                        self.report_silently();
                        None
                    }
                }
            }
            syn::Expr::Index(ix) => match self.buffer_of(&ix.expr) {
                Some(buffer) => {
                    if let ParamKind::Buffer { .. } = self.func().params[buffer].kind {
                        let name = self.func().params[buffer].name.clone();
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
                None if self.is_rejected(&ix.expr) => {
                    self.report_silently();
                    None
                }
                None => {
                    self.error(ix.expr.span(), "only buffer parameters can be indexed", None);
                    None
                }
            },
            _ if self.is_rejected(e) => {
                self.report_silently();
                None
            }
            _ => {
                self.error(
                    e.span(),
                    "cannot assign to this expression",
                    Some("assign to a `let mut` local or to a buffer element `out[i]`"),
                );
                None
            }
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
        let cond_text = quote::ToTokens::to_token_stream(&i.cond).to_string();
        let then = self.block(&i.then_branch);
        let else_ = i.else_branch.as_ref().map(|(_, e)| self.expr(e));
        self.push(ExprKind::If { cond, then, else_, cond_text }, span)
    }

    fn loop_body(&mut self, label: Option<String>, body: &syn::Block) -> Block {
        self.loop_labels.push(label);
        let b = self.block(body);
        self.loop_labels.pop();
        b
    }

    fn check_label(&mut self, label: Option<&str>, span: Span, what: &str) {
        if self.loop_labels.is_empty() {
            // rustc reports `break` outside a loop itself.
            self.report_silently();
            return;
        }
        if let Some(l) = label {
            if !self.loop_labels.iter().any(|x| x.as_deref() == Some(l)) {
                let _ = (span, what);
                self.report_silently();
            }
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> ExprId {
        let span = f.span();
        let label = f.label.as_ref().map(|l| l.name.ident.to_string());
        // `a..b`, `a..=b`, or `(a..b).step_by(s)`.
        let (range, step) = match &*f.expr {
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_parens(&m.receiver), Some(&m.args[0]))
            }
            other => (strip_parens(other), None),
        };
        let syn::Expr::Range(r) = range else {
            return self.error(
                f.expr.span(),
                "`for` loops run over integer ranges only",
                Some("write `for i in start..end` or `for i in (start..end).step_by(s)`"),
            );
        };
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
        let body = self.loop_body(label.clone(), &f.body);
        self.scopes.pop();
        self.push(ExprKind::Loop { label, kind: LoopKind::For { var, start, end, inclusive, step }, body }, span)
    }
}

/// A type as the user wrote it (`Vec<f32>`, not `Vec < f32 >`).
fn type_text(ty: &syn::Type) -> String {
    quote::ToTokens::to_token_stream(ty)
        .to_string()
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" ::", "::")
        .replace(":: ", "::")
}

/// `AtomicU32` / `AtomicI32` (any path ending so): the value type.
fn atomic_elem(ty: &syn::Type) -> Option<Ty> {
    let syn::Type::Path(p) = ty else { return None };
    match p.path.segments.last()?.ident.to_string().as_str() {
        "AtomicU32" => Some(Ty::U32),
        "AtomicI32" => Some(Ty::I32),
        _ => None,
    }
}

fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        other => other,
    }
}

/// The math methods a kernel may call, by Rust name.
pub fn math_op(name: &str) -> Option<MathOp> {
    use MathOp::*;
    Some(match name {
        "abs" => Abs,
        "sqrt" => Sqrt,
        "exp" => Exp,
        "exp2" => Exp2,
        "ln" => Ln,
        "log2" => Log2,
        "log10" => Log10,
        "powf" => Powf,
        "powi" => Powi,
        "pow" => Pow,
        "sin" => Sin,
        "cos" => Cos,
        "tan" => Tan,
        "asin" => Asin,
        "acos" => Acos,
        "atan" => Atan,
        "atan2" => Atan2,
        "sinh" => Sinh,
        "cosh" => Cosh,
        "tanh" => Tanh,
        "floor" => Floor,
        "ceil" => Ceil,
        "round" => Round,
        "trunc" => Trunc,
        "fract" => Fract,
        "min" => Min,
        "max" => Max,
        "clamp" => Clamp,
        "mul_add" => MulAdd,
        "signum" => Signum,
        "recip" => Recip,
        "to_radians" => ToRadians,
        "to_degrees" => ToDegrees,
        "hypot" => Hypot,
        "count_ones" => CountOnes,
        "leading_zeros" => LeadingZeros,
        "trailing_zeros" => TrailingZeros,
        "reverse_bits" => ReverseBits,
        "wrapping_add" => WrappingAdd,
        "wrapping_sub" => WrappingSub,
        "wrapping_mul" => WrappingMul,
        _ => return None,
    })
}

/// Number of arguments including the receiver.
pub fn math_arity(op: MathOp) -> usize {
    use MathOp::*;
    match op {
        Powf | Powi | Pow | Atan2 | Min | Max | Hypot | WrappingAdd | WrappingSub | WrappingMul => 2,
        Clamp | MulAdd => 3,
        _ => 1,
    }
}

const METHOD_NAMES: &[&str] = &[
    "abs",
    "sqrt",
    "exp",
    "exp2",
    "ln",
    "log2",
    "log10",
    "powf",
    "powi",
    "pow",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "min",
    "max",
    "clamp",
    "mul_add",
    "signum",
    "recip",
    "to_radians",
    "to_degrees",
    "hypot",
    "count_ones",
    "leading_zeros",
    "trailing_zeros",
    "reverse_bits",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "len",
];

/// "did you mean" for unsupported methods: a known alias, else the nearest
/// supported name by edit distance.
fn suggest_method(name: &str) -> String {
    let full = match name {
        "iter" | "into_iter" | "iter_mut" => {
            Some("loop over the indices instead: `for j in 0..a.len() { ... a[j] ... }`")
        }
        "get" | "get_mut" => Some("check the index, then index: `if i < a.len() { ... a[i] ... }`"),
        "clone" | "to_owned" | "copied" | "cloned" => {
            Some("scalars are `Copy`: use the value itself and drop the call")
        }
        "sin_cos" => Some("use `sin()` and `cos()`"),
        _ => None,
    };
    if let Some(h) = full {
        return h.to_string();
    }
    let alias = match name {
        "log" => Some("ln` (natural log) or `log2"),
        "pow" | "powf64" => Some("powf"),
        "saturating_add" | "checked_add" | "overflowing_add" => Some("wrapping_add"),
        "saturating_sub" | "checked_sub" => Some("wrapping_sub"),
        "checked_mul" | "saturating_mul" => Some("wrapping_mul"),
        "rsqrt" | "inverse_sqrt" => Some("sqrt().recip"),
        "exp_m1" => Some("exp"),
        "ln_1p" => Some("ln"),
        "cbrt" => Some("powf"),
        "copysign" => Some("signum"),
        _ => None,
    };
    if let Some(a) = alias {
        return format!("use `{a}`");
    }
    let best = METHOD_NAMES.iter().map(|m| (edit_distance(name, m), *m)).min();
    match best {
        Some((d, m)) if d <= 3 => format!("did you mean `{m}`? See docs/supported-rust.md for every supported method"),
        _ => "see docs/supported-rust.md for the supported math methods".to_string(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = if ca == *cb { 0 } else { 1 };
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `f32::MAX`, `i32::MIN`, `std::f32::consts::PI`, ...
fn named_const(segs: &[String]) -> Option<NamedConst> {
    let n = segs.len();
    if n < 2 {
        return None;
    }
    let (ty_name, name) = (segs[n - 2].as_str(), segs[n - 1].as_str());
    let f = |v: f32| Some(NamedConst { ty: Ty::F32, bits: v.to_bits() });
    match (ty_name, name) {
        ("f32", "MAX") => f(f32::MAX),
        ("f32", "MIN") => f(f32::MIN),
        ("f32", "MIN_POSITIVE") => f(f32::MIN_POSITIVE),
        ("f32", "EPSILON") => f(f32::EPSILON),
        ("f32", "INFINITY") => f(f32::INFINITY),
        ("f32", "NEG_INFINITY") => f(f32::NEG_INFINITY),
        ("f32", "NAN") => f(f32::NAN),
        ("consts", c) if n >= 3 && segs[n - 3] == "f32" => {
            use std::f32::consts as k;
            match c {
                "PI" => f(k::PI),
                "TAU" => f(k::TAU),
                "E" => f(k::E),
                "SQRT_2" => f(k::SQRT_2),
                "LN_2" => f(k::LN_2),
                "LN_10" => f(k::LN_10),
                "FRAC_PI_2" => f(k::FRAC_PI_2),
                "FRAC_PI_4" => f(k::FRAC_PI_4),
                "FRAC_1_SQRT_2" => f(k::FRAC_1_SQRT_2),
                "LOG2_E" => f(k::LOG2_E),
                _ => None,
            }
        }
        ("i32", "MAX") => Some(NamedConst { ty: Ty::I32, bits: i32::MAX as u32 }),
        ("i32", "MIN") => Some(NamedConst { ty: Ty::I32, bits: i32::MIN as u32 }),
        ("u32", "MAX") => Some(NamedConst { ty: Ty::U32, bits: u32::MAX }),
        ("u32", "MIN") => Some(NamedConst { ty: Ty::U32, bits: 0 }),
        _ => None,
    }
}
