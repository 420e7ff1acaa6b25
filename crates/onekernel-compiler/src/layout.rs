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
//!   (`onekernel_abi::launch_block`) and then each scalar parameter at the
//!   next offset aligned to its size;
//! * shared arrays are laid out one after the other, in declaration order,
//!   in 32-bit words (for the CPU executor's per-workgroup memory).

use crate::arena::HandleMap;
use crate::diagnostic::Diagnostic;
use crate::hir::{self, ParamKind};
use crate::types::Ty;
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
    /// Word offset of each shared array in workgroup memory.
    pub shared_offsets: HandleMap<hir::SharedDecl, u32>,
    /// Total shared memory, in 32-bit words.
    pub workgroup_memory_words: u32,
    /// The device features the parameters' types need.
    pub features: onekernel_abi::Features,
}

impl Layout {
    /// Lays out `kernel`'s parameters and shared arrays.
    pub fn of(kernel: &hir::Function) -> Result<Layout, Vec<Diagnostic>> {
        let mut params = Vec::new();
        let mut binding = 0u32;
        let mut offset = launch_block::SIZE;
        for (_, p) in kernel.params.iter() {
            let ty = scalar_type(p.kind.ty()).ok_or_else(|| {
                vec![Diagnostic::new(p.span, format!("internal compiler error: no ABI type for `{}`", p.kind.ty()))]
            })?;
            let (kind, slot) = match p.kind {
                ParamKind::Buffer { .. } => (onekernel_abi::ParamKind::ReadOnlyBuffer, binding),
                ParamKind::BufferMut { .. } => (onekernel_abi::ParamKind::ReadWriteBuffer, binding),
                ParamKind::Atomics { .. } => (onekernel_abi::ParamKind::AtomicBuffer, binding),
                ParamKind::Scalar { .. } => {
                    offset = offset.next_multiple_of(ty.size());
                    (onekernel_abi::ParamKind::Scalar, offset)
                }
            };
            if kind.is_buffer() {
                binding += 1;
            } else {
                offset += ty.size();
            }
            params.push(ParamInfo { name: Cow::Owned(p.name.clone()), kind, ty: DataType::Scalar(ty), slot });
        }
        let mut words = 0u32;
        let shared_offsets = HandleMap::from_vec(
            kernel
                .shared
                .iter()
                .map(|(_, d)| {
                    let at = words;
                    words += d.words();
                    at
                })
                .collect(),
        );
        Ok(Layout {
            features: params.iter().fold(onekernel_abi::Features::NONE, |f, p| f.union(p.ty.features())),
            params,
            uniform_binding: binding,
            uniform_size: offset.next_multiple_of(launch_block::ALIGN),
            shared_offsets,
            workgroup_memory_words: words,
        })
    }
}

/// The ABI's name for a kernel type; None for types that cannot cross the
/// host boundary (the recogniser rejects such parameters).
pub fn scalar_type(ty: Ty) -> Option<ScalarType> {
    match ty {
        Ty::F32 => Some(ScalarType::F32),
        Ty::I32 => Some(ScalarType::I32),
        Ty::U32 => Some(ScalarType::U32),
        Ty::Bool | Ty::Usize | Ty::Compound(_) | Ty::Dim3 | Ty::Unit | Ty::Never => None,
    }
}
