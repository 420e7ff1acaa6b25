//! A generic kernel, `fn axpy<T: Num>(..)`, becomes a module `axpy`
//! holding:
//!
//! * one module per type of the bound, `for_f32`, `for_i32`, ...: each
//!   what a kernel compiled for that type expands to (`WGSL`, `KERNEL`,
//!   `launch`, `cpu_body`, ...);
//! * the trait `Instance`, implemented for each type of the bound: its
//!   `kernel_info()` and `launch` are those of the type's module, so the
//!   generic `launch` picks the instantiation by the type its buffers hold
//!   (an associated item, resolved by rustc, with no run-time lookup);
//! * `launch<T: Instance>(..)` and `kernel_info::<T>()`;
//! * the function itself, generic and never called: rustc type-checks the
//!   body once with the bound, so a body that uses something a type of
//!   the bound lacks is rustc's error at the generic function.

use super::cpu_body::{rust_type, user_ident};
use crate::hir::{GenericParam, ParamKind};
use crate::parse::replace_ident;
use crate::types::Ty;
use crate::CompiledKernel;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};

/// The name of the module of one instantiation: `for_f32`.
pub fn instance_module(ty: Ty) -> proc_macro2::Ident {
    format_ident!("for_{}", ty.rust_name())
}

/// The expansion of a generic kernel compiled for every type of its bound
/// (`compiled`: [`crate::compile_kernel`]'s instantiations).
pub fn expand_generic(item: &syn::ItemFn, param: &GenericParam, compiled: &[CompiledKernel]) -> TokenStream {
    let instances: Vec<(Ty, &CompiledKernel)> = compiled.iter().filter_map(|c| Some((c.instance.ty?, c))).collect();
    let k = super::krate();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let docs: Vec<_> = item.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let Some((_, first)) = instances.first() else { return TokenStream::new() };

    let modules = instances.iter().map(|(ty, compiled)| {
        let m = instance_module(*ty);
        let info = super::kernel_info::kernel_items(&compiled.info);
        let launch = super::launch::launch_and_body(compiled);
        let doc = format!("`{name}` compiled for `{}`.", ty.rust_name());
        quote! {
            #[doc = #doc]
            pub mod #m {
                #[allow(unused_imports)]
                use super::*;

                #info

                #launch
            }
        }
    });

    // The launch's parameters with the type parameter as `with` (`Self` in
    // the trait, `T` in the generic `launch`), from the types as written.
    let f = &first.checked.program.kernel;
    let launch_params = |with: &TokenStream| -> Vec<TokenStream> {
        f.params
            .iter()
            .zip(&item.sig.inputs)
            .map(|((_, p), input)| {
                let ident = user_ident(&p.name, p.span);
                let written = match input {
                    syn::FnArg::Typed(pt) => replace_ident(pt.ty.to_token_stream(), &param.name, with),
                    syn::FnArg::Receiver(r) => r.to_token_stream(),
                };
                let elem = |written: TokenStream| -> TokenStream {
                    match syn::parse2::<syn::Type>(written) {
                        Ok(syn::Type::Reference(r)) => match *r.elem {
                            syn::Type::Slice(s) => s.elem.to_token_stream(),
                            other => other.to_token_stream(),
                        },
                        _ => quote!(()),
                    }
                };
                match p.kind {
                    ParamKind::Buffer { .. } => {
                        let t = elem(written);
                        quote_spanned!(p.span=> #ident: &(impl #k::BufferArg<#t> + ?::core::marker::Sized))
                    }
                    ParamKind::BufferMut { .. } => {
                        let t = elem(written);
                        quote_spanned!(p.span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized))
                    }
                    ParamKind::Atomics { elem } => {
                        let t = rust_type(elem, &first.checked.program.types);
                        quote_spanned!(p.span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized))
                    }
                    ParamKind::Scalar { .. } => quote_spanned!(p.span=> #ident: #written),
                }
            })
            .collect()
    };
    let trait_params = launch_params(&quote!(Self));
    let fn_params = launch_params(&quote!(T));
    let args: Vec<_> = f.params.iter().map(|(_, p)| user_ident(&p.name, p.span)).collect();
    // The const parameters (`<const N: u32>`), after the type parameter.
    let (consts, turbofish, _) = super::launch::const_generics(f);
    let const_list = {
        let generics: Option<syn::Generics> = syn::parse2(consts.clone()).ok();
        generics.map(|g| g.params.into_iter().collect::<Vec<_>>()).unwrap_or_default()
    };

    let impls = instances.iter().map(|(ty, _)| {
        let m = instance_module(*ty);
        let t = rust_type(*ty, &first.checked.program.types);
        quote! {
            impl Instance for #t {
                fn kernel_info() -> &'static #k::KernelInfo {
                    &#m::KERNEL
                }
                fn launch #consts (
                    device: &#k::Device,
                    grid: #k::Grid,
                    #(#trait_params),*
                ) -> ::core::result::Result<(), #k::LaunchError> {
                    #m::launch #turbofish (device, grid, #(#args),*)
                }
            }
        }
    });

    let bound = param.bound.name();
    let bound_trait = format_ident!("{bound}");
    let types: Vec<String> = instances.iter().map(|(t, _)| format!("`{}`", t.rust_name())).collect();
    let instance_doc = format!(
        "The element types `{name}` is compiled for (those of `{bound}`: {}), each with its module (`for_f32`, ...).",
        types.join(", ")
    );

    // The generic function, for rustc's type check only.
    let mut generic = item.clone();
    generic.vis = syn::Visibility::Inherited;
    generic.attrs.retain(|a| !a.path().is_ident("doc"));
    syn::visit_mut::VisitMut::visit_item_fn_mut(&mut super::fallback::StripUnroll, &mut generic);

    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #(#modules)*

            #[doc = #instance_doc]
            pub trait Instance: #k::#bound_trait {
                /// What the runtime launches for this type.
                fn kernel_info() -> &'static #k::KernelInfo;
                /// Launches the kernel compiled for this type (see the
                /// module's `launch`).
                fn launch #consts (
                    device: &#k::Device,
                    grid: #k::Grid,
                    #(#trait_params),*
                ) -> ::core::result::Result<(), #k::LaunchError>;
            }

            #(#impls)*

            /// The kernel compiled for `T`: its WGSL, SPIR-V, bindings, ...
            pub fn kernel_info<T: Instance>() -> &'static #k::KernelInfo {
                T::kernel_info()
            }

            /// Launches the kernel on `device` over `grid` (a number of
            /// threads, or `Grid::blocks(..)`), compiled for the element
            /// type `T` of its arguments.
            pub fn launch<T: Instance #(, #const_list)*>(
                device: &#k::Device,
                grid: impl ::core::convert::Into<#k::Grid>,
                #(#fn_params),*
            ) -> ::core::result::Result<(), #k::LaunchError> {
                T::launch #turbofish (device, grid.into(), #(#args),*)
            }

            // rustc checks the generic body here, once, with the bound.
            #[allow(unused_variables, unused_mut, unused_parens, unreachable_code)]
            #generic
        }
    }
}
