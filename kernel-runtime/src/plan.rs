//! Launch planning shared by the GPU and the CPU path: checking the
//! workgroup and the grid against a device's limits, and folding a too-long
//! 1-D grid into 2-D.
//!
//! Both paths run the same checks (the CPU with the WebGPU default limits)
//! so that a launch that fails on one fails the same way on the other.

use crate::error::LaunchError;
use crate::grid::{Dim3, Grid};
use crate::kernel_info::{KernelInfo, LAUNCH_BLOCK_SIZE};

/// The limits a launch is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchLimits {
    /// `max_compute_invocations_per_workgroup`.
    pub max_invocations: u32,
    /// `max_compute_workgroup_size_{x,y,z}`.
    pub max_size: [u32; 3],
    /// `max_compute_workgroups_per_dimension`.
    pub max_groups_per_dimension: u32,
}

impl LaunchLimits {
    /// The limits of a wgpu device.
    pub fn from_wgpu(l: &wgpu::Limits) -> LaunchLimits {
        LaunchLimits {
            max_invocations: l.max_compute_invocations_per_workgroup,
            max_size: [
                l.max_compute_workgroup_size_x,
                l.max_compute_workgroup_size_y,
                l.max_compute_workgroup_size_z,
            ],
            max_groups_per_dimension: l.max_compute_workgroups_per_dimension,
        }
    }

    /// The limits the CPU executor enforces: WebGPU's defaults (what every
    /// GPU supports), except that the invocation limit is what the kernel
    /// declares, since a kernel that asks for more is only launched on
    /// devices that grant it.
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
        }
    }
}

/// A checked, non-empty launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LaunchPlan {
    /// Logical number of workgroups (what the kernel sees as `grid_dim`).
    pub groups: [u32; 3],
    /// Physical dispatch size.
    pub dispatch: [u32; 3],
    /// Whether a 1-D grid was folded into 2-D.
    pub folded: bool,
}

impl LaunchPlan {
    /// The 16-byte launch description at the start of the uniform block:
    /// `groups: vec3<u32>` then `folded: u32`.
    pub fn launch_block(&self) -> [u8; LAUNCH_BLOCK_SIZE as usize] {
        let words = [self.groups[0], self.groups[1], self.groups[2], u32::from(self.folded)];
        bytemuck::cast(words)
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
            kernel: kernel.name,
            problem: format!("workgroup size {:?} has a zero axis", kernel.workgroup_size),
        });
    }
    if invocations > u64::from(limits.max_invocations) {
        return Err(LaunchError::WorkgroupTooLarge {
            kernel: kernel.name,
            invocations,
            max: u64::from(limits.max_invocations),
        });
    }
    for (i, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
        if kernel.workgroup_size[i] > limits.max_size[i] {
            return Err(LaunchError::WorkgroupAxisTooLarge {
                kernel: kernel.name,
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
pub(crate) fn plan(kernel: &'static KernelInfo, grid: Grid, limits: &LaunchLimits) -> Result<Option<LaunchPlan>, LaunchError> {
    check_workgroup(kernel, limits)?;
    let groups = grid.groups(kernel);
    if groups.is_empty() {
        return Ok(None);
    }
    let max = limits.max_groups_per_dimension as usize;
    if groups.x <= max && groups.y <= max && groups.z <= max {
        let g = [groups.x as u32, groups.y as u32, groups.z as u32];
        return Ok(Some(LaunchPlan { groups: g, dispatch: g, folded: false }));
    }
    if groups.y != 1 || groups.z != 1 {
        return Err(LaunchError::GridTooLarge { kernel: kernel.name, groups, max_per_dimension: limits.max_groups_per_dimension });
    }
    // Fold: x runs full rows of `max` groups; the kernel's prologue
    // linearises (x, y) back and drops the tail of the last row.
    let rows = groups.x.div_ceil(max);
    if rows > max || groups.x > u32::MAX as usize {
        return Err(LaunchError::FoldedGridTooLarge { kernel: kernel.name, groups: groups.x, max_per_dimension: limits.max_groups_per_dimension });
    }
    Ok(Some(LaunchPlan { groups: [groups.x as u32, 1, 1], dispatch: [max as u32, rows as u32, 1], folded: true }))
}

/// Checks the uniform block layout and returns the block for a launch:
/// the launch description followed by the scalar arguments at their slots.
pub(crate) fn uniform_block(kernel: &'static KernelInfo, plan: &LaunchPlan, scalars: &[u32]) -> Result<Vec<u8>, LaunchError> {
    let size = kernel.uniform_size;
    if size < LAUNCH_BLOCK_SIZE || !size.is_multiple_of(16) {
        return Err(LaunchError::InvalidKernel {
            kernel: kernel.name,
            problem: format!("uniform_size {size} must be a multiple of 16 and at least 16"),
        });
    }
    let expected = kernel.scalar_params().count();
    if scalars.len() != expected {
        return Err(LaunchError::InvalidKernel {
            kernel: kernel.name,
            problem: format!("{} scalar arguments passed, but the kernel has {expected} scalar parameters", scalars.len()),
        });
    }
    let mut block = vec![0u8; size as usize];
    block[..LAUNCH_BLOCK_SIZE as usize].copy_from_slice(&plan.launch_block());
    for (param, &bits) in kernel.scalar_params().zip(scalars) {
        let at = param.slot as usize;
        if at < LAUNCH_BLOCK_SIZE as usize || !at.is_multiple_of(4) || at + 4 > size as usize {
            return Err(LaunchError::InvalidKernel {
                kernel: kernel.name,
                problem: format!(
                    "scalar `{}` at byte offset {at} lies outside the uniform block's parameter area {LAUNCH_BLOCK_SIZE}..{size} or is not 4-byte aligned",
                    param.name
                ),
            });
        }
        block[at..at + 4].copy_from_slice(&bits.to_ne_bytes());
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_info::{ParamInfo, ParamKind, ScalarType};

    static K: KernelInfo = KernelInfo {
        name: "k",
        entry_point: "main",
        wgsl: "",
        spirv: &[],
        workgroup_size: [256, 1, 1],
        params: &[ParamInfo { name: "s", kind: ParamKind::Scalar, ty: ScalarType::F32, slot: 16 }],
        uniform_binding: 0,
        uniform_size: 32,
        max_workgroup_invocations: 256,
        writes_own_element: false,
    };
    const L: LaunchLimits = LaunchLimits { max_invocations: 256, max_size: [256, 256, 64], max_groups_per_dimension: 65535 };

    #[test]
    fn small_grid_is_not_folded() {
        let p = plan(&K, Grid::threads(1000), &L).unwrap().unwrap();
        assert_eq!(p, LaunchPlan { groups: [4, 1, 1], dispatch: [4, 1, 1], folded: false });
    }

    #[test]
    fn long_1d_grid_is_folded() {
        let p = plan(&K, Grid::blocks(70000), &L).unwrap().unwrap();
        assert_eq!(p, LaunchPlan { groups: [70000, 1, 1], dispatch: [65535, 2, 1], folded: true });
        let p = plan(&K, Grid::blocks(65535usize * 65535), &L).unwrap().unwrap();
        assert_eq!(p.dispatch, [65535, 65535, 1]);
        assert!(matches!(plan(&K, Grid::blocks(65535usize * 65535 + 1), &L), Err(LaunchError::FoldedGridTooLarge { .. })));
    }

    #[test]
    fn empty_grid_is_a_no_op() {
        assert_eq!(plan(&K, Grid::threads((0, 5)), &L).unwrap(), None);
    }

    #[test]
    fn uniform_block_layout() {
        let p = plan(&K, Grid::blocks(70000), &L).unwrap().unwrap();
        let b = uniform_block(&K, &p, &[2.5f32.to_bits()]).unwrap();
        let w: &[u32] = bytemuck::cast_slice(&b);
        assert_eq!(w, &[70000, 1, 1, 1, 2.5f32.to_bits(), 0, 0, 0]);
        assert!(uniform_block(&K, &p, &[]).is_err());
    }
}
