//! The driver: the items a front end hands the compiler, and what it gets
//! back. The `#[kernel]` macro sees one item at a time and compiles one
//! kernel with [`crate::compile_kernel`] (every instantiation of it); a
//! tool that has a whole file (`onekernel explain`, the playground)
//! collects its items into a [`Program`] and compiles them all with
//! [`compile_program`]: every instantiation of every kernel and every
//! diagnostic, each with its file, for [`Diagnostic::render`] (naga's
//! `parse_str` and `emit_to_string_with_path`, which naga-cli just calls,
//! are the model). Which functions are kernels and helpers, and what a
//! `#[onekernel::kernels]` module shows them, is decided here for all
//! three.

use crate::diagnostic::{Diagnostic, Disposition};
use crate::parse::{define_structs, parse_function_in, FnRole, ModuleItems};
use crate::{compile_kernel, CompiledKernel, Options};
use proc_macro2::TokenStream;

/// A `#[kernel]` function, with the module items it sees.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The tokens inside `#[kernel(..)]`.
    pub attr: TokenStream,
    /// The function, without the attribute.
    pub item: syn::ItemFn,
    /// The constants and structs of the `#[onekernel::kernels]` module it
    /// is in (empty outside one).
    pub module: ModuleItems,
}

impl Kernel {
    /// The kernel of a function marked `#[kernel(..)]`, in a module whose
    /// items are `module`; None for any other function.
    pub fn of(f: &syn::ItemFn, module: &ModuleItems) -> Option<Kernel> {
        let (attr, item) = marked(f, "kernel")?;
        Some(Kernel { attr, item, module: module.clone() })
    }
}

/// The function without its `#[name(..)]` attribute (any path ending in
/// `name`: `#[kernel]`, `#[onekernel::kernel]`) and the tokens inside the
/// attribute, if it has one.
pub fn marked(f: &syn::ItemFn, name: &str) -> Option<(TokenStream, syn::ItemFn)> {
    let at = f.attrs.iter().position(|a| is(a, name))?;
    let mut item = f.clone();
    let tokens = match item.attrs.remove(at).meta {
        syn::Meta::List(l) => l.tokens,
        _ => TokenStream::new(),
    };
    Some((tokens, item))
}

/// Whether an item with these attributes is marked `#[name]` (any path
/// ending in `name`).
pub fn has_attr(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().any(|a| is(a, name))
}

fn is(a: &syn::Attribute, name: &str) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == name)
}

impl ModuleItems {
    /// The constants and structs among a `#[onekernel::kernels]` module's
    /// items: what its kernels and helpers see.
    pub fn of(content: &[syn::Item]) -> ModuleItems {
        let mut items = ModuleItems::default();
        for item in content {
            match item {
                syn::Item::Const(c) => items.consts.push(c.clone()),
                syn::Item::Struct(s) => items.structs.push(s.clone()),
                _ => {}
            }
        }
        items
    }
}

/// A `#[helper]` function, with the module items it sees.
#[derive(Clone, Debug)]
pub struct Helper {
    /// The function, without the attribute.
    pub item: syn::ItemFn,
    /// The items of the `#[onekernel::kernels]` module it is in.
    pub module: ModuleItems,
    /// The file it is in: 0 for the main file, else the number given to
    /// [`Program::add_helpers`].
    pub file: usize,
}

/// A `mod name;` declaration: a file the program names, which a tool that
/// reads files may add ([`Program::add_helpers`]).
#[derive(Clone, Debug)]
pub struct ModFile {
    /// The declaration (its `#[path]`, if any, included).
    pub item: syn::ItemMod,
    /// The inline modules it is declared in, outermost first.
    pub within: Vec<syn::Ident>,
    /// The file that declares it.
    pub file: usize,
}

/// The kernels of a file, and the helpers of that file and of any others
/// the caller adds.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// The main file's kernels, in source order (inline modules included).
    pub kernels: Vec<Kernel>,
    /// Every file's helpers, in the order read.
    pub helpers: Vec<Helper>,
    /// The `mod name;` declarations met, in the order read.
    pub mod_files: Vec<ModFile>,
}

impl Program {
    /// The kernels and helpers of the main file's items (file 0). Inline
    /// modules are followed; a `#[onekernel::kernels]` module shows its
    /// kernels and helpers its constants and structs.
    pub fn of_items(items: &[syn::Item]) -> Program {
        let mut program = Program::default();
        program.walk(items, 0, true, &ModuleItems::default(), &mut Vec::new());
        program
    }

    /// Adds the helpers of another file's items (a file a `mod name;` of
    /// [`Program::mod_files`] loads), numbered `file` in diagnostics.
    pub fn add_helpers(&mut self, items: &[syn::Item], file: usize) {
        self.walk(items, file, false, &ModuleItems::default(), &mut Vec::new());
    }

    // Inline modules nest as deep as their braces, which `parse_source`
    // has checked.
    fn walk(
        &mut self,
        items: &[syn::Item],
        file: usize,
        kernels: bool,
        module: &ModuleItems,
        within: &mut Vec<syn::Ident>,
    ) {
        for item in items {
            match item {
                syn::Item::Fn(f) => {
                    if let Some(k) = Kernel::of(f, module) {
                        if kernels {
                            self.kernels.push(k);
                        }
                    } else if let Some((_, item)) = marked(f, "helper") {
                        self.helpers.push(Helper { item, module: module.clone(), file });
                    }
                }
                syn::Item::Mod(m) => match &m.content {
                    Some((_, inner)) => {
                        let items =
                            if has_attr(&m.attrs, "kernels") { ModuleItems::of(inner) } else { Default::default() };
                        within.push(m.ident.clone());
                        self.walk(inner, file, kernels, &items, within);
                        within.pop();
                    }
                    None => self.mod_files.push(ModFile { item: m.clone(), within: within.clone(), file }),
                },
                _ => {}
            }
        }
    }
}

/// A helper's own problems, which its `#[helper]` attribute reports at its
/// definition: it is parsed with its module's constants and structs in
/// view (any disposition; those shown are [`Diagnostic::is_reported`]).
pub fn helper_problems(item: &syn::ItemFn, module: &ModuleItems) -> Vec<Diagnostic> {
    let mut types = Default::default();
    let (scope, _) = define_structs(module, &mut types);
    parse_function_in(item, FnRole::Helper, &mut types, &scope).err().unwrap_or_default()
}

/// A diagnostic and the file its span is in (0: the main file; helpers of
/// other files have the number given to [`Program::add_helpers`]).
#[derive(Clone, Debug)]
pub struct FileDiagnostic {
    /// The file.
    pub file: usize,
    /// The problem.
    pub diagnostic: Diagnostic,
}

/// One kernel of a [`Program`], compiled.
pub struct KernelOutput {
    /// The function's name (`axpy`).
    pub name: String,
    /// Every instantiation (one for a plain kernel; `axpy::<f32>`,
    /// `axpy::<i32>`, ... for a generic one), or none when it has errors.
    pub instances: Vec<CompiledKernel>,
}

/// What [`compile_program`] produced.
pub struct Output {
    /// Each kernel, in the program's order.
    pub kernels: Vec<KernelOutput>,
    /// Every problem, each once, to be shown: the helpers' own (at the
    /// helper), then each kernel's. A problem the macro leaves to rustc is
    /// said at its span, since these tools run no rustc.
    pub diagnostics: Vec<FileDiagnostic>,
}

impl Output {
    /// Every instantiation of every kernel, in order.
    pub fn instances(&self) -> impl Iterator<Item = &CompiledKernel> {
        self.kernels.iter().flat_map(|k| &k.instances)
    }
}

/// Compiles every kernel of `program`, with its helpers, as the macro
/// would: every instantiation of each, and every diagnostic.
pub fn compile_program(program: &Program, options: &Options) -> Output {
    let main = |diagnostic| FileDiagnostic { file: 0, diagnostic };
    // Helpers report their own errors, at their definitions, once (as the
    // `#[helper]` attribute does).
    let mut diagnostics: Vec<FileDiagnostic> = program
        .helpers
        .iter()
        .flat_map(|h| {
            let problems = helper_problems(&h.item, &h.module).into_iter().filter(Diagnostic::is_reported);
            problems.map(|diagnostic| FileDiagnostic { file: h.file, diagnostic })
        })
        .collect();
    let at_helpers = !diagnostics.is_empty();
    let helpers: Vec<syn::ItemFn> = program.helpers.iter().map(|h| h.item.clone()).collect();
    let mut kernels = Vec::new();
    for k in &program.kernels {
        let instances = compile_kernel(k, &helpers, options).unwrap_or_else(|errors| {
            let shown: Vec<Diagnostic> = errors.iter().filter_map(without_rustc).collect();
            if shown.is_empty() && !at_helpers {
                // A helper's problem that its own check did not find: say
                // it here rather than fail in silence.
                diagnostics
                    .extend(errors.into_iter().map(|d| main(Diagnostic { disposition: Disposition::Report, ..d })));
            } else {
                diagnostics.extend(shown.into_iter().map(main));
            }
            Vec::new()
        });
        kernels.push(KernelOutput { name: k.item.sig.ident.to_string(), instances });
    }
    Output { kernels, diagnostics }
}

/// A kernel's diagnostic as a tool without rustc shows it: None for those
/// shown at a helper; one rustc reports (an unknown name, a type mismatch)
/// is said at its span.
fn without_rustc(d: &Diagnostic) -> Option<Diagnostic> {
    match d.disposition {
        Disposition::Report => Some(d.clone()),
        Disposition::ReportedAtHelper => None,
        Disposition::LeftToRustc => Some(
            Diagnostic::new(d.span, "rustc reports an error here: an unknown name, or a type that does not match")
                .label("rustc's error")
                .help("this tool does not run rustc: check the names and types here, or build the kernel with `cargo build` to see rustc's message"),
        ),
    }
}
