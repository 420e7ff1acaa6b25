//! GPU buffer storage: creation, upload and read-back.

use super::GpuDevice;
use crate::error::BufferError;
use wgpu::util::DeviceExt;

/// The wgpu buffer behind a `Buffer<T>` on a GPU device. A buffer of length
/// zero has no wgpu buffer at all (the GPU cannot bind one, and launches
/// reject empty buffers before binding).
#[derive(Debug)]
pub(crate) struct GpuMemory {
    pub buffer: Option<wgpu::Buffer>,
}

const USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

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

    /// A buffer holding `data` (`len` elements of 4 bytes).
    pub(crate) fn upload(&self, len: usize, data: &[u8]) -> Result<GpuMemory, BufferError> {
        if data.is_empty() {
            return Ok(GpuMemory { buffer: None });
        }
        self.check_size(len, data.len() as u64)?;
        let buffer = self
            .capture(|| {
                self.wgpu_device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("kernel buffer"),
                    contents: data,
                    usage: USAGE,
                })
            })
            .map_err(|message| BufferError::Gpu { operation: "creating a buffer", message })?;
        Ok(GpuMemory { buffer: Some(buffer) })
    }

    /// A zero-filled buffer of `len` 4-byte elements.
    pub(crate) fn zeroed(&self, len: usize) -> Result<GpuMemory, BufferError> {
        let bytes = (len as u64).saturating_mul(4);
        if bytes == 0 {
            return Ok(GpuMemory { buffer: None });
        }
        self.check_size(len, bytes)?;
        // wgpu zero-initialises buffers, so no upload is needed.
        let buffer = self
            .capture(|| {
                self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("kernel buffer"),
                    size: bytes,
                    usage: USAGE,
                    mapped_at_creation: false,
                })
            })
            .map_err(|message| BufferError::Gpu { operation: "creating a buffer", message })?;
        Ok(GpuMemory { buffer: Some(buffer) })
    }

    /// Queues an overwrite of the whole buffer; ordered after earlier launches.
    pub(crate) fn write(&self, memory: &GpuMemory, data: &[u8]) -> Result<(), BufferError> {
        let Some(buffer) = &memory.buffer else { return Ok(()) };
        self.capture(|| self.queue().write_buffer(buffer, 0, data))
            .map_err(|message| BufferError::Gpu { operation: "writing a buffer", message })
    }

    /// Copies the buffer into `out` after all work queued so far (the queue
    /// runs in order, so every earlier launch that touches it is done).
    pub(crate) fn read(&self, memory: &GpuMemory, out: &mut [u8]) -> Result<(), BufferError> {
        let Some(buffer) = &memory.buffer else { return Ok(()) };
        let size = buffer.size();
        let gpu_err = |operation| move |message| BufferError::Gpu { operation, message };
        let (staging, submission) = self
            .capture(|| {
                let staging = self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                    label: Some("kernel read-back"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let mut encoder = self
                    .wgpu_device()
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kernel read-back") });
                encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
                let submission = self.queue().submit([encoder.finish()]);
                (staging, submission)
            })
            .map_err(gpu_err("reading a buffer"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            // The receiver only disappears if `read` already returned.
            let _ = tx.send(r);
        });
        self.wait(Some(submission))?;
        let mut result = rx.try_recv();
        if result.is_err() {
            // The callback runs during a poll once the copy is done; one
            // more full wait covers any backend that defers it.
            self.wait(None)?;
            result = rx.try_recv();
        }
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(BufferError::Gpu { operation: "mapping a buffer for reading", message: e.to_string() })
            }
            Err(_) => {
                return Err(BufferError::Gpu {
                    operation: "mapping a buffer for reading",
                    message: "the map callback never ran".into(),
                })
            }
        }
        {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| BufferError::Gpu { operation: "mapping a buffer for reading", message: e.to_string() })?;
            out.copy_from_slice(&view);
        }
        staging.unmap();
        Ok(())
    }
}
