//! # kernel
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

mod builtins;

pub use builtins::{block_dim, block_id, global_id, grid_dim, shared, storage_barrier, thread_id, workgroup_barrier};
pub use onekernel_macro::{helper, kernel, kernels};
pub use onekernel_runtime::{
    Buffer, BufferError, Clock, DataType, Device, DeviceError, Dim3, Element, Features, Grid, KernelInfo, LaunchError,
    ScalarType, Timing,
};

/// The vector types kernels use (`Vec4`, `UVec2`, `Vec3A`, ...): glam, the
/// version this crate is built with. The common ones are in the
/// [`prelude`].
pub use onekernel_runtime::glam;
/// `f16`: the `half` crate, the version this crate is built with
/// (`half::f16` is in the [`prelude`]).
pub use onekernel_runtime::half;

/// Everything a kernel file needs: `use onekernel::prelude::*;`
pub mod prelude {
    pub use crate::glam::{IVec2, IVec3, IVec4, UVec2, UVec3, UVec4, Vec2, Vec3A, Vec4};
    pub use crate::half::f16;
    pub use crate::{
        block_dim, block_id, global_id, grid_dim, helper, kernel, kernels, shared, storage_barrier, thread_id,
        workgroup_barrier, Buffer, Device, Dim3, Grid,
    };
}

/// Looking inside a compiled kernel: WGSL, SPIR-V (and its disassembly),
/// naga IR, the binding table and the explain view (each Rust line beside
/// the WGSL it produced). With the `inspect` feature (on by default).
#[cfg(feature = "inspect")]
pub use onekernel_runtime::inspect;

/// Re-exports the runtime in full, for advanced use (benchmarks, custom
/// launches).
pub use onekernel_runtime as runtime;

/// What the code `#[kernel]` generates calls; not part of the API (see
/// `onekernel_runtime::__private`).
#[doc(hidden)]
pub mod __private {
    pub use onekernel_macro::kernel_with_helpers;
    pub use onekernel_runtime::__private::*;

    /// The value of a builtin in the CPU body: `item` is the user's path to
    /// the documented builtin (`global_id`), named so that the user's
    /// import resolves and an editor finds its docs; `value` is what it
    /// stands for in this invocation.
    #[inline(always)]
    pub fn builtin<F, T>(item: F, value: T) -> T {
        let _ = item;
        value
    }
}
