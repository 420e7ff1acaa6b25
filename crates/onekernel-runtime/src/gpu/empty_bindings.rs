//! Launching over empty buffers on a GPU.
//!
//! WebGPU has no zero-sized bindings: a storage binding holds at least one
//! element, so `arrayLength` of any binding is at least 1. A kernel over an
//! empty buffer would then see `len() == 1` and, guarding on it, read a
//! stand-in element or write one, differently from the CPU executor, where
//! `len()` is 0. So a launch with empty buffers (on a non-empty grid; an
//! empty grid is skipped before any of this) binds each to a fresh 4-byte
//! stand-in and runs a variant of the kernel in which `arrayLength` of those
//! bindings is the constant 0. Every `len()` and `is_empty()` of the kernel
//! then answers as on the CPU, and a guarded kernel never touches the
//! stand-in; an unguarded access is out of bounds, and stays inside the
//! stand-in, as any out-of-bounds access stays inside its binding.
//!
//! The variant is made from the kernel's WGSL with naga (parse, replace the
//! `ArrayLength` expressions, validate, write WGSL) and cached per set of
//! empty bindings, like any pipeline.

use naga::{Expression, Handle, Literal, Statement};

/// The WGSL of `wgsl` with `arrayLength` of every storage buffer at
/// `@group(0) @binding(b)`, `b` in `empty`, replaced by `0u`.
pub(crate) fn zero_lengths(wgsl: &str, empty: &[u32]) -> Result<String, String> {
    let mut module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let globals: Vec<Handle<naga::GlobalVariable>> = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.binding.as_ref().is_some_and(|b| b.group == 0 && empty.contains(&b.binding)))
        .map(|(h, _)| h)
        .collect();
    let functions = module.functions.iter_mut().map(|(_, f)| f);
    for f in functions.chain(module.entry_points.iter_mut().map(|e| &mut e.function)) {
        let replaced = replace_lengths(f, &globals);
        if !replaced.is_empty() {
            split_emits(&mut f.body, &replaced);
        }
    }
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| format!("the kernel without its empty buffers does not validate: {}", e.emit_to_string(wgsl)))?;
    naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty()).map_err(|e| e.to_string())
}

/// Replaces each `ArrayLength` of one of `globals` (directly or through a
/// struct member) by the literal `0u`; returns the replaced handles.
fn replace_lengths(f: &mut naga::Function, globals: &[Handle<naga::GlobalVariable>]) -> Vec<Handle<Expression>> {
    let targets: Vec<Handle<Expression>> = f
        .expressions
        .iter()
        .filter_map(|(h, e)| match *e {
            Expression::ArrayLength(ptr) => root_global(&f.expressions, ptr).filter(|g| globals.contains(g)).map(|_| h),
            _ => None,
        })
        .collect();
    for &h in &targets {
        f.expressions[h] = Expression::Literal(Literal::U32(0));
    }
    targets
}

/// The global variable a pointer expression is based on, if any.
fn root_global(exprs: &naga::Arena<Expression>, mut e: Handle<Expression>) -> Option<Handle<naga::GlobalVariable>> {
    loop {
        match exprs[e] {
            Expression::GlobalVariable(g) => return Some(g),
            Expression::AccessIndex { base, .. } | Expression::Access { base, .. } => e = base,
            _ => return None,
        }
    }
}

/// Literals are not emitted (naga evaluates them up front): takes
/// `replaced` out of every `Emit` range, splitting ranges around them.
fn split_emits(block: &mut naga::Block, replaced: &[Handle<Expression>]) {
    let old = std::mem::take(block);
    for (statement, span) in old.span_into_iter() {
        match statement {
            Statement::Emit(range) => {
                let mut run: Vec<Handle<Expression>> = Vec::new();
                for h in range {
                    if replaced.contains(&h) {
                        push_emit(block, &mut run, span);
                    } else {
                        run.push(h);
                    }
                }
                push_emit(block, &mut run, span);
            }
            Statement::Block(mut b) => {
                split_emits(&mut b, replaced);
                block.push(Statement::Block(b), span);
            }
            Statement::If { condition, mut accept, mut reject } => {
                split_emits(&mut accept, replaced);
                split_emits(&mut reject, replaced);
                block.push(Statement::If { condition, accept, reject }, span);
            }
            Statement::Switch { selector, mut cases } => {
                for case in &mut cases {
                    split_emits(&mut case.body, replaced);
                }
                block.push(Statement::Switch { selector, cases }, span);
            }
            Statement::Loop { mut body, mut continuing, break_if } => {
                split_emits(&mut body, replaced);
                split_emits(&mut continuing, replaced);
                block.push(Statement::Loop { body, continuing, break_if }, span);
            }
            other => block.push(other, span),
        }
    }
}

/// Emits the consecutive handles of `run` (if any) and empties it.
fn push_emit(block: &mut naga::Block, run: &mut Vec<Handle<Expression>>, span: naga::Span) {
    if let (Some(&first), Some(&last)) = (run.first(), run.last()) {
        block.push(Statement::Emit(naga::Range::new_from_bounds(first, last)), span);
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    const WGSL: &str = "
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if i < arrayLength(&out) {
        out[i] = arrayLength(&a) + 10u * arrayLength(&out);
    }
}
";

    #[test]
    fn only_the_empty_bindings_lose_their_length() {
        let wgsl = zero_lengths(WGSL, &[0]).unwrap();
        assert!(!wgsl.contains("arrayLength((&a))") && !wgsl.contains("arrayLength(&a)"), "{wgsl}");
        assert!(wgsl.contains("arrayLength(&out)") || wgsl.contains("arrayLength((&out))"), "{wgsl}");
        let both = zero_lengths(WGSL, &[0, 1]).unwrap();
        assert!(!both.contains("arrayLength"), "{both}");
        // Nothing empty: the same module.
        let none = zero_lengths(WGSL, &[]).unwrap();
        assert_eq!(none.matches("arrayLength").count(), 3, "{none}");
    }
}
