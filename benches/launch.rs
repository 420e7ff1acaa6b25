//! The round trip of a tiny kernel — launch, then read 4 bytes back — through
//! onekernel and through raw wgpu, side by side in one process and on one
//! device (`Device::wgpu` lends its wgpu device and queue to the raw side).
//!
//! * onekernel: `tiny::launch(&device, 1, &mut out)` then `out.read()`;
//!   and `launch` then `device.synchronize()` (no read-back).
//! * raw wgpu: the same one-thread kernel written in WGSL, its pipeline and
//!   bind group made once; per trip one command buffer (dispatch + copy of
//!   the 4 bytes to a mappable buffer), submit, map, wait, read; and
//!   dispatch, submit, wait.
//!
//! Wall clock, median of 7 batches of 101 trips after 20 warm-up trips, the
//! two sides alternating batch by batch; every value read back is checked.
//! `cargo bench --bench launch` prints a Markdown table (needs a GPU).

mod common;
use common::median;

use onekernel::prelude::*;
use onekernel::wgpu;
use std::time::Instant;

#[kernel(workgroup_size = 1)]
fn tiny(out: &mut [u32], value: u32) {
    out[0] = value + 1;
}

const RAW_WGSL: &str = "
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> value: vec4<u32>;
@compute @workgroup_size(1)
fn main() { out[0] = value.x + 1u; }
";

/// The raw wgpu side: everything made once, as a careful hand-written
/// program would.
struct Raw<'d> {
    device: &'d wgpu::Device,
    queue: &'d wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    out: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl<'d> Raw<'d> {
    fn new(device: &'d wgpu::Device, queue: &'d wgpu::Queue) -> Self {
        use wgpu::util::DeviceExt;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("tiny"),
            source: wgpu::ShaderSource::Wgsl(RAW_WGSL.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("tiny"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("out"),
            size: 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let value = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("value"),
            contents: bytemuck::cast_slice(&[41u32, 0, 0, 0]),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("tiny"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: out.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: value.as_entire_binding() },
            ],
        });
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: 4,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Raw { device, queue, pipeline, bind, out, staging }
    }

    fn record(&self, copy: bool) -> wgpu::CommandBuffer {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        if copy {
            encoder.copy_buffer_to_buffer(&self.out, 0, &self.staging, 0, 4);
        }
        encoder.finish()
    }

    fn wait(&self) {
        self.device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    }

    /// Launch + read-back; the value read.
    fn read_trip(&self) -> u32 {
        self.queue.submit([self.record(true)]);
        self.staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.wait();
        let value = bytemuck::pod_read_unaligned(&self.staging.slice(..).get_mapped_range().expect("mapped")[..4]);
        self.staging.unmap();
        value
    }

    fn wait_trip(&self) {
        self.queue.submit([self.record(false)]);
        self.wait();
    }
}

/// Median over `batches` of the per-trip time of each batch of `trips`.
fn alternate(batches: usize, trips: usize, sides: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut samples = vec![Vec::new(); sides.len()];
    for side in sides.iter_mut() {
        for _ in 0..20 {
            side();
        }
    }
    for _ in 0..batches {
        for (side, s) in sides.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            for _ in 0..trips {
                side();
            }
            s.push(start.elapsed().as_secs_f64() / trips as f64);
        }
    }
    samples.into_iter().map(median).collect()
}

fn main() {
    let device = Device::gpu().expect("a GPU: this benchmark compares launches on one");
    let (wgpu_device, queue) = device.wgpu().expect("a wgpu device");
    let raw = Raw::new(wgpu_device, queue);
    let mut out = Buffer::<u32>::zeroed(&device, 1).expect("buffer");
    let mut host = [0u32];

    let mut ours_read = || {
        tiny::launch(&device, 1, &mut out, 41).expect("launch");
        out.read_into(&mut host).expect("read");
        assert_eq!(host[0], 42);
    };
    let mut raw_read = || assert_eq!(raw.read_trip(), 42);
    let read = alternate(7, 101, &mut [&mut ours_read, &mut raw_read]);

    let mut out2 = Buffer::<u32>::zeroed(&device, 1).expect("buffer");
    let mut ours_wait = || {
        tiny::launch(&device, 1, &mut out2, 41).expect("launch");
        device.synchronize().expect("synchronize");
    };
    let mut raw_wait = || raw.wait_trip();
    let wait = alternate(7, 101, &mut [&mut ours_wait, &mut raw_wait]);

    println!("{}\n", device.name());
    println!("| round trip of a 1-thread kernel (wall, median) | onekernel | raw wgpu | ratio |");
    println!("|---|---|---|---|");
    for (what, t) in [("launch + read 4 bytes", read), ("launch + wait", wait)] {
        println!("| {what} | {:.1} µs | {:.1} µs | {:.2}× |", t[0] * 1e6, t[1] * 1e6, t[0] / t[1]);
    }
}
