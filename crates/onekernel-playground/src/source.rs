//! The program in the editor: the `#[kernel]` functions of one text and the
//! `#[helper]` functions beside them, also inside inline modules (which
//! functions are kernels and helpers is the compiler's:
//! `onekernel_compiler::Program`). The playground reads no file: `mod
//! name;` is an error.

use onekernel_compiler::driver::has_attr;
use onekernel_compiler::{Diagnostic, Program};

/// Reads the kernels and helpers of `source`, or its syntax errors.
pub fn read_program(source: &str) -> Result<Program, Vec<Diagnostic>> {
    // Nesting checked before syn recurses (`onekernel_compiler::nesting`).
    let file = onekernel_compiler::parse_source::<syn::File>(source)?;
    let program = Program::of_items(&file.items);
    let errors: Vec<Diagnostic> = program
        .mod_files
        .iter()
        .map(|m| {
            let name = &m.item.ident;
            Diagnostic::new(name.span(), format!("the playground cannot read the file of `mod {name};`"))
                .label("the playground has one file")
                .help(format!("write the module inline: `mod {name} {{ ... }}`"))
        })
        .collect();
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(errors)
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
            syn::Item::Fn(f) => has_attr(&f.attrs, "kernel") || has_attr(&f.attrs, "helper"),
            syn::Item::Mod(m) => m.content.is_some() && has_attr(&m.attrs, "kernels"),
            _ => false,
        };
        if !keep {
            continue;
        }
        // The item's span covers its attributes (doc comments included).
        let span = syn::spanned::Spanned::span(item);
        let offset = onekernel_compiler::diagnostic::byte_offset;
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
