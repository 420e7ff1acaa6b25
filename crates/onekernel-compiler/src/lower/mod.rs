//! HIR → naga IR.
//!
//! [`lower_program`] builds one `naga::Module` holding the kernel's entry
//! point, its helper functions and the small polyfills some Rust methods
//! need. Its globals follow the kernel's [`Layout`] (bindings, the uniform
//! block, shared arrays).
//!
//! Every kernel is lowered in several [`Variant`]s (one per
//! [`ModuleKey`] of `crate::MODULES`, and the explain build): the plain module, whose
//! thread indexing is WGSL's own builtins; a "folded" module for 1-D grids
//! longer than 65535 workgroups, which the runtime dispatches as full 2-D
//! rows plus a remainder (see `FnLowerer::prologue`), so unfolded launches
//! pay nothing for folding and the WGSL a learner reads is the plain one;
//! the checked modules (plain and folded) of checked launches, in which
//! every index and integer divisor is checked (see `lower/checks.rs`); and the
//! explain build, whose line markers `crate::explain` reads.
//!
//! Every naga span is `Span::new(id, id + 1)` where `id` indexes
//! [`Lowered::spans`]: a side table back to the user's tokens.

mod checks;
mod const_reject;
mod debug;
mod expr;
mod fold_wide;
mod function;
mod matching;
mod math;
mod polyfill;
mod tile;

use crate::arena::HandleMap;
use crate::diagnostic::Diagnostic;
use crate::hir::{self, ParamKind};
use crate::infer::Types;
use crate::layout::Layout;
use crate::types::{Compound, Ty, TypeTable};
use naga::{
    AddressSpace, ArraySize, GlobalVariable, Handle, MemoryDecorations, Module, ResourceBinding, Scalar, StorageAccess,
    StructMember, Type, TypeInner, VectorSize,
};
use onekernel_abi::{launch_block, ModuleKey};
use std::collections::HashMap;

pub(crate) use function::FnLowerer;

/// Which module to build: a [`ModuleKey`] (what each of its flags means to
/// the lowering is read here, in [`lower_program`]) and the lowering's own
/// options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// The module of the kernel's table it is
    /// (`onekernel_abi::KernelInfo::modules`): `folded`, the logical ids
    /// rebuilt from the folded dispatch and the launch block
    /// (`FnLowerer::prologue`); `checked`, every buffer, shared and array
    /// index and every integer divisor checked, failures recorded in the
    /// report buffer at `@binding(uniform_binding + 1)` (see
    /// `lower/checks.rs`).
    pub module: ModuleKey,
    /// Checked modules only: the default of the loop budget (every loop
    /// iteration counts, and loops break, reporting it, once a module-wide
    /// count per invocation passes the budget; see `lower/checks.rs`).
    /// `None`: `onekernel_abi::report::DEFAULT_LOOP_BUDGET`. The runtime
    /// may set another when it creates the pipeline.
    pub loop_budget: Option<u32>,
    /// The plain module with line markers, for the explain view only:
    /// before each statement that starts a new Rust line, the body stores
    /// that line number into `var<private> explain_line: u32`.
    pub explain: bool,
}

impl Variant {
    /// The module a learner reads and the runtime runs for ordinary grids.
    pub const PLAIN: Variant = Variant::of(ModuleKey::PLAIN);
    /// The explain build (see [`Variant::explain`]).
    pub const EXPLAIN: Variant = Variant { explain: true, ..Variant::PLAIN };
    /// The module `key`, with the default loop budget.
    pub const fn of(module: ModuleKey) -> Variant {
        Variant { module, loop_budget: None, explain: false }
    }
}

/// The result of lowering.
pub struct Lowered {
    /// The module (not yet validated).
    pub module: Module,
    /// naga span id → the user's tokens.
    pub spans: Vec<proc_macro2::Span>,
    /// Checked variants: the check sites, by the index a failure reports.
    pub checks: Vec<onekernel_abi::CheckSite>,
    /// The layout the macro gives each of the user's structs in the
    /// module, which its WGSL must have (`emit::check_layouts`).
    pub host_structs: Vec<crate::emit::HostLayout>,
    /// The array lengths the launch sets, as placeholders in the module
    /// (`emit::name_symbols` names them in the WGSL).
    pub symbols: Vec<crate::types::Symbol>,
}

/// Module-wide state shared by the functions being lowered.
pub(crate) struct ModuleBuilder {
    pub module: Module,
    pub spans: Vec<proc_macro2::Span>,
    types: HashMap<Ty, Handle<Type>>,
    /// The program's compound types.
    pub table: TypeTable,
    /// Sizes and alignments of the module's types, for array strides and
    /// struct offsets.
    layouter: naga::proc::Layouter,
    /// Lowered helper functions by Rust name.
    pub helpers: HashMap<String, (Handle<naga::Function>, Ty)>,
    /// Polyfill functions (integer `pow`, `powi`) by name; see [`polyfill`].
    pub polyfills: HashMap<String, Handle<naga::Function>>,
    /// Explain mode only (see [`lower_program_explain`]): the
    /// `var<private> explain_line: u32` that line markers store into.
    pub explain_line: Option<Handle<GlobalVariable>>,
    /// Checked variants only: the report buffer and the sites.
    pub(crate) checks: Option<checks::Checks>,
    /// Kernels with `println!`, `assert!`, ...: the print buffer.
    pub(crate) debug: Option<debug::DebugBuffer>,
    /// The kernel's overrides (`hir::Function::overrides`), in order.
    pub overrides: Vec<Handle<naga::Override>>,
}

impl ModuleBuilder {
    fn new(table: &TypeTable) -> Self {
        ModuleBuilder {
            module: Module::default(),
            spans: Vec::new(),
            types: HashMap::new(),
            table: table.clone(),
            layouter: naga::proc::Layouter::default(),
            helpers: HashMap::new(),
            polyfills: HashMap::new(),
            explain_line: None,
            checks: None,
            debug: None,
            overrides: Vec::new(),
        }
    }

    /// A naga span standing for `span`.
    pub fn span(&mut self, span: proc_macro2::Span) -> naga::Span {
        let id = self.spans.len() as u32;
        self.spans.push(span);
        naga::Span::new(id, id + 1)
    }

    /// The naga type for a kernel type (`usize` is `u32`).
    pub fn ty(&mut self, ty: Ty) -> Handle<Type> {
        if let Some(h) = self.types.get(&ty) {
            return *h;
        }
        let inner = match ty {
            Ty::Bool => TypeInner::Scalar(Scalar::BOOL),
            Ty::F32 => TypeInner::Scalar(Scalar::F32),
            Ty::I32 => TypeInner::Scalar(Scalar::I32),
            Ty::U32 | Ty::Usize => TypeInner::Scalar(Scalar::U32),
            Ty::F16 => TypeInner::Scalar(Scalar::F16),
            Ty::F64 => TypeInner::Scalar(Scalar::F64),
            Ty::I64 => TypeInner::Scalar(Scalar::I64),
            Ty::U64 => TypeInner::Scalar(Scalar::U64),
            Ty::Dim3 => TypeInner::Vector { size: VectorSize::Tri, scalar: Scalar::U32 },
            Ty::Vector(v) => TypeInner::Vector { size: vector_size(v.size), scalar: lane_scalar(v.lane) },
            Ty::Compound(id) => match self.table.get(id).clone() {
                Compound::Array { elem, len } => {
                    let base = self.ty(elem);
                    let (size, align) = self.size_align(base);
                    let size_n = ArraySize::Constant(std::num::NonZeroU32::new(len).expect("arrays are not empty"));
                    TypeInner::Array { base, size: size_n, stride: size.next_multiple_of(align) }
                }
                Compound::Tuple(elems) => {
                    let mut members = Vec::new();
                    let (mut offset, mut max_align) = (0u32, 1u32);
                    for (i, t) in elems.iter().enumerate() {
                        let h = self.ty(*t);
                        let (size, align) = self.size_align(h);
                        offset = offset.next_multiple_of(align);
                        max_align = max_align.max(align);
                        members.push(StructMember { name: Some(format!("m{i}")), ty: h, binding: None, offset });
                        offset += size;
                    }
                    TypeInner::Struct { members, span: offset.next_multiple_of(max_align) }
                }
                Compound::Struct { fields, .. } => {
                    // WGSL's layout, which the struct's declaration was
                    // checked to have in Rust too (`expand/structs.rs`).
                    let offsets = self.table.struct_offsets(ty).unwrap_or_default();
                    let (size, _) = self.table.wgsl_layout(ty).unwrap_or((0, 4));
                    let members = fields
                        .iter()
                        .zip(offsets)
                        .map(|((name, t), offset)| StructMember {
                            name: Some(name.clone()),
                            ty: self.ty(*t),
                            binding: None,
                            offset,
                        })
                        .collect();
                    TypeInner::Struct { members, span: size }
                }
            },
            Ty::Tile(t) => tile::tile_inner(t),
            Ty::Unit | Ty::Never => unreachable!("unit has no naga type"),
        };
        // Tuples become structs; name them after their element types.
        let name = match (&inner, ty) {
            (TypeInner::Struct { .. }, Ty::Compound(_)) if self.table.as_struct(ty).is_some() => {
                self.table.as_struct(ty).map(|(n, _)| n.to_string())
            }
            (TypeInner::Struct { .. }, Ty::Compound(_)) => {
                let n = self.table.name(ty);
                Some(format!("tuple_{}", n.trim_matches(|c| c == '(' || c == ')').replace(", ", "_")))
            }
            _ => None,
        };
        let h = self.module.types.insert(Type { name, inner }, naga::Span::UNDEFINED);
        self.types.insert(ty, h);
        h
    }

    /// The layout of each of the user's structs in the module, from the
    /// type table (the layout `expand/structs.rs` asserts against rustc's).
    fn host_structs(&self) -> Vec<crate::emit::HostLayout> {
        let mut structs: Vec<_> = self
            .types
            .iter()
            .filter_map(|(ty, h)| {
                let (name, fields) = self.table.as_struct(*ty)?;
                let offsets = self.table.struct_offsets(*ty)?;
                let (size, _) = self.table.wgsl_layout(*ty)?;
                Some(crate::emit::HostLayout {
                    ty: *h,
                    name: name.to_string(),
                    fields: fields.iter().map(|(n, _)| n.clone()).zip(offsets).collect(),
                    size,
                })
            })
            .collect();
        structs.sort_by_key(|s| s.ty.index());
        structs
    }

    /// Size and alignment of a type already in the module.
    fn size_align(&mut self, h: Handle<Type>) -> (u32, u32) {
        // The layouter catches up with the types added since its last call.
        if self.layouter.update(self.module.to_ctx()).is_err() {
            return (self.module.types[h].inner.size(self.module.to_ctx()), 4);
        }
        let l = self.layouter[h];
        (l.size, l.alignment.round_up(1))
    }

    /// `atomic<u32>` / `atomic<i32>`.
    pub fn atomic(&mut self, elem: Ty) -> Handle<Type> {
        let scalar = if elem == Ty::I32 { Scalar::I32 } else { Scalar::U32 };
        self.module.types.insert(Type { name: None, inner: TypeInner::Atomic(scalar) }, naga::Span::UNDEFINED)
    }

    /// `vec2<f32>`, for `hypot`.
    pub fn vec2_f32(&mut self) -> Handle<Type> {
        self.module.types.insert(
            Type { name: None, inner: TypeInner::Vector { size: VectorSize::Bi, scalar: Scalar::F32 } },
            naga::Span::UNDEFINED,
        )
    }
}

/// naga's size of a vector of `n` lanes.
pub(crate) fn vector_size(n: u8) -> VectorSize {
    match n {
        2 => VectorSize::Bi,
        3 => VectorSize::Tri,
        _ => VectorSize::Quad,
    }
}

/// naga's scalar of a vector's lanes.
pub(crate) fn lane_scalar(lane: crate::types::Lane) -> Scalar {
    match lane {
        crate::types::Lane::F32 => Scalar::F32,
        crate::types::Lane::I32 => Scalar::I32,
        crate::types::Lane::U32 => Scalar::U32,
        crate::types::Lane::F16 => Scalar::F16,
    }
}

/// What the kernel's function body reads from the module: its buffers and
/// the uniform block.
pub(crate) struct KernelGlobals {
    /// Buffer globals by parameter (None for scalars).
    pub buffers: HandleMap<hir::Param, Option<Handle<GlobalVariable>>>,
    /// The uniform block.
    pub params: Handle<GlobalVariable>,
    /// Member index in the uniform struct, by parameter.
    pub scalar_members: HandleMap<hir::Param, Option<u32>>,
    /// Member index in the uniform struct of a buffer's length word
    /// (`{name}_len: u32`, for buffers of sub-word elements), by parameter.
    pub length_members: HandleMap<hir::Param, Option<u32>>,
    /// The `var<workgroup>` of each shared array.
    pub shared: HandleMap<hir::SharedDecl, Handle<GlobalVariable>>,
}

/// Lowers a typed program into a naga module.
pub fn lower_program(
    program: &hir::Program,
    kernel_types: &Types,
    helper_types: &[Types],
    layout: &Layout,
    workgroup_size: [u32; 3],
    variant: Variant,
) -> Result<Lowered, Vec<Diagnostic>> {
    let mut mb = ModuleBuilder::new(&program.types);
    if variant.explain {
        let ty = mb.ty(Ty::U32);
        let global = GlobalVariable {
            name: Some(EXPLAIN_LINE.into()),
            space: AddressSpace::Private,
            binding: None,
            ty,
            init: None,
            memory_decorations: MemoryDecorations::empty(),
        };
        mb.explain_line = Some(mb.module.global_variables.append(global, naga::Span::UNDEFINED));
    }
    let ModuleKey { folded, checked } = variant.module;
    if checked {
        mb.checks = Some(checks::Checks::declare(&mut mb, layout.uniform_binding + 1, variant.loop_budget));
    }
    mb.debug =
        debug::DebugBuffer::for_program(&mut mb, program, kernel_types, helper_types, layout.uniform_binding + 2);
    declare_overrides(&mut mb, &program.kernel);
    // Helpers first: naga requires callees before callers.
    let bases = crate::debug::site_bases(program);
    for ((helper, types), base) in program.helpers.iter().zip(helper_types).zip(bases) {
        if let Some(d) = mb.debug.as_mut() {
            d.site_base = base;
        }
        let handle = FnLowerer::lower_helper(&mut mb, helper, types)?;
        mb.helpers.insert(helper.name.clone(), (handle, helper.ret));
    }
    let kernel = &program.kernel;
    if let Some(d) = mb.debug.as_mut() {
        d.site_base = 0;
    }
    let globals = declare_kernel_globals(&mut mb, kernel, layout);
    let entry = FnLowerer::lower_kernel(&mut mb, kernel, kernel_types, &globals, workgroup_size, folded)?;
    mb.module.entry_points.push(entry);
    // Local arrays indexed only by constants become scalars, shared arrays
    // of tile kernels are padded: the passes every specialisation of a
    // kernel with parameters gets too (one place decides).
    // Arrays sized by a parameter (a placeholder length here) are left for
    // each specialisation.
    let pending: Vec<u32> = mb.table.symbols().iter().map(|s| s.placeholder).collect();
    onekernel_abi::specialise::finish_module(&mut mb.module, &pending);
    // naga's WGSL writer writes `enable f16;` only for a module whose type
    // arena holds an `f16` type; a kernel whose `f16` values are all
    // conversions and named expressions (`let h = f16::from_f32(x);`) has
    // none there, and its WGSL would not parse. Interning the type (unused,
    // so nothing else changes) makes the writer enable it.
    if crate::emit::features(&mb.module).contains(onekernel_abi::Features::F16) {
        let f16 = naga::Type { name: None, inner: naga::TypeInner::Scalar(naga::Scalar::F16) };
        mb.module.types.insert(f16, naga::Span::UNDEFINED);
    }
    let host_structs = mb.host_structs();
    let checks = mb.checks.map(|c| c.sites).unwrap_or_default();
    let symbols = mb.table.symbols().to_vec();
    Ok(Lowered { module: mb.module, spans: mb.spans, checks, host_structs, symbols })
}

/// The first `@id` of the kernel's overrides (const parameters and
/// constants of its scope, in `hir::Function::overrides` order): the
/// checked modules' loop budget has id 0.
pub const OVERRIDE_ID_BASE: u16 = 1;

/// `override N: u32;` (with `@id(OVERRIDE_ID_BASE + i)`, so that the
/// runtime names it by id whatever name the WGSL writer gives it) for each
/// of the kernel's overrides, without a default: every launch sets them.
fn declare_overrides(mb: &mut ModuleBuilder, kernel: &hir::Function) {
    for (i, o) in kernel.overrides.iter().enumerate() {
        // The type check gave every override a type (`check`).
        let ty = mb.ty(o.ty.unwrap_or(Ty::U32));
        let id = OVERRIDE_ID_BASE + u16::try_from(i).unwrap_or(u16::MAX - OVERRIDE_ID_BASE);
        let h = mb
            .module
            .overrides
            .append(naga::Override { name: Some(o.name.clone()), id: Some(id), ty, init: None }, naga::Span::UNDEFINED);
        mb.overrides.push(h);
    }
}

/// Name of the marker global of [`Variant::EXPLAIN`].
pub const EXPLAIN_LINE: &str = "explain_line";

fn declare_kernel_globals(mb: &mut ModuleBuilder, kernel: &hir::Function, layout: &Layout) -> KernelGlobals {
    let mut buffers = HandleMap::filled(kernel.params.len(), None);
    let mut scalar_members = HandleMap::filled(kernel.params.len(), None);
    let mut length_members = HandleMap::filled(kernel.params.len(), None);
    let mut members = vec![
        StructMember {
            name: Some("grid_dim".into()),
            ty: mb.ty(Ty::Dim3),
            binding: None,
            offset: launch_block::GRID_DIM,
        },
        StructMember {
            name: Some("block_offset".into()),
            ty: mb.ty(Ty::U32),
            binding: None,
            offset: launch_block::BLOCK_OFFSET,
        },
    ];
    for ((id, p), info) in kernel.params.iter().zip(&layout.params) {
        let span = mb.span(p.span);
        match p.kind {
            ParamKind::Buffer { elem } | ParamKind::BufferMut { elem } | ParamKind::Atomics { elem } => {
                let base = if matches!(p.kind, ParamKind::Atomics { .. }) { mb.atomic(elem) } else { mb.ty(elem) };
                let stride = info.ty.stride();
                let array = mb.module.types.insert(
                    Type { name: None, inner: TypeInner::Array { base, size: ArraySize::Dynamic, stride } },
                    naga::Span::UNDEFINED,
                );
                let access = if info.kind.is_writable() {
                    StorageAccess::LOAD | StorageAccess::STORE
                } else {
                    StorageAccess::LOAD
                };
                let g = mb.module.global_variables.append(
                    GlobalVariable {
                        name: Some(p.name.clone()),
                        space: AddressSpace::Storage { access },
                        binding: Some(ResourceBinding { group: 0, binding: info.slot }),
                        ty: array,
                        init: None,
                        memory_decorations: MemoryDecorations::empty(),
                    },
                    span,
                );
                buffers[id] = Some(g);
                if let Some(offset) = launch_block::length_slot(&layout.params, id.index()) {
                    let name = unique_member(&members, format!("{}_len", p.name));
                    length_members[id] = Some(offset);
                    members.push(StructMember { name: Some(name), ty: mb.ty(Ty::U32), binding: None, offset });
                }
            }
            ParamKind::Scalar { ty, .. } => {
                let name = unique_member(&members, p.name.clone());
                scalar_members[id] = Some(info.slot);
                members.push(StructMember { name: Some(name), ty: mb.ty(ty), binding: None, offset: info.slot });
            }
        }
    }
    // Members in offset order (the length words precede every scalar), and
    // each parameter's member index in that order.
    members.sort_by_key(|m| m.offset);
    let index_of = |offset: u32| members.iter().position(|m| m.offset == offset).map(|i| i as u32);
    for (id, _) in kernel.params.iter() {
        scalar_members[id] = scalar_members[id].and_then(index_of);
        length_members[id] = length_members[id].and_then(index_of);
    }
    let st = mb.module.types.insert(
        Type { name: Some("LaunchParams".into()), inner: TypeInner::Struct { members, span: layout.uniform_size } },
        naga::Span::UNDEFINED,
    );
    let params = mb.module.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: match layout.params_binding {
                onekernel_abi::ParamsBinding::Uniform => AddressSpace::Uniform,
                onekernel_abi::ParamsBinding::Storage => AddressSpace::Storage { access: naga::StorageAccess::LOAD },
            },
            binding: Some(ResourceBinding { group: 0, binding: layout.uniform_binding }),
            ty: st,
            init: None,
            memory_decorations: MemoryDecorations::empty(),
        },
        naga::Span::UNDEFINED,
    );
    // Workgroup shared arrays: `var<workgroup> tile: array<f32, 256>;`.
    let shared = kernel
        .shared
        .iter()
        .map(|(_, d)| {
            let elem = if d.atomic { mb.atomic(d.elem) } else { mb.ty(d.elem) };
            let ty = d.dims.iter().rev().fold(elem, |base, &n| {
                let (size, align) = mb.size_align(base);
                let stride = size.next_multiple_of(align);
                let size = ArraySize::Constant(std::num::NonZeroU32::new(n).expect("checked > 0"));
                mb.module
                    .types
                    .insert(Type { name: None, inner: TypeInner::Array { base, size, stride } }, naga::Span::UNDEFINED)
            });
            let span = mb.span(d.span);
            mb.module.global_variables.append(
                GlobalVariable {
                    name: Some(d.name.clone()),
                    space: AddressSpace::WorkGroup,
                    binding: None,
                    ty,
                    init: None,
                    memory_decorations: MemoryDecorations::empty(),
                },
                span,
            )
        })
        .collect();
    KernelGlobals { buffers, params, scalar_members, length_members, shared: HandleMap::from_vec(shared) }
}

/// `name`, with `_` appended until no member of `members` has it (field
/// names must be unique within the struct).
fn unique_member(members: &[StructMember], mut name: String) -> String {
    while members.iter().any(|m| m.name.as_deref() == Some(&name)) {
        name.push('_');
    }
    name
}
