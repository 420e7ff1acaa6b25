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
    // `launch` takes anything, so that no call of it adds a type error.
    let args = item.sig.inputs.iter().map(|_| quote!(_: impl ::core::marker::Sized));
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
            pub const WGSL_FOLDED: &str = "";
            pub const SPIRV_FOLDED: &[u32] = &[];
            pub const ENTRY_POINT: &str = #kernel_name;
            pub const WORKGROUP_SIZE: [u32; 3] = [1, 1, 1];
            pub const BINDINGS: &str = "";
            pub const EXPLAIN: &str = "";
            pub const WGSL_CHECKED: &str = "";
            pub static KERNEL: #k::KernelInfo = #k::KernelInfo {
                name: #k::Cow::Borrowed(#kernel_name),
                entry_point: #k::Cow::Borrowed(ENTRY_POINT),
                ..#k::KernelInfo::EMPTY
            };
            pub fn launch(
                _device: &#k::Device,
                _grid: impl ::core::convert::Into<#k::Grid>,
                #(#args),*
            ) -> ::core::result::Result<(), #k::LaunchError> {
                ::core::unreachable!("the kernel did not compile")
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
