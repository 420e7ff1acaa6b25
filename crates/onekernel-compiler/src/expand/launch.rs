//! The typed `launch` function and the CPU side of it: how each
//! parameter crosses from the host to the GPU (a binding or a uniform
//! scalar) and to the CPU executor (a slice, an output view, atomics), and
//! the one `impl CpuKernel` through which the runtime runs the bodies the
//! kernel's `CpuPlan` names. Which executor runs is the runtime's choice
//! (`CpuDevice::launch`), not this module's.

use super::cpu_body::{internal, rust_type};
use crate::hir::{Function, ParamKind};
use crate::CompiledKernel;
use onekernel_abi::CpuPlan;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

/// `pub fn launch(..)`, `pub fn cpu_body(..)` and the CPU bodies the plan
/// names, with `CpuArgs` and its `CpuKernel` impl, for a compiled kernel.
pub fn launch_and_body(compiled: &CompiledKernel) -> TokenStream {
    let k = super::krate();
    let f: &Function = &compiled.checked.program.kernel;
    let table = &compiled.checked.program.types;
    let plan = compiled.checked.cpu;
    let invocations = compiled.info.workgroup_size.iter().map(|n| *n as usize).product::<usize>();
    let (invocation, workgroup) = (internal("__invocation"), internal("__workgroup"));
    let life = syn::Lifetime::new("'__k", Span::call_site());
    // A kernel with overrides launches its specialisation for the values
    // (the const parameters and the constants of its scope).
    let (generics, turbofish, specialise) = const_generics(f);
    let (const_params, const_names) = const_param_parts(f);
    let kref = if f.overrides.is_empty() { quote!(&KERNEL) } else { quote!(__kernel) };

    let mut launch_params = Vec::new();
    let mut gpu_args = Vec::new();
    let mut scalars = Vec::new();
    let mut cpu_prep = Vec::new();
    let mut body_params = Vec::new();
    // `CpuArgs`: the non-output arguments, its fields.
    let mut fields = Vec::new();
    let mut field_names = Vec::new();
    // The outputs, moved to the runtime as a tuple of shared views.
    let mut outputs = Vec::new();
    let mut output_types = Vec::new();
    // Every body's arguments, in parameter order: a field of `self`, or an
    // output bound from the tuple the runtime passes (shared views,
    // windows, or the chunk loop's `&mut` windows).
    let mut args = Vec::new();
    for (index, (_, p)) in f.params.iter().enumerate() {
        let span = p.span;
        let ident = super::cpu_body::user_ident(&p.name, span);
        let written = &p.written_ty;
        match p.kind {
            ParamKind::Buffer { elem } => {
                let t = rust_type(elem, table);
                launch_params.push(quote_spanned!(span=> #ident: &(impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg(#k::BufferArg::buffer(#ident), #kref, #index, gpu)?));
                cpu_prep.push(quote!(let #ident = #k::cpu_slice(#k::BufferArg::buffer(#ident), #kref, #index, cpu)?;));
                fields.push(quote!(#ident: &#life [#t]));
                field_names.push(ident.clone());
                args.push(quote!(self.#ident));
                body_params.push(quote!(#ident: #written));
            }
            ParamKind::BufferMut { elem } => {
                let t = rust_type(elem, table);
                launch_params
                    .push(quote_spanned!(span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg_mut(#k::BufferArg::buffer_mut(#ident), #kref, #index, gpu)?));
                cpu_prep
                    .push(quote!(let #ident = #k::cpu_shared(#k::BufferArg::buffer_mut(#ident), #kref, #index, cpu)?;));
                output_types.push(quote!(#k::SharedSliceMut<#life, #t>));
                outputs.push(ident.clone());
                args.push(quote!(#ident));
                body_params.push(quote!(#ident: &impl #k::OutputSlice<#t>));
            }
            ParamKind::Atomics { elem } => {
                let t = rust_type(elem, table);
                // The host reads and writes the buffer as plain integers.
                launch_params
                    .push(quote_spanned!(span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg_mut(#k::BufferArg::buffer_mut(#ident), #kref, #index, gpu)?));
                cpu_prep.push(
                    quote!(let #ident = #k::cpu_atomics(#k::BufferArg::buffer_mut(#ident), #kref, #index, cpu)?;),
                );
                fields.push(quote!(#ident: &#life [<#t as #k::AtomicElement>::Atomic]));
                field_names.push(ident.clone());
                args.push(quote!(self.#ident));
                body_params.push(quote!(#ident: #written));
            }
            ParamKind::Scalar { ty, mutable } => {
                let t = rust_type(ty, table);
                launch_params.push(quote_spanned!(span=> #ident: #t));
                scalars.push(quote!(#k::ScalarArg::from(#ident)));
                fields.push(quote!(#ident: #t));
                field_names.push(ident.clone());
                args.push(quote!(self.#ident));
                let m = mutable.then(|| quote!(mut));
                body_params.push(quote!(#m #ident: #written));
            }
        }
    }

    let checked = &compiled.checked;
    // The chunk-slice loop, when the plan has it (`chunk.rs`).
    let chunk = super::chunk::chunk_fn(compiled, &generics);
    // The phase split, when the plan has it (`phases.rs`).
    let phased = match plan {
        CpuPlan::Cooperative { phased: true } => Some(super::phases::phase_body(
            f,
            &checked.kernel_types,
            table,
            &compiled.layout,
            compiled.info.workgroup_size,
            &checked.uniformity,
        )),
        _ => None,
    };
    let (outs, x) = (internal("__outputs"), internal("__x"));
    let bind = quote!(let (#(#outputs,)*) = #outs;);
    // The bodies the plan names, as the trait's methods.
    let methods = match plan {
        CpuPlan::Independent | CpuPlan::OwnElement { .. } => {
            let owned = matches!(plan, CpuPlan::OwnElement { .. }).then(|| {
                quote! {
                    #[inline(always)]
                    fn owned_invocation(
                        &self,
                        #invocation: &#k::Invocation,
                        #outs: &<Self::Outputs as #k::Outputs>::Windows<'_>,
                    ) {
                        #bind
                        cpu_body #turbofish (#invocation, #(#args),*)
                    }
                }
            });
            let chunk_loop = chunk.is_some().then(|| {
                quote! {
                    #[inline(always)]
                    fn chunk_slices(
                        &self,
                        #x: ::core::ops::Range<usize>,
                        #outs: &mut <Self::Outputs as #k::Outputs>::Windows<'_>,
                    ) -> bool {
                        #bind
                        cpu_chunk #turbofish (#x, #(#args),*)
                    }
                }
            });
            quote! {
                #[inline(always)]
                fn invocation(&self, #invocation: &#k::Invocation, #outs: &Self::Outputs) {
                    #bind
                    cpu_body #turbofish (#invocation, #(#args),*)
                }
                #owned
                #chunk_loop
            }
        }
        CpuPlan::Cooperative { .. } => {
            let phases = matches!(phased, Some(Ok(_))).then(|| {
                let (group, state) = (internal("__group"), internal("__state"));
                quote! {
                    fn phase_state(&self) -> CpuPhaseState {
                        cpu_phase_state()
                    }
                    fn phases(
                        &self,
                        #group: &#k::Invocation,
                        #workgroup: &#k::Workgroup,
                        #state: &mut CpuPhaseState,
                        #outs: &Self::Outputs,
                    ) {
                        #bind
                        cpu_phases #turbofish (#group, #workgroup, #state, #(#args),*)
                    }
                }
            });
            quote! {
                fn cooperative<'__w>(
                    &'__w self,
                    #invocation: #k::Invocation,
                    #workgroup: &'__w #k::Workgroup,
                    #outs: &'__w Self::Outputs,
                ) -> impl ::core::future::Future<Output = ()> + '__w {
                    #bind
                    cpu_body #turbofish (#invocation, #workgroup, #(#args),*)
                }
                #phases
            }
        }
    };
    let phase_state = match phased {
        Some(Ok(_)) => quote!(CpuPhaseState),
        _ => quote!(()),
    };
    let cooperative = plan.is_cooperative();
    let helper_scope = compiled.checked.program.helpers.iter().any(|h| h.debug_sites > 0);
    let body = super::cpu_body::cpu_body(
        f,
        &compiled.checked.kernel_types,
        &compiled.checked.program.types,
        &compiled.layout,
        helper_scope,
    );
    let (body_doc, body_sig) = if cooperative {
        (
            quote! {
                /// The kernel body as the CPU executor runs it: one future per
                /// invocation, whose `.await`s are the barriers.
            },
            quote!(pub async fn cpu_body #generics (#invocation: #k::Invocation, #workgroup: &#k::Workgroup, #(#body_params),*)),
        )
    } else {
        (
            quote! {
                /// The kernel body as the CPU executor runs it: once per
                /// invocation, with that invocation's builtin values.
                #[inline(always)]
            },
            quote!(pub fn cpu_body #generics (#invocation: &#k::Invocation, #(#body_params),*)),
        )
    };
    let phases = phased.map(|p| match p {
        Ok(p) => {
            let state = &p.state;
            let phase_body = &p.body;
            let (group, state_var) = (internal("__group"), internal("__state"));
            quote! {
                /// The per-invocation storage of [`cpu_phases`]: one array per
                /// local that lives across a barrier.
                pub type CpuPhaseState = (#(::std::boxed::Box<[#state; KERNEL_INVOCATIONS]>,)*);

                /// Zeroed [`CpuPhaseState`], made once per executor task.
                pub fn cpu_phase_state() -> CpuPhaseState {
                    (#(#k::per_invocation::<#state, KERNEL_INVOCATIONS>(),)*)
                }

                /// The number of invocations in a workgroup:
                /// the length of each array of [`CpuPhaseState`].
                const KERNEL_INVOCATIONS: usize = #invocations;

                /// One workgroup of the kernel as the CPU phase executor runs
                /// it: between two barriers, a loop over its invocations.
                #[allow(unused_variables, unused_mut, unused_parens, unused_labels, unreachable_code, clippy::all)]
                pub fn cpu_phases #generics (
                    #group: &#k::Invocation,
                    #workgroup: &#k::Workgroup,
                    #state_var: &mut CpuPhaseState,
                    #(#body_params),*
                ) #phase_body
            }
        }
        // The plan and the split disagree: a compiler bug, reported where
        // the kernel is rather than as a panic.
        Err(why) => {
            let message = format!("internal compiler error: the CPU plan splits this kernel into phases, but {why}");
            quote!(::core::compile_error!(#message);)
        }
    });
    let plan_doc = format!("The kernel's arguments on the CPU, but its `&mut [T]` outputs, which the runtime takes separately: the `CpuKernel` whose bodies the runtime runs as the plan `{plan:?}` says.");
    quote! {
        #phases

        #chunk

        #[doc = #plan_doc]
        pub struct CpuArgs<#life #(, #const_params)*> {
            #(#fields,)*
            __onekernel_lifetime: ::core::marker::PhantomData<&#life ()>,
        }

        #[allow(unused_variables, clippy::all)]
        impl<#life #(, #const_params)*> #k::CpuKernel for CpuArgs<#life #(, #const_names)*> {
            type Outputs = (#(#output_types,)*);
            type PhaseState = #phase_state;
            #methods
        }

        /// Launches the kernel on `device` over `grid` (a number of
        /// threads, or `Grid::blocks(..)`). On a GPU this queues the work
        /// and returns at once; reading a buffer waits for it.
        pub fn launch #generics (
            device: &#k::Device,
            grid: impl ::core::convert::Into<#k::Grid>,
            #(#launch_params),*
        ) -> ::core::result::Result<(), #k::LaunchError> {
            let grid = grid.into();
            #specialise
            match #k::backend(device) {
                #k::DeviceBackend::Gpu(gpu) => {
                    let args = [#(#gpu_args),*];
                    gpu.dispatch_with(#kref, grid, &args, &[#(#scalars),*], device.launch_checks())
                }
                #k::DeviceBackend::Cpu(cpu) => {
                    #(#cpu_prep)*
                    let args = CpuArgs #turbofish { #(#field_names,)* __onekernel_lifetime: ::core::marker::PhantomData };
                    cpu.launch(#kref, grid, &args, (#(#outputs,)*))
                }
            }
        }

        #body_doc
        #[allow(unused_variables, unused_mut, unused_parens, unreachable_code, clippy::all)]
        #body_sig #body
    }
}

/// For a kernel with overrides (`hir::Function::overrides`): its const
/// parameters as written on `launch` and the CPU functions
/// (`<const N: u32>`), the turbofish that passes them on (`::<N>`), and
/// the launch's first statement, which finds the specialisation for the
/// values (each read as the type the kernel gave it, so that rustc checks
/// a constant of the kernel's scope against it). All empty otherwise.
pub fn const_generics(f: &Function) -> (TokenStream, TokenStream, TokenStream) {
    if f.overrides.is_empty() {
        return (TokenStream::new(), TokenStream::new(), TokenStream::new());
    }
    let k = super::krate();
    let values = f.overrides.iter().map(|o| {
        let ident = super::cpu_body::user_ident(&o.name, o.span);
        let ty = proc_macro2::Ident::new(o.ty.map_or("u32", |t| t.rust_name()), o.span);
        // A constant of the scope typed `usize` (an array's length) is
        // checked by rustc where the CPU body uses it (`[f32; BLOCK]`):
        // read here as any integer, so that a wrong type is one error.
        if o.any_int || (!o.generic && o.ty == Some(crate::types::Ty::Usize)) {
            // Any integer type: its value, range-checked at the launch.
            quote_spanned!(o.span=> #k::const_value_int(#ident))
        } else {
            quote_spanned!(o.span=> #k::const_value::<#ty>(#ident))
        }
    });
    let specialise = quote! {
        let __kernel: &'static #k::KernelInfo = #k::specialise(&KERNEL, &[#(#values),*])?;
    };
    let (params, names) = const_param_parts(f);
    if params.is_empty() {
        return (TokenStream::new(), TokenStream::new(), specialise);
    }
    (quote!(<#(#params),*>), quote!(::<#(#names),*>), specialise)
}

/// The kernel's const parameters as declared (`const N: u32`) and as
/// passed on (`N`): what `CpuArgs` carries, so that its `CpuKernel` impl
/// calls the bodies monomorphised for them.
fn const_param_parts(f: &Function) -> (Vec<TokenStream>, Vec<TokenStream>) {
    f.overrides
        .iter()
        .filter(|o| o.generic)
        .map(|o| {
            let ident = super::cpu_body::user_ident(&o.name, o.span);
            let ty = proc_macro2::Ident::new(o.ty.map_or("u32", |t| t.rust_name()), o.span);
            (quote_spanned!(o.span=> const #ident: #ty), quote!(#ident))
        })
        .unzip()
}
