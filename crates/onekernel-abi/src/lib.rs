//! The contract between the onekernel compiler, the code `#[kernel]`
//! generates and the onekernel runtime, defined once.
//!
//! The compiler describes each kernel it compiles as a [`KernelInfo`]; the
//! `#[kernel]` macro writes that value into the user's crate as a `static`;
//! the runtime binds buffers, fills the uniform block and picks the module
//! variant from it. Tools (the CLI, the playground) build the same value at
//! run time. Nothing here depends on the compiler or the runtime, so both
//! sides share one definition of every type, and a new case (a new scalar
//! type, a new parameter kind) is a compile error in every `match` that has
//! to handle it.
//!
//! # The launch block
//! Every kernel has one uniform block, at `@group(0) @binding(uniform_binding)`
//! (after the storage buffers). Its first [`launch_block::SIZE`] bytes are
//! the launch description the runtime writes:
//!
//! | offset | WGSL | meaning |
//! |---|---|---|
//! | [`launch_block::GRID_DIM`] (0) | `grid_dim: vec3<u32>` | the logical number of workgroups |
//! | [`launch_block::BLOCK_OFFSET`] (12) | `block_offset: u32` | linear index of this dispatch's first logical workgroup |
//!
//! Scalar parameters follow, each at its [`ParamInfo::slot`] (a byte offset,
//! at least [`launch_block::SIZE`], aligned to the scalar's size), and the
//! block's size is a multiple of [`launch_block::ALIGN`].
//!
//! Only *folded* launches read the launch description: a 1-D grid of more
//! workgroups than the device allows per dimension runs the kernel's folded
//! module ([`KernelInfo::wgsl_folded`]), dispatched exactly as full rows
//! `(max, G / max, 1)` with `block_offset` 0, then, if `G % max != 0`, a
//! tail `(G % max, 1, 1)` with `block_offset` `max * (G / max)`. Its prologue
//! rebuilds the logical workgroup id as
//! `(block_offset + workgroup_id.x + num_workgroups.x * workgroup_id.y, 0, 0)`.
//! Unfolded launches run the plain module, which uses WGSL's builtins
//! directly and pays nothing for folding.

#![no_std]
#![warn(missing_docs)]

extern crate alloc;

use alloc::borrow::Cow;
use core::fmt;

/// Byte offsets in the uniform block's launch description (see the crate
/// docs).
pub mod launch_block {
    /// `grid_dim: vec3<u32>`: the logical number of workgroups.
    pub const GRID_DIM: u32 = 0;
    /// `block_offset: u32`: linear index of the dispatch's first logical
    /// workgroup (0 except in the tail dispatch of a folded grid).
    pub const BLOCK_OFFSET: u32 = 12;
    /// Size of the launch description; the first scalar parameter's offset.
    pub const SIZE: u32 = 16;
    /// The uniform block's size is a multiple of this (WGSL's uniform
    /// address space rounds structs up to 16 bytes).
    pub const ALIGN: u32 = 16;
}

/// The type of a scalar parameter, or the element type of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `f32`
    F32,
    /// `i32`
    I32,
    /// `u32`
    U32,
}

impl ScalarType {
    /// The Rust spelling, for messages.
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
        }
    }

    /// The WGSL spelling.
    pub const fn wgsl_name(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
        }
    }

    /// Size in bytes, in a buffer and in the uniform block.
    pub const fn size(self) -> u32 {
        match self {
            ScalarType::F32 | ScalarType::I32 | ScalarType::U32 => 4,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// How a kernel parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// `&[T]`: `var<storage, read>` at `@group(0) @binding(slot)`.
    ReadOnlyBuffer,
    /// `&mut [T]`: `var<storage, read_write>` at `@group(0) @binding(slot)`.
    ReadWriteBuffer,
    /// `&[AtomicU32]` / `&[AtomicI32]`: `var<storage, read_write>` of
    /// `atomic<T>` at `@group(0) @binding(slot)`; the host sees plain `T`s.
    AtomicBuffer,
    /// A scalar by value: `ty` at byte offset `slot` of the uniform block.
    Scalar,
}

impl ParamKind {
    /// Whether the parameter is bound as a storage buffer.
    pub const fn is_buffer(self) -> bool {
        match self {
            ParamKind::ReadOnlyBuffer | ParamKind::ReadWriteBuffer | ParamKind::AtomicBuffer => true,
            ParamKind::Scalar => false,
        }
    }

    /// Whether the kernel may write the buffer (it is bound `read_write`).
    pub const fn is_writable(self) -> bool {
        match self {
            ParamKind::ReadWriteBuffer | ParamKind::AtomicBuffer => true,
            ParamKind::ReadOnlyBuffer | ParamKind::Scalar => false,
        }
    }
}

/// One kernel parameter, in Rust parameter order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The Rust parameter name, for error messages.
    pub name: Cow<'static, str>,
    /// How it is passed.
    pub kind: ParamKind,
    /// Its type (scalars) or element type (buffers).
    pub ty: ScalarType,
    /// Buffers: the `@binding` index in `@group(0)`. Scalars: the byte
    /// offset in the uniform block.
    pub slot: u32,
}

/// Everything the host needs to know about one compiled kernel.
///
/// `#[kernel]` emits one as `pub static KERNEL: KernelInfo`; the runtime
/// keys its pipeline cache by that static's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The Rust function name, used in every error message.
    pub name: Cow<'static, str>,
    /// The entry point's name in the WGSL and SPIR-V.
    pub entry_point: Cow<'static, str>,
    /// The kernel as WGSL (validated, and re-parsed by naga's front end).
    pub wgsl: Cow<'static, str>,
    /// The kernel as SPIR-V words (validated by naga and `spirv-val`).
    pub spirv: Cow<'static, [u32]>,
    /// The variant for folded 1-D grids (see the crate docs).
    pub wgsl_folded: Cow<'static, str>,
    /// The SPIR-V of [`KernelInfo::wgsl_folded`].
    pub spirv_folded: Cow<'static, [u32]>,
    /// Each Rust line of the kernel beside the WGSL it produced.
    pub explain: Cow<'static, str>,
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// The most invocations per workgroup the kernel was checked against
    /// (256, the WebGPU default, unless the kernel's attribute raised it).
    pub max_workgroup_invocations: u32,
    /// All parameters, in Rust parameter order.
    pub params: Cow<'static, [ParamInfo]>,
    /// Binding index of the uniform block (the number of buffers).
    pub uniform_binding: u32,
    /// Byte size of the uniform block: the launch description plus the
    /// scalars, rounded up to [`launch_block::ALIGN`].
    pub uniform_size: u32,
    /// How the CPU executor runs the kernel's invocations.
    pub cpu: CpuStrategy,
    /// Words (4 bytes) of workgroup shared memory the kernel declares; the
    /// CPU executor allocates this much per workgroup.
    pub workgroup_memory_words: u32,
}

/// How the CPU executor schedules a kernel's invocations, as the compiler
/// proved it safe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuStrategy {
    /// Invocations are independent and may write any element: outputs are
    /// shared between threads (relaxed atomic accesses).
    Independent,
    /// Every access to every `&mut [T]` parameter uses `global_id().x` as
    /// its index, so on a 1-D grid each invocation touches only its own
    /// element: chunks of invocations get their own windows of the outputs,
    /// read and written with plain loads and stores. (The windows are
    /// bounds-checked: a wrong proof is a panic, never undefined behaviour.)
    OwnElement,
    /// The kernel uses barriers or shared memory: the invocations of a
    /// workgroup cooperate and run together.
    Cooperative,
}

impl KernelInfo {
    /// The name of parameter `param`, or `"?"` for an index the kernel does
    /// not have (only a bug in generated code gets there, and then an error
    /// message is still better than a panic).
    pub fn param_name(&self, param: usize) -> &str {
        self.params.get(param).map_or("?", |p| &p.name)
    }

    /// Invocations in one workgroup: the product of `workgroup_size`.
    pub fn workgroup_invocations(&self) -> u64 {
        self.workgroup_size.iter().map(|&n| u64::from(n)).product()
    }

    /// The buffer parameters with their parameter index, in order.
    pub fn buffer_params(&self) -> impl Iterator<Item = (usize, &ParamInfo)> {
        self.params.iter().enumerate().filter(|(_, p)| p.kind.is_buffer())
    }

    /// The scalar parameters, in order.
    pub fn scalar_params(&self) -> impl Iterator<Item = &ParamInfo> {
        self.params.iter().filter(|p| !p.kind.is_buffer())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `KernelInfo` can be a `static`, as `#[kernel]` emits it.
    static K: KernelInfo = KernelInfo {
        name: Cow::Borrowed("k"),
        entry_point: Cow::Borrowed("k"),
        wgsl: Cow::Borrowed(""),
        spirv: Cow::Borrowed(&[]),
        wgsl_folded: Cow::Borrowed(""),
        spirv_folded: Cow::Borrowed(&[]),
        explain: Cow::Borrowed(""),
        workgroup_size: [64, 2, 1],
        max_workgroup_invocations: 256,
        params: Cow::Borrowed(&[
            ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: ScalarType::F32, slot: 0 },
            ParamInfo {
                name: Cow::Borrowed("s"),
                kind: ParamKind::Scalar,
                ty: ScalarType::U32,
                slot: launch_block::SIZE,
            },
        ]),
        uniform_binding: 1,
        uniform_size: 32,
        cpu: CpuStrategy::Independent,
        workgroup_memory_words: 0,
    };

    #[test]
    fn static_kernel_info() {
        assert_eq!(K.workgroup_invocations(), 128);
        assert_eq!(K.param_name(1), "s");
        assert_eq!(K.param_name(9), "?");
        assert_eq!(K.buffer_params().count(), 1);
        assert_eq!(K.scalar_params().next().map(|p| p.slot), Some(16));
    }
}
