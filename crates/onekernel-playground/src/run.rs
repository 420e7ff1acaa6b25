//! Running a kernel on the server's GPU: the run request (grid, inputs by
//! formula or seeded random values), the limits, and the one thread that
//! owns the device and runs launches one at a time.

use crate::formula::{self, At, Random};
use crate::Limits;
use onekernel_runtime::__private::{backend, gpu_arg, gpu_arg_mut, DeviceBackend, GpuArg, LaunchChecks, ScalarArg};
use onekernel_runtime::abi::{DataType, KernelInfo, ModuleKey, ParamKind, ScalarType};
use onekernel_runtime::half::f16;
use onekernel_runtime::{Buffer, Device, Dim3, Grid, LaunchError};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{mpsc, Mutex};

/// The most lines of a run's `println!`s the answer carries (the rest are
/// counted).
const MAX_PRINTED: usize = 1000;
/// The room for a launch's printed records on the GPU: 64 KiB (about 3000
/// lines; the runtime says how many more were dropped).
const PRINT_BUFFER_BYTES: usize = 64 << 10;
/// The widest width or precision a kernel's format may ask for here, so that
/// formatting a run's lines stays small.
const MAX_FORMAT_WIDTH: usize = 256;

/// The lines of the run in progress (the GPU thread's launches are the
/// only ones of the server; the runtime's print handler is process-wide).
struct Printed {
    /// Whether lines are kept: during the first (untimed) launch only.
    on: bool,
    /// The lines, each with whether it went to stderr.
    lines: Vec<(String, bool)>,
    /// Lines past [`MAX_PRINTED`].
    more: usize,
}

static PRINTED: Mutex<Printed> = Mutex::new(Printed { on: false, lines: Vec::new(), more: 0 });

fn printed() -> std::sync::MutexGuard<'static, Printed> {
    PRINTED.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends the lines kernels print to [`PRINTED`].
fn keep_printed_lines() {
    onekernel_runtime::debug::set_print_handler(Some(std::sync::Arc::new(|line| {
        let mut p = printed();
        if !p.on {
            return;
        }
        if p.lines.len() < MAX_PRINTED {
            p.lines.push((line.to_string(), line.stderr));
        } else {
            p.more += 1;
        }
    })));
}

/// A format width or precision past [`MAX_FORMAT_WIDTH`] in `info`'s
/// `println!`s and `assert!`s, as an error message.
fn format_too_wide(info: &KernelInfo) -> Option<String> {
    for site in info.debug_sites.iter() {
        let Ok(pieces) = onekernel_runtime::abi::debug::parse_format(&site.format) else { continue };
        for piece in pieces {
            if let onekernel_runtime::abi::debug::Piece::Arg { spec, .. } = piece {
                let widest = spec.width.unwrap_or(0).max(spec.precision.unwrap_or(0));
                if widest > MAX_FORMAT_WIDTH {
                    return Some(format!(
                        "line {}: a width or precision of {widest}: the playground prints widths and precisions up to {MAX_FORMAT_WIDTH}",
                        site.line
                    ));
                }
            }
        }
    }
    None
}

/// How one buffer or scalar gets its values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Buffers: the number of elements.
    pub len: Option<usize>,
    /// Buffers: `[rows, cols]`, for `x`/`y` in formulas and a 2-D plot.
    pub shape: Option<[usize; 2]>,
    /// Values by formula (see [`formula`]).
    pub formula: Option<String>,
    /// Seeded random values in `[min, max)`.
    pub random: Option<RandomSpec>,
    /// Scalars: the value.
    pub value: Option<f64>,
}

/// Seeded random values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSpec {
    /// The seed.
    #[serde(default)]
    pub seed: u64,
    /// Lowest value.
    #[serde(default)]
    pub min: f64,
    /// Highest value (excluded).
    #[serde(default = "one")]
    pub max: f64,
}

fn one() -> f64 {
    1.0
}

/// The grid: `threads` (rounded up to whole workgroups) or `blocks`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// At least this many threads per axis.
    pub threads: Option<Vec<usize>>,
    /// Exactly this many workgroups per axis.
    pub blocks: Option<Vec<usize>>,
}

/// A run request's launch part.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The kernel's text.
    pub source: String,
    /// Which kernel (default: the first).
    pub kernel: Option<String>,
    /// The grid.
    pub grid: GridSpec,
    /// Each parameter's input, by name.
    #[serde(default)]
    pub inputs: HashMap<String, Input>,
    /// Values of the kernel's const parameters (`N=128, BLOCK=256`).
    pub consts: Option<String>,
}

/// A problem with the request (the answer is a 4xx).
#[derive(Debug)]
pub struct BadRequest {
    /// 400, 413 or 422.
    pub status: u16,
    /// What is wrong.
    pub message: String,
}

fn bad(message: impl Into<String>) -> BadRequest {
    BadRequest { status: 400, message: message.into() }
}

fn limit(message: impl Into<String>) -> BadRequest {
    BadRequest { status: 422, message: message.into() }
}

/// A buffer's or scalar's values, by element type.
#[derive(Debug, Clone)]
pub enum Data {
    /// `f32`.
    F32(Vec<f32>),
    /// `f64`.
    F64(Vec<f64>),
    /// `f16`.
    F16(Vec<f16>),
    /// `i32`.
    I32(Vec<i32>),
    /// `u32`.
    U32(Vec<u32>),
    /// `i64`.
    I64(Vec<i64>),
    /// `u64`.
    U64(Vec<u64>),
}

impl Data {
    fn from_f64(ty: ScalarType, values: impl Iterator<Item = f64>) -> Data {
        match ty {
            ScalarType::F32 => Data::F32(values.map(|v| v as f32).collect()),
            ScalarType::F64 => Data::F64(values.collect()),
            ScalarType::F16 => Data::F16(values.map(f16::from_f64).collect()),
            ScalarType::I32 => Data::I32(values.map(|v| v as i32).collect()),
            ScalarType::U32 => Data::U32(values.map(|v| v as u32).collect()),
            ScalarType::I64 => Data::I64(values.map(|v| v as i64).collect()),
            ScalarType::U64 => Data::U64(values.map(|v| v as u64).collect()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::U64(v) => v.len(),
        }
    }

    /// The first `max` values as JSON (NaN and infinities as strings).
    fn json(&self, max: usize) -> Vec<Value> {
        fn float(v: f64) -> Value {
            if v.is_finite() {
                json!(v)
            } else if v.is_nan() {
                json!("NaN")
            } else if v > 0.0 {
                json!("inf")
            } else {
                json!("-inf")
            }
        }
        match self {
            Data::F32(v) => v.iter().take(max).map(|&x| float(x as f64)).collect(),
            Data::F64(v) => v.iter().take(max).map(|&x| float(x)).collect(),
            Data::F16(v) => v.iter().take(max).map(|&x| float(x.to_f64())).collect(),
            Data::I32(v) => v.iter().take(max).map(|&x| json!(x)).collect(),
            Data::U32(v) => v.iter().take(max).map(|&x| json!(x)).collect(),
            Data::I64(v) => v.iter().take(max).map(|&x| json!(x)).collect(),
            Data::U64(v) => v.iter().take(max).map(|&x| json!(x)).collect(),
        }
    }

    fn scalar(&self) -> Option<ScalarArg> {
        Some(match self {
            Data::F32(v) => ScalarArg::from(*v.first()?),
            Data::F64(v) => ScalarArg::from(*v.first()?),
            Data::F16(v) => ScalarArg::from(*v.first()?),
            Data::I32(v) => ScalarArg::from(*v.first()?),
            Data::U32(v) => ScalarArg::from(*v.first()?),
            Data::I64(v) => ScalarArg::from(*v.first()?),
            Data::U64(v) => ScalarArg::from(*v.first()?),
        })
    }
}

/// One parameter, ready to launch.
#[derive(Debug)]
pub struct Arg {
    /// Its name.
    pub name: String,
    /// How it is passed.
    pub kind: ParamKind,
    /// Its values (a scalar: one).
    pub data: Data,
    /// Its shape, if given.
    pub shape: Option<[usize; 2]>,
}

/// A launch, checked against the limits: what the GPU thread runs.
#[derive(Debug)]
pub struct Launch {
    /// The kernel.
    pub info: KernelInfo,
    /// The grid.
    pub grid: Grid,
    /// Every parameter in order.
    pub args: Vec<Arg>,
    /// The loop budget the kernel is launched with.
    pub loop_budget: u32,
}

fn dim3(v: &[usize], what: &str) -> Result<Dim3, BadRequest> {
    match *v {
        [x] => Ok(Dim3::new(x, 1, 1)),
        [x, y] => Ok(Dim3::new(x, y, 1)),
        [x, y, z] => Ok(Dim3::new(x, y, z)),
        _ => Err(bad(format!("`grid.{what}` takes 1 to 3 numbers, e.g. [1024] or [64, 64]"))),
    }
}

/// The grid of a request, and how many invocations it runs.
pub fn grid(spec: &GridSpec, workgroup_size: [u32; 3], limits: &Limits) -> Result<(Grid, u64), BadRequest> {
    let grid = match (&spec.threads, &spec.blocks) {
        (Some(t), None) => Grid::threads(dim3(t, "threads")?),
        (None, Some(b)) => Grid::blocks(dim3(b, "blocks")?),
        _ => return Err(bad("`grid` takes `threads` or `blocks` (one of them)")),
    };
    let groups = match grid {
        Grid::Blocks(b) => b,
        Grid::Threads(t) => {
            let [wx, wy, wz] = workgroup_size.map(|w| (w as usize).max(1));
            Dim3::new(t.x.div_ceil(wx), t.y.div_ceil(wy), t.z.div_ceil(wz))
        }
    };
    let per_group: u64 = workgroup_size.iter().map(|&w| w as u64).product();
    let invocations = [groups.x, groups.y, groups.z].iter().try_fold(per_group, |acc, &g| acc.checked_mul(g as u64));
    match invocations {
        Some(n) if n <= limits.max_invocations => Ok((grid, n)),
        _ => Err(limit(format!(
            "the grid runs more than {} invocations (the playground's limit)",
            limits.max_invocations
        ))),
    }
}

/// The loop budget for a launch of `invocations`: the work of all
/// invocations' loops together stays near `limits.loop_work`.
pub fn loop_budget(invocations: u64, limits: &Limits) -> u32 {
    let per = limits.loop_work / invocations.max(1);
    per.clamp(limits.min_loop_budget as u64, limits.max_loop_budget as u64) as u32
}

/// Makes the arguments of `info`'s parameters from the request's inputs.
pub fn args(info: &KernelInfo, inputs: &HashMap<String, Input>, limits: &Limits) -> Result<Vec<Arg>, BadRequest> {
    for name in inputs.keys() {
        if !info.params.iter().any(|p| p.name == name.as_str()) {
            return Err(bad(format!("kernel `{}` has no parameter `{name}`", info.name)));
        }
    }
    let mut total_bytes = 0u64;
    let mut out = Vec::new();
    for p in info.params.iter() {
        let DataType::Scalar(ty) = p.ty else {
            return Err(limit(format!(
                "parameter `{}`: the playground makes values of scalar types only (f32, i32, u32, ...), not `{}`",
                p.name,
                p.ty.rust_name()
            )));
        };
        let input = inputs.get(p.name.as_ref());
        let what = format!("parameter `{}`", p.name);
        if p.kind == ParamKind::Scalar {
            let input = input.ok_or_else(|| bad(format!("{what}: no value (give `value` or `formula`)")))?;
            let v = match (&input.value, &input.formula) {
                (Some(v), None) => *v,
                (None, Some(f)) => formula::parse(f).map_err(|e| bad(format!("{what}: {e}")))?.eval(&At {
                    i: 0.0,
                    n: 1.0,
                    cols: 1.0,
                    rows: 1.0,
                }),
                _ => return Err(bad(format!("{what}: give `value` or `formula` (one of them)"))),
            };
            out.push(Arg {
                name: p.name.to_string(),
                kind: p.kind,
                data: Data::from_f64(ty, std::iter::once(v)),
                shape: None,
            });
            continue;
        }
        let input = input.ok_or_else(|| bad(format!("{what}: no input (give `len`, and `formula` or `random`)")))?;
        let len = match (input.len, input.shape) {
            (Some(len), Some([r, c])) if r.checked_mul(c) != Some(len) => {
                return Err(bad(format!("{what}: shape [{r}, {c}] does not hold {len} elements")))
            }
            (Some(len), _) => len,
            (None, Some([r, c])) => r.checked_mul(c).ok_or_else(|| limit(format!("{what}: too many elements")))?,
            (None, None) => return Err(bad(format!("{what}: give `len` (or `shape`)"))),
        };
        if len > limits.max_buffer_len {
            return Err(limit(format!(
                "{what}: {len} elements; the playground's limit is {} per buffer",
                limits.max_buffer_len
            )));
        }
        total_bytes += len as u64 * ty.size() as u64;
        if total_bytes > limits.max_total_bytes {
            return Err(limit(format!(
                "the buffers hold more than {} bytes together (the playground's limit)",
                limits.max_total_bytes
            )));
        }
        let (rows, cols) = match input.shape {
            Some([r, c]) => (r.max(1) as f64, c.max(1) as f64),
            None => (1.0, len.max(1) as f64),
        };
        let n = len as f64;
        let data = match (&input.formula, &input.random) {
            (Some(f), None) => {
                let e = formula::parse(f).map_err(|e| bad(format!("{what}: {e}")))?;
                Data::from_f64(ty, (0..len).map(|i| e.eval(&At { i: i as f64, n, cols, rows })))
            }
            (None, Some(r)) => {
                if !(r.min.is_finite() && r.max.is_finite()) {
                    return Err(bad(format!("{what}: `random` needs finite `min` and `max`")));
                }
                let mut g = Random::new(r.seed);
                let integer = !matches!(ty, ScalarType::F16 | ScalarType::F32 | ScalarType::F64);
                Data::from_f64(
                    ty,
                    (0..len).map(|_| {
                        let v = r.min + (r.max - r.min) * g.next_f64();
                        if integer {
                            v.floor()
                        } else {
                            v
                        }
                    }),
                )
            }
            (None, None) => Data::from_f64(ty, (0..len).map(|_| 0.0)),
            (Some(_), Some(_)) => return Err(bad(format!("{what}: give `formula` or `random`, not both"))),
        };
        out.push(Arg { name: p.name.to_string(), kind: p.kind, data, shape: input.shape });
    }
    Ok(out)
}

/// A job for the GPU thread.
pub struct Job {
    /// The launch.
    pub launch: Launch,
    /// Where the answer goes.
    pub reply: tokio::sync::oneshot::Sender<Value>,
}

/// The GPU thread's handle: send jobs, read the device's name.
#[derive(Clone)]
pub struct Gpu {
    jobs: mpsc::SyncSender<Job>,
    /// The adapter's name, or why there is none.
    pub device: std::sync::Arc<Result<String, String>>,
}

impl Gpu {
    /// Starts the thread that owns the device. `queue` launches may wait.
    pub fn start(queue: usize, max_values: usize) -> Gpu {
        let (jobs, rx) = mpsc::sync_channel::<Job>(queue);
        let (name_tx, name_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("onekernel-playground-gpu".into())
            .spawn(move || worker(rx, name_tx, max_values))
            .expect("spawn the GPU thread");
        let device = name_rx.recv().unwrap_or_else(|_| Err("the GPU thread stopped".into()));
        Gpu { jobs, device: std::sync::Arc::new(device) }
    }

    /// Queues a launch; Err when the queue is full or the thread is gone.
    pub fn submit(&self, job: Job) -> Result<(), &'static str> {
        self.jobs.try_send(job).map_err(|e| match e {
            mpsc::TrySendError::Full(_) => "the GPU is busy with other runs: try again in a moment",
            mpsc::TrySendError::Disconnected(_) => "the GPU thread has stopped",
        })
    }
}

fn worker(rx: mpsc::Receiver<Job>, name: mpsc::Sender<Result<String, String>>, max_values: usize) {
    keep_printed_lines();
    let open = || {
        let d = Device::gpu();
        if let Ok(d) = &d {
            d.set_print_buffer_size(PRINT_BUFFER_BYTES);
        }
        d
    };
    let mut device = open();
    let _ = name.send(device.as_ref().map(|d| d.name()).map_err(|e| e.to_string()));
    // The runtime keys its pipelines by the address of a `&'static
    // KernelInfo`, as the macro's statics are: each distinct kernel run is
    // kept for the life of the server (a few tens of KiB each).
    let mut kept: HashMap<String, Vec<&'static KernelInfo>> = HashMap::new();
    for job in rx {
        let Launch { info, grid, mut args, loop_budget } = job.launch;
        let checked = info.module(ModuleKey::CHECKED).map_or("", |m| &*m.wgsl);
        let key = format!("{}\u{0}{checked}", info.name);
        let list = kept.entry(key).or_default();
        let info: &'static KernelInfo = match list.iter().find(|k| ***k == info) {
            Some(&k) => k,
            None => {
                let k: &'static KernelInfo = Box::leak(Box::new(info));
                list.push(k);
                k
            }
        };
        let mut reopen = false;
        *printed() = Printed { on: true, lines: Vec::new(), more: 0 };
        let mut answer = match &device {
            Ok(_) if format_too_wide(info).is_some() => {
                json!({"ok": false, "error": {"kind": "launch", "message": format_too_wide(info)}})
            }
            Ok(d) => {
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    launch(d, info, grid, loop_budget, &mut args)
                }));
                match result {
                    Ok(Ok((time, clock))) => {
                        let groups = grid.groups(info);
                        let outputs: Vec<Value> = args
                            .iter()
                            .filter(|a| a.kind.is_writable())
                            .map(|a| {
                                json!({
                                    "name": a.name, "ty": data_ty(&a.data), "len": a.data.len(), "shape": a.shape,
                                    "values": a.data.json(max_values), "truncated": a.data.len() > max_values,
                                })
                            })
                            .collect();
                        let (threads, blocks) = match grid {
                            Grid::Threads(t) => (Some([t.x, t.y, t.z]), None),
                            Grid::Blocks(b) => (None, Some([b.x, b.y, b.z])),
                        };
                        let per: u64 = info.workgroup_size.iter().map(|&w| w as u64).product();
                        json!({
                            "ok": true, "kernel": info.name, "device": d.name(),
                            "grid": {
                                "threads": threads, "blocks": blocks,
                                "workgroups": [groups.x, groups.y, groups.z],
                                "workgroup_size": info.workgroup_size,
                                "invocations": per * groups.x as u64 * groups.y as u64 * groups.z as u64,
                            },
                            "time_us": time, "clock": clock, "loop_budget": loop_budget, "outputs": outputs,
                        })
                    }
                    Ok(Err(e)) => {
                        // A lost device is opened again for the next run.
                        reopen = matches!(e, RunError::Launch(LaunchError::DeviceLost { .. }));
                        e.json(loop_budget)
                    }
                    Err(_) => {
                        json!({"ok": false, "error": {"kind": "internal", "message": "the launch panicked (a bug in onekernel): please report the kernel"}})
                    }
                }
            }
            Err(e) => {
                json!({"ok": false, "error": {"kind": "no_gpu", "message": format!("this server has no GPU adapter ({e}); install lavapipe (`bash .ci/run`) and `source .ci/env.sh`")}})
            }
        };
        if reopen {
            device = open();
        }
        // The lines the run's kernel printed (its first launch's), beside
        // the outputs or the error.
        let p = std::mem::replace(&mut *printed(), Printed { on: false, lines: Vec::new(), more: 0 });
        let lines: Vec<Value> =
            p.lines.into_iter().map(|(text, stderr)| json!({"text": text, "stderr": stderr})).collect();
        answer["prints"] = json!(lines);
        answer["prints_more"] = json!(p.more);
        let _ = job.reply.send(answer);
    }
}

fn data_ty(d: &Data) -> &'static str {
    match d {
        Data::F32(_) => "f32",
        Data::F64(_) => "f64",
        Data::F16(_) => "f16",
        Data::I32(_) => "i32",
        Data::U32(_) => "u32",
        Data::I64(_) => "i64",
        Data::U64(_) => "u64",
    }
}

enum RunError {
    Launch(LaunchError),
    Other(String),
}

impl RunError {
    fn json(&self, budget: u32) -> Value {
        match self {
            RunError::Launch(e) => {
                let kind = match e {
                    LaunchError::LoopBudget { .. } => "loop_budget",
                    LaunchError::OutOfBounds { .. } => "out_of_bounds",
                    LaunchError::DivisionByZero { .. } => "division_by_zero",
                    LaunchError::KernelPanic { .. } => "panic",
                    _ => "launch",
                };
                let help = match e {
                    LaunchError::LoopBudget { .. } => Some(format!(
                        "the playground stops every loop after {budget} iterations per invocation (in all the kernel's loops together), so that a loop that never ends cannot hang the GPU"
                    )),
                    _ => None,
                };
                json!({"ok": false, "error": {"kind": kind, "message": e.to_string(), "help": help, "line": line_of(e)}})
            }
            RunError::Other(m) => json!({"ok": false, "error": {"kind": "launch", "message": m}}),
        }
    }
}

/// The editor line of a launch error's `file:line:column`.
fn line_of(e: &LaunchError) -> Option<usize> {
    let location = match e {
        LaunchError::KernelPanic { line, .. } => return Some(*line as usize),
        LaunchError::LoopBudget { location, .. }
        | LaunchError::OutOfBounds { location, .. }
        | LaunchError::DivisionByZero { location, .. } => location,
        _ => return None,
    };
    location.rsplit(':').nth(1)?.parse().ok()
}

/// Uploads, launches (checked: the module with the loop budget and
/// bounds checks), times, and reads the writable buffers back into `args`.
fn launch(
    device: &Device,
    info: &'static KernelInfo,
    grid: Grid,
    loop_budget: u32,
    args: &mut [Arg],
) -> Result<(f64, String), RunError> {
    let checks = LaunchChecks { checked: true, loop_budget: Some(loop_budget) };
    let DeviceBackend::Gpu(gpu) = backend(device) else {
        return Err(RunError::Other("the playground runs kernels on a GPU only".into()));
    };
    let buf_err = |e: onekernel_runtime::BufferError| RunError::Other(e.to_string());
    let mut buffers: Vec<(usize, AnyBuffer)> = Vec::new();
    let mut scalars = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a.kind == ParamKind::Scalar {
            scalars.push(a.data.scalar().ok_or_else(|| RunError::Other(format!("no value for `{}`", a.name)))?);
        } else {
            buffers.push((i, AnyBuffer::new(device, &a.data).map_err(buf_err)?));
        }
    }
    // A first launch, untimed: the driver may compile the shader on first
    // use (lavapipe does, taking far longer than the kernel). Its errors
    // (a loop past its budget, an index out of bounds) are the answer.
    let gpu_args = bind(&mut buffers, args, info, gpu)?;
    let first = gpu.dispatch_with(info, grid, &gpu_args, &scalars, checks);
    // Its lines are the run's (a checked launch prints them at once); the
    // timed launch prints the same again.
    printed().on = false;
    first.map_err(RunError::Launch)?;
    drop(gpu_args);
    // The outputs as they were, then the timed launch.
    for (i, b) in buffers.iter_mut() {
        if args[*i].kind.is_writable() {
            b.write(&args[*i].data).map_err(buf_err)?;
        }
    }
    let gpu_args = bind(&mut buffers, args, info, gpu)?;
    let (result, timing) = device
        .time(|| gpu.dispatch_with(info, grid, &gpu_args, &scalars, checks))
        .map_err(|e| RunError::Other(e.to_string()))?;
    drop(gpu_args);
    result.map_err(RunError::Launch)?;
    for (i, b) in &buffers {
        if args[*i].kind.is_writable() {
            args[*i].data = b.read().map_err(buf_err)?;
        }
    }
    Ok((timing.total.as_secs_f64() * 1e6, timing.clock.to_string()))
}

/// The buffers as the arguments of a launch of `info`.
fn bind<'b>(
    buffers: &'b mut [(usize, AnyBuffer)],
    args: &[Arg],
    info: &'static KernelInfo,
    gpu: &onekernel_runtime::__private::GpuDevice,
) -> Result<Vec<GpuArg<'b>>, RunError> {
    buffers
        .iter_mut()
        .map(|(i, b)| b.arg(info, *i, gpu, args[*i].kind.is_writable()))
        .collect::<Result<_, _>>()
        .map_err(RunError::Launch)
}

enum AnyBuffer {
    F32(Buffer<f32>),
    F64(Buffer<f64>),
    F16(Buffer<f16>),
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
}

macro_rules! each {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            AnyBuffer::F32($b) => $e,
            AnyBuffer::F64($b) => $e,
            AnyBuffer::F16($b) => $e,
            AnyBuffer::I32($b) => $e,
            AnyBuffer::U32($b) => $e,
            AnyBuffer::I64($b) => $e,
            AnyBuffer::U64($b) => $e,
        }
    };
}

impl AnyBuffer {
    fn new(device: &Device, data: &Data) -> Result<AnyBuffer, onekernel_runtime::BufferError> {
        Ok(match data {
            Data::F32(v) => AnyBuffer::F32(Buffer::from_slice(device, v)?),
            Data::F64(v) => AnyBuffer::F64(Buffer::from_slice(device, v)?),
            Data::F16(v) => AnyBuffer::F16(Buffer::from_slice(device, v)?),
            Data::I32(v) => AnyBuffer::I32(Buffer::from_slice(device, v)?),
            Data::U32(v) => AnyBuffer::U32(Buffer::from_slice(device, v)?),
            Data::I64(v) => AnyBuffer::I64(Buffer::from_slice(device, v)?),
            Data::U64(v) => AnyBuffer::U64(Buffer::from_slice(device, v)?),
        })
    }

    fn arg<'b>(
        &'b mut self,
        info: &'static KernelInfo,
        param: usize,
        gpu: &onekernel_runtime::__private::GpuDevice,
        writable: bool,
    ) -> Result<GpuArg<'b>, LaunchError> {
        if writable {
            each!(self, b => gpu_arg_mut(b, info, param, gpu))
        } else {
            each!(self, b => gpu_arg(b, info, param, gpu))
        }
    }

    /// Overwrites the buffer with `data` (of its type and length).
    fn write(&mut self, data: &Data) -> Result<(), onekernel_runtime::BufferError> {
        match (self, data) {
            (AnyBuffer::F32(b), Data::F32(v)) => b.write(v),
            (AnyBuffer::F64(b), Data::F64(v)) => b.write(v),
            (AnyBuffer::F16(b), Data::F16(v)) => b.write(v),
            (AnyBuffer::I32(b), Data::I32(v)) => b.write(v),
            (AnyBuffer::U32(b), Data::U32(v)) => b.write(v),
            (AnyBuffer::I64(b), Data::I64(v)) => b.write(v),
            (AnyBuffer::U64(b), Data::U64(v)) => b.write(v),
            _ => Ok(()),
        }
    }

    fn read(&self) -> Result<Data, onekernel_runtime::BufferError> {
        Ok(match self {
            AnyBuffer::F32(b) => Data::F32(b.read()?),
            AnyBuffer::F64(b) => Data::F64(b.read()?),
            AnyBuffer::F16(b) => Data::F16(b.read()?),
            AnyBuffer::I32(b) => Data::I32(b.read()?),
            AnyBuffer::U32(b) => Data::U32(b.read()?),
            AnyBuffer::I64(b) => Data::I64(b.read()?),
            AnyBuffer::U64(b) => Data::U64(b.read()?),
        })
    }
}
