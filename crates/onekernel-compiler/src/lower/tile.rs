//! Matrix tiles: naga's cooperative matrices (`coop_mat16x16<f16, A>`,
//! `coopLoadT`, `coopMultiplyAdd`, `coopStoreT`; SPIR-V's
//! `SPV_KHR_cooperative_matrix`).
//!
//! A tile's `rows` and `cols` are naga's `rows` and `columns` (SPIR-V's
//! `Rows`/`Columns`: M×K for A, K×N for B, M×N for the accumulator).
//! Memory is addressed as naga wants it: a pointer to the tile's first
//! element (`&a[offset]`), a `u32` stride, and `row_major` for the
//! kernel's default layout (element (r, c) at `offset + r * stride + c`).
//! An `f16` tile may be loaded from a `vec4<f16>` (or `vec2<f16>`) array:
//! naga takes the tile's scalar from the pointer's base type, reads the
//! vectors' lanes in order, and counts the stride in vectors (the H200
//! computes the same products from such staging, issue #14).

use super::function::FnLowerer;
use crate::hir::{ExprId, TileMem, TileOp};
use crate::types::{TileElem, TileRole, TileTy, Ty};
use naga::{BinaryOperator, CooperativeData, CooperativeRole, CooperativeSize, Expression, Handle, Literal, Statement};

/// naga's type for a tile.
pub(super) fn tile_inner(t: TileTy) -> naga::TypeInner {
    let size = |n: u8| if n == 8 { CooperativeSize::Eight } else { CooperativeSize::Sixteen };
    naga::TypeInner::CooperativeMatrix {
        columns: size(t.cols),
        rows: size(t.rows),
        scalar: match t.elem {
            TileElem::F16 => naga::Scalar::F16,
            TileElem::F32 => naga::Scalar::F32,
        },
        role: match t.role {
            TileRole::A => CooperativeRole::A,
            TileRole::B => CooperativeRole::B,
            TileRole::Acc => CooperativeRole::C,
        },
    }
}

impl FnLowerer<'_> {
    /// A tile operation; None for a store (a statement).
    pub(super) fn tile(
        &mut self,
        op: TileOp,
        args: &[ExprId],
        ty: Ty,
        span: proc_macro2::Span,
    ) -> Option<Handle<Expression>> {
        match op {
            TileOp::Zeros(_) => {
                let ty = self.mb.ty(ty);
                Some(self.add(Expression::ZeroValue(ty), span))
            }
            TileOp::Load { tile, mem, col_major } => {
                // The tile's type in the module's arena even when no
                // variable or zero value has it (`let c = Accumulator::load(..)`):
                // naga's WGSL writer emits `enable wgpu_cooperative_matrix;`
                // and `emit::features` finds the feature from the arena.
                self.mb.ty(ty);
                let (offset, stride) = (self.expr(args[0])?, self.expr(args[1])?);
                let data = self.tile_data(mem, tile, offset, stride, col_major, span)?;
                let size = |n: u8| if n == 8 { CooperativeSize::Eight } else { CooperativeSize::Sixteen };
                let naga::TypeInner::CooperativeMatrix { role, .. } = tile_inner(tile) else { unreachable!() };
                let h = self.add(
                    Expression::CooperativeLoad { columns: size(tile.cols), rows: size(tile.rows), role, data },
                    span,
                );
                // A `let` in the WGSL: the load happens here, not where the
                // tile is used.
                let name = match tile.role {
                    TileRole::A => "tile_a",
                    TileRole::B => "tile_b",
                    TileRole::Acc => "tile_c",
                };
                self.name(h, name);
                Some(h)
            }
            TileOp::MulAdd => {
                let (a, b, c) = (self.expr(args[0])?, self.expr(args[1])?, self.expr(args[2])?);
                let h = self.add(Expression::CooperativeMultiplyAdd { a, b, c }, span);
                self.name(h, "product");
                Some(h)
            }
            TileOp::Store { mem, col_major } => {
                let target = self.expr(args[0])?;
                let (offset, stride) = (self.expr(args[1])?, self.expr(args[2])?);
                let Ty::Tile(tile) = self.ty_of(args[0]) else { unreachable!("checked by inference") };
                let data = self.tile_data(mem, tile, offset, stride, col_major, span)?;
                self.stmt(Statement::CooperativeStore { target, data }, span);
                None
            }
        }
    }

    /// The pointer, stride and layout of a tile in memory. In the checked
    /// variant the tile's last element is checked against the memory's
    /// length; a tile out of bounds is reported and read at offset 0.
    fn tile_data(
        &mut self,
        mem: TileMem,
        tile: TileTy,
        offset: Handle<Expression>,
        stride: Handle<Expression>,
        col_major: bool,
        span: proc_macro2::Span,
    ) -> Option<CooperativeData> {
        // Lanes per element of the memory: 4 for a `vec4<f16>` array,
        // whose pointer naga's cooperative load reads as its `f16` lanes
        // (offset and stride then count vectors).
        let lanes = mem.lanes(self.hir);
        let (base, len, what) = match mem {
            TileMem::Buffer(p) => {
                let base = self.add(Expression::GlobalVariable(self.buffers[p]?), span);
                let len = self.mb.checks.is_some().then(|| self.buffer_len(p, base, span));
                (base, len, self.hir.params[p].name.clone())
            }
            TileMem::Shared(s) => {
                let base = self.add(Expression::GlobalVariable(self.shared[s]), span);
                let n = self.hir.shared[s].dims[0];
                let len = self.mb.checks.is_some().then(|| self.len_value(n, span));
                (base, len, self.hir.shared[s].name.clone())
            }
        };
        let offset = match len {
            Some(len) => {
                // The element holding the last lane: (rows - 1, cols - 1);
                // a line of the tile is `minor / lanes` elements (the sides
                // are 8 or 16, the lanes 1, 2 or 4).
                let (major, minor) = if col_major { (tile.cols, tile.rows) } else { (tile.rows, tile.cols) };
                let m = self.literal(Literal::U32(u32::from(major) - 1), span);
                let lines = self.add(Expression::Binary { op: BinaryOperator::Multiply, left: m, right: stride }, span);
                let n = self.literal(Literal::U32(u32::from(minor / lanes) - 1), span);
                let within = self.add(Expression::Binary { op: BinaryOperator::Add, left: lines, right: n }, span);
                let last = self.add(Expression::Binary { op: BinaryOperator::Add, left: offset, right: within }, span);
                let checked = self.checked_index(last, len, &what, span);
                let ok = self.add(Expression::Binary { op: BinaryOperator::Equal, left: checked, right: last }, span);
                let zero = self.literal(Literal::U32(0), span);
                self.add(Expression::Select { condition: ok, accept: offset, reject: zero }, span)
            }
            None => offset,
        };
        // A `let` for the offset: naga 30's SPIR-V back end panics ("is not
        // cached") on a tile store whose offset is an expression written
        // inline in the WGSL that wgpu compiles (found on the H200).
        self.name(offset, "tile_at");
        let pointer = self.add(Expression::Access { base, index: offset }, span);
        Some(CooperativeData { pointer, stride, row_major: !col_major })
    }
}
