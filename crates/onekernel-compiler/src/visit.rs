//! Walking the HIR: the traversals every pass shares (naga's `proc` module
//! plays this role for its IR).

use crate::hir::*;

/// Calls `visit` on every expression in `b`, outermost first, with its loop
/// depth (0 at `b`; +1 inside each nested loop body).
pub fn visit_block(f: &Function, b: &Block, depth: usize, visit: &mut dyn FnMut(ExprId, &ExprKind, usize)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) | Stmt::LetTuple { init: e, .. } => {
                visit_expr(f, *e, depth, visit)
            }
            Stmt::Let { init: None, .. } | Stmt::Shared(_) | Stmt::Const(_) => {}
        }
    }
    if let Some(t) = b.tail {
        visit_expr(f, t, depth, visit);
    }
}

/// Calls `visit` on `e` and everything inside it, with its loop depth.
pub fn visit_expr(f: &Function, e: ExprId, depth: usize, visit: &mut dyn FnMut(ExprId, &ExprKind, usize)) {
    let kind = &f.exprs[e].kind;
    visit(e, kind, depth);
    for c in operands(kind) {
        visit_expr(f, c, depth, visit);
    }
    match kind {
        ExprKind::If { then, else_, .. } => {
            visit_block(f, then, depth, visit);
            if let Some(e) = else_ {
                visit_expr(f, *e, depth, visit);
            }
        }
        ExprKind::Block(b) => visit_block(f, b, depth, visit),
        ExprKind::Loop { body, .. } => visit_block(f, body, depth + 1, visit),
        ExprKind::Match { arms, .. } => {
            for arm in arms {
                visit_expr(f, arm.body, depth, visit);
            }
        }
        _ => {}
    }
}

/// The subexpressions of `kind` evaluated before (or instead of) its
/// blocks: operands, indices, conditions, `match` scrutinees and loop
/// bounds, in evaluation order (an assignment's value before its place, as
/// in Rust). Blocks of `if`, loops, plain blocks and `match` arms are not
/// included.
pub fn operands(kind: &ExprKind) -> Vec<ExprId> {
    match kind {
        ExprKind::Error
        | ExprKind::Lit(_)
        | ExprKind::Const(_)
        | ExprKind::ConstRef(_)
        | ExprKind::Override(_)
        | ExprKind::Local(_)
        | ExprKind::Param(_)
        | ExprKind::Builtin { .. }
        | ExprKind::Len(_)
        | ExprKind::Barrier { .. }
        | ExprKind::Continue { .. }
        | ExprKind::Block(_) => vec![],
        ExprKind::Axis(x, _)
        | ExprKind::Swizzle(x, _)
        | ExprKind::Unary(_, x)
        | ExprKind::Cast(x, _)
        | ExprKind::Convert(x, _)
        | ExprKind::Typed(x, _)
        | ExprKind::Repeat(x, _)
        | ExprKind::Field(x, _)
        | ExprKind::NamedField(x, _)
        | ExprKind::ArrayLen(x) => vec![*x],
        ExprKind::Array(xs) | ExprKind::Tuple(xs) | ExprKind::Vector { args: xs, .. } => xs.clone(),
        ExprKind::StructLit { fields, .. } => fields.iter().map(|(_, x)| *x).collect(),
        ExprKind::Element { base, index } => vec![*base, *index],
        ExprKind::Index { index, .. } => vec![*index],
        ExprKind::SharedIndex { indices, .. } | ExprKind::UniformLoad { indices, .. } => indices.clone(),
        ExprKind::Subgroup { args, .. } | ExprKind::Tile { args, .. } => args.clone(),
        ExprKind::Atomic { target, args, .. } => {
            let mut v = target_indices(target);
            v.extend(args);
            v
        }
        ExprKind::Binary(_, l, r) | ExprKind::Logical(_, l, r) => vec![*l, *r],
        ExprKind::Call { args, .. } | ExprKind::Math(_, args) => args.clone(),
        ExprKind::If { cond, .. } => vec![*cond],
        ExprKind::Match { scrutinee, .. } => vec![*scrutinee],
        ExprKind::Loop { kind, .. } => match kind {
            LoopKind::Loop => vec![],
            LoopKind::While { cond } => vec![*cond],
            LoopKind::For { start, end, step, .. } => [Some(*start), Some(*end), *step].into_iter().flatten().collect(),
        },
        ExprKind::Break { value, .. } | ExprKind::Return(value) => value.iter().copied().collect(),
        ExprKind::Debug(call) => call.cond.into_iter().chain(call.args.iter().map(|(_, a)| *a)).collect(),
        ExprKind::Assign { place, value, .. } => {
            let mut v = vec![*value];
            v.extend(place_indices(place));
            v
        }
    }
}

/// The index expressions of an atomic target.
pub fn target_indices(t: &AtomicTarget) -> Vec<ExprId> {
    match t {
        AtomicTarget::Buffer { index, .. } => vec![*index],
        AtomicTarget::Shared { indices, .. } => indices.clone(),
    }
}

/// The index expressions of a place.
pub fn place_indices(p: &Place) -> Vec<ExprId> {
    match p {
        Place::Index { index, .. } => vec![*index],
        Place::Shared { indices, .. } => indices.clone(),
        Place::Project { steps, .. } => steps
            .iter()
            .filter_map(|s| match s {
                Step::Index(i) => Some(*i),
                Step::Field(_) | Step::NamedField(_) => None,
            })
            .collect(),
        Place::Local(_) | Place::Param(_) => vec![],
    }
}

/// True when control never reaches the end of `b`.
pub fn block_diverges(f: &Function, b: &Block) -> bool {
    b.stmts.iter().any(|s| match s {
        Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) | Stmt::LetTuple { init: e, .. } => expr_diverges(f, *e),
        Stmt::Let { init: None, .. } | Stmt::Shared(_) | Stmt::Const(_) => false,
    }) || b.tail.is_some_and(|t| expr_diverges(f, t))
}

/// True when evaluating `e` never finishes normally.
pub fn expr_diverges(f: &Function, e: ExprId) -> bool {
    match &f.exprs[e].kind {
        ExprKind::Return(_) | ExprKind::Break { .. } | ExprKind::Continue { .. } => true,
        ExprKind::Debug(call) => call.kind.panics() && call.kind.leading_args() == 0 && call.cond.is_none(),
        ExprKind::Block(b) => block_diverges(f, b),
        ExprKind::If { cond, then, else_, .. } => {
            expr_diverges(f, *cond) || (block_diverges(f, then) && else_.is_some_and(|e| expr_diverges(f, e)))
        }
        ExprKind::Match { scrutinee, arms } => {
            expr_diverges(f, *scrutinee) || arms.iter().all(|a| expr_diverges(f, a.body))
        }
        ExprKind::Loop { kind: LoopKind::Loop, body, label } => !loop_has_break(f, body, label.as_ref()),
        _ => false,
    }
}

/// True when `body` (of a loop labelled `label`) has a `break` that leaves
/// that loop.
pub fn loop_has_break(f: &Function, body: &Block, label: Option<&Label>) -> bool {
    let mut found = false;
    visit_block(f, body, 0, &mut |_, kind, depth| {
        if let ExprKind::Break { label: l, .. } = kind {
            match (l, label) {
                (None, _) if depth == 0 => found = true,
                (Some(l), Some(own)) if l.name == own.name => found = true,
                _ => {}
            }
        }
    });
    found
}

/// Labels targeted by `break 'l` / `continue 'l` inside `body`, other than
/// `own`.
pub fn labelled_jumps(f: &Function, body: &Block, own: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    visit_block(f, body, 0, &mut |_, k, _| {
        let l = match k {
            ExprKind::Break { label: Some(l), .. } | ExprKind::Continue { label: Some(l) } => &l.name,
            _ => return,
        };
        if Some(l.as_str()) != own && !out.contains(l) {
            out.push(l.clone());
        }
    });
    out
}

/// True when some loop nested in `body` jumps to `label`.
pub fn has_labelled_jump(f: &Function, body: &Block, label: &str) -> bool {
    let mut found = false;
    visit_block(f, body, 0, &mut |_, k, depth| {
        if let ExprKind::Break { label: Some(l), .. } | ExprKind::Continue { label: Some(l) } = k {
            found |= l.name == label && depth > 0;
        }
    });
    found
}

/// The first `break` or `continue` in `body` that leaves the loop whose
/// body it is (unlabelled at the loop's own level, or naming `label`).
pub fn jump_out_of_loop(f: &Function, body: &Block, label: Option<&str>) -> Option<proc_macro2::Span> {
    let mut found = None;
    visit_block(f, body, 0, &mut |id, k, depth| {
        let target = match k {
            ExprKind::Break { label, .. } | ExprKind::Continue { label } => label.as_ref(),
            _ => return,
        };
        let ours = match target {
            None => depth == 0,
            Some(l) => Some(l.name.as_str()) == label,
        };
        if ours && found.is_none() {
            found = Some(f.exprs[id].span);
        }
    });
    found
}

/// True when `body` indexes a local array (`acc[..]`, `acc[..] = ..`)
/// with an expression that reads `var`.
pub fn indexes_array_with(f: &Function, body: &Block, var: LocalId) -> bool {
    let reads = |e: ExprId| {
        let mut r = matches!(f.exprs[e].kind, ExprKind::Local(l) if l == var);
        visit_expr(f, e, 0, &mut |_, k, _| r |= matches!(k, ExprKind::Local(l) if *l == var));
        r
    };
    let mut found = false;
    visit_block(f, body, 0, &mut |_, k, _| match k {
        ExprKind::Element { index, .. } => found |= reads(*index),
        ExprKind::Assign { place: Place::Project { steps, .. }, .. } => {
            found |= steps.iter().any(|s| matches!(s, Step::Index(i) if reads(*i)))
        }
        _ => {}
    });
    found
}

/// The builtin values a function uses, in order of first use.
pub fn used_builtins(f: &Function) -> Vec<Builtin> {
    let mut used = Vec::new();
    // A debug record carries the invocation's global id.
    if f.debug_sites > 0 {
        used.push(Builtin::GlobalId);
    }
    visit_block(f, &f.body, 0, &mut |_, k, _| {
        if let ExprKind::Builtin { builtin, .. } = k {
            if !used.contains(builtin) {
                used.push(*builtin);
            }
        }
    });
    used
}

/// Whether some expression of `f`'s body is of a kind `pred` accepts.
pub fn any_expr(f: &Function, pred: impl Fn(&ExprKind) -> bool) -> bool {
    let mut found = false;
    visit_block(f, &f.body, 0, &mut |_, k, _| found |= pred(k));
    found
}

/// Whether `f` uses any subgroup builtin, a collective or a value (the
/// kernel then needs the device's SUBGROUP feature).
pub fn uses_subgroups(f: &Function) -> bool {
    any_expr(f, |k| match k {
        ExprKind::Subgroup { .. } => true,
        ExprKind::Builtin { builtin, .. } => builtin.needs_subgroups(),
        _ => false,
    })
}

/// Whether `f` uses matrix tiles (the kernel then binds its launch
/// parameters as storage: see [`onekernel_abi::ParamsBinding`]).
pub fn uses_tiles(f: &Function) -> bool {
    any_expr(f, |k| matches!(k, ExprKind::Tile { .. }))
}

/// The tile types `f` uses (each once, in first-use order): what the
/// kernel asks of the device's cooperative matrices.
pub fn tile_types(f: &Function, types: &crate::infer::Types) -> Vec<crate::types::TileTy> {
    let mut found = Vec::new();
    visit_block(f, &f.body, 0, &mut |id, k, _| {
        if let (ExprKind::Tile { .. }, crate::types::Ty::Tile(t)) = (k, types.exprs[id]) {
            if !found.contains(&t) {
                found.push(t);
            }
        }
    });
    found
}
