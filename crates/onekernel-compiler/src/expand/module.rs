//! `#[onekernel::kernels] mod name { .. }`: a module whose kernels see its
//! constants and structs (a proc macro sees only its own item, so the
//! module is the item). Its items expand as:
//!
//! * `#[kernel(..)] fn`: the kernel, compiled with the module's constants
//!   and structs in view (by the caller's `compile`, which gathers
//!   helpers as `#[kernel]` does);
//! * `#[helper] fn`: a helper, checked here once with the module in view;
//! * `struct`: with what kernels need of it (see [`super::structs`]) when
//!   its fields are kernel types; host-only otherwise;
//! * everything else (constants included): unchanged.

use super::structs::{expand_rejected_struct, expand_struct, expand_struct_api};
use crate::diagnostic::{to_syn_error, Diagnostic};
use crate::parse::{define_structs, parse_function_in, FnRole, ModuleItems};
use crate::types::TypeTable;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// A kernel of the module: its `#[kernel(..)]` arguments and the function
/// without the attribute.
pub struct ModuleKernel {
    /// The tokens inside `#[kernel(..)]`.
    pub attr: TokenStream,
    /// The function.
    pub item: syn::ItemFn,
}

/// Expands the module. `kernel` compiles one kernel given the module's
/// helpers and items, and returns its expansion.
pub fn expand_module(
    attr: TokenStream,
    module: &syn::ItemMod,
    mut kernel: impl FnMut(&ModuleKernel, &[syn::ItemFn], &ModuleItems) -> TokenStream,
) -> TokenStream {
    let mut errors: Vec<Diagnostic> = Vec::new();
    if let Some(t) = attr.clone().into_iter().next() {
        errors.push(Diagnostic::new(t.span(), "`#[onekernel::kernels]` takes no arguments"));
    }
    let Some((_, content)) = &module.content else {
        let e = Diagnostic::new(module.span(), "`#[onekernel::kernels]` goes on an inline module")
            .help("write the module's items in braces: `mod name { ... }`; it shows its kernels the constants and structs written there");
        let e = to_syn_error(&[e]).map(|e| e.to_compile_error());
        return quote!(#e #module);
    };
    let mut items = ModuleItems::default();
    let mut helpers = Vec::new();
    let mut kernels = Vec::new();
    for item in content {
        match item {
            syn::Item::Const(c) => items.consts.push(c.clone()),
            syn::Item::Struct(s) => items.structs.push(s.clone()),
            syn::Item::Fn(f) => {
                if let Some(k) = take_attr(f, "kernel") {
                    kernels.push(k);
                } else if let Some(h) = take_attr(f, "helper") {
                    helpers.push(h.item);
                }
            }
            _ => {}
        }
    }
    let mut table = TypeTable::default();
    let (scope, struct_errors) = define_structs(&items, &mut table);
    errors.extend(struct_errors);
    let mut out = TokenStream::new();
    for item in content {
        match item {
            syn::Item::Struct(s) => {
                let name = s.ident.to_string();
                let ty = table.struct_named(&name);
                let ty = ty.filter(|_| !scope.unusable_structs.contains_key(&name));
                // A rejected struct (padding, reported above; or a field
                // kernels cannot share, reported where a kernel names it):
                // a stand-in, so that its uses add no errors.
                let rejected = match ty {
                    Some(ty) => has_padding(ty, &table),
                    None => scope.unusable_structs.contains_key(&name) && named_by(&name, &kernels, &helpers),
                };
                match rejected.then(|| expand_rejected_struct(s)) {
                    Some(Some(stand_in)) => out.extend(stand_in),
                    Some(None) => out.extend(quote!(#s)),
                    None => {
                        out.extend(expand_struct(s, ty, &table));
                        if ty.is_some() {
                            let (has_new, has_default) = user_impls(content, &s.ident);
                            out.extend(expand_struct_api(s, has_new, has_default));
                        }
                    }
                }
            }
            syn::Item::Fn(f) if take_attr(f, "kernel").is_some() => {
                let k = take_attr(f, "kernel").expect("checked");
                out.extend(kernel(&k, &helpers, &items));
            }
            syn::Item::Fn(f) if take_attr(f, "helper").is_some() => {
                let h = take_attr(f, "helper").expect("checked").item;
                let mut types = table.clone();
                let problems = parse_function_in(&h, FnRole::Helper, &mut types, &scope).err().unwrap_or_default();
                out.extend(super::helper::expand_helper_checked(&h, &problems));
            }
            other => out.extend(quote!(#other)),
        }
    }
    let errs = to_syn_error(&errors).map(|e| e.to_compile_error());
    // A kernel with errors keeps its signature but not its body (see
    // `fallback.rs`), which leaves the module's imports unused: one error
    // should not bring warnings along.
    let quiet = (errs.is_some() || out.to_string().contains("compile_error")).then(|| quote!(#[allow(unused_imports)]));
    let syn::ItemMod { attrs, vis, unsafety, mod_token, ident, .. } = module;
    quote! {
        #errs
        #(#attrs)*
        #quiet
        #vis #unsafety #mod_token #ident {
            #out
        }
    }
}

/// Whether the struct's WGSL layout has padding (its fields do not add up
/// to its size): `parse::items` reported it.
fn has_padding(ty: crate::types::Ty, table: &TypeTable) -> bool {
    let (Some((size, _)), Some((_, fields))) = (table.wgsl_layout(ty), table.as_struct(ty)) else { return false };
    let fields: u32 = fields.iter().map(|(_, t)| table.wgsl_layout(*t).map_or(0, |(s, _)| s)).sum();
    fields != size
}

/// Whether a kernel or helper of the module names `name` (an identifier
/// among its tokens).
fn named_by(name: &str, kernels: &[ModuleKernel], helpers: &[syn::ItemFn]) -> bool {
    fn mentions(ts: TokenStream, name: &str) -> bool {
        ts.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == name,
            proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
            _ => false,
        })
    }
    kernels.iter().map(|k| &k.item).chain(helpers).any(|f| mentions(quote!(#f), name))
}

/// Whether the module defines `fn new` in an inherent impl of `ident`, and
/// whether it implements `Default` for it.
fn user_impls(content: &[syn::Item], ident: &syn::Ident) -> (bool, bool) {
    let (mut has_new, mut has_default) = (false, false);
    for item in content {
        let syn::Item::Impl(i) = item else { continue };
        let syn::Type::Path(p) = &*i.self_ty else { continue };
        if p.path.segments.last().is_none_or(|s| s.ident != *ident) {
            continue;
        }
        match &i.trait_ {
            None => {
                has_new |= i.items.iter().any(|it| matches!(it, syn::ImplItem::Fn(f) if f.sig.ident == "new"));
            }
            Some((_, t, _)) => has_default |= t.segments.last().is_some_and(|s| s.ident == "Default"),
        }
    }
    (has_new, has_default)
}

/// The function without its `#[name(..)]` attribute (any path ending in
/// `name`: `#[kernel]`, `#[onekernel::kernel]`), if it has one.
fn take_attr(f: &syn::ItemFn, name: &str) -> Option<ModuleKernel> {
    let at = f.attrs.iter().position(|a| a.path().segments.last().is_some_and(|s| s.ident == name))?;
    let mut item = f.clone();
    let attr = item.attrs.remove(at);
    let attr = match attr.meta {
        syn::Meta::List(l) => l.tokens,
        _ => TokenStream::new(),
    };
    Some(ModuleKernel { attr, item })
}
