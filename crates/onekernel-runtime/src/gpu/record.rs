//! Recording launches into the program's own wgpu work
//! ([`crate::Device::record`], [`crate::Device::record_pass`]).
//!
//! While a recording scope is open on a thread, every launch on that
//! device from that thread is checked and bound as usual (pipelines and
//! bind groups are made at once, so errors are the launch's `Err`), then
//! kept here instead of submitted. When the closure returns, the scope
//! records them, in launch order, into the program's encoder (one compute
//! pass each, then the copy of a checked launch's report into a read-back
//! buffer) or into its open compute pass. Nothing is submitted: the
//! program's `queue.submit` runs them in its own order with its own
//! passes.
//!
//! Recorded launches never use the bind cache: a cached uniform buffer is
//! rewritten with `queue.write_buffer`, which runs at the next submit,
//! before every command of it, so two recorded launches sharing one would
//! both see the second's block. Instead each scope has uniform arenas
//! ([`Arena`]): every recorded launch's block gets a slot of its own in
//! one (suballocated at the device's offset alignment, bound at its
//! offset), and the scope writes each arena once when it closes, which the
//! next submit (the program's at the latest) uploads before the encoder
//! runs. One buffer and one write per [`Arena::SLOTS`] launches instead of
//! one of each per launch: the host cost of recording GPT-2 small's 112
//! launches a decode step (`examples/gpt.rs`) was mostly these.

use super::launch::{check_report, PreparedDispatch};
use super::GpuDevice;
use crate::error::{DeviceError, LaunchError};
use onekernel_abi::{report, KernelInfo};
use std::cell::RefCell;

/// A launch kept for the program's encoder or pass.
pub(crate) struct RecordedLaunch {
    pub kernel: &'static KernelInfo,
    pub prepared: PreparedDispatch,
    /// A checked launch's report buffer.
    pub report: Option<wgpu::Buffer>,
    /// A printing kernel's print buffer and its size in words.
    pub prints: Option<(super::memory::GpuMemory, u32)>,
}

/// The `dropped` word of a print buffer recorded into an encoder until
/// the encoder clears it, just before the launch's pass: a buffer still
/// holding it was not run.
pub(crate) const NOT_RUN: u32 = u32::MAX;

/// A recorded launch's print buffer: the kernel, the buffer, its words,
/// and whether the encoder clears its `dropped` word (see [`NOT_RUN`]).
type RecordedPrints = (&'static KernelInfo, super::memory::GpuMemory, u32, bool);

/// An open scope: the device it records and what it kept so far.
struct Scope {
    device: u64,
    /// Into a compute pass (no copies possible there) or an encoder.
    into_pass: bool,
    launches: Vec<RecordedLaunch>,
    /// The uniform arenas of this scope's launches, the last one filling.
    arenas: Vec<Arena>,
}

/// One buffer holding the uniform blocks of a scope's recorded launches,
/// each at its own aligned offset, and the bytes to write into it when the
/// scope closes. A scope's arenas are its own: blocks of a recording that
/// the program submits later never share a buffer with another's.
struct Arena {
    buffer: wgpu::Buffer,
    bytes: Vec<u8>,
}

impl Arena {
    /// Slots of the largest alignment (256 bytes) an arena holds.
    const SLOTS: u64 = 256;
}

/// A slot of a scope's uniform arena for `block` (the launch's uniform
/// block; `storage`: bound as a storage buffer), its bytes kept for the
/// write when the scope closes: the arena's buffer and the slot's offset.
/// `None` when no scope of `gpu` is open on this thread. Call it inside
/// the launch's `capture` (it may make a buffer).
pub(crate) fn uniform_slot(gpu: &GpuDevice, block: &[u8], storage: bool) -> Option<(wgpu::Buffer, u64)> {
    let limits = gpu.limits();
    let align = u64::from(match storage {
        true => limits.min_storage_buffer_offset_alignment,
        false => limits.min_uniform_buffer_offset_alignment,
    })
    .max(16);
    SCOPES.with_borrow_mut(|scopes| {
        let scope = scopes.iter_mut().find(|s| s.device == gpu.id())?;
        let len = block.len() as u64;
        let fits = |a: &Arena| (a.bytes.len() as u64).next_multiple_of(align) + len <= a.buffer.size();
        if !scope.arenas.last().is_some_and(fits) {
            let size = (256 * Arena::SLOTS).max(len.next_multiple_of(16));
            let buffer = gpu.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                label: Some("onekernel recorded uniforms"),
                size,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            scope.arenas.push(Arena { buffer, bytes: Vec::with_capacity(size as usize) });
        }
        let arena = scope.arenas.last_mut().expect("an arena");
        let offset = (arena.bytes.len() as u64).next_multiple_of(align);
        arena.bytes.resize(offset as usize, 0);
        arena.bytes.extend_from_slice(block);
        Some((arena.buffer.clone(), offset))
    })
}

thread_local! {
    /// The scopes open on this thread (one per device at most).
    static SCOPES: RefCell<Vec<Scope>> = const { RefCell::new(Vec::new()) };
}

/// Whether launches on `device` from this thread are being recorded:
/// `Some(true)` into a compute pass, `Some(false)` into an encoder.
pub(crate) fn target(device: u64) -> Option<bool> {
    SCOPES.with_borrow(|scopes| scopes.iter().find(|s| s.device == device).map(|s| s.into_pass))
}

/// Keeps a launch of the open scope of `device`.
pub(crate) fn keep(device: u64, launch: RecordedLaunch) {
    SCOPES.with_borrow_mut(|scopes| {
        if let Some(s) = scopes.iter_mut().find(|s| s.device == device) {
            s.launches.push(launch);
        }
    });
}

/// Opens a scope on `gpu` for this thread.
fn open(gpu: &GpuDevice, into_pass: bool) -> Result<(), DeviceError> {
    gpu.check_alive()?;
    SCOPES.with_borrow_mut(|scopes| {
        if scopes.iter().any(|s| s.device == gpu.id()) {
            return Err(DeviceError::RecordingInProgress { device: gpu.describe() });
        }
        scopes.push(Scope { device: gpu.id(), into_pass, launches: Vec::new(), arenas: Vec::new() });
        Ok(())
    })
}

/// Closes the scope of `device`: what it kept, and its uniform arenas.
fn close(device: u64) -> (Vec<RecordedLaunch>, Vec<Arena>) {
    SCOPES.with_borrow_mut(|scopes| match scopes.iter().position(|s| s.device == device) {
        Some(i) => {
            let scope = scopes.remove(i);
            (scope.launches, scope.arenas)
        }
        None => (Vec::new(), Vec::new()),
    })
}

impl GpuDevice {
    /// Writes a closed scope's uniform arenas (one `write_buffer` each),
    /// uploaded at the next submit, before the recorded work runs.
    fn write_arenas(&self, arenas: Vec<Arena>) -> Result<(), DeviceError> {
        self.capture(|| {
            for Arena { buffer, mut bytes } in arenas {
                // `write_buffer` takes whole words; the arena owns its bytes.
                bytes.resize(bytes.len().next_multiple_of(4), 0);
                if !bytes.is_empty() {
                    self.queue().write_buffer(&buffer, 0, &bytes);
                }
            }
        })
        .map_err(|message| DeviceError::Gpu { message })
    }
}

/// Closes the scope even if the closure panics.
struct CloseOnDrop(u64);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        close(self.0);
    }
}

/// What [`Device::record`](crate::Device::record) and
/// [`Device::record_pass`](crate::Device::record_pass) recorded: how many
/// launches, and the checks of the checked ones, which
/// [`Recorded::check`] reads once the program has submitted its work.
#[must_use = "a checked launch reports its errors through `Recorded::check`, after the encoder is submitted"]
#[derive(Debug)]
pub struct Recorded {
    gpu: crate::Device,
    launches: usize,
    /// Per checked launch: the kernel, and the read-back buffer the
    /// encoder copies its report into (made holding a sentinel, so that a
    /// check before the encoder ran says so instead of reading zeros).
    reports: Vec<(&'static KernelInfo, wgpu::Buffer)>,
    /// The print buffers of the recorded launches of kernels with
    /// `println!`/`assert!`, in launch order, until [`Recorded::check`]
    /// reads them.
    prints: std::sync::Mutex<Vec<RecordedPrints>>,
}

/// The byte a report's read-back buffer is filled with before the copy:
/// a report of all `0xFFFF_FFFF` words names check site 2^32 - 1, which no
/// kernel has, so it means the copy has not run.
const SENTINEL: u8 = 0xFF;

impl Recorded {
    /// The number of launches recorded (an empty grid records none).
    pub fn launches(&self) -> usize {
        self.launches
    }

    /// The number of checked launches among them (launches through a
    /// [`checked`](crate::Device::checked) handle), whose reports
    /// [`Recorded::check`] reads.
    pub fn checked_launches(&self) -> usize {
        self.reports.len()
    }

    /// The checks of the recorded checked launches, and the prints and
    /// panics of the recorded launches of kernels with `println!`/`assert!`:
    /// call it after submitting the encoder. It waits for the GPU (as a
    /// checked launch does), prints the lines of each printing launch (in
    /// launch order, each launch's sorted by invocation, as a launch that
    /// submits itself prints them at the next wait), then returns the first
    /// failure as the launch would have: a failed `assert!` or `panic!` as
    /// [`LaunchError::KernelPanic`], a check as
    /// [`LaunchError::OutOfBounds`], [`LaunchError::DivisionByZero`] or
    /// [`LaunchError::LoopBudget`]. A launch's lines are printed once: a
    /// second call prints nothing more. Without checked or printing
    /// launches it returns `Ok` at once.
    ///
    /// # Errors
    /// Those failures; [`LaunchError::Recording`] when a report or print
    /// buffer was not written because the encoder has not been submitted
    /// (submit it and call this again; launches recorded into a compute
    /// pass cannot tell, so call it after the submit); [`LaunchError::DeviceLost`] or
    /// [`LaunchError::Gpu`] when reading fails.
    pub fn check(&self) -> Result<(), LaunchError> {
        let crate::device::DeviceBackend::Gpu(gpu) = self.gpu.backend() else { return Ok(()) };
        let mut result = Ok(());
        {
            let mut prints = self.prints.lock().unwrap_or_else(|p| p.into_inner());
            let mut kept = Vec::new();
            for (kernel, memory, words, cleared) in prints.drain(..) {
                if cleared && !gpu.print_buffer_ran(kernel, &memory)? {
                    kept.push((kernel, memory, words, cleared));
                    if result.is_ok() {
                        result = Err(not_run(kernel, "its prints were not written"));
                    }
                    continue;
                }
                let r = gpu.drain_one(kernel, &memory, words);
                if result.is_ok() {
                    result = r;
                }
            }
            *prints = kept;
        }
        for &(kernel, ref staging) in &self.reports {
            let words = gpu.read_mapped_report(staging).map_err(|e| match e {
                DeviceError::Lost { .. } => LaunchError::DeviceLost { kernel: &kernel.name, error: e },
                other => LaunchError::Gpu { kernel: &kernel.name, message: other.to_string() },
            })?;
            if words.iter().all(|&w| w == u32::from_le_bytes([SENTINEL; 4])) {
                return result.and(Err(not_run(kernel, "its checks were not written")));
            }
            if result.is_ok() {
                result = check_report(kernel, words);
            }
        }
        result
    }
}

/// The `Err` of [`Recorded::check`] before the encoder ran.
fn not_run(kernel: &'static KernelInfo, what: &str) -> LaunchError {
    LaunchError::Recording {
        kernel: &kernel.name,
        problem: format!(
            "{what}: the encoder it was recorded into has not run (submit it with `queue.submit` before \
             `Recorded::check`)"
        ),
    }
}

impl GpuDevice {
    /// Runs `f` with launches on this device (from this thread) kept, then
    /// records them into `encoder`.
    pub(crate) fn record<R>(
        &self,
        device: &crate::Device,
        encoder: &mut wgpu::CommandEncoder,
        f: impl FnOnce() -> R,
    ) -> Result<(R, Recorded), DeviceError> {
        open(self, false)?;
        let guard = CloseOnDrop(self.id());
        let r = f();
        let (launches, arenas) = close(self.id());
        drop(guard);
        self.write_arenas(arenas)?;
        let n = launches.len();
        let mut reports = Vec::new();
        let mut prints = Vec::new();
        for launch in launches {
            if let Some((memory, words)) = launch.prints {
                if let Some(buffer) = &memory.buffer {
                    let dropped = u64::from(onekernel_abi::debug::print_buffer::DROPPED) * 4;
                    encoder.clear_buffer(buffer, dropped, Some(4));
                }
                prints.push((launch.kernel, memory, words, true));
            }
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some(&launch.kernel.name),
                    timestamp_writes: None,
                });
                launch.prepared.record(&mut pass);
            }
            if let Some(report) = launch.report {
                let size = u64::from(report::WORDS) * 4;
                let staging = self
                    .capture(|| {
                        let staging = self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                            label: Some("onekernel recorded report"),
                            size,
                            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: true,
                        });
                        let filled = staging
                            .get_mapped_range_mut(..)
                            .map(|mut view| view.copy_from_slice(&[SENTINEL; report::WORDS as usize * 4]));
                        staging.unmap();
                        filled.map(|()| staging).map_err(|e| e.to_string())
                    })
                    .and_then(|r| r)
                    .map_err(|message| DeviceError::Gpu { message })?;
                encoder.copy_buffer_to_buffer(&report, 0, &staging, 0, size);
                reports.push((launch.kernel, staging));
            }
        }
        Ok((r, Recorded { gpu: device.clone(), launches: n, reports, prints: std::sync::Mutex::new(prints) }))
    }

    /// Runs `f` with launches on this device (from this thread) kept, then
    /// records them into `pass`.
    pub(crate) fn record_pass<R>(
        &self,
        device: &crate::Device,
        pass: &mut wgpu::ComputePass<'_>,
        f: impl FnOnce() -> R,
    ) -> Result<(R, Recorded), DeviceError> {
        open(self, true)?;
        let guard = CloseOnDrop(self.id());
        let r = f();
        let (launches, arenas) = close(self.id());
        drop(guard);
        self.write_arenas(arenas)?;
        let n = launches.len();
        let mut prints = Vec::new();
        for launch in launches {
            launch.prepared.record(pass);
            if let Some((memory, words)) = launch.prints {
                prints.push((launch.kernel, memory, words, false));
            }
        }
        Ok((
            r,
            Recorded { gpu: device.clone(), launches: n, reports: Vec::new(), prints: std::sync::Mutex::new(prints) },
        ))
    }

    /// Whether the encoder a print buffer was recorded into has run (its
    /// `dropped` word no longer [`NOT_RUN`]).
    fn print_buffer_ran(
        &self,
        kernel: &'static KernelInfo,
        memory: &super::memory::GpuMemory,
    ) -> Result<bool, LaunchError> {
        let mut word = [0u8; 4];
        let at = u64::from(onekernel_abi::debug::print_buffer::DROPPED) * 4;
        self.read(memory, at..at + 4, &mut word).map_err(|e| self.buffer_failure(kernel, e))?;
        Ok(u32::from_le_bytes(word) != NOT_RUN)
    }

    /// Maps a recorded report's read-back buffer (after all submitted
    /// work) and returns its words.
    fn read_mapped_report(&self, staging: &wgpu::Buffer) -> Result<[u32; report::WORDS as usize], DeviceError> {
        self.check_alive()?;
        self.map_for_reading(staging, "reading a recorded launch's checks", || {
            self.wait(None).map_err(|e| self.explain_device(e))
        })?;
        let gpu_err = |message: String| DeviceError::Gpu { message };
        let mut words = [0u32; report::WORDS as usize];
        {
            let view = staging.get_mapped_range(..).map_err(|e| gpu_err(e.to_string()))?;
            for (w, b) in words.iter_mut().zip(view.chunks_exact(4)) {
                *w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
            }
        }
        staging.unmap();
        Ok(words)
    }
}
