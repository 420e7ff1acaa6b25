//! The call graph: which `#[helper]` functions a kernel reaches, in the
//! order naga needs them (callees first). Computed here only, from the
//! calls the recogniser recorded ([`hir::Function::calls`](crate::hir::Function::calls)).
//!
//! A proc macro sees only its own item, so the `#[kernel]` macro gathers
//! helpers one at a time: [`next_missing_helper`] names the next one it
//! needs, whose hidden macro hands its tokens back (see
//! [`crate::expand::helper`]).

use crate::diagnostic::Diagnostic;
use crate::hir::{CallSite, Function};
use crate::parse::{parse_function_in, FnRole, ModuleItems, ModuleScope};
use crate::types::TypeTable;
use std::collections::HashMap;

/// Recognises the helpers `kernel` reaches and orders them callees first.
/// Calls of functions that are not among `items`, and recursion, are
/// errors; problems inside a helper are marked as reported at the helper.
pub fn order_helpers(
    kernel: &Function,
    items: &[syn::ItemFn],
    types: &mut TypeTable,
    scope: &ModuleScope,
) -> Result<Vec<Function>, Vec<Diagnostic>> {
    let mut walk = Walk::new(items, types, scope);
    for call in &kernel.calls {
        walk.visit(call);
    }
    if !walk.errors.is_empty() {
        return Err(walk.errors);
    }
    let Walk { mut parsed, order, .. } = walk;
    Ok(order.into_iter().filter_map(|n| parsed.remove(&n)).collect())
}

/// The first helper `kernel` reaches (directly or through the helpers in
/// `items`) that is not among `items`.
pub fn next_missing_helper(kernel: &Function, items: &[syn::ItemFn], module: &ModuleItems) -> Option<CallSite> {
    let mut types = TypeTable::default();
    let (scope, _) = crate::parse::define_structs(module, &mut types);
    let mut walk = Walk::new(items, &mut types, &scope);
    for call in &kernel.calls {
        walk.visit(call);
        if walk.missing.is_some() {
            break;
        }
    }
    walk.missing
}

/// The error for a call of a function that is not a `#[helper]`, at the call.
pub fn not_a_helper(call: &CallSite) -> Diagnostic {
    let name = &call.name;
    Diagnostic::new(call.span, format!("`{name}` is not a `#[helper]` function")).help(format!(
        "mark `fn {name}` with `#[helper]` so that kernels can call it (helpers take and return values, not buffers)"
    ))
}

/// Whether `file` visibly defines `name` as a function that is not a
/// `#[helper]` where a call at `at` looks it up: a `fn name` among the items
/// of the blocks around the call or of its module (or, through
/// `use super::*;`, of the modules around that), with no attribute that
/// could be `#[helper]` under another name. The `#[kernel]` macro, which
/// sees only its own item, asks this of the file a missing helper's call is
/// in, to say what [`not_a_helper`] says rather than let rustc fail to find
/// the helper's hidden macro; anything it cannot see (a function from
/// another file, or one a macro defines) is left to rustc.
pub fn visible_non_helper(file: &syn::File, at: proc_macro2::LineColumn, name: &str) -> bool {
    lookup(&file.items, at, name) == Some(true)
}

/// What the items around `at` say of `name`: `Some(true)` a function that
/// is not a helper, `Some(false)` something else (a helper, an import, an
/// attribute we do not know), `None` nothing.
fn lookup(items: &[syn::Item], at: proc_macro2::LineColumn, name: &str) -> Option<bool> {
    use syn::spanned::Spanned;
    let contains = |span: proc_macro2::Span| {
        let (start, end) = (span.start(), span.end());
        (start.line, start.column) <= (at.line, at.column) && (at.line, at.column) <= (end.line, end.column)
    };
    for item in items {
        match item {
            syn::Item::Mod(m) if contains(m.span()) => {
                let Some((_, content)) = &m.content else { continue };
                let inner = lookup(content, at, name);
                let glob_super = content.iter().any(|i| {
                    matches!(i, syn::Item::Use(u) if matches!(&u.tree, syn::UseTree::Path(p)
                        if p.ident == "super" && matches!(&*p.tree, syn::UseTree::Glob(_))))
                });
                if inner.is_some() || !glob_super {
                    return inner;
                }
                break;
            }
            syn::Item::Fn(f) if contains(f.span()) => {
                let nested: Vec<syn::Item> = f
                    .block
                    .stmts
                    .iter()
                    .filter_map(|s| match s {
                        syn::Stmt::Item(i) => Some(i.clone()),
                        _ => None,
                    })
                    .collect();
                if let Some(found) = lookup(&nested, at, name) {
                    return Some(found);
                }
                break;
            }
            _ => {}
        }
    }
    let mut found = None;
    for item in items {
        match item {
            syn::Item::Fn(f) if f.sig.ident == name => {
                let plain = f.attrs.iter().all(|a| {
                    a.path().get_ident().is_some_and(|i| {
                        matches!(
                            i.to_string().as_str(),
                            "doc"
                                | "inline"
                                | "allow"
                                | "warn"
                                | "deny"
                                | "expect"
                                | "must_use"
                                | "cold"
                                | "track_caller"
                                | "deprecated"
                                | "kernel"
                        )
                    })
                });
                // Two definitions (behind `cfg`s, say): a non-helper only
                // if every one is.
                found = Some(found.unwrap_or(true) && plain);
            }
            syn::Item::Use(u) if use_names(&u.tree, name) => return Some(false),
            _ => {}
        }
    }
    found
}

/// Whether a `use` tree brings in `name` by name.
fn use_names(tree: &syn::UseTree, name: &str) -> bool {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, name),
        syn::UseTree::Name(n) => n.ident == name,
        syn::UseTree::Rename(r) => r.rename == name,
        syn::UseTree::Glob(_) => false,
        syn::UseTree::Group(g) => g.items.iter().any(|t| use_names(t, name)),
    }
}

/// A depth-first walk of the call graph.
struct Walk<'a> {
    items: HashMap<String, &'a syn::ItemFn>,
    types: &'a mut TypeTable,
    scope: &'a ModuleScope,
    parsed: HashMap<String, Function>,
    /// Finished helpers, callees first.
    order: Vec<String>,
    /// The path from the kernel to the helper being visited (for cycles).
    visiting: Vec<String>,
    errors: Vec<Diagnostic>,
    /// The first call of a function not among the items.
    missing: Option<CallSite>,
}

impl<'a> Walk<'a> {
    fn new(items: &'a [syn::ItemFn], types: &'a mut TypeTable, scope: &'a ModuleScope) -> Self {
        Walk {
            items: items.iter().map(|h| (h.sig.ident.to_string(), h)).collect(),
            types,
            scope,
            parsed: HashMap::new(),
            order: Vec::new(),
            visiting: Vec::new(),
            errors: Vec::new(),
            missing: None,
        }
    }

    fn visit(&mut self, call: &CallSite) {
        let name = call.name.as_str();
        if self.order.iter().any(|n| n == name) {
            return;
        }
        if let Some(start) = self.visiting.iter().position(|n| n == name) {
            let cycle = self.visiting[start..].join("` → `");
            self.errors.push(
                Diagnostic::new(
                    call.span,
                    format!("recursion is not supported: `{name}` calls itself (`{cycle}` → `{name}`)"),
                )
                .help("GPUs have no call stack; rewrite it as a loop"),
            );
            return;
        }
        let Some(item) = self.items.get(name) else {
            self.missing.get_or_insert_with(|| call.clone());
            self.errors.push(not_a_helper(call));
            return;
        };
        match parse_function_in(item, FnRole::Helper, self.types, self.scope) {
            Ok(f) => {
                self.visiting.push(name.to_string());
                let calls = f.calls.clone();
                self.parsed.insert(name.to_string(), f);
                for c in &calls {
                    self.visit(c);
                }
                self.visiting.pop();
                self.order.push(name.to_string());
            }
            // The `#[helper]` attribute reports these at the helper itself.
            Err(e) => self.errors.extend(e.into_iter().map(Diagnostic::at_helper)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a call on the line containing `marker` would look `name` up.
    fn visible(source: &str, marker: &str, name: &str) -> bool {
        let file = syn::parse_file(source).expect("parses");
        let line = source.lines().position(|l| l.contains(marker)).expect("marker") + 1;
        let column = source.lines().nth(line - 1).unwrap().find(marker).unwrap();
        visible_non_helper(&file, proc_macro2::LineColumn { line, column }, name)
    }

    #[test]
    fn a_plain_function_beside_the_kernel_is_visibly_not_a_helper() {
        let src = "fn sq(x: f32) -> f32 { x * x }\n#[kernel(workgroup_size = 64)]\nfn k(a: &mut [f32]) {\n    a[0] = sq(a[0]); // call\n}\n";
        assert!(visible(src, "sq(a[0])", "sq"));
        assert!(!visible(src, "sq(a[0])", "cube"), "not defined: rustc's to report");
    }

    #[test]
    fn helpers_imports_and_unknown_attributes_are_left_alone() {
        let helper = "#[helper]\nfn sq(x: f32) -> f32 { x * x }\nfn k() {\n    sq(1.0); // call\n}\n";
        assert!(!visible(helper, "sq(1.0)", "sq"));
        let renamed = "#[h]\nfn sq(x: f32) -> f32 { x * x }\nfn k() {\n    sq(1.0); // call\n}\n";
        assert!(!visible(renamed, "sq(1.0)", "sq"), "`h` may be `helper` renamed");
        let imported =
            "mod a { fn sq() {} }\nmod b {\n    use crate::h::sq;\n    fn k() {\n        sq(); // call\n    }\n}\n";
        assert!(!visible(imported, "sq(); // call", "sq"));
    }

    #[test]
    fn modules_scope_the_lookup() {
        let other = "mod a { fn sq() {} }\nmod b {\n    fn k() {\n        sq(); // call\n    }\n}\n";
        assert!(!visible(other, "sq(); // call", "sq"), "another module's function is not the one called");
        let glob = "fn sq() {}\nmod b {\n    use super::*;\n    fn k() {\n        sq(); // call\n    }\n}\n";
        assert!(visible(glob, "sq(); // call", "sq"));
        let local = "fn k() {\n    fn sq() {}\n    sq(); // call\n}\n";
        assert!(visible(local, "sq(); // call", "sq"));
    }
}
