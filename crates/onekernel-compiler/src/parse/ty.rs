//! Types as written: which ones a kernel can compute with, and what to say
//! about the others.

use super::{strip_type, Parser};
use crate::diagnostic::Diagnostic;
use crate::types::{unsupported_type_help, Compound, Ty};
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Parser<'_> {
    /// A type a local, a helper's parameter or its result may have: a
    /// scalar, an array `[T; N]` of them (nested too), or a tuple. Reports
    /// and returns None otherwise.
    pub(super) fn value_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        match strip_type(ty) {
            syn::Type::Array(a) if !self.names_generic(ty) => {
                let elem = self.value_type(&a.elem)?;
                let len = self.array_len(&a.len)?;
                let array = self.types.array(elem, len);
                self.check_array_size(self.types.array_elements(array), a.len.span())?;
                Some(array)
            }
            syn::Type::Tuple(t) if t.elems.len() >= 2 => {
                let elems = t.elems.iter().map(|e| self.value_type(e)).collect::<Option<Vec<Ty>>>()?;
                Some(self.types.intern(Compound::Tuple(elems)))
            }
            other => self.scalar_type(other),
        }
    }

    /// Reports an array of more than [`MAX_ARRAY_ELEMENTS`] elements (counted
    /// through nested arrays), which no GPU keeps per thread and whose size
    /// would overflow the GPU's 32-bit type sizes.
    pub(super) fn check_array_size(&mut self, elements: u64, span: Span) -> Option<()> {
        if elements <= MAX_ARRAY_ELEMENTS {
            return Some(());
        }
        self.diags.push(
            Diagnostic::new(span, format!("an array of {elements} elements is too large for a kernel"))
                .help(format!(
                    "a local array holds at most {MAX_ARRAY_ELEMENTS} elements (nested arrays counted together); keep large data in a buffer parameter"
                )),
        );
        None
    }

    /// The length of an array type or a repeat expression: an integer
    /// the compiler evaluates, or a value the launch sets (a const
    /// parameter or a constant of the kernel's scope, `[f32; TM]`), which
    /// stands as its placeholder ([`crate::types::Symbol`]).
    pub(super) fn array_len(&mut self, e: &syn::Expr) -> Option<u32> {
        if let Some(crate::hir::ConstValue::Int(n @ 1..)) = self.const_eval(e) {
            if let Ok(n) = u32::try_from(n) {
                return Some(n);
            }
        }
        if let Some(name) = self.launch_value(e) {
            let index = match self.lookup(&name) {
                Some(super::Binding::Override(i)) => i,
                _ => self.scope_constant(&name, e.span()),
            };
            // Rust's array lengths are `usize`: a constant of the scope
            // used as one is (rustc checks it in the CPU body, once: the
            // launch reads it as an integer of any type); a const parameter
            // of another type is rustc's error alone (the fallback shows it
            // at this length).
            let o = &mut self.f.overrides[index];
            if o.generic && o.ty != Some(Ty::Usize) {
                self.diags.push(Diagnostic::left_to_rustc(e.span()));
                return None;
            }
            if !o.generic && o.ty.is_none() {
                o.ty = Some(Ty::Usize);
            }
            if let Some(p) = self.types.symbolic_len(index, &name) {
                return Some(p);
            }
            self.diags.push(
                Diagnostic::new(
                    e.span(),
                    format!("too many different array lengths set at the launch: `{name}` is one more"),
                )
                .help("size arrays with at most 32 different const parameters or constants of the kernel's scope"),
            );
            return None;
        }
        if self.mentions_launch_value(e) {
            self.diags.push(
                Diagnostic::new(e.span(), "an array's length set at the launch is one name, not an expression of it")
                    .help("write `[f32; TM]` with one const parameter or constant; for a 2-D tile, nest the arrays: `[[f32; TN]; TM]`"),
            );
            return None;
        }
        self.diags.push(
            Diagnostic::new(e.span(), "an array's length must be fixed when the kernel is compiled").help(
                "write the length as an integer literal such as `16`, a constant (`const TILE: usize = 16;`) or a const parameter (`fn k<const TILE: usize>`)",
            ),
        );
        None
    }

    /// Whether `e` names a value the launch sets ([`Parser::launch_value`])
    /// anywhere in it.
    pub(super) fn mentions_launch_value(&self, e: &syn::Expr) -> bool {
        fn walk(p: &Parser<'_>, ts: proc_macro2::TokenStream) -> bool {
            ts.into_iter().any(|t| match t {
                proc_macro2::TokenTree::Ident(i) => p.is_launch_value(&i.to_string()),
                proc_macro2::TokenTree::Group(g) => walk(p, g.stream()),
                _ => false,
            })
        }
        walk(self, quote::ToTokens::to_token_stream(e))
    }

    /// The name of a value the launch sets that `e` is: a const parameter,
    /// or a constant of the kernel's Rust scope (a name it does not
    /// define, written as a constant).
    pub(super) fn launch_value(&self, e: &syn::Expr) -> Option<String> {
        let syn::Expr::Path(p) = super::strip(e) else { return None };
        let name = p.path.get_ident()?.to_string();
        self.is_launch_value(&name).then_some(name)
    }

    fn is_launch_value(&self, name: &str) -> bool {
        match self.lookup(name) {
            Some(super::Binding::Override(_)) => true,
            None => {
                self.role == super::FnRole::Kernel
                    && super::expr::looks_like_const(name)
                    && self.module.consts.iter().all(|c| c.ident != name)
            }
            _ => false,
        }
    }

    /// A scalar type such as `f32`; reports and returns None otherwise.
    pub(super) fn scalar_type(&mut self, ty: &syn::Type) -> Option<Ty> {
        let ty = strip_type(ty);
        if self.names_generic(ty) {
            // The generics were reported once, at the signature.
            return None;
        }
        match ty {
            syn::Type::Path(tp) if tp.qself.is_none() => {
                let last = tp.path.segments.last()?;
                let name = last.ident.to_string();
                if let Some(role) = crate::types::TileRole::from_name(&name) {
                    return self.tile_type(role, &last.arguments, last.span()).map(Ty::Tile);
                }
                // A generic kernel's `T` is a one-segment path.
                let named = if tp.path.segments.len() == 1 { self.named_ty(&name) } else { Ty::from_name(&name) };
                if let Some(t) = named {
                    if last.arguments.is_empty() {
                        return Some(t);
                    }
                }
                if let Some(t) = self.types.struct_named(&name) {
                    if last.arguments.is_empty() {
                        return Some(t);
                    }
                }
                if let Some(problems) = self.module.unusable_structs.get(&name) {
                    // At the member that is the problem (the struct's first
                    // problem), once per function however often it is named.
                    let (first, rest) = problems.split_first()?;
                    let message = format!("the struct `{name}` cannot be used in a kernel: {}", first.message);
                    if !self.diags.has_message(&message) {
                        let mut d = Diagnostic::new(first.span, message);
                        d.help = first.help.clone();
                        for p in rest {
                            d = d.note(p.message.to_string());
                        }
                        d = d.note(format!(
                            "a kernel names `{name}`, so its fields must be types the GPU shares with the host byte for byte"
                        ));
                        self.diags.push(d);
                    }
                    return None;
                }
                if name.chars().next().is_some_and(char::is_uppercase) && unsupported_type_help(&name).is_none() {
                    self.diags.push(
                        Diagnostic::new(ty.span(), format!("kernels cannot see the type `{name}`")).help(format!(
                            "if `{name}` is your struct, declare it in a `#[onekernel::kernels] mod` together with the kernel; the module shows the kernel its structs and constants"
                        )),
                    );
                    return None;
                }
                let help = unsupported_type_help(&name)
                    .unwrap_or("kernels compute with `f32`, `i32`, `u32`, `usize`, `bool`, `f16`, `f64`, `i64`, `u64`, glam vectors, arrays, tuples and the structs of a `#[onekernel::kernels]` module");
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
                    Diagnostic::new(ty.span(), "trait objects and `impl Trait` are not supported in a kernel").help(
                        "a kernel cannot take a function or closure; write a `#[helper]` function and call it, or pass an `f32`, `i32` or `u32`",
                    ),
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
                self.diags.push(Diagnostic::new(ty.span(), "arrays are not supported here").help(
                    "take a `&[T]` buffer parameter, or hold the array in a local: `let mut acc = [0.0f32; 16];`",
                ));
                None
            }
            _ => {
                self.diags.push(
                    Diagnostic::new(ty.span(), format!("the type `{}` is not supported in a kernel", type_text(ty)))
                        .help("kernels compute with `f32`, `i32`, `u32`, `usize`, `bool`, `f16`, `f64`, `i64`, `u64`, glam vectors, arrays, tuples and the structs of a `#[onekernel::kernels]` module"),
                );
                None
            }
        }
    }

    /// True when `ty` mentions one of the function's generic parameters.
    pub(super) fn names_generic(&self, ty: &syn::Type) -> bool {
        if self.generics.is_empty() {
            return false;
        }
        let text = quote::ToTokens::to_token_stream(ty);
        let mut found = false;
        fn walk(ts: proc_macro2::TokenStream, generics: &[String], found: &mut bool) {
            for t in ts {
                match t {
                    proc_macro2::TokenTree::Ident(i) => *found |= generics.iter().any(|g| i == g),
                    proc_macro2::TokenTree::Group(g) => walk(g.stream(), generics, found),
                    _ => {}
                }
            }
        }
        walk(text, &self.generics, &mut found);
        found
    }
}

/// A type as the user wrote it (`Vec<f32>`, not `Vec < f32 >`).
pub(super) fn type_text(ty: &syn::Type) -> String {
    crate::diagnostic::code(ty)
}

/// `AtomicU32` / `AtomicI32` (any path ending so): the value type.
pub(super) fn atomic_elem(ty: &syn::Type) -> Option<Ty> {
    let syn::Type::Path(p) = strip_type(ty) else { return None };
    match p.path.segments.last()?.ident.to_string().as_str() {
        "AtomicU32" => Some(Ty::U32),
        "AtomicI32" => Some(Ty::I32),
        _ => None,
    }
}

/// The most elements a local array may have, nested arrays counted together:
/// 2^20, so that even 16-byte elements stay far below the 4 GiB a GPU type
/// may take (naga panics past it).
pub const MAX_ARRAY_ELEMENTS: u64 = 1 << 20;
