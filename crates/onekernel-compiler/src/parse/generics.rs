//! A generic kernel's signature: `fn axpy<T: Num>(..)` (or `where T: Num`).
//!
//! A kernel may have one type parameter, bounded by one of the element
//! traits of `onekernel::num` ([`crate::builtins::ELEMENT_BOUNDS`]). The
//! kernel is then parsed once per type of the bound with the parameter
//! standing for that type (the parser's `instance`), so every later stage
//! sees an ordinary kernel; rustc checks the generic body once, with the
//! bound.

use super::{strip_type, Parser};
use crate::builtins;
use crate::diagnostic::Diagnostic;
use crate::hir::GenericParam;
use crate::types::Ty;
use proc_macro2::{Group, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;

const BOUND_HELP: &str = "bound it by `Num` (every kernel scalar type), `Float` (`f32`, `f64`) or `Int` (`i32`, `u32`, `i64`, `u64`), from `onekernel::prelude`";

/// The kernel's type parameter, if it has one; one error per problem of
/// its generics otherwise.
pub fn generic_param(sig: &syn::Signature) -> Result<Option<GenericParam>, Vec<Diagnostic>> {
    let g = &sig.generics;
    if g.params.is_empty() && g.where_clause.is_none() {
        return Ok(None);
    }
    let mut errors = Vec::new();
    let mut found: Option<&syn::TypeParam> = None;
    for p in &g.params {
        match p {
            syn::GenericParam::Lifetime(l) => errors.push(
                Diagnostic::new(l.span(), "a kernel cannot have lifetime parameters")
                    .help("remove the lifetime: a kernel's buffers are borrowed for the launch only"),
            ),
            syn::GenericParam::Const(c) => errors.extend(const_param_problem(c)),
            syn::GenericParam::Type(t) if found.is_some() => {
                errors.push(Diagnostic::new(t.span(), "a kernel has at most one type parameter").help(
                    "write one element type parameter, `fn name<T: Num>(..)`, and use it for every generic element",
                ))
            }
            syn::GenericParam::Type(t) => {
                if let Some(d) = &t.default {
                    errors.push(
                        Diagnostic::new(d.span(), "a kernel's type parameter cannot have a default")
                            .help("remove `= ..`: the launch picks the type from its arguments"),
                    );
                }
                found = Some(t);
            }
        }
    }
    // Every bound of the parameter, inline or in the `where` clause.
    let mut bounds: Vec<&syn::TypeParamBound> = Vec::new();
    if let Some(t) = found {
        bounds.extend(&t.bounds);
    }
    for pred in g.where_clause.iter().flat_map(|w| &w.predicates) {
        let syn::WherePredicate::Type(pt) = pred else {
            errors.push(
                Diagnostic::new(pred.span(), "this `where` clause is not supported in a kernel")
                    .help("a kernel's `where` clause may only bound its type parameter: `where T: Num`"),
            );
            continue;
        };
        let names_param = match (strip_type(&pt.bounded_ty), found) {
            (syn::Type::Path(p), Some(t)) => p.qself.is_none() && p.path.is_ident(&t.ident),
            _ => false,
        };
        if !names_param || pt.lifetimes.is_some() {
            errors.push(
                Diagnostic::new(pt.bounded_ty.span(), "this `where` clause is not supported in a kernel")
                    .help("a kernel's `where` clause may only bound its type parameter: `where T: Num`"),
            );
            continue;
        }
        bounds.extend(&pt.bounds);
    }
    let Some(t) = found else {
        // Const parameters only (or errors).
        return if errors.is_empty() { Ok(None) } else { Err(errors) };
    };
    let mut bound = None;
    for b in bounds {
        match element_bound(b) {
            Some(_) if bound.is_some() => errors.push(
                Diagnostic::new(b.span(), "a kernel's type parameter takes one bound")
                    .help("keep the narrowest of `Num`, `Float` and `Int`"),
            ),
            Some(eb) => bound = Some(eb),
            None => errors.push(
                Diagnostic::new(b.span(), format!("`{}` is not an element-type bound", crate::diagnostic::code(b)))
                    .help(BOUND_HELP),
            ),
        }
    }
    if bound.is_none() && errors.is_empty() {
        errors.push(
            Diagnostic::new(t.ident.span(), format!("the kernel's type parameter `{}` needs a bound", t.ident))
                .help(format!("write `{}: Num`; {BOUND_HELP}", t.ident)),
        );
    }
    match bound {
        Some(bound) if errors.is_empty() => Ok(Some(GenericParam { name: t.ident.to_string(), bound, span: t.span() })),
        _ => Err(errors),
    }
}

/// The types a kernel's const parameter may have: those of a WGSL
/// `override` that Rust allows as a const parameter (`usize` is `u32` on
/// the GPU).
pub const CONST_PARAM_TYPES: [(&str, Ty); 3] = [("u32", Ty::U32), ("i32", Ty::I32), ("usize", Ty::Usize)];

/// A kernel's const parameter, `const N: u32`, as recognised.
#[derive(Clone, Debug)]
pub struct ConstParam {
    /// Its name.
    pub name: String,
    /// Its type, one of [`CONST_PARAM_TYPES`].
    pub ty: Ty,
    /// The parameter as written.
    pub span: proc_macro2::Span,
}

/// The problem with a const parameter, if any.
fn const_param_problem(c: &syn::ConstParam) -> Option<Diagnostic> {
    if let Some(d) = &c.default {
        // rustc: "defaults for generic parameters are not allowed here".
        return Some(Diagnostic::left_to_rustc(d.span()));
    }
    match const_param_type(&c.ty) {
        Some(_) => None,
        None => Some(
            Diagnostic::new(
                c.ty.span(),
                format!("a kernel's const parameter cannot be of type `{}`", crate::diagnostic::code(&c.ty)),
            )
            .note("each const parameter becomes a WGSL `override`, a 32-bit value set when the pipeline is created")
            .help(format!("write `const {}: u32`, `i32` or `usize`", c.ident)),
        ),
    }
}

fn const_param_type(ty: &syn::Type) -> Option<Ty> {
    let syn::Type::Path(p) = strip_type(ty) else { return None };
    let ident = p.path.get_ident()?.to_string();
    if p.qself.is_some() {
        return None;
    }
    CONST_PARAM_TYPES.iter().find(|(n, _)| *n == ident).map(|(_, t)| *t)
}

/// The kernel's const parameters, in order (those [`generic_param`]
/// accepts; it reports the others).
pub fn const_params(sig: &syn::Signature) -> Vec<ConstParam> {
    sig.generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Const(c) if c.default.is_none() => {
                Some(ConstParam { name: c.ident.to_string(), ty: const_param_type(&c.ty)?, span: c.ident.span() })
            }
            _ => None,
        })
        .collect()
}

/// `Num`, `onekernel::num::Float`, ...: the bound, if it is one of ours.
fn element_bound(b: &syn::TypeParamBound) -> Option<crate::hir::ElemBound> {
    let syn::TypeParamBound::Trait(t) = b else { return None };
    if t.lifetimes.is_some() || !matches!(t.modifier, syn::TraitBoundModifier::None) {
        return None;
    }
    let last = t.path.segments.last()?;
    if !last.arguments.is_empty() {
        return None;
    }
    builtins::element_bound(&last.ident.to_string())
}

impl Parser<'_> {
    /// The type a type name stands for: a scalar's name, or the generic
    /// parameter in the instantiation being parsed.
    pub(super) fn named_ty(&self, name: &str) -> Option<Ty> {
        match &self.instance {
            Some((param, ty)) if param == name => Some(*ty),
            _ => Ty::from_name(name),
        }
    }

    /// `tokens` (a type, a callee path) with the generic parameter
    /// replaced by the instantiation's type: what the CPU body repeats as
    /// written (`&[T]` becomes `&[f32]`, `shared::<[T; 64]>` becomes
    /// `shared::<[f32; 64]>`).
    pub(super) fn instantiate<X: syn::parse::Parse + ToTokens + Clone>(&self, tokens: &X) -> X {
        let Some((param, t)) = &self.instance else { return tokens.clone() };
        let with = match t {
            Ty::F16 => quote!(::onekernel::half::f16),
            t => {
                let name = proc_macro2::Ident::new(t.rust_name(), proc_macro2::Span::call_site());
                quote!(#name)
            }
        };
        syn::parse2(replace_ident(tokens.to_token_stream(), param, &with)).unwrap_or_else(|_| tokens.clone())
    }
}

/// `ts` with every identifier `name` replaced by `with` (under the
/// identifier's span, so that rustc's messages point at the user's tokens).
pub fn replace_ident(ts: TokenStream, name: &str, with: &TokenStream) -> TokenStream {
    ts.into_iter()
        .map(|tt| match tt {
            TokenTree::Ident(i) if i == name => with
                .clone()
                .into_iter()
                .map(|mut w| {
                    w.set_span(i.span());
                    w
                })
                .collect(),
            TokenTree::Group(g) => {
                let mut out = Group::new(g.delimiter(), replace_ident(g.stream(), name, with));
                out.set_span(g.span());
                TokenTree::Group(out).into_token_stream()
            }
            other => other.into_token_stream(),
        })
        .collect()
}
