//! What `#[kernel]` emits when the kernel does not compile (the model is
//! thiserror's `fallback.rs`): the errors, the function itself unchanged
//! so that rustc still checks it (and reports what it knows better, such
//! as an unknown name), and a stand-in for the kernel's module so that the
//! code calling `name::launch(..)` adds no errors of its own.

use crate::diagnostic::{to_syn_error, Diagnostic};
use proc_macro2::TokenStream;
use quote::quote;

/// The fallback expansion of a kernel with `errors`.
pub fn expand_errors(item: &syn::ItemFn, errors: &[Diagnostic]) -> TokenStream {
    let k = super::krate();
    let errs = to_syn_error(errors).map(|e| e.to_compile_error());
    // With errors of ours, the body is not compiled again: rustc would
    // report the same problems a second time (a misspelled method, a
    // builtin called with an argument). With only problems rustc reports
    // better, it gets the body to report them.
    let mut item = item.clone();
    // `#[unroll]` means something to the kernel compiler only.
    syn::visit_mut::VisitMut::visit_item_fn_mut(&mut StripUnroll, &mut item);
    if errs.is_some() {
        *item.block = syn::parse_quote!({ ::core::unreachable!("the kernel did not compile") });
    }
    let item = &item;

    let (vis, name) = (&item.vis, &item.sig.ident);
    let kernel_name = name.to_string();
    // Only problems left to rustc: rustc reports them, unless the compiler
    // failed to recognise valid Rust (a bug of ours). Then the program
    // builds, and `launch` says so as an `Err` naming the code (a warning
    // at build time would repeat every error rustc reports).
    let site = match (&errs, errors.first()) {
        (None, Some(first)) => {
            let line = first.span.start().line;
            match first.span.source_text() {
                Some(code) => format!("`{code}` (line {line})"),
                None => format!("the code at line {line}"),
            }
        }
        _ => "a construct".to_string(),
    };
    let problem = format!(
        "not compiled: onekernel could not lower {site} of its body, which rustc accepted; this is a bug in \
         onekernel: please report it with the kernel"
    );
    // `launch` takes anything, so that no call of it adds a type error.
    let args = item.sig.inputs.iter().map(|_| quote!(_: impl ::core::marker::Sized));
    // and the kernel's const parameters, so that `launch::<128>(..)` adds
    // none either.
    let consts: Vec<TokenStream> = item
        .sig
        .generics
        .const_params()
        .map(|c| {
            let (ident, ty) = (&c.ident, &c.ty);
            quote!(const #ident: #ty)
        })
        .collect();
    let generics = if consts.is_empty() { TokenStream::new() } else { quote!(<#(#consts),*>) };
    quote! {
        #errs
        #[allow(dead_code, unused_variables, unused_mut, unreachable_code)]
        #item

        /// Not compiled: see the errors above.
        #[allow(non_snake_case, dead_code, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;
            pub const WGSL: &str = "";
            pub const SPIRV: &[u32] = &[];
            pub const ENTRY_POINT: &str = #kernel_name;
            pub const WORKGROUP_SIZE: [u32; 3] = [1, 1, 1];
            pub const BINDINGS: &str = "";
            pub const EXPLAIN: &str = "";
            pub static KERNEL: #k::KernelInfo = #k::KernelInfo {
                name: #k::Cow::Borrowed(#kernel_name),
                entry_point: #k::Cow::Borrowed(ENTRY_POINT),
                ..#k::KernelInfo::EMPTY
            };
            pub fn launch #generics (
                _device: &#k::Device,
                _grid: impl ::core::convert::Into<#k::Grid>,
                #(#args),*
            ) -> ::core::result::Result<(), #k::LaunchError> {
                ::core::result::Result::Err(#k::LaunchError::InvalidKernel {
                    kernel: #kernel_name,
                    problem: ::std::string::String::from(#problem),
                })
            }
        }
    }
}

/// Removes `#[unroll]` from `for` loops.
pub(super) struct StripUnroll;

impl syn::visit_mut::VisitMut for StripUnroll {
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        f.attrs.retain(|a| !a.path().is_ident("unroll"));
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proc_macro2::Span;

    fn item() -> syn::ItemFn {
        syn::parse_quote!(
            fn k(out: &mut [f32]) {
                out[0] = 1.0;
            }
        )
    }

    /// A body rustc accepts but the compiler left to rustc (a bug of
    /// ours) must not make a program whose launch panics.
    #[test]
    fn problems_left_to_rustc_make_launch_an_err() {
        let out = expand_errors(&item(), &[Diagnostic::left_to_rustc(Span::call_site())]).to_string();
        assert!(out.contains("InvalidKernel") && out.contains("rustc accepted"), "{out}");
        assert!(!out.contains("compile_error") && !out.contains("unreachable !"), "{out}");
    }

    #[test]
    fn reported_errors_are_compile_errors() {
        let out = expand_errors(&item(), &[Diagnostic::new(Span::call_site(), "bad")]).to_string();
        assert!(out.contains("compile_error"), "{out}");
    }
}
