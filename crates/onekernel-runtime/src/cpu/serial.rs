//! The serial executor (`Device::cpu_serial`): every launch on the calling
//! thread, one workgroup at a time in linear order (x fastest, then y,
//! then z), the invocations of each in order too, so that a kernel's
//! effects happen in one fixed, repeatable order: what debugging and
//! printing from kernels want. Not fast.
//!
//! It runs the bodies the plan names ([`CpuKernel`]): `invocation` for
//! independent kernels (the outputs shared, as the parallel executor's
//! fallback), `phases` for cooperative kernels the compiler split, and the
//! futures of `cooperative` for the others, which meet at barriers as on
//! the futures executor. A phase runs the workgroup's invocations in the
//! order the futures are polled, so both give the same order.

use super::cooperative::{run_workgroup, workgroup_grid, WorkgroupGrid};
use super::kernel::CpuKernel;
use super::panic_capture::run_captured;
use super::workgroup::{Workgroup, WorkgroupPool};
use super::CpuDevice;
use crate::error::LaunchError;
use crate::grid::{Dim3, Grid, Invocation};
use onekernel_abi::{CpuPlan, KernelInfo};

impl CpuDevice {
    /// Runs a launch serially: see the module's documentation.
    pub(super) fn execute_serial<K: CpuKernel>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        bodies: &K,
        outputs: &K::Outputs,
    ) -> Result<(), LaunchError> {
        let Some(WorkgroupGrid { grid_dim, block_dim, total }) = workgroup_grid(kernel, grid)? else {
            return Ok(());
        };
        let to_error = |c: super::panic_capture::Captured| c.into_error(kernel);
        let block = |linear: usize| {
            Dim3::new(linear % grid_dim.x, (linear / grid_dim.x) % grid_dim.y, linear / (grid_dim.x * grid_dim.y))
        };
        let group = |block_id: Dim3| Invocation {
            global_id: Dim3::new(block_id.x * block_dim.x, block_id.y * block_dim.y, block_id.z * block_dim.z),
            thread_id: Dim3::new(0, 0, 0),
            block_id,
            block_dim,
            grid_dim,
        };
        let invocations = block_dim.x * block_dim.y * block_dim.z;
        self.timed(&kernel.name, || match kernel.cpu {
            CpuPlan::Independent | CpuPlan::OwnElement { .. } => run_captured(|| {
                for linear in 0..total {
                    let g = group(block(linear));
                    for tz in 0..block_dim.z {
                        for ty in 0..block_dim.y {
                            for tx in 0..block_dim.x {
                                bodies.invocation(&g.thread(tx, ty, tz), outputs);
                            }
                        }
                    }
                }
            })
            .map_err(to_error),
            CpuPlan::Cooperative { phased: true } => {
                let mut wg = Workgroup::new(kernel.workgroup_memory_words as usize, invocations, false);
                let mut state = bodies.phase_state();
                run_captured(|| {
                    for linear in 0..total {
                        wg.zero_memory();
                        bodies.phases(&group(block(linear)), &wg, &mut state, outputs);
                    }
                })
                .map_err(to_error)
            }
            CpuPlan::Cooperative { phased: false } => {
                let pool = WorkgroupPool::new(kernel.workgroup_memory_words as usize, invocations, false);
                let wg = pool.current();
                let mut futures = Vec::with_capacity(invocations);
                run_captured(|| {
                    for linear in 0..total {
                        wg.reset();
                        run_workgroup(
                            kernel,
                            block(linear),
                            block_dim,
                            grid_dim,
                            wg,
                            &|inv, w| bodies.cooperative(inv, w, outputs),
                            &mut futures,
                        );
                    }
                })
                .map_err(to_error)
            }
        })
    }
}
