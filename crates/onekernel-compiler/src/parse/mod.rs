//! The recogniser: syn's AST → [`crate::hir`]. It accepts exactly the
//! documented subset of Rust and turns everything else into a spanned
//! [`Diagnostic`] that says what to write instead. It is the only place
//! that looks at syn's tree: every back end (naga, the CPU body, the
//! explain view) works from what it produces.
//!
//! Parsing continues after an error so that independent problems are all
//! reported in one build, but each problem is reported once: a rejected
//! parameter, local or expression becomes `Binding::Rejected` or
//! [`ExprKind::Error`], and its uses report nothing more.
//!
//! One module per kind of syntax: `expr` (expressions), `ty` (types),
//! `coop` (shared memory, barriers and atomics).

mod consts;
mod coop;
pub(crate) mod debug;
mod expr;
mod generics;
mod items;
mod tile;
mod ty;

pub(crate) use expr::looks_like_const;
pub use generics::{const_params, generic_param, replace_ident, ConstParam, CONST_PARAM_TYPES};
pub use items::{define_structs, ModuleItems, ModuleScope};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::hir::*;
use crate::types::{Ty, TypeTable};
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

impl FnRole {
    fn what(self) -> &'static str {
        match self {
            FnRole::Kernel => "a kernel",
            FnRole::Helper => "a helper function",
        }
    }
}

/// Recognises one function of the given role. Compound types it meets are
/// interned in `types`, which the kernel and its helpers share.
pub fn parse_function(item: &syn::ItemFn, role: FnRole, types: &mut TypeTable) -> Result<Function, Vec<Diagnostic>> {
    parse_function_in(item, role, types, &ModuleScope::default())
}

/// [`parse_function`] inside a `#[onekernel::kernels]` module: the
/// module's constants are in scope (evaluated when used), and its structs
/// are in `types` (see [`define_structs`]).
pub fn parse_function_in(
    item: &syn::ItemFn,
    role: FnRole,
    types: &mut TypeTable,
    scope: &ModuleScope,
) -> Result<Function, Vec<Diagnostic>> {
    parse_function_at(item, role, types, scope, None)
}

/// [`parse_function_in`] for one instantiation of a generic kernel
/// (`fn axpy<T: Num>`): its type parameter stands for `instance` (for the
/// first type of its bound when None). A function that is not generic
/// ignores `instance`.
pub fn parse_function_at(
    item: &syn::ItemFn,
    role: FnRole,
    types: &mut TypeTable,
    scope: &ModuleScope,
    instance: Option<Ty>,
) -> Result<Function, Vec<Diagnostic>> {
    let mut p = Parser {
        types,
        diags: Diagnostics::default(),
        f: Function::named(item.sig.ident.to_string(), item.sig.ident.span()),
        scopes: vec![HashMap::new()],
        role,
        loop_labels: Vec::new(),
        generics: Vec::new(),
        instance: None,
        module: scope,
    };
    if role == FnRole::Kernel {
        if let Ok(Some(g)) = generic_param(&item.sig) {
            let ty = instance.unwrap_or(g.bound.types()[0]);
            p.instance = Some((g.name, ty));
        }
    }
    p.signature(&item.sig);
    if role == FnRole::Kernel {
        // Const parameters: `override`s, in order (their ids follow it).
        for c in const_params(&item.sig) {
            let index = p.f.overrides.len();
            p.f.overrides.push(crate::hir::OverrideDecl {
                name: c.name.clone(),
                ty: Some(c.ty),
                span: c.span,
                generic: true,
                any_int: false,
            });
            p.scopes[0].insert(c.name, Binding::Override(index));
        }
    }
    p.f.body = p.block(&item.block);
    p.diags.finish(p.f)
}

/// What a name in scope stands for.
#[derive(Clone, Copy)]
enum Binding {
    Local(LocalId),
    Param(ParamId),
    /// A workgroup shared array.
    Shared(SharedId),
    /// A constant.
    Const(ConstId),
    /// A const parameter or a constant of the kernel's scope: index into
    /// `Function::overrides`.
    Override(usize),
    /// Something whose declaration was rejected (and reported): its uses
    /// are not reported again.
    Rejected,
}

struct Parser<'t> {
    /// The program's compound types.
    types: &'t mut TypeTable,
    diags: Diagnostics,
    f: Function,
    scopes: Vec<HashMap<String, Binding>>,
    role: FnRole,
    /// Labels of the enclosing loops, innermost last (None = unlabelled).
    loop_labels: Vec<Option<String>>,
    /// The names of the function's generic parameters, already reported:
    /// types that name them are rejected silently.
    generics: Vec<String>,
    /// A generic kernel's type parameter and the type it stands for in the
    /// instantiation being parsed.
    instance: Option<(String, Ty)>,
    /// The `#[onekernel::kernels]` module around the function, if any.
    module: &'t ModuleScope,
}

/// The names of a function's type and const parameters.
fn generic_names(sig: &syn::Signature) -> Vec<String> {
    sig.generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect()
}

/// Looks through the invisible groups `macro_rules!` wraps around `$e:expr`
/// fragments, and through parentheses.
fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

/// Looks through the invisible groups around `$t:ty` fragments.
fn strip_type(t: &syn::Type) -> &syn::Type {
    match t {
        syn::Type::Group(g) => strip_type(&g.elem),
        syn::Type::Paren(p) => strip_type(&p.elem),
        other => other,
    }
}

impl Parser<'_> {
    fn push(&mut self, kind: ExprKind, span: Span) -> ExprId {
        self.f.exprs.append(Expr { kind, span })
    }

    /// Reports `msg` (with an optional help) and returns an error
    /// expression.
    fn error(&mut self, span: Span, msg: impl Into<String>, help: Option<&str>) -> ExprId {
        let mut d = Diagnostic::new(span, msg);
        if let Some(h) = help {
            d = d.help(h);
        }
        self.diags.push(d);
        self.push(ExprKind::Error, span)
    }

    /// An error expression for a problem rustc reports itself (an unknown
    /// name, ...): the kernel is not lowered, and rustc's message is the
    /// one the user sees.
    fn left_to_rustc(&mut self, span: Span) -> ExprId {
        self.diags.left_to_rustc(span);
        self.push(ExprKind::Error, span)
    }

    /// An error expression for something already reported.
    fn already_reported(&mut self, span: Span) -> ExprId {
        self.push(ExprKind::Error, span)
    }

    fn is_error(&self, e: ExprId) -> bool {
        matches!(self.f.exprs[e].kind, ExprKind::Error)
    }

    // ---- the signature --------------------------------------------------

    fn signature(&mut self, sig: &syn::Signature) {
        let what = self.role.what();
        if let Some(a) = &sig.asyncness {
            self.diags.error(a.span(), format!("{what} cannot be `async`"));
        }
        if let Some(u) = &sig.unsafety {
            self.diags.push(
                Diagnostic::new(u.span(), format!("{what} cannot be `unsafe`"))
                    .help("remove `unsafe`: kernels are safe Rust"),
            );
        }
        if let Some(c) = &sig.constness {
            self.diags.error(c.span(), format!("{what} cannot be `const`"));
        }
        let generic = match self.role {
            FnRole::Kernel => generic_param(sig),
            FnRole::Helper => Ok(None),
        };
        if let Err(errors) = generic {
            // One error per problem; parameters whose types name the
            // generics are rejected silently.
            self.generics = generic_names(sig);
            self.diags.extend(errors);
        } else if self.role == FnRole::Helper
            && (!sig.generics.params.is_empty() || sig.generics.where_clause.is_some())
        {
            // One error for the generics; parameters whose types name them
            // are rejected silently.
            self.generics = generic_names(sig);
            self.diags.push(
                Diagnostic::new(sig.generics.span(), format!("{what} cannot be generic")).help(
                    "write one helper per element type, e.g. `fn scale_f32(...)`; only kernels are generic (`fn k<T: Num>`)",
                ),
            );
        }
        if let Some(v) = &sig.variadic {
            self.diags.error(v.span(), "variadic functions are not supported");
        }
        self.f.ret = match (&sig.output, self.role) {
            (syn::ReturnType::Default, _) => Ty::Unit,
            (syn::ReturnType::Type(_, ty), FnRole::Kernel) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), "a kernel cannot return a value")
                        .help("write results into a `&mut [T]` parameter, e.g. `out[i] = value;`"),
                );
                Ty::Unit
            }
            (syn::ReturnType::Type(_, ty), FnRole::Helper) => self.value_type(ty).unwrap_or(Ty::Unit),
        };
        for input in &sig.inputs {
            self.param(input);
        }
    }

    fn param(&mut self, input: &syn::FnArg) {
        let syn::FnArg::Typed(pt) = input else {
            self.diags.error(input.span(), "kernels and helpers are free functions; `self` is not supported");
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
        match self.param_kind(pt, mutable) {
            Some(kind) => {
                let id = self.f.params.append(Param {
                    name: name.clone(),
                    span: pt.pat.span(),
                    kind,
                    written_ty: self.instantiate(&pt.ty),
                });
                self.scopes[0].insert(name, Binding::Param(id));
            }
            None => self.reject(name),
        }
    }

    /// How a parameter is passed; None (reported) when its type is not
    /// supported.
    fn param_kind(&mut self, pt: &syn::PatType, mutable: bool) -> Option<ParamKind> {
        let ty = strip_type(&pt.ty);
        let syn::Type::Reference(r) = ty else {
            let t = match self.role {
                FnRole::Helper => self.value_type(ty)?,
                FnRole::Kernel => self.scalar_type(ty)?,
            };
            let is_struct = self.types.as_struct(t).is_some();
            return match t {
                // A vector is uniform data too; glam's 12-byte `Vec3` fits
                // there (the runtime places it at WGSL's 16-byte alignment).
                t @ (Ty::F32 | Ty::I32 | Ty::U32 | Ty::F16 | Ty::F64 | Ty::I64 | Ty::U64 | Ty::Vector(_)) => {
                    Some(ParamKind::Scalar { ty: t, mutable })
                }
                // A struct of the module: a member of the uniform block.
                t @ Ty::Compound(_) if is_struct => Some(ParamKind::Scalar { ty: t, mutable }),
                t @ (Ty::Bool | Ty::Usize | Ty::Compound(_)) if self.role == FnRole::Helper => {
                    Some(ParamKind::Scalar { ty: t, mutable })
                }
                t => {
                    self.diags
                        .push(Diagnostic::new(ty.span(), format!("a kernel cannot take a `{t}` parameter")).help(
                        "a kernel takes by value `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64`, glam vectors and the structs of its module (uniform data); pass a `u32` and convert with `as`",
                    ));
                    None
                }
            };
        };
        let mutable_ref = r.mutability.is_some();
        let elem = strip_type(&r.elem);
        // `&[AtomicU32]` / `&[AtomicI32]`: a buffer of atomics.
        if let syn::Type::Slice(s) = elem {
            if let Some(elem) = ty::atomic_elem(&s.elem) {
                if self.role == FnRole::Helper {
                    self.diags.push(
                        Diagnostic::new(pt.ty.span(), "helper functions cannot take buffers")
                            .help("do the atomic operation in the kernel"),
                    );
                    return None;
                }
                if mutable_ref {
                    self.diags.push(
                        Diagnostic::new(pt.ty.span(), "a buffer of atomics is written through a shared reference")
                            .help(format!(
                                "write `&[Atomic{}]`: atomics are changed through `&`, like in Rust",
                                if elem == Ty::I32 { "I32" } else { "U32" }
                            )),
                    );
                    return None;
                }
                return Some(ParamKind::Atomics { elem });
            }
        }
        let elem_ty = match elem {
            syn::Type::Slice(s) => self.scalar_type(&s.elem),
            // `&dyn Fn(..)`, `&impl Trait`, `&*const T`: say what the
            // pointee is rather than "a reference".
            other @ (syn::Type::TraitObject(_) | syn::Type::ImplTrait(_) | syn::Type::Ptr(_)) => {
                self.scalar_type(other);
                None
            }
            other if self.names_generic(other) => None,
            other => {
                let help = if mutable_ref {
                    "a kernel cannot write through `&mut` to a single value; take a `&mut [T]` buffer and write element 0"
                } else {
                    "pass scalars by value (`x: f32`) or buffers as `&[T]`"
                };
                self.diags.push(
                    Diagnostic::new(other.span(), "references to single values are not supported as parameters")
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
            return None;
        }
        if mutable {
            self.diags.push(
                Diagnostic::new(pt.pat.span(), "a buffer parameter cannot be `mut`")
                    .help("remove `mut`; `&mut [T]` already lets the kernel write elements"),
            );
            return None;
        }
        let elem_ty = elem_ty?;
        let is_struct = self.types.as_struct(elem_ty).is_some();
        match elem_ty {
            elem @ (Ty::F32 | Ty::I32 | Ty::U32 | Ty::F16 | Ty::F64 | Ty::I64 | Ty::U64) => {
                Some(if mutable_ref { ParamKind::BufferMut { elem } } else { ParamKind::Buffer { elem } })
            }
            elem @ Ty::Compound(_) if is_struct => {
                Some(if mutable_ref { ParamKind::BufferMut { elem } } else { ParamKind::Buffer { elem } })
            }
            elem @ Ty::Vector(v) if v.wgsl_layout().is_some() => {
                Some(if mutable_ref { ParamKind::BufferMut { elem } } else { ParamKind::Buffer { elem } })
            }
            Ty::Vector(v) => {
                self.diags.push(
                    Diagnostic::new(
                        r.elem.span(),
                        format!(
                            "buffers of `{0}` are not supported: glam's `{0}` takes 12 bytes, and the GPU's `vec3` takes 16 in an array",
                            v.name()
                        ),
                    )
                    .help(format!("use {}", v.aligned_alternative())),
                );
                None
            }
            elem => {
                self.diags
                    .push(Diagnostic::new(r.elem.span(), format!("buffers of `{elem}` are not supported")).help(
                        "buffer elements are `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64`, glam vectors (`Vec4`, ...) or structs of the module",
                    ));
                None
            }
        }
    }

    // ---- scopes ---------------------------------------------------------

    /// Binds a name whose declaration was rejected, so that its uses in the
    /// body do not cascade into more errors.
    fn reject(&mut self, name: String) {
        self.scopes.last_mut().expect("scope").insert(name, Binding::Rejected);
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Looks `name` up, bringing in a constant of the kernel's module on
    /// first use (evaluated then, so that host-only constants of other
    /// types never matter).
    fn lookup_or_module_const(&mut self, name: &str) -> Option<Binding> {
        if let Some(b) = self.lookup(name) {
            return Some(b);
        }
        let item = self.module.consts.iter().find(|c| c.ident == name)?.clone();
        // Bound at the outermost scope, so it is evaluated once.
        let outer = std::mem::take(&mut self.scopes[0]);
        let saved = std::mem::replace(&mut self.scopes, vec![outer]);
        self.scopes[0].insert(name.to_string(), Binding::Rejected);
        let id = self.const_item(&item);
        let outer = std::mem::take(&mut self.scopes[0]);
        self.scopes = saved;
        self.scopes[0] = outer;
        match id {
            Some(id) => Some(Binding::Const(id)),
            None => Some(Binding::Rejected),
        }
    }

    fn declare(&mut self, name: String, span: Span, mutable: bool, annotated: Option<Ty>) -> LocalId {
        let id = self.f.locals.append(Local { name: name.clone(), span, mutable, annotated });
        self.scopes.last_mut().expect("scope").insert(name, Binding::Local(id));
        id
    }

    /// The parameter an expression names, if it is a plain path to one.
    fn param_of(&self, e: &syn::Expr) -> Option<ParamId> {
        let syn::Expr::Path(p) = strip(e) else { return None };
        match self.lookup(&p.path.get_ident()?.to_string())? {
            Binding::Param(id) => Some(id),
            _ => None,
        }
    }

    /// The buffer parameter an expression names.
    fn buffer_of(&self, e: &syn::Expr) -> Option<ParamId> {
        self.param_of(e).filter(|p| self.f.params[*p].kind.is_buffer())
    }

    /// True when `e` is (a deref, index, field or method of) something
    /// already rejected.
    fn is_rejected(&self, e: &syn::Expr) -> bool {
        match strip(e) {
            syn::Expr::Path(p) => {
                p.path.get_ident().is_some_and(|i| matches!(self.lookup(&i.to_string()), Some(Binding::Rejected)))
            }
            syn::Expr::Unary(u) => self.is_rejected(&u.expr),
            syn::Expr::Index(ix) => self.is_rejected(&ix.expr),
            syn::Expr::Field(f) => self.is_rejected(&f.base),
            syn::Expr::MethodCall(m) => self.is_rejected(&m.receiver),
            _ => false,
        }
    }

    // ---- blocks and statements -----------------------------------------

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
                syn::Stmt::Item(syn::Item::Const(c)) => match self.const_item(c) {
                    Some(id) => out.stmts.push(Stmt::Const(id)),
                    None => self.reject(c.ident.to_string()),
                },
                syn::Stmt::Item(item) => self.item_in_body(item),
                syn::Stmt::Macro(m) => {
                    let id = match self.debug_macro(&m.mac) {
                        Some(id) => id,
                        None => self.macro_error(&m.mac),
                    };
                    out.stmts.push(Stmt::Expr(id));
                }
            }
        }
        self.scopes.pop();
        out
    }

    fn item_in_body(&mut self, item: &syn::Item) {
        let (what, help) = match item {
            syn::Item::Const(_) => {
                ("a `const` item", "write the value where it is used, or pass it as a scalar parameter")
            }
            syn::Item::Fn(_) => ("a nested function", "move it out of the kernel and mark it `#[helper]`"),
            _ => ("an item", "move it out of the kernel"),
        };
        self.diags.push(Diagnostic::new(item.span(), format!("{what} cannot be declared inside a kernel")).help(help));
    }

    fn let_stmt(&mut self, local: &syn::Local, out: &mut Block) {
        if let Some((_, diverge)) = local.init.as_ref().and_then(|i| i.diverge.as_ref()) {
            self.diags.push(
                Diagnostic::new(diverge.span(), "`let ... else` is not supported in a kernel")
                    .help("use `if` / `else`"),
            );
        }
        if let Some(init) = &local.init {
            let before = self.diags.len();
            if self.shared_decl(local, &init.expr, out) {
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
            syn::Pat::Type(pt) => (&*pt.pat, self.value_type(&pt.ty)),
            p => (p, None),
        };
        // A rejected type annotation is the one problem of this `let`: its
        // initializer (`Vec::new()`, `Box::new(x)`) is not reported again.
        let init = if self.diags.len() > before { None } else { local.init.as_ref().map(|i| self.expr(&i.expr)) };
        // After an error in the type or the initializer (`let r = &x;`,
        // `let v = a.get(i)?;`), uses of the name (`*r`) are not reported.
        let failed = self.diags.len() > before || init.is_some_and(|i| self.is_error(i));
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
            syn::Pat::Tuple(t) if !failed && t.elems.len() >= 2 => self.let_tuple(t, annotated, init, out),
            other => {
                self.diags.push(
                    Diagnostic::new(other.span(), "only simple `let name = ...` bindings are supported")
                        .help("bind each value to its own name: `let a = ...; let b = ...;`"),
                );
            }
        }
    }

    /// `let (a, b) = init;`: each element a plain name (or `_`).
    fn let_tuple(&mut self, t: &syn::PatTuple, annotated: Option<Ty>, init: Option<ExprId>, out: &mut Block) {
        let Some(init) = init else {
            self.diags
                .push(Diagnostic::new(t.span(), "a tuple binding needs a value").help("write `let (a, b) = value;`"));
            return;
        };
        let elem_types: Option<Vec<Ty>> = annotated.and_then(|a| self.types.as_tuple(a)).map(<[Ty]>::to_vec);
        let mut names = Vec::new();
        for (i, p) in t.elems.iter().enumerate() {
            let annotated = elem_types.as_ref().and_then(|e| e.get(i).copied());
            match p {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    names.push((pi.ident.to_string(), pi.ident.span(), pi.mutability.is_some(), annotated))
                }
                syn::Pat::Wild(w) => names.push(("_".to_string(), w.span(), false, annotated)),
                other => {
                    self.diags.push(
                        Diagnostic::new(other.span(), "only plain names can be bound from a tuple")
                            .help("write `let (a, b) = value;`"),
                    );
                    return;
                }
            }
        }
        // Declared after the initializer, as in Rust.
        let locals = names.into_iter().map(|(n, span, m, a)| self.declare(n, span, m, a)).collect();
        out.stmts.push(Stmt::LetTuple { locals, init });
    }

    fn macro_error(&mut self, mac: &syn::Macro) -> ExprId {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let help = match name.as_str() {
            "dbg" => "print the value with `println!(\"{x:?}\")`",
            "vec" => "a kernel cannot allocate; take a `&mut [T]` buffer parameter",
            "format" | "write" | "writeln" => {
                "a kernel has no strings; write the numbers into an output buffer and format them on the host"
            }
            _ => "expand the macro by hand",
        };
        self.error(mac.span(), format!("macros such as `{name}!` are not supported in a kernel"), Some(help))
    }
}
