//! Timing launches on a GPU (the GPU half of [`crate::Device::time`]) and
//! submitting compute passes, which every launch and
//! [`crate::Device::run_compute_pass`] go through.
//!
//! While a timing scope is open, each pass gets timestamp writes at its
//! start and end into the scope's query sets (two queries per pass, sets of
//! [`QUERIES_PER_SET`]); closing the scope resolves them and reads them
//! back. Without `TIMESTAMP_QUERY`, each pass is waited for and timed on
//! the wall clock instead.

use super::GpuDevice;
use crate::error::DeviceError;
use crate::timing::Clock;
use crate::Device;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Queries per query set (two per pass); wgpu allows up to 4096.
const QUERIES_PER_SET: u32 = 512;

/// The open timing scope of a device, if any.
#[derive(Default)]
pub(crate) struct GpuTiming {
    scope: Mutex<Option<Scope>>,
}

struct Scope {
    /// `#id (name)` of the device, for the error of a second scope.
    device: String,
    clock: Clock,
    /// Timestamps: the query sets, each holding `QUERIES_PER_SET / 2` passes.
    sets: Vec<Arc<wgpu::QuerySet>>,
    /// Timestamps: each pass's label (the kernel's name) and whether it
    /// was submitted (a pass whose recording failed has no timestamps).
    submitted: Vec<(String, bool)>,
    /// Wall clock: each pass's label and time.
    wall: Vec<(String, Duration)>,
}

/// How one pass is timed.
enum TimedPass {
    /// No scope is open.
    Untimed,
    /// Pass `index` of the scope writes timestamps `2 * (index % per set)`
    /// and the next one into `set`.
    Timestamps { set: Arc<wgpu::QuerySet>, index: usize },
    /// The pass is waited for and timed on the wall clock.
    Wall,
}

impl GpuTiming {
    fn lock(&self) -> MutexGuard<'_, Option<Scope>> {
        // Every update is a single assignment or push: a poisoned scope is
        // still consistent.
        self.scope.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl GpuDevice {
    /// Opens the timing scope of `Device::time`.
    pub(crate) fn begin_timing(&self, device: &Device) -> Result<(), DeviceError> {
        self.check_alive()?;
        let mut scope = self.shared.timing.lock();
        if let Some(open) = &*scope {
            return Err(DeviceError::TimingInProgress { device: open.device.clone() });
        }
        let wall_only = self.shared.wall_clock_only.load(std::sync::atomic::Ordering::Relaxed);
        let clock = if self.features().contains(wgpu::Features::TIMESTAMP_QUERY) && !wall_only {
            Clock::GpuTimestamps
        } else {
            Clock::Wall
        };
        *scope =
            Some(Scope { device: device.describe(), clock, sets: Vec::new(), submitted: Vec::new(), wall: Vec::new() });
        Ok(())
    }

    /// Closes the scope without reading anything (the closure panicked).
    pub(crate) fn abandon_timing(&self) {
        self.shared.timing.lock().take();
    }

    /// Closes the scope: waits for the device, then reads the timestamps
    /// back. Returns the clock and each pass's label and time, in order.
    pub(crate) fn end_timing(&self) -> Result<(Clock, Vec<(String, Duration)>), DeviceError> {
        let Some(scope) = self.shared.timing.lock().take() else {
            return Err(DeviceError::Gpu { message: "internal error: no timing scope is open".into() });
        };
        match scope.clock {
            Clock::Wall => {
                self.synchronize()?;
                Ok((Clock::Wall, scope.wall))
            }
            Clock::GpuTimestamps => {
                let ticks =
                    self.resolve_timestamps(&scope.sets, scope.submitted.len()).map_err(|e| self.explain_device(e))?;
                let period = f64::from(self.queue().get_timestamp_period());
                let durations = scope
                    .submitted
                    .into_iter()
                    .enumerate()
                    .filter(|(_, (_, submitted))| *submitted)
                    .map(|(i, (label, _))| {
                        let ns = ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period;
                        (label, Duration::from_nanos(ns.round() as u64))
                    })
                    .collect();
                Ok((Clock::GpuTimestamps, durations))
            }
        }
    }

    /// The timestamps of the first `passes` passes (two each), after all
    /// work queued so far.
    fn resolve_timestamps(&self, sets: &[Arc<wgpu::QuerySet>], passes: usize) -> Result<Vec<u64>, DeviceError> {
        let queries = 2 * passes as u64;
        if queries == 0 {
            self.synchronize()?;
            return Ok(Vec::new());
        }
        let device = self.wgpu_device();
        let gpu_err = |message| DeviceError::Gpu { message };
        let readback = self
            .capture(|| {
                let size = queries * 8;
                let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("onekernel timestamps"),
                    size,
                    usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                });
                let readback = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("onekernel timestamps"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let mut encoder = device.create_command_encoder(&Default::default());
                for (k, set) in sets.iter().enumerate() {
                    let first = k as u64 * u64::from(QUERIES_PER_SET);
                    let count = (queries - first).min(u64::from(QUERIES_PER_SET)) as u32;
                    // Each set's results start at a multiple of 512 * 8
                    // bytes, which satisfies the 256-byte alignment.
                    encoder.resolve_query_set(set, 0..count, &resolve, first * 8);
                }
                encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, size);
                self.queue().submit([encoder.finish()]);
                readback
            })
            .map_err(gpu_err)?;
        self.map_for_reading(&readback, "reading the timestamps back", || self.synchronize())?;
        let ticks = {
            let view = readback.get_mapped_range(..).map_err(|e| gpu_err(e.to_string()))?;
            view.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect()
        };
        readback.unmap();
        Ok(ticks)
    }

    /// How the next pass, `label`, is timed (allocating its queries).
    fn next_pass(&self, label: &str) -> Result<TimedPass, String> {
        let mut guard = self.shared.timing.lock();
        let Some(scope) = guard.as_mut() else { return Ok(TimedPass::Untimed) };
        match scope.clock {
            Clock::Wall => Ok(TimedPass::Wall),
            Clock::GpuTimestamps => {
                let index = scope.submitted.len();
                let per_set = (QUERIES_PER_SET / 2) as usize;
                if index / per_set == scope.sets.len() {
                    let set = self.capture(|| {
                        self.wgpu_device().create_query_set(&wgpu::QuerySetDescriptor {
                            label: Some("onekernel timestamps"),
                            ty: wgpu::QueryType::Timestamp,
                            count: QUERIES_PER_SET,
                        })
                    })?;
                    scope.sets.push(Arc::new(set));
                }
                scope.submitted.push((label.to_owned(), false));
                Ok(TimedPass::Timestamps { set: Arc::clone(&scope.sets[index / per_set]), index })
            }
        }
    }

    /// Records one compute pass with `record` and submits it; inside a
    /// timing scope, times it. Errors are wgpu's messages.
    pub(crate) fn submit_pass(
        &self,
        label: &str,
        record: impl FnOnce(&mut wgpu::ComputePass<'_>),
    ) -> Result<(), String> {
        let timed = self.next_pass(label)?;
        let per_set = (QUERIES_PER_SET / 2) as usize;
        let start = Instant::now();
        let submission = self.capture(|| {
            let mut encoder =
                self.wgpu_device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) });
            {
                let timestamp_writes = match &timed {
                    TimedPass::Timestamps { set, index } => {
                        let first = 2 * (index % per_set) as u32;
                        Some(wgpu::ComputePassTimestampWrites {
                            query_set: set,
                            beginning_of_pass_write_index: Some(first),
                            end_of_pass_write_index: Some(first + 1),
                        })
                    }
                    TimedPass::Untimed | TimedPass::Wall => None,
                };
                let mut pass =
                    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes });
                record(&mut pass);
            }
            self.queue().submit([encoder.finish()])
        })?;
        match timed {
            TimedPass::Untimed => {}
            TimedPass::Timestamps { index, .. } => {
                if let Some(scope) = self.shared.timing.lock().as_mut()
                    && let Some((_, s)) = scope.submitted.get_mut(index)
                {
                    *s = true;
                }
            }
            TimedPass::Wall => {
                self.wait(Some(submission)).map_err(|e| e.to_string())?;
                let elapsed = start.elapsed();
                if let Some(scope) = self.shared.timing.lock().as_mut() {
                    scope.wall.push((label.to_owned(), elapsed));
                }
            }
        }
        Ok(())
    }
}
