//! The one way generated code runs a kernel on the CPU: it implements
//! [`CpuKernel`] (the kernel's bodies, over its arguments) and calls
//! [`CpuDevice::launch`], which picks the executor from the compiler's
//! plan ([`KernelInfo::cpu`], a [`CpuPlan`]), the device's mode and the
//! launch's grid. Adding an executor touches the plan (the compiler's
//! `analysis::cpu_plan` and the ABI) and this file, not the code
//! generator, as long as it runs bodies the trait already has.

use super::executor::Chunk;
use super::owned::Outputs;
use super::workgroup::Workgroup;
use super::{CpuDevice, CpuMode};
use crate::error::LaunchError;
use crate::grid::{Grid, Invocation};
use onekernel_abi::{CpuPlan, KernelInfo};
use std::future::Future;
use std::ops::Range;

/// A kernel's bodies over the arguments of one launch: what `#[kernel]`
/// generates (one impl per kernel, on a struct of its `&[T]`, atomic and
/// scalar arguments; the `&mut [T]` outputs travel separately as
/// [`CpuKernel::Outputs`], so that a partitioned launch can move them in
/// and hand out windows). The generated impl provides the bodies its
/// [`CpuPlan`] names; the others keep these defaults, which the runtime
/// never calls for that plan (they panic, and the launch fails, if a
/// hand-written plan and impl disagree).
pub trait CpuKernel: Sync {
    /// The `&mut [T]` outputs, a tuple of [`SharedSliceMut`](super::SharedSliceMut).
    type Outputs: Outputs;
    /// The per-invocation storage of [`CpuKernel::phases`] (`()` without).
    type PhaseState;

    /// One invocation, the outputs shared by all (every plan but
    /// `Cooperative`).
    fn invocation(&self, invocation: &Invocation, outputs: &Self::Outputs) {
        let _ = (invocation, outputs);
        missing("invocation")
    }

    /// One invocation, the outputs its chunk's windows
    /// (`CpuPlan::OwnElement`).
    fn owned_invocation(&self, invocation: &Invocation, windows: &<Self::Outputs as Outputs>::Windows<'_>) {
        let _ = (invocation, windows);
        missing("owned_invocation")
    }

    /// A whole chunk as one loop over plain slices, for the
    /// `global_id().x` values `x`; false when some buffer does not cover
    /// them (the chunk then runs per invocation). `CpuPlan::OwnElement {
    /// chunk_loop: true }`.
    fn chunk_slices(&self, x: Range<usize>, windows: &mut <Self::Outputs as Outputs>::Windows<'_>) -> bool {
        let _ = (x, windows);
        false
    }

    /// One invocation of a cooperative kernel as a future, whose
    /// `.await`s are its barriers (`CpuPlan::Cooperative`).
    fn cooperative<'w>(
        &'w self,
        invocation: Invocation,
        workgroup: &'w Workgroup,
        outputs: &'w Self::Outputs,
    ) -> impl Future<Output = ()> + 'w {
        let _ = (invocation, workgroup, outputs);
        async { missing("cooperative") }
    }

    /// Zeroed [`CpuKernel::PhaseState`], made once per executor task.
    fn phase_state(&self) -> Self::PhaseState {
        missing("phase_state")
    }

    /// One whole workgroup split at its barriers into phases, each a loop
    /// over its invocations; `group` holds the builtins of its invocation
    /// `(0, 0, 0)` (`CpuPlan::Cooperative { phased: true }`).
    fn phases(&self, group: &Invocation, workgroup: &Workgroup, state: &mut Self::PhaseState, outputs: &Self::Outputs) {
        let _ = (group, workgroup, state, outputs);
        missing("phases")
    }
}

#[cold]
#[inline(never)]
fn missing(body: &str) -> ! {
    panic!("internal error: the kernel's CPU plan needs its `{body}` body, which its `CpuKernel` impl does not provide")
}

/// The executors, as [`CpuDevice::launch`] chooses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Executor {
    /// Every invocation with shared outputs, chunks of workgroups in
    /// parallel (`executor.rs`); race-checked on such a device.
    Independent,
    /// Chunks with their own windows of the outputs, each maybe one loop
    /// over plain slices (`executor.rs`, `owned.rs`).
    Partitioned { chunk_loop: bool },
    /// A workgroup's invocations as futures meeting at barriers
    /// (`cooperative.rs`); race-checked on such a device.
    Futures,
    /// A workgroup split into phases (`phased.rs`).
    Phased,
    /// One workgroup at a time, invocations in a fixed order, on the
    /// calling thread (`serial.rs`).
    Serial,
}

impl CpuDevice {
    /// The executor for a launch of a kernel with `plan` on `grid`: the
    /// one decision, made here from the compiler's plan and the device.
    fn executor(&self, kernel: &'static KernelInfo, grid: &Grid) -> Executor {
        match (kernel.cpu, self.mode) {
            (_, CpuMode::Serial) => Executor::Serial,
            // The race detector follows the futures' schedule and sees
            // every access through the shared views.
            (CpuPlan::Cooperative { .. }, CpuMode::RaceChecked) => Executor::Futures,
            (CpuPlan::Cooperative { phased: true }, CpuMode::Parallel) => Executor::Phased,
            (CpuPlan::Cooperative { .. }, _) => Executor::Futures,
            (CpuPlan::OwnElement { chunk_loop }, CpuMode::Parallel) if self.can_partition(kernel, grid) => {
                Executor::Partitioned { chunk_loop }
            }
            (CpuPlan::OwnElement { .. } | CpuPlan::Independent, _) => Executor::Independent,
        }
    }

    /// Runs `kernel` (the compiled description) over `grid` with `bodies`
    /// (its generated bodies over this launch's arguments) and `outputs`
    /// (its `&mut [T]` parameters, moved in): the executor is chosen from
    /// `kernel.cpu`, the device's mode and the grid. Synchronous. The only
    /// CPU entry point of generated code.
    pub fn launch<K: CpuKernel>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        bodies: &K,
        outputs: K::Outputs,
    ) -> Result<(), LaunchError> {
        let result = self.run(kernel, grid, bodies, outputs);
        // A `print!` without a newline at the end of the launch.
        if !kernel.debug_sites.is_empty() {
            crate::debug::flush_pending();
        }
        result
    }

    fn run<K: CpuKernel>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        bodies: &K,
        outputs: K::Outputs,
    ) -> Result<(), LaunchError> {
        match self.executor(kernel, &grid) {
            Executor::Independent => self.execute(kernel, grid, |inv| bodies.invocation(inv, &outputs)),
            Executor::Partitioned { chunk_loop } => {
                self.execute_partitioned(kernel, grid, outputs, |chunk: &Chunk, mut windows| {
                    let looped = chunk_loop && chunk.x_range().is_some_and(|x| bodies.chunk_slices(x, &mut windows));
                    if !looped {
                        chunk.for_each(|inv| bodies.owned_invocation(inv, &windows))
                    }
                })
            }
            Executor::Futures => {
                let pool = self.workgroups(kernel);
                let outputs = &outputs;
                self.execute_cooperative(kernel, grid, &pool, |inv, wg| bodies.cooperative(inv, wg, outputs))
            }
            Executor::Serial => self.execute_serial(kernel, grid, bodies, &outputs),
            Executor::Phased => self.execute_phased(
                kernel,
                grid,
                || bodies.phase_state(),
                |group, wg, state| bodies.phases(group, wg, state, &outputs),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(cpu: CpuPlan, workgroup_size: [u32; 3]) -> &'static KernelInfo {
        Box::leak(Box::new(KernelInfo { cpu, workgroup_size, ..KernelInfo::EMPTY }))
    }

    /// The one decision: each plan on each mode, and the grids a
    /// partitioned launch needs.
    #[test]
    fn the_executor_follows_the_plan_the_mode_and_the_grid() {
        let (own, chunked) = (CpuPlan::OwnElement { chunk_loop: false }, CpuPlan::OwnElement { chunk_loop: true });
        let (phased, futures) = (CpuPlan::Cooperative { phased: true }, CpuPlan::Cooperative { phased: false });
        let line = Grid::threads(1000);
        let square = Grid::threads((32, 32));
        let cases = [
            (CpuMode::Parallel, CpuPlan::Independent, line, Executor::Independent),
            (CpuMode::Parallel, own, line, Executor::Partitioned { chunk_loop: false }),
            (CpuMode::Parallel, chunked, line, Executor::Partitioned { chunk_loop: true }),
            (CpuMode::Parallel, chunked, square, Executor::Independent),
            (CpuMode::Parallel, phased, line, Executor::Phased),
            (CpuMode::Parallel, futures, line, Executor::Futures),
            (CpuMode::RaceChecked, chunked, line, Executor::Independent),
            (CpuMode::RaceChecked, phased, line, Executor::Futures),
            (CpuMode::Serial, chunked, line, Executor::Serial),
            (CpuMode::Serial, phased, line, Executor::Serial),
            (CpuMode::Serial, futures, line, Executor::Serial),
        ];
        for (mode, plan, grid, want) in cases {
            let cpu = CpuDevice::new(0, mode);
            assert_eq!(cpu.executor(kernel(plan, [64, 1, 1]), &grid), want, "{plan:?} on {mode:?} over {grid:?}");
        }
        // A 2-D workgroup is not partitioned either.
        let cpu = CpuDevice::new(0, CpuMode::Parallel);
        assert_eq!(cpu.executor(kernel(chunked, [8, 8, 1]), &line), Executor::Independent);
    }
}
