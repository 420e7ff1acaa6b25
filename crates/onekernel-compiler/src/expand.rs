//! The Rust code `#[kernel]` and `#[helper]` expand to.
//!
//! A kernel `fn vector_add(..)` becomes a module `vector_add` holding the
//! compiled artefacts (`WGSL`, `SPIRV`, `KERNEL`, ...), a typed `launch`
//! function, and `cpu_body`: the user's body, run once per invocation by
//! the CPU executor. The body is the user's own tokens with two mechanical
//! changes (spans kept, so rustc's errors point at the user's code):
//!
//! * thread-indexing builtins (`global_id()` ...) are local closures that
//!   read the current [`Invocation`];
//! * elements of `&mut [T]` parameters are read with `.load(i)` and written
//!   with `.store(i, v)` on a `SharedSliceMut`, whose relaxed atomics make
//!   racing invocations defined behaviour (see docs/cpu-executor.md).
//!
//! [`Invocation`]: https://docs.rs/onekernel-runtime

use crate::hir::{Builtin, ParamKind};
use crate::types::Ty;
use crate::CompiledKernel;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

/// The path of the facade crate in generated code.
fn krate() -> TokenStream {
    quote!(::onekernel::__private)
}

fn elem_tokens(t: Ty) -> TokenStream {
    match t {
        Ty::F32 => quote!(f32),
        Ty::I32 => quote!(i32),
        Ty::U32 => quote!(u32),
        Ty::Bool => quote!(bool),
        Ty::Usize => quote!(usize),
        _ => quote!(()),
    }
}

/// The expansion of a successfully compiled kernel.
pub fn expand_kernel(item: &syn::ItemFn, compiled: &CompiledKernel) -> TokenStream {
    let k = krate();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let docs: Vec<&syn::Attribute> = item.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let wgsl = &compiled.wgsl;
    let spirv = &compiled.spirv;
    let wgsl_folded = &compiled.wgsl_folded;
    let explain = &compiled.explain;
    let spirv_folded = &compiled.spirv_folded;
    let entry = &compiled.entry_point;
    let kernel_name = name.to_string();
    let [wx, wy, wz] = compiled.workgroup_size;
    let max_inv = compiled.max_workgroup_invocations;
    let uniform_binding = compiled.uniform_binding;
    let uniform_size = compiled.uniform_size;
    let cpu_strategy = if compiled.cooperative {
        quote!(Cooperative)
    } else if compiled.writes_own_element {
        quote!(OwnElement)
    } else {
        quote!(Independent)
    };
    let memory_words = compiled.workgroup_memory_words;

    let param_infos = compiled.params.iter().map(|p| {
        let pname = &p.name;
        let slot = p.slot;
        let (kind, ty) = match p.kind {
            ParamKind::Buffer { elem } => (quote!(ReadOnlyBuffer), elem),
            ParamKind::BufferMut { elem } => (quote!(ReadWriteBuffer), elem),
            ParamKind::Atomics { elem } => (quote!(AtomicBuffer), elem),
            ParamKind::Scalar { ty, .. } => (quote!(Scalar), ty),
        };
        let ty = match ty {
            Ty::F32 => quote!(F32),
            Ty::I32 => quote!(I32),
            _ => quote!(U32),
        };
        quote!(#k::ParamInfo {
            name: #k::Cow::Borrowed(#pname),
            kind: #k::ParamKind::#kind,
            ty: #k::ScalarType::#ty,
            slot: #slot,
        })
    });

    // launch(): typed parameters, then the two paths.
    let mut launch_params = Vec::new();
    let mut gpu_args = Vec::new();
    let mut scalars = Vec::new();
    let mut cpu_prep = Vec::new();
    let mut cpu_args = Vec::new();
    let mut outputs = Vec::new();
    let mut chunk_args = Vec::new();
    let mut body_params = Vec::new();
    for (index, (p, input)) in compiled.params.iter().zip(&item.sig.inputs).enumerate() {
        let ident = format_ident!("{}", p.name, span = input.span());
        match p.kind {
            ParamKind::Buffer { elem } => {
                let t = elem_tokens(elem);
                launch_params.push(quote_spanned!(input.span()=> #ident: &#k::Buffer<#t>));
                gpu_args.push(quote!(#k::gpu_arg(#ident, &KERNEL, #index, gpu)?));
                cpu_prep.push(quote!(let #ident = #k::cpu_slice(#ident, &KERNEL, #index, cpu)?;));
                cpu_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                body_params.push(quote!(#ident: &[#t]));
            }
            ParamKind::BufferMut { elem } => {
                let t = elem_tokens(elem);
                launch_params.push(quote_spanned!(input.span()=> #ident: &mut #k::Buffer<#t>));
                gpu_args.push(quote!(#k::gpu_arg_mut(#ident, &KERNEL, #index, gpu)?));
                cpu_prep.push(quote!(let #ident = #k::cpu_shared(#ident, &KERNEL, #index, cpu)?;));
                cpu_args.push(quote!(&#ident));
                // Moved into the executor, which makes each chunk's window.
                outputs.push(quote!(#ident));
                chunk_args.push(quote!(&#ident));
                body_params.push(quote!(#ident: &impl #k::OutputSlice<#t>));
            }
            ParamKind::Atomics { elem } => {
                let t = elem_tokens(elem);
                // The type as the user wrote it (`&[AtomicU32]`), so that the
                // user's `use std::sync::atomic::AtomicU32` stays used.
                let written = match input {
                    syn::FnArg::Typed(pt) => pt.ty.to_token_stream(),
                    syn::FnArg::Receiver(_) => quote!(&[::core::sync::atomic::AtomicU32]),
                };
                // The host reads and writes the buffer as plain integers.
                launch_params.push(quote_spanned!(input.span()=> #ident: &mut #k::Buffer<#t>));
                gpu_args.push(quote!(#k::gpu_arg_mut(#ident, &KERNEL, #index, gpu)?));
                cpu_prep.push(quote!(let #ident = #k::cpu_atomics(#ident, &KERNEL, #index, cpu)?;));
                cpu_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                body_params.push(quote!(#ident: #written));
            }
            ParamKind::Scalar { ty, mutable } => {
                let t = elem_tokens(ty);
                launch_params.push(quote_spanned!(input.span()=> #ident: #t));
                scalars.push(quote!(#k::ScalarArg::from(#ident)));
                cpu_args.push(quote!(#ident));
                chunk_args.push(quote!(#ident));
                let m = mutable.then(|| quote!(mut));
                body_params.push(quote!(#m #ident: #t));
            }
        }
    }

    let body = cpu_body(item, compiled);
    let (cpu_launch, cpu_body_doc, cpu_body_sig) = if compiled.cooperative {
        (
            quote! {
                // Barriers or shared memory: each workgroup's invocations
                // run as futures on one thread, meeting at each barrier.
                let workgroups = cpu.workgroups(&KERNEL);
                cpu.execute_cooperative(&KERNEL, grid, &workgroups, |invocation, workgroup| {
                    cpu_body(invocation, workgroup, #(#cpu_args),*)
                })
            },
            quote! {
                /// The kernel body as the CPU executor runs it: one future per
                /// invocation, whose `.await`s are the barriers.
            },
            quote!(pub async fn cpu_body(__invocation: #k::Invocation, __workgroup: &#k::Workgroup, #(#body_params),*)),
        )
    } else {
        (
            quote! {
                if cpu.can_partition(&KERNEL, &grid) {
                    // Each invocation writes only its own element:
                    // chunks get plain windows of the outputs.
                    cpu.execute_partitioned(&KERNEL, grid, (#(#outputs,)*), |chunk, (#(#outputs,)*)| {
                        chunk.for_each(|invocation| cpu_body(invocation, #(#chunk_args),*))
                    })
                } else {
                    cpu.execute(&KERNEL, grid, |invocation| cpu_body(invocation, #(#cpu_args),*))
                }
            },
            quote! {
                /// The kernel body as the CPU executor runs it: once per
                /// invocation, with that invocation's builtin values.
                #[inline(always)]
            },
            quote!(pub fn cpu_body(__invocation: &#k::Invocation, #(#body_params),*)),
        )
    };
    let wgsl_doc = format!("The WGSL this kernel compiles to:\n\n```wgsl\n{wgsl}```");
    let bindings_table = bindings_table(compiled);

    quote! {
        #(#docs)*
        #[allow(non_snake_case, dead_code, clippy::all)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #[doc = #wgsl_doc]
            pub const WGSL: &str = #wgsl;
            /// The SPIR-V words (validated by naga; `spirv-val` in the tests).
            pub const SPIRV: &[u32] = &[#(#spirv),*];
            /// The variant the runtime uses for a 1-D grid of more than 65535
            /// workgroups, folded into 2-D dispatches: the same kernel with
            /// its thread ids rebuilt from the folded ones.
            pub const WGSL_FOLDED: &str = #wgsl_folded;
            /// The SPIR-V of `WGSL_FOLDED`.
            pub const SPIRV_FOLDED: &[u32] = &[#(#spirv_folded),*];
            /// The entry point's name in `WGSL` and `SPIRV`.
            pub const ENTRY_POINT: &str = #entry;
            /// Threads per block (workgroup) along x, y and z.
            pub const WORKGROUP_SIZE: [u32; 3] = [#wx, #wy, #wz];
            /// The binding layout, as a table for people.
            pub const BINDINGS: &str = #bindings_table;
            /// Each Rust line of the kernel beside the WGSL it produced.
            pub const EXPLAIN: &str = #explain;
            /// Everything the runtime needs to launch this kernel.
            pub static KERNEL: #k::KernelInfo = #k::KernelInfo {
                name: #k::Cow::Borrowed(#kernel_name),
                entry_point: #k::Cow::Borrowed(ENTRY_POINT),
                wgsl: #k::Cow::Borrowed(WGSL),
                spirv: #k::Cow::Borrowed(SPIRV),
                wgsl_folded: #k::Cow::Borrowed(WGSL_FOLDED),
                spirv_folded: #k::Cow::Borrowed(SPIRV_FOLDED),
                explain: #k::Cow::Borrowed(EXPLAIN),
                workgroup_size: WORKGROUP_SIZE,
                max_workgroup_invocations: #max_inv,
                params: #k::Cow::Borrowed(&[#(#param_infos),*]),
                uniform_binding: #uniform_binding,
                uniform_size: #uniform_size,
                cpu: #k::CpuStrategy::#cpu_strategy,
                workgroup_memory_words: #memory_words,
            };

            /// Launches the kernel on `device` over `grid` (a number of
            /// threads, or `Grid::blocks(..)`). On a GPU this queues the work
            /// and returns at once; reading a buffer waits for it.
            pub fn launch(
                device: &#k::Device,
                grid: impl ::core::convert::Into<#k::Grid>,
                #(#launch_params),*
            ) -> ::core::result::Result<(), #k::LaunchError> {
                let grid = grid.into();
                match #k::backend(device) {
                    #k::DeviceBackend::Gpu(gpu) => {
                        let args = [#(#gpu_args),*];
                        gpu.dispatch(&KERNEL, grid, &args, &[#(#scalars),*])
                    }
                    #k::DeviceBackend::Cpu(cpu) => {
                        #(#cpu_prep)*
                        #cpu_launch
                    }
                }
            }

            #cpu_body_doc
            #[allow(unused_variables, unused_mut, unused_parens, unreachable_code, clippy::all)]
            #cpu_body_sig #body
        }
    }
}

/// A Markdown table of the bindings, for learners.
fn bindings_table(c: &CompiledKernel) -> String {
    let mut s = String::from("| parameter | WGSL | binding |\n|---|---|---|\n");
    for p in &c.params {
        let (wgsl, where_) = match p.kind {
            ParamKind::Buffer { elem } => (
                format!("var<storage, read> {}: array<{}>", p.name, wgsl_ty(elem)),
                format!("@group(0) @binding({})", p.slot),
            ),
            ParamKind::BufferMut { elem } => (
                format!("var<storage, read_write> {}: array<{}>", p.name, wgsl_ty(elem)),
                format!("@group(0) @binding({})", p.slot),
            ),
            ParamKind::Atomics { elem } => (
                format!("var<storage, read_write> {}: array<atomic<{}>>", p.name, wgsl_ty(elem)),
                format!("@group(0) @binding({})", p.slot),
            ),
            ParamKind::Scalar { ty, .. } => {
                (format!("params.{}: {}", p.name, wgsl_ty(ty)), format!("uniform, offset {}", p.slot))
            }
        };
        s.push_str(&format!("| `{}` | `{}` | {} |\n", p.name, wgsl, where_));
    }
    s.push_str(&format!(
        "| (launch) | `var<uniform> params: LaunchParams` | @group(0) @binding({}), {} bytes |\n",
        c.uniform_binding, c.uniform_size
    ));
    s
}

fn wgsl_ty(t: Ty) -> &'static str {
    match t {
        Ty::F32 => "f32",
        Ty::I32 => "i32",
        Ty::Bool => "bool",
        _ => "u32",
    }
}

/// The user's body, rewritten for the CPU executor.
fn cpu_body(item: &syn::ItemFn, compiled: &CompiledKernel) -> TokenStream {
    let k = krate();
    let mut block = (*item.block).clone();
    let shared: Vec<String> = compiled
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::BufferMut { .. }))
        .map(|p| p.name.clone())
        .collect();
    let mut rewriter = SharedRewriter { shared, arrays: compiled.shared.clone(), barriers: 0 };
    rewriter.visit_block_mut(&mut block);
    // The closures take the span of the user's body so that the user's
    // `global_id()` resolves to them whatever macro expansion we are in.
    let user_span = item.block.brace_token.span.open();
    let builtins = Builtin::ALL.iter().map(|(_, name)| {
        let ident = format_ident!("{}", name, span = user_span);
        let field = format_ident!("{}", name);
        quote!(let #ident = || -> #k::Dim3 { __invocation.#field };)
    });
    let stmts = &block.stmts;
    let brace = block.brace_token;
    let mut out = TokenStream::new();
    brace.surround(&mut out, |t| {
        quote!(#(#builtins)*).to_tokens(t);
        for s in stmts {
            s.to_tokens(t);
        }
    });
    out
}

/// Rewrites `out[i]` into `out.load(i)` and `out[i] = v` into
/// `out.store(i, v)` for the `&mut [T]` parameters named in `shared`.
struct SharedRewriter {
    shared: Vec<String>,
    /// Workgroup shared arrays, by name.
    arrays: Vec<crate::SharedLayout>,
    /// Barrier call sites numbered so far.
    barriers: u32,
}

/// `name[i]` or `name[r][c]` on a shared array: (array, indices).
fn shared_access<'e>(
    arrays: &'e [crate::SharedLayout],
    e: &'e syn::Expr,
) -> Option<(&'e crate::SharedLayout, Vec<&'e syn::Expr>)> {
    let syn::Expr::Index(ix) = strip(e) else { return None };
    let mut indices = vec![&*ix.index];
    let mut base = strip(&ix.expr);
    if let syn::Expr::Index(inner) = base {
        indices.insert(0, &*inner.index);
        base = strip(&inner.expr);
    }
    let syn::Expr::Path(p) = base else { return None };
    let name = p.path.get_ident()?.to_string();
    let array = arrays.iter().find(|a| a.name == name)?;
    (array.dims == indices.len()).then_some((array, indices))
}

impl SharedRewriter {
    fn shared_index<'e>(&self, e: &'e syn::Expr) -> Option<&'e syn::ExprIndex> {
        let syn::Expr::Index(ix) = strip(e) else { return None };
        let syn::Expr::Path(p) = strip(&ix.expr) else { return None };
        let name = p.path.get_ident()?.to_string();
        self.shared.contains(&name).then_some(ix)
    }
}

fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        other => other,
    }
}

impl VisitMut for SharedRewriter {
    /// `let tile = shared::<[f32; 256]>();` -> the workgroup's array, at the
    /// word offset the compiler gave it.
    fn visit_local_mut(&mut self, local: &mut syn::Local) {
        if let (syn::Pat::Ident(pi), Some(init)) = (&local.pat, &mut local.init) {
            if let Some(array) = self.arrays.iter().find(|a| pi.ident == a.name) {
                if let syn::Expr::Call(c) = &*init.expr {
                    if let syn::Expr::Path(p) = &*c.func {
                        if let Some(syn::PathArguments::AngleBracketed(args)) =
                            p.path.segments.last().map(|s| &s.arguments)
                        {
                            let ty = &args.args;
                            let offset = array.offset as usize;
                            let span = init.expr.span();
                            init.expr = Box::new(syn::parse_quote_spanned!(span=> __workgroup.shared::<#ty>(#offset)));
                            return;
                        }
                    }
                }
            }
        }
        syn::visit_mut::visit_local_mut(self, local);
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        let span = e.span();
        if let Some(new) = self.cooperative_rewrite(e, span) {
            *e = new;
            return;
        }
        // Writes first: their left side must not become a `load`.
        let write: Option<syn::Expr> = match &mut *e {
            syn::Expr::Assign(a) if self.shared_index(&a.left).is_some() => {
                self.visit_expr_mut(&mut a.right);
                let mut ix = self.shared_index(&a.left).cloned().expect("checked");
                self.visit_expr_mut(&mut ix.index);
                let (buf, index, value) = (&ix.expr, &ix.index, &a.right);
                // Rust evaluates the value before the place.
                Some(syn::parse_quote_spanned!(span=> { let __value = #value; #buf.store(#index, __value) }))
            }
            syn::Expr::Binary(b) if is_compound(&b.op) && self.shared_index(&b.left).is_some() => {
                self.visit_expr_mut(&mut b.right);
                let mut ix = self.shared_index(&b.left).cloned().expect("checked");
                self.visit_expr_mut(&mut ix.index);
                let (buf, index, value) = (&ix.expr, &ix.index, &b.right);
                let op = compound_to_binary(&b.op);
                Some(syn::parse_quote_spanned!(span=> {
                    let __value = #value;
                    let __index = #index;
                    #buf.store(__index, #buf.load(__index) #op __value)
                }))
            }
            _ => None,
        };
        if let Some(w) = write {
            *e = w;
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
        if let Some(ix) = self.shared_index(e) {
            let (buf, index) = (&ix.expr, &ix.index);
            *e = syn::parse_quote_spanned!(span=> #buf.load(#index));
        }
    }
}

impl SharedRewriter {
    /// Shared arrays, barriers and shared declarations; None when `e` is
    /// none of those (children are visited by the caller then).
    fn cooperative_rewrite(&mut self, e: &mut syn::Expr, span: Span) -> Option<syn::Expr> {
        if let syn::Expr::Call(c) = &*e {
            if let syn::Expr::Path(p) = &*c.func {
                let last = p.path.segments.last()?;
                let name = last.ident.to_string();
                if (name == "workgroup_barrier" || name == "storage_barrier") && p.path.segments.len() == 1 {
                    let site = self.barriers;
                    self.barriers += 1;
                    return Some(syn::parse_quote_spanned!(span=> __workgroup.barrier(#site).await));
                }
            }
        }
        // Writes to shared arrays.
        let write = match &*e {
            syn::Expr::Assign(a) => shared_access(&self.arrays, &a.left)
                .map(|(arr, ix)| (arr.clone(), ix.into_iter().cloned().collect::<Vec<_>>(), None, (*a.right).clone())),
            syn::Expr::Binary(b) if is_compound(&b.op) => shared_access(&self.arrays, &b.left).map(|(arr, ix)| {
                (arr.clone(), ix.into_iter().cloned().collect(), Some(compound_to_binary(&b.op)), (*b.right).clone())
            }),
            _ => None,
        };
        if let Some((arr, mut indices, op, mut value)) = write {
            self.visit_expr_mut(&mut value);
            for i in indices.iter_mut() {
                self.visit_expr_mut(i);
            }
            let name = format_ident!("{}", arr.name, span = span);
            let (load, store) =
                if indices.len() == 2 { (quote!(load2), quote!(store2)) } else { (quote!(load), quote!(store)) };
            let idx: Vec<syn::Ident> = (0..indices.len()).map(|n| format_ident!("__index{}", n)).collect();
            let new_value = match op {
                None => quote!(__value),
                Some(op) => quote!(#name.#load(#(#idx),*) #op __value),
            };
            return Some(syn::parse_quote_spanned!(span=> {
                let __value = #value;
                #(let #idx: usize = #indices;)*
                #name.#store(#(#idx,)* #new_value)
            }));
        }
        // Atomic methods on a shared atomic array: `hist[i].fetch_add(..)`.
        if let syn::Expr::MethodCall(m) = &*e {
            if let Some((arr, indices)) = shared_access(&self.arrays, &m.receiver) {
                if arr.atomic {
                    let name = format_ident!("{}", arr.name, span = span);
                    let mut index = indices[0].clone();
                    self.visit_expr_mut(&mut index);
                    let mut m2 = m.clone();
                    for a in m2.args.iter_mut() {
                        self.visit_expr_mut(a);
                    }
                    m2.receiver = Box::new(syn::parse_quote_spanned!(span=> #name.at(#index)));
                    return Some(syn::Expr::MethodCall(m2));
                }
            }
        }
        // Reads of shared arrays.
        if let Some((arr, indices)) = shared_access(&self.arrays, e) {
            if !arr.atomic {
                let name = format_ident!("{}", arr.name, span = span);
                let mut indices: Vec<syn::Expr> = indices.into_iter().cloned().collect();
                for i in indices.iter_mut() {
                    self.visit_expr_mut(i);
                }
                let load = if indices.len() == 2 { quote!(load2) } else { quote!(load) };
                return Some(syn::parse_quote_spanned!(span=> #name.#load(#(#indices),*)));
            }
        }
        None
    }
}

fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | BitXorAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

fn compound_to_binary(op: &syn::BinOp) -> TokenStream {
    use syn::BinOp::*;
    let s = op.span();
    match op {
        AddAssign(_) => quote_spanned!(s=> +),
        SubAssign(_) => quote_spanned!(s=> -),
        MulAssign(_) => quote_spanned!(s=> *),
        DivAssign(_) => quote_spanned!(s=> /),
        RemAssign(_) => quote_spanned!(s=> %),
        BitAndAssign(_) => quote_spanned!(s=> &),
        BitOrAssign(_) => quote_spanned!(s=> |),
        BitXorAssign(_) => quote_spanned!(s=> ^),
        ShlAssign(_) => quote_spanned!(s=> <<),
        _ => quote_spanned!(s=> >>),
    }
}

/// What `#[kernel]` emits when the kernel does not compile: the errors,
/// plus the function itself unchanged so that rustc still checks it (and
/// reports what it knows better, such as unknown names) without a cascade
/// of errors about a missing module.
pub fn expand_errors(item: &syn::ItemFn, errors: &[crate::Diagnostic]) -> TokenStream {
    let errs = crate::diagnostic::to_syn_error(errors).map(|e| e.to_compile_error());
    let mut item = item.clone();
    if errs.is_none() {
        // Only rustc reports (silent diagnostics): declare stand-ins for the
        // thread-indexing builtins, as `cpu_body` does, so that it does not
        // also report every `global_id()` as an unknown function. (With our
        // own errors present, rustc stays quiet about them, and the unknown
        // builtins keep it from adding type errors downstream of ours.)
        let k = krate();
        let user_span = item.block.brace_token.span.open();
        let mut stmts: Vec<syn::Stmt> = Builtin::ALL
            .iter()
            .map(|(_, name)| {
                let ident = format_ident!("{}", name, span = user_span);
                syn::parse_quote!(let #ident = || -> #k::Dim3 { ::core::unreachable!() };)
            })
            .collect();
        stmts.append(&mut item.block.stmts);
        item.block.stmts = stmts;
    }
    quote! {
        #errs
        #[allow(dead_code, unused_variables, unused_mut, unreachable_code)]
        #item
    }
}

/// Name of the hidden macro a `#[helper] fn name` defines:
/// `helper_fn_NAME_not_in_scope`. Users only ever see this name in rustc's
/// error when a kernel calls a function that is not a helper in scope
/// ("cannot find macro `helper_fn_foo_not_in_scope` in this scope"), so
/// the name is chosen to explain that error.
pub fn helper_macro_name(name: &syn::Ident) -> syn::Ident {
    helper_macro_ident(&name.to_string(), name.span())
}

fn helper_macro_ident(name: &str, span: Span) -> syn::Ident {
    format_ident!("helper_fn_{}_not_in_scope", name, span = span)
}

/// `#[helper] fn f(..)`: the function unchanged (host code can call it), and
/// a hidden macro that hands its tokens to kernels that call it. Problems
/// in the helper's own code are reported here, once, whether or not a
/// kernel calls it (kernels that do leave them out of their errors).
pub fn expand_helper(item: &syn::ItemFn) -> TokenStream {
    let mac = helper_macro_name(&item.sig.ident);
    let errors = crate::parse::parse_function(item, crate::parse::FnRole::Helper)
        .err()
        .and_then(|e| crate::diagnostic::to_syn_error(&e))
        .map(|e| e.to_compile_error());
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
