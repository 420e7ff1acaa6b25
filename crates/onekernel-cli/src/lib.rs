//! The `onekernel-cli` tool: reads any Rust file, lowers each `#[kernel]`
//! function in it with the same compiler the proc macro runs, and prints
//! what it produced, or the errors the way rustc shows them.
//!
//! ```text
//! onekernel-cli explain FILE.rs [--kernel NAME] [--emit wgsl|spirv|spirv-asm|naga|explain|bindings]
//! ```
//!
//! Exit status: 0 on success, 1 when a kernel (or the file) has errors,
//! 2 for a usage error. [`run`] does all of it without touching the
//! process, so tests call it directly.

mod diagnostics;

use onekernel_abi::{CpuStrategy, KernelInfo, ParamInfo, ParamKind, ScalarType};
use onekernel_compiler::{CompiledKernel, Diagnostic};
use onekernel_runtime::inspect;
use std::borrow::Cow;
use std::fmt::Write;

/// The usage text.
pub const USAGE: &str =
    "usage: onekernel explain FILE.rs [--kernel NAME] [--emit wgsl|spirv|spirv-asm|naga|explain|bindings]\n";

/// What to print for each kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The WGSL text.
    Wgsl,
    /// The SPIR-V words, in hex.
    Spirv,
    /// The SPIR-V disassembly (rspirv).
    SpirvAsm,
    /// The naga IR of the WGSL.
    Naga,
    /// Each Rust line beside the WGSL it produced (the default).
    Explain,
    /// The binding layout as a table.
    Bindings,
}

impl Emit {
    fn parse(s: &str) -> Option<Emit> {
        Some(match s {
            "wgsl" => Emit::Wgsl,
            "spirv" => Emit::Spirv,
            "spirv-asm" => Emit::SpirvAsm,
            "naga" => Emit::Naga,
            "explain" => Emit::Explain,
            "bindings" => Emit::Bindings,
            _ => return None,
        })
    }
}

/// The parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    /// The Rust file to read.
    pub file: String,
    /// Only this kernel.
    pub kernel: Option<String>,
    /// What to print.
    pub emit: Emit,
}

/// Parses the arguments after the program name.
pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("explain") => {}
        Some(other) => return Err(format!("unknown subcommand `{other}`")),
        None => return Err("missing subcommand".into()),
    }
    let (mut file, mut kernel, mut emit) = (None, None, Emit::Explain);
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value =
            || inline.clone().or_else(|| it.next().cloned()).ok_or_else(|| format!("`{flag}` needs a value"));
        match flag {
            "--kernel" => kernel = Some(value()?),
            "--emit" => {
                let v = value()?;
                emit = Emit::parse(&v).ok_or_else(|| format!("unknown `--emit` kind `{v}`"))?;
            }
            f if f.starts_with('-') => return Err(format!("unknown option `{f}`")),
            _ if file.is_none() => file = Some(a.clone()),
            _ => return Err(format!("unexpected argument `{a}`")),
        }
    }
    Ok(Args { file: file.ok_or("missing FILE.rs")?, kernel, emit })
}

/// What a run printed, and its exit status.
#[derive(Debug, Default)]
pub struct Output {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit status.
    pub code: i32,
}

/// Runs the tool on the arguments after the program name.
pub fn run(args: &[String]) -> Output {
    let args = match parse_args(args) {
        Ok(a) => a,
        Err(e) => return Output { stderr: format!("error: {e}\n{USAGE}"), code: 2, ..Output::default() },
    };
    match std::fs::read_to_string(&args.file) {
        Ok(source) => explain_source(&args.file, &source, args.kernel.as_deref(), args.emit),
        Err(e) => Output { stderr: format!("error: cannot read `{}`: {e}\n", args.file), code: 2, ..Output::default() },
    }
}

/// Lowers the kernels in `source` (read from `path`) and prints `emit` for
/// each, or the diagnostics.
pub fn explain_source(path: &str, source: &str, only: Option<&str>, emit: Emit) -> Output {
    let mut out = Output::default();
    let file = match syn::parse_file(source) {
        Ok(f) => f,
        Err(e) => {
            for e in e {
                out.stderr.push_str(&diagnostics::render(path, source, &Diagnostic::new(e.span(), e.to_string())));
            }
            out.code = 1;
            return out;
        }
    };
    let (mut kernels, mut helpers) = (Vec::new(), Vec::new());
    collect(&file.items, &mut kernels, &mut helpers);
    if let Some(name) = only {
        kernels.retain(|(_, k)| k.sig.ident == name);
        if kernels.is_empty() {
            out.stderr = format!("error: no `#[kernel]` function named `{name}` in `{path}`\n");
            out.code = 2;
            return out;
        }
    }
    if kernels.is_empty() {
        out.stderr = format!("error: no `#[kernel]` functions in `{path}`\n");
        out.code = 1;
        return out;
    }
    let several = kernels.len() > 1;
    let mut seen = Vec::new();
    for (attr, item) in &kernels {
        match onekernel_compiler::compile(attr.clone(), item, &helpers) {
            Ok(k) => {
                if several {
                    let comment = if matches!(emit, Emit::SpirvAsm | Emit::Spirv) { ";" } else { "//" };
                    let _ = writeln!(out.stdout, "{comment} ==== kernel `{}` ====", k.name);
                }
                out.stdout.push_str(&render(&k, emit));
            }
            Err(diags) => {
                out.code = 1;
                for d in diags {
                    let d = if d.is_silent() {
                        Diagnostic::new(
                            item.sig.ident.span(),
                            format!("kernel `{}` has an error that rustc reports", item.sig.ident),
                        )
                        .help("build it with `cargo build` to see rustc's message")
                    } else {
                        d
                    };
                    // A helper's error is found once per kernel that calls it.
                    let key = (d.message.clone(), d.span.start().line, d.span.start().column);
                    if !seen.contains(&key) {
                        seen.push(key);
                        out.stderr.push_str(&diagnostics::render(path, source, &d));
                    }
                }
            }
        }
    }
    if out.code != 0 {
        let n = seen.len();
        let _ = writeln!(
            out.stderr,
            "error: could not lower `{path}` due to {n} previous error{}",
            if n == 1 { "" } else { "s" }
        );
    }
    out
}

/// `#[kernel(..)]` functions (with their attribute's tokens) and
/// `#[helper]` functions, also inside inline modules.
fn collect(
    items: &[syn::Item],
    kernels: &mut Vec<(proc_macro2::TokenStream, syn::ItemFn)>,
    helpers: &mut Vec<syn::ItemFn>,
) {
    let is = |a: &syn::Attribute, name: &str| a.path().segments.last().is_some_and(|s| s.ident == name);
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if let Some(attr) = f.attrs.iter().find(|a| is(a, "kernel")) {
                    let tokens = match &attr.meta {
                        syn::Meta::List(l) => l.tokens.clone(),
                        _ => proc_macro2::TokenStream::new(),
                    };
                    let mut f = f.clone();
                    f.attrs.retain(|a| !is(a, "kernel"));
                    kernels.push((tokens, f));
                } else if f.attrs.iter().any(|a| is(a, "helper")) {
                    helpers.push(f.clone());
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    collect(items, kernels, helpers);
                }
            }
            _ => {}
        }
    }
}

/// One kernel's output.
pub fn render(k: &CompiledKernel, emit: Emit) -> String {
    let info = &kernel_info(k);
    match emit {
        Emit::Wgsl => inspect::wgsl(info).to_string(),
        Emit::Spirv => {
            let mut s = String::new();
            for row in inspect::spirv(info).chunks(8) {
                let words: Vec<String> = row.iter().map(|w| format!("0x{w:08x}")).collect();
                let _ = writeln!(s, "{}", words.join(" "));
            }
            s
        }
        Emit::SpirvAsm => inspect::spirv_disassembly(info),
        Emit::Naga => inspect::naga_ir(info),
        Emit::Explain => inspect::explain(info).to_string(),
        Emit::Bindings => inspect::bindings(info),
    }
}

/// The `KernelInfo` the macro would emit, owning its strings.
fn kernel_info(k: &CompiledKernel) -> KernelInfo {
    use onekernel_compiler::hir::ParamKind as P;
    use onekernel_compiler::types::Ty;
    let params: Vec<ParamInfo> = k
        .params
        .iter()
        .map(|p| {
            let (kind, ty) = match p.kind {
                P::Buffer { elem } => (ParamKind::ReadOnlyBuffer, elem),
                P::BufferMut { elem } => (ParamKind::ReadWriteBuffer, elem),
                P::Atomics { elem } => (ParamKind::AtomicBuffer, elem),
                P::Scalar { ty, .. } => (ParamKind::Scalar, ty),
            };
            let ty = match ty {
                Ty::F32 => ScalarType::F32,
                Ty::I32 => ScalarType::I32,
                // The compiler gives parameters no other types (`usize`
                // and `bool` travel as u32); as `expand.rs` maps them.
                Ty::U32 | Ty::Usize | Ty::Bool | Ty::Dim3 | Ty::Unit | Ty::Never => ScalarType::U32,
            };
            ParamInfo { name: Cow::Owned(p.name.clone()), kind, ty, slot: p.slot }
        })
        .collect();
    let cpu = if k.cooperative {
        CpuStrategy::Cooperative
    } else if k.writes_own_element {
        CpuStrategy::OwnElement
    } else {
        CpuStrategy::Independent
    };
    KernelInfo {
        name: Cow::Owned(k.name.clone()),
        entry_point: Cow::Owned(k.entry_point.clone()),
        wgsl: Cow::Owned(k.wgsl.clone()),
        spirv: Cow::Owned(k.spirv.clone()),
        wgsl_folded: Cow::Owned(k.wgsl_folded.clone()),
        spirv_folded: Cow::Owned(k.spirv_folded.clone()),
        explain: Cow::Owned(k.explain.clone()),
        workgroup_size: k.workgroup_size,
        max_workgroup_invocations: k.max_workgroup_invocations,
        params: Cow::Owned(params),
        uniform_binding: k.uniform_binding,
        uniform_size: k.uniform_size,
        cpu,
        workgroup_memory_words: k.workgroup_memory_words,
    }
}
