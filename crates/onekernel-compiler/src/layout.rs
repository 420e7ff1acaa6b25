//! Where a kernel's data lives: the binding of each buffer, the offset of
//! each scalar in the uniform block, and the place of each shared array in
//! workgroup memory. Decided once, here, in the terms of the ABI
//! (`onekernel_abi`); the naga lowering declares its globals from it and
//! the macro writes it into the kernel's `KernelInfo`.
//!
//! The convention:
//! * buffer parameters are `@group(0) @binding(k)` storage arrays, `k`
//!   counting buffer parameters in order;
//! * one uniform block follows them, holding the launch description
//!   (`onekernel_abi::launch_block`), the length word of each buffer of
//!   sub-word elements (`f16`: `DataType::needs_length_word`), and then
//!   each scalar parameter at the next offset aligned to its size;
//! * shared arrays are laid out one after the other, in declaration order,
//!   in 32-bit words (for the CPU executor's per-workgroup memory).

use crate::arena::HandleMap;
use crate::diagnostic::Diagnostic;
use crate::hir::{self, ParamKind};
use crate::types::{Ty, TypeTable};
use onekernel_abi::{launch_block, DataType, ParamInfo, ScalarType};
use std::borrow::Cow;

/// The data layout of one kernel.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Each parameter's binding or uniform offset, in parameter order.
    pub params: Vec<ParamInfo>,
    /// Binding index of the uniform block.
    pub uniform_binding: u32,
    /// Byte size of the uniform block.
    pub uniform_size: u32,
    /// How the uniform block is bound (a storage buffer for kernels with
    /// matrix tiles: see [`onekernel_abi::ParamsBinding`]).
    pub params_binding: onekernel_abi::ParamsBinding,
    /// Word offset of each shared array in workgroup memory.
    pub shared_offsets: HandleMap<hir::SharedDecl, u32>,
    /// Total shared memory, in 32-bit words.
    pub workgroup_memory_words: u32,
    /// The device features the parameters' types need.
    pub features: onekernel_abi::Features,
}

impl Layout {
    /// Lays out `kernel`'s parameters and shared arrays.
    pub fn of(kernel: &hir::Function, table: &TypeTable) -> Result<Layout, Vec<Diagnostic>> {
        let mut params = Vec::new();
        let mut binding = 0u32;
        // The length words come first (see the ABI's crate docs).
        let lengths = kernel
            .params
            .iter()
            .filter(|(_, p)| !matches!(p.kind, ParamKind::Scalar { .. }))
            .filter(|(_, p)| data_type(p.kind.ty(), table).is_some_and(|t| t.needs_length_word()))
            .count();
        let mut offset = launch_block::length_word(lengths as u32);
        let mut features = onekernel_abi::Features::NONE;
        for (_, p) in kernel.params.iter() {
            let ty = data_type(p.kind.ty(), table).ok_or_else(|| {
                vec![Diagnostic::new(
                    p.span,
                    format!("internal compiler error: no ABI type for `{}`", table.name(p.kind.ty())),
                )]
            })?;
            features = features.union(type_features(p.kind.ty(), table));
            if let (ParamKind::Scalar { .. }, Some(problem)) = (p.kind, uniform_problem(p.kind.ty(), table)) {
                return Err(vec![Diagnostic::new(
                    p.span,
                    format!("`{}` cannot be passed by value: {problem}", table.name(p.kind.ty())),
                )
                .help(format!(
                    "pass it in a one-element buffer (`{0}: &[{1}]`, read as `{0}[0]`), or use `Vec4`/separate fields instead of the array",
                    p.name,
                    table.name(p.kind.ty())
                ))]);
            }
            let (kind, slot) = match p.kind {
                ParamKind::Buffer { .. } => (onekernel_abi::ParamKind::ReadOnlyBuffer, binding),
                ParamKind::BufferMut { .. } => (onekernel_abi::ParamKind::ReadWriteBuffer, binding),
                ParamKind::Atomics { .. } => (onekernel_abi::ParamKind::AtomicBuffer, binding),
                ParamKind::Scalar { .. } => {
                    offset = offset.next_multiple_of(uniform_align(&ty));
                    (onekernel_abi::ParamKind::Scalar, offset)
                }
            };
            if kind.is_buffer() {
                binding += 1;
            } else {
                offset += match ty {
                    // WGSL's uniform rule: whatever follows a struct member
                    // starts at least a multiple of 16 bytes after it.
                    DataType::Struct { size, .. } => size.next_multiple_of(16),
                    _ => ty.stride(),
                };
            }
            params.push(ParamInfo { name: Cow::Owned(p.name.clone()), kind, ty, slot });
        }
        let mut words = 0u32;
        let shared_offsets = HandleMap::from_vec(
            kernel
                .shared
                .iter()
                .map(|(_, d)| {
                    let at = words;
                    // A length the launch sets: sized per specialisation
                    // (`onekernel_abi::Consts::arrays`), and the CPU body
                    // computes the offsets after it (`cpu_body.rs`).
                    if !d.dims.iter().any(|&n| table.symbol(n).is_some()) {
                        words += d.words();
                    }
                    at
                })
                .collect(),
        );
        debug_assert_eq!(launch_block::scalars_start(&params), launch_block::length_word(lengths as u32));
        Ok(Layout {
            features,
            params,
            uniform_binding: binding,
            uniform_size: offset.next_multiple_of(launch_block::ALIGN),
            params_binding: if crate::visit::uses_tiles(kernel) {
                onekernel_abi::ParamsBinding::Storage
            } else {
                onekernel_abi::ParamsBinding::Uniform
            },
            shared_offsets,
            workgroup_memory_words: words,
        })
    }
}

/// The ABI's description of a kernel type; None for types that cannot
/// cross the host boundary (the recogniser rejects such parameters).
pub fn data_type(ty: Ty, table: &TypeTable) -> Option<DataType> {
    if let Some(s) = scalar_type(ty) {
        return Some(DataType::Scalar(s));
    }
    if let Ty::Vector(v) = ty {
        return Some(DataType::Vector { elem: scalar_type(v.lane.ty())?, lanes: v.size });
    }
    let (name, _) = table.as_struct(ty)?;
    let (size, align) = table.wgsl_layout(ty)?;
    Some(DataType::Struct { name: Cow::Owned(name.to_string()), size, align })
}

/// Why a struct cannot live in the uniform block, whose layout rules are
/// stricter than a buffer's: an array there needs a 16-byte stride, and a
/// struct inside a struct a 16-byte aligned offset.
fn uniform_problem(ty: Ty, table: &TypeTable) -> Option<String> {
    if let Some((elem, _)) = table.as_array(ty) {
        let (size, align) = table.wgsl_layout(elem)?;
        if !size.next_multiple_of(align).is_multiple_of(16) {
            return Some(format!(
                "the uniform block needs 16 bytes per element of an array, and `{}` takes fewer",
                table.name(ty)
            ));
        }
        return uniform_problem(elem, table);
    }
    let (_, fields) = table.as_struct(ty)?;
    let offsets = table.struct_offsets(ty)?;
    for ((name, t), at) in fields.iter().zip(offsets) {
        if table.as_struct(*t).is_some() && !at.is_multiple_of(16) {
            return Some(format!(
                "its field `{name}` is a struct at byte {at}, and the uniform block needs 16-byte steps"
            ));
        }
        if let Some(p) = uniform_problem(*t, table) {
            return Some(format!("in its field `{name}`: {p}"));
        }
    }
    None
}

/// The device features a type needs, its fields' included.
pub fn type_features(ty: Ty, table: &TypeTable) -> onekernel_abi::Features {
    match table.as_struct(ty) {
        Some((_, fields)) => {
            fields.iter().fold(onekernel_abi::Features::NONE, |f, (_, t)| f.union(type_features(*t, table)))
        }
        None => match (scalar_type(ty), table.as_array(ty)) {
            (Some(s), _) => s.feature(),
            (None, Some((elem, _))) => type_features(elem, table),
            // A vector needs what its lanes need (`F16Vec4`: `f16`).
            (None, None) => ty.as_vector().map_or(onekernel_abi::Features::NONE, |v| type_features(v.lane.ty(), table)),
        },
    }
}

/// WGSL's alignment of a member of type `ty` in a uniform block: a struct
/// is aligned to at least 16 bytes there.
fn uniform_align(ty: &DataType) -> u32 {
    match ty {
        DataType::Struct { align, .. } => (*align).max(16),
        _ => ty.align(),
    }
}

/// The ABI's name for a scalar kernel type.
pub fn scalar_type(ty: Ty) -> Option<ScalarType> {
    match ty {
        Ty::F32 => Some(ScalarType::F32),
        Ty::I32 => Some(ScalarType::I32),
        Ty::U32 => Some(ScalarType::U32),
        Ty::F16 => Some(ScalarType::F16),
        Ty::F64 => Some(ScalarType::F64),
        Ty::I64 => Some(ScalarType::I64),
        Ty::U64 => Some(ScalarType::U64),
        Ty::Bool | Ty::Usize | Ty::Compound(_) | Ty::Vector(_) | Ty::Dim3 | Ty::Tile(_) | Ty::Unit | Ty::Never => None,
    }
}
