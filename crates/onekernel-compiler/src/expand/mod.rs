//! The Rust code `#[kernel]` and `#[helper]` expand to, one module per
//! thing generated:
//!
//! * [`kernel_info`]: the constants a user reads (`WGSL`, `SPIRV`, ...)
//!   and the `KERNEL` static the runtime reads;
//! * [`launch`]: the typed `launch` function, and the one `impl
//!   CpuKernel` that hands the runtime the CPU bodies the kernel's
//!   `CpuPlan` names;
//! * [`cpu_body`]: the kernel as Rust for the CPU executor, from the HIR;
//! * [`chunk`]: the same body as one loop over a chunk of invocations on
//!   plain slices, for kernels that touch only their own elements;
//! * [`phases`]: a cooperative kernel split at its barriers (the split of
//!   `split.rs`), for the CPU phase executor;
//! * [`helper`]: `#[helper]` functions and the hidden macros that hand
//!   them to kernels;
//! * [`generic`]: a generic kernel (`fn axpy<T: Num>`), one module per
//!   instantiation and the `launch` that picks one;
//! * [`fallback`]: what a kernel with errors expands to;
//! * [`module`]: `#[onekernel::kernels]` modules, and [`structs`], the
//!   structs their kernels share with the host.
//!
//! A kernel `fn vector_add(..)` becomes a module `vector_add` holding all
//! of it. The generated code names the runtime only through
//! `::onekernel::__private` and contains no `unsafe`.

pub mod chunk;
pub mod cpu_body;
pub mod fallback;
pub mod generic;
pub mod helper;
pub mod kernel_info;
pub mod launch;
pub mod module;
pub mod phases;
pub mod structs;

pub use fallback::expand_errors;
pub use generic::expand_generic;
pub use helper::{expand_helper, expand_helper_checked, helper_macro_name, request_helper};
pub use module::expand_module;

use crate::CompiledKernel;
use proc_macro2::TokenStream;
use quote::quote;

/// The path of the runtime's hidden module in generated code.
pub fn krate() -> TokenStream {
    quote!(::onekernel::__private)
}

/// The expansion of a kernel compiled with [`crate::compile_kernel`]:
/// a generic kernel's module of instantiations ([`expand_generic`]), or
/// the plain kernel's module.
pub fn expand_compiled(item: &syn::ItemFn, instances: &[CompiledKernel]) -> TokenStream {
    match (crate::parse::generic_param(&item.sig), instances) {
        (Ok(Some(param)), _) => expand_generic(item, &param, instances),
        (_, [compiled]) => expand_kernel(item, compiled),
        _ => TokenStream::new(),
    }
}

/// The expansion of a successfully compiled kernel.
pub fn expand_kernel(item: &syn::ItemFn, compiled: &CompiledKernel) -> TokenStream {
    let vis = &item.vis;
    let name = &item.sig.ident;
    let docs = item.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let info = kernel_info::kernel_items(&compiled.info);
    let launch = launch::launch_and_body(compiled);
    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #info

            #launch
        }
    }
}
