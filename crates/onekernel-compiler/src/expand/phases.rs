//! The phase body: a cooperative kernel split at its barriers, for the CPU
//! phase executor (`onekernel-runtime`'s `cpu/phased.rs`).
//!
//! The body runs once per workgroup: the workgroup's code (the barriers
//! and the control flow around them) once, and between two barriers a
//! *phase*, a plain loop over the workgroup's invocations (what CPU
//! OpenCL implementations such as PoCL do). Which code is which, and which
//! locals live where, is the split (`split.rs`), which also decided that
//! the kernel runs this way (`CpuPlan::Cooperative { phased: true }`);
//! this module only writes it out.

use super::cpu_body::{internal, rust_type, Gen, PhaseLocals};
use crate::hir::*;
use crate::infer::Types;
use crate::layout::Layout;
use crate::split::{Cond, Node, PhaseSplit, Split};
use crate::types::TypeTable;
use crate::uniformity::UniformityInfo;
use crate::visit::operands;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use std::collections::HashMap;

/// The phase body of a kernel: the function that runs one workgroup, and
/// the per-invocation storage it needs.
#[derive(Debug)]
pub struct PhaseBody {
    /// The Rust type of each local kept per invocation (the state is one
    /// `Box<[T; invocations]>` of each).
    pub state: Vec<TokenStream>,
    /// The body, a block.
    pub body: TokenStream,
}

/// `'__inv`: the label of every phase loop (hygienic).
pub fn invocation_label() -> syn::Lifetime {
    syn::Lifetime::new("'__inv", Span::mixed_site())
}

/// The phase body of kernel `f`, whose plan is `Cooperative { phased:
/// true }`: the split (`split.rs`, which decided the plan) emitted as
/// Rust; `Err` only if the split disagrees with the plan.
pub fn phase_body(
    f: &Function,
    types: &Types,
    table: &TypeTable,
    layout: &Layout,
    workgroup_size: [u32; 3],
    uniformity: &UniformityInfo,
) -> Result<PhaseBody, &'static str> {
    let PhaseSplit { split, tree, kept, recomputed } = crate::split::split(f, types, table, uniformity)?;
    let mut storage = HashMap::new();
    let mut state = Vec::new();
    for local in kept {
        storage.insert(local, internal(&format!("__local{}", state.len())));
        state.push(rust_type(types.locals[local], table));
    }
    let names = PhaseLocals { storage, recomputed };
    // Never with helpers that print: those kernels run per invocation.
    let g = Gen { f, types, table, layout, k: super::krate(), phase: Some(&names), chunk: None, helper_scope: false };
    let emit = Emit { g: &g, split: &split, size: workgroup_size.map(|n| n as usize) };
    let nodes = emit.nodes(&tree);
    let locals: Vec<_> = (0..state.len()).map(|n| internal(&format!("__local{n}"))).collect();
    let (state_var, group, invocation) = (internal("__state"), internal("__group"), internal("__invocation"));
    let body = quote!({
        let (#(#locals,)*) = #state_var;
        // The workgroup's own code reads the builtins of its invocation
        // (0, 0, 0): only workgroup-wide ones (`block_id()`, ...).
        let #invocation = *#group;
        #nodes
    });
    Ok(PhaseBody { state, body })
}

/// Writes the workgroup's code.
struct Emit<'g, 'a> {
    g: &'g Gen<'a>,
    split: &'g Split<'a>,
    size: [usize; 3],
}

impl Emit<'_, '_> {
    fn nodes(&self, nodes: &[Node<'_>]) -> TokenStream {
        nodes.iter().map(|n| self.node(n)).collect()
    }

    /// Whether `e` is `thread_id().x` (maybe through a local computed
    /// again), in a 1-D workgroup: the phase loop's counter.
    fn is_counter(&self, e: ExprId) -> bool {
        let f = self.g.f;
        let [_, y, z] = self.size;
        match &f.exprs[e].kind {
            ExprKind::Axis(b, 0) => {
                y * z == 1 && matches!(f.exprs[*b].kind, ExprKind::Builtin { builtin: Builtin::ThreadId, .. })
            }
            ExprKind::Local(l) => self.g.phase.and_then(|p| p.recomputed.get(l)).is_some_and(|v| self.is_counter(*v)),
            _ => false,
        }
    }

    /// The invocations a phase runs, when it is one `if` (without `else`)
    /// on the invocation's index against a workgroup-wide value (`if t <
    /// stride { .. }`, `if t == 0 { .. }`): the others would do nothing,
    /// so the loop skips them (a tree reduction's later phases run a few
    /// invocations instead of all). The `if` stays, so this only saves
    /// time.
    fn range(&self, stmts: &[&Stmt], tail: Option<ExprId>) -> Option<(TokenStream, TokenStream)> {
        let f = self.g.f;
        let only = match (stmts, tail) {
            ([Stmt::Expr(e)], None) => *e,
            ([], Some(e)) => e,
            _ => return None,
        };
        let ExprKind::If { cond, else_: None, .. } = &f.exprs[only].kind else { return None };
        let ExprKind::Binary(op, l, r) = &f.exprs[*cond].kind else { return None };
        // `t op e`, or `e op t` turned around.
        let (op, bound) = if self.is_counter(*l) && self.split.once(*r) {
            (*op, *r)
        } else if self.is_counter(*r) && self.split.once(*l) {
            let flipped = match op {
                BinOp::Gt => BinOp::Lt,
                BinOp::Ge => BinOp::Le,
                BinOp::Eq => BinOp::Eq,
                _ => return None,
            };
            (flipped, *l)
        } else {
            return None;
        };
        let n = self.size[0];
        let e = self.g.expr(bound);
        let bound = internal("__bound");
        let value = quote!(let #bound: usize = #e;);
        let start = match op {
            BinOp::Lt | BinOp::Le => quote!(0),
            BinOp::Eq => quote!(::core::cmp::min(#bound, #n)),
            _ => return None,
        };
        let end = match op {
            BinOp::Lt => quote!(::core::cmp::min(#bound, #n)),
            _ => quote!(::core::cmp::min(#bound.saturating_add(1), #n)),
        };
        Some((value, quote!(#start..#end)))
    }

    /// `body` once for each invocation of the workgroup, `__invocation`
    /// its builtins and `__inv` its index in the storage.
    fn phase(&self, body: TokenStream) -> TokenStream {
        self.phase_over(body, None)
    }

    /// `body` for the invocations `range` (all when `None`).
    fn phase_over(&self, body: TokenStream, range: Option<(TokenStream, TokenStream)>) -> TokenStream {
        let [x, y, z] = self.size;
        let n = x * y * z;
        let (inv, group, invocation) = (internal("__inv"), internal("__group"), internal("__invocation"));
        let label = invocation_label();
        // Constant sizes: the divisions are shifts or multiplications, and
        // for a 1-D workgroup they vanish.
        let tx = if y * z == 1 { quote!(#inv) } else { quote!(#inv % #x) };
        let ty = if y == 1 { quote!(0) } else { quote!(#inv / #x % #y) };
        let tz = if z == 1 { quote!(0) } else { quote!(#inv / (#x * #y)) };
        match range {
            None => quote! {
                #label: for #inv in 0..#n {
                    let #invocation = #group.thread(#tx, #ty, #tz);
                    #body
                }
            },
            Some((bound, range)) => quote!({
                #bound
                #label: for #inv in #range {
                    let #invocation = #group.thread(#tx, #ty, #tz);
                    #body
                }
            }),
        }
    }

    fn node(&self, n: &Node<'_>) -> TokenStream {
        let g = self.g;
        let k = &g.k;
        match n {
            Node::Phase { stmts, tail, .. } => {
                let range = self.range(stmts, *tail);
                let stmts = stmts.iter().map(|s| g.stmt(s));
                let tail = tail.map(|t| {
                    let t = g.expr(t);
                    quote!(#t;)
                });
                self.phase_over(quote!(#(#stmts)* #tail), range)
            }
            Node::Once(s) => g.stmt(s),
            Node::Expr(e) => match &g.f.exprs[*e].kind {
                ExprKind::Barrier { callee, .. } => {
                    // Every invocation finished the phase before: nothing
                    // to wait for (the call keeps the user's import used).
                    let span = g.f.exprs[*e].span;
                    quote_spanned!(span=> #k::builtin(#callee, ());)
                }
                // A uniform `return`: the whole workgroup is done.
                ExprKind::Return(_) => {
                    let span = g.f.exprs[*e].span;
                    quote_spanned!(span=> return;)
                }
                _ => {
                    let e = g.expr(*e);
                    quote!(#e;)
                }
            },
            Node::If { cond, agree, then, else_ } => {
                let c = self.value(&[*cond], agree);
                let then = self.nodes(then);
                let else_ = else_.as_ref().map(|e| {
                    let e = self.nodes(e);
                    quote!(else { #e })
                });
                quote!(if (#c) { #then } #else_)
            }
            Node::Loop { expr, agree, body } => {
                let ExprKind::Loop { label, kind, .. } = &g.f.exprs[*expr].kind else { unreachable!() };
                let span = g.f.exprs[*expr].span;
                let label = label.as_ref().map(|l| {
                    let l = syn::Lifetime::new(&l.name, l.span);
                    quote!(#l:)
                });
                let body = self.nodes(body);
                match kind {
                    LoopKind::Loop => quote_spanned!(span=> #label loop { #body }),
                    LoopKind::While { cond } => {
                        let c = self.value(&[*cond], agree);
                        quote_spanned!(span=> #label while (#c) { #body })
                    }
                    LoopKind::For { var, inclusive, step, reverse, .. } => {
                        let bounds = operands(&g.f.exprs[*expr].kind);
                        let vars: Vec<_> = (0..bounds.len()).map(|i| internal(&format!("__bound{i}"))).collect();
                        let value = self.value(&bounds, agree);
                        let (start, end) = (&vars[0], &vars[1]);
                        let range = if *inclusive {
                            quote_spanned!(span=> (#start..=#end))
                        } else {
                            quote_spanned!(span=> (#start..#end))
                        };
                        let iter = match (step, reverse) {
                            (Some(_), _) => {
                                let s = &vars[2];
                                quote_spanned!(span=> #range.step_by(#s))
                            }
                            (None, true) => quote_spanned!(span=> #range.rev()),
                            (None, false) => range,
                        };
                        let pat = g.binding(*var);
                        quote_spanned!(span=> {
                            let (#(#vars,)*) = #value;
                            #label for #pat in #iter { #body }
                        })
                    }
                }
            }
            Node::Block(b) => {
                let b = self.nodes(b);
                quote!({ #b })
            }
        }
    }

    /// The value of `exprs` (one, or a tuple of several) for the
    /// workgroup: computed once, or by every invocation, agreeing.
    fn value(&self, exprs: &[ExprId], agree: &Cond) -> TokenStream {
        let g = self.g;
        let k = &g.k;
        let values: Vec<_> = exprs.iter().map(|e| g.expr(*e)).collect();
        let value = if values.len() == 1 { values[0].clone() } else { quote!((#(#values,)*)) };
        match agree {
            Cond::Once => value,
            Cond::Agreed(_) => {
                let (first, invocation) = (internal("__first"), internal("__invocation"));
                let span = g.f.exprs[exprs[0]].span;
                let check = quote_spanned!(span=> #k::agree(&mut #first, #value, &#invocation););
                let each = self.phase(check);
                quote!({
                    let mut #first = ::core::option::Option::None;
                    #each
                    #k::agreed(#first)
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phase body of a kernel, or why there is none.
    fn split(attr: &str, src: &str) -> Result<PhaseBody, &'static str> {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        let k = match crate::compile(attr.parse().unwrap(), &item, &[]) {
            Ok(k) => k,
            Err(e) => panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
        };
        let c = &k.checked;
        phase_body(
            &c.program.kernel,
            &c.kernel_types,
            &c.program.types,
            &k.layout,
            k.info.workgroup_size,
            &c.uniformity,
        )
    }

    fn state(p: &PhaseBody) -> Vec<String> {
        p.state.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn a_tree_reduction_keeps_nothing_per_invocation() {
        let p = split(
            "workgroup_size = 256",
            r#"
fn block_sum(input: &[f32], sums: &mut [f32]) {
    let partial = shared::<[f32; 256]>();
    let t = thread_id().x;
    let i = global_id().x;
    partial[t] = if i < input.len() { input[i] } else { 0.0 };
    workgroup_barrier();
    let mut stride = 128;
    while stride > 0 {
        if t < stride {
            partial[t] += partial[t + stride];
        }
        workgroup_barrier();
        stride /= 2;
    }
    if t == 0 {
        sums[block_id().x] = partial[0];
    }
}"#,
        )
        .unwrap();
        // `t` lives across barriers, but it is `thread_id().x` again
        // wherever it is used; `stride` has one value per workgroup, so
        // the loop runs once per workgroup with no agreement phase.
        assert_eq!(state(&p), [""; 0]);
        let body = p.body.to_string();
        assert!(body.contains("if ((:: onekernel :: __private :: builtin_value (thread_id"), "{body}");
        assert!(!body.contains("agree"), "{body}");
        assert!(body.contains("while ((stride > 0usize))"), "{body}");
        // `if t < stride` and `if t == 0` run only the invocations that
        // pass them.
        assert!(body.contains("let __bound : usize = stride ;"), "{body}");
        assert!(body.contains("let __bound : usize = 0usize ;"), "{body}");
    }

    #[test]
    fn a_tiled_matmul_keeps_its_accumulator() {
        let p = split(
            "workgroup_size = (16, 16)",
            r#"
fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: u32, k: u32, n: u32) {
    let a_tile = shared::<[[f32; 16]; 16]>();
    let b_tile = shared::<[[f32; 16]; 16]>();
    let m = m as usize;
    let k = k as usize;
    let n = n as usize;
    let tx = thread_id().x;
    let ty = thread_id().y;
    let row = block_id().y * 16 + ty;
    let col = block_id().x * 16 + tx;
    let mut acc = 0.0;
    let steps = (k + 15) / 16;
    for step in 0..steps {
        let a_col = step * 16 + tx;
        a_tile[ty][tx] = if row < m && a_col < k { a[row * k + a_col] } else { 0.0 };
        let b_row = step * 16 + ty;
        b_tile[ty][tx] = if b_row < k && col < n { b[b_row * n + col] } else { 0.0 };
        workgroup_barrier();
        for j in 0..16 {
            acc = a_tile[ty][j].mul_add(b_tile[j][tx], acc);
        }
        workgroup_barrier();
    }
    if row < m && col < n {
        c[row * n + col] = acc;
    }
}"#,
        )
        .unwrap();
        // `tx`, `ty`, `row` and `col` are computed again from the
        // builtins where they are used.
        assert_eq!(state(&p), ["f32"]);
        assert!(!p.body.to_string().contains("agree"));
    }

    #[test]
    fn a_condition_from_a_local_kept_per_invocation_is_agreed_on() {
        let p = split(
            "workgroup_size = 64",
            r#"
fn k(out: &mut [u32], n: u32) {
    let tile = shared::<[u32; 64]>();
    let t = thread_id().x;
    let mut total = n;
    let rounds = if n > 4 { 4 } else { n };
    for r in 0..rounds {
        tile[t] += r;
        workgroup_barrier();
        total -= 1;
    }
    out[t] = tile[t] + total;
}"#,
        )
        .unwrap();
        // `total` is assigned workgroup-wide values in the loop's
        // workgroup code: one value per workgroup. `rounds`, an `if`'s
        // value, is computed by every invocation: kept per invocation, and
        // the loop's bounds are agreed on.
        assert_eq!(state(&p), ["u32"]);
        let body = p.body.to_string();
        assert!(body.contains("agree"), "{body}");
        assert!(body.contains("let mut total = n ;"), "{body}");
    }

    #[test]
    fn what_the_futures_executor_keeps() {
        let sub = split(
            "workgroup_size = 64",
            "fn k(out: &mut [u32]) { let t = thread_id().x; out[t] = subgroup_add(1u32); workgroup_barrier(); }",
        );
        assert!(sub.unwrap_err().contains("subgroup"));
        let early = split(
            "workgroup_size = 64",
            "fn k(out: &mut [u32], n: u32) { if n == 0 { return; } workgroup_barrier(); out[thread_id().x] = 1; }",
        );
        // A `return` before a barrier is uniform: the workgroup returns.
        let early = early.unwrap().body.to_string();
        assert!(early.contains("if ((n == 0u32)) { return ; }"), "{early}");
        let in_let = split(
            "workgroup_size = 64",
            "fn k(out: &mut [u32]) { let x = { workgroup_barrier(); 1u32 }; out[thread_id().x] = x; }",
        );
        assert!(in_let.unwrap_err().contains("`let`"));
        // A `return` after the last barrier is fine: it ends the
        // invocation's last phase.
        let late = split(
            "workgroup_size = 64",
            "fn k(out: &mut [u32]) { let t = thread_id().x; workgroup_barrier(); if t >= out.len() { return; } out[t] = 1; }",
        );
        assert!(late.unwrap().body.to_string().contains("continue '__inv"));
    }
}
