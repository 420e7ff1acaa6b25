//! The one specialisation route: a kernel's module with its `override`s
//! given values, as the GPU runs it. The runtime (at the first launch of a
//! value tuple) and the tools (`onekernel explain --const N=128`, the
//! playground) both call [`specialised_wgsl`]; the compiler runs the same
//! passes ([`finish_module`]) on every module it lowers. So a module is
//! finished the same way whether its arrays' lengths are literals (the
//! compiler) or parameters (a specialisation):
//!
//! 1. each override becomes a `const` of its value
//!    ([`crate::wgsl_with_constants`]);
//! 2. each `#[unroll]` loop over parameters is unrolled
//!    ([`crate::unroll_marked_loops`]);
//! 3. the module is parsed and its local arrays indexed only by constants
//!    become scalars ([`split_arrays`]), and in a module with matrix tiles
//!    its shared arrays are padded ([`pad_shared_for_tiles`]);
//! 4. it is validated: a specialisation that does not validate is an
//!    `Err` (the runtime's `LaunchError::InvalidKernel`, naming the
//!    kernel and the values), never a silently slower module.
//!
//! # Scalar replacement of local arrays
//!
//! A local array whose every access
//! has a constant index becomes one variable per element (`next_a[2u]`
//! becomes `next_a_2`).
//!
//! Why: an unrolled loop (`#[unroll]`, or a small constant loop that
//! indexes an array, see `parse/expr.rs`) leaves only constant indices,
//! but the array is still one `var next_a: array<vec4<f16>, 4>` in the
//! shader, and drivers do not always promote such an array to registers:
//! on an H200, splitting the register prefetch of `examples/gemm_f16.rs`
//! by hand took the kernel from 235 to 247 TFLOP/s. Separate variables are
//! registers on any driver, and they read better in the WGSL.
//!
//! It is a pass over a finished naga module ([`split_arrays`]), run on
//! every variant when the compiler lowers a kernel (the lowering folds an
//! unrolled loop's variable into the index, and the checked variants leave
//! constant in-range indices unchecked) and again on each specialisation
//! ([`specialised_wgsl`]), where the arrays a parameter sizes
//! (`[0.0f32; TM]`) have a length and the loops over them are unrolled.
//!
//! A variable of array type is split when naga's own analysis counts no
//! use of it other than these (every other use, or one this pass does not
//! know, keeps the array as it is):
//! - the base of an `AccessIndex`, or of an `Access` whose index is a
//!   literal, in range: the expression becomes the element's
//!   `LocalVariable` in place (and leaves its `Emit` range, since naga
//!   forbids emitting a variable);
//! - the pointer of a whole-array `Store` (`let mut a = [0.0; 4]`, an
//!   assignment `a = b`): one `Store` per element, of the `Compose`'s
//!   components, of `ZeroValue`s, or of `AccessIndex`es of the value.
//!
//! So an array read whole (`let y = x;`, passed to a helper, returned) or
//! indexed by a value known only at run time stays an array. Arrays of
//! arrays split level by level (`m[1u][0u]` becomes `m_1_0`), one round
//! per level.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use naga::valid::{Capabilities, FunctionInfo, ValidationFlags, Validator};
use naga::{
    AddressSpace, Arena, ArraySize, Block, Expression, Function, Handle, Literal, LocalVariable, Statement, Type,
    TypeInner,
};
use std::collections::{HashMap, HashSet};

/// Arrays longer than this stay arrays: hundreds of variables would make
/// the shader harder to read for nothing a driver needs.
const MAX_ELEMENTS: u32 = 64;

/// Rounds of splitting: one per level of nested arrays.
const MAX_ROUNDS: usize = 4;

/// The module the GPU runs for a specialisation of a kernel: `wgsl` (one
/// of its modules, with `override`s) with each override of `params` given
/// its value in `values`, its `#[unroll]` loops over parameters unrolled,
/// its local arrays split and its shared arrays padded (the steps of the
/// module docs), validated. A module none of whose arrays splits or pads
/// comes back as the text of steps 1 and 2 (line for line the module the
/// unspecialised view shows, each parameter's value at the top); one that
/// changes is written out again by naga. Err says why the specialisation
/// is not a valid module (a value naga refuses, such as an array of zero
/// elements).
pub fn specialised_wgsl(wgsl: &str, params: &[crate::ConstParam], values: &[f64]) -> Result<String, String> {
    let text = crate::unroll_marked_loops(&crate::wgsl_with_constants(wgsl, params, values)?);
    let mut module = naga::front::wgsl::parse_str(&text).map_err(|e| e.emit_to_string(&text))?;
    let changed = finish_module(&mut module, &[]);
    let info = Validator::new(ValidationFlags::all(), Capabilities::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string(&text))?;
    if !changed {
        return Ok(text);
    }
    naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| format!("writing the specialised module: {e}"))
}

/// The passes every finished module gets, the compiler's (whose arrays'
/// lengths are literals) and each specialisation's: [`split_arrays`], then
/// [`pad_shared_for_tiles`]. `pending`: lengths that stand for parameters
/// (the compiler's placeholders for lengths the launch sets), whose arrays
/// are left as they are here and padded in each specialisation. Whether
/// either pass changed the module.
pub fn finish_module(module: &mut naga::Module, pending: &[u32]) -> bool {
    let split = split_arrays(module);
    pad_shared_for_tiles(module, pending) || split
}

/// Cooperative-matrix loads and stores need their pointer and stride
/// aligned to 16 bytes (Vulkan's VUID-RuntimeSpirv-OpCooperativeMatrixLoadKHR-08986:
/// the lesser of 16 bytes and a row's natural alignment, and every tile row
/// is at least 16 bytes). Workgroup variables have no explicit layout in
/// SPIR-V: the driver places them, the NVIDIA driver one after the other in
/// declaration order, each at its type's alignment, so a shared array
/// whose size is not a multiple of 16 bytes leaves the next one at an
/// address no tile load may start at (on the H200 such loads read zeros,
/// silently). In a module with tiles, each shared array is therefore
/// lengthened to a multiple of 16 bytes: every array then starts 16-byte
/// aligned. The padding is never indexed (the kernel's indices are checked
/// against the length it wrote, on the CPU and in checked GPU launches);
/// offsets and strides of tile loads are the kernel's to keep at multiples
/// of 16 bytes (docs/semantics.md). Arrays a parameter sizes (a length in
/// `pending`, at any level) are padded in each specialisation, once their
/// length is known: padded at compile time, the placeholder would be lost
/// (a 128 KiB shared array in place of `gemm_f16_t`'s 20 KiB). Whether it
/// padded any.
pub fn pad_shared_for_tiles(module: &mut naga::Module, pending: &[u32]) -> bool {
    if !module.types.iter().any(|(_, t)| matches!(t.inner, TypeInner::CooperativeMatrix { .. })) {
        return false;
    }
    let padded: Vec<_> = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == AddressSpace::WorkGroup && !sized_by(&module.types, g.ty, pending))
        .filter_map(|(h, g)| match module.types[g.ty].inner {
            TypeInner::Array { base, size: ArraySize::Constant(n), stride }
                if !(n.get() * stride).is_multiple_of(16) =>
            {
                let len = (n.get()..).find(|m| (m * stride).is_multiple_of(16)).expect("16 elements at most");
                Some((h, base, len, stride))
            }
            _ => None,
        })
        .collect();
    let any = !padded.is_empty();
    for (h, base, len, stride) in padded {
        let size = ArraySize::Constant(core::num::NonZeroU32::new(len).expect("longer than before"));
        let ty = module
            .types
            .insert(Type { name: None, inner: TypeInner::Array { base, size, stride } }, naga::Span::UNDEFINED);
        module.global_variables[h].ty = ty;
    }
    any
}

/// Whether a length of `pending` sizes `ty` (an array of them, at any
/// level).
fn sized_by(types: &naga::UniqueArena<Type>, ty: Handle<Type>, pending: &[u32]) -> bool {
    match types[ty].inner {
        TypeInner::Array { base, size, .. } => {
            matches!(size, ArraySize::Constant(n) if pending.contains(&n.get())) || sized_by(types, base, pending)
        }
        _ => false,
    }
}

/// Splits every eligible local array of every function of `module`;
/// whether it split any. A module that does not validate is left as it
/// is, for the validation that follows to report.
pub fn split_arrays(module: &mut naga::Module) -> bool {
    // Most kernels have no local array: no need to validate for them.
    let has_array = |f: &Function| {
        f.local_variables.iter().any(|(_, v)| matches!(module.types[v.ty].inner, TypeInner::Array { .. }))
    };
    if !module.functions.iter().any(|(_, f)| has_array(f))
        && !module.entry_points.iter().any(|e| has_array(&e.function))
    {
        return false;
    }
    let mut any = false;
    for _ in 0..MAX_ROUNDS {
        let Ok(info) = Validator::new(ValidationFlags::all(), Capabilities::all()).validate(module) else {
            return any;
        };
        let naga::Module { types, functions, entry_points, .. } = module;
        let mut changed = false;
        for (handle, function) in functions.iter_mut() {
            changed |= split_function(function, &info[handle], types);
        }
        for (i, entry) in entry_points.iter_mut().enumerate() {
            changed |= split_function(&mut entry.function, info.get_entry_point(i), types);
        }
        if !changed {
            return any;
        }
        any = true;
    }
    any
}

/// A local array that may be split.
struct Candidate {
    elem: Handle<naga::Type>,
    /// The element's zero as a literal, for a scalar element (`0f` reads
    /// better than `f32()`).
    zero: Option<Literal>,
    len: u32,
    /// Still eligible.
    ok: bool,
}

/// One round on one function; whether anything was split.
fn split_function(func: &mut Function, info: &FunctionInfo, types: &naga::UniqueArena<naga::Type>) -> bool {
    let mut candidates: HashMap<Handle<LocalVariable>, Candidate> = func
        .local_variables
        .iter()
        .filter(|(_, var)| var.init.is_none())
        .filter_map(|(h, var)| match types[var.ty].inner {
            TypeInner::Array { base, size: ArraySize::Constant(len), .. } if len.get() <= MAX_ELEMENTS => {
                let zero = match types[base].inner {
                    TypeInner::Scalar(s) => Literal::zero(s),
                    _ => None,
                };
                Some((h, Candidate { elem: base, zero, len: len.get(), ok: true }))
            }
            _ => None,
        })
        .collect();
    if candidates.is_empty() {
        return false;
    }

    // The `LocalVariable` expressions naming a candidate, with the uses of
    // each this pass accepts; and the element pointers to replace.
    let mut pointers: HashMap<Handle<Expression>, (Handle<LocalVariable>, usize)> = HashMap::new();
    let mut elements: Vec<(Handle<Expression>, Handle<LocalVariable>, u32)> = Vec::new();
    for (h, e) in func.expressions.iter() {
        let (base, index) = match *e {
            Expression::LocalVariable(v) if candidates.contains_key(&v) => {
                pointers.insert(h, (v, 0));
                continue;
            }
            Expression::AccessIndex { base, index } => (base, Some(index)),
            Expression::Access { base, index } => (base, constant_index(&func.expressions[index])),
            _ => continue,
        };
        let Some((var, uses)) = pointers.get_mut(&base) else { continue };
        let c = candidates.get_mut(var).expect("pointers name candidates");
        match index {
            Some(i) if i < c.len => {
                *uses += 1;
                elements.push((h, *var, i));
            }
            _ => c.ok = false,
        }
    }
    let mut stores = Vec::new();
    whole_stores(&func.body, &pointers, &mut stores);
    for &(pointer, _) in &stores {
        pointers.get_mut(&pointer).expect("whole_stores keeps candidate pointers").1 += 1;
    }
    // Any use not counted above (a whole load, a dynamic index, ...)
    // keeps the array.
    for (&pointer, &(var, uses)) in &pointers {
        if info[pointer].ref_count != uses {
            candidates.get_mut(&var).expect("pointers name candidates").ok = false;
        }
    }
    candidates.retain(|_, c| c.ok);
    if candidates.is_empty() {
        return false;
    }

    // The variables, each split one in its place: `next_a_0`, `next_a_1`,
    // ... (the WGSL writer adds `_` to a name that ends in a digit).
    let mut vars = Arena::new();
    let mut kept = HashMap::new();
    let mut parts: HashMap<Handle<LocalVariable>, Vec<Handle<LocalVariable>>> = HashMap::new();
    for (h, var) in func.local_variables.iter() {
        let span = func.local_variables.get_span(h);
        match candidates.get(&h) {
            Some(c) => {
                let name = var.name.as_deref().unwrap_or("array");
                let new = (0..c.len)
                    .map(|i| {
                        vars.append(LocalVariable { name: Some(format!("{name}_{i}")), ty: c.elem, init: None }, span)
                    })
                    .collect();
                parts.insert(h, new);
            }
            None => {
                kept.insert(h, vars.append(var.clone(), span));
            }
        }
    }
    func.local_variables = vars;

    // Expressions: every variable renumbered, every element pointer of a
    // split array its variable. A split array's own pointers are unused
    // now; they point at its first element.
    let mut removed: HashSet<Handle<Expression>> = HashSet::new();
    for (_, e) in func.expressions.iter_mut() {
        if let Expression::LocalVariable(v) = e {
            *v = kept.get(v).copied().unwrap_or_else(|| parts[v][0]);
        }
    }
    for &(h, var, i) in &elements {
        if let Some(p) = parts.get(&var) {
            func.expressions[h] = Expression::LocalVariable(p[i as usize]);
            func.named_expressions.shift_remove(&h);
            removed.insert(h);
        }
    }
    // A `Compose` that only initialised a split array is dead: its
    // components are stored directly.
    let mut dead = Vec::new();
    let split_stores: Vec<_> = stores.into_iter().filter(|(p, _)| candidates.contains_key(&pointers[p].0)).collect();
    for &(pointer, value) in &split_stores {
        let len = candidates[&pointers[&pointer].0].len as usize;
        let whole =
            matches!(&func.expressions[value], Expression::Compose { components, .. } if components.len() == len);
        if whole && info[value].ref_count == 1 {
            func.named_expressions.shift_remove(&value);
            removed.insert(value);
            dead.push(value);
        }
    }

    let mut body = std::mem::take(&mut func.body);
    let ctx = Rewrite { pointers: &pointers, parts: &parts, candidates: &candidates, removed: &removed };
    ctx.block(&mut body, &mut func.expressions);
    func.body = body;
    // The dead `Compose`s, now that their stores took their components:
    // without operands, so that the next round's analysis does not count
    // the components as used twice (the rows of an array of arrays split
    // in that round).
    for value in dead {
        if let Expression::Compose { ty, .. } = func.expressions[value] {
            func.expressions[value] = Expression::ZeroValue(ty);
        }
    }
    true
}

/// The value of a literal index.
fn constant_index(e: &Expression) -> Option<u32> {
    match *e {
        Expression::Literal(Literal::U32(i)) => Some(i),
        Expression::Literal(Literal::I32(i)) => u32::try_from(i).ok(),
        _ => None,
    }
}

/// The whole-array stores into candidates: (pointer, value).
fn whole_stores(
    block: &Block,
    pointers: &HashMap<Handle<Expression>, (Handle<LocalVariable>, usize)>,
    out: &mut Vec<(Handle<Expression>, Handle<Expression>)>,
) {
    for s in block.iter() {
        match s {
            Statement::Store { pointer, value } if pointers.contains_key(pointer) => out.push((*pointer, *value)),
            Statement::Block(b) => whole_stores(b, pointers, out),
            Statement::If { accept, reject, .. } => {
                whole_stores(accept, pointers, out);
                whole_stores(reject, pointers, out);
            }
            Statement::Switch { cases, .. } => cases.iter().for_each(|c| whole_stores(&c.body, pointers, out)),
            Statement::Loop { body, continuing, .. } => {
                whole_stores(body, pointers, out);
                whole_stores(continuing, pointers, out);
            }
            _ => {}
        }
    }
}

/// The statement rewrite of one round.
struct Rewrite<'a> {
    pointers: &'a HashMap<Handle<Expression>, (Handle<LocalVariable>, usize)>,
    parts: &'a HashMap<Handle<LocalVariable>, Vec<Handle<LocalVariable>>>,
    candidates: &'a HashMap<Handle<LocalVariable>, Candidate>,
    /// Expressions that left every `Emit` range.
    removed: &'a HashSet<Handle<Expression>>,
}

impl Rewrite<'_> {
    fn block(&self, block: &mut Block, exprs: &mut Arena<Expression>) {
        let old = std::mem::take(block);
        for (s, span) in old.span_into_iter() {
            match s {
                Statement::Emit(range) => {
                    // The range without the removed expressions, as
                    // consecutive runs.
                    let mut run: Option<std::ops::Range<u32>> = None;
                    for h in range {
                        let i = h.index() as u32;
                        if self.removed.contains(&h) {
                            if let Some(r) = run.take() {
                                block.push(Statement::Emit(naga::Range::from_index_range(r, exprs)), span);
                            }
                        } else {
                            run = Some(run.map_or(i..i + 1, |r| r.start..i + 1));
                        }
                    }
                    if let Some(r) = run {
                        block.push(Statement::Emit(naga::Range::from_index_range(r, exprs)), span);
                    }
                }
                Statement::Store { pointer, value } if self.splits(pointer) => {
                    self.store(block, exprs, pointer, value, span);
                }
                Statement::Block(mut b) => {
                    self.block(&mut b, exprs);
                    block.push(Statement::Block(b), span);
                }
                Statement::If { condition, mut accept, mut reject } => {
                    self.block(&mut accept, exprs);
                    self.block(&mut reject, exprs);
                    block.push(Statement::If { condition, accept, reject }, span);
                }
                Statement::Switch { selector, mut cases } => {
                    for c in &mut cases {
                        self.block(&mut c.body, exprs);
                    }
                    block.push(Statement::Switch { selector, cases }, span);
                }
                Statement::Loop { mut body, mut continuing, break_if } => {
                    self.block(&mut body, exprs);
                    self.block(&mut continuing, exprs);
                    block.push(Statement::Loop { body, continuing, break_if }, span);
                }
                s => block.push(s, span),
            }
        }
    }

    /// Whether `pointer` names an array being split.
    fn splits(&self, pointer: Handle<Expression>) -> bool {
        self.pointers.get(&pointer).is_some_and(|(v, _)| self.parts.contains_key(v))
    }

    /// `a = value` on a split array: one store per element.
    fn store(
        &self,
        block: &mut Block,
        exprs: &mut Arena<Expression>,
        pointer: Handle<Expression>,
        value: Handle<Expression>,
        span: naga::Span,
    ) {
        let var = self.pointers[&pointer].0;
        let parts = &self.parts[&var];
        let values: Vec<Handle<Expression>> = match &exprs[value] {
            Expression::Compose { components, .. } if components.len() == parts.len() => components.clone(),
            Expression::ZeroValue(_) => {
                let c = &self.candidates[&var];
                let zero = c.zero.map_or(Expression::ZeroValue(c.elem), Expression::Literal);
                let zero = exprs.append(zero, span);
                vec![zero; parts.len()]
            }
            // Any other array value: its elements, emitted here.
            _ => {
                let start = exprs.len();
                let elems = (0..parts.len() as u32)
                    .map(|index| exprs.append(Expression::AccessIndex { base: value, index }, span));
                let elems: Vec<_> = elems.collect();
                block.push(Statement::Emit(exprs.range_from(start)), span);
                elems
            }
        };
        for (&part, value) in parts.iter().zip(values) {
            let pointer = exprs.append(Expression::LocalVariable(part), span);
            block.push(Statement::Store { pointer, value }, span);
        }
    }
}
