//! Cooperation: shared arrays (`shared::<[f32; 256]>()`), barriers and
//! atomic operations.

use super::{strip, ty::atomic_elem, Binding, FnRole, Parser};
use crate::diagnostic::Diagnostic;
use crate::hir::*;
use crate::types::Ty;
use proc_macro2::Span;
use syn::spanned::Spanned;

impl Parser<'_> {
    /// `let tile = shared::<[f32; 256]>();`: declares a shared array.
    /// Returns false when `init` is not a `shared::<..>()` call.
    pub(super) fn shared_decl(&mut self, local: &syn::Local, init: &syn::Expr, out: &mut Block) -> bool {
        let syn::Expr::Call(c) = strip(init) else { return false };
        let syn::Expr::Path(p) = strip(&c.func) else { return false };
        if super::expr::builtin_of(&p.path) != Some(crate::builtins::BuiltinFn::Shared) {
            return false;
        }
        let span = init.span();
        let syn::Pat::Ident(pi) = &local.pat else {
            self.diags.push(
                Diagnostic::new(local.pat.span(), "a shared array is bound to a plain name")
                    .help("write `let tile = shared::<[f32; 256]>();`"),
            );
            return true;
        };
        if self.role == FnRole::Helper {
            self.diags.push(
                Diagnostic::new(span, "shared memory can only be declared in a kernel's body")
                    .help("declare it in the kernel"),
            );
            return true;
        }
        if self.scopes.len() != 2 {
            self.diags.push(
                Diagnostic::new(span, "shared memory must be declared at the top of the kernel's body")
                    .help("it lives as long as the workgroup: move the `let` out of the block or loop"),
            );
            return true;
        }
        if !c.args.is_empty() {
            self.diags.push(
                Diagnostic::new(c.args.span(), "`shared()` takes no arguments").help("write `shared::<[f32; 256]>()`"),
            );
            return true;
        }
        let ty = match &p.path.segments.last().expect("a builtin path").arguments {
            syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                syn::GenericArgument::Type(t) => t,
                other => {
                    self.diags.push(
                        Diagnostic::new(other.span(), "expected an array type").help("write `shared::<[f32; 256]>()`"),
                    );
                    return true;
                }
            },
            _ => {
                self.diags.push(
                    Diagnostic::new(span, "a shared array needs its type")
                        .help("write `shared::<[f32; 256]>()` or `shared::<[[f32; 16]; 16]>()`"),
                );
                return true;
            }
        };
        let Some((elem, atomic, dims)) = self.shared_type(ty) else { return true };
        let name = pi.ident.to_string();
        let id = self.f.shared.append(SharedDecl {
            name: name.clone(),
            span: pi.ident.span(),
            elem,
            atomic,
            dims,
            written_ty: self.instantiate(ty),
            callee: self.instantiate(&p.path),
        });
        self.scopes.last_mut().expect("scope").insert(name, Binding::Shared(id));
        out.stmts.push(Stmt::Shared(id));
        true
    }

    /// `[T; N]`, `[[T; C]; R]`, `[AtomicU32; N]`: (element, atomic, dims).
    fn shared_type(&mut self, ty: &syn::Type) -> Option<(Ty, bool, Vec<u32>)> {
        let syn::Type::Array(outer) = super::strip_type(ty) else {
            self.diags.push(
                Diagnostic::new(ty.span(), "shared memory is an array")
                    .help("write `shared::<[f32; 256]>()` or `shared::<[[f32; 16]; 16]>()`"),
            );
            return None;
        };
        let n = self.array_len(&outer.len)?;
        match super::strip_type(&outer.elem) {
            syn::Type::Array(inner) => {
                let m = self.array_len(&inner.len)?;
                if atomic_elem(&inner.elem).is_some() {
                    self.diags.push(
                        Diagnostic::new(inner.elem.span(), "shared atomics are one-dimensional")
                            .help("write `shared::<[AtomicU32; N]>()` and index it with `r * cols + c`"),
                    );
                    return None;
                }
                let elem = self.shared_elem(&inner.elem)?;
                Some((elem, false, vec![n, m]))
            }
            e => match atomic_elem(e) {
                Some(elem) => Some((elem, true, vec![n])),
                None => Some((self.shared_elem(e)?, false, vec![n])),
            },
        }
    }

    fn shared_elem(&mut self, ty: &syn::Type) -> Option<Ty> {
        match self.scalar_type(ty)? {
            t @ (Ty::F32 | Ty::I32 | Ty::U32 | Ty::F16 | Ty::F64 | Ty::I64 | Ty::U64) => Some(t),
            t @ Ty::Vector(v) if v.wgsl_layout().is_some() => Some(t),
            Ty::Vector(v) => {
                self.diags.push(
                    Diagnostic::new(ty.span(), format!("shared arrays of `{}` are not supported", v.name()))
                        .help(format!("use {}", v.aligned_alternative())),
                );
                None
            }
            t => {
                self.diags.push(Diagnostic::new(ty.span(), format!("shared arrays of `{t}` are not supported")).help(
                    "shared elements are `f32`, `i32`, `u32`, `f16`, `f64`, `i64`, `u64`, glam vectors, `AtomicU32` or `AtomicI32`",
                ));
                None
            }
        }
    }

    /// `tile[i]` or `tile[r][c]` on a shared array: `Ok((array, index
    /// exprs))`, or `Err(diagnostic)` when the number of indices does not
    /// match the array's dimensions; None when `e` is not a shared array
    /// access. Reports nothing itself: the caller reports the error once.
    pub(super) fn shared_of<'e>(&self, e: &'e syn::Expr) -> Option<Result<(SharedId, Vec<&'e syn::Expr>), Diagnostic>> {
        let syn::Expr::Index(ix) = strip(e) else { return None };
        let mut indices = vec![&*ix.index];
        let mut base = strip(&ix.expr);
        if let syn::Expr::Index(inner) = base {
            indices.insert(0, &*inner.index);
            base = strip(&inner.expr);
        }
        let syn::Expr::Path(p) = base else { return None };
        let Some(Binding::Shared(id)) = self.lookup(&p.path.get_ident()?.to_string()) else { return None };
        let decl = &self.f.shared[id];
        Some(match (decl.dims.len(), indices.len()) {
            (d, n) if d == n => Ok((id, indices)),
            (2, 1) => Err(Diagnostic::new(e.span(), "a row of a 2-D shared array cannot be used as a value")
                .help(format!("index both dimensions: `{}[r][c]`", decl.name))),
            _ => Err(Diagnostic::new(e.span(), format!("`{}` is a one-dimensional shared array", decl.name))
                .help(format!("index it once: `{}[i]`", decl.name))),
        })
    }

    /// Reads of a shared array element; None when `e` is not one.
    pub(super) fn shared_read(&mut self, e: &syn::Expr) -> Option<ExprId> {
        let span = e.span();
        let access = self.shared_of(e)?;
        let (shared, indices) = match access {
            Ok(access) => access,
            Err(d) => {
                self.diags.push(d);
                return Some(self.already_reported(span));
            }
        };
        if self.f.shared[shared].atomic {
            let name = self.f.shared[shared].name.clone();
            return Some(self.error(
                span,
                format!("`{name}` holds atomics"),
                Some("use an atomic method: `.load(Ordering::Relaxed)`, `.fetch_add(v, Ordering::Relaxed)`, ..."),
            ));
        }
        let indices = indices.into_iter().map(|i| self.expr(i)).collect();
        Some(self.push(ExprKind::SharedIndex { shared, indices }, span))
    }

    /// The place of an assignment to a shared array element; None when `e`
    /// is not a shared access, `Some(None)` after an error.
    pub(super) fn shared_place(&mut self, e: &syn::Expr) -> Option<Option<Place>> {
        let access = self.shared_of(e)?;
        let (shared, indices) = match access {
            Ok(access) => access,
            Err(d) => {
                self.diags.push(d);
                return Some(None);
            }
        };
        if self.f.shared[shared].atomic {
            let name = self.f.shared[shared].name.clone();
            self.error(
                e.span(),
                format!("`{name}` holds atomics"),
                Some("use `.store(v, Ordering::Relaxed)` or another atomic method"),
            );
            return Some(None);
        }
        let indices = indices.into_iter().map(|i| self.expr(i)).collect();
        Some(Some(Place::Shared { shared, indices }))
    }

    /// A barrier call: `workgroup_barrier()`.
    pub(super) fn barrier(&mut self, kind: BarrierKind, c: &syn::ExprCall, callee: &syn::Path) -> ExprId {
        let span = c.span();
        let name = kind.name();
        if !c.args.is_empty() {
            return self.error(c.args.span(), format!("`{name}()` takes no arguments"), None);
        }
        if self.role == FnRole::Helper {
            return self.error(
                span,
                format!("`{name}()` can only be called in a kernel's body"),
                Some("every thread must reach a barrier; call it in the kernel, around the helper call"),
            );
        }
        let site = self.f.barriers;
        self.f.barriers += 1;
        self.push(ExprKind::Barrier { kind, site, callee: self.instantiate(callee) }, span)
    }

    /// A subgroup collective: `subgroup_add(v)`, ...
    pub(super) fn subgroup(&mut self, op: SubgroupCollective, c: &syn::ExprCall, callee: &syn::Path) -> ExprId {
        let span = c.span();
        let name = op.name();
        if c.args.len() != op.arity() {
            let what = match op {
                SubgroupCollective::Ballot => "one `bool`",
                SubgroupCollective::Add | SubgroupCollective::Min | SubgroupCollective::Max => "one value",
                SubgroupCollective::ShuffleXor => "a value and a lane mask (`u32`)",
                SubgroupCollective::ShuffleDown => "a value and a lane distance (`u32`)",
                SubgroupCollective::Broadcast | SubgroupCollective::Shuffle => "a value and a lane index (`u32`)",
            };
            return self.error(c.span(), format!("`{name}` takes {what}"), None);
        }
        if self.role == FnRole::Helper {
            let help = "every thread of a subgroup must reach it together: call it in the kernel and pass the result to the helper";
            return self.error(span, format!("`{name}()` can only be called in a kernel's body"), Some(help));
        }
        let args: Vec<ExprId> = c.args.iter().map(|a| self.expr(a)).collect();
        if op.needs_uniform_lane() {
            // WGSL (and SPIR-V before 1.5) take the lane of a broadcast as
            // a constant; a lane computed at run time is a shuffle.
            let lane = args[1];
            let constant = matches!(self.f.exprs[lane].kind, ExprKind::Lit(Lit::Int(..)) | ExprKind::ConstRef(_));
            if !constant && !self.is_error(lane) {
                self.diags.push(
                    Diagnostic::new(self.f.exprs[lane].span, "the lane of `subgroup_broadcast` must be a constant")
                        .help("write a literal or a `const` item, or use `subgroup_shuffle(v, lane)` for a lane computed at run time"),
                );
                return self.already_reported(span);
            }
        }
        let site = self.f.barriers;
        self.f.barriers += 1;
        self.push(ExprKind::Subgroup { op, args, site, callee: self.instantiate(callee) }, span)
    }

    /// `workgroup_uniform_load(&tile[i])`: a shared element read as one
    /// value for the whole workgroup.
    pub(super) fn uniform_load(&mut self, c: &syn::ExprCall, callee: &syn::Path) -> ExprId {
        let span = c.span();
        let help = "write `workgroup_uniform_load(&tile[i])` with `tile` a `shared::<[T; N]>()` array";
        if c.args.len() != 1 {
            return self.error(
                c.span(),
                "`workgroup_uniform_load` takes a reference to a shared array element",
                Some(help),
            );
        }
        if self.role == FnRole::Helper {
            return self.error(
                span,
                "`workgroup_uniform_load()` can only be called in a kernel's body",
                Some("every thread of the workgroup must reach it (it is a barrier): call it in the kernel"),
            );
        }
        let arg = &c.args[0];
        let access = match strip(arg) {
            syn::Expr::Reference(r) if r.mutability.is_none() => self.shared_of(&r.expr),
            _ => None,
        };
        let (shared, indices) = match access {
            Some(Ok(access)) => access,
            Some(Err(d)) => {
                self.diags.push(d);
                return self.already_reported(span);
            }
            None => {
                return self.error(
                    arg.span(),
                    "`workgroup_uniform_load` reads an element of a shared array",
                    Some(&format!(
                    "{help}; other values are already the same for every thread, or need a shared array to become so"
                )),
                )
            }
        };
        if self.f.shared[shared].atomic {
            let name = self.f.shared[shared].name.clone();
            return self.error(
                arg.span(),
                format!("`{name}` holds atomics"),
                Some("read it with `.load(Ordering::Relaxed)`, store that in a plain shared array, and load that uniformly"),
            );
        }
        let indices = indices.into_iter().map(|i| self.expr(i)).collect();
        let site = self.f.barriers;
        self.f.barriers += 1;
        self.push(ExprKind::UniformLoad { shared, indices, site, callee: self.instantiate(callee) }, span)
    }

    /// An atomic element: `hist[i]` on an `&[AtomicU32]` parameter or a
    /// shared atomic array.
    fn atomic_target(&mut self, e: &syn::Expr) -> Option<AtomicTarget> {
        if let syn::Expr::Index(ix) = strip(e) {
            if let Some(param) = self.buffer_of(&ix.expr) {
                if matches!(self.f.params[param].kind, ParamKind::Atomics { .. }) {
                    let index = self.expr(&ix.index);
                    return Some(AtomicTarget::Buffer { param, index });
                }
            }
        }
        // A mis-indexed array is reported where it is evaluated.
        let (shared, indices) = self.shared_of(e)?.ok()?;
        if !self.f.shared[shared].atomic {
            return None;
        }
        let indices = indices.into_iter().map(|i| self.expr(i)).collect();
        Some(AtomicTarget::Shared { shared, indices })
    }

    /// `x.fetch_add(v, Ordering::Relaxed)` and friends on an atomic element,
    /// and `x.compare_exchange(current, new, o1, o2).is_ok()`; None when `m`
    /// is not an atomic operation.
    pub(super) fn atomic_call(&mut self, m: &syn::ExprMethodCall) -> Option<ExprId> {
        let span = m.span();
        // `.compare_exchange(..).is_ok()`: the whole chain is one operation.
        if let syn::Expr::MethodCall(inner) = strip(&m.receiver) {
            let is_cas = inner.method == "compare_exchange" || inner.method == "compare_exchange_weak";
            if m.method == "is_ok" && is_cas && m.args.is_empty() {
                let target = self.atomic_target(&inner.receiver)?;
                return Some(self.atomic_op(target, AtomicOp::CompareExchangeIsOk, inner, span));
            }
        }
        let name = m.method.to_string();
        if name == "compare_exchange" || name == "compare_exchange_weak" {
            self.atomic_target(&m.receiver)?;
            return Some(self.error(
                span,
                format!("`{name}` must be followed by `.is_ok()` in a kernel"),
                Some(&format!(
                    "write `.{name}(current, new, Ordering::Relaxed, Ordering::Relaxed).is_ok()`: kernels have no `Result`"
                )),
            ));
        }
        let op = AtomicOp::ALL.iter().find(|(op, n)| *n == name && *op != AtomicOp::CompareExchangeIsOk)?.0;
        let target = self.atomic_target(&m.receiver)?;
        Some(self.atomic_op(target, op, m, span))
    }

    /// Checks the arguments (values, then orderings) and builds the node.
    fn atomic_op(&mut self, target: AtomicTarget, op: AtomicOp, m: &syn::ExprMethodCall, span: Span) -> ExprId {
        let values = op.values();
        let orderings = if op == AtomicOp::CompareExchangeIsOk { 2 } else { 1 };
        if m.args.len() != values + orderings {
            let what = match op {
                AtomicOp::CompareExchangeIsOk => {
                    "`compare_exchange` takes the current value, the new value and two `Ordering`s".to_string()
                }
                _ => format!("`{}` takes {values} argument(s) and an `Ordering`", op.method()),
            };
            return self.error(m.span(), what, None);
        }
        let args = m.args.iter().take(values).map(|a| self.expr(a)).collect();
        let orderings = m.args.iter().skip(values).cloned().collect();
        self.push(ExprKind::Atomic { target, op, args, orderings }, span)
    }
}
