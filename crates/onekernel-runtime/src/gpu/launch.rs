//! Recording and submitting one kernel launch on a wgpu device.

use super::bind_cache::{BindKey, Bound};
use super::pipeline_cache::PipelineKey;
use super::GpuDevice;
use crate::error::LaunchError;
use crate::grid::Grid;
use crate::plan::{plan, uniform_block, DispatchPart, LaunchPlan, ScalarArg};
use onekernel_abi::{report, CheckKind, KernelInfo, ModuleKey};

/// A checked buffer argument of a GPU launch, made by
/// [`crate::__private::gpu_arg`] / [`crate::__private::gpu_arg_mut`]. It borrows
/// the buffer for as long as the launch call needs it.
#[derive(Clone, Copy, Debug)]
pub struct GpuArg<'a> {
    /// `None` for an empty buffer.
    pub(crate) buffer: Option<&'a wgpu::Buffer>,
    pub(crate) param: usize,
    /// The buffer's length in elements (its allocation may be rounded up
    /// to whole words, see `memory.rs`).
    pub(crate) len: usize,
}

impl<'a> GpuArg<'a> {
    /// The wgpu buffer (`None` for an empty buffer).
    pub fn buffer(&self) -> Option<&'a wgpu::Buffer> {
        self.buffer
    }

    /// Index of the kernel parameter this argument was checked for.
    pub fn param(&self) -> usize {
        self.param
    }
}

/// How a GPU launch is checked: [`Device::launch_checks`](crate::Device::launch_checks)
/// of the launching handle, as generated code passes it to
/// [`GpuDevice::dispatch_with`]. `false` and `true` convert to it (a
/// checked launch with the default loop budget).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchChecks {
    /// Run the kernel's checked module (see `Device::checked`).
    pub checked: bool,
    /// The loop budget of a checked launch (see `Device::with_loop_budget`);
    /// `None`: `ONEKERNEL_LOOP_BUDGET` from the environment, else the
    /// module's default (`onekernel_abi::report::DEFAULT_LOOP_BUDGET`).
    pub loop_budget: Option<u32>,
}

impl From<bool> for LaunchChecks {
    fn from(checked: bool) -> LaunchChecks {
        LaunchChecks { checked, loop_budget: None }
    }
}

/// The environment variable that sets the loop budget of checked launches
/// whose handle has none.
const LOOP_BUDGET_ENV: &str = "ONEKERNEL_LOOP_BUDGET";

/// `ONEKERNEL_LOOP_BUDGET`, read once: `Ok(None)` when unset or empty,
/// `Err` saying what is wrong with a value that is not a `u32`.
fn env_loop_budget() -> Result<Option<u32>, String> {
    static BUDGET: std::sync::OnceLock<Result<Option<u32>, String>> = std::sync::OnceLock::new();
    BUDGET
        .get_or_init(|| match std::env::var(LOOP_BUDGET_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(None),
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => v.trim().parse::<u32>().map(Some).map_err(|e| {
                format!("{LOOP_BUDGET_ENV}={v:?} is not a loop budget (a number of iterations up to {}): {e}", u32::MAX)
            }),
            Err(e) => Err(format!("{LOOP_BUDGET_ENV} is not valid: {e}")),
        })
        .clone()
}

/// Everything needed to record a launch by hand (the runtime's tests).
///
/// A launch is one dispatch, or two for a folded 1-D grid whose length is
/// not a multiple of the per-dimension limit (full rows, then the tail);
/// each part has its own bind group, whose uniform block differs only in
/// `block_offset`. An empty grid has no parts. Record it with
/// [`PreparedDispatch::record`].
#[derive(Clone, Debug)]
pub struct PreparedDispatch {
    /// The cached pipeline of the kernel.
    pub pipeline: wgpu::ComputePipeline,
    /// The dispatches of the launch, in order (empty for an empty grid).
    pub parts: Vec<PreparedPart>,
}

/// One dispatch of a [`PreparedDispatch`].
#[derive(Clone, Debug)]
pub struct PreparedPart {
    /// Bind group 0: the buffers and a fresh uniform block for this part of
    /// the grid and these scalars.
    pub bind_group: wgpu::BindGroup,
    /// The physical dispatch size.
    pub workgroups: [u32; 3],
    /// The bind cache's entry this part uses, returned to the cache once
    /// the launch is submitted (see `bind_cache.rs`).
    pub(crate) reuse: Option<(BindKey, Bound)>,
}

impl PreparedDispatch {
    /// Records the whole launch into `pass`: sets the pipeline and, for each
    /// part, its bind group and its dispatch. Call it as often as needed in
    /// one pass (each call is one complete launch); it leaves the pass's
    /// pipeline and bind group 0 set to this launch's. Records nothing for
    /// an empty grid.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.parts.is_empty() {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        for part in &self.parts {
            pass.set_bind_group(0, &part.bind_group, &[]);
            let [x, y, z] = part.workgroups;
            pass.dispatch_workgroups(x, y, z);
        }
    }
}

impl GpuDevice {
    /// Encodes and submits one launch (one or two dispatches, see
    /// [`PreparedDispatch`], in one compute pass and one submit); returns at
    /// once (asynchronous), unless a `Device::time` scope without timestamp
    /// queries waits for it.
    ///
    /// Pipelines and bind group layouts are cached per device, keyed by the
    /// `KernelInfo`'s address: a second launch compiles nothing.
    /// `buffers` are the buffer arguments in parameter order, `scalars` the
    /// scalar arguments in parameter order.
    pub fn dispatch(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        buffers: &[GpuArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<(), LaunchError> {
        self.dispatch_with(kernel, grid, buffers, scalars, false)
    }

    /// [`GpuDevice::dispatch`], checked when `checks` says so (`true`, or
    /// a [`LaunchChecks`]; see `Device::checked`): the kernel's checked
    /// module runs, with its loop budget, and a zeroed report buffer, which
    /// is read back (waiting for the launch) and turned into an `Err` if a
    /// check failed.
    pub fn dispatch_with(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        buffers: &[GpuArg<'_>],
        scalars: &[ScalarArg],
        checks: impl Into<LaunchChecks>,
    ) -> Result<(), LaunchError> {
        let checks = checks.into();
        let checked = checks.checked;
        let loop_budget = match (checked, checks.loop_budget) {
            (false, _) => None,
            (true, Some(b)) => Some(b),
            (true, None) => env_loop_budget().map_err(|problem| LaunchError::InvalidArgument {
                kernel: &kernel.name,
                arg: LOOP_BUDGET_ENV,
                problem,
            })?,
        };
        let Some(launch) = self.check(kernel, grid, buffers, checked)? else {
            return Ok(());
        };
        // Inside `Device::record`/`record_pass` on this thread: keep the
        // launch for the program's encoder or pass (`record.rs`).
        let recording = super::record::target(self.id());
        if checked && recording == Some(true) {
            return Err(LaunchError::Recording {
                kernel: &kernel.name,
                problem: "a checked launch cannot be recorded into a compute pass (its report is copied out after \
                          its pass): record it into the encoder with `Device::record`, or launch it through a \
                          handle that is not checked"
                    .into(),
            });
        }
        let lost = |error| LaunchError::DeviceLost { kernel: &kernel.name, error };
        // A non-blocking poll runs wgpu's device-lost callback if the device
        // is gone: a launch on cached bind groups (`bind_cache.rs`) makes no
        // wgpu call that would fail on a lost device.
        let _ = self.wgpu_device().poll(wgpu::PollType::Poll);
        self.check_alive().map_err(lost)?;
        let report = match checked {
            true => {
                let words = report::WORDS as usize;
                Some(self.zeroed(words, words as u64 * 4).map_err(|e| self.buffer_failure(kernel, e))?)
            }
            false => None,
        };
        let report_buffer = report.as_ref().and_then(|r| r.buffer.as_ref());
        // A kernel with `println!`, `assert!`, ...: its print buffer, the
        // header written before the launch (the queue runs in order; a
        // recorded launch's at the program's next submit, before its
        // encoder runs).
        let prints = match kernel.debug_sites.is_empty() {
            true => None,
            false => {
                let words = crate::debug::buffer_words(kernel, self.print_words());
                let memory =
                    self.zeroed(words as usize, u64::from(words) * 4).map_err(|e| self.buffer_failure(kernel, e))?;
                let mut header = crate::debug::header(kernel);
                if recording == Some(false) {
                    // Into an encoder: the encoder clears this word before
                    // the launch's pass (`record.rs`), so that
                    // `Recorded::check` can tell a buffer the encoder has
                    // not run yet.
                    header[onekernel_abi::debug::print_buffer::DROPPED as usize] = super::record::NOT_RUN;
                }
                let header: Vec<u8> = header.iter().flat_map(|w| w.to_le_bytes()).collect();
                self.write(&memory, 0, &header).map_err(|e| self.buffer_failure(kernel, e))?;
                Some((memory, words))
            }
        };
        let prints_buffer = prints.as_ref().and_then(|(m, _)| m.buffer.as_ref());
        if recording.is_some() {
            let prepared = self
                .bind(kernel, Some(&launch), buffers, scalars, (report_buffer, prints_buffer), loop_budget, false)
                .map_err(|e| self.explain_launch(e))?;
            let report = report.and_then(|r| r.buffer);
            super::record::keep(self.id(), super::record::RecordedLaunch { kernel, prepared, report, prints });
            return Ok(());
        }
        let submitted = self
            .bind(kernel, Some(&launch), buffers, scalars, (report_buffer, prints_buffer), loop_budget, true)
            .and_then(|prepared| {
                self.submit_pass(&kernel.name, |pass| prepared.record(pass))
                    .map_err(|message| LaunchError::Gpu { kernel: &kernel.name, message })?;
                for part in prepared.parts {
                    if let Some((key, bound)) = part.reuse {
                        self.shared.binds.put(key, bound);
                    }
                }
                Ok(())
            });
        // A device lost on the way makes wgpu's errors less clear than this.
        submitted.map_err(|e| self.explain_launch(e))?;
        // A checked launch waits: its prints and panic now. Otherwise the
        // next wait reads them.
        if let Some((memory, words)) = prints {
            match checked {
                true => self.drain_one(kernel, &memory, words)?,
                false => self.defer_prints(kernel, memory, words),
            }
        }
        match report {
            Some(report) => {
                let mut words = [0u8; report::WORDS as usize * 4];
                self.read(&report, 0..words.len() as u64, &mut words).map_err(|e| self.buffer_failure(kernel, e))?;
                let word = |i: u32| u32::from_le_bytes(words[i as usize * 4..][..4].try_into().expect("4 bytes"));
                check_report(kernel, [word(0), word(1), word(2), word(3)])
            }
            None => Ok(()),
        }
    }

    /// A buffer operation of a launch failed: the device was lost, or wgpu
    /// refused.
    pub(crate) fn buffer_failure(&self, kernel: &'static KernelInfo, e: crate::error::BufferError) -> LaunchError {
        match e {
            crate::error::BufferError::Device(error) => LaunchError::DeviceLost { kernel: &kernel.name, error },
            other => LaunchError::Gpu { kernel: &kernel.name, message: other.to_string() },
        }
    }

    /// The cached pipeline and, per dispatch of the launch, a bind group for
    /// these args plus the physical dispatch size: what `dispatch` records.
    /// For the runtime's tests, which check how grids are split and record
    /// launches by hand.
    pub fn prepare(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        buffers: &[GpuArg<'_>],
        scalars: &[ScalarArg],
    ) -> Result<PreparedDispatch, LaunchError> {
        let launch = self.check(kernel, grid, buffers, false)?;
        self.bind(kernel, launch.as_ref(), buffers, scalars, (None, None), None, true)
    }

    /// Forgets the cached bind groups of `buffer`, which is being dropped.
    pub(crate) fn forget_buffer(&self, buffer: &wgpu::Buffer) {
        self.shared.binds.forget(buffer);
    }

    /// Bind groups kept for reuse by later launches (see `bind_cache.rs`).
    pub fn cached_bind_groups(&self) -> usize {
        self.shared.binds.len()
    }

    /// Number of pipelines compiled (and cached) on this device so far: one
    /// per kernel, plus one more for a kernel launched on a folded grid.
    pub fn compiled_kernels(&self) -> usize {
        self.shared.pipelines.len()
    }

    /// Checks every tile product of `kernel` against the cooperative
    /// matrices the adapter offers, before any pipeline is created (a
    /// driver given a shape it lacks may crash rather than fail).
    fn check_tile_shapes(&self, kernel: &'static KernelInfo) -> Result<(), LaunchError> {
        use wgpu::CooperativeScalarType as S;
        let scalar = |t: onekernel_abi::ScalarType| match t {
            onekernel_abi::ScalarType::F16 => Some(S::F16),
            onekernel_abi::ScalarType::F32 => Some(S::F32),
            _ => None,
        };
        let offered = self.cooperative_matrix_properties();
        for shape in kernel.tile_shapes.iter() {
            let found = offered.iter().any(|p| {
                (p.m_size, p.n_size, p.k_size) == (shape.m, shape.n, shape.k)
                    && Some(p.ab_type) == scalar(shape.ab)
                    && Some(p.cr_type) == scalar(shape.acc)
            });
            if !found {
                let list: Vec<String> = offered
                    .iter()
                    .map(|p| format!("{}x{}x{} {:?} -> {:?}", p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type))
                    .collect();
                return Err(LaunchError::UnsupportedTileShape {
                    kernel: &kernel.name,
                    shape: *shape,
                    offered: if list.is_empty() { "none".to_string() } else { list.join(", ") },
                    device: self.describe(),
                });
            }
        }
        Ok(())
    }

    /// Checks the bindings of a launch of `kernel` (`checked`: with the
    /// report buffer) against the device's binding limits, so that a device
    /// created with smaller limits than the kernel needs (an adopted one)
    /// gets an `Err` naming the limit instead of a wgpu validation error.
    fn check_binding_limits(&self, kernel: &'static KernelInfo, checked: bool) -> Result<(), LaunchError> {
        let limits = self.limits();
        let params_in_storage = kernel.params_binding == onekernel_abi::ParamsBinding::Storage;
        let storage = kernel.buffer_params().count() as u64 + u64::from(checked) + u64::from(params_in_storage);
        let highest =
            kernel.buffer_params().map(|(_, p)| p.slot).chain([kernel.uniform_binding + u32::from(checked)]).max();
        let needs = [
            ("max_storage_buffers_per_shader_stage", storage, limits.max_storage_buffers_per_shader_stage),
            (
                "max_uniform_buffers_per_shader_stage",
                u64::from(!params_in_storage),
                limits.max_uniform_buffers_per_shader_stage,
            ),
            (
                "max_bindings_per_bind_group",
                highest.map_or(0, |h| u64::from(h) + 1),
                limits.max_bindings_per_bind_group,
            ),
            ("max_bind_groups", 1, limits.max_bind_groups),
        ];
        match needs.into_iter().find(|&(_, needed, max)| needed > u64::from(max)) {
            Some((limit, needed, max)) => Err(LaunchError::LimitExceeded {
                kernel: &kernel.name,
                limit,
                needed,
                max: u64::from(max),
                device: self.describe(),
            }),
            None => Ok(()),
        }
    }

    /// Checks limits and arguments; `None` for an empty grid.
    fn check(
        &self,
        kernel: &'static KernelInfo,
        grid: Grid,
        buffers: &[GpuArg<'_>],
        checked: bool,
    ) -> Result<Option<LaunchPlan>, LaunchError> {
        let missing = kernel.features.missing_from(self.kernel_features());
        if !missing.is_empty() {
            return Err(LaunchError::MissingFeature { kernel: &kernel.name, missing, device: self.describe() });
        }
        self.check_tile_shapes(kernel)?;
        self.check_binding_limits(kernel, checked)?;
        let launch = plan(kernel, grid, self.launch_limits())?;
        let expected = kernel.buffer_params().count();
        if buffers.len() != expected {
            return Err(LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: format!(
                    "{} buffer arguments passed, but the kernel has {expected} buffer parameters",
                    buffers.len()
                ),
            });
        }
        for (arg, (param, _)) in buffers.iter().zip(kernel.buffer_params()) {
            if arg.param != param {
                return Err(LaunchError::InvalidArgument {
                    kernel: &kernel.name,
                    arg: kernel.param_name(param),
                    problem: format!(
                        "got the argument checked for parameter `{}` in its place",
                        kernel.param_name(arg.param)
                    ),
                });
            }
        }
        Ok(launch)
    }

    /// Fetches (or compiles) the pipeline and builds bind group 0 of each
    /// dispatch part (none for an empty grid, whose scalars and uniform
    /// layout are still checked); `cache`: take and give back bind groups
    /// of the bind cache (not for recorded launches, `record.rs`).
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &self,
        kernel: &'static KernelInfo,
        launch: Option<&LaunchPlan>,
        buffers: &[GpuArg<'_>],
        scalars: &[ScalarArg],
        (report, prints): (Option<&wgpu::Buffer>, Option<&wgpu::Buffer>),
        loop_budget: Option<u32>,
        cache: bool,
    ) -> Result<PreparedDispatch, LaunchError> {
        let lengths: Vec<(usize, usize)> = buffers.iter().map(|a| (a.param, a.len)).collect();
        let blocks = match launch {
            Some(launch) => launch
                .parts()
                .map(|part| Ok((uniform_block(kernel, launch, part, &lengths, scalars)?, part.workgroups)))
                .collect::<Result<Vec<_>, LaunchError>>()?,
            None => {
                let part = DispatchPart { workgroups: [0; 3], block_offset: 0 };
                let empty = LaunchPlan { groups: [0; 3], folded: false, parts: [Some(part), None] };
                uniform_block(kernel, &empty, &part, &lengths, scalars)?;
                Vec::new()
            }
        };
        // Empty buffers have no wgpu buffer, and WebGPU has no empty
        // bindings: each is bound to a fresh one-element stand-in, and the
        // pipeline is the variant in which `arrayLength` of those bindings
        // is 0 (see `empty_bindings.rs`).
        let empty_params: Vec<&onekernel_abi::ParamInfo> =
            buffers.iter().filter(|a| a.buffer.is_none()).map(|a| &kernel.params[a.param]).collect();
        let empty: Vec<u32> = empty_params.iter().map(|p| p.slot).collect();
        // The one choice of module: a folded grid runs a folded one, a
        // checked launch a checked one (with its loop budget, if set).
        let module = ModuleKey { folded: launch.is_some_and(|l| l.folded), checked: report.is_some() };
        let mut key = PipelineKey { empty: empty.clone(), ..PipelineKey::new(module) };
        if let Some(budget) = loop_budget.filter(|_| module.checked) {
            key = key.constant(report::LOOP_BUDGET_ID, f64::from(budget));
        }
        let cached = self.shared.pipelines.get_or_compile(self, kernel, key)?;
        // The common case is kept between launches (`bind_cache.rs`): every
        // buffer bound, no report buffer. Per part of such a launch: its
        // key, and the entry taken out of the cache if there is one.
        let reusable = cache && report.is_none() && prints.is_none() && empty.is_empty();
        let mut reused: Vec<Option<(BindKey, Option<Bound>)>> = (0..blocks.len())
            .map(|part| {
                reusable.then(|| {
                    let key = BindKey {
                        kernel: kernel as *const KernelInfo as usize,
                        module,
                        part,
                        buffers: buffers
                            .iter()
                            .filter_map(|a| {
                                Some((kernel.params[a.param].slot, a.buffer?.clone(), binding_size(kernel, a)))
                            })
                            .collect(),
                    };
                    let bound = self.shared.binds.take(&key);
                    (key, bound)
                })
            })
            .collect();
        let parts = self
            .capture(|| {
                let stand_ins: Vec<wgpu::Buffer> = empty_params
                    .iter()
                    .map(|p| {
                        self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                            label: Some("onekernel empty buffer"),
                            size: super::stand_in_size(&p.ty),
                            usage: wgpu::BufferUsages::STORAGE,
                            mapped_at_creation: false,
                        })
                    })
                    .collect();
                let mut stand_ins = stand_ins.iter();
                // A buffer is bound as its `len` elements (in whole words),
                // not its whole allocation: a `wgpu::Buffer` adopted with
                // `Buffer::from_wgpu` may be longer than the `Buffer`, and
                // the kernel's `len()` is the binding's.
                let bound: Vec<(u32, &wgpu::Buffer, Option<std::num::NonZeroU64>)> = buffers
                    .iter()
                    .map(|a| {
                        let slot = kernel.params[a.param].slot;
                        match a.buffer {
                            Some(b) => (slot, b, std::num::NonZeroU64::new(binding_size(kernel, a))),
                            None => (slot, stand_ins.next().expect("one per empty"), None),
                        }
                    })
                    .collect();
                blocks
                    .iter()
                    .zip(&mut reused)
                    .map(|((block, workgroups), slot)| {
                        let key = match slot.take() {
                            Some((key, Some(mut bound))) => {
                                if bound.block != *block {
                                    self.queue().write_buffer(&bound.uniforms, 0, block);
                                    bound.block.clone_from(block);
                                }
                                let bind_group = bound.bind_group.clone();
                                return PreparedPart { bind_group, workgroups: *workgroups, reuse: Some((key, bound)) };
                            }
                            Some((key, None)) => Some(key),
                            None => None,
                        };
                        // A recorded launch: a slot of its scope's uniform
                        // arena, written when the scope closes (`record.rs`).
                        let storage = kernel.params_binding == onekernel_abi::ParamsBinding::Storage;
                        let slot = if cache { None } else { super::record::uniform_slot(self, block, storage) };
                        let (uniforms, offset) = match slot {
                            Some(slot) => slot,
                            None => {
                                // Not `create_buffer_init`, which panics on a lost device.
                                let uniforms = self.wgpu_device().create_buffer(&wgpu::BufferDescriptor {
                                    label: Some(&*kernel.name),
                                    size: block.len() as u64,
                                    usage: match storage {
                                        false => wgpu::BufferUsages::UNIFORM,
                                        true => wgpu::BufferUsages::STORAGE,
                                    } | wgpu::BufferUsages::COPY_DST,
                                    mapped_at_creation: false,
                                });
                                self.queue().write_buffer(&uniforms, 0, block);
                                (uniforms, 0)
                            }
                        };
                        let mut entries: Vec<wgpu::BindGroupEntry<'_>> = bound
                            .iter()
                            .map(|&(binding, buffer, size)| wgpu::BindGroupEntry {
                                binding,
                                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                    buffer,
                                    offset: 0,
                                    size,
                                }),
                            })
                            .collect();
                        entries.push(wgpu::BindGroupEntry {
                            binding: kernel.uniform_binding,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &uniforms,
                                offset,
                                size: std::num::NonZeroU64::new(block.len() as u64),
                            }),
                        });
                        if let Some(report) = report {
                            entries.push(wgpu::BindGroupEntry {
                                binding: kernel.uniform_binding + 1,
                                resource: report.as_entire_binding(),
                            });
                        }
                        if let Some(prints) = prints {
                            entries.push(wgpu::BindGroupEntry {
                                binding: kernel.print_binding(),
                                resource: prints.as_entire_binding(),
                            });
                        }
                        // The bind group keeps the uniform buffer alive.
                        let bind_group = self.wgpu_device().create_bind_group(&wgpu::BindGroupDescriptor {
                            label: Some(&*kernel.name),
                            layout: &cached.layout,
                            entries: &entries,
                        });
                        let reuse = key.map(|key| {
                            let bound = Bound {
                                uniforms: uniforms.clone(),
                                bind_group: bind_group.clone(),
                                block: block.clone(),
                            };
                            (key, bound)
                        });
                        PreparedPart { bind_group, workgroups: *workgroups, reuse }
                    })
                    .collect::<Vec<_>>()
            })
            .map_err(|message| LaunchError::Gpu { kernel: &kernel.name, message })?;
        Ok(PreparedDispatch { pipeline: cached.pipeline.clone(), parts })
    }
}

/// The bytes a buffer argument is bound as: its elements, rounded up to a
/// whole word (how the runtime allocates; `f16` buffers of odd length).
fn binding_size(kernel: &KernelInfo, arg: &GpuArg<'_>) -> u64 {
    let stride = u64::from(kernel.params[arg.param].ty.stride());
    (arg.len as u64).saturating_mul(stride).next_multiple_of(4)
}

/// The `Err` a checked launch's report stands for, if any check failed.
pub(super) fn check_report(
    kernel: &'static KernelInfo,
    words: [u32; report::WORDS as usize],
) -> Result<(), LaunchError> {
    let [failures, site, index, len] = words;
    if failures == 0 {
        return Ok(());
    }
    let Some(site) = kernel.checks.get(site as usize) else {
        return Err(LaunchError::InvalidKernel {
            kernel: &kernel.name,
            problem: format!("a check failed at site {site}, but the kernel has {} check sites", kernel.checks.len()),
        });
    };
    let location = format!("{}:{}:{}", kernel.source_file, site.line, site.column);
    let what: &'static str = &site.what;
    Err(match site.kind {
        CheckKind::OutOfBounds => {
            LaunchError::OutOfBounds { kernel: &kernel.name, location, what, index, len, failures }
        }
        CheckKind::DivisionByZero => LaunchError::DivisionByZero { kernel: &kernel.name, location, what, failures },
        CheckKind::LoopBudget => LaunchError::LoopBudget { kernel: &kernel.name, location, budget: len },
    })
}
