//! The functions a kernel calls to find its place in the grid, to share
//! memory with its workgroup and to wait for it.
//!
//! They are ordinary, documented items (so an editor shows their docs and
//! `use onekernel::prelude::*` brings them into scope), but they only mean
//! something inside a `#[kernel]` function: `#[kernel]` recognises each call
//! and compiles it to the GPU's builtin (WGSL's `global_invocation_id`,
//! `workgroupBarrier()`, `var<workgroup>`, ...) and, on the CPU executor, to
//! the current invocation's value. Called anywhere else they panic.
//!
//! The names follow CUDA and Mojo: a *block* is WGSL's workgroup, a
//! *thread* one invocation. See docs/threads-blocks-grids.md for pictures.

use crate::Dim3;

#[cold]
#[track_caller]
fn outside_kernel(name: &str) -> ! {
    panic!("`{name}()` can only be called inside a `#[kernel]` function")
}

/// This thread's position in the whole grid:
/// `block_id() * block_dim() + thread_id()`, per axis. WGSL's
/// `global_invocation_id`, CUDA's `blockIdx * blockDim + threadIdx`.
///
/// ```
/// use onekernel::prelude::*;
///
/// #[kernel(workgroup_size = 64)]
/// fn fill_with_index(out: &mut [u32]) {
///     let i = global_id().x;
///     if i < out.len() {
///         out[i] = i as u32;
///     }
/// }
///
/// fn main() {
///     let device = Device::cpu();
///     let mut out = Buffer::<u32>::zeroed(&device, 100).unwrap();
///     fill_with_index::launch(&device, 100, &mut out).unwrap();
///     assert_eq!(out.read().unwrap()[99], 99);
/// }
/// ```
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn global_id() -> Dim3 {
    outside_kernel("global_id")
}

/// This thread's position in its block (workgroup), from 0 to
/// `block_dim() - 1` per axis. WGSL's `local_invocation_id`, CUDA's
/// `threadIdx`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn thread_id() -> Dim3 {
    outside_kernel("thread_id")
}

/// This block's position in the grid. WGSL's `workgroup_id`, CUDA's
/// `blockIdx`. The same for every thread of a block, so a condition on it
/// may guard a barrier.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn block_id() -> Dim3 {
    outside_kernel("block_id")
}

/// Threads per block: the kernel's `workgroup_size`. WGSL's
/// `@workgroup_size`, CUDA's `blockDim`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn block_dim() -> Dim3 {
    outside_kernel("block_dim")
}

/// Blocks in the grid. WGSL's `num_workgroups` (of the logical grid, also
/// when the runtime folds a long 1-D grid), CUDA's `gridDim`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn grid_dim() -> Dim3 {
    outside_kernel("grid_dim")
}

/// Waits until every thread of the block has reached this barrier, and
/// makes the block's shared-memory writes before it visible to its reads
/// after it. WGSL's `workgroupBarrier()`, CUDA's `__syncthreads()`.
///
/// Every thread of the block must reach each barrier: `#[kernel]` rejects a
/// barrier in control flow that depends on the thread (see
/// docs/cooperation.md).
///
/// ```
/// use onekernel::prelude::*;
///
/// /// Reverses each block of 64 elements.
/// #[kernel(workgroup_size = 64)]
/// fn reverse_blocks(data: &mut [f32]) {
///     let tile = shared::<[f32; 64]>();
///     let t = thread_id().x;
///     let i = global_id().x;
///     tile[t] = data[i];
///     workgroup_barrier();
///     data[i] = tile[63 - t];
/// }
///
/// fn main() {
///     let device = Device::cpu();
///     let v: Vec<f32> = (0..128).map(|i| i as f32).collect();
///     let mut data = Buffer::from_slice(&device, &v).unwrap();
///     reverse_blocks::launch(&device, 128, &mut data).unwrap();
///     assert_eq!(data.read().unwrap()[0], 63.0);
/// }
/// ```
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn workgroup_barrier() {
    outside_kernel("workgroup_barrier")
}

/// Like [`workgroup_barrier`], for writes to storage buffers: every thread
/// of the block waits, and its buffer writes before the barrier are visible
/// to the block's reads after it. WGSL's `storageBarrier()`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn storage_barrier() {
    outside_kernel("storage_barrier")
}

/// Declares an array in the block's shared memory (WGSL's
/// `var<workgroup>`, CUDA's `__shared__`): `let tile = shared::<[f32; 256]>();`
/// at the top of the kernel's body. Every thread of a block sees the same
/// array; each block has its own. `T` is `[E; N]` or `[[E; C]; R]` with
/// `E` one of `f32`, `i32`, `u32`, or `[AtomicU32; N]` / `[AtomicI32; N]`.
/// Its contents start as zeros on the GPU and the CPU alike.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn shared<T>() -> &'static mut T {
    outside_kernel("shared")
}

#[cfg(test)]
mod tests {
    #[test]
    fn builtins_panic_outside_kernels() {
        let r = std::panic::catch_unwind(super::global_id);
        assert!(r.is_err());
    }
}
