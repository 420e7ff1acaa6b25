//! `#[onekernel::kernels] mod name { .. }`: a module whose kernels see its
//! constants and structs (a proc macro sees only its own item, so the
//! module is the item). Its items expand as:
//!
//! * `#[kernel(..)] fn`: the kernel, compiled with the module's constants
//!   and structs in view (by the caller's `compile`, which gathers
//!   helpers as `#[kernel]` does); which functions are kernels and helpers
//!   and what the module shows them is [`crate::driver`]'s, as for the
//!   tools;
//! * `#[helper] fn`: a helper, checked here once with the module in view;
//! * `struct`: with what kernels need of it (see [`super::structs`]) when
//!   its fields are kernel types; host-only otherwise;
//! * everything else (constants included): unchanged.

use super::structs::{expand_rejected_struct, expand_struct, expand_struct_api};
use crate::diagnostic::{to_syn_error, Diagnostic};
use crate::driver::{helper_problems, marked, Kernel};
use crate::parse::{define_structs, ModuleItems};
use crate::types::TypeTable;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;

/// Expands the module. `kernel` compiles one kernel (with the module's
/// items) given the module's helpers, and returns its expansion.
pub fn expand_module(
    attr: TokenStream,
    module: &syn::ItemMod,
    mut kernel: impl FnMut(&Kernel, &[syn::ItemFn]) -> TokenStream,
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
    let items = ModuleItems::of(content);
    let fns = || content.iter().filter_map(|i| if let syn::Item::Fn(f) = i { Some(f) } else { None });
    let kernels: Vec<Kernel> = fns().filter_map(|f| Kernel::of(f, &items)).collect();
    let helpers: Vec<syn::ItemFn> =
        fns().filter(|f| Kernel::of(f, &items).is_none()).filter_map(|f| Some(marked(f, "helper")?.1)).collect();
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
            syn::Item::Fn(f) if Kernel::of(f, &items).is_some() => {
                let k = Kernel::of(f, &items).expect("checked");
                out.extend(kernel(&k, &helpers));
            }
            syn::Item::Fn(f) if marked(f, "helper").is_some() => {
                let (_, h) = marked(f, "helper").expect("checked");
                out.extend(super::helper::expand_helper_checked(&h, &helper_problems(&h, &items)));
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
fn named_by(name: &str, kernels: &[Kernel], helpers: &[syn::ItemFn]) -> bool {
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
