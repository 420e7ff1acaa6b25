//! HIR → naga IR.
//!
//! [`lower_program`] builds one `naga::Module` holding the kernel's entry
//! point, its helper functions and the small polyfills some Rust methods
//! need. The layout convention the runtime relies on:
//!
//! * buffer parameters are `@group(0) @binding(k)` storage arrays, `k`
//!   counting buffer parameters in order;
//! * one uniform block `params` follows them, holding the launch description
//!   (`grid_dim: vec3<u32>` at offset 0, `block_offset: u32` at 12) and
//!   then each scalar parameter (4 bytes each, from offset 16);
//! * every kernel is lowered twice: the plain module, whose thread indexing
//!   is WGSL's own builtins, and a "folded" module for 1-D grids longer
//!   than 65535 workgroups, which the runtime dispatches as full 2-D rows
//!   plus a remainder (see `FnLowerer::prologue`). Unfolded launches thus
//!   pay nothing for folding, and the WGSL a learner reads is the plain one.
//!
//! Every naga span is `Span::new(id, id + 1)` where `id` indexes
//! [`Lowered::spans`]: a side table back to the user's tokens.

mod expr;
mod function;
mod math;

use crate::diagnostic::Diagnostic;
use crate::hir::{self, ParamKind};
use crate::infer::Types;
use crate::types::Ty;
use naga::{
    AddressSpace, ArraySize, GlobalVariable, Handle, MemoryDecorations, Module, ResourceBinding, Scalar, StorageAccess,
    StructMember, Type, TypeInner, VectorSize,
};
use std::collections::HashMap;

pub(crate) use function::FnLowerer;

/// Byte offset of the first scalar parameter in the uniform block.
pub const FIRST_SCALAR_OFFSET: u32 = 16;

/// Where a kernel parameter lives on the GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// The Rust name.
    pub name: String,
    /// Its kind and type.
    pub kind: ParamKind,
    /// Binding index for buffers, byte offset in the uniform block for scalars.
    pub slot: u32,
}

/// The result of lowering.
pub struct Lowered {
    /// The module (not yet validated).
    pub module: Module,
    /// naga span id → the user's tokens.
    pub spans: Vec<proc_macro2::Span>,
    /// Each kernel parameter's binding or offset.
    pub params: Vec<ParamLayout>,
    /// Binding index of the uniform block.
    pub uniform_binding: u32,
    /// Byte size of the uniform block.
    pub uniform_size: u32,
}

/// Module-wide state shared by the functions being lowered.
pub(crate) struct ModuleBuilder {
    pub module: Module,
    pub spans: Vec<proc_macro2::Span>,
    types: HashMap<Ty, Handle<Type>>,
    /// Lowered helper functions by Rust name.
    pub helpers: HashMap<String, (Handle<naga::Function>, Ty)>,
    /// Polyfill functions (integer `pow`, `powi`) by name.
    pub polyfills: HashMap<String, Handle<naga::Function>>,
    /// Explain mode only (see [`lower_program_explain`]): the
    /// `var<private> explain_line: u32` that line markers store into.
    pub explain_line: Option<Handle<GlobalVariable>>,
}

impl ModuleBuilder {
    fn new() -> Self {
        ModuleBuilder {
            module: Module::default(),
            spans: Vec::new(),
            types: HashMap::new(),
            helpers: HashMap::new(),
            polyfills: HashMap::new(),
            explain_line: None,
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
            Ty::Dim3 => TypeInner::Vector { size: VectorSize::Tri, scalar: Scalar::U32 },
            Ty::Unit | Ty::Never => unreachable!("unit has no naga type"),
        };
        let h = self.module.types.insert(Type { name: None, inner }, naga::Span::UNDEFINED);
        self.types.insert(ty, h);
        h
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

/// What the kernel's function body reads from the module: its buffers and
/// the uniform block.
pub(crate) struct KernelGlobals {
    /// Buffer globals by parameter index (None for scalars).
    pub buffers: Vec<Option<Handle<GlobalVariable>>>,
    /// The uniform block.
    pub params: Handle<GlobalVariable>,
    /// Member index in the uniform struct, by parameter index.
    pub scalar_members: Vec<Option<u32>>,
    /// The `var<workgroup>` of each shared array, by [`hir::SharedId`].
    pub shared: Vec<Handle<GlobalVariable>>,
}

/// Lowers a typed program into a naga module.
pub fn lower_program(
    program: &hir::Program,
    kernel_types: &Types,
    helper_types: &[Types],
    workgroup_size: [u32; 3],
    folded: bool,
) -> Result<Lowered, Vec<Diagnostic>> {
    lower_with(ModuleBuilder::new(), program, kernel_types, helper_types, workgroup_size, folded)
}

/// Name of the marker global of [`lower_program_explain`].
pub const EXPLAIN_LINE: &str = "explain_line";

/// Lowers the plain module in "explain" mode, for `crate::explain`: before
/// each statement (or block tail) that starts a new Rust source line, the
/// body stores that line number into a module-scope
/// `var<private> explain_line: u32`, so that the WGSL text says which Rust
/// line each of its lines came from. Only for display: never run.
pub fn lower_program_explain(
    program: &hir::Program,
    kernel_types: &Types,
    helper_types: &[Types],
    workgroup_size: [u32; 3],
) -> Result<Lowered, Vec<Diagnostic>> {
    let mut mb = ModuleBuilder::new();
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
    lower_with(mb, program, kernel_types, helper_types, workgroup_size, false)
}

fn lower_with(
    mut mb: ModuleBuilder,
    program: &hir::Program,
    kernel_types: &Types,
    helper_types: &[Types],
    workgroup_size: [u32; 3],
    folded: bool,
) -> Result<Lowered, Vec<Diagnostic>> {
    // Helpers first: naga requires callees before callers.
    for (helper, types) in program.helpers.iter().zip(helper_types) {
        let handle = FnLowerer::lower_helper(&mut mb, helper, types)?;
        mb.helpers.insert(helper.name.clone(), (handle, helper.ret));
    }
    let kernel = &program.kernel;
    let (globals, params, uniform_binding, uniform_size) = declare_kernel_globals(&mut mb, kernel);
    let entry = FnLowerer::lower_kernel(&mut mb, kernel, kernel_types, &globals, workgroup_size, folded)?;
    mb.module.entry_points.push(entry);
    Ok(Lowered { module: mb.module, spans: mb.spans, params, uniform_binding, uniform_size })
}

fn declare_kernel_globals(
    mb: &mut ModuleBuilder,
    kernel: &hir::Function,
) -> (KernelGlobals, Vec<ParamLayout>, u32, u32) {
    let mut buffers = Vec::new();
    let mut layouts = Vec::new();
    let mut binding = 0u32;
    let mut members = vec![
        StructMember { name: Some("grid_dim".into()), ty: mb.ty(Ty::Dim3), binding: None, offset: 0 },
        StructMember { name: Some("block_offset".into()), ty: mb.ty(Ty::U32), binding: None, offset: 12 },
    ];
    let mut scalar_members = Vec::new();
    let mut offset = FIRST_SCALAR_OFFSET;
    for p in &kernel.params {
        let span = mb.span(p.span);
        match p.kind {
            ParamKind::Buffer { elem } | ParamKind::BufferMut { elem } | ParamKind::Atomics { elem } => {
                let base = if matches!(p.kind, ParamKind::Atomics { .. }) { mb.atomic(elem) } else { mb.ty(elem) };
                let array = mb.module.types.insert(
                    Type { name: None, inner: TypeInner::Array { base, size: ArraySize::Dynamic, stride: 4 } },
                    naga::Span::UNDEFINED,
                );
                let access = if matches!(p.kind, ParamKind::BufferMut { .. } | ParamKind::Atomics { .. }) {
                    StorageAccess::LOAD | StorageAccess::STORE
                } else {
                    StorageAccess::LOAD
                };
                let g = mb.module.global_variables.append(
                    GlobalVariable {
                        name: Some(p.name.clone()),
                        space: AddressSpace::Storage { access },
                        binding: Some(ResourceBinding { group: 0, binding }),
                        ty: array,
                        init: None,
                        memory_decorations: MemoryDecorations::empty(),
                    },
                    span,
                );
                buffers.push(Some(g));
                scalar_members.push(None);
                layouts.push(ParamLayout { name: p.name.clone(), kind: p.kind, slot: binding });
                binding += 1;
            }
            ParamKind::Scalar { ty, .. } => {
                // Field names must be unique within the struct.
                let mut name = p.name.clone();
                while members.iter().any(|m| m.name.as_deref() == Some(&name)) {
                    name.push('_');
                }
                scalar_members.push(Some(members.len() as u32));
                members.push(StructMember { name: Some(name), ty: mb.ty(ty), binding: None, offset });
                buffers.push(None);
                layouts.push(ParamLayout { name: p.name.clone(), kind: p.kind, slot: offset });
                offset += 4;
            }
        }
    }
    let size = offset.div_ceil(16) * 16;
    let st = mb.module.types.insert(
        Type { name: Some("LaunchParams".into()), inner: TypeInner::Struct { members, span: size } },
        naga::Span::UNDEFINED,
    );
    let params = mb.module.global_variables.append(
        GlobalVariable {
            name: Some("params".into()),
            space: AddressSpace::Uniform,
            binding: Some(ResourceBinding { group: 0, binding }),
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
        .map(|d| {
            let elem = if d.atomic { mb.atomic(d.elem) } else { mb.ty(d.elem) };
            let ty = d.dims.iter().rev().fold(elem, |base, &n| {
                let stride = mb.module.types[base].inner.size(mb.module.to_ctx());
                mb.module.types.insert(
                    Type {
                        name: None,
                        inner: TypeInner::Array {
                            base,
                            size: ArraySize::Constant(std::num::NonZeroU32::new(n).expect("checked > 0")),
                            stride,
                        },
                    },
                    naga::Span::UNDEFINED,
                )
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
    (KernelGlobals { buffers, params, scalar_members, shared }, layouts, binding, size)
}
