//! Running a kernel body over a grid on the CPU.
//!
//! For kernels whose invocations are independent (`CpuPlan::Independent`
//! and `OwnElement`: no barriers, no shared memory) the executor splits the
//! linear range of workgroups into a few chunks per rayon thread and runs
//! each chunk as a plain loop: no task per invocation, and no division per
//! invocation (ids advance incrementally), so `body` inlines into a tight
//! loop that competes with a hand-written `par_chunks_mut` loop.
//! Cooperative kernels run in `cooperative.rs`.

use super::owned::{Outputs, WindowToken};
use super::panic_capture::run_captured;
use super::racecheck;
use super::CpuDevice;
use crate::error::LaunchError;
use crate::grid::{Dim3, Grid, Invocation};
use crate::plan::{plan, LaunchLimits};
use onekernel_abi::{CpuPlan, KernelInfo};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Fewest invocations worth a rayon task: below this the scheduling cost
/// dominates the work of a simple kernel.
const MIN_INVOCATIONS_PER_CHUNK: usize = 4096;

/// Chunks per rayon thread: a few, so that uneven chunks balance out.
const CHUNKS_PER_THREAD: usize = 4;

impl CpuDevice {
    /// Runs `body` once per invocation of the grid with the exact builtin
    /// values the GPU would give, spread over the cores with rayon.
    /// Synchronous.
    ///
    /// The grid is checked against the same limits a WebGPU-default GPU has
    /// (see `LaunchLimits::cpu`), so a launch that a GPU would reject fails
    /// here too. A panic in `body` stops the launch and becomes
    /// [`LaunchError::CpuPanic`] with the panic's location and message.
    pub fn execute<F: Fn(&Invocation) + Sync>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        body: F,
    ) -> Result<(), LaunchError> {
        check_independent(kernel)?;
        let Some(launch) = plan(kernel, grid, &LaunchLimits::cpu(kernel))? else {
            return Ok(());
        };
        let [wx, wy, wz] = kernel.workgroup_size.map(|n| n as usize);
        let shape = Shape { grid_dim: launch.groups_dim(), block_dim: Dim3::new(wx, wy, wz) };
        if self.is_race_checked() {
            return self.timed(&kernel.name, || run_race_checked(kernel, shape, &body));
        }
        self.timed(&kernel.name, || run_independent(kernel, shape, &body))
    }
}

impl CpuDevice {
    /// True when `kernel` on `grid` can take the owned-chunk fast path: the
    /// compiler proved each invocation writes only element `global_id().x`,
    /// and the launch is 1-D, so chunks of invocations own disjoint ranges.
    pub fn can_partition(&self, kernel: &'static KernelInfo, grid: &Grid) -> bool {
        let one_d = |d: Dim3| d.y == 1 && d.z == 1;
        let grid_dim = match *grid {
            Grid::Threads(d) | Grid::Blocks(d) => d,
        };
        let own_element = match kernel.cpu {
            CpuPlan::OwnElement { .. } => true,
            CpuPlan::Independent | CpuPlan::Cooperative { .. } => false,
        };
        // A race-checked launch must see every access through the
        // recording shared view, so it never takes the windowed path.
        own_element
            && !self.is_race_checked()
            && kernel.workgroup_size[1] == 1
            && kernel.workgroup_size[2] == 1
            && one_d(grid_dim)
    }

    /// Like [`CpuDevice::execute`] for a kernel whose invocations each
    /// write only their own element (`CpuPlan::OwnElement`): calls
    /// `chunk_body` once per chunk of invocations with that chunk's
    /// windows of the `outputs` (one [`OwnedChunk`](super::OwnedChunk) per
    /// output, covering the chunk's `global_id().x` range), read and
    /// written with plain loads and stores. The outputs are moved in, so
    /// nothing else can reach them during the launch; only the executor
    /// makes windows, disjoint across chunks.
    ///
    /// Meant for launches where [`CpuDevice::can_partition`] holds; for any
    /// other the whole grid is one chunk run on the calling thread (always
    /// correct, never parallel).
    pub fn execute_partitioned<O, F>(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        outputs: O,
        chunk_body: F,
    ) -> Result<(), LaunchError>
    where
        O: Outputs,
        F: for<'c> Fn(&'c Chunk, O::Windows<'c>) + Sync,
    {
        check_independent(kernel)?;
        let partition = self.can_partition(kernel, &grid);
        let Some(launch) = plan(kernel, grid, &LaunchLimits::cpu(kernel))? else {
            return Ok(());
        };
        let [wx, wy, wz] = kernel.workgroup_size.map(|n| n as usize);
        let shape = Shape { grid_dim: launch.groups_dim(), block_dim: Dim3::new(wx, wy, wz) };
        let total_groups = shape.grid_dim.x * shape.grid_dim.y * shape.grid_dim.z;
        let groups_per_chunk = if partition { groups_per_chunk(shape) } else { total_groups.max(1) };
        self.timed(&kernel.name, || {
            run_chunks(kernel, total_groups, groups_per_chunk, |start, end| {
                // On a 1-D grid, the invocations of workgroups start..end have
                // exactly these global x ids; chunks cover disjoint workgroup
                // ranges, so their windows are disjoint. Unpartitioned, the
                // single chunk owns everything.
                let x_range =
                    if partition { start * shape.block_dim.x..end * shape.block_dim.x } else { 0..usize::MAX };
                let chunk = Chunk { shape, start, end, owned_x: partition.then(|| x_range.clone()) };
                // SAFETY: the windows live only during this call (the body is
                // higher-ranked over their lifetime, and they are neither Send
                // nor Sync), this chunk runs on this thread, no other chunk's
                // `x_range` overlaps this one (see above; with one chunk there
                // is no other), and `outputs` was moved in, so no code outside
                // the windows can access the outputs during the launch.
                let windows = unsafe { outputs.windows(x_range, WindowToken::new()) };
                chunk_body(&chunk, windows)
            })
        })
    }
}

/// A contiguous run of workgroups of one launch, handed to one thread.
pub struct Chunk {
    shape: Shape,
    start: usize,
    end: usize,
    /// On a partitioned launch, the chunk's `global_id().x` values, which
    /// are also the elements its windows own.
    owned_x: Option<Range<usize>>,
}

impl Chunk {
    /// The `global_id().x` values of the chunk's invocations, in order,
    /// when the launch is partitioned (1-D): exactly the elements each of
    /// the chunk's [`OwnedChunk`](super::OwnedChunk) windows owns (before
    /// clipping to the buffer). `None` when the whole grid is one
    /// unpartitioned chunk.
    ///
    /// The generated chunk-slice body (`cpu_chunk`) runs the chunk as one
    /// loop over this range when every buffer covers it.
    #[inline]
    pub fn x_range(&self) -> Option<Range<usize>> {
        self.owned_x.clone()
    }

    /// Runs `body` for each invocation of the chunk, in order.
    #[inline(always)]
    pub fn for_each<F: Fn(&Invocation)>(&self, body: F) {
        run_chunk(self.shape, self.start, self.end, &body)
    }
}

/// `execute` and `execute_partitioned` run invocations independently: a
/// kernel the compiler marked cooperative (barriers, shared memory) would
/// hang or misbehave there, so it is refused.
fn check_independent(kernel: &'static KernelInfo) -> Result<(), LaunchError> {
    match kernel.cpu {
        CpuPlan::Independent | CpuPlan::OwnElement { .. } => Ok(()),
        CpuPlan::Cooperative { .. } => Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: "the kernel is cooperative (KernelInfo::cpu) but was launched with independent invocations".into(),
        }),
    }
}

/// The logical launch geometry.
#[derive(Clone, Copy)]
struct Shape {
    grid_dim: Dim3,
    block_dim: Dim3,
}

fn run_independent<F: Fn(&Invocation) + Sync>(
    kernel: &'static KernelInfo,
    shape: Shape,
    body: &F,
) -> Result<(), LaunchError> {
    let total_groups = shape.grid_dim.x * shape.grid_dim.y * shape.grid_dim.z;
    run_chunks(kernel, total_groups, groups_per_chunk(shape), |start, end| run_chunk(shape, start, end, body))
}

/// A race-checked launch: every invocation in order on the calling thread,
/// each announced to the race detector, which the outputs' accesses report
/// to (`racecheck.rs`).
fn run_race_checked<F: Fn(&Invocation)>(
    kernel: &'static KernelInfo,
    shape: Shape,
    body: &F,
) -> Result<(), LaunchError> {
    let total_groups = shape.grid_dim.x * shape.grid_dim.y * shape.grid_dim.z;
    let _recording = racecheck::Recording::start(shape.grid_dim, shape.block_dim);
    run_captured(|| {
        run_chunk(shape, 0, total_groups, &|inv: &Invocation| {
            racecheck::enter(inv.global_id, inv.block_id, inv.thread_id);
            body(inv)
        })
    })
    .map_err(|c| c.into_error(kernel))?;
    match racecheck::end() {
        Some(race) => Err(LaunchError::DataRace { kernel: &kernel.name, race: Box::new(race) }),
        None => Ok(()),
    }
}

/// Workgroups per chunk: a few chunks per rayon thread, none too small.
fn groups_per_chunk(shape: Shape) -> usize {
    let total_groups = shape.grid_dim.x * shape.grid_dim.y * shape.grid_dim.z;
    let group_invocations = shape.block_dim.x * shape.block_dim.y * shape.block_dim.z;
    let min_groups = MIN_INVOCATIONS_PER_CHUNK.div_ceil(group_invocations).max(1);
    let target_chunks = rayon::current_num_threads() * CHUNKS_PER_THREAD;
    total_groups.div_ceil(target_chunks).max(min_groups)
}

/// Runs `run(start, end)` over chunks of `groups_per_chunk` workgroups in
/// parallel, turning the first panic into `LaunchError::CpuPanic`.
fn run_chunks(
    kernel: &'static KernelInfo,
    total_groups: usize,
    groups_per_chunk: usize,
    run: impl Fn(usize, usize) + Sync,
) -> Result<(), LaunchError> {
    let chunks = total_groups.div_ceil(groups_per_chunk);
    let to_error = |c: super::panic_capture::Captured| c.into_error(kernel);
    if chunks == 1 {
        // Small launch: stay on the calling thread, no rayon round trip.
        return run_captured(|| run(0, total_groups)).map_err(to_error);
    }
    let failed = AtomicBool::new(false);
    let first_panic = Mutex::new(None);
    (0..chunks).into_par_iter().for_each(|chunk| {
        // After a panic the launch has failed: skip the remaining chunks.
        if failed.load(Ordering::Relaxed) {
            return;
        }
        let start = chunk * groups_per_chunk;
        let end = (start + groups_per_chunk).min(total_groups);
        if let Err(p) = run_captured(|| run(start, end)) {
            failed.store(true, Ordering::Relaxed);
            let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert(p);
        }
    });
    match first_panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(p) => Err(to_error(p)),
        None => Ok(()),
    }
}

/// Runs workgroups `start..end` (linear, x fastest) and all their
/// invocations.
#[inline(always)]
fn run_chunk<F: Fn(&Invocation)>(shape: Shape, start: usize, end: usize, body: &F) {
    let Shape { grid_dim, block_dim } = shape;
    // The only divisions: locating the chunk's first workgroup.
    let mut bx = start % grid_dim.x;
    let mut by = (start / grid_dim.x) % grid_dim.y;
    let mut bz = start / (grid_dim.x * grid_dim.y);
    for _ in start..end {
        let block_id = Dim3::new(bx, by, bz);
        let base = Dim3::new(bx * block_dim.x, by * block_dim.y, bz * block_dim.z);
        for tz in 0..block_dim.z {
            for ty in 0..block_dim.y {
                for tx in 0..block_dim.x {
                    body(&Invocation {
                        global_id: Dim3::new(base.x + tx, base.y + ty, base.z + tz),
                        thread_id: Dim3::new(tx, ty, tz),
                        block_id,
                        block_dim,
                        grid_dim,
                    });
                }
            }
        }
        bx += 1;
        if bx == grid_dim.x {
            bx = 0;
            by += 1;
            if by == grid_dim.y {
                by = 0;
                bz += 1;
            }
        }
    }
}
