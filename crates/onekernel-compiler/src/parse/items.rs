//! The items of a `#[onekernel::kernels]` module that its kernels see:
//! constants (evaluated when a kernel uses them) and structs (declared in
//! the program's [`TypeTable`] with WGSL's layout, which must be Rust's
//! `#[repr(C)]` layout too).

use super::{strip_type, Parser};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::types::{Ty, TypeTable};
use std::collections::HashMap;
use syn::spanned::Spanned;

/// The items of a `#[onekernel::kernels]` module, as written.
#[derive(Clone, Debug, Default)]
pub struct ModuleItems {
    /// `const NAME: T = value;` items.
    pub consts: Vec<syn::ItemConst>,
    /// `struct Name { .. }` items.
    pub structs: Vec<syn::ItemStruct>,
}

/// What the parser sees of the module around a function.
#[derive(Clone, Debug, Default)]
pub struct ModuleScope {
    /// The module's constants.
    pub consts: Vec<syn::ItemConst>,
    /// Structs of the module that kernels cannot use, with why: a kernel
    /// that names one gets these problems.
    pub unusable_structs: HashMap<String, Vec<Diagnostic>>,
}

/// Declares the module's structs in `types`, in an order where each
/// struct's fields are declared before it, and checks their layout. A
/// struct whose fields are not all kernel types stays host-only (its
/// problems are kept in the scope, for a kernel that names it); a struct
/// of kernel types whose layout has padding is an error (returned).
pub fn define_structs(items: &ModuleItems, types: &mut TypeTable) -> (ModuleScope, Vec<Diagnostic>) {
    let mut scope = ModuleScope { consts: items.consts.clone(), unusable_structs: HashMap::new() };
    let mut errors = Vec::new();
    let mut pending: Vec<&syn::ItemStruct> = items.structs.iter().collect();
    // Each pass declares the structs whose field types are all known; a
    // struct naming a struct of the module that is not declared yet waits.
    loop {
        let before = pending.len();
        let mut waiting = Vec::new();
        for s in pending {
            match struct_fields(s, types, &scope, &items.structs) {
                Fields::Ready(fields) => {
                    let name = s.ident.to_string();
                    let Some(ty) = types.define_struct(&name, fields) else { continue };
                    errors.extend(check_padding(s, ty, types));
                }
                Fields::Waiting => waiting.push(s),
                Fields::HostOnly(problems) => {
                    scope.unusable_structs.insert(s.ident.to_string(), problems);
                }
            }
        }
        pending = waiting;
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    // A cycle (rustc reports a struct that contains itself).
    for s in pending {
        scope.unusable_structs.insert(
            s.ident.to_string(),
            vec![Diagnostic::new(s.ident.span(), format!("the struct `{}` contains itself", s.ident))],
        );
    }
    (scope, errors)
}

enum Fields {
    Ready(Vec<(String, Ty)>),
    /// A field's type is a struct of the module not declared yet.
    Waiting,
    HostOnly(Vec<Diagnostic>),
}

fn struct_fields(s: &syn::ItemStruct, types: &mut TypeTable, scope: &ModuleScope, all: &[syn::ItemStruct]) -> Fields {
    let mut problems = Vec::new();
    if !s.generics.params.is_empty() {
        problems.push(
            Diagnostic::new(
                s.generics.span(),
                format!("the struct `{}` is generic, and kernels use concrete types", s.ident),
            )
            .help("declare one struct per element type"),
        );
    }
    let named = match &s.fields {
        syn::Fields::Named(n) => &n.named,
        syn::Fields::Unnamed(u) => {
            problems.push(
                Diagnostic::new(
                    u.span(),
                    format!("kernels use structs with named fields; `{}` is a tuple struct", s.ident),
                )
                .help("name the fields: `struct Name { a: f32, b: f32 }`"),
            );
            return Fields::HostOnly(problems);
        }
        syn::Fields::Unit => {
            problems
                .push(Diagnostic::new(s.ident.span(), format!("`{}` has no fields to share with a kernel", s.ident)));
            return Fields::HostOnly(problems);
        }
    };
    let mut fields = Vec::new();
    for f in named {
        let name = f.ident.as_ref().map(|i| i.to_string()).unwrap_or_default();
        // A struct of the module that is not declared yet: wait for it.
        if let syn::Type::Path(p) = strip_type(&f.ty) {
            if let Some(last) = p.path.segments.last() {
                let n = last.ident.to_string();
                if types.struct_named(&n).is_none() && all.iter().any(|s| s.ident == n) {
                    if scope.unusable_structs.contains_key(&n) {
                        problems.push(Diagnostic::new(
                            f.ty.span(),
                            format!("the field `{name}` has the type `{n}`, which kernels cannot use"),
                        ));
                        continue;
                    }
                    return Fields::Waiting;
                }
            }
        }
        let mut p = Parser::detached(types, scope);
        let ty = p.value_type(&f.ty);
        let diags = std::mem::take(&mut p.diags).into_vec();
        match ty {
            Some(t) if types.wgsl_layout(t).is_some() => fields.push((name, t)),
            Some(t) => problems.push(Diagnostic::new(
                f.ty.span(),
                format!(
                    "its field `{name}: {}` cannot be shared between the host and the GPU: {}",
                    types.name(t),
                    match t {
                        Ty::Bool => "use a `u32` that is 0 or 1".to_string(),
                        Ty::Usize => "use `u32` (`usize` is 32 bits on the GPU and 64 on the host)".to_string(),
                        Ty::Vector(v) => format!(
                            "glam's `{}` takes 12 bytes, and the GPU's `vec3` 16; use {}",
                            v.name(),
                            v.aligned_alternative()
                        ),
                        _ => "use `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64`, glam vectors, arrays of them or other such structs"
                            .to_string(),
                    }
                ),
            )),
            None => problems.extend(diags.into_iter().map(|mut d| {
                d.message = format!("its field `{name}`: {}", d.message);
                d
            })),
        }
    }
    if problems.is_empty() {
        Fields::Ready(fields)
    } else {
        Fields::HostOnly(problems)
    }
}

/// WGSL places each field at a multiple of its alignment and rounds the
/// struct's size up to its largest alignment; Rust's `#[repr(C)]` does the
/// same with Rust's alignments, which may be smaller. With no padding in
/// WGSL's layout the two layouts are the same (and the struct is
/// `bytemuck::Pod`), so padding is an error that says what to add.
fn check_padding(s: &syn::ItemStruct, ty: Ty, types: &TypeTable) -> Vec<Diagnostic> {
    let mut errors = Vec::new();
    let (Some(offsets), Some((size, align)), Some((_, fields))) =
        (types.struct_offsets(ty), types.wgsl_layout(ty), types.as_struct(ty))
    else {
        return errors;
    };
    let syn::Fields::Named(named) = &s.fields else { return errors };
    let mut end = 0u32;
    for (k, ((field, fty), (at, f))) in fields.iter().zip(offsets.iter().zip(&named.named)).enumerate() {
        if *at > end {
            let gap = at - end;
            let (_, fa) = types.wgsl_layout(*fty).unwrap_or((0, 4));
            errors.push(
                Diagnostic::new(
                    f.span(),
                    format!(
                        "`{}` would have {gap} bytes of padding before `{field}`: the GPU aligns a `{}` to {fa} bytes",
                        s.ident,
                        types.name(*fty)
                    ),
                )
                .help(format!(
                    "add {} before `{field}`, or order the fields by alignment, largest first",
                    padding(gap, k)
                ))
                .note("kernels share structs with the host byte for byte, so the layout must have no hidden padding"),
            );
        }
        end = at + types.wgsl_layout(*fty).map_or(0, |(s, _)| s);
    }
    if size > end {
        errors.push(
            Diagnostic::new(
                s.ident.span(),
                format!(
                    "`{}` would have {} bytes of padding at its end: the GPU rounds its size up to a multiple of {align} bytes",
                    s.ident,
                    size - end
                ),
            )
            .help(format!("add {} as the last field", padding(size - end, fields.len())))
            .note("kernels share structs with the host byte for byte, so the layout must have no hidden padding"),
        );
    }
    errors
}

/// The padding fields to write for `bytes` bytes.
fn padding(bytes: u32, k: usize) -> String {
    let words = bytes / 4;
    if words <= 3 {
        let fields: Vec<String> = (0..words).map(|i| format!("`_pad{k}_{i}: u32`")).collect();
        fields.join(", ")
    } else {
        format!("`_pad{k}: [u32; {words}]`")
    }
}

impl<'t> Parser<'t> {
    /// A parser outside any function, for the types of struct fields.
    fn detached(types: &'t mut TypeTable, module: &'t ModuleScope) -> Parser<'t> {
        Parser {
            types,
            diags: Diagnostics::default(),
            f: crate::hir::Function::named(String::new(), proc_macro2::Span::call_site()),
            scopes: vec![HashMap::new()],
            role: super::FnRole::Helper,
            loop_labels: Vec::new(),
            generics: Vec::new(),
            instance: None,
            module,
        }
    }
}
