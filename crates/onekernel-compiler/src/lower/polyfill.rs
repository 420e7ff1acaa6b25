//! Polyfills: Rust methods WGSL has no builtin for, written as source in
//! the kernel language (`polyfill/*.rs`, the way naga keeps its own
//! polyfills as `.wgsl` files) and lowered like `#[helper]` functions, once
//! per module that uses them.

use super::function::FnLowerer;
use crate::diagnostic::Diagnostic;
use crate::parse::{parse_function, FnRole};
use naga::Handle;
use std::collections::HashMap;

/// The polyfills' source.
const SOURCE: &str = include_str!("polyfill/methods.rs");

impl FnLowerer<'_> {
    /// The function `name` of the polyfill source, lowered into this module
    /// on first use. None (with an internal error recorded) if it does not
    /// compile, which a test rules out.
    pub(super) fn polyfill(&mut self, name: &str) -> Option<Handle<naga::Function>> {
        if let Some(h) = self.mb.polyfills.get(name) {
            return Some(*h);
        }
        match lower_polyfill(self, name) {
            Ok(h) => {
                self.mb.polyfills.insert(name.to_string(), h);
                Some(h)
            }
            Err(e) => {
                let msg = format!("internal compiler error: the `{name}` polyfill does not compile: {e}");
                self.errors.push(Diagnostic::new(self.hir.span, msg));
                None
            }
        }
    }
}

fn lower_polyfill(l: &mut FnLowerer<'_>, name: &str) -> Result<Handle<naga::Function>, String> {
    let file = syn::parse_file(SOURCE).map_err(|e| e.to_string())?;
    let item = file
        .items
        .iter()
        .find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == name => Some(f),
            _ => None,
        })
        .ok_or("no such function")?;
    let join = |d: Vec<Diagnostic>| d.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; ");
    let hir = parse_function(item, FnRole::Helper, &mut l.mb.table).map_err(join)?;
    let types = crate::infer::infer(&hir, &HashMap::new(), &mut l.mb.table).map_err(join)?;
    FnLowerer::lower_polyfill(l.mb, &hir, &types).map_err(join)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_polyfill_compiles() {
        let file = syn::parse_file(super::SOURCE).unwrap();
        for item in &file.items {
            let syn::Item::Fn(f) = item else { panic!("only functions") };
            let hir = crate::parse::parse_function(f, crate::parse::FnRole::Helper, &mut Default::default()).unwrap();
            crate::infer::infer(&hir, &Default::default(), &mut Default::default()).unwrap();
        }
        assert_eq!(file.items.len(), 4);
    }
}
