//! Recording and submitting one kernel launch on a wgpu device.

use super::GpuDevice;
use crate::error::LaunchError;
use crate::grid::Grid;
use crate::kernel_info::KernelInfo;
use crate::plan::{plan, uniform_block, LaunchPlan};
use wgpu::util::DeviceExt;

/// A checked buffer argument of a GPU launch, made by
/// [`crate::Buffer::gpu_arg`] / [`crate::Buffer::gpu_arg_mut`]. It borrows
/// the buffer for as long as the launch call needs it.
#[derive(Clone, Copy, Debug)]
pub struct GpuArg<'a> {
    pub(crate) buffer: &'a wgpu::Buffer,
    pub(crate) param: usize,
}

impl<'a> GpuArg<'a> {
    /// The wgpu buffer.
    pub fn buffer(&self) -> &'a wgpu::Buffer {
        self.buffer
    }

    /// Index of the kernel parameter this argument was checked for.
    pub fn param(&self) -> usize {
        self.param
    }
}

/// Everything needed to record a launch by hand (benchmarks: many
/// dispatches in one pass, with timestamp queries).
///
/// Record it as `pass.set_pipeline(&p.pipeline); pass.set_bind_group(0, &p.bind_group, &[]);
/// pass.dispatch_workgroups(p.workgroups[0], p.workgroups[1], p.workgroups[2]);`.
#[derive(Clone, Debug)]
pub struct PreparedDispatch {
    /// The cached pipeline of the kernel.
    pub pipeline: wgpu::ComputePipeline,
    /// Bind group 0: the buffers and a fresh uniform block for this grid and these scalars.
    pub bind_group: wgpu::BindGroup,
    /// The physical dispatch size (`[0, 0, 0]` for an empty grid).
    pub workgroups: [u32; 3],
}

impl GpuDevice {
    /// Encodes and submits one dispatch; returns at once (asynchronous).
    ///
    /// Pipelines and bind group layouts are cached per device, keyed by the
    /// `KernelInfo`'s address: a second launch compiles nothing.
    /// `buffers` are the buffer arguments in parameter order; `scalars` the
    /// bits of the scalar arguments in parameter order.
    pub fn dispatch(&self, kernel: &'static KernelInfo, grid: Grid, buffers: &[GpuArg<'_>], scalars: &[u32]) -> Result<(), LaunchError> {
        let Some(launch) = self.check(kernel, grid, buffers)? else {
            return Ok(());
        };
        let prepared = self.bind(kernel, Some(&launch), buffers, scalars)?;
        self.capture(|| {
            let mut encoder = self.wgpu_device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(kernel.name) });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(kernel.name), timestamp_writes: None });
                pass.set_pipeline(&prepared.pipeline);
                pass.set_bind_group(0, &prepared.bind_group, &[]);
                let [x, y, z] = prepared.workgroups;
                pass.dispatch_workgroups(x, y, z);
            }
            self.queue().submit([encoder.finish()]);
        })
        .map_err(|message| LaunchError::Gpu { kernel: kernel.name, message })
    }

    /// For benchmarks: the cached pipeline and a bind group for these args
    /// plus the physical dispatch size, so a caller can record many
    /// dispatches in one pass with timestamp queries.
    pub fn prepare(&self, kernel: &'static KernelInfo, grid: Grid, buffers: &[GpuArg<'_>], scalars: &[u32]) -> Result<PreparedDispatch, LaunchError> {
        let launch = self.check(kernel, grid, buffers)?;
        self.bind(kernel, launch.as_ref(), buffers, scalars)
    }

    /// Number of kernels compiled (and cached) on this device so far.
    pub fn compiled_kernels(&self) -> usize {
        self.pipelines.len()
    }

    /// Checks limits and arguments; `None` for an empty grid.
    fn check(&self, kernel: &'static KernelInfo, grid: Grid, buffers: &[GpuArg<'_>]) -> Result<Option<LaunchPlan>, LaunchError> {
        let launch = plan(kernel, grid, self.launch_limits())?;
        let expected = kernel.buffer_params().count();
        if buffers.len() != expected {
            return Err(LaunchError::InvalidKernel {
                kernel: kernel.name,
                problem: format!("{} buffer arguments passed, but the kernel has {expected} buffer parameters", buffers.len()),
            });
        }
        for (arg, (param, _)) in buffers.iter().zip(kernel.buffer_params()) {
            if arg.param != param {
                return Err(LaunchError::InvalidArgument {
                    kernel: kernel.name,
                    arg: kernel.param_name(param),
                    problem: format!("got the argument checked for parameter `{}` in its place", kernel.param_name(arg.param)),
                });
            }
        }
        Ok(launch)
    }

    /// Fetches (or compiles) the pipeline and builds bind group 0.
    fn bind(&self, kernel: &'static KernelInfo, launch: Option<&LaunchPlan>, buffers: &[GpuArg<'_>], scalars: &[u32]) -> Result<PreparedDispatch, LaunchError> {
        let empty = LaunchPlan { groups: [0; 3], dispatch: [0; 3], folded: false };
        let launch = launch.unwrap_or(&empty);
        let block = uniform_block(kernel, launch, scalars)?;
        let cached = self.pipelines.get_or_compile(self, kernel)?;
        let bind_group = self
            .capture(|| {
                let uniforms = self.wgpu_device().create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(kernel.name),
                    contents: &block,
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let mut entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                    .iter()
                    .map(|a| wgpu::BindGroupEntry { binding: kernel.params[a.param].slot, resource: a.buffer.as_entire_binding() })
                    .collect();
                entries.push(wgpu::BindGroupEntry { binding: kernel.uniform_binding, resource: uniforms.as_entire_binding() });
                // The bind group keeps the uniform buffer alive.
                self.wgpu_device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(kernel.name),
                    layout: &cached.layout,
                    entries: &entries,
                })
            })
            .map_err(|message| LaunchError::Gpu { kernel: kernel.name, message })?;
        Ok(PreparedDispatch { pipeline: cached.pipeline.clone(), bind_group, workgroups: launch.dispatch })
    }
}
