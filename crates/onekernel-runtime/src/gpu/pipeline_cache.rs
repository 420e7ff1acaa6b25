//! Per-device cache of compute pipelines, so that only the first launch of a
//! kernel compiles anything.

use super::GpuDevice;
use crate::error::LaunchError;
use onekernel_abi::{report, KernelInfo};
use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex};

/// (kernel address, folded, checked, loop budget, bindings of empty
/// buffers, unchecked).
type Key = (usize, bool, bool, Option<u32>, Vec<u32>, bool);

/// Which of a kernel's modules a launch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Variant {
    /// A 1-D grid folded into 2-D dispatches.
    pub folded: bool,
    /// A checked launch (see `Device::checked`).
    pub checked: bool,
    /// The loop budget a checked pipeline is created with (the module's
    /// `override` of id `report::LOOP_BUDGET_ID`); `None`: the module's
    /// default.
    pub loop_budget: Option<u32>,
}

impl Variant {
    fn describe(self) -> &'static str {
        match (self.folded, self.checked) {
            (false, false) => "plain",
            (true, false) => "folded",
            (false, true) => "checked",
            (true, true) => "checked folded",
        }
    }
}

/// A compiled kernel: its pipeline and the layout of its bind group 0.
#[derive(Debug)]
pub(crate) struct CachedPipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

/// Pipelines keyed by the address of the kernel's `static KernelInfo`,
/// whether the launch is folded (folded launches use the kernel's
/// `wgsl_folded` module), whether it is checked (the `wgsl_checked*`
/// modules, with the report buffer bound after the uniform block), the
/// bindings of empty buffers (whose lengths the variant sees as 0, see
/// `empty_bindings.rs`) and whether it was compiled without wgpu's runtime
/// checks (launches through an `unchecked` handle): most kernels have one
/// pipeline, at most two unless launched over empty buffers, checked or
/// unchecked too.
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

    /// The pipeline for `kernel` (specialised for folded grids when
    /// `folded`, checked when `checked`, and for the empty buffers at the
    /// bindings `empty`), compiling it on first use.
    pub fn get_or_compile(
        &self,
        gpu: &GpuDevice,
        kernel: &'static KernelInfo,
        variant: Variant,
        empty: &[u32],
    ) -> Result<Arc<CachedPipeline>, LaunchError> {
        // A checked launch never runs a trusted module.
        let trusted = gpu.unchecked && !variant.checked;
        let budget = variant.loop_budget.filter(|_| variant.checked);
        let key =
            (kernel as *const KernelInfo as usize, variant.folded, variant.checked, budget, empty.to_vec(), trusted);
        if let Some(p) = self.lock().get(&key) {
            return Ok(Arc::clone(p));
        }
        // Compile without holding the lock: a slow shader compile must not
        // block launches of other kernels. Two threads racing on the same
        // kernel both compile; the first insert wins.
        let compiled = Arc::new(compile(gpu, kernel, variant, empty)?);
        Ok(Arc::clone(self.lock().entry(key).or_insert(compiled)))
    }
}

/// Builds the explicit bind group layout the contract describes and the
/// pipeline from the kernel's WGSL.
///
/// The layout is explicit rather than derived from the shader so that a
/// parameter the compiler optimised out of the shader still has its binding.
fn compile(
    gpu: &GpuDevice,
    kernel: &'static KernelInfo,
    variant: Variant,
    empty: &[u32],
) -> Result<CachedPipeline, LaunchError> {
    let wgsl: &str = match (variant.folded, variant.checked) {
        (false, false) => &kernel.wgsl,
        (true, false) => &kernel.wgsl_folded,
        (false, true) => &kernel.wgsl_checked,
        (true, true) => &kernel.wgsl_checked_folded,
    };
    if wgsl.is_empty() {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!("it has no {} module", variant.describe()),
        });
    }
    let source: std::borrow::Cow<'_, str> = if empty.is_empty() {
        std::borrow::Cow::Borrowed(wgsl)
    } else {
        std::borrow::Cow::Owned(
            super::empty_bindings::zero_lengths(wgsl, empty)
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
    if variant.checked {
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
    let device = gpu.wgpu_device();
    // The checked module's loop budget, when the launch sets one.
    let id = report::LOOP_BUDGET_ID.to_string();
    let mut constants: Vec<(&str, f64)> =
        variant.loop_budget.filter(|_| variant.checked).map(|b| (id.as_str(), f64::from(b))).into_iter().collect();
    // A specialisation's values (its const parameters, the constants of
    // its scope), keyed by the overrides' ids; a specialisation is a
    // kernel of its own (`specialise.rs`), so the key above tells them
    // apart.
    let ids: Vec<String> = kernel.consts.params.iter().map(|p| p.id.to_string()).collect();
    constants.extend(ids.iter().map(String::as_str).zip(kernel.consts.values.iter().map(|b| f64::from_bits(*b))));
    let compiled = gpu.capture(|| {
        let desc =
            wgpu::ShaderModuleDescriptor { label: Some(&*kernel.name), source: wgpu::ShaderSource::Wgsl(source) };
        let module = if gpu.unchecked && !variant.checked {
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
