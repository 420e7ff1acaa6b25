//! The typed `launch` function and the CPU body's signature: how each
//! parameter crosses from the host to the GPU (a binding or a uniform
//! scalar) and to the CPU executor (a slice, an output view, atomics).

use super::cpu_body::{internal, rust_type};
use crate::hir::{Function, ParamKind};
use crate::CompiledKernel;
use onekernel_abi::CpuStrategy;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// `pub fn launch(..)` and `pub fn cpu_body(..)` for a compiled kernel.
pub fn launch_and_body(compiled: &CompiledKernel) -> TokenStream {
    let k = super::krate();
    let f: &Function = &compiled.checked.program.kernel;
    let invocations = compiled.info.workgroup_size.iter().map(|n| *n as usize).product::<usize>();
    let cooperative = compiled.info.cpu == CpuStrategy::Cooperative;
    let (invocation, workgroup) = (internal("__invocation"), internal("__workgroup"));
    // A kernel with overrides launches its specialisation for the values
    // (the const parameters and the constants of its scope).
    let (generics, turbofish, specialise) = const_generics(f);
    let kref = if f.overrides.is_empty() { quote!(&KERNEL) } else { quote!(__kernel) };

    let mut launch_params = Vec::new();
    let mut gpu_args = Vec::new();
    let mut scalars = Vec::new();
    let mut cpu_prep = Vec::new();
    let mut body_args = Vec::new();
    let mut body_params = Vec::new();
    // The outputs the owned-element path hands out in windows.
    let mut outputs = Vec::new();
    let mut windows = Vec::new();
    let mut window_args = Vec::new();
    // `cpu_chunk`'s arguments: the outputs as the chunk's windows.
    let mut chunk_args = Vec::new();
    for (index, (_, p)) in f.params.iter().enumerate() {
        let span = p.span;
        let ident = super::cpu_body::user_ident(&p.name, span);
        let written = &p.written_ty;
        match p.kind {
            ParamKind::Buffer { elem } => {
                let t = rust_type(elem, &compiled.checked.program.types);
                launch_params.push(quote_spanned!(span=> #ident: &(impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg(#k::BufferArg::buffer(#ident), #kref, #index, gpu)?));
                cpu_prep.push(quote!(let #ident = #k::cpu_slice(#k::BufferArg::buffer(#ident), #kref, #index, cpu)?;));
                body_args.push(quote!(#ident));
                window_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                body_params.push(quote!(#ident: #written));
            }
            ParamKind::BufferMut { elem } => {
                let t = rust_type(elem, &compiled.checked.program.types);
                launch_params
                    .push(quote_spanned!(span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg_mut(#k::BufferArg::buffer_mut(#ident), #kref, #index, gpu)?));
                cpu_prep
                    .push(quote!(let #ident = #k::cpu_shared(#k::BufferArg::buffer_mut(#ident), #kref, #index, cpu)?;));
                body_args.push(quote!(&#ident));
                let window = internal(&format!("__window{}", outputs.len()));
                outputs.push(quote!(#ident));
                windows.push(quote!(#window));
                window_args.push(quote!(&#window));
                chunk_args.push(quote!(&mut #window));
                body_params.push(quote!(#ident: &impl #k::OutputSlice<#t>));
            }
            ParamKind::Atomics { elem } => {
                let t = rust_type(elem, &compiled.checked.program.types);
                // The host reads and writes the buffer as plain integers.
                launch_params
                    .push(quote_spanned!(span=> #ident: &mut (impl #k::BufferArg<#t> + ?::core::marker::Sized)));
                gpu_args.push(quote!(#k::gpu_arg_mut(#k::BufferArg::buffer_mut(#ident), #kref, #index, gpu)?));
                cpu_prep.push(
                    quote!(let #ident = #k::cpu_atomics(#k::BufferArg::buffer_mut(#ident), #kref, #index, cpu)?;),
                );
                body_args.push(quote!(#ident));
                window_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                body_params.push(quote!(#ident: #written));
            }
            ParamKind::Scalar { ty, mutable } => {
                let t = rust_type(ty, &compiled.checked.program.types);
                launch_params.push(quote_spanned!(span=> #ident: #t));
                scalars.push(quote!(#k::ScalarArg::from(#ident)));
                body_args.push(quote!(#ident));
                window_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                let m = mutable.then(|| quote!(mut));
                body_params.push(quote!(#m #ident: #written));
            }
        }
    }

    let checked = &compiled.checked;
    // The chunk-slice loop, for the kernels that qualify (`chunk.rs`).
    let chunk = super::chunk::chunk_fn(compiled, &generics);
    let (range, chunk_var) = (internal("__x"), internal("__chunk"));
    // A cooperative kernel split at its barriers, when the splitter
    // handles it (`phases.rs` says which it does not).
    let phased = match compiled.info.cpu {
        CpuStrategy::Cooperative => super::phases::phase_body(
            f,
            &checked.kernel_types,
            &checked.program.types,
            &compiled.layout,
            compiled.info.workgroup_size,
        )
        .ok(),
        _ => None,
    };
    let futures = quote! {
        // Each workgroup's invocations run as futures on one thread,
        // meeting at each barrier.
        cpu.execute_cooperative(#kref, grid, &workgroups, |#invocation, #workgroup| {
            cpu_body #turbofish (#invocation, #workgroup, #(#body_args),*)
        })
    };
    let cpu_launch = match compiled.info.cpu {
        CpuStrategy::Cooperative if phased.is_some() => quote! {
            // Barriers or shared memory: each workgroup runs on one thread,
            // phase by phase (a loop over its invocations between two
            // barriers). A race-checked device runs the futures, whose
            // schedule its detector follows.
            if cpu.is_race_checked() {
                let workgroups = cpu.workgroups(#kref);
                #futures
            } else {
                cpu.execute_phased(#kref, grid, cpu_phase_state, |__group, #workgroup, __state| {
                    cpu_phases #turbofish (__group, #workgroup, __state, #(#body_args),*)
                })
            }
        },
        CpuStrategy::Cooperative => quote! {
            // Barriers or shared memory, in a form the phase executor does
            // not run (see the compiler's `expand/phases.rs`).
            let workgroups = cpu.workgroups(#kref);
            #futures
        },
        CpuStrategy::OwnElement if chunk.is_some() => quote! {
            if cpu.can_partition(#kref, &grid) {
                // Each invocation touches only its own elements: chunks get
                // plain windows of the outputs, which the runtime makes, and
                // a chunk that every buffer covers runs as one loop over
                // plain slices (`cpu_chunk`); one that some buffer does not
                // (the last, typically) runs the checked body per invocation.
                cpu.execute_partitioned(#kref, grid, (#(#outputs,)*), |#chunk_var, (#(mut #windows,)*)| {
                    if !#chunk_var.x_range().is_some_and(|#range| cpu_chunk #turbofish (#range, #(#chunk_args),*)) {
                        #chunk_var.for_each(|#invocation| cpu_body #turbofish (#invocation, #(#window_args),*))
                    }
                })
            } else {
                cpu.execute(#kref, grid, |#invocation| cpu_body #turbofish (#invocation, #(#body_args),*))
            }
        },
        CpuStrategy::OwnElement => quote! {
            if cpu.can_partition(#kref, &grid) {
                // Each invocation writes only its own element: chunks get
                // plain windows of the outputs, which the runtime makes.
                cpu.execute_partitioned(#kref, grid, (#(#outputs,)*), |#chunk_var, (#(#windows,)*)| {
                    #chunk_var.for_each(|#invocation| cpu_body #turbofish (#invocation, #(#window_args),*))
                })
            } else {
                cpu.execute(#kref, grid, |#invocation| cpu_body #turbofish (#invocation, #(#body_args),*))
            }
        },
        CpuStrategy::Independent => quote! {
            cpu.execute(#kref, grid, |#invocation| cpu_body #turbofish (#invocation, #(#body_args),*))
        },
    };
    let body =
        super::cpu_body::cpu_body(f, &compiled.checked.kernel_types, &compiled.checked.program.types, &compiled.layout);
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
    let phases = phased.map(|p| {
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
    });
    quote! {
        #phases

        #chunk

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
                    #cpu_launch
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
    let mut params = Vec::new();
    let mut names = Vec::new();
    let mut values = Vec::new();
    for o in &f.overrides {
        let ident = super::cpu_body::user_ident(&o.name, o.span);
        let ty = proc_macro2::Ident::new(o.ty.map_or("u32", |t| t.rust_name()), o.span);
        if o.generic {
            params.push(quote_spanned!(o.span=> const #ident: #ty));
            names.push(quote!(#ident));
        }
        values.push(if o.any_int {
            // Any integer type: its value, range-checked at the launch.
            quote_spanned!(o.span=> #k::const_value_int(#ident))
        } else {
            quote_spanned!(o.span=> #k::const_value::<#ty>(#ident))
        });
    }
    let specialise = quote! {
        let __kernel: &'static #k::KernelInfo = #k::specialise(&KERNEL, &[#(#values),*])?;
    };
    if params.is_empty() {
        return (TokenStream::new(), TokenStream::new(), specialise);
    }
    (quote!(<#(#params),*>), quote!(::<#(#names),*>), specialise)
}
