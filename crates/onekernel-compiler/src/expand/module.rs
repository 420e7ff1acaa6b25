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

use super::structs::expand_struct;
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
                let ty = table.struct_named(&s.ident.to_string());
                let ty = ty.filter(|_| !scope.unusable_structs.contains_key(&s.ident.to_string()));
                out.extend(expand_struct(s, ty, &table));
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
