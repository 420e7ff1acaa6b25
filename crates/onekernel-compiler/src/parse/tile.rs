//! Matrix tiles (`onekernel::tile`): the recogniser of their four
//! operations, the only code that reads their syntax.
//!
//! ```text
//! let a = MatrixA::<16, 16>::load(&a_buf, offset, stride);    // or load_col_major
//! let b = MatrixB::<16, 16>::load(&tile_b, offset, stride);   // a shared array
//! let mut c = Accumulator::<f32, 16, 16>::zeros();            // or ::load(..)
//! c = mma(a, b, c);                                           // a·b + c
//! c.store(&mut out, offset, stride);                          // or store_col_major
//! ```
//!
//! The shape is part of the type, written with a turbofish (constants
//! allowed), as CUDA's `wmma::fragment<matrix_a, 16, 16, 16, half>` does;
//! memory is a buffer parameter or a 1-D shared array, addressed by an
//! element offset and a row stride (a leading dimension).

use super::{strip, Binding, FnRole, Parser};
use crate::diagnostic::Diagnostic;
use crate::hir::*;
use crate::types::{TileElem, TileRole, TileTy};
use syn::spanned::Spanned;

impl Parser<'_> {
    /// `MatrixA::<M, K>::load(..)`, `Accumulator::<T, M, N>::zeros()` and
    /// `mma(a, b, c)`; None when `c` is no tile call.
    pub(super) fn tile_call(&mut self, c: &syn::ExprCall, path: &syn::Path) -> Option<ExprId> {
        let segs: Vec<&syn::PathSegment> = path.segments.iter().collect();
        let span = c.span();
        let last = segs.last()?.ident.to_string();
        if last == "mma" && (segs.len() == 1 || segs.iter().any(|s| s.ident == "tile")) {
            if c.args.len() != 3 {
                return Some(self.error(
                    span,
                    "`mma` takes three tiles: `mma(a, b, c)` computes `a·b + c`",
                    Some("pass a `MatrixA`, a `MatrixB` and an `Accumulator`"),
                ));
            }
            let args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
            if args.iter().any(|a| self.is_error(*a)) {
                return Some(self.already_reported(span));
            }
            return Some(self.tile_op(TileOp::MulAdd, args, path, span));
        }
        let [.., ty_seg, f] = &segs[..] else { return None };
        let role = TileRole::from_name(&ty_seg.ident.to_string())?;
        let f = f.ident.to_string();
        let Some(tile) = self.tile_type(role, &ty_seg.arguments, ty_seg.span()) else {
            return Some(self.already_reported(span));
        };
        match (f.as_str(), role) {
            ("zeros", TileRole::Acc) => {
                if !c.args.is_empty() {
                    return Some(self.error(c.args.span(), "`zeros()` takes no arguments", None));
                }
                Some(self.tile_op(TileOp::Zeros(tile), Vec::new(), path, span))
            }
            ("load" | "load_col_major", _) => {
                if c.args.len() != 3 {
                    return Some(self.error(
                        span,
                        format!("`{f}` takes the memory, an element offset and a row stride"),
                        Some("write `MatrixA::<16, 16>::load(&a, offset, stride)`: the tile's element (r, c) is `a[offset + r * stride + c]`"),
                    ));
                }
                let Some(mem) = self.tile_mem(&c.args[0], false) else {
                    return Some(self.already_reported(span));
                };
                let args: Vec<ExprId> = c.args.iter().skip(1).map(|a| self.expr(a)).collect();
                if args.iter().any(|a| self.is_error(*a)) {
                    return Some(self.already_reported(span));
                }
                let op = TileOp::Load { tile, mem, col_major: f == "load_col_major" };
                Some(self.tile_op(op, args, path, span))
            }
            _ => Some(self.error(
                span,
                format!("`{}::{f}` is not a tile operation", role.name()),
                Some(if role == TileRole::Acc {
                    "an accumulator is made with `zeros()` or `load(&mem, offset, stride)`"
                } else {
                    "an operand tile is made with `load(&mem, offset, stride)` or `load_col_major(..)`"
                }),
            )),
        }
    }

    /// `c.store(&mut out, offset, stride)` / `store_col_major`: None when
    /// the call is not a tile store (an atomic's `store(v, ordering)`).
    pub(super) fn tile_store(&mut self, m: &syn::ExprMethodCall) -> Option<ExprId> {
        let name = m.method.to_string();
        if !(name == "store" || name == "store_col_major") || m.args.len() != 3 {
            return None;
        }
        let span = m.span();
        let Some(mem) = self.tile_mem(&m.args[0], true) else {
            return Some(self.already_reported(span));
        };
        let mut args = vec![self.expr(&m.receiver)];
        args.extend(m.args.iter().skip(1).map(|a| self.expr(a)));
        if args.iter().any(|a| self.is_error(*a)) {
            return Some(self.already_reported(span));
        }
        let path = syn::Path::from(m.method.clone());
        Some(self.tile_op(TileOp::Store { mem, col_major: name == "store_col_major" }, args, &path, span))
    }

    fn tile_op(&mut self, op: TileOp, args: Vec<ExprId>, callee: &syn::Path, span: proc_macro2::Span) -> ExprId {
        if self.role == FnRole::Helper && op.is_collective() {
            return self.error(
                span,
                format!("the tile operation `{}` can only be used in a kernel's body", op.name()),
                Some("a whole subgroup works on a tile together: load, multiply and store tiles in the kernel"),
            );
        }
        let site = if op.is_collective() {
            self.f.barriers += 1;
            self.f.barriers - 1
        } else {
            0
        };
        self.push(ExprKind::Tile { op, args, site, callee: callee.clone() }, span)
    }

    /// The tile type a path segment names: `MatrixA::<16, 16>`,
    /// `Accumulator::<f32, 16, 8>`. Reports and returns None otherwise.
    pub(super) fn tile_type(
        &mut self,
        role: TileRole,
        args: &syn::PathArguments,
        span: proc_macro2::Span,
    ) -> Option<TileTy> {
        let example = match role {
            TileRole::A => "`MatrixA::<16, 16>` (M×K)",
            TileRole::B => "`MatrixB::<16, 16>` (K×N)",
            TileRole::Acc => "`Accumulator::<f32, 16, 16>` (M×N, `f32` or `f16`)",
        };
        let syn::PathArguments::AngleBracketed(a) = args else {
            self.diags.push(
                Diagnostic::new(span, format!("the shape of a `{}` must be written", role.name()))
                    .help(format!("write {example}: the shape is part of the tile's type")),
            );
            return None;
        };
        let mut generics: Vec<&syn::GenericArgument> = a.args.iter().collect();
        let elem = if role == TileRole::Acc {
            let first = generics.first().copied();
            let elem = match first {
                Some(syn::GenericArgument::Type(t)) => match quote::ToTokens::to_token_stream(t).to_string().as_str() {
                    "f32" => Some(TileElem::F32),
                    "f16" | "half :: f16" | "onekernel :: half :: f16" => Some(TileElem::F16),
                    _ => None,
                },
                _ => None,
            };
            let Some(elem) = elem else {
                self.diags.push(
                    Diagnostic::new(a.span(), "an accumulator holds `f32` or `f16`")
                        .help(format!("write {example}; tensor cores accumulate in `f32` or `f16`")),
                );
                return None;
            };
            generics.remove(0);
            elem
        } else {
            TileElem::F16
        };
        let mut sizes = Vec::new();
        for g in &generics {
            let value = match g {
                syn::GenericArgument::Const(e) => self.const_eval(e),
                // `16` parses as a const argument; a constant's name as a type.
                syn::GenericArgument::Type(syn::Type::Path(p)) => {
                    let e = syn::Expr::Path(syn::ExprPath { attrs: vec![], qself: None, path: p.path.clone() });
                    self.const_eval(&e)
                }
                _ => None,
            };
            match value {
                Some(ConstValue::Int(n @ (8 | 16))) => sizes.push(n as u8),
                _ => {
                    self.diags.push(
                        Diagnostic::new(g.span(), "a tile's side is 16 or 8").help(format!(
                            "write {example}; tensor cores multiply 16×16×16 tiles (M×N×K) here, the size naga's cooperative matrices and GPUs share"
                        )),
                    );
                    return None;
                }
            }
        }
        let [rows, cols] = sizes[..] else {
            self.diags.push(
                Diagnostic::new(a.span(), format!("a `{}` has two sides", role.name()))
                    .help(format!("write {example}")),
            );
            return None;
        };
        if rows != cols {
            // naga's IR and Vulkan have 16×8 tiles, but the WGSL wgpu 30
            // compiles knows only `coop_mat8x8` and `coop_mat16x16`.
            self.diags.push(
                Diagnostic::new(a.span(), format!("a {rows}×{cols} tile cannot reach the GPU: tiles are square"))
                    .help(format!("write {example}: wgpu 30's WGSL has only 16×16 and 8×8 cooperative matrices (`coop_mat16x16`, `coop_mat8x8`), so products are 16×16×16 (what GPUs offer) or 8×8×8")),
            );
            return None;
        }
        Some(TileTy { role, elem, rows, cols })
    }

    /// The memory of a tile load or store: `&buf` (`&mut buf` to store) of
    /// a buffer parameter, or `&tile` of a 1-D shared array. Reports and
    /// returns None otherwise.
    fn tile_mem(&mut self, e: &syn::Expr, store: bool) -> Option<TileMem> {
        let inner = match strip(e) {
            syn::Expr::Reference(r) => strip(&r.expr),
            other => other,
        };
        if let Some(p) = self.buffer_of(inner) {
            if let ParamKind::Atomics { .. } = self.f.params[p].kind {
            } else if store && !matches!(self.f.params[p].kind, ParamKind::BufferMut { .. }) {
                let name = self.f.params[p].name.clone();
                self.diags.push(
                    Diagnostic::new(
                        e.span(),
                        format!("`{name}` is read-only: a tile is stored to a `&mut [T]` buffer"),
                    )
                    .help(format!("declare the parameter as `{name}: &mut [f32]`")),
                );
                return None;
            } else {
                return Some(TileMem::Buffer(p));
            }
        }
        if let syn::Expr::Path(p) = inner {
            match p.path.get_ident().and_then(|i| self.lookup(&i.to_string())) {
                Some(Binding::Shared(id)) if self.f.shared[id].dims.len() == 1 && !self.f.shared[id].atomic => {
                    return Some(TileMem::Shared(id))
                }
                Some(Binding::Rejected) => return None,
                _ => {}
            }
        }
        self.diags.push(
            Diagnostic::new(e.span(), "a tile is loaded from or stored to a buffer parameter or a 1-D shared array")
                .help("pass `&a` (a `&[f16]` parameter), `&mut c` (a `&mut [f32]` parameter) or `&tile` (a `shared::<[f16; N]>()`), with the element offset and the row stride after it"),
        );
        None
    }
}
