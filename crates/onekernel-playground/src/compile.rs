//! Compiling the editor's text: every kernel in it (so that every error is
//! underlined), each instantiation of a generic kernel a kernel of its own
//! (`axpy::<f32>`, `axpy::<i32>`, ...), and for the chosen one what the
//! tabs show.

use crate::diag::{self, Error};
use crate::source;
use onekernel_compiler::{compile_program, Options};
use onekernel_runtime::abi::{DataType, ParamKind};
use onekernel_runtime::{inspect, KernelInfo};
use serde::Serialize;

/// A parameter, as the run form shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    /// The Rust name.
    pub name: String,
    /// `"read"` (`&[T]`), `"read_write"` (`&mut [T]`), `"atomic"` or `"scalar"`.
    pub kind: &'static str,
    /// The Rust type of the scalar or element.
    pub ty: String,
    /// Whether the playground can make values of this type (scalars).
    pub supported: bool,
}

/// One row of the explain view: a Rust line (None: code the compiler
/// added) and the WGSL it produced.
#[derive(Clone, Debug, Serialize)]
pub struct ExplainRow {
    /// The 1-based line in the editor.
    pub line: Option<usize>,
    /// The Rust text of that line (dedented).
    pub rust: String,
    /// Its WGSL lines.
    pub wgsl: Vec<String>,
}

/// What the tabs show for one kernel.
#[derive(Debug, Serialize)]
pub struct View {
    /// The kernel's name.
    pub name: String,
    /// Its WGSL (the plain module).
    pub wgsl: String,
    /// The SPIR-V disassembly.
    pub spirv: String,
    /// naga's IR.
    pub naga: String,
    /// The binding table (Markdown).
    pub bindings: String,
    /// The explain view as text (`onekernel explain`).
    pub explain_text: String,
    /// The explain view as rows.
    pub explain: Vec<ExplainRow>,
    /// The parameters.
    pub params: Vec<Param>,
    /// `#[kernel(workgroup_size = ..)]`.
    pub workgroup_size: [u32; 3],
}

/// The answer to a compile request.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// Whether the text compiled without errors.
    pub ok: bool,
    /// The names of the kernels in the text: each instantiation of a
    /// generic kernel (`axpy::<f32>`, ...; the function's name while it has
    /// errors).
    pub kernels: Vec<String>,
    /// The chosen kernel's outputs (also when another kernel has errors).
    pub view: Option<View>,
    /// Every error.
    pub errors: Vec<Error>,
}

/// Compiles every kernel of `text` (with `options`); `wanted` names the one
/// whose outputs are returned (a generic kernel's name: its first
/// instantiation; default: the first). Returns the outcome and the chosen
/// kernel's description (for launches).
pub fn compile(text: &str, wanted: Option<&str>, options: &Options) -> (Outcome, Option<KernelInfo>) {
    let mut outcome = Outcome { ok: false, kernels: Vec::new(), view: None, errors: Vec::new() };
    let program = match source::read_program(text) {
        Ok(p) => p,
        Err(diags) => {
            outcome.errors = diags.iter().map(|d| diag::convert(text, d)).collect();
            return (outcome, None);
        }
    };
    if program.kernels.is_empty() {
        outcome.errors.push(Error {
            message: "no `#[kernel]` function in the text".into(),
            label: None,
            notes: vec![],
            help: Some(
                "write one: `#[kernel(workgroup_size = 64)] fn name(a: &[f32], out: &mut [f32]) { ... }`".into(),
            ),
            start: None,
            end: None,
            secondary: vec![],
            rendered: "error: no `#[kernel]` function in the text\n".into(),
        });
        return (outcome, None);
    }
    let compiled = compile_program(&program, options);
    outcome.errors = compiled.diagnostics.iter().map(|d| diag::convert(text, &d.diagnostic)).collect();
    let mut listed: Vec<(String, Option<KernelInfo>)> = Vec::new();
    for k in compiled.kernels {
        if k.instances.is_empty() {
            listed.push((k.name, None));
        }
        listed.extend(k.instances.into_iter().map(|c| (c.info.name.to_string(), Some(c.info))));
    }
    outcome.kernels = listed.iter().map(|(name, _)| name.clone()).collect();
    let chosen = wanted
        .and_then(|w| {
            let exact = listed.iter().position(|(name, _)| name == w);
            exact.or_else(|| listed.iter().position(|(name, _)| is_named(name, w)))
        })
        .unwrap_or(0);
    let info = listed.into_iter().nth(chosen).and_then(|(_, info)| info);
    outcome.view = info.as_ref().map(view);
    outcome.ok = outcome.errors.is_empty() && info.is_some();
    (outcome, info)
}

/// Whether a kernel called `name` (`axpy::<f32>`) is one that `wanted`
/// names: itself, or the generic kernel (`axpy`) it is an instantiation of.
pub fn is_named(name: &str, wanted: &str) -> bool {
    name == wanted || name.strip_prefix(wanted).is_some_and(|rest| rest.starts_with("::<"))
}

fn view(info: &KernelInfo) -> View {
    View {
        name: info.name.to_string(),
        wgsl: inspect::wgsl(info).to_string(),
        spirv: inspect::spirv_disassembly(info),
        naga: inspect::naga_ir(info),
        bindings: info.bindings_table(),
        explain_text: inspect::explain(info).to_string(),
        explain: explain_rows(inspect::explain(info)),
        params: params(info),
        workgroup_size: info.workgroup_size,
    }
}

/// The parameters of a kernel.
pub fn params(info: &KernelInfo) -> Vec<Param> {
    info.params
        .iter()
        .map(|p| Param {
            name: p.name.to_string(),
            kind: match p.kind {
                ParamKind::ReadOnlyBuffer => "read",
                ParamKind::ReadWriteBuffer => "read_write",
                ParamKind::AtomicBuffer => "atomic",
                ParamKind::Scalar => "scalar",
            },
            ty: p.ty.rust_name().to_string(),
            supported: matches!(p.ty, DataType::Scalar(_)),
        })
        .collect()
}

/// Reads the explain view's text (`NNN | rust`, `    |     wgsl`,
/// `    | (support code ...)`) back into rows.
pub fn explain_rows(text: &str) -> Vec<ExplainRow> {
    let mut rows: Vec<ExplainRow> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with("//")) {
        let Some((number, rest)) = line.split_once(" |").map(|(n, r)| (n.trim(), r.strip_prefix(' ').unwrap_or(r)))
        else {
            continue;
        };
        if let Ok(n) = number.parse::<usize>() {
            rows.push(ExplainRow { line: Some(n), rust: rest.to_string(), wgsl: Vec::new() });
        } else if let Some(wgsl) = rest.strip_prefix("    ") {
            match rows.last_mut() {
                Some(row) => row.wgsl.push(wgsl.to_string()),
                None => rows.push(ExplainRow { line: None, rust: String::new(), wgsl: vec![wgsl.to_string()] }),
            }
        } else {
            rows.push(ExplainRow { line: None, rust: rest.to_string(), wgsl: Vec::new() });
        }
    }
    rows
}
