//! GPU buffer storage: creation, uploads, read-backs (blocking and `async`)
//! through a per-device pool of staging buffers, and copies.

use super::GpuDevice;
use crate::error::{BufferError, DeviceError};
use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The wgpu buffer behind a `Buffer<T>` on a GPU device. A buffer of length
/// zero has no wgpu buffer at all (WebGPU has no zero-sized bindings; a
/// launch binds a stand-in, see `launch.rs`).
#[derive(Debug)]
pub(crate) struct GpuMemory {
    pub buffer: Option<wgpu::Buffer>,
}

const USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// Staging buffers are pooled by size class: the next power of two of the
/// bytes read, at least this.
const SMALLEST_STAGING: u64 = 4096;
/// Larger staging buffers are used once and dropped.
const LARGEST_POOLED: u64 = 64 << 20;
/// Free staging buffers kept per size class.
const POOLED_PER_CLASS: usize = 4;

/// Free `MAP_READ | COPY_DST` buffers, keyed by size class, so that reading
/// a buffer again allocates nothing.
#[derive(Default)]
pub(crate) struct StagingPool {
    free: Mutex<HashMap<u64, Vec<wgpu::Buffer>>>,
    /// Staging buffers created so far (for tests: reuse means this stays put).
    created: AtomicUsize,
}

impl StagingPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<wgpu::Buffer>>> {
        // Inserts and removals are single calls: a poisoned map is intact.
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn class(bytes: u64) -> u64 {
        bytes.max(SMALLEST_STAGING).checked_next_power_of_two().unwrap_or(bytes)
    }

    /// Number of staging buffers created on this device so far.
    pub fn created(&self) -> usize {
        self.created.load(Ordering::Relaxed)
    }
}

/// Hands a staging buffer back to the pool when dropped, unless it is
/// still mapped (an error path), too large to keep, or the class is full.
struct Staging<'d> {
    gpu: &'d GpuDevice,
    buffer: Option<wgpu::Buffer>,
    mapped: bool,
}

impl Staging<'_> {
    fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("present until drop")
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        let Some(buffer) = self.buffer.take() else { return };
        if self.mapped || buffer.size() > LARGEST_POOLED {
            return;
        }
        let mut free = self.gpu.staging.lock();
        let list = free.entry(buffer.size()).or_default();
        if list.len() < POOLED_PER_CLASS {
            list.push(buffer);
        }
    }
}

/// The result of a `map_async` callback, delivered to whoever waits for it:
/// a blocking reader (through `device.poll`) or a future (through its
/// waker, woken by the callback that the device's poller thread runs).
#[derive(Default)]
pub(crate) struct Completion {
    state: Mutex<CompletionState>,
}

/// The outcome once known, and the waker of the future waiting for it.
type CompletionState = (Option<Result<(), String>>, Option<Waker>);

/// What an `async` read hands to the poller thread.
type Watch = (wgpu::SubmissionIndex, Arc<Completion>);

impl Completion {
    fn lock(&self) -> std::sync::MutexGuard<'_, CompletionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records the outcome (the first one wins) and wakes the waiting future.
    fn complete(&self, result: Result<(), String>) {
        let waker = {
            let mut state = self.lock();
            if state.0.is_some() {
                return;
            }
            state.0 = Some(result);
            state.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn take(&self) -> Option<Result<(), String>> {
        self.lock().0.take()
    }

    fn is_done(&self) -> bool {
        self.lock().0.is_some()
    }
}

/// Waits for a [`Completion`] without blocking the thread.
struct Completed(Arc<Completion>);

impl Future for Completed {
    type Output = Result<(), String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.0.lock();
        match state.0.take() {
            Some(r) => Poll::Ready(r),
            None => {
                match &state.1 {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => state.1 = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

/// The device's poller: a thread, started on the first `async` read, that
/// waits (`device.poll`) for each submission an `async` read is waiting on,
/// which runs the read's map callback and so wakes its future. Blocking
/// reads poll on their own thread and never involve it. The thread ends
/// when the device is dropped (its channel closes).
#[derive(Default)]
pub(crate) struct Poller {
    sender: Mutex<Option<mpsc::Sender<Watch>>>,
}

impl Poller {
    fn watch(&self, device: &wgpu::Device, submission: wgpu::SubmissionIndex, done: Arc<Completion>) {
        let mut sender = self.sender.lock().unwrap_or_else(|p| p.into_inner());
        let tx = sender.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel::<Watch>();
            let device = device.clone();
            let spawned = std::thread::Builder::new().name("onekernel-poller".into()).spawn(move || {
                for (submission, done) in rx {
                    let polled = device
                        .poll(wgpu::PollType::Wait { submission_index: Some(submission), timeout: None })
                        .map(drop)
                        .map_err(|e| e.to_string());
                    match polled {
                        Err(e) => done.complete(Err(format!("waiting for the GPU failed: {e}"))),
                        // The callback runs during that poll; if a backend
                        // defers it, one more full wait covers it.
                        Ok(()) if !done.is_done() => {
                            let again = device.poll(wgpu::PollType::wait_indefinitely()).map(drop);
                            if !done.is_done() {
                                done.complete(Err(match again {
                                    Err(e) => format!("waiting for the GPU failed: {e}"),
                                    Ok(()) => "the map callback never ran".into(),
                                }));
                            }
                        }
                        Ok(()) => {}
                    }
                }
            });
            if let Err(e) = spawned {
                // No thread: fail this read (and the next ones) instead of
                // leaving them pending forever.
                let message = format!("cannot start the GPU poller thread: {e}");
                let (tx, rx) = mpsc::channel::<Watch>();
                std::thread::spawn(move || {
                    for (_, done) in rx {
                        done.complete(Err(message.clone()));
                    }
                });
                return tx;
            }
            tx
        });
        if let Err(mpsc::SendError((_, done))) = tx.send((submission, done)) {
            done.complete(Err("the GPU poller thread has stopped".into()));
        }
    }
}

impl GpuDevice {
    /// Checks `bytes` against `max_buffer_size`.
    fn check_size(&self, len: usize, bytes: u64) -> Result<(), BufferError> {
        if bytes > self.limits().max_buffer_size {
            return Err(BufferError::TooLarge {
                len,
                max_bytes: self.limits().max_buffer_size,
                device: self.describe(),
            });
        }
        Ok(())
    }

    /// A buffer holding `data` (`len` elements of 4 bytes). (Not
    /// `create_buffer_init`, which panics on a lost device.)
    pub(crate) fn upload(&self, len: usize, data: &[u8]) -> Result<GpuMemory, BufferError> {
        let memory = self.zeroed(len)?;
        self.write(&memory, 0, data)?;
        Ok(memory)
    }

    /// A zero-filled buffer of `len` 4-byte elements.
    pub(crate) fn zeroed(&self, len: usize) -> Result<GpuMemory, BufferError> {
        let bytes = (len as u64).saturating_mul(4);
        if bytes == 0 {
            return Ok(GpuMemory { buffer: None });
        }
        self.check_size(len, bytes)?;
        self.check_alive()?;
        // wgpu zero-initialises buffers, so no upload is needed.
        let buffer = self
            .capture(|| {
                self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("onekernel buffer"),
                    size: bytes,
                    usage: USAGE,
                    mapped_at_creation: false,
                })
            })
            .map_err(|message| BufferError::Gpu { operation: "creating a buffer", message })?;
        Ok(GpuMemory { buffer: Some(buffer) })
    }

    /// Queues a write of `data` at byte `offset`; ordered after earlier
    /// launches. The caller checked the range.
    pub(crate) fn write(&self, memory: &GpuMemory, offset: u64, data: &[u8]) -> Result<(), BufferError> {
        let Some(buffer) = &memory.buffer else { return Ok(()) };
        if data.is_empty() {
            return Ok(());
        }
        self.check_alive()?;
        self.capture(|| self.queue().write_buffer(buffer, offset, data))
            .map_err(|message| BufferError::Gpu { operation: "writing a buffer", message })
    }

    /// Queues a copy of `bytes` bytes from `src` at `src_offset` to `dst` at
    /// `dst_offset`; ordered with launches. The caller checked the ranges.
    pub(crate) fn copy(
        &self,
        src: &GpuMemory,
        src_offset: u64,
        dst: &GpuMemory,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<(), BufferError> {
        let (Some(src), Some(dst)) = (&src.buffer, &dst.buffer) else { return Ok(()) };
        if bytes == 0 {
            return Ok(());
        }
        self.check_alive()?;
        self.capture(|| {
            let mut encoder = self
                .wgpu_device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("onekernel copy") });
            encoder.copy_buffer_to_buffer(src, src_offset, dst, dst_offset, bytes);
            self.queue().submit([encoder.finish()]);
        })
        .map_err(|message| BufferError::Gpu { operation: "copying a buffer", message })
    }

    /// A staging buffer of at least `bytes` bytes, from the pool if it has one.
    fn staging(&self, bytes: u64) -> Result<Staging<'_>, BufferError> {
        let class = StagingPool::class(bytes);
        let size = if class <= self.limits().max_buffer_size { class } else { bytes };
        if let Some(buffer) = self.staging.lock().get_mut(&size).and_then(Vec::pop) {
            return Ok(Staging { gpu: self, buffer: Some(buffer), mapped: false });
        }
        let buffer = self
            .capture(|| {
                self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("onekernel read-back"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .map_err(|message| BufferError::Gpu { operation: "creating a read-back buffer", message })?;
        self.staging.created.fetch_add(1, Ordering::Relaxed);
        Ok(Staging { gpu: self, buffer: Some(buffer), mapped: false })
    }

    /// Copies `bytes` of `memory` into a staging buffer after all work queued
    /// so far (the queue runs in order), and asks for it to be mapped;
    /// `done` completes when it is.
    fn start_read(
        &self,
        memory: &GpuMemory,
        bytes: Range<u64>,
    ) -> Result<(Staging<'_>, wgpu::SubmissionIndex, Arc<Completion>), BufferError> {
        let buffer = memory.buffer.as_ref().ok_or_else(|| BufferError::Gpu {
            operation: "reading a buffer",
            message: "internal error: reading bytes of an empty buffer".into(),
        })?;
        self.check_alive()?;
        let size = bytes.end - bytes.start;
        let mut staging = self.staging(size)?;
        let submission = self
            .capture(|| {
                let mut encoder = self
                    .wgpu_device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("onekernel read-back") });
                encoder.copy_buffer_to_buffer(buffer, bytes.start, staging.buffer(), 0, size);
                self.queue().submit([encoder.finish()])
            })
            .map_err(|message| BufferError::Gpu { operation: "reading a buffer", message })?;
        let done = Arc::new(Completion::default());
        let callback_done = Arc::clone(&done);
        staging.mapped = true;
        staging
            .buffer()
            .map_async(wgpu::MapMode::Read, 0..size, move |r| callback_done.complete(r.map_err(|e| e.to_string())));
        Ok((staging, submission, done))
    }

    /// Copies the mapped staging buffer into `out` and unmaps it.
    fn finish_read(mut staging: Staging<'_>, result: Result<(), String>, out: &mut [u8]) -> Result<(), BufferError> {
        let map_err = |message| BufferError::Gpu { operation: "mapping a buffer for reading", message };
        result.map_err(map_err)?;
        {
            let view = staging.buffer().get_mapped_range(0..out.len() as u64).map_err(|e| map_err(e.to_string()))?;
            out.copy_from_slice(&view);
        }
        staging.buffer().unmap();
        staging.mapped = false;
        Ok(())
    }

    /// Copies `bytes` of the buffer into `out` after all work queued so far,
    /// blocking until the GPU is done.
    pub(crate) fn read(&self, memory: &GpuMemory, bytes: Range<u64>, out: &mut [u8]) -> Result<(), BufferError> {
        if out.is_empty() {
            return Ok(());
        }
        let (staging, submission, done) = self.start_read(memory, bytes)?;
        self.wait(Some(submission))?;
        let mut result = done.take();
        if result.is_none() {
            // The callback runs during a poll once the copy is done; one
            // more full wait covers any backend that defers it.
            self.wait(None)?;
            result = done.take();
        }
        let result = result.unwrap_or_else(|| Err("the map callback never ran".into()));
        // A device lost while waiting fails the map: say so.
        self.check_alive()?;
        Self::finish_read(staging, result, out)
    }

    /// Like [`GpuDevice::read`], without blocking: the device's poller
    /// thread waits for the GPU and wakes the returned future.
    pub(crate) async fn read_async(
        &self,
        memory: &GpuMemory,
        bytes: Range<u64>,
        out: &mut [u8],
    ) -> Result<(), BufferError> {
        if out.is_empty() {
            return Ok(());
        }
        let (staging, submission, done) = self.start_read(memory, bytes)?;
        self.poller.watch(self.wgpu_device(), submission, Arc::clone(&done));
        let result = Completed(done).await;
        let result = result.map_err(|message| {
            if message.starts_with("waiting for the GPU failed") {
                BufferError::Device(DeviceError::Poll { reason: message })
            } else {
                BufferError::Gpu { operation: "mapping a buffer for reading", message }
            }
        });
        self.check_alive()?;
        match result {
            Ok(()) => Self::finish_read(staging, Ok(()), out),
            Err(e) => Err(e),
        }
    }
}
