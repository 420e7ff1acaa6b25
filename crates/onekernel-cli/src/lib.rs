//! The `onekernel` command: reads any Rust file, compiles each `#[kernel]`
//! function in it with the same compiler the proc macro runs, and prints
//! what it produced, or the errors the way rustc shows them.
//!
//! ```text
//! onekernel explain FILE.rs [--kernel NAME] [--emit KIND] [--const NAME=VALUE]... [--folded] [--checked] [-o OUT]
//! ```
//!
//! Exit status: 0 on success; 1 when the file's kernels (or the file
//! itself) have errors; 2 when the request cannot be carried out (bad
//! arguments, an unreadable file, no kernel of that name, no kernels at
//! all). [`run`] does all of it and returns what the process would print,
//! so tests call it directly.

mod files;

use clap::{Parser, Subcommand, ValueEnum};
use onekernel_runtime::abi::{ConstParam, KernelInfo, Module, ModuleKey};
use onekernel_runtime::inspect;
use std::borrow::Cow;
use std::fmt::Write;
use std::path::PathBuf;

/// What `#[kernel]` makes of the kernels in a Rust file: their WGSL, SPIR-V,
/// naga IR, bindings, or each Rust line beside the WGSL it produced.
#[derive(Debug, Parser)]
#[command(name = "onekernel", version, about, long_about = None, arg_required_else_help = true)]
#[command(
    after_help = "Exit status: 0 on success, 1 when the kernels have errors, 2 when the request cannot be carried out."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile the `#[kernel]` functions of a Rust file and print what the
    /// compiler made of them, or their errors as rustc would show them.
    Explain(ExplainArgs),
}

/// The arguments of `onekernel explain`.
#[derive(Debug, clap::Args, PartialEq, Eq)]
pub struct ExplainArgs {
    /// The Rust file to read. `#[helper]` functions in the files of its
    /// `mod name;` declarations are found too.
    pub file: PathBuf,
    /// Only the kernel with this name (default: every kernel in the file).
    #[arg(short, long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// What to print.
    #[arg(short, long, value_enum, default_value_t = Emit::Explain, value_name = "KIND")]
    pub emit: Emit,
    /// Show the module the runtime uses for 1-D grids of more than 65535
    /// workgroups (folded into 2-D) instead of the plain one. No SPIR-V
    /// (only the plain module has it).
    #[arg(long)]
    pub folded: bool,
    /// Show the checked module, which checked launches run
    /// (`Device::checked`): every index and integer divisor checked, the
    /// first failure reported with its source line. WGSL only.
    #[arg(long)]
    pub checked: bool,
    /// A value for a const parameter (`fn k<const N: u32>`) or a constant
    /// of the kernel's scope (`BLOCK`), repeatable: every view then shows
    /// the module specialised for the values (each WGSL `override` a
    /// `const`; the SPIR-V of that specialisation). A kernel with such
    /// parameters has SPIR-V only with a value for each.
    #[arg(long = "const", value_name = "NAME=VALUE", value_parser = assignment)]
    pub consts: Vec<(String, String)>,
    /// Write the output to this file instead of standard output
    /// (`--emit spirv` writes a binary `.spv` file).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// `NAME=VALUE`, split (the value is read as the parameter's type once the
/// kernel is compiled).
fn assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() && !value.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("`{text}` is not `NAME=VALUE` (for example `--const N=128`)")),
    }
}

/// What to print for each kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// Each Rust line of the kernel beside the WGSL it produced.
    Explain,
    /// The WGSL text (validated, and re-parsed by naga).
    Wgsl,
    /// The SPIR-V words in hex; with `-o`, a binary `.spv` file.
    Spirv,
    /// The SPIR-V disassembly.
    SpirvAsm,
    /// naga's IR of the module.
    Naga,
    /// The binding layout: each parameter's Rust type, WGSL declaration
    /// and binding (the same table as the kernel's `BINDINGS`).
    Bindings,
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

impl Output {
    fn refuse(message: String) -> Output {
        Output { stderr: format!("error: {message}\n"), code: 2, ..Output::default() }
    }
}

/// Runs the tool on the arguments after the program name, on a thread
/// with the compiler's stack (`onekernel_compiler::nesting::STACK_SIZE`):
/// the nesting the compiler accepts fits there whatever the build.
pub fn run(args: &[String]) -> Output {
    onekernel_compiler::nesting::with_stack(|| run_here(args))
}

fn run_here(args: &[String]) -> Output {
    let cli = match Cli::try_parse_from(std::iter::once("onekernel".to_string()).chain(args.iter().cloned())) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            return if e.use_stderr() {
                Output { stderr: text, code: 2, ..Output::default() }
            } else {
                // `--help` and `--version`.
                Output { stdout: text, code: 0, ..Output::default() }
            };
        }
    };
    match cli.command {
        Command::Explain(args) => explain(&args),
    }
}

/// `onekernel explain`.
pub fn explain(args: &ExplainArgs) -> Output {
    let path = args.file.display().to_string();
    let source = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => return Output::refuse(format!("cannot read `{path}`: {e}")),
    };
    if args.checked && args.emit != Emit::Wgsl {
        return Output::refuse("the checked module exists as WGSL only: add `--emit wgsl`".into());
    }
    if args.folded && matches!(args.emit, Emit::Spirv | Emit::SpirvAsm) {
        return Output::refuse("only the plain module has SPIR-V (no program reads another): drop `--folded`".into());
    }
    let module = ModuleKey { folded: args.folded, checked: args.checked };
    let mut out = explain_source(&args.file, &source, args.kernel.as_deref(), args.emit, module, &args.consts);
    if let (Some(file), 0) = (&args.output, out.code) {
        let bytes = if args.emit == Emit::Spirv {
            match std::mem::take(&mut out.binary).as_mut_slice() {
                [one] => std::mem::take(one),
                _ => return Output::refuse("a .spv file holds one kernel: choose it with `--kernel NAME`".into()),
            }
        } else {
            std::mem::take(&mut out.output.stdout).into_bytes()
        };
        if let Err(e) = std::fs::write(file, bytes) {
            return Output::refuse(format!("cannot write `{}`: {e}", file.display()));
        }
        out.output.stdout.clear();
    }
    out.output
}

/// What [`explain_source`] produced: the text, and the SPIR-V as bytes for
/// `--emit spirv -o FILE`.
pub struct Explained {
    /// What the process prints.
    pub output: Output,
    /// With `--emit spirv`: each kernel's SPIR-V as bytes.
    pub binary: Vec<Vec<u8>>,
}

impl std::ops::Deref for Explained {
    type Target = Output;
    fn deref(&self) -> &Output {
        &self.output
    }
}

impl std::ops::DerefMut for Explained {
    fn deref_mut(&mut self) -> &mut Output {
        &mut self.output
    }
}

/// Compiles the kernels in `source` (read from `path`) and prints `emit`
/// for each (specialised for `consts`, `NAME`/`VALUE` pairs), or the
/// diagnostics.
pub fn explain_source(
    path: &std::path::Path,
    source: &str,
    only: Option<&str>,
    emit: Emit,
    module: ModuleKey,
    consts: &[(String, String)],
) -> Explained {
    let mut out = Explained { output: Output::default(), binary: Vec::new() };
    let shown = path.display().to_string();
    let (mut program, files) = match files::read_program(path, source) {
        Ok(p) => p,
        Err(errors) => {
            for (file, text, d) in &errors {
                out.stderr.push_str(&d.render(text, file));
                out.stderr.push('\n');
            }
            out.code = 1;
            let _ = writeln!(out.stderr, "error: could not compile `{shown}` due to {}", plural(errors.len()));
            return out;
        }
    };
    if let Some(name) = only {
        program.kernels.retain(|k| k.item.sig.ident == name);
        if program.kernels.is_empty() {
            out.output = Output::refuse(format!("no `#[kernel]` function named `{name}` in `{shown}`"));
            return out;
        }
    }
    if program.kernels.is_empty() {
        out.output = Output::refuse(format!("no `#[kernel]` functions in `{shown}`"));
        return out;
    }
    let compiled = onekernel_compiler::compile_program(&program, &onekernel_compiler::Options::default());
    // A generic kernel shows each instantiation, as a kernel of its own.
    let several = program.kernels.len() > 1 || compiled.instances().any(|c| c.instance.ty.is_some());
    if compiled.diagnostics.is_empty() {
        // Each `--const` names a parameter of a kernel shown.
        let shown_params: Vec<&ConstParam> = compiled.instances().flat_map(|c| c.info.consts.params.iter()).collect();
        if let Some((name, _)) = consts.iter().find(|(n, _)| !shown_params.iter().any(|p| p.name == n.as_str())) {
            let mut listed: Vec<String> = Vec::new();
            for c in compiled.instances() {
                let entry =
                    format!("`{}`: {}", c.info.name, onekernel_compiler::specialise::list(&c.info.consts.params));
                if !c.info.consts.params.is_empty() && !listed.contains(&entry) {
                    listed.push(entry);
                }
            }
            let has = if listed.is_empty() {
                "no kernel shown has const parameters or constants of its scope".to_string()
            } else {
                format!("the kernels' are {}", listed.join("; "))
            };
            out.output = Output::refuse(format!(
                "`--const {name}=..`: `{name}` is not a const parameter of a kernel shown; {has}"
            ));
            return out;
        }
    }
    for c in compiled.instances() {
        if several {
            let comment = if matches!(emit, Emit::SpirvAsm | Emit::Spirv) { ";" } else { "//" };
            let _ = writeln!(out.stdout, "{comment} ==== kernel `{}` ====", c.info.name);
        }
        let info = match specialised(&c.info, consts, emit) {
            Ok(info) => showing(&info, module),
            Err(message) => {
                out.output = Output::refuse(message);
                out.binary.clear();
                return out;
            }
        };
        out.stdout.push_str(&render(&info, emit));
        if emit == Emit::Spirv {
            out.binary.push(info.spirv().iter().flat_map(|w| w.to_le_bytes()).collect());
        }
    }
    for d in &compiled.diagnostics {
        let file = &files[d.file];
        out.stderr.push_str(&d.diagnostic.render(&file.source, &file.path));
        out.stderr.push('\n');
    }
    if !compiled.diagnostics.is_empty() {
        out.code = 1;
        out.stdout.clear();
        out.binary.clear();
        let errors = compiled.diagnostics.len();
        let _ = writeln!(out.stderr, "error: could not lower `{shown}` due to {}", plural(errors));
    }
    out
}

fn plural(n: usize) -> String {
    format!("{n} previous error{}", if n == 1 { "" } else { "s" })
}

/// The kernel's description with module `key` in place of the plain one,
/// which every view shows.
fn showing(info: &KernelInfo, key: ModuleKey) -> KernelInfo {
    if key == ModuleKey::PLAIN {
        return info.clone();
    }
    let module = info.module(key).map(|m| Module { key: ModuleKey::PLAIN, ..m.clone() });
    KernelInfo {
        modules: Cow::Owned(module.into_iter().collect()),
        explain: Cow::Owned(format!("(the explain view shows the plain module, not the {key} one)\n")),
        ..info.clone()
    }
}

/// `info` specialised for the `--const` values of its
/// parameters; unchanged for a kernel without them, or when none is given
/// and the view shows WGSL (its `override` declarations). The SPIR-V of a
/// kernel with parameters exists per specialisation only: without values
/// for them, an error says which `--const` to add.
fn specialised(info: &KernelInfo, consts: &[(String, String)], emit: Emit) -> Result<KernelInfo, String> {
    let params = &info.consts.params;
    let given: Vec<(String, String)> =
        consts.iter().filter(|(n, _)| params.iter().any(|p| p.name == n.as_str())).cloned().collect();
    let spirv = matches!(emit, Emit::Spirv | Emit::SpirvAsm);
    if params.is_empty() || (given.is_empty() && !spirv) {
        return Ok(info.clone());
    }
    let values = onekernel_compiler::specialise::values(&info.name, params, &given).map_err(|e| {
        if given.is_empty() {
            let example: Vec<String> = params.iter().map(|p| format!("--const {}=VALUE", p.name)).collect();
            format!(
                "`{}` has SPIR-V only per specialisation: give a value for each of its const parameters ({}): `{}`",
                info.name,
                onekernel_compiler::specialise::list(params),
                example.join(" ")
            )
        } else {
            e
        }
    })?;
    onekernel_compiler::specialise::kernel(info, &values)
        .map_err(|e| format!("`{}` cannot be specialised for these values: {e}", info.name))
}

/// One kernel's output.
pub fn render(info: &KernelInfo, emit: Emit) -> String {
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
        Emit::Bindings => info.bindings_table(),
    }
}
