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
            self.errors.push(Diagnostic::new(call.span, format!("`{name}` is not a `#[helper]` function")).help(
                format!(
                    "mark `fn {name}` with `#[helper]` so that kernels can call it (helpers take and return values, not buffers)"
                ),
            ));
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
