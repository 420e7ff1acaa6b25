//! GPU buffer storage: creation, uploads, read-backs (blocking and `async`)
//! through a per-device pool of staging buffers, and copies.

use super::GpuDevice;
use crate::error::{BufferError, DeviceError};
use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
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
        let mut free = self.gpu.shared.staging.lock();
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
    /// Notified when the outcome is recorded, for [`Completion::wait_done`].
    recorded: Condvar,
}

/// How long a reader waits, once the GPU is done, for a map callback that
/// another thread's poll took: wgpu runs the callbacks on whichever thread
/// polls, after its poll has collected them, so this thread's poll can
/// return before that thread has run this read's callback (seen under
/// concurrent tests sharing one device). Far above the microseconds it
/// takes; a callback lost for good still ends in an error, not a hang.
const CALLBACK_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

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
        self.recorded.notify_all();
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

    /// Waits up to `timeout` for the outcome to be recorded; whether it is.
    fn wait_done(&self, timeout: std::time::Duration) -> bool {
        let state = self.lock();
        let (state, _) =
            self.recorded.wait_timeout_while(state, timeout, |s| s.0.is_none()).unwrap_or_else(|p| p.into_inner());
        state.0.is_some()
    }
}

/// Waits up to [`CALLBACK_GRACE`] for a map callback's outcome once the GPU
/// is done (`take(d)`: the outcome, waiting up to `d` for it), polling
/// `device` without blocking between waits of a millisecond: a callback
/// that a poll did not run (another thread's poll collected it, or the
/// backend resolves the mapping at a later poll) runs at the next one.
/// Waiting on the callback alone stalled reads for seconds each when
/// nothing else polled (the runtime's element-type test: 80-116 s beside
/// other tests, 0.5 s alone). Every read-back waits through this: buffer
/// reads, recorded launches' checks, timestamps.
fn await_map_callback<R>(device: &wgpu::Device, mut take: impl FnMut(std::time::Duration) -> Option<R>) -> Option<R> {
    let start = std::time::Instant::now();
    loop {
        if let Some(r) = take(std::time::Duration::from_millis(1)) {
            return Some(r);
        }
        if start.elapsed() >= CALLBACK_GRACE {
            return None;
        }
        let _ = device.poll(wgpu::PollType::Poll);
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
                            if await_map_callback(&device, |d| done.wait_done(d).then_some(())).is_none() {
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

/// wgpu copies and writes whole 4-byte words (`wgpu::COPY_BUFFER_ALIGNMENT`):
/// buffers are allocated rounded up to it, and reads, writes and copies of
/// elements smaller than a word (`f16`) are widened to the words around
/// them.
const WORD: u64 = wgpu::COPY_BUFFER_ALIGNMENT;

/// `n` rounded down to a whole word.
fn word_floor(n: u64) -> u64 {
    n - n % WORD
}

/// `n` rounded up to a whole word.
fn word_ceil(n: u64) -> u64 {
    n.div_ceil(WORD) * WORD
}

impl GpuDevice {
    /// Checks `bytes` against `max_buffer_size`.
    fn check_size(&self, len: usize, bytes: u64) -> Result<(), BufferError> {
        if bytes > self.limits().max_buffer_size || bytes == u64::MAX {
            return Err(BufferError::TooLarge {
                len,
                bytes,
                max_bytes: self.limits().max_buffer_size,
                device: self.describe(),
            });
        }
        Ok(())
    }

    /// A buffer of `len` elements holding `data`. (Not
    /// `create_buffer_init`, which panics on a lost device.)
    pub(crate) fn upload(&self, len: usize, data: &[u8]) -> Result<GpuMemory, BufferError> {
        let memory = self.zeroed(len, data.len() as u64)?;
        if (data.len() as u64).is_multiple_of(WORD) {
            self.write(&memory, 0, data)?;
        } else {
            // The allocation is rounded up to a word: so is the upload.
            let mut padded = data.to_vec();
            padded.resize(word_ceil(data.len() as u64) as usize, 0);
            self.write(&memory, 0, &padded)?;
        }
        Ok(memory)
    }

    /// A zero-filled buffer of `len` elements, `bytes` bytes (allocated
    /// rounded up to a whole word).
    pub(crate) fn zeroed(&self, len: usize, bytes: u64) -> Result<GpuMemory, BufferError> {
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
                    size: word_ceil(bytes),
                    usage: USAGE,
                    mapped_at_creation: false,
                })
            })
            .map_err(|message| BufferError::Gpu { operation: "creating a buffer", message })?;
        Ok(GpuMemory { buffer: Some(buffer) })
    }

    /// Queues a write of `data` at byte `offset`; ordered after earlier
    /// launches. The caller checked the range.
    ///
    /// A write that does not start and end on a word boundary (2-byte
    /// elements) first reads back the partial words at its ends (waiting
    /// for the work queued before it) and writes them whole.
    pub(crate) fn write(&self, memory: &GpuMemory, offset: u64, data: &[u8]) -> Result<(), BufferError> {
        let Some(buffer) = &memory.buffer else { return Ok(()) };
        if data.is_empty() {
            return Ok(());
        }
        self.check_alive()?;
        let end = offset + data.len() as u64;
        let widened;
        let (at, data) = if offset.is_multiple_of(WORD) && end.is_multiple_of(WORD) {
            (offset, data)
        } else {
            let (start, stop) = (word_floor(offset), word_ceil(end));
            let mut whole = vec![0u8; (stop - start) as usize];
            let (head, tail) = (offset - start, stop - end);
            if head != 0 {
                self.read(memory, start..start + WORD, &mut whole[..WORD as usize])?;
            }
            // (A one-word write with a head already read that word.)
            if tail != 0 && !(head != 0 && stop - start == WORD) {
                let n = whole.len();
                self.read(memory, stop - WORD..stop, &mut whole[n - WORD as usize..])?;
            }
            whole[head as usize..head as usize + data.len()].copy_from_slice(data);
            widened = whole;
            (start, &widened[..])
        };
        self.capture(|| self.queue().write_buffer(buffer, at, data))
            .map_err(|message| BufferError::Gpu { operation: "writing a buffer", message })
    }

    /// Queues a copy of `bytes` bytes from `src` at `src_offset` to `dst` at
    /// `dst_offset`; ordered with launches. The caller checked the ranges.
    /// A copy that is not word-aligned (2-byte elements) goes through the
    /// host, waiting for the work queued before it.
    pub(crate) fn copy(
        &self,
        src: &GpuMemory,
        src_offset: u64,
        dst: &GpuMemory,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<(), BufferError> {
        let (Some(src_buffer), Some(dst_buffer)) = (&src.buffer, &dst.buffer) else { return Ok(()) };
        if bytes == 0 {
            return Ok(());
        }
        self.check_alive()?;
        if !(src_offset.is_multiple_of(WORD) && dst_offset.is_multiple_of(WORD) && bytes.is_multiple_of(WORD)) {
            let mut data = vec![0u8; bytes as usize];
            self.read(src, src_offset..src_offset + bytes, &mut data)?;
            return self.write(dst, dst_offset, &data);
        }
        self.capture(|| {
            let mut encoder = self
                .wgpu_device()
                .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("onekernel copy") });
            encoder.copy_buffer_to_buffer(src_buffer, src_offset, dst_buffer, dst_offset, bytes);
            self.queue().submit([encoder.finish()]);
        })
        .map_err(|message| BufferError::Gpu { operation: "copying a buffer", message })
    }

    /// A staging buffer of at least `bytes` bytes, from the pool if it has one.
    fn staging(&self, bytes: u64) -> Result<Staging<'_>, BufferError> {
        let class = StagingPool::class(bytes);
        let size = if class <= self.limits().max_buffer_size { class } else { bytes };
        if let Some(buffer) = self.shared.staging.lock().get_mut(&size).and_then(Vec::pop) {
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
        self.shared.staging.created.fetch_add(1, Ordering::Relaxed);
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
        // Whole words (the allocation is rounded up to one, so this fits);
        // `finish_read` skips the bytes before `bytes.start`.
        let bytes = word_floor(bytes.start)..word_ceil(bytes.end);
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

    /// Copies the mapped staging buffer into `out` and unmaps it; `skip`
    /// is the number of bytes the read was widened by at its start.
    fn finish_read(
        mut staging: Staging<'_>,
        result: Result<(), String>,
        skip: u64,
        out: &mut [u8],
    ) -> Result<(), BufferError> {
        let map_err = |message| BufferError::Gpu { operation: "mapping a buffer for reading", message };
        result.map_err(map_err)?;
        {
            let end = word_ceil(skip + out.len() as u64);
            let view = staging.buffer().get_mapped_range(0..end).map_err(|e| map_err(e.to_string()))?;
            out.copy_from_slice(&view[skip as usize..skip as usize + out.len()]);
        }
        staging.buffer().unmap();
        staging.mapped = false;
        Ok(())
    }

    /// Maps `buffer` (`MAP_READ`, the target of work already submitted)
    /// for reading: `wait` waits for that work (the caller's way of
    /// waiting: its errors explained, prints drained, ...), then the map
    /// callback ([`await_map_callback`]). The small read-backs (recorded
    /// launches' checks, timestamps) take this; buffer reads go through
    /// [`GpuDevice::read`]'s staging buffers. `what` names the read-back in
    /// an error.
    pub(super) fn map_for_reading(
        &self,
        buffer: &wgpu::Buffer,
        what: &str,
        wait: impl FnOnce() -> Result<(), DeviceError>,
    ) -> Result<(), DeviceError> {
        let (tx, rx) = mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        wait()?;
        let message = match await_map_callback(self.wgpu_device(), |d| rx.recv_timeout(d).ok()) {
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => format!("{what}: {e}"),
            None => format!("{what}: the map callback never ran"),
        };
        Err(DeviceError::Gpu { message })
    }

    /// Copies `bytes` of the buffer into `out` after all work queued so far,
    /// blocking until the GPU is done.
    pub(crate) fn read(&self, memory: &GpuMemory, bytes: Range<u64>, out: &mut [u8]) -> Result<(), BufferError> {
        if out.is_empty() {
            return Ok(());
        }
        let skip = bytes.start % WORD;
        let (staging, submission, done) = self.start_read(memory, bytes)?;
        self.wait(Some(submission))?;
        let mut result = done.take();
        if result.is_none() {
            // The callback runs during a poll once the copy is done; one
            // more full wait covers any backend that defers it.
            self.wait(None)?;
            await_map_callback(self.wgpu_device(), |d| done.wait_done(d).then_some(()));
            result = done.take();
        }
        let result = result.unwrap_or_else(|| Err("the map callback never ran".into()));
        // A device lost while waiting fails the map: say so.
        self.check_alive()?;
        Self::finish_read(staging, result, skip, out)
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
        let skip = bytes.start % WORD;
        let (staging, submission, done) = self.start_read(memory, bytes)?;
        self.shared.poller.watch(self.wgpu_device(), submission, Arc::clone(&done));
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
            Ok(()) => Self::finish_read(staging, Ok(()), skip, out),
            Err(e) => Err(e),
        }
    }
}
