//! `#[helper]` functions: a helper stays an ordinary Rust function (host
//! code and the CPU body call it), and defines a hidden macro that hands
//! its tokens to the kernels that call it, since a proc macro sees only its
//! own item (see [`crate::gather`]).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// Name of the hidden macro a `#[helper] fn name` defines:
/// `helper_fn_NAME_not_in_scope`. Users only ever see this name in rustc's
/// error when a kernel calls a function that is not a helper in scope and
/// that its file does not show (a call of a `fn` the file shows without
/// `#[helper]` gets [`crate::gather::not_a_helper`] instead, see
/// [`crate::gather::visible_non_helper`]): "cannot find macro
/// `helper_fn_foo_not_in_scope` in this scope", so the name is chosen to
/// explain that error.
pub fn helper_macro_name(name: &syn::Ident) -> syn::Ident {
    helper_macro_ident(&name.to_string(), name.span())
}

fn helper_macro_ident(name: &str, span: Span) -> syn::Ident {
    format_ident!("helper_fn_{}_not_in_scope", name, span = span)
}

/// `#[helper] fn f(..)`: the function unchanged, and a hidden macro that
/// hands its tokens to kernels that call it. Problems in the helper's own
/// code are reported here, once, whether or not a kernel calls it (kernels
/// that do leave them out of their errors).
pub fn expand_helper(item: &syn::ItemFn) -> TokenStream {
    expand_helper_checked(item, &crate::driver::helper_problems(item, &Default::default()))
}

/// [`expand_helper`] with the helper's problems found by the caller (a
/// `#[onekernel::kernels]` module checks its helpers with its structs and
/// constants in view).
pub fn expand_helper_checked(item: &syn::ItemFn, problems: &[crate::diagnostic::Diagnostic]) -> TokenStream {
    let mac = helper_macro_name(&item.sig.ident);
    let errors = crate::diagnostic::to_syn_error(problems).map(|e| e.to_compile_error());
    quote! {
        #errors

        #[inline]
        #item

        #[doc(hidden)]
        #[allow(unused_macros)]
        macro_rules! #mac {
            ($($rest:tt)*) => {
                ::onekernel::__private::kernel_with_helpers! { @helper { #item } $($rest)* }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use #mac;
    }
}

/// Asks for the next missing helper: `helper_fn_NAME_not_in_scope! { <state> }`,
/// whose expansion calls `kernel_with_helpers!` again with NAME's tokens
/// added. The span of the call site makes a missing helper's error point
/// at the call.
pub fn request_helper(name: &str, call_span: Span, state: TokenStream) -> TokenStream {
    let mac = helper_macro_ident(name, call_span);
    quote_spanned!(call_span=> #mac! { #state })
}
