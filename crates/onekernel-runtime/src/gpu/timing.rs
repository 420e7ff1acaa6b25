//! Kernel timing with timestamp queries, for benchmarks and examples.

use super::GpuDevice;
use crate::error::DeviceError;

impl GpuDevice {
    /// Mean GPU time, in seconds, of `reps` launches that `record` writes
    /// into one compute pass (for example `|pass| prepared.record(pass)`),
    /// from timestamps written at the pass's start and end. This times the
    /// kernels alone, without submission or synchronisation. Needs the
    /// adapter's `TIMESTAMP_QUERY` feature (requested when available).
    pub fn time_pass(&self, reps: u32, record: impl Fn(&mut wgpu::ComputePass<'_>)) -> Result<f64, DeviceError> {
        let device = self.wgpu_device();
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(DeviceError::Gpu {
                message: "timing kernels needs the TIMESTAMP_QUERY feature, which this adapter lacks".into(),
            });
        }
        let buffer = |usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        let (queries, resolve, readback) = self
            .capture(|| {
                let queries = device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                });
                let resolve = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
                let readback = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
                let mut encoder = device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("timed pass"),
                        timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                            query_set: &queries,
                            beginning_of_pass_write_index: Some(0),
                            end_of_pass_write_index: Some(1),
                        }),
                    });
                    for _ in 0..reps {
                        record(&mut pass);
                    }
                }
                encoder.resolve_query_set(&queries, 0..2, &resolve, 0);
                encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, 16);
                self.queue().submit([encoder.finish()]);
                readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
                (queries, resolve, readback)
            })
            .map_err(|message| DeviceError::Gpu { message })?;
        device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| DeviceError::Poll { reason: e.to_string() })?;
        let view = readback.slice(..).get_mapped_range().map_err(|e| DeviceError::Gpu { message: e.to_string() })?;
        let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&view[..16]);
        drop(view);
        drop((queries, resolve));
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * f64::from(self.queue().get_timestamp_period());
        Ok(ns * 1e-9 / f64::from(reps.max(1)))
    }
}
