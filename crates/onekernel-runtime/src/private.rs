//! What the code `#[kernel]` generates calls. Not part of the API: nothing
//! here is covered by semver, and user code must not name it (the facade
//! re-exports it as `onekernel::__private`, hidden, for the generated code
//! only).
//!
//! A kernel `k` expands to a module `k` holding `static KERNEL:
//! KernelInfo`, `cpu_body` (the kernel's own body, run per invocation by
//! the CPU executor) and `launch`. The items used, and why:
//!
//! | item | used by | why |
//! |---|---|---|
//! | [`KernelInfo`], [`ParamInfo`], [`ParamKind`], [`ScalarType`], [`DataType`], [`CpuPlan`], [`ParamsBinding`], [`Features`], [`CheckSite`], [`CheckKind`], [`Cow`] | `static KERNEL` | the compiled kernel, written as a `static` with `Cow::Borrowed` fields |
//! | [`Device`], [`Grid`], [`BufferArg`], [`LaunchError`] | `launch`'s signature | the typed launch function users call; buffer parameters are `&impl BufferArg<T>` so that passing host data gets a note on how to upload it |
//! | [`backend`], [`DeviceBackend`] | `launch` | picks the GPU or the CPU path |
//! | [`Consts`], [`ConstParam`], [`ConstType`], [`ArrayShape`], [`Dim`] | `static KERNEL` | the kernel's WGSL `override`s: const parameters and constants of its Rust scope, and the arrays they size |
//! | [`specialise`], [`const_value`] ([`ConstArg`]), [`const_value_int`] ([`ConstInt`]) | `launch` of a kernel with overrides | its first statement: the kernel's specialisation for the values (`const_value::<u32>(N)`, `const_value::<usize>(BLOCK)`: rustc checks a constant of the scope against the type the kernel gave it; `const_value_int(BLOCK)` where the kernel's uses leave an integer's type open), which the rest of the launch uses in place of `&KERNEL` |
//! | [`gpu_arg`], [`gpu_arg_mut`], [`GpuArg`] | `launch`, GPU path | checks a buffer against its parameter (device, kind, type, size) and borrows its wgpu buffer; `gpu_arg_mut` takes `&mut Buffer` so the borrow checker sees the write |
//! | [`ScalarArg`] | `launch`, GPU path | a scalar argument with its type and bytes (`ScalarArg::from(v)` for any [`Element`], including the structs below), checked against the parameter's |
//! | [`Element`], [`DataType`], [`bytemuck`] | user structs | a struct a kernel uses as a buffer element or scalar gets `#[derive(bytemuck::Pod, bytemuck::Zeroable)]` (through this path) and `impl Element { const TYPE: DataType = DataType::Struct { .. } }`; the runtime checks the impl against the type's size and alignment |
//! | [`GpuDevice::dispatch_with`], [`Device::launch_checks`], [`LaunchChecks`] | `launch`, GPU path | records and submits the launch (checked, with the handle's loop budget, on a checked handle) |
//! | [`cpu_slice`], [`cpu_shared`], [`cpu_atomics`] | `launch`, CPU path | the same checks, then the CPU view of a `&[T]`, `&mut [T]` or `&[AtomicU32]`/`&[AtomicI32]` parameter |
//! | [`CpuKernel`], [`CpuDevice::launch`], [`SharedSliceMut`], [`AtomicElement`], [`Workgroup`] | `launch`, CPU path | the kernel's arguments as a struct (`&[T]`, atomics, scalars) with one `impl CpuKernel` whose methods call the bodies the plan names (`cpu_body`, `cpu_chunk`, `cpu_phases`); the `&mut [T]` outputs are moved in as a tuple, and the runtime picks the executor from `KERNEL.cpu` (a [`CpuPlan`]) and alone makes a chunk's windows ([`OwnedChunk`]; no `unsafe` in generated code) |
//! | [`Invocation`], [`Builtin`], [`builtin_value`], [`BuiltinValue`], [`FromBuiltin`], [`Dim3`] | `cpu_body` | the invocation's builtins: `global_id()` is `builtin_value(global_id, __invocation.get(Builtin::GlobalId))` |
//! | [`half`], [`glam`], [`F16Vec2`], [`F16Vec4`], [`tile`] | `cpu_body` | the types of locals (`let v: __private::glam::Vec4`), `f16` literals (`__private::half::f16::from_bits(..)`), swizzles through glam's traits (`__private::glam::Vec4Swizzles::xy(v)`), matrix tiles (`__private::tile::MatrixA<16, 16>`) |
//! | [`OutputSlice`] (implemented by [`SharedSliceMut`] and [`OwnedChunk`]) | `cpu_body` | a `&mut [T]` parameter becomes `&impl OutputSlice<T>`; `out[i]` becomes `out.load(i)`, `out[i] = v` becomes `out.store(i, v)` |
//! | [`Workgroup`], [`Shared`], [`SharedArray`], [`Barrier`] | cooperative `cpu_body` | `shared::<[T; N]>()` is `__workgroup.shared::<[T; N]>(offset, "name")`, a barrier is `__workgroup.barrier(site).await` |
//! | [`SubgroupCall`], [`SubgroupCollective`] (the ABI's), [`SubgroupValue`], [`SubgroupBallot`], [`CPU_SUBGROUP_SIZE`] | cooperative `cpu_body` | `subgroup_add(v)` is `__workgroup.subgroup(&__invocation, site, SubgroupCollective::Add, v, 0).await`; `subgroup_ballot(p)` is `__workgroup.subgroup_ballot(&__invocation, site, p).await` (a `UVec4`) |
//!
//! The launch a kernel `fn k(a: &[f32], out: &mut [f32], s: f32)` whose
//! invocations write their own element expands to, in substance:
//!
//! ```text
//! let grid = grid.into();
//! match __private::backend(device) {
//!     __private::DeviceBackend::Gpu(gpu) => {
//!         let args = [__private::gpu_arg(a, &KERNEL, 0, gpu)?, __private::gpu_arg_mut(out, &KERNEL, 1, gpu)?];
//!         gpu.dispatch_with(&KERNEL, grid, &args, &[__private::ScalarArg::from(s)], device.launch_checks())
//!     }
//!     __private::DeviceBackend::Cpu(cpu) => {
//!         let a = __private::cpu_slice(a, &KERNEL, 0, cpu)?;
//!         let out = __private::cpu_shared(out, &KERNEL, 1, cpu)?;
//!         cpu.launch(&KERNEL, grid, &CpuArgs { a, s, .. }, (out,))
//!     }
//! }
//! // with
//! impl<'a> __private::CpuKernel for CpuArgs<'a> {
//!     type Outputs = (__private::SharedSliceMut<'a, f32>,);
//!     type PhaseState = ();
//!     fn invocation(&self, invocation: &Invocation, (out,): &Self::Outputs) {
//!         cpu_body(invocation, self.a, out, self.s)
//!     }
//!     fn owned_invocation(&self, invocation: &Invocation, (out,): &(OwnedChunk<'_, f32>,)) {
//!         cpu_body(invocation, self.a, out, self.s)
//!     }
//! }
//! ```
//!
//! The runtime's own tests also use [`GpuDevice::prepare`] (with
//! [`PreparedDispatch`], [`PreparedPart`]: how a launch is split into
//! dispatches), [`GpuDevice::compiled_kernels`],
//! [`GpuDevice::staging_buffers_created`] and
//! [`GpuDevice::time_on_wall_clock`], and the CPU executors one by one
//! ([`CpuDevice::execute`], [`CpuDevice::can_partition`],
//! [`CpuDevice::execute_partitioned`], [`Chunk`], [`Outputs`],
//! [`CpuDevice::workgroups`], [`CpuDevice::execute_cooperative`],
//! [`WorkgroupPool`]: what [`CpuDevice::launch`] chooses between); nothing
//! generated does.

pub use crate::arg::BufferArg;
pub use crate::buffer::{AtomicElement, Buffer, Element};
pub use crate::cpu::{
    agree, agreed, per_invocation, Barrier, Chunk, CpuDevice, CpuKernel, OutputSlice, Outputs, OwnedChunk, Shared,
    SharedArray, SharedSliceMut, SubgroupBallot, SubgroupCall, SubgroupCollective, SubgroupValue, WindowToken,
    Workgroup, WorkgroupPool, CPU_SUBGROUP_SIZE,
};
pub use crate::debug::{debug_print, helper_print, HelperScope, PanicSite};
pub use crate::device::{backend, Device, DeviceBackend};
pub use crate::error::LaunchError;
pub use crate::f16vec::{F16Vec2, F16Vec4};
pub use crate::gpu::{GpuArg, GpuDevice, LaunchChecks, PreparedDispatch, PreparedPart};
pub use crate::grid::{BuiltinValue, Dim3, FromBuiltin, Grid, Invocation};
pub use crate::num::{Float, Int, Num};
pub use crate::plan::ScalarArg;
pub use crate::specialise::{const_value, const_value_int, specialise, ConstArg, ConstInt};
pub use crate::tile;
/// The `bytemuck` whose `Pod` and `Zeroable` [`Element`] requires: the
/// macro derives them for user structs through this path
/// (`#[derive(::onekernel::__private::bytemuck::Pod, ..)]` with
/// `#[bytemuck(crate = "::onekernel::__private::bytemuck")]`).
pub use bytemuck;
pub use glam;
pub use half;
pub use onekernel_abi::{
    ArrayShape, Builtin, CheckKind, CheckSite, ConstParam, ConstType, Consts, CpuPlan, DataType, DebugArg, DebugKind,
    DebugSite, Dim, Features, KernelInfo, Module, ModuleKey, ParamInfo, ParamKind, ParamsBinding, PrintField,
    PrintType, ScalarType, TileShape,
};
pub use std::borrow::Cow;

/// The value of a builtin in the CPU body: `item` is the user's path to
/// the documented builtin (`global_id`), named so that the user's import
/// resolves and an editor finds its docs, and whose return type is the
/// value's; `value` is [`Invocation::get`] of its [`Builtin`].
///
/// # Panics
/// If `value` is not of `item`'s type: the compiler and the runtime
/// disagree on [`Builtin::ty`], an internal error (a test checks every
/// builtin).
#[inline(always)]
#[track_caller]
pub fn builtin_value<F: FnOnce() -> T, T: FromBuiltin>(item: F, value: BuiltinValue) -> T {
    let _ = item;
    match T::from_builtin(value) {
        Some(v) => v,
        None => panic!("internal error: a builtin's value is a {:?}, not the type its function returns", value.ty()),
    }
}

/// `buffer` as the `&[T]` argument `param` of a GPU launch of `kernel`,
/// after checking its device, the parameter's kind and type, and the
/// device's storage binding limit.
#[inline]
pub fn gpu_arg<'b, T: Element>(
    buffer: &'b Buffer<T>,
    kernel: &'static KernelInfo,
    param: usize,
    gpu: &GpuDevice,
) -> Result<GpuArg<'b>, LaunchError> {
    buffer.gpu_arg(kernel, param, gpu)
}

/// `buffer` as the `&mut [T]` (or atomic) argument `param` of a GPU launch
/// of `kernel`. Takes `&mut` so that the borrow checker sees the kernel
/// writing to it.
#[inline]
pub fn gpu_arg_mut<'b, T: Element>(
    buffer: &'b mut Buffer<T>,
    kernel: &'static KernelInfo,
    param: usize,
    gpu: &GpuDevice,
) -> Result<GpuArg<'b>, LaunchError> {
    buffer.gpu_arg_mut(kernel, param, gpu)
}

/// The data of `buffer` as the `&[T]` argument `param` of a CPU launch.
#[inline]
pub fn cpu_slice<'b, T: Element>(
    buffer: &'b Buffer<T>,
    kernel: &'static KernelInfo,
    param: usize,
    cpu: &CpuDevice,
) -> Result<&'b [T], LaunchError> {
    buffer.cpu_slice(kernel, param, cpu)
}

/// `buffer` as the `&mut [T]` argument `param` of a CPU launch: a view all
/// invocations share (relaxed atomic accesses).
#[inline]
pub fn cpu_shared<'b, T: Element>(
    buffer: &'b mut Buffer<T>,
    kernel: &'static KernelInfo,
    param: usize,
    cpu: &CpuDevice,
) -> Result<SharedSliceMut<'b, T>, LaunchError> {
    buffer.cpu_shared(kernel, param, cpu)
}

/// `buffer` as the `&[AtomicU32]` / `&[AtomicI32]` argument `param` of a
/// CPU launch.
#[inline]
pub fn cpu_atomics<'b, T: AtomicElement>(
    buffer: &'b mut Buffer<T>,
    kernel: &'static KernelInfo,
    param: usize,
    cpu: &CpuDevice,
) -> Result<&'b [T::Atomic], LaunchError> {
    buffer.cpu_atomics(kernel, param, cpu)
}

/// The value of a builtin in the CPU body: `item` is the user's path to
/// the documented builtin (`global_id`), named so that the user's
/// import resolves and an editor finds its docs; `value` is what it
/// stands for in this invocation.
#[inline(always)]
pub fn builtin<F, T>(item: F, value: T) -> T {
    let _ = item;
    value
}

/// [`builtin`] for a generic subgroup function of one value
/// (`subgroup_add`): the item's type parameter is the value's type.
#[inline(always)]
pub fn subgroup_operand<F: FnOnce(T) -> T, T>(item: F, value: T) -> T {
    let _ = item;
    value
}

/// [`builtin`] for `workgroup_uniform_load`: the item's type
/// parameter is the element's type.
#[inline(always)]
pub fn uniform_load_value<F: FnOnce(&T) -> T, T>(item: F, value: T) -> T {
    let _ = item;
    value
}

/// [`builtin`] for a subgroup function of a value and a lane, mask or
/// distance (`subgroup_shuffle_xor`).
#[inline(always)]
pub fn subgroup_operands<F: FnOnce(T, u32) -> T, T>(item: F, value: T, operand: u32) -> (T, u32) {
    let _ = item;
    (value, operand)
}
