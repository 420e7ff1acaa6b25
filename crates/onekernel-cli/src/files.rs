//! Reading the program: the kernels of one file, and the `#[helper]`
//! functions of that file and of the files its `mod name;` declarations
//! load (as cargo would), so that a helper in a sibling module is found.
//! Which functions are kernels and helpers is the compiler's
//! (`onekernel_compiler::Program`); this follows the files.

use onekernel_compiler::{Diagnostic, Program};
use std::path::{Path, PathBuf};

/// A file read: as shown in messages, its text, and the directory of its
/// `mod name;` files.
pub struct File {
    /// The path, as shown in messages.
    pub path: String,
    /// Its text.
    pub source: String,
    dir: PathBuf,
    depth: usize,
}

/// A syntax error: (file, its text, the diagnostic).
pub type FileError = (String, String, Diagnostic);

/// How deep `mod` declarations are followed.
const MAX_DEPTH: usize = 8;

/// Reads `path` (whose text is `source`) and the module files it declares:
/// the program, and the files read (the program's file numbers index it).
pub fn read_program(path: &Path, source: &str) -> Result<(Program, Vec<File>), Vec<FileError>> {
    let shown = path.display().to_string();
    // Nesting checked before syn recurses (`onekernel_compiler::nesting`).
    let file = onekernel_compiler::parse_source::<syn::File>(source)
        .map_err(|e| e.into_iter().map(|d| (shown.clone(), source.to_string(), d)).collect::<Vec<_>>())?;
    let mut program = Program::of_items(&file.items);
    let mut files = vec![File { path: shown, source: source.to_string(), dir: module_dir(path), depth: 0 }];
    let mut errors = Vec::new();
    let mut next = 0;
    while let Some(m) = program.mod_files.get(next).cloned() {
        next += 1;
        let from = &files[m.file];
        if from.depth >= MAX_DEPTH {
            continue;
        }
        let dir = m.within.iter().fold(from.dir.clone(), |d, i| d.join(i.to_string()));
        let Some(path) = module_file(&m.item, &dir) else { continue };
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        match onekernel_compiler::parse_source::<syn::File>(&text) {
            Ok(parsed) => {
                let sub = if path.file_name().is_some_and(|n| n == "mod.rs") {
                    module_dir(&path)
                } else {
                    dir.join(m.item.ident.to_string())
                };
                program.add_helpers(&parsed.items, files.len());
                let depth = from.depth + 1;
                files.push(File { path: path.display().to_string(), source: text, dir: sub, depth });
            }
            Err(e) => errors.extend(e.into_iter().map(|d| (path.display().to_string(), text.clone(), d))),
        }
    }
    if errors.is_empty() {
        Ok((program, files))
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
