//! The wgpu side: device creation, buffers, pipelines (with and without
//! wgpu's bounds checks), kernel timing with timestamp queries, read-backs.

use std::time::Instant;
use wgpu::util::DeviceExt;

/// Features requested when the adapter has them.
const WANTED_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SHADER_F16)
    .union(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);

/// Whether a shader module keeps wgpu's runtime checks (`Checked`: bounds
/// checks, loop bounding, integer-division guards) or has them all turned off
/// through `create_shader_module_trusted` (`Unchecked`; the kernels guard
/// their own accesses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    Checked,
    Unchecked,
}

/// One wgpu device and queue, plus what the benchmarks need to know about it.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub limits: wgpu::Limits,
}

/// A compiled kernel: its pipeline and its bind-group layout (taken from the
/// pipeline, whose layout wgpu derives from the shader).
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

impl Gpu {
    /// Picks the adapter the way the kernel project's runtime does:
    /// `WGPU_BACKEND` (e.g. `vulkan`) limits the backends, `WGPU_ADAPTER_NAME`
    /// picks an adapter by name, otherwise wgpu's default (high performance
    /// when `WGPU_POWER_PREF=high`). Requests the adapter's own limits, so that
    /// buffers of 256 MiB and more can be bound.
    pub fn new() -> Result<Gpu, String> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(wgpu::util::initialize_adapter_from_env_or_default(&instance, None))
            .map_err(|e| format!("no adapter: {e}"))?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let required_features = adapter.features() & WANTED_FEATURES;
        let experimental_features = if required_features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: wgpu asks the caller to accept that experimental
            // features may have bugs; only the `hgemm` row uses one.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("wgsl-peer"),
            required_features,
            required_limits: limits.clone(),
            experimental_features,
            ..Default::default()
        }))
        .map_err(|e| format!("request_device on {}: {e}", info.name))?;
        Ok(Gpu { device, queue, info, limits })
    }

    pub fn has(&self, feature: wgpu::Features) -> bool {
        self.device.features().contains(feature)
    }

    /// Compiles `source` (entry point `main`) with or without wgpu's runtime
    /// checks. Validation errors are returned, not panicked on.
    pub fn kernel(&self, label: &str, source: &str, checks: Checks) -> Result<Kernel, String> {
        self.capture(|| {
            let desc =
                wgpu::ShaderModuleDescriptor { label: Some(label), source: wgpu::ShaderSource::Wgsl(source.into()) };
            let module = match checks {
                Checks::Checked => self.device.create_shader_module(desc),
                // SAFETY: every kernel in `shaders.rs` guards its own buffer
                // accesses against the sizes it is launched with, and none
                // loops unboundedly or divides by a value that can be zero.
                Checks::Unchecked => unsafe {
                    self.device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
                },
            };
            let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let layout = pipeline.get_bind_group_layout(0);
            Kernel { pipeline, layout }
        })
        .map_err(|e| format!("compiling {label}: {e}"))
    }

    /// A storage buffer holding `data` (also a copy source, for read-backs).
    pub fn storage<T: bytemuck::Pod>(&self, data: &[T]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: bytemuck::cast_slice(data),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A zero-filled storage buffer of `bytes` bytes.
    pub fn storage_zeroed(&self, bytes: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A uniform buffer of four `u32`s: the sizes a kernel is launched with.
    pub fn params(&self, p: [u32; 4]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(&p),
            // Also STORAGE: `hgemm` reads its parameters from a storage
            // buffer (see hgemm_coop.wgsl).
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE,
        })
    }

    /// Binds `buffers` to bindings 0, 1, ... of `kernel`'s group 0.
    pub fn bind(&self, kernel: &Kernel, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let entries: Vec<_> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &kernel.layout,
            entries: &entries,
        })
    }

    /// Runs `kernel` once over `groups` workgroups and waits.
    pub fn run_once(&self, kernel: &Kernel, bind: &wgpu::BindGroup, groups: (u32, u32, u32)) -> Result<(), String> {
        self.capture(|| {
            let mut encoder = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&kernel.pipeline);
                pass.set_bind_group(0, bind, &[]);
                pass.dispatch_workgroups(groups.0, groups.1, groups.2);
            }
            self.queue.submit([encoder.finish()]);
        })?;
        self.wait()
    }

    /// Copies `buffer` back to the host.
    pub fn read<T: bytemuck::Pod>(&self, buffer: &wgpu::Buffer) -> Result<Vec<T>, String> {
        let size = buffer.size();
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.wait()?;
        let view = staging.slice(..).get_mapped_range().map_err(|e| e.to_string())?;
        let out: Vec<T> = bytemuck::pod_collect_to_vec(&view[..]);
        drop(view);
        staging.unmap();
        Ok(out)
    }

    /// Blocks until everything submitted has finished.
    pub fn wait(&self) -> Result<(), String> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map(drop).map_err(|e| e.to_string())
    }

    /// Seconds per dispatch: `reps` dispatches of `kernel` recorded into one
    /// compute pass, timed by timestamps written at the pass's start and end
    /// (the kernels alone, no submission or synchronisation), divided by
    /// `reps`; one warm-up batch, then the median of `batches` batches.
    /// Without `TIMESTAMP_QUERY` it falls back to the wall clock around
    /// submit + wait of each batch (then `Timing::Wall`).
    pub fn time(
        &self,
        kernel: &Kernel,
        bind: &wgpu::BindGroup,
        groups: (u32, u32, u32),
        reps: u32,
        batches: usize,
    ) -> Result<(f64, Timing), String> {
        let timestamps = self.has(wgpu::Features::TIMESTAMP_QUERY);
        let queries = timestamps.then(|| {
            self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            })
        });
        let buffer = |usage| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        let resolve = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let readback = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let period_ns = f64::from(self.queue.get_timestamp_period());

        let mut samples = Vec::with_capacity(batches);
        for batch in 0..=batches {
            let start = Instant::now();
            self.capture(|| {
                let mut encoder = self.device.create_command_encoder(&Default::default());
                {
                    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("timed"),
                        timestamp_writes: queries.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                            query_set: q,
                            beginning_of_pass_write_index: Some(0),
                            end_of_pass_write_index: Some(1),
                        }),
                    });
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    for _ in 0..reps {
                        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
                    }
                }
                if let Some(q) = &queries {
                    encoder.resolve_query_set(q, 0..2, &resolve, 0);
                    encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, 16);
                }
                self.queue.submit([encoder.finish()]);
            })?;
            let seconds = if queries.is_some() {
                readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
                self.wait()?;
                let view = readback.slice(..).get_mapped_range().map_err(|e| e.to_string())?;
                let ticks: [u64; 2] = bytemuck::pod_read_unaligned(&view[..16]);
                drop(view);
                readback.unmap();
                ticks[1].saturating_sub(ticks[0]) as f64 * period_ns * 1e-9
            } else {
                self.wait()?;
                start.elapsed().as_secs_f64()
            };
            if batch > 0 {
                // Batch 0 is the warm-up (pipeline creation, first touch).
                samples.push(seconds / f64::from(reps));
            }
        }
        let timing = if timestamps { Timing::Device } else { Timing::Wall };
        Ok((median(&mut samples), timing))
    }

    /// Runs `f` with wgpu's validation, out-of-memory and internal errors
    /// captured, so that they become `Err` instead of a panic in wgpu's
    /// default handler.
    pub fn capture<R>(&self, f: impl FnOnce() -> R) -> Result<R, String> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let internal = self.device.push_error_scope(wgpu::ErrorFilter::Internal);
        let r = f();
        let errors: Vec<String> =
            [pollster::block_on(internal.pop()), pollster::block_on(validation.pop()), pollster::block_on(oom.pop())]
                .into_iter()
                .flatten()
                .map(|e| e.to_string())
                .collect();
        if errors.is_empty() { Ok(r) } else { Err(errors.join("; ")) }
    }
}

/// How a kernel time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Timestamp queries around the compute pass.
    Device,
    /// Wall clock around submit + wait (the adapter lacks `TIMESTAMP_QUERY`).
    Wall,
}

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) }
}

/// A 1-D launch of `groups` workgroups as a 2-D grid, because one dimension
/// holds at most `max_per_dim` (65535) workgroups: `(x, y)` with
/// `x * y >= groups`. Kernels linearise it as `wg.y * num_workgroups.x + wg.x`
/// and guard the tail.
pub fn grid_1d(groups: u32, max_per_dim: u32) -> (u32, u32, u32) {
    if groups <= max_per_dim {
        (groups.max(1), 1, 1)
    } else {
        let y = groups.div_ceil(max_per_dim);
        (groups.div_ceil(y), y, 1)
    }
}
