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
//! (after the storage buffers), bound as [`KernelInfo::params_binding`] says
//! (a uniform buffer; a read-only storage buffer for kernels with matrix
//! tiles, with the same layout). Its first [`launch_block::SIZE`] bytes are
//! the launch description the runtime writes:
//!
//! | offset | WGSL | meaning |
//! |---|---|---|
//! | [`launch_block::GRID_DIM`] (0) | `grid_dim: vec3<u32>` | the logical number of workgroups |
//! | [`launch_block::BLOCK_OFFSET`] (12) | `block_offset: u32` | linear index of this dispatch's first logical workgroup |
//!
//! Then, for each buffer parameter whose elements are not a whole number of
//! 4-byte words ([`DataType::needs_length_word`]: `f16`, and structs of
//! them), in parameter order, a `u32` holding the buffer's length in
//! elements, which the runtime writes: at [`launch_block::length_word`]`(k)`
//! for the `k`-th such buffer ([`KernelInfo::length_slot`]). GPUs bind
//! buffers in whole words, so the runtime allocates an odd number of
//! `f16`s rounded up to a word and the binding's `arrayLength` would count
//! the padding; the kernel's `len()` of such a buffer (and a checked
//! launch's bound) reads this word instead.
//!
//! Scalar parameters follow, each at its [`ParamInfo::slot`] (a byte offset,
//! at least [`KernelInfo::scalars_start`], aligned to the scalar's size), and the
//! block's size is a multiple of [`launch_block::ALIGN`].
//!
//! Only *folded* launches read the launch description: a 1-D grid of more
//! workgroups than the device allows per dimension runs the kernel's folded
//! module ([`ModuleKey::FOLDED`]), dispatched exactly as full rows
//! `(max, G / max, 1)` with `block_offset` 0, then, if `G % max != 0`, a
//! tail `(G % max, 1, 1)` with `block_offset` `max * (G / max)`. Its prologue
//! rebuilds the logical workgroup id as
//! `(block_offset + workgroup_id.x + num_workgroups.x * workgroup_id.y, 0, 0)`.
//! Unfolded launches run the plain module, which uses WGSL's builtins
//! directly and pays nothing for folding.

#![no_std]
#![warn(missing_docs)]

extern crate alloc;
// The specialisation passes (feature `naga`) use naga, which needs `std`.
#[cfg(feature = "naga")]
extern crate std;

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

mod module;
pub use module::{Module, ModuleKey};
pub mod debug;
pub use debug::{DebugArg, DebugKind, DebugSite, PrintField, PrintType};
#[cfg(feature = "naga")]
pub mod specialise;
#[cfg(feature = "naga")]
pub use specialise::specialised_wgsl;
mod unroll;
pub use unroll::{unroll_marked_loops, MAX_UNROLL as MAX_LATE_UNROLL, UNROLL_PREFIX};

/// Byte offsets in the uniform block's launch description (see the crate
/// docs).
pub mod launch_block {
    /// `grid_dim: vec3<u32>`: the logical number of workgroups.
    pub const GRID_DIM: u32 = 0;
    /// `block_offset: u32`: linear index of the dispatch's first logical
    /// workgroup (0 except in the tail dispatch of a folded grid).
    pub const BLOCK_OFFSET: u32 = 12;
    /// Size of the launch description; the offset of the first length word
    /// or, without any, of the first scalar parameter.
    pub const SIZE: u32 = 16;
    /// The uniform block's size is a multiple of this (WGSL's uniform
    /// address space rounds structs up to 16 bytes).
    pub const ALIGN: u32 = 16;

    /// The byte offset of the `k`-th length word (see the crate docs):
    /// `SIZE + 4 * k`. With `n` length words, scalars start at
    /// `length_word(n)`.
    pub const fn length_word(k: u32) -> u32 {
        SIZE + 4 * k
    }

    /// The byte offset of the length word of parameter `param` of `params`,
    /// or `None` when it has none (a scalar, or a buffer of elements of
    /// whole words).
    pub fn length_slot(params: &[super::ParamInfo], param: usize) -> Option<u32> {
        let p = params.get(param)?;
        if !p.has_length_word() {
            return None;
        }
        let k = params[..param].iter().filter(|p| p.has_length_word()).count();
        Some(length_word(k as u32))
    }

    /// Where the scalar parameters of `params` start: after the launch
    /// description and the length words.
    pub fn scalars_start(params: &[super::ParamInfo]) -> u32 {
        length_word(params.iter().filter(|p| p.has_length_word()).count() as u32)
    }
}

/// The report buffer of a checked launch: the kernel's checked module
/// ([`ModuleKey::CHECKED`]) binds it at `@group(0) @binding(uniform_binding + 1)`
/// as `array<atomic<u32>, 4>`, zeroed before the launch. The first
/// invocation to fail a check (its `atomicAdd` on [`report::COUNT`] returns
/// 0) writes which check failed and the values it saw; every failure counts.
pub mod report {
    /// Words in the report.
    pub const WORDS: u32 = 4;
    /// Number of failed checks in the launch.
    pub const COUNT: u32 = 0;
    /// The index in [`super::KernelInfo::checks`] of the first failure.
    pub const SITE: u32 = 1;
    /// The index used (out of bounds), or 0.
    pub const INDEX: u32 = 2;
    /// The length it was checked against, or 0; for a loop, the budget.
    pub const LEN: u32 = 3;
    /// The pipeline constant id (`@id(0)`) of the checked modules'
    /// `override loop_budget: u32`: the loop iterations each invocation
    /// may run, counted over all its loops, before its loops break and
    /// the launch reports [`super::CheckKind::LoopBudget`]. The runtime
    /// sets it when the pipeline is created (wgpu's
    /// `PipelineCompilationOptions::constants`, key `"0"`); without a
    /// value it is the module's default, [`DEFAULT_LOOP_BUDGET`] unless
    /// the compiler was given another one.
    pub const LOOP_BUDGET_ID: u16 = 0;
    /// The loop budget of a checked launch unless one is set: 2^24
    /// iterations per invocation, about a second of one endless loop on a
    /// software rasteriser and far more than any kernel's real loops.
    pub const DEFAULT_LOOP_BUDGET: u32 = 1 << 24;
}

/// What a check of a checked launch looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// An index outside a buffer, a shared array or a local array.
    OutOfBounds,
    /// An integer division or remainder by zero.
    DivisionByZero,
    /// A loop that ran past the loop budget of the checked launch
    /// ([`report::LOOP_BUDGET_ID`]): an endless loop ends instead of
    /// hanging the GPU.
    LoopBudget,
}

/// One place of the kernel's source that a checked launch checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSite {
    /// What is checked.
    pub kind: CheckKind,
    /// The source line (1-based) of the user's tokens.
    pub line: u32,
    /// The column (1-based).
    pub column: u32,
    /// What is indexed or divided: a parameter's or array's name, or the
    /// expression.
    pub what: Cow<'static, str>,
}

/// A scalar type: of a scalar parameter, of a buffer's elements, or of a
/// vector's lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `half::f16` (needs the device's `SHADER_F16`)
    F16,
    /// `f32`
    F32,
    /// `f64` (needs `SHADER_F64`)
    F64,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64` (needs `SHADER_INT64`)
    I64,
    /// `u64` (needs `SHADER_INT64`)
    U64,
}

impl ScalarType {
    /// The Rust spelling, for messages.
    pub const fn rust_name(self) -> &'static str {
        match self {
            ScalarType::F16 => "f16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
        }
    }

    /// The WGSL spelling.
    pub const fn wgsl_name(self) -> &'static str {
        self.rust_name()
    }

    /// Size in bytes (also its alignment).
    pub const fn size(self) -> u32 {
        match self {
            ScalarType::F16 => 2,
            ScalarType::F32 | ScalarType::I32 | ScalarType::U32 => 4,
            ScalarType::F64 | ScalarType::I64 | ScalarType::U64 => 8,
        }
    }

    /// The device feature the type needs ([`Features::NONE`] for the
    /// 32-bit types every WebGPU device has).
    pub const fn feature(self) -> Features {
        match self {
            ScalarType::F16 => Features::F16,
            ScalarType::F64 => Features::F64,
            ScalarType::I64 | ScalarType::U64 => Features::INT64,
            ScalarType::F32 | ScalarType::I32 | ScalarType::U32 => Features::NONE,
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// What a buffer holds, or what a scalar parameter is, with its WGSL
/// layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DataType {
    /// A scalar.
    Scalar(ScalarType),
    /// A vector of 2, 3 or 4 lanes: glam's `Vec4`, `UVec2`, `Vec3A`, ...
    /// (WGSL `vec4<f32>`, `vec2<u32>`, `vec3<f32>`).
    Vector {
        /// The lanes' type.
        elem: ScalarType,
        /// 2, 3 or 4.
        lanes: u8,
    },
    /// A user struct, whose Rust (`repr(C)`) layout the compiler checked
    /// against WGSL's.
    Struct {
        /// The Rust name.
        name: Cow<'static, str>,
        /// Size in bytes (a multiple of `align`).
        size: u32,
        /// Alignment in bytes.
        align: u32,
    },
}

impl DataType {
    /// `f32`, as a `DataType`.
    pub const F32: DataType = DataType::Scalar(ScalarType::F32);
    /// `i32`, as a `DataType`.
    pub const I32: DataType = DataType::Scalar(ScalarType::I32);
    /// `u32`, as a `DataType`.
    pub const U32: DataType = DataType::Scalar(ScalarType::U32);

    /// WGSL's alignment in bytes (a 3-lane vector aligns as a 4-lane one).
    pub const fn align(&self) -> u32 {
        match self {
            DataType::Scalar(s) => s.size(),
            DataType::Vector { elem, lanes } => elem.size() * if *lanes == 2 { 2 } else { 4 },
            DataType::Struct { align, .. } => *align,
        }
    }

    /// The stride of an array of it in bytes: its size rounded up to its
    /// alignment (a `vec3<f32>` takes 16 bytes).
    pub const fn stride(&self) -> u32 {
        match self {
            DataType::Scalar(s) => s.size(),
            DataType::Vector { .. } => self.align(),
            DataType::Struct { size, .. } => *size,
        }
    }

    /// Whether an array of it takes a number of bytes that need not be a
    /// whole number of 4-byte words (its stride is not a multiple of 4:
    /// `f16`, or a struct of `f16`s), so that a buffer of it carries its
    /// length in the launch block (see the crate docs).
    pub const fn needs_length_word(&self) -> bool {
        !self.stride().is_multiple_of(4)
    }

    /// The device features it needs.
    pub const fn features(&self) -> Features {
        match self {
            DataType::Scalar(s) | DataType::Vector { elem: s, .. } => s.feature(),
            DataType::Struct { .. } => Features::NONE,
        }
    }

    /// The Rust spelling: `f32`, `Vec4`, `UVec2`, `Particle`.
    pub fn rust_name(&self) -> String {
        match self {
            DataType::Scalar(s) => String::from(s.rust_name()),
            DataType::Vector { elem, lanes } => {
                let prefix = match elem {
                    ScalarType::F16 => "F16",
                    ScalarType::F32 => "",
                    ScalarType::F64 => "D",
                    ScalarType::I32 => "I",
                    ScalarType::U32 => "U",
                    ScalarType::I64 => "I64",
                    ScalarType::U64 => "U64",
                };
                let a = if *lanes == 3 && *elem == ScalarType::F32 { "A" } else { "" };
                format!("{prefix}Vec{lanes}{a}")
            }
            DataType::Struct { name, .. } => String::from(name.as_ref()),
        }
    }

    /// The WGSL spelling: `f32`, `vec4<f32>`, `Particle`.
    pub fn wgsl_name(&self) -> String {
        match self {
            DataType::Scalar(s) => String::from(s.wgsl_name()),
            DataType::Vector { elem, lanes } => format!("vec{lanes}<{}>", elem.wgsl_name()),
            DataType::Struct { name, .. } => String::from(name.as_ref()),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rust_name())
    }
}

/// Optional device features a kernel needs: a set of bits. `{:?}` names
/// them as the constants do: `Features(F16 | SUBGROUP)`, `Features(NONE)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Features(pub u32);

impl Features {
    /// Nothing beyond WebGPU's defaults.
    pub const NONE: Features = Features(0);
    /// `f16` arithmetic and storage (wgpu `SHADER_F16`).
    pub const F16: Features = Features(1);
    /// `f64` (wgpu `SHADER_F64`).
    pub const F64: Features = Features(1 << 1);
    /// `i64` and `u64` (wgpu `SHADER_INT64`).
    pub const INT64: Features = Features(1 << 2);
    /// Subgroup operations (wgpu `SUBGROUP`).
    pub const SUBGROUP: Features = Features(1 << 3);
    /// Cooperative matrices: tensor cores (wgpu `EXPERIMENTAL_COOPERATIVE_MATRIX`).
    pub const COOPERATIVE_MATRIX: Features = Features(1 << 4);
    /// Every feature, with its name, in bit order.
    pub const ALL: [(Features, &'static str); 5] = [
        (Features::F16, "SHADER_F16"),
        (Features::F64, "SHADER_F64"),
        (Features::INT64, "SHADER_INT64"),
        (Features::SUBGROUP, "SUBGROUP"),
        (Features::COOPERATIVE_MATRIX, "EXPERIMENTAL_COOPERATIVE_MATRIX"),
    ];

    /// Both sets.
    pub const fn union(self, other: Features) -> Features {
        Features(self.0 | other.0)
    }

    /// Whether every feature of `other` is in `self`.
    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of `self` missing from `have`.
    pub const fn missing_from(self, have: Features) -> Features {
        Features(self.0 & !have.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The wgpu names of the features in the set, for messages.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        Features::ALL.into_iter().filter(move |(f, _)| self.contains(*f)).map(|(_, n)| n)
    }
}

impl fmt::Debug for Features {
    /// The names of the constants in the set, in bit order, and any bit
    /// that has no constant in hex: `Features(F16 | INT64)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [(Features, &str); 5] = [
            (Features::F16, "F16"),
            (Features::F64, "F64"),
            (Features::INT64, "INT64"),
            (Features::SUBGROUP, "SUBGROUP"),
            (Features::COOPERATIVE_MATRIX, "COOPERATIVE_MATRIX"),
        ];
        if self.is_empty() {
            return f.write_str("Features(NONE)");
        }
        f.write_str("Features(")?;
        let mut rest = self.0;
        let mut first = true;
        for (flag, name) in NAMES {
            if self.contains(flag) {
                f.write_str(if first { "" } else { " | " })?;
                f.write_str(name)?;
                rest &= !flag.0;
                first = false;
            }
        }
        if rest != 0 {
            write!(f, "{}{rest:#x}", if first { "" } else { " | " })?;
        }
        f.write_str(")")
    }
}

/// One tile product shape a kernel multiplies (`mma(a, b, c)`): `a` is
/// M×K, `b` K×N, `c` M×N, the inputs of type `ab` and the accumulator of
/// type `acc`. The runtime checks each against the device's cooperative
/// matrix shapes (wgpu's `Adapter::cooperative_matrix_properties`) before
/// creating the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileShape {
    /// Rows of `a` and `c`.
    pub m: u32,
    /// Columns of `b` and `c`.
    pub n: u32,
    /// Columns of `a`, rows of `b`.
    pub k: u32,
    /// The inputs' element type (`F16`).
    pub ab: ScalarType,
    /// The accumulator's element type (`F16` or `F32`).
    pub acc: ScalarType,
}

impl fmt::Display for TileShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}x{} (MxNxK) {} x {} -> {}", self.m, self.n, self.k, self.ab, self.ab, self.acc)
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
    pub ty: DataType,
    /// Buffers: the `@binding` index in `@group(0)`. Scalars: the byte
    /// offset in the uniform block.
    pub slot: u32,
}

impl ParamInfo {
    /// Whether it is a buffer whose length is a word of the launch block
    /// ([`DataType::needs_length_word`]).
    pub const fn has_length_word(&self) -> bool {
        self.kind.is_buffer() && self.ty.needs_length_word()
    }
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
    /// The kernel's modules, one per variant it was built in (plain,
    /// folded, checked, checked folded): see [`KernelInfo::module`].
    pub modules: Cow<'static, [Module]>,
    /// The checks of the checked modules, by site index.
    pub checks: Cow<'static, [CheckSite]>,
    /// The `println!`, `assert!`, `panic!`, ... of the kernel, by site
    /// index (see [`debug`]); a kernel with any binds a print buffer at
    /// [`KernelInfo::print_binding`].
    pub debug_sites: Cow<'static, [DebugSite]>,
    /// The file the kernel is in (for messages about check sites).
    pub source_file: Cow<'static, str>,
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
    /// How that block is bound: a uniform buffer, or (kernels with matrix
    /// tiles) a read-only storage buffer.
    pub params_binding: ParamsBinding,
    /// How the CPU executor runs the kernel's invocations.
    pub cpu: CpuPlan,
    /// Words (4 bytes) of workgroup shared memory the kernel declares; the
    /// CPU executor allocates this much per workgroup.
    pub workgroup_memory_words: u32,
    /// The device features the kernel needs (`f16`, subgroups, ...): a
    /// launch on a device without them is an error naming them.
    pub features: Features,
    /// The tile product shapes the kernel uses (with
    /// [`Features::COOPERATIVE_MATRIX`]): a launch on a device that does
    /// not offer one is an error naming it.
    pub tile_shapes: Cow<'static, [TileShape]>,
    /// The values the kernel's WGSL leaves to the launch (its `override`s):
    /// const parameters and constants of its Rust scope, and, in a
    /// specialisation the runtime made, their values.
    pub consts: Consts,
}

/// A kernel's `override`s (see [`KernelInfo::consts`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Consts {
    /// Each override, in order: a const parameter (`fn k<const N: u32>`)
    /// or a constant of the kernel's Rust scope (`BLOCK`).
    pub params: Cow<'static, [ConstParam]>,
    /// Empty in a kernel as compiled; in a specialisation, the value of
    /// each of [`Consts::params`] as the bits of an `f64` (what pipeline
    /// constants hold).
    pub values: Cow<'static, [u64]>,
    /// The arrays whose length is one of [`Consts::params`]
    /// (`shared::<[f32; BM]>()`, `[0.0f32; TM]`): the runtime sizes them
    /// per value tuple and checks each tuple (a zero length, too many
    /// elements, more shared memory than the device has), naming the
    /// parameters.
    pub arrays: Cow<'static, [ArrayShape]>,
    /// The axes of `workgroup_size` that one of [`Consts::params`] sets
    /// (`workgroup_size = BM`): its index, per axis; the kernel's
    /// `workgroup_size` holds 0 there until the runtime specialises it.
    pub workgroup_size: [Option<u16>; 3],
    /// The shared memory the kernel declares it may use
    /// (`#[kernel(max_shared_bytes = ..)]`, else WebGPU's 16384): the CPU
    /// executor's limit for a specialisation whose shared arrays a
    /// parameter sizes (GPUs check their own).
    pub max_shared_bytes: u32,
}

impl Consts {
    /// No overrides.
    pub const NONE: Consts = Consts {
        params: Cow::Borrowed(&[]),
        values: Cow::Borrowed(&[]),
        arrays: Cow::Borrowed(&[]),
        workgroup_size: [None; 3],
        max_shared_bytes: 16384,
    };

    /// Whether a parameter sizes something the GPU fixes when it compiles
    /// the module (an array's length, the workgroup size).
    pub fn sizes_anything(&self) -> bool {
        !self.arrays.is_empty() || self.workgroup_size.iter().any(Option::is_some)
    }
}

/// One dimension of an array or an axis of the workgroup: a literal, or
/// the value of the parameter of that index in [`Consts::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    /// Fixed when the kernel was compiled.
    Lit(u32),
    /// The value of `Consts::params[i]`.
    Param(u16),
}

/// An array (shared or local) at least one of whose lengths is a
/// parameter ([`Consts::arrays`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    /// The Rust name of the array (the local, or the shared array).
    pub name: Cow<'static, str>,
    /// Workgroup shared memory (else a local array of each invocation).
    pub shared: bool,
    /// Bytes of one element (the innermost scalar or vector).
    pub elem_bytes: u32,
    /// Its lengths, outermost first (`[[f32; TN]; TM]`: `TM`, `TN`).
    pub dims: Cow<'static, [Dim]>,
}

/// One `override` of a kernel's WGSL.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConstParam {
    /// The Rust name (`N`, `BLOCK`).
    pub name: Cow<'static, str>,
    /// Its `@id` in the WGSL: the key of its pipeline constant.
    pub id: u16,
    /// Its Rust type.
    pub ty: ConstType,
    /// A const parameter of the kernel (else a constant of its scope).
    pub generic: bool,
}

/// The Rust type of a kernel's `override`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstType {
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `usize` (`u32` on the GPU)
    Usize,
    /// `f32`
    F32,
    /// `bool`
    Bool,
}

impl ConstType {
    /// The Rust spelling.
    pub const fn rust_name(self) -> &'static str {
        match self {
            ConstType::U32 => "u32",
            ConstType::I32 => "i32",
            ConstType::Usize => "usize",
            ConstType::F32 => "f32",
            ConstType::Bool => "bool",
        }
    }

    /// `value` as a WGSL literal of the override's type.
    pub fn wgsl_literal(self, value: f64) -> String {
        match self {
            ConstType::U32 | ConstType::Usize => format!("{}u", value as u32),
            ConstType::I32 => format!("{}i", value as i32),
            ConstType::F32 => format!("bitcast<f32>({}u)", (value as f32).to_bits()),
            ConstType::Bool => String::from(if value != 0.0 { "true" } else { "false" }),
        }
    }

    /// The type's WGSL spelling (`usize` is `u32` on the GPU).
    pub const fn wgsl_name(self) -> &'static str {
        match self {
            ConstType::U32 | ConstType::Usize => "u32",
            ConstType::I32 => "i32",
            ConstType::F32 => "f32",
            ConstType::Bool => "bool",
        }
    }

    /// `value` as the initialiser of a WGSL `const` of the type.
    pub fn const_literal(self, value: f64) -> String {
        match self {
            ConstType::U32 | ConstType::Usize => format!("{}u", value as u32),
            // `-2147483648i` is the negation of a literal out of range.
            ConstType::I32 if value as i32 == i32::MIN => String::from("i32(-2147483648)"),
            ConstType::I32 => format!("{}i", value as i32),
            ConstType::F32 => format!("{:?}f", value as f32),
            ConstType::Bool => String::from(if value != 0.0 { "true" } else { "false" }),
        }
    }

    /// `value` as Rust would print it.
    pub fn display(self, value: f64) -> String {
        match self {
            ConstType::U32 | ConstType::Usize => format!("{}", value as u32),
            ConstType::I32 => format!("{}", value as i32),
            ConstType::F32 => format!("{:?}", value as f32),
            ConstType::Bool => String::from(if value != 0.0 { "true" } else { "false" }),
        }
    }
}

/// The declaration of the override of `@id` `id` in `wgsl` (one of a
/// kernel's modules): the whole line, trimmed
/// (`@id(1) override TM: u32;`), and its WGSL name and type.
///
/// Overrides are found by `@id`, never by name: naga's WGSL writer renames
/// an identifier that ends in a digit (`BK4` is written `BK4_`), so the
/// Rust name ([`ConstParam::name`]) is not always the WGSL one. Every
/// consumer (the specialisation, the tools' views) looks them up here.
pub fn override_decl(wgsl: &str, id: u16) -> Option<(&str, &str, &str)> {
    let prefix = format!("@id({id}) override ");
    wgsl.lines().find_map(|line| {
        let line = line.trim();
        let (name, ty) = line.strip_prefix(&prefix)?.strip_suffix(';')?.split_once(':')?;
        Some((line, name.trim(), ty.trim()))
    })
}

/// `wgsl` (one of a kernel's modules) with each override of `params`
/// written as a `const` of its value in `values` (`@id(1) override TM:
/// u32;` becomes `const TM: u32 = 8u; // @id(1) override, specialised`),
/// the overrides found by `@id` ([`override_decl`]): the first step of a
/// specialisation (`specialise::specialised_wgsl`, feature `naga`), after
/// which the parameters may size arrays and the workgroup (WGSL needs
/// constants there). Err names a declaration the text lacks.
pub fn wgsl_with_constants(wgsl: &str, params: &[ConstParam], values: &[f64]) -> Result<String, String> {
    let mut text = String::from(wgsl);
    for (p, v) in params.iter().zip(values) {
        let ty = p.ty.wgsl_name();
        let Some((decl, name, declared)) = override_decl(&text, p.id) else {
            return Err(format!("the WGSL has no `@id({}) override` for `{}`", p.id, p.name));
        };
        if declared != ty {
            return Err(format!("`{decl}` is not of type `{ty}`, the type of `{}`", p.name));
        }
        let constant =
            format!("const {name}: {ty} = {}; // @id({}) override, specialised", p.ty.const_literal(*v), p.id);
        text = text.replacen(decl, &constant, 1);
    }
    Ok(text)
}

/// How a kernel's block of launch parameters (the launch description and
/// the scalar parameters, `params` in the WGSL) is bound; its layout is the
/// same either way (WGSL's uniform layout, which storage accepts too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamsBinding {
    /// `var<uniform> params`: every kernel without matrix tiles.
    Uniform,
    /// `var<storage, read> params`: kernels with matrix tiles. NVIDIA's
    /// Vulkan driver (580) ran the tensor-core GEMM of
    /// `examples/gemm_f16.rs` at 174 TFLOP/s with its loop bound and row
    /// lengths in a uniform buffer and at 259 with them in a storage
    /// buffer, the shader otherwise identical (docs/performance.md).
    Storage,
}

/// How the CPU executor runs a kernel: the compiler's plan, decided once
/// (`onekernel-compiler`'s `analysis::cpu_plan`) from what it proved about
/// the kernel. The generated code provides the bodies the plan names (the
/// runtime's `CpuKernel` trait); the runtime picks the executor from the
/// plan, the device (race-checked, serial) and the launch's grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpuPlan {
    /// Invocations are independent and may write any element: outputs are
    /// shared between threads (relaxed atomic accesses).
    Independent,
    /// Every access to every `&mut [T]` parameter uses `global_id().x` as
    /// its index, so on a 1-D grid each invocation touches only its own
    /// element: chunks of invocations get their own windows of the outputs,
    /// read and written with plain loads and stores. (The windows are
    /// bounds-checked: a wrong proof is a panic, never undefined behaviour.)
    OwnElement {
        /// Every buffer access is the invocation's own element too, so a
        /// chunk that every buffer covers runs as one loop over plain
        /// slices (the `chunk_slices` body).
        chunk_loop: bool,
    },
    /// The kernel uses barriers or shared memory: the invocations of a
    /// workgroup cooperate and run together (as futures meeting at the
    /// barriers: the `cooperative` body).
    Cooperative {
        /// The body splits at its barriers into phases, each a loop over
        /// the workgroup's invocations (the `phases` body), which the
        /// runtime runs instead of the futures where it can.
        phased: bool,
    },
}

impl CpuPlan {
    /// Whether the invocations of a workgroup cooperate (barriers, shared
    /// memory): the body is a future per invocation, not a plain call.
    pub const fn is_cooperative(self) -> bool {
        matches!(self, CpuPlan::Cooperative { .. })
    }
}

/// A value an invocation reads from its place in the grid or in its
/// subgroup: `global_id()`, `subgroup_size()`, ... The compiler's HIR holds
/// it and lowers it to a WGSL builtin; the CPU body asks the runtime's
/// `Invocation::get` for the same variant. This is the one list of them:
/// every method here, the compiler's lowering and the runtime's `get` match
/// on it exhaustively, so a variant one side does not handle is a compile
/// error, not a name that fails to match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `global_id()`: the thread's position in the whole grid
    /// (`global_invocation_id`).
    GlobalId,
    /// `thread_id()`: the thread's position in its block
    /// (`local_invocation_id`).
    ThreadId,
    /// `block_id()`: the block's position in the grid (`workgroup_id`).
    BlockId,
    /// `block_dim()`: threads per block (the `workgroup_size`).
    BlockDim,
    /// `grid_dim()`: blocks in the grid (`num_workgroups`).
    GridDim,
    /// `subgroup_size()`: invocations per subgroup (`subgroup_size`).
    SubgroupSize,
    /// `subgroup_invocation_id()`: the invocation's lane in its subgroup
    /// (`subgroup_invocation_id`).
    SubgroupInvocationId,
    /// `subgroup_id()`: the subgroup's index in its workgroup
    /// (`subgroup_id`).
    SubgroupId,
    /// `num_subgroups()`: subgroups in the workgroup (`num_subgroups`).
    NumSubgroups,
}

/// The Rust type of a [`Builtin`]'s value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinType {
    /// The runtime's `Dim3`: three `usize` axes (WGSL `vec3<u32>`). Not
    /// named `Dim3`, so that rustc's messages keep calling that type `Dim3`
    /// rather than by its full path.
    Axes,
    /// `u32`.
    U32,
}

impl Builtin {
    /// Every builtin, in declaration order (also the order of the entry
    /// point's arguments in the WGSL).
    pub const ALL: [Builtin; 9] = [
        Builtin::GlobalId,
        Builtin::ThreadId,
        Builtin::BlockId,
        Builtin::BlockDim,
        Builtin::GridDim,
        Builtin::SubgroupSize,
        Builtin::SubgroupInvocationId,
        Builtin::SubgroupId,
        Builtin::NumSubgroups,
    ];

    /// The Rust name: the function a kernel calls (`global_id`), also the
    /// entry point argument's name in the WGSL.
    pub const fn name(self) -> &'static str {
        match self {
            Builtin::GlobalId => "global_id",
            Builtin::ThreadId => "thread_id",
            Builtin::BlockId => "block_id",
            Builtin::BlockDim => "block_dim",
            Builtin::GridDim => "grid_dim",
            Builtin::SubgroupSize => "subgroup_size",
            Builtin::SubgroupInvocationId => "subgroup_invocation_id",
            Builtin::SubgroupId => "subgroup_id",
            Builtin::NumSubgroups => "num_subgroups",
        }
    }

    /// The type of its value.
    pub const fn ty(self) -> BuiltinType {
        match self {
            Builtin::GlobalId | Builtin::ThreadId | Builtin::BlockId | Builtin::BlockDim | Builtin::GridDim => {
                BuiltinType::Axes
            }
            Builtin::SubgroupSize | Builtin::SubgroupInvocationId | Builtin::SubgroupId | Builtin::NumSubgroups => {
                BuiltinType::U32
            }
        }
    }

    /// Whether every invocation of a workgroup reads the same value, so
    /// that a condition on it may guard a barrier.
    pub const fn is_workgroup_uniform(self) -> bool {
        match self {
            Builtin::BlockId | Builtin::BlockDim | Builtin::GridDim | Builtin::SubgroupSize | Builtin::NumSubgroups => {
                true
            }
            Builtin::GlobalId | Builtin::ThreadId | Builtin::SubgroupInvocationId | Builtin::SubgroupId => false,
        }
    }

    /// Whether a kernel that reads it needs the device's
    /// [`Features::SUBGROUP`].
    pub const fn needs_subgroups(self) -> bool {
        match self {
            Builtin::GlobalId | Builtin::ThreadId | Builtin::BlockId | Builtin::BlockDim | Builtin::GridDim => false,
            Builtin::SubgroupSize | Builtin::SubgroupInvocationId | Builtin::SubgroupId | Builtin::NumSubgroups => true,
        }
    }
}

/// A subgroup collective: an operation that every invocation of a
/// subgroup (a hardware-sized slice of a workgroup, a warp) takes part in,
/// each contributing a value and each taking a result. The compiler lowers
/// it to WGSL's `subgroupAdd`, `subgroupShuffle`, ... and names the same
/// variant in the CPU body, where the runtime's executor computes it; this
/// is the one list of them both sides match on.
///
/// Every collective must be reached by all invocations together: the
/// compiler checks that they are in workgroup-uniform control flow, as
/// barriers are (stricter than WGSL's subgroup-uniform rule, so that a
/// kernel is correct whatever the subgroup size). The values exchanged are
/// 32-bit scalars (`f32`, `i32`, `u32`, `usize` as its low 32 bits;
/// `bool` for [`Ballot`](SubgroupCollective::Ballot)). A lane operand that
/// names no lane of the subgroup gives the invocation its own value on the
/// CPU (as CUDA's shuffles do) and an unspecified one on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubgroupCollective {
    /// `subgroup_add(v)`: the sum of `v` over the subgroup, returned to
    /// every invocation (WGSL `subgroupAdd`). Integers wrap; floats are
    /// added in lane order on the CPU, in an unspecified order on a GPU.
    Add,
    /// `subgroup_min(v)`: the minimum of `v` over the subgroup
    /// (`subgroupMin`).
    Min,
    /// `subgroup_max(v)`: the maximum of `v` over the subgroup
    /// (`subgroupMax`).
    Max,
    /// `subgroup_broadcast(v, lane)`: `v` of lane `lane`, the same for
    /// every invocation (`subgroupBroadcast`). The lane must be uniform: a
    /// constant (WGSL requires a const-expression), unlike
    /// [`Shuffle`](SubgroupCollective::Shuffle)'s.
    Broadcast,
    /// `subgroup_shuffle(v, lane)`: `v` of the lane each invocation names
    /// (`subgroupShuffle`); the lane may differ between invocations.
    Shuffle,
    /// `subgroup_shuffle_xor(v, mask)`: `v` of lane `id ^ mask`, where
    /// `id` is the invocation's own lane (`subgroupShuffleXor`).
    ShuffleXor,
    /// `subgroup_shuffle_down(v, delta)`: `v` of lane `id + delta`
    /// (`subgroupShuffleDown`).
    ShuffleDown,
    /// `subgroup_ballot(p)`: a 128-bit mask (`vec4<u32>`, lane `i` at bit
    /// `i % 32` of word `i / 32`) with bit `i` set when lane `i`'s
    /// predicate is true (`subgroupBallot`). The CPU executor's subgroups
    /// have 32 lanes, so there only the first word can be non-zero.
    Ballot,
}

impl SubgroupCollective {
    /// Every collective, in declaration order.
    pub const ALL: [SubgroupCollective; 8] = [
        SubgroupCollective::Add,
        SubgroupCollective::Min,
        SubgroupCollective::Max,
        SubgroupCollective::Broadcast,
        SubgroupCollective::Shuffle,
        SubgroupCollective::ShuffleXor,
        SubgroupCollective::ShuffleDown,
        SubgroupCollective::Ballot,
    ];

    /// The Rust name: the function a kernel calls (`subgroup_add`).
    pub const fn name(self) -> &'static str {
        match self {
            SubgroupCollective::Add => "subgroup_add",
            SubgroupCollective::Min => "subgroup_min",
            SubgroupCollective::Max => "subgroup_max",
            SubgroupCollective::Broadcast => "subgroup_broadcast",
            SubgroupCollective::Shuffle => "subgroup_shuffle",
            SubgroupCollective::ShuffleXor => "subgroup_shuffle_xor",
            SubgroupCollective::ShuffleDown => "subgroup_shuffle_down",
            SubgroupCollective::Ballot => "subgroup_ballot",
        }
    }

    /// Number of arguments: the value (or predicate), then for the
    /// gathers the lane, mask or distance.
    pub fn arity(self) -> usize {
        match self {
            SubgroupCollective::Add
            | SubgroupCollective::Min
            | SubgroupCollective::Max
            | SubgroupCollective::Ballot => 1,
            SubgroupCollective::Broadcast
            | SubgroupCollective::Shuffle
            | SubgroupCollective::ShuffleXor
            | SubgroupCollective::ShuffleDown => 2,
        }
    }

    /// Whether the second argument (the lane) must be uniform, a constant:
    /// only [`Broadcast`](SubgroupCollective::Broadcast)'s.
    pub fn needs_uniform_lane(self) -> bool {
        self == SubgroupCollective::Broadcast
    }
}

/// The most elements a local array may have (the compiler's limit for
/// literal lengths, which [`KernelInfo::sizes_for`] applies to lengths a
/// launch sets).
pub const MAX_LOCAL_ELEMENTS: u64 = 1 << 20;

/// Why a value tuple cannot size a kernel ([`KernelInfo::sizes_for`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeError {
    /// The index in [`Consts::params`] of the first parameter involved.
    pub param: u16,
    /// What is wrong, naming the parameters.
    pub problem: String,
}

impl KernelInfo {
    /// The workgroup size and the words of shared memory of this kernel
    /// for `values` (one per [`Consts::params`]): its own where no
    /// parameter sets them. Err for an array of no elements, a local array
    /// over [`MAX_LOCAL_ELEMENTS`], or a workgroup axis of zero; the
    /// device's limits are the launch's to check.
    pub fn sizes_for(&self, values: &[f64]) -> Result<([u32; 3], u32), SizeError> {
        let params = &self.consts.params;
        let name = |i: u16| params.get(usize::from(i)).map_or("?", |p| &*p.name);
        let show = |i: u16, v: f64| params.get(usize::from(i)).map_or(String::new(), |p| p.ty.display(v));
        let mut shared_words = u64::from(self.workgroup_memory_words);
        for a in self.consts.arrays.iter() {
            let mut elements: u64 = 1;
            let mut involved = Vec::new();
            for d in a.dims.iter() {
                let n = match *d {
                    Dim::Lit(n) => f64::from(n),
                    Dim::Param(i) => {
                        let v = values.get(usize::from(i)).copied().unwrap_or(0.0);
                        if v < 1.0 {
                            return Err(SizeError {
                                param: i,
                                problem: format!(
                                    "`{}` = {} is a length of the {} array `{}`, and an array has at least one element",
                                    name(i),
                                    show(i, v),
                                    if a.shared { "shared" } else { "local" },
                                    a.name
                                ),
                            });
                        }
                        if !involved.contains(&i) {
                            involved.push(i);
                        }
                        v
                    }
                };
                elements = elements.saturating_mul(n as u64);
            }
            if a.shared {
                shared_words =
                    shared_words.saturating_add(elements.saturating_mul(u64::from(a.elem_bytes)).div_ceil(4));
            } else if elements > MAX_LOCAL_ELEMENTS {
                let names: Vec<String> = involved.iter().map(|&i| format!("`{}`", name(i))).collect();
                return Err(SizeError {
                    param: involved.first().copied().unwrap_or(0),
                    problem: format!(
                        "{} make the local array `{}` {elements} elements, and a kernel's local array holds at most {MAX_LOCAL_ELEMENTS}",
                        names.join(", "),
                        a.name
                    ),
                });
            }
        }
        let mut size = self.workgroup_size;
        for (axis, set) in self.consts.workgroup_size.iter().enumerate() {
            let Some(i) = *set else { continue };
            let v = values.get(usize::from(i)).copied().unwrap_or(0.0);
            if v < 1.0 {
                return Err(SizeError {
                    param: i,
                    problem: format!(
                        "`{}` = {} is the workgroup size in {}, which is at least 1",
                        name(i),
                        show(i, v),
                        ['x', 'y', 'z'][axis]
                    ),
                });
            }
            size[axis] = v as u32;
        }
        Ok((size, u32::try_from(shared_words).unwrap_or(u32::MAX)))
    }
    /// A kernel with no code, no parameters and a workgroup of one: the
    /// base of hand-written descriptions (`KernelInfo { name, wgsl, ..
    /// KernelInfo::EMPTY }`), so that they keep compiling when the ABI
    /// gains a field.
    pub const EMPTY: KernelInfo = KernelInfo {
        name: Cow::Borrowed(""),
        entry_point: Cow::Borrowed("main"),
        modules: Cow::Borrowed(&[]),
        checks: Cow::Borrowed(&[]),
        debug_sites: Cow::Borrowed(&[]),
        source_file: Cow::Borrowed(""),
        explain: Cow::Borrowed(""),
        workgroup_size: [1, 1, 1],
        max_workgroup_invocations: 256,
        params: Cow::Borrowed(&[]),
        uniform_binding: 0,
        uniform_size: launch_block::SIZE,
        params_binding: ParamsBinding::Uniform,
        cpu: CpuPlan::Independent,
        workgroup_memory_words: 0,
        features: Features::NONE,
        tile_shapes: Cow::Borrowed(&[]),
        consts: Consts::NONE,
    };

    /// The module of variant `key`, if the kernel has it.
    pub fn module(&self, key: ModuleKey) -> Option<&Module> {
        self.modules.iter().find(|m| m.key == key)
    }

    /// The plain module's WGSL (`""` if it has none): what a learner reads.
    pub fn wgsl(&self) -> &str {
        self.module(ModuleKey::PLAIN).map_or("", |m| &m.wgsl)
    }

    /// The plain module's SPIR-V (empty if it has none).
    pub fn spirv(&self) -> &[u32] {
        self.module(ModuleKey::PLAIN).and_then(|m| m.spirv.as_deref()).unwrap_or(&[])
    }

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

    /// The byte offset in the uniform block of the length word of
    /// parameter `param` (see the crate docs), if it has one.
    pub fn length_slot(&self, param: usize) -> Option<u32> {
        launch_block::length_slot(&self.params, param)
    }

    /// The byte offset in the uniform block where the scalar parameters
    /// start: after the launch description and the length words.
    pub fn scalars_start(&self) -> u32 {
        launch_block::scalars_start(&self.params)
    }

    /// The binding of the print buffer ([`debug::print_buffer`]) of a
    /// kernel with [`KernelInfo::debug_sites`]: after the uniform block and
    /// the checked modules' report buffer.
    pub const fn print_binding(&self) -> u32 {
        self.uniform_binding + 2
    }

    /// The words the print buffer reserves for the panic record: the
    /// largest record of a site that panics (0 without any).
    pub fn panic_record_words(&self) -> u32 {
        self.debug_sites.iter().filter(|s| s.kind.panics()).map(DebugSite::record_words).max().unwrap_or(0)
    }

    /// The binding layout as a Markdown table for people: each parameter's
    /// Rust type, its WGSL declaration and where it is bound, then the
    /// uniform block. The `#[kernel]` macro's `BINDINGS`, the runtime's
    /// `inspect::bindings` and the CLI's `--emit bindings` all print this.
    pub fn bindings_table(&self) -> String {
        let space = match self.params_binding {
            ParamsBinding::Uniform => "uniform",
            ParamsBinding::Storage => "storage",
        };
        let mut s = String::from("| parameter | Rust | WGSL | binding |\n|---|---|---|---|\n");
        for p in self.params.iter() {
            let (name, t) = (&p.name, p.ty.wgsl_name());
            let rust = p.ty.rust_name();
            let rust = rust.as_str();
            let binding = format!("@group(0) @binding({})", p.slot);
            let (rust, wgsl, place) = match p.kind {
                ParamKind::ReadOnlyBuffer => {
                    (format!("&[{rust}]"), format!("var<storage, read> {name}: array<{t}>"), binding)
                }
                ParamKind::ReadWriteBuffer => {
                    (format!("&mut [{rust}]"), format!("var<storage, read_write> {name}: array<{t}>"), binding)
                }
                ParamKind::AtomicBuffer => (
                    format!("&[Atomic{}]", rust.to_uppercase()),
                    format!("var<storage, read_write> {name}: array<atomic<{t}>>"),
                    binding,
                ),
                ParamKind::Scalar => {
                    (String::from(rust), format!("params.{name}: {t}"), format!("{space}, offset {}", p.slot))
                }
            };
            s.push_str(&format!("| `{name}` | `{rust}` | `{wgsl}` | {place} |\n"));
        }
        for (i, p) in self.params.iter().enumerate() {
            if let Some(at) = self.length_slot(i) {
                s.push_str(&format!("| `{0}.len()` | | `params.{0}_len: u32` | {space}, offset {at} |\n", p.name));
            }
        }
        s.push_str(&format!(
            "| (launch) | | `var<{space}> params: LaunchParams` | @group(0) @binding({}), {} bytes |\n",
            self.uniform_binding, self.uniform_size
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{:?}` names the features (not the bits), every one of them.
    #[test]
    fn features_debug_names_them() {
        assert_eq!(format!("{:?}", Features::NONE), "Features(NONE)");
        assert_eq!(format!("{:?}", Features::F16.union(Features::SUBGROUP)), "Features(F16 | SUBGROUP)");
        assert_eq!(format!("{:?}", Features(1 << 2 | 1 << 9)), "Features(INT64 | 0x200)");
        let all = Features::ALL.iter().fold(Features::NONE, |a, (f, _)| a.union(*f));
        assert_eq!(format!("{all:?}"), "Features(F16 | F64 | INT64 | SUBGROUP | COOPERATIVE_MATRIX)");
        for (f, _) in Features::ALL {
            let s = format!("{f:?}");
            assert!(!s.contains("0x") && !s.contains('|'), "{s}");
        }
    }

    /// A `KernelInfo` can be a `static`, as `#[kernel]` emits it.
    static K: KernelInfo = KernelInfo {
        name: Cow::Borrowed("k"),
        entry_point: Cow::Borrowed("k"),
        modules: Cow::Borrowed(&[
            Module { key: ModuleKey::PLAIN, wgsl: Cow::Borrowed("plain"), spirv: Some(Cow::Borrowed(&[7])) },
            Module { key: ModuleKey::CHECKED_FOLDED, wgsl: Cow::Borrowed("checked folded"), spirv: None },
        ]),
        checks: Cow::Borrowed(&[CheckSite {
            kind: CheckKind::OutOfBounds,
            line: 3,
            column: 5,
            what: Cow::Borrowed("a"),
        }]),
        debug_sites: Cow::Borrowed(&[]),
        source_file: Cow::Borrowed("src/lib.rs"),
        explain: Cow::Borrowed(""),
        workgroup_size: [64, 2, 1],
        max_workgroup_invocations: 256,
        params: Cow::Borrowed(&[
            ParamInfo { name: Cow::Borrowed("a"), kind: ParamKind::ReadOnlyBuffer, ty: DataType::F32, slot: 0 },
            ParamInfo {
                name: Cow::Borrowed("s"),
                kind: ParamKind::Scalar,
                ty: DataType::U32,
                slot: launch_block::SIZE,
            },
        ]),
        uniform_binding: 1,
        uniform_size: 32,
        params_binding: ParamsBinding::Uniform,
        cpu: CpuPlan::Independent,
        workgroup_memory_words: 0,
        features: Features::NONE,
        tile_shapes: Cow::Borrowed(&[]),
        consts: Consts::NONE,
    };

    /// Modules are found by key; the plain one has accessors of its own.
    #[test]
    fn modules_by_key() {
        assert_eq!((K.wgsl(), K.spirv()), ("plain", &[7][..]));
        assert_eq!(K.module(ModuleKey::CHECKED_FOLDED).map(|m| &*m.wgsl), Some("checked folded"));
        assert_eq!(K.module(ModuleKey::FOLDED), None);
        assert_eq!((KernelInfo::EMPTY.wgsl(), KernelInfo::EMPTY.spirv()), ("", &[][..]));
        let names = [ModuleKey::PLAIN, ModuleKey::FOLDED, ModuleKey::CHECKED, ModuleKey::CHECKED_FOLDED]
            .map(|k| alloc::format!("{k}"));
        assert_eq!(names, ["plain", "folded", "checked", "checked folded"]);
    }

    #[test]
    fn data_types_have_wgsl_layouts() {
        let v3 = DataType::Vector { elem: ScalarType::F32, lanes: 3 };
        assert_eq!(
            (v3.align(), v3.stride(), v3.rust_name(), v3.wgsl_name()),
            (16, 16, "Vec3A".into(), "vec3<f32>".into())
        );
        let h2 = DataType::Vector { elem: ScalarType::F16, lanes: 2 };
        assert_eq!((h2.stride(), h2.features()), (4, Features::F16));
        let u2 = DataType::Vector { elem: ScalarType::U32, lanes: 2 };
        assert_eq!((u2.stride(), u2.rust_name()), (8, "UVec2".into()));
        assert!(DataType::Scalar(ScalarType::F16).needs_length_word() && !h2.needs_length_word());
        let f = Features::F16.union(Features::SUBGROUP);
        assert!(f.contains(Features::F16) && !f.contains(Features::F64));
        assert_eq!(f.missing_from(Features::F16).names().collect::<alloc::vec::Vec<_>>(), ["SUBGROUP"]);
    }

    #[test]
    fn length_words_precede_the_scalars() {
        let buffer = |name: &'static str, ty| ParamInfo {
            name: Cow::Borrowed(name),
            kind: ParamKind::ReadWriteBuffer,
            ty,
            slot: 0,
        };
        let h = DataType::Scalar(ScalarType::F16);
        let params = [buffer("a", h.clone()), buffer("b", DataType::F32), buffer("c", h)];
        let k = KernelInfo { params: Cow::Owned(params.to_vec()), ..KernelInfo::EMPTY };
        assert_eq!([0, 1, 2, 3].map(|i| k.length_slot(i)), [Some(16), None, Some(20), None]);
        assert_eq!(k.scalars_start(), 24);
        assert!(k.bindings_table().contains("| `c.len()` | | `params.c_len: u32` | uniform, offset 20 |\n"));
        assert_eq!(K.scalars_start(), launch_block::SIZE);
    }

    #[test]
    fn static_kernel_info() {
        assert_eq!(K.workgroup_invocations(), 128);
        assert_eq!(K.param_name(1), "s");
        assert_eq!(K.param_name(9), "?");
        assert_eq!(K.buffer_params().count(), 1);
        assert_eq!(K.scalar_params().next().map(|p| p.slot), Some(16));
        assert_eq!(
            K.bindings_table(),
            "| parameter | Rust | WGSL | binding |\n|---|---|---|---|\n\
             | `a` | `&[f32]` | `var<storage, read> a: array<f32>` | @group(0) @binding(0) |\n\
             | `s` | `u32` | `params.s: u32` | uniform, offset 16 |\n\
             | (launch) | | `var<uniform> params: LaunchParams` | @group(0) @binding(1), 32 bytes |\n"
        );
        // A kernel with matrix tiles: the same block, bound as storage.
        let tiles = KernelInfo { params_binding: ParamsBinding::Storage, ..K.clone() };
        let table = tiles.bindings_table();
        assert!(
            table.contains("| storage, offset 16 |") && table.contains("`var<storage> params: LaunchParams`"),
            "{table}"
        );
    }
}
