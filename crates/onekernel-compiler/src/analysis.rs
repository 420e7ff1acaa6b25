//! Facts about a kernel that the runtime can use.

use crate::hir::{Builtin, ExprId, ExprKind, Function, LocalId, ParamId, ParamKind, Place, Stmt};
use crate::types::Ty;
use crate::visit::visit_block;
use std::collections::HashMap;

/// True when every element access to every `&mut [T]` parameter indexes
/// with `global_id().x` (directly, through `as usize`, or through an
/// immutable `let` bound to it). On a 1-D grid each invocation then touches
/// only its own element, which lets the CPU executor hand each chunk of
/// invocations its own window of the outputs.
///
/// Being wrong here is never unsound (the windows check their bounds), but
/// it would make a correct kernel panic on the CPU, so the rule is strict.
pub fn writes_own_element(f: &Function) -> bool {
    // The initialiser of each immutable local.
    let mut inits: HashMap<LocalId, ExprId> = HashMap::new();
    collect_inits(f, &f.body, &mut inits);
    let own = |e: ExprId| is_own_index(f, &inits, e);
    let is_output = |p: ParamId| matches!(f.params[p].kind, ParamKind::BufferMut { .. });
    let mut ok = true;
    visit_block(f, &f.body, 0, &mut |_, k, _| match k {
        ExprKind::Index { buffer, index } if is_output(*buffer) => ok &= own(*index),
        ExprKind::Assign { place: Place::Index { buffer, index }, .. } if is_output(*buffer) => ok &= own(*index),
        _ => {}
    });
    ok
}

fn is_own_index(f: &Function, inits: &HashMap<LocalId, ExprId>, e: ExprId) -> bool {
    match &f.exprs[e].kind {
        ExprKind::Axis(base, 0) => matches!(f.exprs[*base].kind, ExprKind::Builtin { builtin: Builtin::GlobalId, .. }),
        ExprKind::Cast(x, Ty::Usize) | ExprKind::Typed(x, _) => is_own_index(f, inits, *x),
        ExprKind::Local(l) => !f.locals[*l].mutable && inits.get(l).is_some_and(|i| is_own_index(f, inits, *i)),
        _ => false,
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
}
