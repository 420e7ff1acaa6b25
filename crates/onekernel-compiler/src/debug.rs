//! The debug call sites of a kernel (`println!`, `assert!`, `panic!`, ...,
//! recognised by `parse/debug.rs`) as the ABI describes them
//! (`onekernel_abi::DebugSite`): what each prints, with which argument
//! types, and which values a kernel cannot print.

use crate::diagnostic::Diagnostic;
use crate::hir::{DebugCall, ExprKind, Function, Program};
use crate::infer::Types;
use crate::types::{Lane, Ty, TypeTable};
use onekernel_abi::debug::{parse_format, ArgRef, FormatTrait, Piece};
use onekernel_abi::{DebugArg, DebugSite, PrintField, PrintType, ScalarType};
use std::borrow::Cow;

/// How a value of type `ty` travels in a record; `None` when a kernel
/// cannot print it (arrays, tuples, tiles).
pub fn print_type(ty: Ty, table: &TypeTable) -> Option<PrintType> {
    Some(match ty {
        Ty::Bool => PrintType::Bool,
        Ty::F32 => PrintType::Scalar(ScalarType::F32),
        Ty::I32 => PrintType::Scalar(ScalarType::I32),
        // The GPU's `usize` is a `u32`, and prints as one.
        Ty::U32 | Ty::Usize => PrintType::Scalar(ScalarType::U32),
        Ty::F16 => PrintType::Scalar(ScalarType::F16),
        Ty::F64 => PrintType::Scalar(ScalarType::F64),
        Ty::I64 => PrintType::Scalar(ScalarType::I64),
        Ty::U64 => PrintType::Scalar(ScalarType::U64),
        Ty::Dim3 => PrintType::Dim3,
        Ty::Vector(v) => PrintType::Vector {
            elem: match v.lane {
                Lane::F32 => ScalarType::F32,
                Lane::I32 => ScalarType::I32,
                Lane::U32 => ScalarType::U32,
                Lane::F16 => ScalarType::F16,
            },
            lanes: v.size,
            aligned: v.aligned,
        },
        Ty::Compound(_) => {
            let (name, fields) = table.as_struct(ty)?;
            let fields = fields
                .iter()
                .map(|(n, t)| Some(PrintField { name: Cow::Owned(n.clone()), ty: print_type(*t, table)? }))
                .collect::<Option<Vec<_>>>()?;
            PrintType::Struct { name: Cow::Owned(name.to_string()), fields: Cow::Owned(fields) }
        }
        Ty::Tile(_) | Ty::Unit | Ty::Never => return None,
    })
}

/// The debug calls of `f`, by site index.
pub fn calls(f: &Function) -> Vec<&DebugCall> {
    let mut calls: Vec<&DebugCall> = f
        .exprs
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            ExprKind::Debug(call) => Some(&**call),
            _ => None,
        })
        .collect();
    calls.sort_by_key(|c| c.site);
    calls
}

/// The first site index of each function of `program`: the kernel's sites
/// come first, then each helper's in `program.helpers` order.
pub fn site_bases(program: &Program) -> Vec<u32> {
    let mut base = program.kernel.debug_sites;
    program
        .helpers
        .iter()
        .map(|h| {
            let b = base;
            base += h.debug_sites;
            b
        })
        .collect()
}

/// Whether the kernel or a helper it calls has a debug site.
pub fn program_has_sites(program: &Program) -> bool {
    program.kernel.debug_sites > 0 || program.helpers.iter().any(|h| h.debug_sites > 0)
}

/// The debug calls of the kernel and of its helpers, each with its
/// function's types, in site order ([`site_bases`]); `true` marks a
/// helper's.
pub fn program_calls<'p>(
    program: &'p Program,
    kernel_types: &'p Types,
    helper_types: &'p [Types],
) -> Vec<(&'p Function, &'p DebugCall, &'p Types, bool)> {
    let mut all: Vec<_> =
        calls(&program.kernel).into_iter().map(|c| (&program.kernel, c, kernel_types, false)).collect();
    for (h, types) in program.helpers.iter().zip(helper_types) {
        all.extend(calls(h).into_iter().map(|c| (h, c, types, true)));
    }
    all
}

/// The file of a helper's site, as `file!()` writes it, where the span
/// knows it; empty otherwise (the kernel's file then stands for it).
fn site_file(span: proc_macro2::Span) -> String {
    let file = span.file();
    if file.is_empty() || file.starts_with('<') {
        String::new()
    } else {
        file
    }
}

/// The ABI's description of every debug call site of the kernel and of
/// the helpers it calls (see [`site_bases`]), or an error for each argument
/// a kernel cannot print.
pub fn sites(
    program: &Program,
    kernel_types: &Types,
    helper_types: &[Types],
    table: &TypeTable,
) -> Result<Vec<DebugSite>, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut sites = Vec::new();
    for (f, call, types, in_helper) in program_calls(program, kernel_types, helper_types) {
        let mut args = Vec::new();
        for (name, a) in &call.args {
            let ty = types.exprs[*a];
            match print_type(ty, table) {
                Some(t) => args.push(DebugArg { name: name.clone().map(Cow::Owned), ty: t }),
                None => errors.push(
                    Diagnostic::new(f.exprs[*a].span, format!("a kernel cannot print a value of type `{}`", table.name(ty)))
                        .help("print its elements or fields one by one: scalars, `bool`, glam vectors, `Dim3` and the module's structs print"),
                ),
            }
        }
        // A struct prints with `{:?}` (its derived `Debug`, which the host
        // repeats); its `Display` is the user's code, which the host cannot
        // run for the GPU.
        if let (Some(format), true) = (&call.format, errors.is_empty()) {
            let leading = call.kind.leading_args();
            if let Ok(pieces) = parse_format(&format.value()) {
                for piece in pieces {
                    let Piece::Arg { arg, spec } = piece else { continue };
                    let index = match arg {
                        ArgRef::Index(i) => {
                            call.args[leading..].iter().filter(|(n, _)| n.is_none()).nth(i).map(|_| i + leading)
                        }
                        ArgRef::Name(n) => call.args.iter().position(|(name, _)| name.as_deref() == Some(&n)),
                    };
                    let Some(index) = index else { continue };
                    let is_struct = matches!(args[index].ty, PrintType::Struct { .. });
                    let debug = matches!(
                        spec.trait_,
                        FormatTrait::Debug | FormatTrait::DebugLowerHex | FormatTrait::DebugUpperHex
                    );
                    if is_struct && !debug {
                        errors.push(
                            Diagnostic::new(format.span(), "a kernel prints a struct with `{:?}` only")
                                .help("derive `Debug` for the struct and print it with `{:?}`, or print its fields"),
                        );
                    }
                }
            }
        }
        let line = call.path.segments.first().map_or(0, |s| s.ident.span().start().line) as u32;
        let column = call.path.segments.first().map_or(0, |s| s.ident.span().start().column + 1) as u32;
        let file = match (in_helper, call.path.segments.first()) {
            (true, Some(s)) => site_file(s.ident.span()),
            _ => String::new(),
        };
        sites.push(DebugSite {
            kind: call.kind,
            line,
            column,
            format: Cow::Owned(call.format.as_ref().map(|f| f.value()).unwrap_or_default()),
            has_message: call.format.is_some(),
            args: Cow::Owned(args),
            condition: Cow::Owned(call.cond_text.clone()),
            enabled: true,
            debug_only: call.debug_only,
            file: Cow::Owned(file),
        });
    }
    if errors.is_empty() {
        Ok(sites)
    } else {
        Err(errors)
    }
}

/// `assert!`'s condition as Rust's panic message writes it
/// (`assertion failed: a[i] < 100`): the expression printed as rustc's
/// pretty printer prints the common forms, the tokens as written
/// otherwise.
pub fn expr_text(e: &syn::Expr) -> String {
    use quote::ToTokens;
    let list = |xs: &mut dyn Iterator<Item = &syn::Expr>| xs.map(expr_text).collect::<Vec<_>>().join(", ");
    match e {
        syn::Expr::Binary(b) => {
            format!("{} {} {}", expr_text(&b.left), b.op.to_token_stream(), expr_text(&b.right))
        }
        syn::Expr::Unary(u) => format!("{}{}", u.op.to_token_stream(), expr_text(&u.expr)),
        syn::Expr::Index(i) => format!("{}[{}]", expr_text(&i.expr), expr_text(&i.index)),
        syn::Expr::Paren(p) => format!("({})", expr_text(&p.expr)),
        syn::Expr::Group(g) => expr_text(&g.expr),
        syn::Expr::Field(f) => format!("{}.{}", expr_text(&f.base), f.member.to_token_stream()),
        syn::Expr::Call(c) => format!("{}({})", expr_text(&c.func), list(&mut c.args.iter())),
        syn::Expr::MethodCall(m) => {
            let turbofish = m.turbofish.as_ref().map(|t| t.to_token_stream().to_string().replace(' ', ""));
            format!(
                "{}.{}{}({})",
                expr_text(&m.receiver),
                m.method,
                turbofish.unwrap_or_default(),
                list(&mut m.args.iter())
            )
        }
        syn::Expr::Cast(c) => {
            format!("{} as {}", expr_text(&c.expr), c.ty.to_token_stream().to_string().replace(' ', ""))
        }
        syn::Expr::Path(p) => p.to_token_stream().to_string().replace(' ', ""),
        syn::Expr::Lit(l) => l.to_token_stream().to_string(),
        other => other.to_token_stream().to_string(),
    }
}
