//! The static description of one compiled kernel: the contract between the
//! code that `#[kernel]` generates and this runtime.
//!
//! The macro emits one `pub static KERNEL: KernelInfo = ...;` per kernel; the
//! runtime keys its pipeline cache by that static's address, so a `KernelInfo`
//! is always used as `&'static KernelInfo`.

/// The element type of a buffer parameter, or the type of a scalar parameter.
///
/// All of them are 4 bytes wide: GPU bindings and the uniform block are laid
/// out in 32-bit words.
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
    /// The Rust spelling of the type, used in error messages.
    pub fn rust_name(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
        }
    }
}

impl std::fmt::Display for ScalarType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// How a kernel parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A `&[T]` parameter: `var<storage, read>` at `@group(0) @binding(slot)`.
    ReadOnlyBuffer,
    /// A `&mut [T]` parameter: `var<storage, read_write>` at `@group(0) @binding(slot)`.
    ReadWriteBuffer,
    /// A by-value `f32`/`i32`/`u32` parameter: 4 bytes at offset `slot` of the uniform block.
    Scalar,
}

impl ParamKind {
    /// Whether the parameter is bound as a storage buffer.
    pub fn is_buffer(self) -> bool {
        !matches!(self, ParamKind::Scalar)
    }
}

/// One kernel parameter, in Rust parameter order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The Rust parameter name, used in error messages.
    pub name: &'static str,
    /// How the parameter is passed.
    pub kind: ParamKind,
    /// Its element type (buffers) or its type (scalars).
    pub ty: ScalarType,
    /// For buffers: the @binding index in @group(0). For scalars: the byte offset in the uniform block.
    pub slot: u32,
}

/// Everything the host needs about one compiled kernel.
///
/// Every kernel has a uniform block at `@group(0) @binding(uniform_binding)`
/// whose first 20 bytes are the launch description the runtime writes
/// (see [`LAUNCH_BLOCK_SIZE`]); scalar parameters follow at their `slot`
/// offsets (>= 20).
#[derive(Debug)]
pub struct KernelInfo {
    /// The Rust fn name, used in every error message.
    pub name: &'static str,
    /// WGSL/SPIR-V entry point name.
    pub entry_point: &'static str,
    /// The kernel as WGSL source (what the GPU path compiles today).
    pub wgsl: &'static str,
    /// The kernel as SPIR-V words (may be empty; reserved for passthrough).
    pub spirv: &'static [u32],
    /// The variant for 1-D grids of more than the device's workgroups per
    /// axis, which the runtime folds into 2-D: its prologue rebuilds the
    /// logical ids from the launch block.
    pub wgsl_folded: &'static str,
    /// Each Rust line of the kernel beside the WGSL it produced (empty for
    /// hand-written `KernelInfo`s); see `onekernel::inspect::explain`.
    pub explain: &'static str,
    /// `@workgroup_size(x, y, z)`.
    pub workgroup_size: [u32; 3],
    /// All parameters, in Rust parameter order.
    pub params: &'static [ParamInfo],
    /// Binding index of the uniform block (== number of buffer params).
    pub uniform_binding: u32,
    /// Byte size of the uniform block (multiple of 16, >= 32 since the launch block is 20 bytes).
    pub uniform_size: u32,
    /// The largest workgroup the kernel may be launched with; 256 unless the user asked for more.
    pub max_workgroup_invocations: u32,
    /// Proven by the compiler: every element access to every `&mut [T]`
    /// parameter uses `global_id().x` as its index, so on a 1-D grid each
    /// invocation touches only its own element. The CPU executor then
    /// gives chunks of invocations their own windows of the outputs (plain
    /// loads and stores) instead of shared atomics.
    pub writes_own_element: bool,
    /// Words (4 bytes) of workgroup shared memory the kernel declares; the
    /// CPU executor allocates this much per workgroup.
    pub workgroup_memory_words: u32,
}

/// Size in bytes of the launch description at the start of every uniform
/// block:
/// - offset 0: `grid_dim: vec3<u32>`, the logical number of workgroups;
/// - offset 12: `block_offset: u32`, the linear index of the first logical
///   workgroup of this dispatch (0 except in the tail dispatch of a folded grid).
///
/// Only folded launches read the block's launch description: they run the
/// kernel's `wgsl_folded` module, whose prologue rebuilds the logical ids;
/// the plain module uses WGSL's builtins directly.
///
/// A folded grid of `G` workgroups is dispatched exactly, with no padding
/// workgroups: `(max, G / max, 1)` with `block_offset` 0, then, if
/// `G % max != 0`, `(G % max, 1, 1)` with `block_offset` `max * (G / max)`.
/// When folded, the kernel's logical workgroup id is
/// `(block_offset + workgroup_id.x + num_workgroups.x * workgroup_id.y, 0, 0)`;
/// otherwise it is `workgroup_id`.
///
/// Scalar parameters start at offset 16; `uniform_size` is a multiple of 16.
pub const LAUNCH_BLOCK_SIZE: u32 = 16;

impl KernelInfo {
    /// The name of parameter `param`, or `"?"` for an index the kernel does
    /// not have (only reachable through a bug in generated code, and then we
    /// still want an error message rather than a panic).
    pub fn param_name(&self, param: usize) -> &'static str {
        self.params.get(param).map_or("?", |p| p.name)
    }

    /// Number of invocations in one workgroup (product of `workgroup_size`).
    pub fn workgroup_invocations(&self) -> u64 {
        self.workgroup_size.iter().map(|&n| u64::from(n)).product()
    }

    /// The buffer parameters with their parameter index, in parameter order.
    pub fn buffer_params(&self) -> impl Iterator<Item = (usize, &'static ParamInfo)> {
        self.params.iter().enumerate().filter(|(_, p)| p.kind.is_buffer())
    }

    /// The scalar parameters, in parameter order.
    pub fn scalar_params(&self) -> impl Iterator<Item = &'static ParamInfo> {
        self.params.iter().filter(|p| p.kind == ParamKind::Scalar)
    }
}
