//! The onekernel playground: a web page where a learner types a kernel and
//! sees what the GPU runs (WGSL, SPIR-V, naga IR, bindings, the explain
//! view), recompiled as they type, errors underlined at their spans, and
//! runs on the server's GPU.
//!
//! The server is axum on tokio. Compiles run on tokio's blocking threads;
//! launches on one thread that owns the GPU device, one at a time, so the
//! server answers other requests while a kernel runs. The page (one HTML,
//! one JS, one CSS file and the CodeMirror bundle, all in the binary) works
//! offline.
//!
//! The HTTP API (JSON in, JSON out):
//!
//! | request | answer |
//! |---|---|
//! | `GET /` and `/assets/*` | the page |
//! | `GET /api/info` | the device, the limits |
//! | `GET /api/presets` | the menu: kernels and run inputs |
//! | `POST /api/compile` `{source, kernel?, consts?}` | `{ok, kernels, view: {wgsl, spirv, naga, bindings, explain, params, consts, specialised, consts_error, ..}, errors}` |
//! | `POST /api/run` `{source, kernel?, consts?, grid: {threads\|blocks}, inputs: {name: {len, shape, formula\|random\|value}}}` | `{ok, outputs, grid, time_us, ..}` or `{ok: false, error}` |
//!
//! `consts` (`"N=128, BLOCK=256"`) gives values to the kernel's const
//! parameters and constants of its scope (its WGSL `override`s): the tabs
//! show the module specialised for them, and a run uses them (a kernel
//! with such parameters runs only with a value for each).
//!
//! A request that cannot be carried out (malformed JSON, a missing input,
//! a source, buffer or grid over the limits) is a 4xx with `{"error":
//! message}`; a kernel that does not compile or fails at launch is a 200
//! whose `ok` is false.

pub mod compile;
pub mod diag;
pub mod formula;
pub mod presets;
pub mod run;
pub mod source;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// What the playground accepts.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Limits {
    /// Longest kernel text, in bytes.
    pub max_source_bytes: usize,
    /// Largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Elements of one buffer.
    pub max_buffer_len: usize,
    /// Bytes of all buffers of a launch.
    pub max_total_bytes: u64,
    /// Invocations of one launch.
    pub max_invocations: u64,
    /// Values of each output sent back.
    pub max_values: usize,
    /// The loop budget is `loop_work / invocations`, between these two.
    pub loop_work: u64,
    /// The smallest loop budget.
    pub min_loop_budget: u32,
    /// The largest loop budget.
    pub max_loop_budget: u32,
    /// Launches waiting for the GPU.
    pub queue: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_source_bytes: 64 * 1024,
            max_body_bytes: 256 * 1024,
            max_buffer_len: 1 << 22,
            max_total_bytes: 64 << 20,
            max_invocations: 1 << 22,
            max_values: 1 << 16,
            loop_work: 1 << 28,
            min_loop_budget: 1 << 8,
            max_loop_budget: 1 << 20,
            queue: 8,
        }
    }
}

/// The server's state.
#[derive(Clone)]
pub struct Playground {
    limits: Arc<Limits>,
    gpu: run::Gpu,
    presets: Arc<Value>,
    /// Compiles at once (as many as there are cores).
    compiles: Arc<tokio::sync::Semaphore>,
}

impl Playground {
    /// Starts the GPU thread (it opens the device) and makes the presets.
    pub fn new(limits: Limits) -> Playground {
        let gpu = run::Gpu::start(limits.queue, limits.max_values);
        let presets = Arc::new(json!(presets::all()));
        // The presets' `proc_macro2` spans are of no further use.
        proc_macro2::extra::invalidate_current_thread_spans();
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Playground { limits: Arc::new(limits), gpu, presets, compiles: Arc::new(tokio::sync::Semaphore::new(cores)) }
    }

    /// The device's name, or why there is none.
    pub fn device(&self) -> Result<&str, &str> {
        match &*self.gpu.device {
            Ok(n) => Ok(n),
            Err(e) => Err(e),
        }
    }

    /// The routes.
    pub fn router(self) -> Router {
        Router::new()
            .route("/", get(|| async { page(INDEX_HTML, "text/html; charset=utf-8") }))
            .route("/assets/playground.js", get(|| async { page(PLAYGROUND_JS, "text/javascript; charset=utf-8") }))
            .route("/assets/playground.css", get(|| async { page(PLAYGROUND_CSS, "text/css; charset=utf-8") }))
            .route("/assets/editor.js", get(|| async { page(EDITOR_JS, "text/javascript; charset=utf-8") }))
            .route("/api/info", get(info))
            .route("/api/presets", get(presets_handler))
            .route("/api/compile", post(compile_handler))
            .route("/api/run", post(run_handler))
            .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page or API".into()) })
            .layer(axum::extract::DefaultBodyLimit::max(self.limits.max_body_bytes))
            .with_state(self)
    }
}

const INDEX_HTML: &str = include_str!("../assets/index.html");
const PLAYGROUND_JS: &str = include_str!("../assets/playground.js");
const PLAYGROUND_CSS: &str = include_str!("../assets/playground.css");
const EDITOR_JS: &str = include_str!("../assets/editor.js");

fn page(body: &'static str, ty: &'static str) -> Response {
    ([(header::CONTENT_TYPE, ty), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

fn error(status: StatusCode, message: String) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

fn answer(value: Value) -> Response {
    axum::Json(value).into_response()
}

async fn info(State(p): State<Playground>) -> Response {
    answer(json!({
        "device": p.device().ok(),
        "device_error": p.device().err(),
        "limits": *p.limits,
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

async fn presets_handler(State(p): State<Playground>) -> Response {
    answer((*p.presets).clone())
}

// The error is the answer itself: boxing it would only move the allocation.
#[allow(clippy::result_large_err)]
/// The body (read up to the limit, see `router`) as JSON of type `T`, or
/// the 4xx that says why not.
fn parse_body<T: for<'de> Deserialize<'de>>(
    p: &Playground,
    body: Result<Bytes, BytesRejection>,
) -> Result<T, Response> {
    let body = body.map_err(|e| {
        let status = e.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            error(
                status,
                format!("the request is larger than the playground's limit of {} bytes", p.limits.max_body_bytes),
            )
        } else {
            error(status, e.body_text())
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| error(StatusCode::BAD_REQUEST, format!("malformed request: {e}")))
}

#[allow(clippy::result_large_err)]
fn check_source(p: &Playground, source: &str) -> Result<(), Response> {
    if source.len() > p.limits.max_source_bytes {
        return Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the kernel text is {} bytes; the playground's limit is {}",
                source.len(),
                p.limits.max_source_bytes
            ),
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompileRequest {
    source: String,
    kernel: Option<String>,
    consts: Option<String>,
}

/// Runs `f` (a compile) on a thread of its own, at most one per core at
/// once. The thread has the compiler's stack
/// (`onekernel_compiler::nesting::STACK_SIZE`, where the nesting the
/// compiler accepts fits; tokio's blocking threads have 2 MiB, which a
/// kernel nested 150 deep overflowed, aborting the server). A panic (a
/// compiler bug) is a 500. The thread's `proc_macro2` spans (kept per
/// thread) go with it.
async fn blocking<R: Send + 'static>(p: &Playground, f: impl FnOnce() -> R + Send + 'static) -> Result<R, Response> {
    let Ok(_permit) = p.compiles.acquire().await else {
        return Err(error(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down".into()));
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("compile".into())
        .stack_size(onekernel_compiler::nesting::STACK_SIZE)
        .spawn(move || {
            let _ = reply.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
        });
    if spawned.is_err() {
        return Err(error(StatusCode::SERVICE_UNAVAILABLE, "the server cannot start a compile thread".into()));
    }
    match answer.await {
        Ok(Ok(r)) => Ok(r),
        _ => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal compiler error: the compiler panicked on this kernel (a bug in onekernel; please report the kernel)".into(),
        )),
    }
}

async fn compile_handler(State(p): State<Playground>, body: Result<Bytes, BytesRejection>) -> Response {
    let req: CompileRequest = match parse_body(&p, body) {
        Ok(r) => r,
        Err(e) => return e,
    };
    if let Err(e) = check_source(&p, &req.source) {
        return e;
    }
    match blocking(&p, move || {
        let (outcome, _) =
            compile::compile(&req.source, req.kernel.as_deref(), &Default::default(), req.consts.as_deref());
        serde_json::to_value(outcome).unwrap_or(Value::Null)
    })
    .await
    {
        Ok(v) => answer(v),
        Err(e) => e,
    }
}

async fn run_handler(State(p): State<Playground>, body: Result<Bytes, BytesRejection>) -> Response {
    let spec: run::RunSpec = match parse_body(&p, body) {
        Ok(r) => r,
        Err(e) => return e,
    };
    if let Err(e) = check_source(&p, &spec.source) {
        return e;
    }
    let limits = p.limits.clone();
    // Compile, learn the workgroup size, check the inputs; the loop budget
    // the grid allows is set at launch (`LaunchChecks`).
    let prepared = blocking(&p, move || -> Result<Result<run::Launch, Value>, run::BadRequest> {
        let (outcome, info) =
            compile::compile(&spec.source, spec.kernel.as_deref(), &Default::default(), spec.consts.as_deref());
        let Some(info) = info.filter(|_| outcome.ok) else {
            return Ok(Err(json!({"ok": false, "error": {"kind": "compile", "message": "the kernel does not compile", "errors": outcome.errors}})));
        };
        // A kernel with const parameters runs specialised for their values.
        if let Some(e) = outcome.view.as_ref().and_then(|v| v.consts_error.clone()) {
            return Ok(Err(json!({"ok": false, "error": {"kind": "consts", "message": e}})));
        }
        if info.consts.values.len() != info.consts.params.len() {
            let wanted: Vec<String> = info.consts.params.iter().map(|p| format!("{}=..", p.name)).collect();
            let message = format!(
                "`{}` has const parameters ({}): give their values (`{}`)",
                info.name,
                onekernel_compiler::specialise::list(&info.consts.params),
                wanted.join(", ")
            );
            return Ok(Err(json!({"ok": false, "error": {"kind": "consts", "message": message}})));
        }
        if let Some(k) = &spec.kernel {
            if !compile::is_named(&info.name, k) {
                return Err(run::BadRequest { status: 400, message: format!("no `#[kernel]` function named `{k}`") });
            }
        }
        let (grid, invocations) = run::grid(&spec.grid, info.workgroup_size, &limits)?;
        let args = run::args(&info, &spec.inputs, &limits)?;
        let loop_budget = run::loop_budget(invocations, &limits);
        // A panic's `file:line` names the editor's text as its errors do.
        let info = onekernel_runtime::abi::KernelInfo { source_file: diag::FILE.into(), ..info };
        Ok(Ok(run::Launch { info, grid, args, loop_budget }))
    })
    .await;
    let launch = match prepared {
        Err(e) => return e,
        Ok(Err(bad)) => {
            return error(StatusCode::from_u16(bad.status).unwrap_or(StatusCode::BAD_REQUEST), bad.message);
        }
        Ok(Ok(Err(compile_errors))) => return answer(compile_errors),
        Ok(Ok(Ok(launch))) => launch,
    };
    let (reply, wait) = tokio::sync::oneshot::channel();
    if let Err(e) = p.gpu.submit(run::Job { launch, reply }) {
        return error(StatusCode::SERVICE_UNAVAILABLE, e.into());
    }
    match wait.await {
        Ok(v) => answer(v),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "the GPU thread stopped".into()),
    }
}

/// Serves the playground on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, playground: Playground) -> std::io::Result<()> {
    axum::serve(listener, playground.router()).await
}
