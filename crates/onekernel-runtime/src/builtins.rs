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
/// `E` one of `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64` or a glam
/// vector (not `Vec3`, `IVec3`, `UVec3`: use `Vec3A` or `Vec4`), or
/// `[AtomicU32; N]` / `[AtomicI32; N]`; `N`, `C` and `R` are literals or
/// constants. Together at most 16384 bytes, unless the kernel declares
/// more (`#[kernel(.., max_shared_bytes = 32768)]`).
/// Its contents start as zeros on the GPU and the CPU alike.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn shared<T>() -> &'static mut T {
    outside_kernel("shared")
}

/// Reads one element of a shared array as a value that is the same for
/// every thread of the block: WGSL's `workgroupUniformLoad`. Every thread
/// of the block waits (as at [`workgroup_barrier`]), then all read the
/// element, then all wait again, so no thread writes it before all have
/// read it.
///
/// The value is *uniform*: unlike a plain `tile[i]`, it may decide a
/// condition or a loop bound around a barrier. The index must be uniform
/// too (constants, [`block_id`], sizes, scalar parameters), and like a
/// barrier the call must be reached by every thread (docs/cooperation.md).
///
/// ```
/// use onekernel::prelude::*;
///
/// /// Thread 0 picks how many rounds the block runs; all run that many.
/// #[kernel(workgroup_size = 64)]
/// fn rounds(counts: &[u32], out: &mut [u32]) {
///     let n = shared::<[u32; 1]>();
///     let t = thread_id().x;
///     if t == 0 {
///         n[0] = counts[block_id().x];
///     }
///     let rounds = workgroup_uniform_load(&n[0]);
///     let mut acc = 0;
///     for _ in 0..rounds {
///         acc += 1;
///         workgroup_barrier();
///     }
///     out[global_id().x] = acc;
/// }
///
/// fn main() {
///     let device = Device::cpu();
///     let counts = Buffer::from_slice(&device, &[3u32, 5]).unwrap();
///     let mut out = Buffer::<u32>::zeroed(&device, 128).unwrap();
///     rounds::launch(&device, 128, &counts, &mut out).unwrap();
///     let out = out.read().unwrap();
///     assert_eq!((out[0], out[127]), (3, 5));
/// }
/// ```
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn workgroup_uniform_load<T: Copy>(element: &T) -> T {
    let _ = element;
    outside_kernel("workgroup_uniform_load")
}

/// Invocations per subgroup: a power of two from 4 to 128 on GPUs (32 on
/// NVIDIA, 32 or 64 on AMD, 8 to 32 on Intel and lavapipe; see
/// `Device::subgroup_sizes`), and exactly 32 on the CPU executor. The same
/// for every thread of a launch. WGSL's `subgroup_size`, CUDA's `warpSize`.
///
/// Subgroups are consecutive threads of a block by linear index
/// (`thread_id().x` fastest). A kernel that uses any subgroup function
/// needs the device's `SUBGROUP` feature: on a GPU without it, its launch
/// fails with `LaunchError::MissingFeature` naming the kernel.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_size() -> u32 {
    outside_kernel("subgroup_size")
}

/// This thread's lane in its subgroup, from 0 to `subgroup_size() - 1`.
/// WGSL's `subgroup_invocation_id`, CUDA's `laneid`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_invocation_id() -> u32 {
    outside_kernel("subgroup_invocation_id")
}

/// This thread's subgroup's index in its block, from 0 to
/// `num_subgroups() - 1`: with subgroups of consecutive threads,
/// `subgroup_id() * subgroup_size() + subgroup_invocation_id()` is the
/// thread's linear index in the block. WGSL's `subgroup_id`, CUDA's
/// `threadIdx.x / warpSize` (for a 1-D block).
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_id() -> u32 {
    outside_kernel("subgroup_id")
}

/// Subgroups per block: the block's threads divided by `subgroup_size()`,
/// rounded up (the last subgroup of a block whose size is not a multiple of
/// it is partial). The same for every thread of a block, so a condition on
/// it may guard a barrier. WGSL's `num_subgroups`.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn num_subgroups() -> u32 {
    outside_kernel("num_subgroups")
}

/// The sum of `value` over the threads of this thread's subgroup, returned
/// to each: WGSL's `subgroupAdd`. `T` is `f32`, `i32`, `u32` or `usize`;
/// integers wrap. Floats are added in an order the GPU does not specify
/// (the CPU executor adds in lane order), so a float sum may differ from a
/// sequential one by rounding.
///
/// Like a barrier, it must be reached by every thread of the block:
/// `#[kernel]` rejects it under a condition that depends on the thread.
/// Compute the value under the condition instead:
/// `subgroup_add(if i < n { x[i] } else { 0.0 })`.
///
/// ```
/// use onekernel::prelude::*;
///
/// /// Per-block sums: a subgroup sum, then one value per subgroup through
/// /// shared memory (correct for any subgroup size).
/// #[kernel(workgroup_size = 256)]
/// fn block_sums(x: &[u32], sums: &mut [u32]) {
///     let partial = shared::<[u32; 256]>();
///     let i = global_id().x;
///     let t = thread_id().x;
///     let s = subgroup_add(if i < x.len() { x[i] } else { 0 });
///     if subgroup_invocation_id() == 0 {
///         partial[t / subgroup_size() as usize] = s;
///     }
///     workgroup_barrier();
///     if t == 0 {
///         let mut total = 0;
///         for k in 0..256 / subgroup_size() as usize {
///             total += partial[k];
///         }
///         sums[block_id().x] = total;
///     }
/// }
///
/// fn main() {
///     let device = Device::cpu();
///     let x = Buffer::from_slice(&device, &vec![1u32; 1000]).unwrap();
///     let mut sums = Buffer::<u32>::zeroed(&device, 4).unwrap();
///     block_sums::launch(&device, 1000, &x, &mut sums).unwrap();
///     assert_eq!(sums.read().unwrap(), [256, 256, 256, 232]);
/// }
/// ```
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_add<T: Copy>(value: T) -> T {
    let _ = value;
    outside_kernel("subgroup_add")
}

/// The minimum of `value` over the subgroup: WGSL's `subgroupMin`. See
/// [`subgroup_add`] for the types and the rules.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_min<T: Copy>(value: T) -> T {
    let _ = value;
    outside_kernel("subgroup_min")
}

/// The maximum of `value` over the subgroup: WGSL's `subgroupMax`. See
/// [`subgroup_add`] for the types and the rules.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_max<T: Copy>(value: T) -> T {
    let _ = value;
    outside_kernel("subgroup_max")
}

/// `value` of lane `lane` of the subgroup, returned to every thread:
/// WGSL's `subgroupBroadcast`. `lane` is a constant (a literal or a
/// `const`), as WGSL requires; for a lane computed at run time use
/// [`subgroup_shuffle`]. A lane past the subgroup's end gives an
/// unspecified value on a GPU and the thread's own `value` on the CPU
/// executor.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_broadcast<T: Copy>(value: T, lane: u32) -> T {
    let _ = (value, lane);
    outside_kernel("subgroup_broadcast")
}

/// `value` of lane `lane` (which may differ between threads): WGSL's
/// `subgroupShuffle`, CUDA's `__shfl_sync`. A lane past the subgroup's end
/// gives an unspecified value on a GPU and the thread's own `value` on the
/// CPU executor.
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_shuffle<T: Copy>(value: T, lane: u32) -> T {
    let _ = (value, lane);
    outside_kernel("subgroup_shuffle")
}

/// `value` of lane `subgroup_invocation_id() ^ mask`: WGSL's
/// `subgroupShuffleXor`, CUDA's `__shfl_xor_sync`. With `mask` running
/// over `subgroup_size() / 2, .., 2, 1` and adding, every lane ends with
/// the subgroup's total (a butterfly reduction).
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_shuffle_xor<T: Copy>(value: T, mask: u32) -> T {
    let _ = (value, mask);
    outside_kernel("subgroup_shuffle_xor")
}

/// `value` of lane `subgroup_invocation_id() + delta`: WGSL's
/// `subgroupShuffleDown`, CUDA's `__shfl_down_sync`. Past the subgroup's
/// end the value is unspecified on a GPU and the thread's own `value` on
/// the CPU executor (as CUDA's).
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_shuffle_down<T: Copy>(value: T, delta: u32) -> T {
    let _ = (value, delta);
    outside_kernel("subgroup_shuffle_down")
}

/// A bit mask of the lanes whose `predicate` is true, as WGSL's
/// `subgroupBallot` returns it: a [`UVec4`](crate::glam::UVec4) of 128 bits, lane
/// `i` at bit `i % 32` of word `i / 32` (`x` holds lanes 0 to 31, `y` lanes
/// 32 to 63, ...). On the CPU executor, whose subgroups have 32 lanes, and
/// on GPUs with subgroups of at most 32 the mask is all in `x`, and `y`,
/// `z`, `w` are 0. To count the threads of the subgroup for which `p`
/// holds, whatever its size, add the words' `count_ones()` (or write
/// `subgroup_add(p as u32)`).
///
/// # Panics
/// Outside a `#[kernel]` function.
pub fn subgroup_ballot(predicate: bool) -> crate::glam::UVec4 {
    let _ = predicate;
    outside_kernel("subgroup_ballot")
}

#[cfg(test)]
mod tests {
    #[test]
    fn builtins_panic_outside_kernels() {
        let r = std::panic::catch_unwind(super::global_id);
        assert!(r.is_err());
    }
}
