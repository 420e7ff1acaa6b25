//! The `#[kernel]` compiler: a restricted subset of Rust → naga IR →
//! validated module → WGSL and SPIR-V, with diagnostics that point at the
//! user's tokens.
//!
//! The pipeline, one module per step:
//!
//! 1. [`attr`]: the `#[kernel(...)]` arguments;
//! 2. [`parse`]: syn's AST → [`hir`], rejecting what is outside the subset;
//! 3. [`infer`]: exact Rust types for every expression;
//! 4. [`lower`]: HIR → `naga::Module`;
//! 5. [`emit`]: validation, WGSL, SPIR-V;
//! 6. [`expand`]: the Rust code the proc macro emits (the CPU body and the
//!    typed launch).
//!
//! This crate has no `proc_macro` types in its API, so tools and tests can
//! call [`compile`] directly.

pub mod analysis;
pub mod attr;
pub mod diagnostic;
pub mod emit;
pub mod expand;
pub mod explain;
pub mod hir;
pub mod infer;
pub mod lower;
pub mod parse;
pub mod types;
pub mod uniformity;

pub use attr::KernelAttr;
pub use diagnostic::Diagnostic;
pub use lower::ParamLayout;

use std::collections::HashMap;

/// Where a shared array lives in workgroup memory (for the CPU executor).
#[derive(Clone, Debug)]
pub struct SharedLayout {
    /// The Rust name.
    pub name: String,
    /// Word offset in the workgroup's memory.
    pub offset: u32,
    /// 1 or 2 dimensions.
    pub dims: usize,
    /// An array of atomics.
    pub atomic: bool,
}

/// Everything the compiler produced for one kernel.
pub struct CompiledKernel {
    /// The Rust function name.
    pub name: String,
    /// The entry point's name in the WGSL and SPIR-V.
    pub entry_point: String,
    /// The WGSL text (validated, and re-parsed by naga's WGSL front end).
    pub wgsl: String,
    /// The SPIR-V words.
    pub spirv: Vec<u32>,
    /// The WGSL of the variant for 1-D grids of more than 65535 workgroups,
    /// which the runtime folds into 2-D (see [`lower`]).
    pub wgsl_folded: String,
    /// The SPIR-V of that variant.
    pub spirv_folded: Vec<u32>,
    /// Threads per workgroup along x, y, z.
    pub workgroup_size: [u32; 3],
    /// The workgroup size limit the kernel was checked against.
    pub max_workgroup_invocations: u32,
    /// Each parameter's binding or uniform offset.
    pub params: Vec<ParamLayout>,
    /// Binding index of the uniform block.
    pub uniform_binding: u32,
    /// Byte size of the uniform block.
    pub uniform_size: u32,
    /// Each invocation touches only element `global_id().x` of its outputs
    /// (see [`analysis::writes_own_element`]).
    pub writes_own_element: bool,
    /// The kernel uses barriers or shared memory: on the CPU its
    /// invocations cooperate (see `onekernel_runtime::Workgroup`).
    pub cooperative: bool,
    /// The shared arrays, in declaration order.
    pub shared: Vec<SharedLayout>,
    /// Total shared memory, in 32-bit words.
    pub workgroup_memory_words: u32,
    /// The naga module.
    pub module: naga::Module,
    /// naga span id → the user's tokens.
    pub spans: Vec<proc_macro2::Span>,
    /// Each Rust line beside the WGSL it produced (see [`explain`]).
    pub explain: String,
}

/// Compiles a kernel and the helper functions it may call.
///
/// `attr` holds the tokens inside `#[kernel(...)]`. Helpers not called by
/// the kernel (directly or through other helpers) are left out.
pub fn compile(
    attr: proc_macro2::TokenStream,
    kernel: &syn::ItemFn,
    helpers: &[syn::ItemFn],
) -> Result<CompiledKernel, Vec<Diagnostic>> {
    let helper_items = helpers;
    let attr_span = kernel.sig.fn_token.span;
    let attr = KernelAttr::parse(attr, attr_span);
    let parsed_kernel = parse::parse_function(kernel, parse::FnRole::Kernel);
    // Report attribute and body problems together.
    let (attr, parsed_kernel) = match (attr, parsed_kernel) {
        (Ok(a), Ok(k)) => (a, k),
        (a, k) => {
            let mut all = a.err().unwrap_or_default();
            all.extend(k.err().unwrap_or_default());
            return Err(all);
        }
    };
    let helpers = order_helpers(&parsed_kernel, helpers)?;
    if !parsed_kernel.buffer_args.is_empty() {
        // Helpers take scalars only, so passing a buffer is a type error
        // that rustc reports (the kernel is emitted unchanged).
        return Err(vec![Diagnostic::silent()]);
    }
    let sigs: HashMap<String, infer::Signature> = helpers
        .iter()
        .map(|h| {
            let params = h
                .params
                .iter()
                .map(|p| match p.kind {
                    hir::ParamKind::Scalar { ty, .. } => ty,
                    hir::ParamKind::Buffer { elem }
                    | hir::ParamKind::BufferMut { elem }
                    | hir::ParamKind::Atomics { elem } => elem,
                })
                .collect();
            (h.name.clone(), infer::Signature { params, ret: h.ret })
        })
        .collect();
    let mut errors = Vec::new();
    let mut helper_types = Vec::new();
    for h in &helpers {
        match infer::infer(h, &sigs) {
            Ok(t) => helper_types.push(t),
            Err(e) => errors.extend(e),
        }
    }
    let kernel_types = infer::infer(&parsed_kernel, &sigs);
    let kernel_types = match kernel_types {
        Ok(t) if errors.is_empty() => t,
        Ok(_) => return Err(errors),
        Err(e) => {
            errors.extend(e);
            return Err(errors);
        }
    };
    let writes_own_element = analysis::writes_own_element(&parsed_kernel);
    uniformity::check_barriers(&parsed_kernel)?;
    let cooperative = parsed_kernel.barriers > 0 || !parsed_kernel.shared.is_empty();
    let mut offset = 0;
    let shared: Vec<SharedLayout> = parsed_kernel
        .shared
        .iter()
        .map(|d| {
            let l = SharedLayout { name: d.name.clone(), offset, dims: d.dims.len(), atomic: d.atomic };
            offset += d.words();
            l
        })
        .collect();
    let program = hir::Program { kernel: parsed_kernel, helpers };
    let span = kernel.sig.ident.span();
    // The plain module, and the one for 1-D grids too long for one axis.
    let lowered = lower::lower_program(&program, &kernel_types, &helper_types, attr.workgroup_size, false)?;
    let folded = lower::lower_program(&program, &kernel_types, &helper_types, attr.workgroup_size, true)?;
    let (wgsl, spirv) = emit::emit(&lowered.module, &lowered.spans, span).map_err(|d| vec![d])?;
    let (wgsl_folded, spirv_folded) = emit::emit(&folded.module, &folded.spans, span).map_err(|d| vec![d])?;
    let reparse = |w: &str| {
        emit::reparse_wgsl(w).map_err(|e| {
            vec![Diagnostic::new(span, format!("internal compiler error: the generated WGSL does not re-parse: {e}"))]
        })
    };
    let entry_point = reparse(&wgsl)?;
    if reparse(&wgsl_folded)? != entry_point {
        return Err(vec![Diagnostic::new(
            span,
            "internal compiler error: the folded module's entry point has another name",
        )]);
    }
    // The explain view is for people: if it fails, say so in it.
    let items: Vec<&syn::ItemFn> = std::iter::once(kernel)
        .chain(helper_items.iter().filter(|h| program.helpers.iter().any(|p| h.sig.ident == p.name)))
        .collect();
    let explain = explain::explain(&program, &kernel_types, &helper_types, attr.workgroup_size, &items, &wgsl)
        .unwrap_or_else(|e| format!("(no explain view: internal compiler error: {e})\n"));
    Ok(CompiledKernel {
        name: kernel.sig.ident.to_string(),
        entry_point,
        wgsl,
        spirv,
        wgsl_folded,
        spirv_folded,
        workgroup_size: attr.workgroup_size,
        max_workgroup_invocations: attr.max_workgroup_invocations,
        params: lowered.params,
        uniform_binding: lowered.uniform_binding,
        uniform_size: lowered.uniform_size,
        writes_own_element,
        cooperative,
        shared,
        workgroup_memory_words: offset,
        module: lowered.module,
        spans: lowered.spans,
        explain,
    })
}

/// Parses the helpers the kernel reaches and orders them callees first.
/// Calls of functions that are not helpers, and recursion, are errors.
fn order_helpers(kernel: &hir::Function, helpers: &[syn::ItemFn]) -> Result<Vec<hir::Function>, Vec<Diagnostic>> {
    let by_name: HashMap<String, &syn::ItemFn> = helpers.iter().map(|h| (h.sig.ident.to_string(), h)).collect();
    let mut parsed: HashMap<String, hir::Function> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    // Depth-first from the kernel; `visiting` detects cycles.
    fn visit(
        name: &str,
        call_span: proc_macro2::Span,
        by_name: &HashMap<String, &syn::ItemFn>,
        parsed: &mut HashMap<String, hir::Function>,
        order: &mut Vec<String>,
        visiting: &mut Vec<String>,
        errors: &mut Vec<Diagnostic>,
    ) {
        if order.iter().any(|n| n == name) {
            return;
        }
        if visiting.iter().any(|n| n == name) {
            let start = visiting.iter().position(|n| n == name).unwrap_or(0);
            let cycle = visiting[start..].join("` → `");
            errors.push(
                Diagnostic::new(
                    call_span,
                    format!("recursion is not supported: `{name}` calls itself (`{cycle}` → `{name}`)"),
                )
                .help("GPUs have no call stack; rewrite it as a loop"),
            );
            return;
        }
        let Some(item) = by_name.get(name) else {
            errors.push(Diagnostic::new(call_span, format!("`{name}` is not a `#[helper]` function")).help(format!(
                "mark `fn {name}` with `#[helper]` so that kernels can call it (helpers take and return scalars)"
            )));
            return;
        };
        match parse::parse_function(item, parse::FnRole::Helper) {
            Ok(f) => {
                visiting.push(name.to_string());
                let calls: Vec<(String, proc_macro2::Span)> = call_sites(&f);
                parsed.insert(name.to_string(), f);
                for (callee, span) in calls {
                    visit(&callee, span, by_name, parsed, order, visiting, errors);
                }
                visiting.pop();
                order.push(name.to_string());
            }
            // The `#[helper]` attribute reports these at the helper itself.
            Err(e) => errors.extend(e.into_iter().map(|d| Diagnostic { reported_by_helper: true, ..d })),
        }
    }
    let mut visiting = Vec::new();
    for (callee, span) in call_sites(kernel) {
        visit(&callee, span, &by_name, &mut parsed, &mut order, &mut visiting, &mut errors);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(order.into_iter().filter_map(|n| parsed.remove(&n)).collect())
}

/// The helper calls in `f`, each with the span of one call.
fn call_sites(f: &hir::Function) -> Vec<(String, proc_macro2::Span)> {
    let mut out: Vec<(String, proc_macro2::Span)> = Vec::new();
    for e in &f.exprs {
        if let hir::ExprKind::Call { name, .. } = &e.kind {
            if !out.iter().any(|(n, _)| n == name) {
                out.push((name.clone(), e.span));
            }
        }
    }
    out
}
