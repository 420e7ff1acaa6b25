//! The `#[kernel]` and `#[helper]` attributes: a thin shim that hands the
//! tokens to `onekernel-compiler` and its output back to rustc. Use them
//! through the `onekernel` crate, which documents them.

use onekernel_compiler::parse::ModuleItems;
use onekernel_compiler::{expand, gather, parse, Kernel};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use syn::parse::{Parse, ParseStream};

/// Compiles a Rust function into a GPU kernel (WGSL + SPIR-V) and a CPU
/// body. See the `onekernel` crate's documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2: TokenStream2 = item.clone().into();
    if let Err(too_deep) = too_deep(&[&attr.clone().into(), &item2]) {
        return too_deep;
    }
    let func: syn::ItemFn = match syn::parse2(item2) {
        Ok(f) => f,
        Err(e) => {
            let err = syn::Error::new(
                e.span(),
                "`#[kernel]` goes on a function: `#[kernel(workgroup_size = 256)] fn name(...) { ... }`",
            );
            let mut out = err.to_compile_error();
            out.extend(TokenStream2::from(item));
            return out.into();
        }
    };
    let kernel = Kernel { attr: attr.into(), item: func, module: ModuleItems::default() };
    State { helpers: Vec::new(), kernel }.next().into()
}

/// Shows the kernels of an inline module the module's constants and
/// structs. See the `onekernel` crate's documentation.
#[proc_macro_attribute]
pub fn kernels(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2: TokenStream2 = item.clone().into();
    if let Err(too_deep) = too_deep(&[&item2]) {
        return too_deep;
    }
    let module: syn::ItemMod = match syn::parse2(item2) {
        Ok(m) => m,
        Err(e) => {
            let err = syn::Error::new(
                e.span(),
                "`#[onekernel::kernels]` goes on a module: `#[onekernel::kernels] mod name { ... }`",
            );
            let mut out = err.to_compile_error();
            out.extend(TokenStream2::from(item));
            return out.into();
        }
    };
    expand::expand_module(attr.into(), &module, |k, helpers| {
        State { helpers: helpers.to_vec(), kernel: k.clone() }.next()
    })
    .into()
}

/// Marks a function that kernels may call. It stays an ordinary Rust
/// function for host code; kernels get it lowered to a WGSL function.
#[proc_macro_attribute]
pub fn helper(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item2: TokenStream2 = item.clone().into();
    if let Err(too_deep) = too_deep(&[&item2]) {
        return too_deep;
    }
    let mut out = TokenStream2::new();
    if !attr.is_empty() {
        out.extend(
            syn::Error::new(
                TokenStream2::from(attr)
                    .into_iter()
                    .next()
                    .map(|t| t.span())
                    .unwrap_or_else(proc_macro2::Span::call_site),
                "`#[helper]` takes no arguments",
            )
            .to_compile_error(),
        );
    }
    match syn::parse2::<syn::ItemFn>(item2) {
        Ok(f) => out.extend(expand::expand_helper(&f)),
        Err(e) => {
            out.extend(syn::Error::new(e.span(), "`#[helper]` goes on a function").to_compile_error());
            out.extend(TokenStream2::from(item));
        }
    }
    out.into()
}

/// Internal: gathers a kernel's helper functions one by one (each helper's
/// hidden macro adds its tokens and calls this again), then compiles.
#[doc(hidden)]
#[proc_macro]
pub fn kernel_with_helpers(input: TokenStream) -> TokenStream {
    if let Err(too_deep) = too_deep(&[&input.clone().into()]) {
        return too_deep;
    }
    match syn::parse::<State>(input) {
        Ok(state) => state.next().into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The error for tokens nested deeper than the compiler reads
/// (`onekernel_compiler::nesting`), checked before syn parses them: syn,
/// the compiler and the drop of syn's tree all recurse, and rustc's stack
/// would overflow (an abort, not an error) on thousands of levels. The
/// item is not emitted again: rustc would only report the same tokens
/// (and recurse on them too).
fn too_deep(tokens: &[&TokenStream2]) -> Result<(), TokenStream> {
    for t in tokens {
        if let Err(d) = onekernel_compiler::nesting::check(t) {
            return Err(d.to_syn_error().to_compile_error().into());
        }
    }
    Ok(())
}

/// The kernel (with the items of the `#[onekernel::kernels]` module around
/// it, if any) and the helpers gathered so far.
struct State {
    helpers: Vec<syn::ItemFn>,
    kernel: Kernel,
}

impl Parse for State {
    // (@helper { fn .. } | @item { const/struct .. })* @kernel { attr } { fn .. }
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut helpers = Vec::new();
        let mut items = ModuleItems::default();
        loop {
            input.parse::<syn::Token![@]>()?;
            let tag: syn::Ident = input.parse()?;
            let content;
            syn::braced!(content in input);
            if tag == "helper" {
                helpers.push(content.parse()?);
            } else if tag == "item" {
                match content.parse::<syn::Item>()? {
                    syn::Item::Const(c) => items.consts.push(c),
                    syn::Item::Struct(s) => items.structs.push(s),
                    other => return Err(syn::Error::new_spanned(other, "expected a const or a struct")),
                }
            } else {
                let attr: TokenStream2 = content.parse()?;
                let body;
                syn::braced!(body in input);
                let item = body.parse()?;
                return Ok(State { helpers, kernel: Kernel { attr, item, module: items } });
            }
        }
    }
}

impl State {
    /// Requests the next missing helper, or compiles when all are here.
    fn next(self) -> TokenStream2 {
        let Kernel { attr, item, module } = &self.kernel;
        let mut types = Default::default();
        let (scope, _) = parse::define_structs(module, &mut types);
        let kernel = match parse::parse_function_in(item, parse::FnRole::Kernel, &mut types, &scope) {
            Ok(k) => k,
            Err(errors) => return expand::expand_errors(item, &errors),
        };
        if let Some(call) = gather::next_missing_helper(&kernel, &self.helpers, module) {
            // A function the file shows is not a helper: say so at the call
            // (rather than rustc's "cannot find macro" for its hidden macro).
            if visibly_not_helper(&call) {
                return expand::expand_errors(item, &[gather::not_a_helper(&call)]);
            }
            let helpers = &self.helpers;
            let consts = &module.consts;
            let structs = &module.structs;
            let state = quote::quote!(
                #(@helper { #helpers })* #(@item { #consts })* #(@item { #structs })* @kernel { #attr } { #item }
            );
            return expand::request_helper(&call.name, call.span, state);
        }
        // Every instantiation of a generic kernel (`fn axpy<T: Num>`), or
        // the one of a plain kernel.
        match onekernel_compiler::compile_kernel(&self.kernel, &self.helpers, &Default::default()) {
            Ok(instances) => expand::expand_compiled(item, &instances),
            Err(errors) => expand::expand_errors(item, &errors),
        }
    }
}

/// Whether the file the call is in shows that the function called is not a
/// `#[helper]` ([`gather::visible_non_helper`]). A proc macro sees only its
/// own item, so this reads the call's source file (through the span's
/// `local_file`) and parses it with proc-macro2's own implementation, whose
/// spans have line and column; parsed files are kept per thread, by path and
/// text. Anything this cannot read is left to rustc.
fn visibly_not_helper(call: &onekernel_compiler::hir::CallSite) -> bool {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::path::PathBuf;
    thread_local! {
        static FILES: RefCell<HashMap<PathBuf, (String, Option<syn::File>)>> = RefCell::new(HashMap::new());
    }
    /// Back to the compiler's implementation when dropped, panics included.
    struct Fallback;
    impl Drop for Fallback {
        fn drop(&mut self) {
            proc_macro2::fallback::unforce();
        }
    }
    let Some(path) = call.span.local_file() else { return false };
    let at = call.span.start();
    if at.line == 0 {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(&path) else { return false };
    if !text.contains(&format!("fn {}", call.name)) {
        return false;
    }
    FILES.with(|files| {
        let mut files = files.borrow_mut();
        proc_macro2::fallback::force();
        let _back = Fallback;
        let entry = files.entry(path).or_insert_with(|| (String::new(), None));
        if entry.0 != text {
            // Checked for nesting first: a file nested deeper than the compiler's
            // limit would overflow syn's recursion (it is then left to rustc).
            *entry = (text.clone(), onekernel_compiler::parse_source::<syn::File>(&text).ok());
        }
        entry.1.as_ref().is_some_and(|file| gather::visible_non_helper(file, at, &call.name))
    })
}
