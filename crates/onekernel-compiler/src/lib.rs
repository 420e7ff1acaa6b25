//! The `#[kernel]` compiler: a restricted subset of Rust → naga IR →
//! validated module → WGSL and SPIR-V, plus the Rust the proc macro emits,
//! with diagnostics that point at the user's tokens.
//!
//! The stages, each a function with a typed result (docs/architecture.md
//! is the map):
//!
//! 1. [`attr`]: the `#[kernel(...)]` arguments → [`KernelAttr`];
//! 2. [`parse`], the recogniser: syn → [`hir::Function`], the only pass
//!    that reads syn's tree ([`builtins`] holds its tables);
//! 3. [`gather`]: the helpers the kernel calls → [`hir::Program`];
//! 4. [`check`]: exact Rust types ([`infer`]), barriers in uniform control
//!    flow ([`uniformity`]), facts the runtime uses ([`analysis`]) →
//!    [`Checked`];
//! 5. [`layout`]: bindings, uniform offsets, shared memory → [`Layout`];
//! 6. [`lower`] and [`emit`]: naga modules, validated, as WGSL and SPIR-V
//!    → [`Shaders`]; [`explain`] the learner's view;
//! 7. [`expand`]: the Rust the macro emits (kernel info, launch, the CPU
//!    body generated from the HIR, helpers, the fallback on errors).
//!
//! Text and tokens from outside are parsed with [`parse_source`] and
//! [`parse_tokens`], which first check that they nest at most
//! [`MAX_NESTING`] deep ([`nesting`]): every stage recurses on the tree.
//!
//! [`compile_kernel`] runs stages 1–6 for each instantiation of a kernel
//! (the macro's entry point) and returns [`CompiledKernel`]s whose
//! [`CompiledKernel::info`] is the ABI description the runtime reads
//! (`onekernel_abi::KernelInfo`); [`compile_program`] compiles a whole
//! file's kernels ([`driver`]: the tools' entry point). This crate has no
//! `proc_macro` types in its API, so tools and tests call them directly
//! ([`compile`] is the tests' shorthand).

pub mod analysis;
pub mod arena;
pub mod attr;
pub mod builtins;
pub mod debug;
pub mod diagnostic;
pub mod driver;
pub mod emit;
pub mod expand;
pub mod explain;
pub mod gather;
pub mod hir;
pub mod infer;
pub mod layout;
pub mod lower;
pub mod nesting;
pub mod parse;
pub mod specialise;
pub mod split;
pub mod types;
pub mod uniformity;
pub mod visit;

pub use attr::KernelAttr;
pub use diagnostic::Diagnostic;
pub use driver::{compile_program, Kernel, Program};
pub use layout::Layout;
pub use nesting::{parse_source, parse_tokens, MAX_NESTING};

use onekernel_abi::{CpuPlan, KernelInfo, Module, ModuleKey};
use std::borrow::Cow;
use std::collections::HashMap;

/// A program that passed every check: what the back ends read.
#[derive(Debug)]
pub struct Checked {
    /// The kernel and the helpers it calls.
    pub program: hir::Program,
    /// The kernel's types.
    pub kernel_types: infer::Types,
    /// Each helper's types, in `program.helpers` order.
    pub helper_types: Vec<infer::Types>,
    /// Which of the kernel's locals, parameters and expressions are the
    /// same in every invocation of a workgroup.
    pub uniformity: uniformity::UniformityInfo,
    /// How the CPU executor runs the kernel ([`analysis::cpu_plan`]).
    pub cpu: CpuPlan,
}

/// The GPU code of one kernel.
pub struct Shaders {
    /// The entry point's name (naga renames Rust names that are WGSL
    /// keywords).
    pub entry_point: String,
    /// One module per key of [`MODULES`], in that order: WGSL (validated,
    /// and re-parsed by naga), and SPIR-V where [`writes_spirv`] says.
    pub modules: Vec<Module>,
    /// The check sites of the checked modules.
    pub checks: Vec<onekernel_abi::CheckSite>,
    /// The plain naga module, for inspection.
    pub module: naga::Module,
    /// naga span id → the user's tokens.
    pub spans: Vec<proc_macro2::Span>,
}

impl Shaders {
    /// The WGSL of module `key` (`""` if it was not built).
    pub fn wgsl(&self, key: ModuleKey) -> &str {
        self.modules.iter().find(|m| m.key == key).map_or("", |m| &m.wgsl)
    }
}

/// The modules [`shaders`] builds for every kernel, the table
/// `KernelInfo::modules` (and the runtime's choice among them,
/// `gpu/launch.rs`): the plain module, the folded one for 1-D grids longer
/// than one dispatch dimension, and both checked.
pub const MODULES: [ModuleKey; 4] =
    [ModuleKey::PLAIN, ModuleKey::FOLDED, ModuleKey::CHECKED, ModuleKey::CHECKED_FOLDED];

/// Whether [`shaders`] writes SPIR-V for module `key`: only what someone
/// reads. Programs read the plain module's (`name::SPIRV`,
/// `inspect::spirv`, `onekernel explain --emit spirv`); the runtime
/// compiles WGSL, so no other module's SPIR-V is written (nor embedded in
/// every program).
pub fn writes_spirv(key: ModuleKey) -> bool {
    key == ModuleKey::PLAIN
}

/// Everything the compiler produced for one kernel.
pub struct CompiledKernel {
    /// What the runtime needs (the ABI description the macro writes into
    /// the user's crate as `KERNEL`).
    pub info: KernelInfo,
    /// The checked program, from which the CPU body is generated.
    pub checked: Checked,
    /// The data layout.
    pub layout: Layout,
    /// The plain naga module, for inspection.
    pub module: naga::Module,
    /// The instantiation compiled.
    pub instance: Instance,
}

/// One instantiation of a kernel: the values its generic parameters stand
/// for (none for a plain kernel).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Instance {
    /// The type a generic kernel's type parameter stands for (`f32` in
    /// `axpy::<f32>`).
    pub ty: Option<types::Ty>,
}

impl Instance {
    /// The kernel's name in this instantiation: `axpy`, `axpy::<f32>`.
    pub fn name(&self, kernel: &syn::Ident) -> String {
        match self.ty {
            Some(ty) => format!("{kernel}::<{}>", ty.rust_name()),
            None => kernel.to_string(),
        }
    }
}

/// Choices a tool makes about the modules the compiler builds (the macro
/// uses the defaults).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The default loop budget of the checked modules (see
    /// [`lower::Variant::loop_budget`]; `None`:
    /// `onekernel_abi::report::DEFAULT_LOOP_BUDGET`): every checked launch
    /// counts loop iterations, and an endless loop ends with
    /// `LaunchError::LoopBudget` instead of hanging the GPU. The runtime's
    /// `Device::with_loop_budget` overrides it per launch.
    pub loop_budget: Option<u32>,
}

/// Compiles a kernel (with the helper functions it may call) as the
/// `#[kernel]` macro does: every instantiation of it, in order (one for a
/// plain kernel; for a generic one, `fn axpy<T: Num>`, one per type of its
/// bound, or of the attribute's `types = [..]`). The errors are those of
/// the first instantiation that fails (the others would repeat them).
/// Helpers the kernel does not call (directly or through other helpers)
/// are left out. A whole file: [`compile_program`].
pub fn compile_kernel(
    kernel: &Kernel,
    helpers: &[syn::ItemFn],
    options: &Options,
) -> Result<Vec<CompiledKernel>, Vec<Diagnostic>> {
    let mut compiled = Vec::new();
    for instance in instances(kernel) {
        match compile_instance(kernel, helpers, options, &instance) {
            Ok(c) => compiled.push(c),
            // Earlier types compiled: the problem is this type's (a shared
            // array too large for 8-byte elements, ...), so say which.
            Err(errors) if !compiled.is_empty() => {
                let bound = parse::generic_param(&kernel.item.sig).ok().flatten().map(|g| g.bound.name());
                let note = format!(
                    "in `{}`: the kernel is compiled once per type of `{}`",
                    instance.name(&kernel.item.sig.ident),
                    bound.unwrap_or_default()
                );
                return Err(errors.into_iter().map(|d| d.note(note.clone())).collect());
            }
            Err(errors) => return Err(errors),
        }
    }
    Ok(compiled)
}

/// [`compile_kernel`]'s first instantiation, for a kernel outside any
/// `#[onekernel::kernels]` module, with the default [`Options`]: the
/// shorthand tests use. `attr` holds the tokens inside `#[kernel(...)]`.
pub fn compile(
    attr: proc_macro2::TokenStream,
    kernel: &syn::ItemFn,
    helpers: &[syn::ItemFn],
) -> Result<CompiledKernel, Vec<Diagnostic>> {
    let kernel = Kernel { attr, item: kernel.clone(), module: Default::default() };
    let first = instances(&kernel).swap_remove(0);
    compile_instance(&kernel, helpers, &Options::default(), &first)
}

/// The instantiations of a kernel: one for a plain kernel (or a generic one
/// whose generics have errors, which its parse reports); for a generic
/// kernel, one per type of the attribute's `types = [..]` or else of the
/// bound (the first only when the attribute has errors, reported with the
/// body's).
fn instances(kernel: &Kernel) -> Vec<Instance> {
    let Ok(Some(param)) = parse::generic_param(&kernel.item.sig) else { return vec![Instance::default()] };
    let types = match KernelAttr::parse_for(kernel.attr.clone(), kernel.item.sig.fn_token.span, Some(param.bound)) {
        Ok(KernelAttr { types: Some(types), .. }) => types,
        Ok(_) => param.bound.types().to_vec(),
        Err(_) => vec![param.bound.types()[0]],
    };
    types.into_iter().map(|ty| Instance { ty: Some(ty) }).collect()
}

/// Stages 1–6 for one instantiation of a kernel.
fn compile_instance(
    kernel: &Kernel,
    helpers: &[syn::ItemFn],
    options: &Options,
    instance: &Instance,
) -> Result<CompiledKernel, Vec<Diagnostic>> {
    let (attr, module, kernel) = (kernel.attr.clone(), &kernel.module, &kernel.item);
    let generic = parse::generic_param(&kernel.sig).ok().flatten();
    let attr = KernelAttr::parse_for(attr, kernel.sig.fn_token.span, generic.as_ref().map(|g| g.bound));
    let mut types = types::TypeTable::default();
    types.avoid_literals(int_literals(quote::ToTokens::to_token_stream(kernel)));
    let (scope, _) = parse::define_structs(module, &mut types);
    let parsed = parse::parse_function_at(kernel, parse::FnRole::Kernel, &mut types, &scope, instance.ty);
    // Report attribute and body problems together.
    let (attr, mut parsed) = match (attr, parsed) {
        (Ok(a), Ok(k)) => (a, k),
        (a, k) => {
            let mut all = a.err().unwrap_or_default();
            all.extend(k.err().unwrap_or_default());
            return Err(all);
        }
    };
    let (lowered_size, size_params) = workgroup_size_params(&attr, &mut parsed, &mut types)?;
    shared_memory_fits(&parsed, &types, attr.max_shared_bytes)?;
    let helper_fns = gather::order_helpers(&parsed, helpers, &mut types, &scope)?;
    let mut checked = check(hir::Program { kernel: parsed, helpers: helper_fns, types })?;
    if size_params.iter().any(Option::is_some) {
        // The phase executor's per-invocation state is sized by the
        // workgroup when the kernel is compiled: the futures executor runs
        // a kernel whose workgroup size the launch sets.
        if let onekernel_abi::CpuPlan::Cooperative { phased: true } = checked.cpu {
            checked.cpu = onekernel_abi::CpuPlan::Cooperative { phased: false };
        }
    } else {
        whole_subgroups(&checked, attr.workgroup_size)?;
    }
    let layout = Layout::of(&checked.program.kernel, &checked.program.types)?;
    let debug_sites =
        debug::sites(&checked.program, &checked.kernel_types, &checked.helper_types, &checked.program.types)?;
    let shaders = shaders(&checked, &layout, lowered_size, options)?;
    // The explain view is for people: if it fails, say so in it.
    let items: Vec<&syn::ItemFn> = std::iter::once(kernel)
        .chain(helpers.iter().filter(|h| checked.program.helpers.iter().any(|p| h.sig.ident == p.name)))
        .collect();
    let explain = explain::explain(
        &checked.program,
        &checked.kernel_types,
        &checked.helper_types,
        &layout,
        lowered_size,
        &items,
        shaders.wgsl(ModuleKey::PLAIN),
    )
    .unwrap_or_else(|e| format!("(no explain view: internal compiler error: {e})\n"));
    let name = instance.name(&kernel.sig.ident);
    let info = KernelInfo {
        name: Cow::Owned(name),
        entry_point: Cow::Owned(shaders.entry_point),
        modules: Cow::Owned(shaders.modules),
        checks: Cow::Owned(shaders.checks),
        debug_sites: Cow::Owned(debug_sites),
        source_file: Cow::Borrowed(""),
        explain: Cow::Owned(explain),
        workgroup_size: attr.workgroup_size,
        max_workgroup_invocations: attr.max_workgroup_invocations,
        params: Cow::Owned(layout.params.clone()),
        uniform_binding: layout.uniform_binding,
        uniform_size: layout.uniform_size,
        params_binding: layout.params_binding,
        cpu: checked.cpu,
        workgroup_memory_words: layout.workgroup_memory_words,
        // The parameters' types, every wide type the kernel computes in, and
        // subgroups if it uses them: a device without one of them makes the
        // launch `LaunchError::MissingFeature`.
        features: {
            let features = layout.features.union(emit::features(&shaders.module));
            if visit::uses_subgroups(&checked.program.kernel) {
                features.union(onekernel_abi::Features::SUBGROUP)
            } else {
                features
            }
        },
        tile_shapes: Cow::Owned(tile_shapes(&checked)),
        consts: consts(&checked, attr.max_shared_bytes, size_params),
    };
    Ok(CompiledKernel { info, checked, layout, module: shaders.module, instance: instance.clone() })
}

/// Per axis of the workgroup, the index of the override that sets it.
type SizeParams = [Option<u16>; 3];

/// The axes of `workgroup_size` a const parameter or a constant of the
/// kernel's scope sets (`workgroup_size = BM`): each the override of that
/// name (a constant of the scope the body does not use is declared here,
/// an integer of any type), and the size the module is lowered with, the
/// override's placeholder on those axes ([`types::Symbol`]), which the
/// WGSL names (`@workgroup_size(BM, 1, 1)`).
fn workgroup_size_params(
    attr: &KernelAttr,
    kernel: &mut hir::Function,
    types: &mut types::TypeTable,
) -> Result<([u32; 3], SizeParams), Vec<Diagnostic>> {
    let mut size = attr.workgroup_size;
    let mut params = [None; 3];
    for (axis, named) in attr.workgroup_names.iter().enumerate() {
        let Some(attr::SizeName { name, span }) = named else { continue };
        let index = match kernel.overrides.iter().position(|o| o.name == *name) {
            Some(i) => i,
            None if parse::looks_like_const(name) => {
                kernel.overrides.push(hir::OverrideDecl {
                    name: name.clone(),
                    ty: Some(types::Ty::I32),
                    span: *span,
                    generic: false,
                    any_int: true,
                });
                kernel.overrides.len() - 1
            }
            None => {
                return Err(vec![Diagnostic::new(*span, format!("`{name}` is not a const parameter or a constant"))
                    .help("a workgroup size is a number, a const parameter of the kernel (`fn k<const BLOCK: u32>`) or a constant of its scope (`const BLOCK: u32 = 256;`)")])
            }
        };
        let Some(p) = types.symbolic_len(index, name) else {
            return Err(vec![Diagnostic::new(*span, "too many values set at the launch size this kernel")
                .help("use at most 32 different const parameters or constants as lengths and sizes")]);
        };
        size[axis] = p;
        params[axis] = Some(index as u16);
    }
    Ok((size, params))
}

/// The integers a token stream writes (`16`, `0x100u32`): no placeholder
/// of a symbolic length may be one ([`types::Symbol`]).
fn int_literals(tokens: proc_macro2::TokenStream) -> Vec<u32> {
    let mut out = Vec::new();
    for t in tokens {
        match t {
            proc_macro2::TokenTree::Group(g) => out.extend(int_literals(g.stream())),
            proc_macro2::TokenTree::Literal(l) => {
                if let Ok(syn::Lit::Int(i)) = syn::parse_str::<syn::Lit>(&l.to_string()) {
                    if let Ok(v) = i.base10_parse::<u32>() {
                        out.push(v);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The kernel's overrides as the runtime sees them: each parameter, and
/// what they size (`onekernel_abi::Consts::arrays`).
fn consts(checked: &Checked, max_shared_bytes: u32, workgroup_size: [Option<u16>; 3]) -> onekernel_abi::Consts {
    use onekernel_abi::{ArrayShape, ConstType, Dim};
    let (kernel, table) = (&checked.program.kernel, &checked.program.types);
    let params = kernel
        .overrides
        .iter()
        .enumerate()
        .map(|(i, o)| onekernel_abi::ConstParam {
            name: Cow::Owned(o.name.clone()),
            id: lower::OVERRIDE_ID_BASE + i as u16,
            ty: match o.ty {
                Some(types::Ty::I32) => ConstType::I32,
                Some(types::Ty::Usize) => ConstType::Usize,
                Some(types::Ty::F32) => ConstType::F32,
                Some(types::Ty::Bool) => ConstType::Bool,
                _ => ConstType::U32,
            },
            generic: o.generic,
        })
        .collect::<Vec<_>>();
    let dim = |n: u32| match table.symbol(n) {
        Some(s) => Dim::Param(s.over as u16),
        None => Dim::Lit(n),
    };
    let elem_bytes = |t: types::Ty| match t {
        types::Ty::F16 => 2,
        types::Ty::F64 | types::Ty::I64 | types::Ty::U64 => 8,
        t => t.as_vector().map_or(4, |v| v.bytes()),
    };
    let mut arrays = Vec::new();
    for (_, d) in kernel.shared.iter() {
        if d.dims.iter().any(|&n| table.symbol(n).is_some()) {
            arrays.push(ArrayShape {
                name: Cow::Owned(d.name.clone()),
                shared: true,
                elem_bytes: elem_bytes(d.elem),
                dims: Cow::Owned(d.dims.iter().map(|&n| dim(n)).collect()),
            });
        }
    }
    for (l, local) in kernel.locals.iter() {
        let mut ty = checked.kernel_types.locals[l];
        if !table.is_symbolic(ty) {
            continue;
        }
        let mut dims = Vec::new();
        while let Some((elem, n)) = table.as_array(ty) {
            dims.push(dim(n));
            ty = elem;
        }
        let shape = ArrayShape {
            name: Cow::Owned(local.name.clone()),
            shared: false,
            elem_bytes: elem_bytes(ty),
            dims: Cow::Owned(dims),
        };
        if !arrays.contains(&shape) {
            arrays.push(shape);
        }
    }
    onekernel_abi::Consts {
        params: Cow::Owned(params),
        values: Cow::Borrowed(&[]),
        arrays: Cow::Owned(arrays),
        workgroup_size,
        max_shared_bytes,
    }
}

/// The kernel's shared arrays fit in `max_bytes` (the WebGPU default
/// unless `#[kernel(max_shared_bytes = ..)]` raises it; the launch then
/// checks the device): else an error at the array that crosses the limit.
fn shared_memory_fits(kernel: &hir::Function, table: &types::TypeTable, max_bytes: u32) -> Result<(), Vec<Diagnostic>> {
    use syn::spanned::Spanned;
    let mut used: u64 = 0;
    for (_, decl) in kernel.shared.iter() {
        if decl.dims.iter().any(|&n| table.symbol(n).is_some()) {
            // Sized at the launch, which checks the device's limit.
            continue;
        }
        used += u64::from(decl.words()) * 4;
        if used <= u64::from(max_bytes) {
            continue;
        }
        let span = decl.written_ty.span();
        let d = if max_bytes == attr::DEFAULT_MAX_SHARED_BYTES {
            Diagnostic::new(
                span,
                format!("{used} bytes of shared memory exceed the {max_bytes} bytes every WebGPU device provides"),
            )
            .help(format!(
                "use smaller tiles, or fewer shared arrays; to target devices that have more (desktop GPUs have 32768 or more), add `max_shared_bytes = {used}` to `#[kernel(..)]`"
            ))
        } else {
            Diagnostic::new(
                span,
                format!(
                    "{used} bytes of shared memory exceed the {max_bytes} bytes of `max_shared_bytes = {max_bytes}`"
                ),
            )
            .help("raise `max_shared_bytes`, or use smaller tiles")
        };
        return Err(vec![d]);
    }
    Ok(())
}

/// A kernel with matrix tiles needs whole subgroups: a tile is spread over
/// every lane of a subgroup, and a partial one (a workgroup of 16 threads
/// on a GPU with 32-lane subgroups) leaves part of it undefined. Workgroups
/// of a multiple of 32 threads fill the subgroups of every GPU with
/// cooperative matrices we know (NVIDIA's are 32 lanes).
fn whole_subgroups(checked: &Checked, workgroup_size: [u32; 3]) -> Result<(), Vec<Diagnostic>> {
    let k = &checked.program.kernel;
    let mut first = None;
    visit::visit_block(k, &k.body, 0, &mut |id, kind, _| {
        if first.is_none() && matches!(kind, hir::ExprKind::Tile { .. }) {
            first = Some(k.exprs[id].span);
        }
    });
    let threads: u32 = workgroup_size.iter().product();
    match first {
        Some(span) if threads % 32 != 0 => Err(vec![Diagnostic::new(
            span,
            format!("matrix tiles need whole subgroups, and a workgroup of {threads} threads is not a multiple of 32"),
        )
        .help("a subgroup (32 threads on NVIDIA GPUs) holds each tile together: use `#[kernel(workgroup_size = 32)]`, 64, 128, 256, ...")]),
        _ => Ok(()),
    }
}

/// The tile products the kernel computes, each shape once: what the runtime
/// checks against the device's cooperative matrices.
fn tile_shapes(checked: &Checked) -> Vec<onekernel_abi::TileShape> {
    use crate::types::{TileElem, Ty};
    let k = &checked.program.kernel;
    let scalar = |e: TileElem| match e {
        TileElem::F16 => onekernel_abi::ScalarType::F16,
        TileElem::F32 => onekernel_abi::ScalarType::F32,
    };
    let mut shapes = Vec::new();
    visit::visit_block(k, &k.body, 0, &mut |_, kind, _| {
        if let hir::ExprKind::Tile { op: hir::TileOp::MulAdd, args, .. } = kind {
            let t = |i: usize| match checked.kernel_types.exprs[args[i]] {
                Ty::Tile(t) => Some(t),
                _ => None,
            };
            if let (Some(a), Some(b), Some(c)) = (t(0), t(1), t(2)) {
                let shape = onekernel_abi::TileShape {
                    m: u32::from(a.rows),
                    n: u32::from(b.cols),
                    k: u32::from(a.cols),
                    ab: scalar(a.elem),
                    acc: scalar(c.elem),
                };
                if !shapes.contains(&shape) {
                    shapes.push(shape);
                }
            }
        }
    });
    shapes
}

/// Stage 4: types every function, checks the kernel's barriers, and
/// decides how the CPU may run it.
pub fn check(mut program: hir::Program) -> Result<Checked, Vec<Diagnostic>> {
    if let Some(&span) = program.kernel.buffer_args.first() {
        // Helpers take scalars only, so passing a buffer is a type error
        // that rustc reports (the kernel is emitted unchanged).
        return Err(vec![Diagnostic::left_to_rustc(span)]);
    }
    let sigs: HashMap<String, infer::Signature> = program
        .helpers
        .iter()
        .map(|h| {
            let params = h.params.iter().map(|(_, p)| p.kind.ty()).collect();
            (h.name.clone(), infer::Signature { params, ret: h.ret })
        })
        .collect();
    let mut errors = Vec::new();
    let mut helper_types = Vec::new();
    for h in &program.helpers {
        match infer::infer(h, &sigs, &mut program.types) {
            Ok(t) => helper_types.push(t),
            Err(e) => errors.extend(e),
        }
    }
    let kernel_types = infer::infer(&program.kernel, &sigs, &mut program.types);
    let kernel_types = match kernel_types {
        Ok(t) if errors.is_empty() => t,
        Ok(_) => return Err(errors),
        Err(e) => {
            errors.extend(e);
            return Err(errors);
        }
    };
    type_scope_constants(&mut program.kernel, &kernel_types)?;
    let uniformity = uniformity::analyze(&program.kernel)?;
    let cpu = analysis::cpu_plan(&program, &kernel_types, &uniformity);
    Ok(Checked { program, kernel_types, helper_types, uniformity, cpu })
}

/// The types WGSL `override`s may have that a kernel's constants have.
const OVERRIDE_TYPES: [types::Ty; 5] =
    [types::Ty::U32, types::Ty::I32, types::Ty::Usize, types::Ty::F32, types::Ty::Bool];

/// Gives each constant of the kernel's scope (`BLOCK`) the type its uses
/// have; the generated launch asserts it against rustc's (see
/// `expand/launch.rs`).
fn type_scope_constants(kernel: &mut hir::Function, types: &infer::Types) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    for i in 0..kernel.overrides.len() {
        if kernel.overrides[i].ty.is_some() {
            continue;
        }
        let ty = kernel
            .exprs
            .iter()
            .find(|(_, e)| matches!(e.kind, hir::ExprKind::Override(j) if j == i))
            .map(|(id, _)| types.exprs[id]);
        let o = &mut kernel.overrides[i];
        o.any_int = types.any_int_overrides.get(i).copied().unwrap_or(false);
        match ty {
            Some(t) if OVERRIDE_TYPES.contains(&t) => o.ty = Some(t),
            Some(types::Ty::Unit) | None => errors.push(
                Diagnostic::new(o.span, format!("the kernel cannot tell the type of `{}` from its uses", o.name))
                    .note(format!("`{}` is a constant of the kernel's Rust scope: the launch supplies its value", o.name))
                    .help(format!("use it where its type is known, e.g. `let n: u32 = {};`", o.name)),
            ),
            Some(t) => errors.push(
                Diagnostic::new(o.span, format!("a kernel cannot use a constant of its Rust scope of type `{t}`"))
                    .note(format!(
                        "`{}` is set when the pipeline is created (a WGSL `override`), which holds a `u32`, `i32`, `usize`, `f32` or `bool`",
                        o.name
                    ))
                    .help(format!("define `{}` inside the kernel's body, or in a `#[onekernel::kernels]` module with the kernel", o.name)),
            ),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Stage 6: the modules of [`MODULES`], validated and written as WGSL
/// (and SPIR-V, [`writes_spirv`]); every WGSL re-parsed as an oracle.
pub fn shaders(
    checked: &Checked,
    layout: &Layout,
    workgroup_size: [u32; 3],
    options: &Options,
) -> Result<Shaders, Vec<Diagnostic>> {
    let span = checked.program.kernel.span;
    let mut modules = Vec::with_capacity(MODULES.len());
    let mut plain = None;
    let mut checks = Vec::new();
    for key in MODULES {
        let variant = lower::Variant { loop_budget: options.loop_budget, ..lower::Variant::of(key) };
        let lowered = lower::lower_program(
            &checked.program,
            &checked.kernel_types,
            &checked.helper_types,
            layout,
            workgroup_size,
            variant,
        )?;
        let (wgsl, spirv) = if writes_spirv(key) {
            let (wgsl, spirv) = emit::emit(&lowered, span)?;
            (wgsl, Some(Cow::Owned(spirv)))
        } else {
            (emit::emit_wgsl(&lowered, span)?, None)
        };
        modules.push(Module { key, wgsl: Cow::Owned(wgsl), spirv });
        if key == ModuleKey::CHECKED {
            checks = lowered.checks;
        } else if key == ModuleKey::PLAIN {
            plain = Some(lowered);
        }
    }
    let plain = plain.expect("MODULES holds the plain module");
    let params = consts(checked, 0, [None; 3]).params;
    let symbols = checked.program.types.symbols();
    let reparse = |w: &str| {
        let w = emit::with_placeholders(w, &params, symbols)
            .map_err(|e| vec![Diagnostic::new(span, format!("internal compiler error: {e}"))])?;
        emit::reparse_wgsl(&w).map_err(|e| {
            // naga's WGSL parser stops at 200 levels of statements and
            // expressions inside each other (the GPU driver's may stop
            // sooner): the kernel is too deep for WGSL, not wrong.
            if e.contains("recursion limit exceeded") {
                return vec![Diagnostic::new(span, "this kernel's GPU code nests too deep for WGSL parsers")
                    .note("naga reads at most 200 levels of statements and expressions inside each other")
                    .help("split deep expressions into `let` statements, or move part of the code into a `#[helper]` function")];
            }
            vec![Diagnostic::new(span, format!("internal compiler error: the generated WGSL does not re-parse: {e}"))]
        })
    };
    let entry_points = modules.iter().map(|m| reparse(&m.wgsl)).collect::<Result<Vec<_>, _>>()?;
    let entry_point = entry_points[0].clone();
    if entry_points.iter().any(|e| *e != entry_point) {
        return Err(vec![Diagnostic::new(span, "internal compiler error: a variant's entry point has another name")]);
    }
    Ok(Shaders { entry_point, modules, checks, module: plain.module, spans: plain.spans })
}
