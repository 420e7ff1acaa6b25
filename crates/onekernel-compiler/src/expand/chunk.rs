//! The chunk-slice body (`cpu_chunk`): a whole chunk of invocations as one
//! loop over plain slices, for the kernels `analysis::chunk_slices` accepts
//! (every buffer element is the invocation's own, `global_id().x`).
//!
//! The per-invocation body indexes each buffer with `i`, so every access
//! carries a bounds check whose panic LLVM must keep in order, and a guard
//! `if i < out.len()` makes the store conditional: the chunk loop is not
//! vectorised. Here, for a chunk of invocations `lo..hi` whose buffers all
//! hold at least `hi` elements (`cpu_chunk` checks, and returns `false` for
//! the executor to run the checked per-invocation body instead), the loop
//! runs `j` over `0..hi - lo` with `i = lo + j` and each buffer re-sliced
//! to `lo..hi`:
//!
//! * `a[i]` is `a_s[j]` and `out[i] = v` is `out_s[j] = v`, where every
//!   slice has exactly `hi - lo` elements, so LLVM drops the checks;
//! * `out.len()` is the whole buffer's length, read once;
//! * a comparison of `i` with a buffer's `len()` (`i < out.len()`,
//!   `i >= a.len()`) is decided: every buffer covers the chunk;
//! * when the body compares `i` with one immutable scalar parameter
//!   (`i < n as usize`), the loop is split at it, and each part's body has
//!   those comparisons decided too;
//! * `global_id()` is `(i, 0, 0)` (a 1-D grid), and `return` ends the
//!   invocation (`continue '__inv`).
//!
//! Everything else is the per-invocation body as `cpu_body.rs` generates it
//! (the same `Gen`, with `ChunkLoop` set), so the loop computes exactly
//! what the invocations would, in the same order, with the same panics
//! (none of them out of bounds, as the chunk is covered).

use super::cpu_body::{internal, rust_type, user_ident, Gen};
use crate::analysis::OwnIndex;
use crate::hir::{BinOp, ExprId, ExprKind, Function, ParamId, ParamKind};
use crate::CompiledKernel;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// What the chunk loop changes in the body `Gen` generates.
pub(super) struct ChunkLoop<'f> {
    own: OwnIndex<'f>,
    /// The scalar bound the loop is split at, and which side of it this
    /// copy of the body runs: below (`i < n`) or not.
    split: Option<(Bound, bool)>,
}

/// A loop-invariant bound compared with the invocation's index: an
/// immutable scalar parameter, as written or cast to `usize`
/// (`i < n as usize`). Evaluating it cannot panic or change anything.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Bound {
    param: ParamId,
    cast: bool,
}

impl ChunkLoop<'_> {
    /// True when `e` is the invocation's `global_id().x`.
    pub(super) fn is_own(&self, e: ExprId) -> bool {
        self.own.is_own(e)
    }

    /// The value of `l op r` when the chunk decides it: a comparison of the
    /// invocation's index with the length of a buffer (`i < out.len()`),
    /// which every buffer of a covered chunk exceeds, or with the scalar
    /// bound this copy of the loop is on one side of (`i < n as usize`).
    pub(super) fn decided(&self, f: &Function, op: BinOp, l: ExprId, r: ExprId) -> Option<bool> {
        let is_len = |e: ExprId| match f.exprs[e].kind {
            ExprKind::Len(p) => is_slice(f, p),
            _ => false,
        };
        // As `i op x`, the index on the left.
        let (op, x) = if self.is_own(l) {
            (op, r)
        } else if self.is_own(r) {
            (flipped(op)?, l)
        } else {
            return None;
        };
        if is_len(x) {
            return match op {
                BinOp::Lt | BinOp::Le | BinOp::Ne => Some(true),
                BinOp::Gt | BinOp::Ge | BinOp::Eq => Some(false),
                _ => None,
            };
        }
        let (bound, below) = self.split?;
        if bound_of(f, x) != Some(bound) {
            return None;
        }
        match (op, below) {
            (BinOp::Lt | BinOp::Le | BinOp::Ne, true) | (BinOp::Ge, false) => Some(true),
            (BinOp::Gt | BinOp::Ge | BinOp::Eq, true) | (BinOp::Lt, false) => Some(false),
            // At `i == n`, on the upper side: not decided.
            _ => None,
        }
    }
}

/// `x op i` as `i op' x`.
fn flipped(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Gt => BinOp::Lt,
        BinOp::Le => BinOp::Ge,
        BinOp::Ge => BinOp::Le,
        BinOp::Eq | BinOp::Ne => op,
        _ => return None,
    })
}

/// The bound `e` is, if it is one.
fn bound_of(f: &Function, e: ExprId) -> Option<Bound> {
    match &f.exprs[e].kind {
        ExprKind::Param(p) if matches!(f.params[*p].kind, ParamKind::Scalar { mutable: false, .. }) => {
            Some(Bound { param: *p, cast: false })
        }
        ExprKind::Cast(x, crate::types::Ty::Usize) => {
            bound_of(f, *x).filter(|b| !b.cast).map(|b| Bound { cast: true, ..b })
        }
        ExprKind::Typed(x, _) => bound_of(f, *x),
        _ => None,
    }
}

/// The one scalar bound the body compares the invocation's index with
/// (`i < n as usize`), and one such comparison (to evaluate the bound
/// from); `None` when there is none or more than one: the loop is then not
/// split.
fn split_bound(f: &Function, own: &OwnIndex<'_>) -> Option<(Bound, ExprId)> {
    let mut found: Vec<(Bound, ExprId)> = Vec::new();
    crate::visit::visit_block(f, &f.body, 0, &mut |_, k, _| {
        if let ExprKind::Binary(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, l, r) = k {
            let x = if own.is_own(*l) {
                *r
            } else if own.is_own(*r) {
                *l
            } else {
                return;
            };
            if let Some(b) = bound_of(f, x) {
                found.push((b, x));
            }
        }
    });
    let first = *found.first()?;
    found.iter().all(|(b, _)| *b == first.0).then_some(first)
}

/// The slices a covered chunk re-slices: `&[T]` and `&mut [T]` parameters.
fn is_slice(f: &Function, p: ParamId) -> bool {
    matches!(f.params[p].kind, ParamKind::Buffer { .. } | ParamKind::BufferMut { .. })
}

/// The chunk's slice of buffer `p` in the loop.
pub(super) fn slice(p: ParamId) -> Ident {
    internal(&format!("__slice{}", p.index()))
}

/// The whole length of output `p`, read before the loop.
pub(super) fn len(p: ParamId) -> Ident {
    internal(&format!("__len{}", p.index()))
}

/// The loop's position in the chunk (`j`), and the invocation's
/// `global_id().x` (`i = lo + j`).
pub(super) fn positions() -> (Ident, Ident) {
    (internal("__j"), internal("__i"))
}

/// `pub fn cpu_chunk(..)` for a kernel whose plan has the chunk loop
/// (`CpuPlan::OwnElement { chunk_loop: true }`, `analysis::chunk_slices`),
/// or nothing. Its parameters are `cpu_body`'s, outputs as the chunk's
/// windows (`&mut OwnedChunk<T>`), after the chunk's `global_id().x` range.
/// `generics`: the kernel's const parameters (`<const N: u32>`), if any.
pub fn chunk_fn(compiled: &CompiledKernel, generics: &TokenStream) -> Option<TokenStream> {
    let f: &Function = &compiled.checked.program.kernel;
    if compiled.checked.cpu != (onekernel_abi::CpuPlan::OwnElement { chunk_loop: true }) {
        return None;
    }
    let k = super::krate();
    let table = &compiled.checked.program.types;
    let (x, lo, n) = (internal("__x"), internal("__lo"), internal("__n"));
    let (j, i) = positions();
    let mut params = Vec::new();
    let mut covered = Vec::new();
    let mut slices = Vec::new();
    let mut fresh = Vec::new();
    for (p, param) in f.params.iter() {
        let ident = user_ident(&param.name, param.span);
        let written = &param.written_ty;
        let (s, l) = (slice(p), len(p));
        match param.kind {
            ParamKind::Buffer { .. } => {
                params.push(quote!(#ident: #written));
                covered.push(quote!(#ident.len()));
                slices.push(quote!(let #s = &#ident[#x.clone()];));
            }
            ParamKind::BufferMut { elem } => {
                let t = rust_type(elem, table);
                params.push(quote!(#ident: &mut #k::OwnedChunk<'_, #t>));
                covered.push(quote!(#k::OutputSlice::len(#ident)));
                // The window is the chunk's range when the buffer covers
                // it; `[..n]` tells LLVM its length.
                slices.push(quote! {
                    let #l = #k::OutputSlice::len(#ident);
                    let #s = &mut #ident.window_mut()[..#n];
                });
            }
            ParamKind::Atomics { .. } => params.push(quote!(#ident: #written)),
            ParamKind::Scalar { mutable, .. } => {
                params.push(quote!(#ident: #written));
                // Each invocation starts from the argument.
                if mutable {
                    fresh.push(quote!(let mut #ident = #ident;));
                }
            }
        }
    }
    let own = OwnIndex::new(f);
    let split = split_bound(f, &own);
    // The per-invocation body's generator; the loop's sets `chunk`.
    let plain = || Gen {
        f,
        types: &compiled.checked.kernel_types,
        table,
        layout: &compiled.layout,
        k: k.clone(),
        phase: None,
        chunk: None,
        // Never with helpers that print: those kernels run per invocation.
        helper_scope: false,
    };
    let gen = |side: Option<bool>| {
        let chunk = ChunkLoop { own: OwnIndex::new(f), split: split.zip(side).map(|((b, _), below)| (b, below)) };
        Gen { chunk: Some(&chunk), ..plain() }.block(&f.body)
    };
    let inv = super::phases::invocation_label();
    let x_ty = quote!(::core::ops::Range<usize>);
    let uncovered = if covered.is_empty() { quote!(false) } else { quote!(#(#covered < #x.end)||*) };
    let invocation = |body: TokenStream| quote!(let #i = #lo + #j; #(#fresh)* #body);
    let loops = match split {
        // No scalar bound: one loop.
        None => {
            let body = invocation(gen(None));
            quote!(#inv: for #j in 0..#n { #body })
        }
        // `i < n` decided on each side of `n`, so that neither loop has a
        // store that depends on it.
        Some((_, bound)) => {
            let bound = plain().expr(bound);
            let split = internal("__split");
            let (below, above) = (invocation(gen(Some(true))), invocation(gen(Some(false))));
            quote! {
                let #split: usize = ::core::cmp::Ord::clamp(#bound, #lo, #x.end) - #lo;
                #inv: for #j in 0..#split { #below }
                #inv: for #j in #split..#n { #above }
            }
        }
    };
    Some(quote! {
        /// The kernel over a whole chunk of invocations (`global_id().x` in
        /// the range) as one loop over plain slices of its buffers, when
        /// every buffer covers the range; `false`, having run nothing, when
        /// one does not (the executor then runs [`cpu_body`] per invocation).
        #[inline(always)]
        #[allow(unused_variables, unused_mut, unused_parens, unused_labels, unreachable_code, clippy::all)]
        pub fn cpu_chunk #generics (#x: #x_ty, #(#params),*) -> bool {
            if #uncovered {
                return false;
            }
            let #lo = #x.start;
            let #n = #x.end - #x.start;
            #(#slices)*
            #loops
            true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cpu_chunk` for kernel `src`, as text, if the kernel qualifies.
    fn chunk(src: &str) -> Option<String> {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        let compiled = crate::compile("workgroup_size = 64".parse().unwrap(), &item, &[]).unwrap();
        chunk_fn(&compiled, &TokenStream::new()).map(|t| t.to_string())
    }

    #[test]
    fn own_element_kernels_get_the_loop() {
        let add = chunk(
            "fn k(a: &[f32], b: &[f32], out: &mut [f32]) { let i = global_id().x; if i < out.len() { out[i] = a[i] + b[i]; } }",
        )
        .unwrap();
        // Elements of the chunk's slices, the guard decided, no per-invocation
        // accessor or bounds-checked index left.
        assert!(add.contains("__slice2 [__j] = __value"), "{add}");
        assert!(add.contains("(__slice0 [__j] + __slice1 [__j])"), "{add}");
        assert!(add.contains("if true"), "{add}");
        assert!(!add.contains(".store") && !add.contains(".load") && !add.contains("a [i]"), "{add}");
        // `out.len()` is the whole buffer's, an early return the next invocation.
        let ret = chunk(
            "fn k(out: &mut [u32]) { let i = global_id().x; if i >= out.len() { return; } out[i] = out.len() as u32; }",
        )
        .unwrap();
        assert!(ret.contains("if false { continue '__inv ; }") && ret.contains("(__len0 as u32)"), "{ret}");
    }

    #[test]
    fn a_scalar_bound_splits_the_loop() {
        let below = chunk(
            "fn k(n: u32, a: &[f32], out: &mut [f32]) { let i = global_id().x; if i < n as usize { out[i] = a[i]; } if n as usize <= i { out[i] = 0.0; } }",
        )
        .unwrap();
        assert!(
            below.contains(
                "let __split : usize = :: core :: cmp :: Ord :: clamp ((n as usize) , __lo , __x . end) - __lo"
            ),
            "{below}"
        );
        // Below the bound, then from it: each comparison decided on each side.
        let (lower, upper) = below.split_once("for __j in __split .. __n").unwrap();
        assert!(lower.contains("if true { { let __value = __slice1 [__j]") && lower.contains("if false"), "{lower}");
        assert!(upper.contains("if false { { let __value = __slice1 [__j]") && upper.contains("if true"), "{upper}");
        // Two bounds: no split, the comparisons left as they are.
        let two = chunk(
            "fn k(n: u32, m: u32, out: &mut [f32]) { let i = global_id().x; if i < n as usize && i < m as usize { out[i] = 1.0; } }",
        )
        .unwrap();
        assert!(!two.contains("__split") && two.contains("(i < (n as usize))"), "{two}");
    }

    #[test]
    fn other_kernels_do_not() {
        for src in [
            "fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; if i + 1 < a.len() { out[i] = a[i + 1]; } }",
            "fn k(out: &mut [f32]) { let i = global_id().x; out[i] = thread_id().x as f32; }",
            "fn k(out: &mut [f32]) { let i = global_id().x; out[i / 2] = 1.0; }",
            "fn k(out: &mut [f32]) { let t = shared::<[f32; 64]>(); let i = global_id().x; t[i % 64] = 1.0; workgroup_barrier(); out[i] = t[0]; }",
        ] {
            assert!(chunk(src).is_none(), "{src}");
        }
    }
}
