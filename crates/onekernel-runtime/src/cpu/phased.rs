//! The phase executor: cooperative kernels at the speed of a loop.
//!
//! The compiler splits a kernel's body at its barriers into *phases*
//! (`onekernel-compiler`'s `expand/phases.rs`) and generates one function
//! per workgroup: each phase is a plain loop over the workgroup's
//! invocations, and the control flow that contains barriers (uniform, as
//! the compiler proved) runs once per workgroup around those loops. What
//! an invocation keeps from one phase to the next lives in per-invocation
//! arrays (the kernel's *state*, made once per task by `state` and reused
//! from workgroup to workgroup). Every invocation finishes a phase before
//! any starts the next, so a barrier's guarantee holds as on a GPU, and
//! nothing is polled or awaited: this is how CPU OpenCL implementations
//! (PoCL) run work-groups.
//!
//! Race-checked launches and the kernels the splitter does not handle
//! (subgroup collectives, `workgroup_uniform_load`, ...) run on the
//! futures executor (`cooperative.rs`) instead; `CpuDevice::launch`
//! chooses (`kernel.rs`), from the compiler's `CpuPlan`.

use super::cooperative::{workgroup_grid, WorkgroupGrid};
use super::panic_capture::run_captured;
use super::workgroup::Workgroup;
use super::CpuDevice;
use crate::error::LaunchError;
use crate::grid::{Dim3, Grid, Invocation};
use bytemuck::Zeroable;
use onekernel_abi::KernelInfo;
use rayon::prelude::*;
use std::panic::Location;
use std::sync::Mutex;

impl CpuDevice {
    /// Runs a cooperative kernel split into phases: `body(group, workgroup,
    /// state)` runs one whole workgroup, `group` being the builtins of its
    /// invocation `(0, 0, 0)`; `state()` makes the per-invocation storage a
    /// task reuses for its workgroups, as it does its `Workgroup` (shared
    /// memory). Synchronous. [`CpuDevice::launch`] calls it for kernels
    /// whose plan is `Cooperative { phased: true }` on a parallel device.
    pub(crate) fn execute_phased<S, M, F>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        state: M,
        body: F,
    ) -> Result<(), LaunchError>
    where
        M: Fn() -> S + Sync,
        F: Fn(&Invocation, &Workgroup, &mut S) + Sync,
    {
        let Some(WorkgroupGrid { grid_dim, block_dim, total }) = workgroup_grid(kernel, grid)? else {
            return Ok(());
        };
        let to_error = |c: super::panic_capture::Captured| c.into_error(kernel);
        self.timed(&kernel.name, || {
            let first_panic = Mutex::new(None);
            // As the futures executor: several workgroups per task, a few
            // tasks per thread, each task's workgroups one after the other.
            let per_task = total.div_ceil(rayon::current_num_threads() * 8).max(1);
            (0..total.div_ceil(per_task)).into_par_iter().for_each(|task| {
                // The task's own workgroup memory: zeroed in place (a
                // memset) between workgroups.
                let mut wg = Workgroup::new(
                    kernel.workgroup_memory_words as usize,
                    block_dim.x * block_dim.y * block_dim.z,
                    false,
                );
                let mut state = state();
                let start = task * per_task;
                for linear in start..(start + per_task).min(total) {
                    let block_id = Dim3::new(
                        linear % grid_dim.x,
                        (linear / grid_dim.x) % grid_dim.y,
                        linear / (grid_dim.x * grid_dim.y),
                    );
                    let group = Invocation {
                        global_id: Dim3::new(
                            block_id.x * block_dim.x,
                            block_id.y * block_dim.y,
                            block_id.z * block_dim.z,
                        ),
                        thread_id: Dim3::new(0, 0, 0),
                        block_id,
                        block_dim,
                        grid_dim,
                    };
                    wg.zero_memory();
                    if let Err(p) = run_captured(|| body(&group, &wg, &mut state)) {
                        first_panic.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(p);
                        return;
                    }
                }
            });
            match first_panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Some(p) => Err(to_error(p)),
                None => Ok(()),
            }
        })
    }
}

/// Zeroed storage for one local of each of a workgroup's `N` invocations:
/// the phase executor's per-invocation state. On the heap, made without a
/// stack temporary (a workgroup's worth of a local array can be large).
pub fn per_invocation<T: Zeroable + Copy, const N: usize>() -> Box<[T; N]> {
    match vec![T::zeroed(); N].into_boxed_slice().try_into() {
        Ok(b) => b,
        Err(_) => unreachable!("a vector of N elements is a [T; N]"),
    }
}

/// Checks that every invocation of a workgroup computes the same `value`
/// for a condition (or loop bounds) that controls a barrier: `first` holds
/// the first invocation's. The compiler proved such conditions uniform;
/// this is the second line of defence, as the futures executor's barrier
/// divergence check is. Panics (a `LaunchError::CpuPanic`) on a
/// disagreement, at the condition in the kernel's source.
#[track_caller]
#[inline]
pub fn agree<T: PartialEq + Copy>(first: &mut Option<T>, value: T, invocation: &Invocation) {
    match *first {
        None => *first = Some(value),
        Some(v) if v == value => {}
        Some(_) => disagree(invocation, Location::caller()),
    }
}

/// The agreed value of [`agree`]'s `first` after every invocation has
/// given one.
#[inline]
pub fn agreed<T: Copy>(first: Option<T>) -> T {
    match first {
        Some(v) => v,
        None => unreachable!("a workgroup has at least one invocation"),
    }
}

#[cold]
#[inline(never)]
fn disagree(invocation: &Invocation, at: &Location<'_>) -> ! {
    panic!(
        "invocations of workgroup {} diverged: they disagree on the condition at {}:{}:{}, which controls a barrier \
         (every invocation of a workgroup must reach each barrier)",
        invocation.block_id,
        at.file(),
        at.line(),
        at.column()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_invocation_storage_is_zeroed() {
        let s = per_invocation::<[f32; 3], 5>();
        assert_eq!(*s, [[0.0; 3]; 5]);
    }

    #[test]
    fn agreement_catches_a_differing_invocation() {
        let inv = Invocation {
            global_id: Dim3::new(0, 0, 0),
            thread_id: Dim3::new(0, 0, 0),
            block_id: Dim3::new(3, 0, 0),
            block_dim: Dim3::new(2, 1, 1),
            grid_dim: Dim3::new(4, 1, 1),
        };
        let mut first = None;
        agree(&mut first, 7u32, &inv);
        agree(&mut first, 7u32, &inv);
        assert_eq!(agreed(first), 7);
        let r = std::panic::catch_unwind(|| {
            let mut first = Some(true);
            agree(&mut first, false, &inv);
        });
        assert!(r.is_err());
    }
}
