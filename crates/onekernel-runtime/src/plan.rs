//! Launch planning shared by the GPU and the CPU path: checking the
//! workgroup and the grid against a device's limits, and folding a too-long
//! 1-D grid into 2-D.
//!
//! Both paths run the same checks (the CPU with the WebGPU default limits)
//! so that a launch that fails on one fails the same way on the other.

use crate::buffer::Element;
use crate::error::LaunchError;
use crate::grid::{Dim3, Grid};
use onekernel_abi::{launch_block, DataType, KernelInfo, ScalarType};

/// The limits a launch is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchLimits {
    /// `max_compute_invocations_per_workgroup`.
    pub max_invocations: u32,
    /// `max_compute_workgroup_size_{x,y,z}`.
    pub max_size: [u32; 3],
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups_per_dimension: u32,
    /// `max_compute_workgroup_storage_size`, in bytes.
    pub max_shared_bytes: u32,
}

impl LaunchLimits {
    /// The limits of a wgpu device.
    pub fn from_wgpu(l: &wgpu::Limits) -> LaunchLimits {
        LaunchLimits {
            max_invocations: l.max_compute_invocations_per_workgroup,
            max_size: [l.max_compute_workgroup_size_x, l.max_compute_workgroup_size_y, l.max_compute_workgroup_size_z],
            max_groups_per_dimension: l.max_compute_workgroups_per_dimension,
            max_shared_bytes: l.max_compute_workgroup_storage_size,
        }
    }

    /// The limits the CPU executor enforces: WebGPU's defaults (what every
    /// GPU supports), except that the invocation limit is what the kernel
    /// declares, since a kernel that asks for more is only launched on
    /// devices that grant it; the same for shared memory (the compiler
    /// checked the kernel's arrays against what it declares).
    pub fn cpu(kernel: &KernelInfo) -> LaunchLimits {
        let d = wgpu::Limits::default();
        LaunchLimits {
            max_invocations: kernel.max_workgroup_invocations.max(d.max_compute_invocations_per_workgroup),
            max_size: [
                d.max_compute_workgroup_size_x.max(kernel.max_workgroup_invocations),
                d.max_compute_workgroup_size_y.max(kernel.max_workgroup_invocations),
                d.max_compute_workgroup_size_z,
            ],
            max_groups_per_dimension: d.max_compute_workgroups_per_dimension,
            // A specialisation whose parameters size shared arrays gets
            // what the kernel declares (the compiler could not check them).
            max_shared_bytes: if kernel.consts.arrays.iter().any(|a| a.shared) {
                d.max_compute_workgroup_storage_size.max(kernel.consts.max_shared_bytes)
            } else {
                d.max_compute_workgroup_storage_size.max(kernel.workgroup_memory_words.saturating_mul(4))
            },
        }
    }
}

/// One physical dispatch of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DispatchPart {
    /// Physical dispatch size.
    pub workgroups: [u32; 3],
    /// Linear index of the first logical workgroup of this dispatch
    /// (non-zero only for the tail dispatch of a folded grid).
    pub block_offset: u32,
}

/// A checked, non-empty launch.
///
/// A grid within the limits is one dispatch of exactly the logical groups.
/// A folded 1-D grid of `G` groups is one dispatch `(x, G / x, 1)` when some
/// `x <= max` divides `G` with `G / x <= max` (found by a short search:
/// true of every power of two), else a main dispatch `(max, G / max, 1)`
/// plus a tail dispatch `(G % max, 1, 1)` starting at logical workgroup
/// `max * (G / max)`. Either way every dispatched workgroup is a real one,
/// so the kernel needs no guard; one dispatch also avoids the barrier wgpu
/// puts between two dispatches writing the same buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    /// Logical number of workgroups (what the kernel sees as `grid_dim`).
    pub groups: [u32; 3],
    /// Whether a 1-D grid was folded into 2-D.
    pub folded: bool,
    /// The dispatches, in order: the first is always present.
    pub parts: [Option<DispatchPart>; 2],
}

impl LaunchPlan {
    /// The dispatches of this launch, in order.
    pub fn parts(&self) -> impl Iterator<Item = &DispatchPart> {
        self.parts.iter().flatten()
    }

    /// The 16-byte launch description at the start of the uniform block for
    /// one dispatch `part`: `grid_dim: vec3<u32>`, then `block_offset: u32`.
    pub fn launch_block(&self, part: &DispatchPart) -> [u8; launch_block::SIZE as usize] {
        let mut block = [0u8; launch_block::SIZE as usize];
        let grid = launch_block::GRID_DIM as usize;
        let offset = launch_block::BLOCK_OFFSET as usize;
        // WebGPU's host-shareable memory is little-endian.
        for (i, n) in self.groups.iter().enumerate() {
            block[grid + 4 * i..grid + 4 * i + 4].copy_from_slice(&n.to_le_bytes());
        }
        block[offset..offset + 4].copy_from_slice(&part.block_offset.to_le_bytes());
        block
    }

    /// Logical number of workgroups as a `Dim3`.
    pub fn groups_dim(&self) -> Dim3 {
        Dim3::new(self.groups[0] as usize, self.groups[1] as usize, self.groups[2] as usize)
    }
}

/// Checks that the kernel's workgroup fits `limits`.
pub(crate) fn check_workgroup(kernel: &'static KernelInfo, limits: &LaunchLimits) -> Result<(), LaunchError> {
    let invocations = kernel.workgroup_invocations();
    if invocations == 0 {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!("workgroup size {:?} has a zero axis", kernel.workgroup_size),
        });
    }
    if invocations > u64::from(limits.max_invocations) {
        if let Some((arg, names)) = crate::specialise::sized_by(kernel, false) {
            return Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg,
                problem: format!(
                    "a workgroup of {invocations} invocations from {names} exceeds the device's {}",
                    limits.max_invocations
                ),
            });
        }
        return Err(LaunchError::WorkgroupTooLarge {
            kernel: &kernel.name,
            invocations,
            max: u64::from(limits.max_invocations),
        });
    }
    let shared = u64::from(kernel.workgroup_memory_words) * 4;
    if shared > u64::from(limits.max_shared_bytes) {
        if let Some((arg, names)) = crate::specialise::sized_by(kernel, true) {
            return Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg,
                problem: format!(
                    "{shared} bytes of shared memory from {names} exceed the device's {} bytes per workgroup",
                    limits.max_shared_bytes
                ),
            });
        }
        return Err(LaunchError::SharedMemoryTooLarge {
            kernel: &kernel.name,
            bytes: shared,
            max: u64::from(limits.max_shared_bytes),
        });
    }
    for (i, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
        if kernel.workgroup_size[i] > limits.max_size[i] {
            if let Some(arg) = kernel.consts.workgroup_size[i].and_then(|p| kernel.consts.params.get(usize::from(p))) {
                return Err(LaunchError::InvalidArgument {
                    kernel: &kernel.name,
                    arg: &arg.name,
                    problem: format!(
                        "`{}` = {} is the workgroup size in {axis}, over the device's {}",
                        arg.name, kernel.workgroup_size[i], limits.max_size[i]
                    ),
                });
            }
            return Err(LaunchError::WorkgroupAxisTooLarge {
                kernel: &kernel.name,
                axis,
                size: kernel.workgroup_size[i],
                max: limits.max_size[i],
            });
        }
    }
    Ok(())
}

/// Checks the workgroup and the grid, and decides the physical dispatch.
/// `Ok(None)` means the grid is empty: the launch does nothing.
pub(crate) fn plan(
    kernel: &'static KernelInfo,
    grid: Grid,
    limits: &LaunchLimits,
) -> Result<Option<LaunchPlan>, LaunchError> {
    check_workgroup(kernel, limits)?;
    let groups = grid.groups(kernel);
    if groups.is_empty() {
        return Ok(None);
    }
    let max = limits.max_groups_per_dimension as usize;
    if groups.x <= max && groups.y <= max && groups.z <= max {
        let g = [groups.x as u32, groups.y as u32, groups.z as u32];
        let part = DispatchPart { workgroups: g, block_offset: 0 };
        return Ok(Some(LaunchPlan { groups: g, folded: false, parts: [Some(part), None] }));
    }
    if groups.y != 1 || groups.z != 1 {
        return Err(LaunchError::GridTooLarge {
            kernel: &kernel.name,
            groups,
            max_per_dimension: limits.max_groups_per_dimension,
        });
    }
    if groups.x > u32::MAX as usize {
        return Err(LaunchError::FoldedGridTooLarge {
            kernel: &kernel.name,
            groups: groups.x,
            max_per_dimension: limits.max_groups_per_dimension,
        });
    }
    // Fold exactly; the kernel's prologue linearises
    // `block_offset + x + width * y`.
    if let Some(width) = exact_row_width(groups.x, max) {
        let part = DispatchPart { workgroups: [width as u32, (groups.x / width) as u32, 1], block_offset: 0 };
        return Ok(Some(LaunchPlan { groups: [groups.x as u32, 1, 1], folded: true, parts: [Some(part), None] }));
    }
    // Else full rows of `max` groups, then the remainder as a second 1-row
    // dispatch.
    let rows = groups.x / max;
    let tail = groups.x % max;
    if rows > max || groups.x > u32::MAX as usize {
        return Err(LaunchError::FoldedGridTooLarge {
            kernel: &kernel.name,
            groups: groups.x,
            max_per_dimension: limits.max_groups_per_dimension,
        });
    }
    let main = DispatchPart { workgroups: [max as u32, rows as u32, 1], block_offset: 0 };
    let tail = (tail != 0).then(|| DispatchPart { workgroups: [tail as u32, 1, 1], block_offset: (max * rows) as u32 });
    Ok(Some(LaunchPlan { groups: [groups.x as u32, 1, 1], folded: true, parts: [Some(main), tail] }))
}

/// A row width `w <= max` that divides `groups` into at most `max` rows, if
/// one is found among the first few candidates (the search is bounded so
/// that planning stays cheap; powers of two always succeed at once).
fn exact_row_width(groups: usize, max: usize) -> Option<usize> {
    if groups > max * max {
        return None;
    }
    let narrowest = groups.div_ceil(max);
    (narrowest..=max.min(narrowest + 4096)).find(|w| groups.is_multiple_of(*w))
}

/// A scalar argument of a launch: its kernel type and its bytes, as the
/// uniform block holds them.
///
/// Made with `From` from any [`Element`] (`f32`, `u64`, `f16`, `Vec4`, a
/// `#[kernel]` struct, ...) or from glam's 12-byte `Vec3`, `IVec3` and
/// `UVec3` (fine as scalars: a `vec3<T>` in a uniform block takes 12
/// bytes); [`ScalarArg::from_pod`] says the same for a borrowed value. The
/// launch checks the type against the parameter's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarArg {
    ty: DataType,
    /// `std::any::type_name` of the Rust value, for messages.
    rust: &'static str,
    bytes: ScalarBytes,
}

/// The bytes of a scalar: inline up to the largest built-in type (a
/// 4-lane vector of 8-byte lanes), on the heap for larger structs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ScalarBytes {
    Inline { len: u8, bytes: [u8; 32] },
    Heap(Box<[u8]>),
}

impl ScalarBytes {
    fn new(b: &[u8]) -> ScalarBytes {
        match u8::try_from(b.len()) {
            Ok(len) if b.len() <= 32 => {
                let mut bytes = [0u8; 32];
                bytes[..b.len()].copy_from_slice(b);
                ScalarBytes::Inline { len, bytes }
            }
            _ => ScalarBytes::Heap(b.into()),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            ScalarBytes::Inline { len, bytes } => &bytes[..*len as usize],
            ScalarBytes::Heap(b) => b,
        }
    }
}

impl<T: Element> From<T> for ScalarArg {
    #[inline]
    fn from(v: T) -> ScalarArg {
        ScalarArg::from_pod(&v)
    }
}

macro_rules! three_lane_scalars {
    ($($t:ty => $elem:expr),* $(,)?) => {$(
        impl From<$t> for ScalarArg {
            #[inline]
            fn from(v: $t) -> ScalarArg {
                ScalarArg::from_bytes_of(DataType::Vector { elem: $elem, lanes: 3 }, std::any::type_name::<$t>(), bytemuck::bytes_of(&v))
            }
        }
    )*};
}

three_lane_scalars! {
    glam::Vec3 => ScalarType::F32,
    glam::IVec3 => ScalarType::I32,
    glam::UVec3 => ScalarType::U32,
    glam::DVec3 => ScalarType::F64,
    glam::I64Vec3 => ScalarType::I64,
    glam::U64Vec3 => ScalarType::U64,
}

impl ScalarArg {
    /// `value` as a scalar argument of type `T::TYPE` (what `From` does,
    /// for a borrowed value such as a large struct).
    #[inline]
    pub fn from_pod<T: Element>(value: &T) -> ScalarArg {
        ScalarArg::from_bytes_of(T::TYPE, std::any::type_name::<T>(), bytemuck::bytes_of(value))
    }

    /// A scalar of type `ty` whose value is `bytes` (WGSL's layout, in the
    /// host's byte order as buffers are uploaded), for tools and hand-built launches. The launch checks that
    /// `ty` is the parameter's type and that `bytes` has its size.
    pub fn from_bytes(ty: DataType, bytes: &[u8]) -> ScalarArg {
        ScalarArg::from_bytes_of(ty, "[u8]", bytes)
    }

    fn from_bytes_of(ty: DataType, rust: &'static str, bytes: &[u8]) -> ScalarArg {
        ScalarArg { ty, rust, bytes: ScalarBytes::new(bytes) }
    }

    /// The kernel type of the value.
    pub fn ty(&self) -> &DataType {
        &self.ty
    }

    /// The value's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

/// The bytes a value of `ty` occupies in a uniform block: a `vec3<T>` takes
/// three lanes (its alignment, and its stride in an array, are four).
pub(crate) fn value_size(ty: &DataType) -> u32 {
    match ty {
        DataType::Scalar(s) => s.size(),
        DataType::Vector { elem, lanes } => elem.size() * u32::from(*lanes),
        DataType::Struct { size, .. } => *size,
    }
}

/// WGSL's alignment of a member of type `ty` in a uniform block: a struct
/// is aligned to at least 16 bytes there (the uniform address space's
/// layout rule), everything else as anywhere.
pub(crate) fn uniform_align(ty: &DataType) -> u32 {
    match ty {
        DataType::Scalar(_) | DataType::Vector { .. } => ty.align(),
        DataType::Struct { align, .. } => (*align).max(16),
    }
}

/// Checks the uniform block layout and returns the block for one dispatch
/// `part` of a launch: the launch description, the length words of the
/// buffers that have one (`lengths`: each buffer argument's parameter and
/// length in elements), then the scalar arguments at their slots.
pub(crate) fn uniform_block(
    kernel: &'static KernelInfo,
    plan: &LaunchPlan,
    part: &DispatchPart,
    lengths: &[(usize, usize)],
    scalars: &[ScalarArg],
) -> Result<Vec<u8>, LaunchError> {
    let size = kernel.uniform_size;
    if size < launch_block::SIZE || !size.is_multiple_of(launch_block::ALIGN) {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!(
                "uniform_size {size} must be a multiple of {} and at least {}",
                launch_block::ALIGN,
                launch_block::SIZE.next_multiple_of(launch_block::ALIGN)
            ),
        });
    }
    let expected = kernel.scalar_params().count();
    if scalars.len() != expected {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!(
                "{} scalar arguments passed, but the kernel has {expected} scalar parameters",
                scalars.len()
            ),
        });
    }
    let mut block = vec![0u8; size as usize];
    block[..launch_block::SIZE as usize].copy_from_slice(&plan.launch_block(part));
    let start = kernel.scalars_start();
    if start > size {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!("uniform_size {size} leaves no room for the buffers' length words (up to byte {start})"),
        });
    }
    for &(param, len) in lengths {
        let Some(at) = kernel.length_slot(param) else { continue };
        let Ok(len) = u32::try_from(len) else {
            return Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg: kernel.param_name(param),
                problem: format!("{len} elements are more than a kernel can index (u32::MAX)"),
            });
        };
        block[at as usize..at as usize + 4].copy_from_slice(&len.to_le_bytes());
    }
    // Byte ranges taken so far, to catch overlapping slots.
    let mut taken: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
    for (param, arg) in kernel.scalar_params().zip(scalars) {
        if arg.ty != param.ty {
            return Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg: &param.name,
                problem: format!("a scalar of {} passed for a parameter of {}", arg.ty, param.ty),
            });
        }
        let width = value_size(&param.ty) as usize;
        let bytes = arg.bytes();
        // A value takes its size, or its array stride (`Vec3A`, whose
        // fourth lane is padding).
        if bytes.len() != width && bytes.len() != param.ty.stride() as usize {
            return Err(LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg: &param.name,
                problem: format!(
                    "`{}` is {} bytes, but its kernel type {} takes {width} (a wrong `Element` impl?)",
                    arg.rust,
                    bytes.len(),
                    param.ty
                ),
            });
        }
        let at = param.slot as usize;
        let align = uniform_align(&param.ty) as usize;
        if at < start as usize || !at.is_multiple_of(align) || at + width > size as usize {
            return Err(LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: format!(
                    "scalar `{}` ({}) at byte offset {at} lies outside the uniform block's parameter area {}..{size} or is not aligned to {align} bytes",
                    param.name,
                    param.ty.wgsl_name(),
                    start
                ),
            });
        }
        let range = at..at + width;
        if let Some((_, other)) = taken.iter().find(|(r, _)| r.start < range.end && range.start < r.end) {
            return Err(LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: format!("scalars `{other}` and `{}` overlap in the uniform block", param.name),
            });
        }
        block[range.clone()].copy_from_slice(&bytes[..width]);
        taken.push((range, &param.name));
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use onekernel_abi::{CpuPlan, ParamInfo, ParamKind};
    use std::borrow::Cow;

    const fn kernel(params: &'static [ParamInfo], uniform_size: u32) -> KernelInfo {
        KernelInfo {
            name: Cow::Borrowed("k"),
            entry_point: Cow::Borrowed("main"),
            modules: Cow::Borrowed(&[]),
            explain: Cow::Borrowed(""),
            workgroup_size: [256, 1, 1],
            params: Cow::Borrowed(params),
            uniform_binding: 0,
            uniform_size,
            max_workgroup_invocations: 256,
            cpu: CpuPlan::Independent,
            workgroup_memory_words: 0,
            features: onekernel_abi::Features::NONE,
            ..KernelInfo::EMPTY
        }
    }

    const fn scalar(slot: u32) -> ParamInfo {
        ParamInfo { name: Cow::Borrowed("s"), kind: ParamKind::Scalar, ty: DataType::F32, slot }
    }

    static SCALAR_AT_16: [ParamInfo; 1] = [scalar(16)];
    static K: KernelInfo = kernel(&SCALAR_AT_16, 32);
    const L: LaunchLimits = LaunchLimits {
        max_invocations: 256,
        max_size: [256, 256, 64],
        max_groups_per_dimension: 65535,
        max_shared_bytes: 16384,
    };

    fn part(workgroups: [u32; 3], block_offset: u32) -> Option<DispatchPart> {
        Some(DispatchPart { workgroups, block_offset })
    }

    #[test]
    fn shared_memory_beyond_the_device_is_an_error() {
        const fn big() -> KernelInfo {
            let mut k = kernel(&SCALAR_AT_16, 32);
            k.workgroup_memory_words = 4097;
            k
        }
        static BIG: KernelInfo = big();
        match plan(&BIG, Grid::Blocks(Dim3::new(1, 1, 1)), &L) {
            Err(LaunchError::SharedMemoryTooLarge { kernel: "k", bytes: 16388, max: 16384 }) => {}
            other => panic!("{other:?}"),
        }
        // The CPU grants what the kernel declares (the compiler checked it).
        assert!(plan(&BIG, Grid::Blocks(Dim3::new(1, 1, 1)), &LaunchLimits::cpu(&BIG)).is_ok());
    }

    #[test]
    fn small_grid_is_not_folded() {
        let p = plan(&K, Grid::threads(1000), &L).unwrap().unwrap();
        assert_eq!(p, LaunchPlan { groups: [4, 1, 1], folded: false, parts: [part([4, 1, 1], 0), None] });
        let p = plan(&K, Grid::blocks(65535), &L).unwrap().unwrap();
        assert_eq!(p, LaunchPlan { groups: [65535, 1, 1], folded: false, parts: [part([65535, 1, 1], 0), None] });
    }

    #[test]
    fn long_1d_grid_is_folded_exactly() {
        let p = plan(&K, Grid::blocks(70000), &L).unwrap().unwrap();
        // An exact factorisation is one dispatch.
        assert_eq!(p, LaunchPlan { groups: [70000, 1, 1], folded: true, parts: [part([2, 35000, 1], 0), None] });
        let p = plan(&K, Grid::blocks(65535usize * 2), &L).unwrap().unwrap();
        assert_eq!(p.parts, [part([2, 65535, 1], 0), None]);
        let p = plan(&K, Grid::blocks(1 << 18), &L).unwrap().unwrap();
        assert_eq!(p.parts, [part([8, 32768, 1], 0), None]);
        // A prime has no factorisation: full rows plus a tail.
        let p = plan(&K, Grid::blocks(65537), &L).unwrap().unwrap();
        assert_eq!(p.parts, [part([65535, 1, 1], 0), part([2, 1, 1], 65535)]);
        let p = plan(&K, Grid::blocks(65535usize * 65535), &L).unwrap().unwrap();
        assert_eq!(
            p,
            LaunchPlan { groups: [65535 * 65535, 1, 1], folded: true, parts: [part([65535, 65535, 1], 0), None] }
        );
        // 65535 full rows plus a tail: the tail is its own dispatch, so it fits.
        let p = plan(&K, Grid::blocks(65535usize * 65535 + 1), &L).unwrap().unwrap();
        assert_eq!(p.parts, [part([65535, 65535, 1], 0), part([1, 1, 1], 65535 * 65535)]);
        assert!(matches!(plan(&K, Grid::blocks(65535usize * 65536), &L), Err(LaunchError::FoldedGridTooLarge { .. })));
        // Every dispatched workgroup is a logical one.
        for g in [65536usize, 65537, 70000, 65535 * 2, 65535 * 2 + 1, 131101, 1 << 30, 65535 * 65535 + 1] {
            let p = plan(&K, Grid::blocks(g), &L).unwrap().unwrap();
            let mut next = 0u64;
            for part in p.parts() {
                assert_eq!(u64::from(part.block_offset), next);
                next += part.workgroups.iter().map(|&n| u64::from(n)).product::<u64>();
            }
            assert_eq!(next, g as u64);
        }
    }

    #[test]
    fn grid_over_u32_is_rejected() {
        let l = LaunchLimits { max_groups_per_dimension: 1 << 20, ..L };
        assert!(matches!(plan(&K, Grid::blocks(1usize << 32), &l), Err(LaunchError::FoldedGridTooLarge { .. })));
        assert!(plan(&K, Grid::blocks(u32::MAX as usize), &l).unwrap().is_some());
    }

    #[test]
    fn empty_grid_is_a_no_op() {
        assert_eq!(plan(&K, Grid::threads((0, 5)), &L).unwrap(), None);
    }

    #[test]
    fn uniform_block_layout() {
        let p = plan(&K, Grid::blocks(65537), &L).unwrap().unwrap();
        let [Some(main), Some(tail)] = p.parts else { panic!("expected two parts: {p:?}") };
        let b = uniform_block(&K, &p, &main, &[], &[2.5f32.into()]).unwrap();
        let w: &[u32] = bytemuck::cast_slice(&b);
        assert_eq!(w, &[65537, 1, 1, 0, 2.5f32.to_bits(), 0, 0, 0]);
        let b = uniform_block(&K, &p, &tail, &[], &[2.5f32.into()]).unwrap();
        let w: &[u32] = bytemuck::cast_slice(&b);
        assert_eq!(w, &[65537, 1, 1, 65535, 2.5f32.to_bits(), 0, 0, 0]);
        assert!(uniform_block(&K, &p, &main, &[], &[]).is_err());
    }

    #[test]
    fn uniform_block_checks_the_layout() {
        let p = plan(&K, Grid::blocks(3), &L).unwrap().unwrap();
        let part = p.parts[0].unwrap();
        static BAD_SIZE: KernelInfo = kernel(&[], 24);
        let err = uniform_block(&BAD_SIZE, &p, &part, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("uniform_size 24 must be a multiple of 16 and at least 16"), "{err}");
        static SCALAR_AT_12: [ParamInfo; 1] = [scalar(12)];
        static BAD_SLOT: KernelInfo = kernel(&SCALAR_AT_12, 32);
        let err = uniform_block(&BAD_SLOT, &p, &part, &[], &[0.0f32.into()]).unwrap_err();
        assert!(err.to_string().contains("parameter area 16..32"), "{err}");
    }
}
