//! Per-device cache of compute pipelines, so that only the first launch of a
//! kernel compiles anything.

use super::GpuDevice;
use crate::error::LaunchError;
use onekernel_abi::{report, KernelInfo, ModuleKey};
use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

/// (kernel address, what the pipeline is made from).
type Key = (usize, PipelineKey);

/// Everything a kernel's pipeline is made from besides the kernel: the one
/// home of a launch's choice of module and of how it specialises it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PipelineKey {
    /// Which of the kernel's modules runs ([`KernelInfo::module`]).
    pub module: ModuleKey,
    /// Values of the module's `override` constants (wgpu's pipeline
    /// constants), as (`@id`, `f64::to_bits` of the value), sorted by id;
    /// an id not listed keeps the module's default.
    pub constants: Vec<(u16, u64)>,
    /// The bindings of empty buffers, whose `arrayLength` the module sees
    /// as 0: a transform at pipeline creation (`empty_bindings.rs`), not a
    /// module of the table, as which buffers are empty is known only at
    /// launch.
    pub empty: Vec<u32>,
    /// Compiled without wgpu's runtime checks: an unchecked module
    /// launched through an `unchecked` handle (`PipelineCache` sets it).
    pub trusted: bool,
}

impl PipelineKey {
    /// Module `module` as it was compiled.
    pub fn new(module: ModuleKey) -> PipelineKey {
        PipelineKey { module, constants: Vec::new(), empty: Vec::new(), trusted: false }
    }

    /// Sets the `override` of id `id` to `value`.
    pub fn constant(mut self, id: u16, value: f64) -> PipelineKey {
        self.constants.retain(|&(i, _)| i != id);
        let at = self.constants.partition_point(|&(i, _)| i < id);
        self.constants.insert(at, (id, value.to_bits()));
        self
    }
}

/// A compiled kernel: its pipeline and the layout of its bind group 0.
#[derive(Debug)]
pub(crate) struct CachedPipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Pipelines keyed by the address of the kernel's `static KernelInfo`, the
/// [`PipelineKey`] (the module: folded launches run the folded one,
/// checked launches a checked one with the report buffer bound after the
/// uniform block; its constants; the bindings of empty buffers; whether it
/// was compiled without wgpu's runtime checks, for launches through an
/// `unchecked` handle): most kernels have one pipeline, at most two unless
/// launched over empty buffers, checked or unchecked too.
///
/// The address identifies a kernel exactly: the macro emits one static per
/// kernel and statics are never freed or moved.
#[derive(Default)]
pub(crate) struct PipelineCache {
    map: Mutex<HashMap<Key, Arc<CachedPipeline>>>,
}

impl PipelineCache {
    /// Number of kernels compiled on this device so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Arc<CachedPipeline>>> {
        // A panic while holding the lock cannot leave the map half-updated
        // (inserts are single calls), so a poisoned lock is still usable.
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pipeline of `kernel` that `key` describes, compiling it on
    /// first use.
    pub fn get_or_compile(
        &self,
        gpu: &GpuDevice,
        kernel: &'static KernelInfo,
        mut key: PipelineKey,
    ) -> Result<Arc<CachedPipeline>, LaunchError> {
        // A checked launch never runs a trusted module.
        key.trusted = gpu.unchecked && !key.module.checked;
        let key = (kernel as *const KernelInfo as usize, key);
        if let Some(p) = self.lock().get(&key) {
            return Ok(Arc::clone(p));
        }
        // Compile without holding the lock: a slow shader compile must not
        // block launches of other kernels. Two threads racing on the same
        // kernel both compile; the first insert wins.
        let compiled = Arc::new(compile(gpu, kernel, &key.1)?);
        Ok(Arc::clone(self.lock().entry(key).or_insert(compiled)))
    }
}

/// Builds the explicit bind group layout the contract describes and the
/// pipeline from the kernel's WGSL.
///
/// The layout is explicit rather than derived from the shader so that a
/// parameter the compiler optimised out of the shader still has its binding.
fn compile(gpu: &GpuDevice, kernel: &'static KernelInfo, key: &PipelineKey) -> Result<CachedPipeline, LaunchError> {
    let checked = key.module.checked;
    let wgsl: &str = match kernel.module(key.module) {
        Some(m) if !m.wgsl.is_empty() => &m.wgsl,
        _ => {
            return Err(LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: format!("it has no {} module", key.module),
            })
        }
    };
    let source: std::borrow::Cow<'_, str> = if key.empty.is_empty() {
        std::borrow::Cow::Borrowed(wgsl)
    } else {
        std::borrow::Cow::Owned(
            super::empty_bindings::zero_lengths(wgsl, &key.empty)
                .map_err(|message| LaunchError::Compile { kernel: &kernel.name, message })?,
        )
    };
    let mut entries = Vec::with_capacity(kernel.params.len() + 1);
    for (_, p) in kernel.buffer_params() {
        if p.slot == kernel.uniform_binding || entries.iter().any(|e: &wgpu::BindGroupLayoutEntry| e.binding == p.slot)
        {
            return Err(LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: format!("binding {} of `{}` is used twice", p.slot, p.name),
            });
        }
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: p.slot,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: !p.kind.is_writable() },
                has_dynamic_offset: false,
                // One element (in whole words), as a layout derived from
                // the shader would say; empty buffers are bound to a
                // stand-in of this size.
                min_binding_size: NonZeroU64::new(super::stand_in_size(&p.ty)),
            },
            count: None,
        });
    }
    entries.push(wgpu::BindGroupLayoutEntry {
        binding: kernel.uniform_binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: match kernel.params_binding {
                onekernel_abi::ParamsBinding::Uniform => wgpu::BufferBindingType::Uniform,
                onekernel_abi::ParamsBinding::Storage => wgpu::BufferBindingType::Storage { read_only: true },
            },
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(u64::from(kernel.uniform_size)),
        },
        count: None,
    });
    if checked {
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: kernel.uniform_binding + 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(u64::from(report::WORDS) * 4),
            },
            count: None,
        });
    }
    if !kernel.debug_sites.is_empty() {
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: kernel.print_binding(),
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(u64::from(onekernel_abi::debug::print_buffer::HEADER + 1) * 4),
            },
            count: None,
        });
    }
    let device = gpu.wgpu_device();
    // The module's `override`s the launch sets (wgpu names them by id).
    let ids: Vec<String> = key.constants.iter().map(|(id, _)| id.to_string()).collect();
    let constants: Vec<(&str, f64)> =
        ids.iter().zip(&key.constants).map(|(id, &(_, bits))| (id.as_str(), f64::from_bits(bits))).collect();
    let compiled = gpu.capture(|| {
        let desc =
            wgpu::ShaderModuleDescriptor { label: Some(&*kernel.name), source: wgpu::ShaderSource::Wgsl(source) };
        let module = if key.trusted && gpu.unchecked {
            // SAFETY: an unchecked handle exists only through the unsafe
            // `Device::unchecked`, whose caller promised that every kernel
            // launched through it accesses only elements within its
            // buffers and workgroup arrays, terminates, and divides only by
            // non-zero values without signed overflow: exactly what the
            // checks turned off here (bounds checks, loop bounding, integer
            // division guards, and ray-query and mesh-shader tracking,
            // which compute kernels never use) would otherwise enforce.
            unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        } else {
            device.create_shader_module(desc)
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(&*kernel.name),
            entries: &entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(&*kernel.name),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(&*kernel.name),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(&kernel.entry_point),
            compilation_options: wgpu::PipelineCompilationOptions { constants: &constants, ..Default::default() },
            cache: None,
        });
        CachedPipeline { pipeline, layout }
    });
    compiled.map_err(|message| LaunchError::Compile { kernel: &kernel.name, message })
}
