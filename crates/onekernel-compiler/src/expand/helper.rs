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
    let mut rust = item.clone();
    syn::visit_mut::VisitMut::visit_item_fn_mut(&mut DebugMacros, &mut rust);
    // `#[unroll]` is for the GPU module (the kernels that call the helper
    // unroll its loops); rustc would reject the attribute on the host fn.
    syn::visit_mut::VisitMut::visit_item_fn_mut(&mut super::fallback::StripUnroll, &mut rust);
    quote! {
        #errors

        #[inline]
        #rust

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

/// Rewrites a helper's `println!`, `assert!`, `panic!`, ... (the macros of
/// `parse/debug.rs`) for the CPU: a print goes through the runtime's
/// `helper_print`, and a panic enters a `PanicSite::in_helper` first, so
/// that inside a kernel's `HelperScope` (`expand/cpu_body.rs`) a line gets
/// the invocation's prefix and a panic is the launch's `KernelPanic` of
/// that invocation, at the helper's line, as the GPU reports them; called
/// from host code they print and panic as plain Rust. An `assert!` without
/// a message says `assertion failed: cond` with the condition as the GPU
/// writes it (`crate::debug::expr_text`).
struct DebugMacros;

impl DebugMacros {
    /// The Rust for the debug macro `mac`, or `None` when it is not one (or
    /// its arguments are not a comma-separated list: rustc says why).
    fn rewrite(mac: &syn::Macro) -> Option<TokenStream> {
        use onekernel_abi::DebugKind;
        use syn::punctuated::Punctuated;
        use syn::spanned::Spanned;
        let name = mac.path.segments.last()?.ident.to_string();
        let (kind, debug_only) = crate::parse::debug::kind_of(&name)?;
        let span = mac.span();
        let k = super::krate();
        let site = format_ident!("__onekernel_site", span = Span::mixed_site());
        let enter = quote_spanned!(span=> let #site = #k::PanicSite::in_helper(););
        let tokens = &mac.tokens;
        let items = mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated).ok()?;
        let items: Vec<&syn::Expr> = items.iter().collect();
        let code = match kind {
            DebugKind::Print { stderr, newline } => {
                let args = if tokens.is_empty() { quote!("") } else { tokens.clone() };
                return Some(quote_spanned!(span=>
                    #k::helper_print(#stderr, #newline, ::core::format_args!(#args))
                ));
            }
            DebugKind::Panic | DebugKind::Unreachable | DebugKind::Todo | DebugKind::Unimplemented => {
                let path = &mac.path;
                quote_spanned!(span=> { #enter #path!(#tokens) })
            }
            DebugKind::Assert => {
                let cond = items.first()?;
                let message = if items.len() > 1 {
                    let rest = &items[1..];
                    quote!(#(#rest),*)
                } else {
                    let text = format!("assertion failed: {}", crate::debug::expr_text(cond));
                    quote!("{}", #text)
                };
                // Not `if !(cond)`: clippy would lint the user's condition
                // (`nonminimal_bool`) in the user's span.
                quote_spanned!(span=> if #cond {} else { #enter ::core::panic!(#message) })
            }
            DebugKind::AssertEq | DebugKind::AssertNe => {
                let (l, r) = (items.first()?, items.get(1)?);
                let rest = &items[2..];
                let message = (!rest.is_empty()).then(|| quote!(, #(#rest),*));
                let (left, right) = (
                    format_ident!("__left", span = Span::mixed_site()),
                    format_ident!("__right", span = Span::mixed_site()),
                );
                let (failed, assert) = match kind {
                    DebugKind::AssertEq => (quote!(!(*#left == *#right)), quote_spanned!(span=> ::core::assert_eq!)),
                    _ => (quote!(*#left == *#right), quote_spanned!(span=> ::core::assert_ne!)),
                };
                quote_spanned!(span=> match (&(#l), &(#r)) {
                    (#left, #right) => if #failed { #enter #assert(*#left, *#right #message) }
                })
            }
        };
        Some(if debug_only { quote_spanned!(span=> if ::core::cfg!(debug_assertions) { #code }) } else { code })
    }
}

impl syn::visit_mut::VisitMut for DebugMacros {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if let syn::Expr::Macro(m) = e {
            if let Some(code) = DebugMacros::rewrite(&m.mac) {
                *e = syn::Expr::Verbatim(quote!({ #code }));
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Macro(m) = s {
            if let Some(code) = DebugMacros::rewrite(&m.mac) {
                *s = syn::Stmt::Expr(syn::Expr::Verbatim(quote!({ #code })), m.semi_token);
                return;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
}
