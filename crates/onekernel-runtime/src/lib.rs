//! Devices, buffers and launches for `#[kernel]` functions: wgpu on the GPU,
//! rayon on the CPU.
//!
//! The `#[kernel]` macro compiles a Rust function to WGSL/SPIR-V and emits a
//! `static` [`KernelInfo`] plus launch code that calls into this crate:
//! [`Buffer::gpu_arg`]/[`Buffer::gpu_arg_mut`] and [`GpuDevice::dispatch`]
//! on a GPU, [`Buffer::cpu_slice`]/[`Buffer::cpu_shared`] and
//! [`CpuDevice::execute`] on the CPU.
//!
//! # The launch block
//! Every kernel has a uniform block at `@group(0) @binding(uniform_binding)`
//! whose first 16 bytes the runtime fills: `grid_dim: vec3<u32>` (the
//! logical number of workgroups) and `block_offset: u32` (the linear index
//! of the dispatch's first logical workgroup: a 1-D grid longer than the
//! device's per-dimension limit is folded into 2-D exactly, as full rows
//! plus a separate tail dispatch). Folded launches run the kernel's
//! `wgsl_folded` module, which reads the block to rebuild the logical ids;
//! unfolded launches run the plain one and pay nothing for folding. See
//! [`launch_block`].
//! Scalar parameters follow at their `slot` offsets (>= 16), and the
//! block's size is a multiple of 16.

#![warn(missing_docs)]

mod buffer;
mod cpu;
mod device;
mod error;
mod gpu;
mod grid;
pub mod inspect;
mod plan;

pub use buffer::{AtomicElement, Buffer, Element};
pub use cpu::{
    Barrier, Chunk, CpuDevice, OutputSlice, OwnedChunk, Shared, SharedArray, SharedSliceMut, Workgroup, WorkgroupPool,
};
pub use device::{Device, DeviceBackend};
pub use error::{BufferError, DeviceError, LaunchError};
pub use gpu::{GpuArg, GpuDevice, PreparedDispatch, PreparedPart};
pub use grid::{Dim3, Grid, Invocation};
pub use onekernel_abi::{launch_block, CpuStrategy, KernelInfo, ParamInfo, ParamKind, ScalarType};

/// The wgpu version this runtime is built against, for code that uses
/// [`Device::wgpu`].
pub use wgpu;
