//! The program in the editor: the `#[kernel]` functions of one text and the
//! `#[helper]` functions beside them, also inside inline modules (a
//! `#[onekernel::kernels]` module shows its kernels its constants and
//! structs). The playground reads no file: `mod name;` is an error.

use onekernel_compiler::parse::ModuleItems;
use onekernel_compiler::Diagnostic;

/// A `#[kernel]` function and its attribute's tokens.
pub struct Kernel {
    /// The tokens inside `#[kernel(...)]`.
    pub attr: proc_macro2::TokenStream,
    /// The function, without the attribute.
    pub item: syn::ItemFn,
    /// The items of the `#[onekernel::kernels]` module it is in.
    pub module: ModuleItems,
}

/// A `#[helper]` function.
pub struct Helper {
    /// The function.
    pub item: syn::ItemFn,
    /// The items of the `#[onekernel::kernels]` module it is in.
    pub module: ModuleItems,
}

/// The kernels and helpers of the text.
#[derive(Default)]
pub struct Program {
    /// Kernels, in source order.
    pub kernels: Vec<Kernel>,
    /// Helpers, in source order.
    pub helpers: Vec<Helper>,
}

/// Reads the kernels and helpers of `source`, or its syntax errors.
pub fn read_program(source: &str) -> Result<Program, Vec<Diagnostic>> {
    // Nesting checked before syn recurses (`onekernel_compiler::nesting`).
    let file = onekernel_compiler::parse_source::<syn::File>(source)?;
    let mut program = Program::default();
    let mut errors = Vec::new();
    collect(&file.items, &ModuleItems::default(), &mut program, &mut errors, 0);
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(errors)
    }
}

fn is(a: &syn::Attribute, name: &str) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == name)
}

/// How deep inline modules are followed (syn's own recursion limit is far
/// above what a page holds; this keeps the walk bounded).
const MAX_DEPTH: usize = 16;

fn collect(
    items: &[syn::Item],
    module: &ModuleItems,
    program: &mut Program,
    errors: &mut Vec<Diagnostic>,
    depth: usize,
) {
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
                    program.kernels.push(Kernel { attr: tokens, item: f, module: module.clone() });
                } else if f.attrs.iter().any(|a| is(a, "helper")) {
                    program.helpers.push(Helper { item: f.clone(), module: module.clone() });
                }
            }
            syn::Item::Mod(m) => match &m.content {
                Some((_, inner)) if depth < MAX_DEPTH => {
                    let items = if m.attrs.iter().any(|a| is(a, "kernels")) {
                        let mut items = ModuleItems::default();
                        for i in inner {
                            match i {
                                syn::Item::Const(c) => items.consts.push(c.clone()),
                                syn::Item::Struct(st) => items.structs.push(st.clone()),
                                _ => {}
                            }
                        }
                        items
                    } else {
                        ModuleItems::default()
                    };
                    collect(inner, &items, program, errors, depth + 1);
                }
                Some(_) => errors
                    .push(Diagnostic::new(m.ident.span(), "modules nested this deep are not read by the playground")),
                None => errors.push(
                    Diagnostic::new(
                        m.ident.span(),
                        format!("the playground cannot read the file of `mod {};`", m.ident),
                    )
                    .label("the playground has one file")
                    .help(format!("write the module inline: `mod {} {{ ... }}`", m.ident)),
                ),
            },
            _ => {}
        }
    }
}

/// The kernels, helpers and `#[onekernel::kernels]` modules of a whole
/// example file, with their doc comments, as the text a preset starts with:
/// `use onekernel::prelude::*;` and those items, in source order, each as
/// written (the rest of the file, `main` and the host code, is left out).
pub fn kernel_items(source: &str) -> String {
    let Ok(file) = onekernel_compiler::parse_source::<syn::File>(source) else { return String::new() };
    let mut out = String::from("use onekernel::prelude::*;\n");
    for item in &file.items {
        let keep = match item {
            syn::Item::Fn(f) => f.attrs.iter().any(|a| is(a, "kernel") || is(a, "helper")),
            syn::Item::Mod(m) => m.content.is_some() && m.attrs.iter().any(|a| is(a, "kernels")),
            _ => false,
        };
        if !keep {
            continue;
        }
        // The item's span covers its attributes (doc comments included).
        let span = syn::spanned::Spanned::span(item);
        let (Some(from), Some(to)) = (offset(source, span.start()), offset(source, span.end())) else {
            continue;
        };
        if let Some(text) = source.get(from..to) {
            out.push('\n');
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// The byte offset of a proc-macro2 position (1-based line, column in
/// chars from 0) in `source`.
pub fn offset(source: &str, at: proc_macro2::LineColumn) -> Option<usize> {
    if at.line == 0 {
        return None;
    }
    let line_start = source.split_inclusive('\n').take(at.line - 1).map(str::len).sum::<usize>();
    let text = source.get(line_start..)?.lines().next().unwrap_or("");
    Some(line_start + text.char_indices().nth(at.column).map_or(text.len(), |(i, _)| i))
}
