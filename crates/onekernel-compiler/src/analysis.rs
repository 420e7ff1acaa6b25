//! Facts about a kernel that the runtime can use.

use crate::hir::{Builtin, ExprId, ExprKind, Function, LocalId, ParamId, ParamKind, Place, Program, Stmt};
use crate::infer::Types;
use crate::types::Ty;
use crate::uniformity::UniformityInfo;
use crate::visit::visit_block;
use onekernel_abi::CpuPlan;
use std::collections::HashMap;

/// How the CPU executor runs the kernel: the one place that decides it.
/// The macro emits the bodies the plan names (`expand/launch.rs`), and the
/// runtime picks the executor from it (`CpuDevice::launch`).
///
/// * barriers or shared memory: the invocations of a workgroup cooperate
///   (`Cooperative`), in phases when the split handles the kernel
///   (`split.rs`);
/// * every output access at the invocation's own element
///   ([`writes_own_element`]): `OwnElement`, with the chunk loop when
///   [`chunk_slices`] holds;
/// * otherwise `Independent`.
pub fn cpu_plan(program: &Program, types: &Types, uniformity: &UniformityInfo) -> CpuPlan {
    let k = &program.kernel;
    // A kernel that prints or asserts runs per invocation (its body needs
    // the invocation, for the lines' prefix and the panic's report).
    let debugs = crate::debug::program_has_sites(program);
    if k.barriers > 0 || !k.shared.is_empty() {
        CpuPlan::Cooperative { phased: !debugs && crate::split::splits(k, types, &program.types, uniformity).is_ok() }
    } else if writes_own_element(k) {
        CpuPlan::OwnElement { chunk_loop: !debugs && chunk_slices(k) }
    } else {
        CpuPlan::Independent
    }
}

/// True when every element access to every `&mut [T]` parameter indexes
/// with `global_id().x` (directly, through `as usize`, or through an
/// immutable `let` bound to it). On a 1-D grid each invocation then touches
/// only its own element, which lets the CPU executor hand each chunk of
/// invocations its own window of the outputs.
///
/// Being wrong here is never unsound (the windows check their bounds), but
/// it would make a correct kernel panic on the CPU, so the rule is strict.
pub fn writes_own_element(f: &Function) -> bool {
    let own = OwnIndex::new(f);
    let is_output = |p: ParamId| matches!(f.params[p].kind, ParamKind::BufferMut { .. });
    let mut ok = true;
    visit_block(f, &f.body, 0, &mut |_, k, _| match k {
        ExprKind::Index { buffer, index } if is_output(*buffer) => ok &= own.is_own(*index),
        ExprKind::Assign { place: Place::Index { buffer, index }, .. } if is_output(*buffer) => {
            ok &= own.is_own(*index)
        }
        _ => {}
    });
    ok
}

/// True when an `OwnElement` kernel can also run a whole chunk of
/// invocations as one loop over plain slices (the CPU body's `cpu_chunk`,
/// `expand/cpu_body.rs`): besides its outputs, every element read of its
/// `&[T]` inputs indexes with `global_id().x` too, so for a chunk whose
/// invocations are `lo..hi` and whose buffers all hold at least `hi`
/// elements, each `a[i]` is element `i - lo` of `&a[lo..hi]` and no access
/// can be out of bounds. Also required, so that the loop computes what the
/// invocations would:
///
/// * no per-invocation builtin but `global_id()` (on a 1-D grid it is
///   `(i, 0, 0)`; `thread_id()` and the others would need divisions);
/// * no subgroup builtin, tile or other access to a buffer than by element
///   and `len()` (an output is a plain `&mut [T]` slice in the loop,
///   borrowed for the whole chunk, so it cannot be passed whole).
///
/// Like [`writes_own_element`], being wrong is never unsound (the slices
/// are bounds-checked), and the loop runs only for chunks that every
/// buffer covers: a shorter buffer sends the chunk through the
/// per-invocation body, which reports the out-of-bounds access as before.
pub fn chunk_slices(f: &Function) -> bool {
    if !writes_own_element(f) {
        return false;
    }
    let own = OwnIndex::new(f);
    let is_buffer = |p: ParamId| matches!(f.params[p].kind, ParamKind::Buffer { .. } | ParamKind::BufferMut { .. });
    let mut ok = true;
    visit_block(f, &f.body, 0, &mut |_, k, _| match k {
        ExprKind::Index { buffer, index } if is_buffer(*buffer) => ok &= own.is_own(*index),
        ExprKind::Builtin { builtin, .. } => ok &= *builtin == Builtin::GlobalId,
        ExprKind::Param(p) => ok &= !matches!(f.params[*p].kind, ParamKind::BufferMut { .. }),
        ExprKind::Subgroup { .. }
        | ExprKind::Tile { .. }
        | ExprKind::Barrier { .. }
        | ExprKind::UniformLoad { .. }
        | ExprKind::SharedIndex { .. } => ok = false,
        _ => {}
    });
    ok
}

/// Which expressions are the invocation's `global_id().x`: the builtin's
/// axis itself, a cast of it to `usize`, or an immutable local bound to
/// one of those.
pub struct OwnIndex<'f> {
    f: &'f Function,
    /// The initialiser of each immutable local.
    inits: HashMap<LocalId, ExprId>,
}

impl<'f> OwnIndex<'f> {
    /// The facts of kernel `f`.
    pub fn new(f: &'f Function) -> OwnIndex<'f> {
        let mut inits = HashMap::new();
        collect_inits(f, &f.body, &mut inits);
        OwnIndex { f, inits }
    }

    /// True when `e` evaluates to the invocation's `global_id().x`, with no
    /// side effect.
    pub fn is_own(&self, e: ExprId) -> bool {
        let f = self.f;
        match &f.exprs[e].kind {
            ExprKind::Axis(base, 0) => {
                matches!(f.exprs[*base].kind, ExprKind::Builtin { builtin: Builtin::GlobalId, .. })
            }
            ExprKind::Cast(x, Ty::Usize) | ExprKind::Typed(x, _) => self.is_own(*x),
            ExprKind::Local(l) => !f.locals[*l].mutable && self.inits.get(l).is_some_and(|i| self.is_own(*i)),
            _ => false,
        }
    }
}

fn collect_inits(f: &Function, b: &crate::hir::Block, inits: &mut HashMap<LocalId, ExprId>) {
    for s in &b.stmts {
        if let Stmt::Let { local, init: Some(init) } = s {
            inits.insert(*local, *init);
        }
    }
    // Nested blocks: walk every block-bearing expression.
    visit_block(f, b, 0, &mut |_, k, _| {
        let blocks: Vec<&crate::hir::Block> = match k {
            ExprKind::Block(b) => vec![b],
            ExprKind::If { then, .. } => vec![then],
            ExprKind::Loop { body, .. } => vec![body],
            _ => vec![],
        };
        for b in blocks {
            for s in &b.stmts {
                if let Stmt::Let { local, init: Some(init) } = s {
                    inits.insert(*local, *init);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_function, FnRole};

    fn check(src: &str) -> bool {
        writes_own_element(
            &parse_function(&syn::parse_str(src).unwrap(), FnRole::Kernel, &mut Default::default()).unwrap(),
        )
    }

    #[test]
    fn recognises_own_element_writes() {
        assert!(check("fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; if i < out.len() { out[i] = a[i + 1] + out[i]; } }"));
        assert!(check("fn k(out: &mut [u32]) { out[global_id().x] += 1; }"));
        assert!(check("fn k(out: &mut [u32]) { { let j = global_id().x; out[j] = 1; } }"));
        assert!(!check("fn k(out: &mut [u32]) { let i = global_id().x; out[i + 1] = 1; }"));
        assert!(!check("fn k(out: &mut [u32]) { let mut i = global_id().x; i += 1; out[i] = 1; }"));
        assert!(!check("fn k(out: &mut [u32]) { let i = global_id().y; out[i] = 1; }"));
        assert!(!check("fn k(out: &mut [u32]) { let i = global_id().x; let i = i * 2; out[i] = 1; }"));
        assert!(!check("fn k(out: &mut [u32]) { for i in 0..4 { out[i] = 1; } }"));
    }

    fn slices(src: &str) -> bool {
        chunk_slices(&parse_function(&syn::parse_str(src).unwrap(), FnRole::Kernel, &mut Default::default()).unwrap())
    }

    #[test]
    fn recognises_chunk_slice_kernels() {
        let add = "fn k(a: &[f32], b: &[f32], out: &mut [f32]) { let i = global_id().x; if i < out.len() { out[i] = a[i] + b[i]; } }";
        assert!(slices(add));
        assert!(slices("fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; if i >= out.len() { return; } out[i] += a[i] * 2.0; }"));
        assert!(slices(
            "fn k(s: f32, out: &mut [f32]) { out[global_id().x] = s * global_id().x as f32 + global_id().y as f32; }"
        ));
        assert!(slices("fn k(a: &[u32], out: &mut [u32], hits: &[AtomicU32]) { let i = global_id().x; out[i] = a[i]; hits[a[i] as usize].fetch_add(1, Ordering::Relaxed); }"));
        // An input read elsewhere than at the invocation's own element.
        assert!(!slices(
            "fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; if i + 1 < a.len() { out[i] = a[i + 1]; } }"
        ));
        assert!(!slices("fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; out[i] = a[0]; }"));
        // A builtin the loop does not have.
        assert!(!slices("fn k(out: &mut [u32]) { let i = global_id().x; out[i] = thread_id().x as u32; }"));
        assert!(!slices("fn k(out: &mut [u32]) { let i = global_id().x; out[i] = grid_dim().x as u32; }"));
        // Outputs that do not write their own element only.
        assert!(!slices("fn k(out: &mut [u32]) { let i = global_id().x; out[i / 2] = 1; }"));
    }
}
