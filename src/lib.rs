//! # onekernel
//!
//! GPU kernels written as ordinary Rust functions, run on any GPU through
//! wgpu and on the CPU from the very same source.
//!
//! ```
//! use onekernel::prelude::*;
//!
//! #[kernel(workgroup_size = 256)]
//! fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
//!     let i = global_id().x;
//!     if i < out.len() {
//!         out[i] = a[i] + b[i];
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let device = Device::cpu(); // or Device::new(): the GPU if there is one
//! let a = Buffer::from_slice(&device, &[1.0, 2.0])?;
//! let b = Buffer::from_slice(&device, &[10.0, 20.0])?;
//! let mut out = Buffer::zeroed(&device, 2)?;
//! vector_add::launch(&device, 2, &a, &b, &mut out)?;
//! assert_eq!(out.read()?, vec![11.0, 22.0]);
//! println!("{}", vector_add::WGSL);
//!
//! // How long launches take: the GPU's own timestamps where it has them,
//! // the wall clock otherwise (`timing.clock` says which).
//! let (launched, timing) = device.time(|| vector_add::launch(&device, 2, &a, &b, &mut out))?;
//! launched?;
//! assert_eq!(timing.launches(), 1);
//! println!("{timing}");
//! # Ok(()) }
//! ```
//!
//! `#[kernel]` turns the function into a module of the same name holding
//! `WGSL`, `SPIRV`, `ENTRY_POINT`, `WORKGROUP_SIZE`, `BINDINGS`, `EXPLAIN`, `KERNEL`,
//! a typed `launch` and the `cpu_body` the CPU executor runs. The
//! supported Rust is listed in `docs/supported-rust.md`; thread indexing
//! (`global_id()`, `thread_id()`, `block_id()`, `block_dim()`,
//! `grid_dim()`) in `docs/threads-blocks-grids.md`.
//!
//! # What is where
//!
//! Each item has one path. The root holds what a program writes daily:
//! the macros ([`kernel`], [`helper`], [`kernels`]), the builtins kernels
//! call ([`global_id`], [`shared`], [`workgroup_barrier`], ...), [`Device`],
//! [`Buffer`] and its [`Element`]s, [`Grid`] and [`Dim3`], and the errors
//! ([`LaunchError`], [`BufferError`], [`DeviceError`]); the [`prelude`]
//! imports the common ones at once. The rest is in modules:
//!
//! | module | what |
//! |---|---|
//! | [`abi`] | what a compiled kernel is: [`abi::KernelInfo`] (a kernel's `KERNEL`) and the types of its fields, [`abi::Features`] (what [`Device::features`] returns) |
//! | [`num`] | the bounds of a generic kernel: [`num::Num`], [`num::Float`], [`num::Int`] |
//! | [`timing`] | [`Device::time`]'s [`timing::Timing`] and [`timing::Clock`]; [`Device::profile`]'s [`timing::Profile`] (time per kernel) |
//! | [`tile`] | matrix tiles for tensor cores |
//! | [`tune`] | autotuning |
//! | `ops` | the kernel library: reduce, scan, sort, ... (`ops` feature) |
//! | `inspect` | WGSL, SPIR-V, naga IR and the explain view of a kernel (`inspect` feature) |
//! | [`glam`], [`half`], [`wgpu`] | the versions of these crates this one is built with (and `ndarray`, with the `ndarray` feature) |

/// Compiles a Rust function into a GPU kernel and a CPU body.
///
/// ```
/// use onekernel::prelude::*;
///
/// /// `out[i] = a[i] * s`
/// #[kernel(workgroup_size = 256)]
/// fn scale(a: &[f32], s: f32, out: &mut [f32]) {
///     let i = global_id().x;
///     if i < out.len() {
///         out[i] = a[i] * s;
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let device = Device::cpu(); // or Device::new() for the GPU
/// let a = Buffer::from_slice(&device, &[1.0, 2.0, 3.0])?;
/// let mut out = Buffer::zeroed(&device, 3)?;
/// scale::launch(&device, 3, &a, 2.0, &mut out)?;
/// assert_eq!(out.read()?, [2.0, 4.0, 6.0]);
/// # Ok(()) }
/// ```
///
/// # Arguments of the attribute
///
/// | Argument | Meaning |
/// |---|---|
/// | `workgroup_size = 256` | threads per workgroup (a CUDA block); also `(16, 16)` or `(8, 8, 4)` for 2-D and 3-D workgroups. Required. |
/// | `max_workgroup_invocations = 1024` | allow workgroups of more than 256 threads (the size every WebGPU device supports); the launch then checks that the device supports it. |
/// | `max_shared_bytes = 32768` | allow more than 16384 bytes of `shared()` arrays (the size every WebGPU device supports); the launch then checks the device's limit. |
/// | `types = [f32, i32]` | for a generic kernel: compile it for these types of its bound only (all of them by default). |
///
/// # What it generates
///
/// The function becomes a module of the same name holding `launch(&device,
/// grid, args...)` (one argument per parameter, in order: `&Buffer<T>` for
/// `&[T]`, `&mut Buffer<T>` for `&mut [T]`, a value for a scalar), the
/// generated `WGSL` and `SPIRV` (its plain module; the others, for very
/// long 1-D grids and checked launches, are `KERNEL.module(key)`), `BINDINGS`, `EXPLAIN` (each Rust line beside its WGSL),
/// `KERNEL` (the description the runtime launches from) and `cpu_body`,
/// the original body as the CPU executor runs it.
///
/// # Generic kernels
///
/// A kernel may have one type parameter bounded by [`Num`](num::Num),
/// [`Float`](num::Float) or [`Int`](num::Int); it is compiled once per type of the bound, each instantiation
/// with its module (`for_f32`, `for_i32`, ...), and `launch` picks one by
/// the element type of its arguments:
///
/// ```
/// use onekernel::prelude::*;
///
/// #[kernel(workgroup_size = 64)]
/// fn axpy<T: Num>(a: T, x: &[T], y: &mut [T]) {
///     let i = global_id().x;
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let device = Device::cpu();
/// let x = Buffer::from_slice(&device, &[1, 2, 3])?;
/// let mut y = Buffer::from_slice(&device, &[10, 20, 30])?;
/// axpy::launch(&device, 3, 2, &x, &mut y)?; // T = i32, from the buffers
/// assert_eq!(y.read()?, [12, 24, 36]);
/// assert!(axpy::for_i32::WGSL.contains("array<i32>"));
/// assert_eq!(axpy::kernel_info::<f64>().name, "axpy::<f64>");
/// # Ok(()) }
/// ```
///
/// # What a kernel may contain
///
/// A subset of Rust: scalars (`f32`, `i32`, `u32`, `bool`, `usize`
/// indices, and `f16`, `f64`, `i64`, `u64` where the device has them), a
/// generic element type, local arrays, tuples, structs of a [`kernels`] module,
/// arithmetic, `if`/`match`/loops, math methods, [`helper`] calls, shared
/// memory, barriers and atomics. Anything else is a compile error under your
/// tokens that says what to write instead. The full list, with the WGSL of
/// each construct: [Supported Rust](https://github.com/onekernel/onekernel/blob/main/docs/supported-rust.md);
/// where the CPU and the GPU differ: [Semantics](https://github.com/onekernel/onekernel/blob/main/docs/semantics.md);
/// thread indexing: [Threads, blocks and grids](https://github.com/onekernel/onekernel/blob/main/docs/threads-blocks-grids.md).
pub use onekernel_macro::kernel;
/// Every builtin function (`global_id()`, `shared()`, ...): one list, the
/// items of the runtime's `builtins` module.
pub use onekernel_runtime::builtins::*;

/// Marks a function that kernels may call.
///
/// It stays an ordinary Rust function for host code; kernels that call it
/// get it lowered to a WGSL function. Helpers take and return values
/// (scalars, arrays, tuples, structs), not buffers, and may call other
/// helpers; recursion is an error. A helper must be in scope where the
/// kernel is defined: in the same module, or through a glob import
/// (`use crate::shading::*;`), which also brings the hidden macro through
/// which the kernel reads the helper (`use crate::shading::smoothstep;`
/// brings only the function).
///
/// ```
/// use onekernel::prelude::*;
///
/// #[helper]
/// fn smoothstep(x: f32) -> f32 {
///     let t = x.clamp(0.0, 1.0);
///     t * t * (3.0 - 2.0 * t)
/// }
///
/// #[kernel(workgroup_size = 64)]
/// fn apply(a: &[f32], out: &mut [f32]) {
///     let i = global_id().x;
///     if i < out.len() {
///         out[i] = smoothstep(a[i]);
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(smoothstep(0.5), 0.5); // still a Rust function
/// let device = Device::cpu();
/// let a = Buffer::from_slice(&device, &[0.0, 0.5, 2.0])?;
/// let mut out = Buffer::zeroed(&device, 3)?;
/// apply::launch(&device, 3, &a, &mut out)?;
/// assert_eq!(out.read()?, [0.0, 0.5, 1.0]);
/// # Ok(()) }
/// ```
pub use onekernel_macro::helper;

/// Shows the kernels of an inline module the module's `const` items and
/// structs.
///
/// A proc macro sees only the item it is attached to, so a `#[kernel]` on
/// its own cannot read a `const TILE` or a `struct Particle` defined beside
/// it. Put them in a module marked `#[onekernel::kernels]`: every kernel in
/// it can use the module's constants (in expressions, array lengths and
/// shared-memory sizes) and structs (as buffer elements, uniform
/// parameters, locals and helper values). Structs get `#[repr(C)]`,
/// `Clone`, `Copy`, `bytemuck::Pod` and the runtime's `Element`, and their
/// layout is checked against WGSL's rules at compile time (padding is an
/// error that says which field to add).
///
/// ```
/// #[onekernel::kernels]
/// mod sim {
///     use onekernel::prelude::*;
///
///     pub const DT: f32 = 0.5;
///
///     pub struct Body {
///         pub pos: f32,
///         pub vel: f32,
///     }
///
///     #[kernel(workgroup_size = 64)]
///     pub fn step(bodies: &mut [Body]) {
///         let i = global_id().x;
///         if i < bodies.len() {
///             let b = bodies[i];
///             bodies[i] = Body { pos: b.pos + b.vel * DT, vel: b.vel };
///         }
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use onekernel::prelude::*;
/// let device = Device::cpu();
/// let mut bodies = Buffer::from_slice(&device, &[sim::Body { pos: 1.0, vel: 2.0 }])?;
/// sim::step::launch(&device, 1, &mut bodies)?;
/// assert_eq!(bodies.read()?[0].pos, 2.0);
/// # Ok(()) }
/// ```
pub use onekernel_macro::kernels;

// Running kernels: the handle, the data, the launch shape and the errors
// (`LaunchError::DataRace` carries a `DataRace`).
pub use onekernel_runtime::{Buffer, BufferArg, Device, Dim3, Element, F16Vec2, F16Vec4, Grid};
pub use onekernel_runtime::{BufferError, DataRace, DeviceError, LaunchError, RaceAccess, RaceKind};
// Living inside a wgpu program (docs/interop.md): the devices there are
// (`Device::available`), and what `Device::record` recorded.
pub use onekernel_runtime::{AvailableDevice, Recorded};
// What a device is (`Device::kind`), and 2-D views of a buffer (rows,
// columns, blocks) as the ops take them; a buffer's GPU memory seen as
// another element type (`Buffer::view_as`, `view_as_mut`), nameable so
// that a program can keep or return one.
pub use onekernel_runtime::{BufferView, BufferViewMut, DeviceKind, Layout2d, View2d, View2dMut};

/// Everything a kernel file needs: `use onekernel::prelude::*;`
pub mod prelude {
    pub use crate::glam::{
        ivec2, ivec3, ivec4, uvec2, uvec3, uvec4, vec2, vec3, vec3a, vec4, IVec2, IVec3, IVec4, UVec2, UVec3, UVec4,
        Vec2, Vec2Swizzles, Vec3, Vec3A, Vec3Swizzles, Vec4, Vec4Swizzles,
    };
    pub use crate::half::f16;
    pub use crate::num::{Float, Int, Num};
    pub use crate::LaunchError;
    pub use crate::{helper, kernel, kernels, Buffer, Device, Dim3, F16Vec2, F16Vec4, Grid};
    pub use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};
    pub use onekernel_runtime::builtins::*;
}

/// What a compiled kernel is: [`abi::KernelInfo`] (a kernel's `KERNEL`)
/// and every type its fields are made of ([`abi::ParamInfo`],
/// [`abi::DataType`], [`abi::Features`], [`abi::TileShape`], ...), the
/// contract between the compiler and the runtime (the `onekernel-abi`
/// crate).
pub use onekernel_runtime::abi;

/// The bounds of a generic kernel's element type (`fn axpy<T: Num>(..)`):
/// [`num::Num`], [`num::Float`] and [`num::Int`], each sealed and
/// implemented for the kernel scalar types it names (all three are in the
/// [`prelude`]).
pub use onekernel_runtime::num;

/// `println!`, `assert!` and `panic!` inside kernels: the printed lines
/// ([`debug::PrintedLine`], `[kernel (x, y, z)] text`) and where they go
/// ([`debug::set_print_handler`]; stdout by default). A kernel's panic is
/// [`LaunchError::KernelPanic`].
pub use onekernel_runtime::debug;

/// [`Device::time`]'s result: [`timing::Timing`], measured on the
/// [`timing::Clock`] it names; [`Device::profile`]'s: [`timing::Profile`],
/// the same times grouped by kernel.
pub use onekernel_runtime::timing;

/// Matrix tiles for tensor cores: [`tile::MatrixA`], [`tile::MatrixB`],
/// [`tile::Accumulator`] and [`tile::mma`] (see docs/supported-rust.md and
/// the book's tensor-core chapter).
pub use onekernel_runtime::tile;

/// Autotuning: the fastest of several candidates (launch shapes, kernel
/// variants) for a device and a problem, chosen by timing them once and
/// remembered in a cache file (see [`tune::Tuner`]).
pub use onekernel_runtime::tune;

/// The kernel library: reduce, scan, sort, histogram, matmul, row
/// normalisations, transpose, random numbers (`ops` feature, on by default).
#[cfg(feature = "ops")]
pub use onekernel_ops as ops;

/// Looking inside a compiled kernel: WGSL, SPIR-V (and its disassembly),
/// naga IR, the binding table and the explain view (each Rust line beside
/// the WGSL it produced). With the `inspect` feature (on by default).
#[cfg(feature = "inspect")]
pub use onekernel_runtime::inspect;

/// The vector types kernels use (`Vec4`, `UVec2`, `Vec3A`, ...): glam, the
/// version this crate is built with. The common ones are in the
/// [`prelude`].
pub use onekernel_runtime::glam;
/// `f16`: the `half` crate, the version this crate is built with
/// (`half::f16` is in the [`prelude`]).
pub use onekernel_runtime::half;
/// ndarray, the version `Buffer::from_array` and `Buffer::read_array`
/// take (`ndarray` feature).
#[cfg(feature = "ndarray")]
pub use onekernel_runtime::ndarray;
/// wgpu, the version this crate is built with, for code that uses
/// [`Device::wgpu`] and [`Buffer::wgpu_buffer`] (a hand-written baseline
/// in a benchmark, [`Device::run_compute_pass`]).
pub use onekernel_runtime::wgpu;

/// What the code `#[kernel]` generates calls; not part of the API (see
/// `onekernel_runtime::__private`).
#[doc(hidden)]
pub mod __private {
    pub use onekernel_macro::kernel_with_helpers;
    pub use onekernel_runtime::__private::*;
}
