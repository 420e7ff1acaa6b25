//! Reading the program: the kernels of one file, and the `#[helper]`
//! functions of that file and of the files its `mod name;` declarations
//! load (as cargo would), so that a helper in a sibling module is found.

use onekernel_compiler::Diagnostic;
use std::path::{Path, PathBuf};

/// A `#[kernel]` function and its attribute's tokens.
pub struct Kernel {
    /// The tokens inside `#[kernel(...)]`.
    pub attr: proc_macro2::TokenStream,
    /// The function, without the attribute.
    pub item: syn::ItemFn,
    /// The constants and structs of the `#[onekernel::kernels]` module the
    /// kernel is in (empty outside one).
    pub module: onekernel_compiler::parse::ModuleItems,
}

/// A `#[helper]` function and the file it is in.
pub struct Helper {
    /// The function.
    pub item: syn::ItemFn,
    /// Its file, as shown in messages.
    pub file: String,
    /// That file's text.
    pub source: String,
    /// The items of the `#[onekernel::kernels]` module it is in.
    pub module: onekernel_compiler::parse::ModuleItems,
}

/// What the tool compiles.
pub struct Program {
    /// The kernels of the main file, also in inline modules.
    pub kernels: Vec<Kernel>,
    /// The helpers of every file read.
    pub helpers: Vec<Helper>,
}

/// A syntax error: (file, its text, the diagnostic).
pub type FileError = (String, String, Diagnostic);

/// How deep `mod` declarations are followed.
const MAX_DEPTH: usize = 8;

/// Reads `path` (whose text is `source`) and the module files it declares.
pub fn read_program(path: &Path, source: &str) -> Result<Program, Vec<FileError>> {
    let mut program = Program { kernels: Vec::new(), helpers: Vec::new() };
    let mut errors = Vec::new();
    // Nesting checked before syn recurses (`onekernel_compiler::nesting`).
    let file = match onekernel_compiler::parse_source::<syn::File>(source) {
        Ok(f) => f,
        Err(e) => return Err(e.into_iter().map(|d| (path.display().to_string(), source.to_string(), d)).collect()),
    };
    let dir = module_dir(path);
    let none = onekernel_compiler::parse::ModuleItems::default();
    collect(&file.items, path, source, &dir, 0, true, &none, &mut program, &mut errors);
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(errors)
    }
}

/// The directory in which `path`'s `mod name;` files are: its own for
/// `main.rs`, `lib.rs` and `mod.rs` (and any file given to the tool at
/// the top), `dir/stem/` for a module file `dir/stem.rs`.
fn module_dir(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn collect(
    items: &[syn::Item],
    path: &Path,
    source: &str,
    dir: &Path,
    depth: usize,
    main_file: bool,
    module: &onekernel_compiler::parse::ModuleItems,
    program: &mut Program,
    errors: &mut Vec<FileError>,
) {
    let is = |a: &syn::Attribute, name: &str| a.path().segments.last().is_some_and(|s| s.ident == name);
    for item in items {
        match item {
            syn::Item::Fn(f) => {
                if let Some(attr) = f.attrs.iter().find(|a| is(a, "kernel")) {
                    if main_file {
                        let tokens = match &attr.meta {
                            syn::Meta::List(l) => l.tokens.clone(),
                            _ => proc_macro2::TokenStream::new(),
                        };
                        let mut f = f.clone();
                        f.attrs.retain(|a| !is(a, "kernel"));
                        program.kernels.push(Kernel { attr: tokens, item: f, module: module.clone() });
                    }
                } else if f.attrs.iter().any(|a| is(a, "helper")) {
                    program.helpers.push(Helper {
                        item: f.clone(),
                        file: path.display().to_string(),
                        source: source.to_string(),
                        module: module.clone(),
                    });
                }
            }
            syn::Item::Mod(m) => match &m.content {
                Some((_, inner)) => {
                    let sub = dir.join(m.ident.to_string());
                    // A `#[onekernel::kernels]` module shows its kernels its
                    // constants and structs.
                    let items = if m.attrs.iter().any(|a| is(a, "kernels")) {
                        let mut items = onekernel_compiler::parse::ModuleItems::default();
                        for i in inner {
                            match i {
                                syn::Item::Const(c) => items.consts.push(c.clone()),
                                syn::Item::Struct(st) => items.structs.push(st.clone()),
                                _ => {}
                            }
                        }
                        items
                    } else {
                        onekernel_compiler::parse::ModuleItems::default()
                    };
                    collect(inner, path, source, &sub, depth, main_file, &items, program, errors);
                }
                None if depth < MAX_DEPTH => {
                    let Some(file) = module_file(m, dir) else { continue };
                    let Ok(text) = std::fs::read_to_string(&file) else { continue };
                    match onekernel_compiler::parse_source::<syn::File>(&text) {
                        Ok(parsed) => {
                            let sub = if file.file_name().is_some_and(|n| n == "mod.rs") {
                                module_dir(&file)
                            } else {
                                dir.join(m.ident.to_string())
                            };
                            let none = onekernel_compiler::parse::ModuleItems::default();
                            collect(&parsed.items, &file, &text, &sub, depth + 1, false, &none, program, errors);
                        }
                        Err(e) => errors.extend(e.into_iter().map(|d| (file.display().to_string(), text.clone(), d))),
                    }
                }
                None => {}
            },
            _ => {}
        }
    }
}

/// The file of `mod name;`: its `#[path]`, else `dir/name.rs`, else
/// `dir/name/mod.rs`.
fn module_file(m: &syn::ItemMod, dir: &Path) -> Option<PathBuf> {
    for a in &m.attrs {
        if let syn::Meta::NameValue(nv) = &a.meta {
            if nv.path.is_ident("path") {
                if let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) = &nv.value {
                    return Some(dir.join(s.value()));
                }
            }
        }
    }
    let name = m.ident.to_string();
    [dir.join(format!("{name}.rs")), dir.join(&name).join("mod.rs")].into_iter().find(|p| p.exists())
}
