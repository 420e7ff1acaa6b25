//! `println!`, `print!`, `eprintln!`, `eprint!`, `assert!`, `assert_eq!`,
//! `assert_ne!`, their `debug_` forms, `panic!`, `unreachable!`, `todo!`
//! and `unimplemented!` in a kernel: recognised here, once, as
//! [`ExprKind::Debug`] (see `onekernel_abi::debug` for what the GPU and the
//! runtime do with them).

use super::Parser;
use crate::diagnostic::Diagnostic;
use crate::hir::{DebugCall, ExprId, ExprKind};
use onekernel_abi::debug::{parse_format, ArgRef, Piece};
use onekernel_abi::DebugKind;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

/// The macro's kind by its name, and whether it is a `debug_` form.
pub(crate) fn kind_of(name: &str) -> Option<(DebugKind, bool)> {
    Some(match name {
        "println" => (DebugKind::Print { stderr: false, newline: true }, false),
        "print" => (DebugKind::Print { stderr: false, newline: false }, false),
        "eprintln" => (DebugKind::Print { stderr: true, newline: true }, false),
        "eprint" => (DebugKind::Print { stderr: true, newline: false }, false),
        "panic" => (DebugKind::Panic, false),
        "unreachable" => (DebugKind::Unreachable, false),
        "todo" => (DebugKind::Todo, false),
        "unimplemented" => (DebugKind::Unimplemented, false),
        "assert" => (DebugKind::Assert, false),
        "assert_eq" => (DebugKind::AssertEq, false),
        "assert_ne" => (DebugKind::AssertNe, false),
        "debug_assert" => (DebugKind::Assert, true),
        "debug_assert_eq" => (DebugKind::AssertEq, true),
        "debug_assert_ne" => (DebugKind::AssertNe, true),
        _ => return None,
    })
}

impl Parser<'_> {
    /// A debug macro as an expression; `None` when `mac` is not one.
    pub(super) fn debug_macro(&mut self, mac: &syn::Macro) -> Option<ExprId> {
        let name = mac.path.segments.last()?.ident.to_string();
        let (kind, debug_only) = kind_of(&name)?;
        let span = mac.span();
        let parsed = mac.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        let Ok(items) = parsed else {
            // rustc says what is wrong with the macro's arguments.
            return Some(self.left_to_rustc(span));
        };
        let mut items: Vec<syn::Expr> = items.into_iter().collect();
        let leading = match kind {
            DebugKind::Assert => 1,
            DebugKind::AssertEq | DebugKind::AssertNe => 2,
            _ => 0,
        };
        if items.len() < leading {
            return Some(self.left_to_rustc(span));
        }
        let rest = items.split_off(leading);
        let mut cond = None;
        let mut cond_text = String::new();
        let mut args = Vec::new();
        for (i, e) in items.iter().enumerate() {
            let id = self.expr(e);
            if kind == DebugKind::Assert && i == 0 {
                cond = Some(id);
                cond_text = crate::debug::expr_text(e);
            } else {
                args.push((None, id));
            }
        }
        let mut rest = rest.into_iter();
        let format = match rest.next() {
            None => None,
            Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) => Some(s),
            // `panic!(x)` / `println!(x)`: rustc wants a literal there.
            Some(other) => return Some(self.left_to_rustc(other.span())),
        };
        let mut named: Vec<String> = Vec::new();
        for e in rest {
            match e {
                syn::Expr::Assign(a) => {
                    let syn::Expr::Path(p) = &*a.left else { return Some(self.left_to_rustc(a.span())) };
                    let Some(ident) = p.path.get_ident() else { return Some(self.left_to_rustc(a.span())) };
                    let id = self.expr(&a.right);
                    let n = ident.to_string();
                    named.push(n.clone());
                    args.push((Some(n), id));
                }
                e => {
                    let id = self.expr(&e);
                    args.push((None, id));
                }
            }
        }
        if let Some(lit) = &format {
            match parse_format(&lit.value()) {
                Err(e) if e.rustc_rejects => return Some(self.left_to_rustc(lit.span())),
                Err(e) => {
                    self.diags.push(Diagnostic::new(lit.span(), e.message).help(
                        "write the width and the precision as numbers (`{:8.3}`): a kernel's format is fixed when it is compiled",
                    ));
                    return Some(self.already_reported(span));
                }
                Ok(pieces) => {
                    // `{x}` captures the variable `x`, as in Rust.
                    for piece in pieces {
                        if let Piece::Arg { arg: ArgRef::Name(n), .. } = piece {
                            if !named.contains(&n) {
                                let ident = syn::Ident::new(&n, lit.span());
                                let path = syn::Expr::Path(syn::ExprPath {
                                    attrs: Vec::new(),
                                    qself: None,
                                    path: ident.into(),
                                });
                                let id = self.expr(&path);
                                named.push(n.clone());
                                args.push((Some(n), id));
                            }
                        }
                    }
                }
            }
        }
        let site = self.f.debug_sites;
        self.f.debug_sites += 1;
        let call = DebugCall { kind, site, debug_only, path: mac.path.clone(), cond, cond_text, format, args };
        Some(self.push(ExprKind::Debug(Box::new(call)), span))
    }
}
