//! Compiling the editor's text: every kernel in it (so that every error is
//! underlined), each instantiation of a generic kernel a kernel of its own
//! (`axpy::<f32>`, `axpy::<i32>`, ...), and for the chosen one what the
//! tabs show.

use crate::diag::{self, Error};
use crate::source;
use onekernel_compiler::{compile_program, Options};
use onekernel_runtime::abi::{DataType, KernelInfo, ParamKind};
use onekernel_runtime::inspect;
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

/// A const parameter (`fn k<const N: u32>`) or a constant of the kernel's
/// scope (`BLOCK`): a WGSL `override` whose value the page asks for.
#[derive(Clone, Debug, Serialize)]
pub struct ConstView {
    /// The Rust name.
    pub name: String,
    /// Its Rust type (`u32`, `i32`, `usize`, `f32`, `bool`).
    pub ty: &'static str,
    /// A const parameter of the kernel (else a constant of its scope).
    pub generic: bool,
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
    /// Its const parameters and constants of its scope (empty: none).
    pub consts: Vec<ConstView>,
    /// With values for them (`N = 128, M = -2`): the tabs show the module
    /// specialised for them, each `override` a `const`.
    pub specialised: Option<String>,
    /// Why the values given cannot be used (an unknown name, a value that
    /// is not of the parameter's type, a missing one).
    pub consts_error: Option<String>,
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
/// instantiation; default: the first); `consts` (`N=128, BLOCK=256`) gives
/// values to its const parameters. Returns the outcome and the chosen
/// kernel's description (for launches: with the values in
/// `KernelInfo::consts`, when they are valid).
pub fn compile(
    text: &str,
    wanted: Option<&str>,
    options: &Options,
    consts: Option<&str>,
) -> (Outcome, Option<KernelInfo>) {
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
    let mut info = listed.into_iter().nth(chosen).and_then(|(_, info)| info);
    outcome.view = info.as_mut().map(|info| specialised_view(info, consts.unwrap_or("")));
    outcome.ok = outcome.errors.is_empty() && info.is_some();
    (outcome, info)
}

/// `N=128, BLOCK=256` (commas or spaces between): the `NAME`, `VALUE`
/// pairs.
pub fn const_pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .map(|a| match a.split_once('=') {
            Some((n, v)) if !n.is_empty() && !v.is_empty() => Ok((n.to_string(), v.to_string())),
            _ => Err(format!("`{a}` is not `NAME=VALUE` (for example `N=128, BLOCK=256`)")),
        })
        .collect()
}

/// The view of `info`, specialised for `consts` where they give its
/// parameters values (then `info` carries them for the launch).
fn specialised_view(info: &mut KernelInfo, consts: &str) -> View {
    let params = info.consts.params.clone();
    let values = match const_pairs(consts) {
        Ok(pairs) if pairs.is_empty() => None,
        Ok(pairs) => Some(onekernel_compiler::specialise::values(&info.name, &params, &pairs)),
        Err(e) => Some(Err(e)),
    };
    let shown = match values {
        None => Ok(None),
        Some(Ok(values)) => onekernel_compiler::specialise::kernel(info, &values)
            .map(Some)
            .map_err(|e| format!("`{}` cannot be specialised for these values: {e}", info.name)),
        Some(Err(e)) => Err(e),
    };
    match shown {
        Ok(Some(specialised)) => {
            let mut v = view(&specialised);
            v.specialised = Some(
                params
                    .iter()
                    .zip(specialised.consts.values.iter())
                    .map(|(p, b)| format!("{} = {}", p.name, p.ty.display(f64::from_bits(*b))))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            // The launch runs the specialised modules (each override a
            // `const`, as the runtime's specialisations are), with the
            // sizes the values give.
            info.consts.values = specialised.consts.values.clone();
            info.modules = specialised.modules.clone();
            info.workgroup_size = specialised.workgroup_size;
            info.workgroup_memory_words = specialised.workgroup_memory_words;
            v
        }
        Ok(None) => view(info),
        Err(e) => View { consts_error: Some(e), ..view(info) },
    }
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
        consts: info
            .consts
            .params
            .iter()
            .map(|p| ConstView { name: p.name.to_string(), ty: p.ty.rust_name(), generic: p.generic })
            .collect(),
        specialised: None,
        consts_error: None,
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
