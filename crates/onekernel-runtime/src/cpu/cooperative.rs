//! The cooperative executor: for kernels with barriers or shared memory.
//!
//! Each workgroup runs on one thread (workgroups in parallel over rayon).
//! Its invocations are futures (the kernel body compiled as an `async fn`
//! whose only `.await`s are barriers), polled in turn: each runs until its
//! next barrier, and when all of them wait there the barrier releases them
//! together. No invocation passes a barrier before all have reached it, so
//! shared-memory writes before a barrier are seen by every read after it,
//! exactly as on a GPU.

use super::panic_capture::run_captured;
use super::racecheck;
use super::workgroup::{Workgroup, WorkgroupPool};
use super::CpuDevice;
use crate::error::LaunchError;
use crate::grid::{Dim3, Grid, Invocation};
use crate::plan::{plan, LaunchLimits};
use onekernel_abi::{CpuPlan, KernelInfo};
use rayon::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

impl CpuDevice {
    /// The per-thread workgroups a cooperative launch of `kernel` needs;
    /// the generated launch code makes one and lends it to
    /// [`CpuDevice::execute_cooperative`].
    pub fn workgroups(&self, kernel: &'static KernelInfo) -> WorkgroupPool {
        let [x, y, z] = kernel.workgroup_size.map(|n| n as usize);
        WorkgroupPool::new(kernel.workgroup_memory_words as usize, x * y * z, self.is_race_checked())
    }

    /// Runs a cooperative kernel: `body(invocation, workgroup)` makes the
    /// future of one invocation. Synchronous. Invocations that reach
    /// different barriers, or a barrier that others skip by returning,
    /// make the launch fail (the compiler rejects such kernels, so this is a
    /// second line of defence).
    pub fn execute_cooperative<'w, F, Fut>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        pool: &'w WorkgroupPool,
        body: F,
    ) -> Result<(), LaunchError>
    where
        F: Fn(Invocation, &'w Workgroup) -> Fut + Sync,
        Fut: Future<Output = ()> + 'w,
    {
        match kernel.cpu {
            CpuPlan::Cooperative { .. } => {}
            CpuPlan::Independent | CpuPlan::OwnElement { .. } => {
                return Err(LaunchError::InvalidKernel {
                    kernel: &kernel.name,
                    problem: "launched cooperatively, but KernelInfo::cpu does not say the kernel is cooperative"
                        .into(),
                })
            }
        }
        let Some(WorkgroupGrid { grid_dim, block_dim, total }) = workgroup_grid(kernel, grid)? else {
            return Ok(());
        };
        let to_error = |c: super::panic_capture::Captured| c.into_error(kernel);
        if self.is_race_checked() {
            // One workgroup after the other on this thread, each invocation
            // announced to the race detector before it runs.
            return self.timed(&kernel.name, || {
                let _recording = racecheck::Recording::start(grid_dim, block_dim);
                let wg = pool.current();
                let mut futures = Vec::with_capacity(block_dim.x * block_dim.y * block_dim.z);
                for linear in 0..total {
                    let block_id = Dim3::new(
                        linear % grid_dim.x,
                        (linear / grid_dim.x) % grid_dim.y,
                        linear / (grid_dim.x * grid_dim.y),
                    );
                    wg.reset();
                    racecheck::new_workgroup();
                    run_captured(|| run_workgroup(kernel, block_id, block_dim, grid_dim, wg, &body, &mut futures))
                        .map_err(to_error)?;
                    if racecheck::found() {
                        break;
                    }
                }
                match racecheck::end() {
                    Some(race) => Err(LaunchError::DataRace { kernel: &kernel.name, race: Box::new(race) }),
                    None => Ok(()),
                }
            });
        }
        self.timed(&kernel.name, || {
            let first_panic = Mutex::new(None);
            // Several workgroups per task, a few tasks per thread: a workgroup
            // of a cooperative kernel is a substantial unit of work.
            let per_task = total.div_ceil(rayon::current_num_threads() * 8).max(1);
            (0..total.div_ceil(per_task)).into_par_iter().for_each(|task| {
                // Each thread has its own workgroup; a task runs its workgroups
                // one after the other to completion, never yielding to rayon.
                let wg = pool.current();
                let start = task * per_task;
                // The invocations' futures, reused from workgroup to workgroup.
                let mut futures: Vec<Option<Fut>> = Vec::with_capacity(block_dim.x * block_dim.y * block_dim.z);
                for linear in start..(start + per_task).min(total) {
                    let block_id = Dim3::new(
                        linear % grid_dim.x,
                        (linear / grid_dim.x) % grid_dim.y,
                        linear / (grid_dim.x * grid_dim.y),
                    );
                    wg.reset();
                    if let Err(p) =
                        run_captured(|| run_workgroup(kernel, block_id, block_dim, grid_dim, wg, &body, &mut futures))
                    {
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

/// Runs the invocations of one workgroup to completion. `futures` is
/// scratch space (empty on entry and on return). The serial executor
/// (`serial.rs`) runs its futures with it too.
pub(super) fn run_workgroup<'w, F, Fut>(
    kernel: &KernelInfo,
    block_id: Dim3,
    block_dim: Dim3,
    grid_dim: Dim3,
    wg: &'w Workgroup,
    body: &F,
    futures: &mut Vec<Option<Fut>>,
) where
    F: Fn(Invocation, &'w Workgroup) -> Fut,
    Fut: Future<Output = ()> + 'w,
{
    // Drop whatever a panic left behind.
    futures.clear();
    for tz in 0..block_dim.z {
        for ty in 0..block_dim.y {
            for tx in 0..block_dim.x {
                let thread_id = Dim3::new(tx, ty, tz);
                let global_id = Dim3::new(
                    block_id.x * block_dim.x + tx,
                    block_id.y * block_dim.y + ty,
                    block_id.z * block_dim.z + tz,
                );
                futures.push(Some(body(Invocation { global_id, thread_id, block_id, block_dim, grid_dim }, wg)));
            }
        }
    }
    let mut cx = Context::from_waker(Waker::noop());
    let race_check = wg.race_check();
    loop {
        let mut finished = 0;
        for (local, slot) in futures.iter_mut().enumerate() {
            let Some(f) = slot.as_mut() else {
                finished += 1;
                continue;
            };
            // SAFETY: the future is never moved until it is dropped: the
            // vector's capacity was reserved before any future was pushed,
            // nothing is pushed while futures are polled, and futures are
            // dropped in place (`*slot = None`, `clear()`), as `Pin` allows.
            let pinned = unsafe { Pin::new_unchecked(f) };
            if race_check {
                let thread_id = Dim3::new(
                    local % block_dim.x,
                    (local / block_dim.x) % block_dim.y,
                    local / (block_dim.x * block_dim.y),
                );
                let global_id = Dim3::new(
                    block_id.x * block_dim.x + thread_id.x,
                    block_id.y * block_dim.y + thread_id.y,
                    block_id.z * block_dim.z + thread_id.z,
                );
                racecheck::enter(global_id, block_id, thread_id);
            }
            if let Poll::Ready(()) = pinned.poll(&mut cx) {
                *slot = None;
                finished += 1;
            }
        }
        let live = futures.len() - finished;
        if live == 0 {
            futures.clear();
            return;
        }
        if let Some((a, b)) = wg.subgroups.diverged() {
            panic!(
                "invocations of a subgroup of workgroup {block_id} wait at two different subgroup operations \
                 (#{a} and #{b}) in kernel `{}`",
                kernel.name
            );
        }
        let (waiting, in_subgroup) = (wg.waiting(), wg.subgroups.waiting());
        if waiting + in_subgroup < live {
            // Some invocations completed a subgroup operation this round:
            // they go on at the next.
            continue;
        }
        if in_subgroup > 0 {
            panic!(
                "invocations of workgroup {block_id} diverged: {in_subgroup} wait at a subgroup operation that others \
                 of their subgroup never reach ({waiting} wait at a barrier, {finished} returned; kernel `{}`)",
                kernel.name
            );
        }
        if finished > 0 {
            let at =
                wg.waiting_at().map_or_else(String::new, |l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()));
            panic!(
                "invocations of workgroup {block_id} diverged: {finished} returned while {waiting} wait at the \
                 barrier{at} (kernel `{}`; every invocation of a workgroup must reach each barrier)",
                kernel.name
            );
        }
        if let Err(d) = wg.release() {
            panic!(
                "invocations of workgroup {block_id} wait at two different barriers, {d}, in kernel `{}`",
                kernel.name
            );
        }
    }
}

/// The workgroups of a cooperative launch (both CPU executors of
/// cooperative kernels take them).
pub(super) struct WorkgroupGrid {
    /// Workgroups along each axis.
    pub grid_dim: Dim3,
    /// Invocations per workgroup along each axis.
    pub block_dim: Dim3,
    /// Workgroups in all.
    pub total: usize,
}

/// Plans `grid` for `kernel` with the CPU's limits; None for an empty grid.
pub(super) fn workgroup_grid(kernel: &'static KernelInfo, grid: Grid) -> Result<Option<WorkgroupGrid>, LaunchError> {
    let Some(launch) = plan(kernel, grid, &LaunchLimits::cpu(kernel))? else {
        return Ok(None);
    };
    let [wx, wy, wz] = kernel.workgroup_size.map(|n| n as usize);
    let grid_dim = launch.groups_dim();
    let total = grid_dim.x * grid_dim.y * grid_dim.z;
    Ok(Some(WorkgroupGrid { grid_dim, block_dim: Dim3::new(wx, wy, wz), total }))
}
