//! The CPU body: the kernel as Rust the CPU executor runs once per
//! invocation, generated from the HIR, as the WGSL is.
//!
//! It is the user's program again, construct by construct, each under the
//! user's own span (so rustc's errors and lints point at the user's code),
//! with Rust's own operators and methods, so that the CPU computes exactly
//! what the user wrote. Only the constructs that need the executor differ:
//!
//! * thread indexing reads the current `Invocation` (`__invocation.global_id`);
//! * elements of `&mut [T]` parameters are read with `.load(i)` and written
//!   with `.store(i, v)` (a shared relaxed-atomic view, or a chunk's own
//!   window; see docs/cpu-executor.md);
//! * shared arrays live in the workgroup's memory (`__workgroup.shared`),
//!   and barriers are `.await`s on the workgroup (the body is an `async fn`
//!   when the kernel cooperates).
//!
//! Where the user named an item (`global_id`, `shared`, an `Ordering`), the
//! body names it too, so the user's imports resolve and stay used, and an
//! editor shows the item's documentation.

use crate::hir::*;
use crate::infer::Types;
use crate::layout::Layout;
use crate::types::{Compound, Ty, TypeTable};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};

/// Generates the body of the kernel `f` as a block; `helper_scope`: a
/// helper it calls prints or panics (each helper call then runs in the runtime's `HelperScope`).
pub fn cpu_body(f: &Function, types: &Types, table: &TypeTable, layout: &Layout, helper_scope: bool) -> TokenStream {
    let g = Gen { f, types, table, layout, k: super::krate(), phase: None, chunk: None, helper_scope };
    g.block(&f.body)
}

/// A name only generated code can see (`Span::mixed_site` hygiene), so it
/// never captures or shadows a user's variable.
pub fn internal(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}

/// A user's name as an identifier again (`r#type` stays raw).
pub fn user_ident(name: &str, span: Span) -> Ident {
    match name.strip_prefix("r#") {
        Some(raw) => Ident::new_raw(raw, span),
        None => Ident::new(name, span),
    }
}

/// An array's length in Rust: the literal, or the name of the const
/// parameter or constant the launch sets it by (`TM`), which rustc
/// monomorphises.
fn array_len(len: u32, table: &TypeTable) -> TokenStream {
    match table.symbol(len) {
        Some(s) => user_ident(&s.name, Span::call_site()).into_token_stream(),
        None => {
            let len = len as usize;
            quote!(#len)
        }
    }
}

/// The Rust type of a kernel type (the runtime's types through
/// [`super::krate`], like every path generated code names).
pub fn rust_type(ty: Ty, table: &TypeTable) -> TokenStream {
    let k = super::krate();
    match ty {
        Ty::Bool => quote!(bool),
        Ty::F32 => quote!(f32),
        Ty::I32 => quote!(i32),
        Ty::U32 => quote!(u32),
        Ty::Usize => quote!(usize),
        Ty::F16 => quote!(#k::half::f16),
        Ty::F64 => quote!(f64),
        Ty::I64 => quote!(i64),
        Ty::U64 => quote!(u64),
        Ty::Compound(id) => match table.get(id) {
            Compound::Array { elem, len } => {
                let elem = rust_type(*elem, table);
                let len = array_len(*len, table);
                quote!([#elem; #len])
            }
            Compound::Tuple(elems) => {
                let elems = elems.iter().map(|t| rust_type(*t, table));
                quote!((#(#elems,)*))
            }
            Compound::Struct { name, .. } => user_ident(name, Span::call_site()).into_token_stream(),
        },
        Ty::Dim3 => quote!(#k::Dim3),
        Ty::Vector(v) => {
            let name = format_ident!("{}", v.name());
            if v.is_glam() {
                quote!(#k::glam::#name)
            } else {
                quote!(#k::#name)
            }
        }
        Ty::Tile(t) => tile_rust_type(t),
        Ty::Unit | Ty::Never => quote!(()),
    }
}

/// The runtime's type of a tile: `::onekernel::__private::tile::MatrixA<16, 16>`.
fn tile_rust_type(t: crate::types::TileTy) -> TokenStream {
    use crate::types::{TileElem, TileRole};
    let k = super::krate();
    let (r, c) = (usize::from(t.rows), usize::from(t.cols));
    match t.role {
        TileRole::A => quote!(#k::tile::MatrixA<#r, #c>),
        TileRole::B => quote!(#k::tile::MatrixB<#r, #c>),
        TileRole::Acc => {
            let elem = match t.elem {
                TileElem::F16 => quote!(#k::half::f16),
                TileElem::F32 => quote!(f32),
            };
            quote!(#k::tile::Accumulator<#elem, #r, #c>)
        }
    }
}

pub(super) struct Gen<'a> {
    pub f: &'a Function,
    pub types: &'a Types,
    pub table: &'a TypeTable,
    pub layout: &'a Layout,
    /// The runtime's hidden module.
    pub k: TokenStream,
    /// Set when generating the phases of the phase executor
    /// (`phases.rs`): the locals kept per invocation across phases.
    pub phase: Option<&'a PhaseLocals>,
    /// Set when generating the chunk-slice loop (`chunk.rs`): own
    /// elements are elements of the chunk's slices.
    pub chunk: Option<&'a super::chunk::ChunkLoop<'a>>,
    /// A helper of the kernel prints or panics: each helper call runs in a
    /// `HelperScope` of the invocation (the kernel then runs per
    /// invocation, `analysis::cpu_plan`).
    pub helper_scope: bool,
}

/// What the phase body changes in the statements it generates: a local
/// that lives across a barrier is an element of per-invocation storage
/// (`__local3[__inv]`) instead of a Rust local, or, when its value is a
/// cheap function of the invocation's builtins, that value computed again
/// where it is used; and a `return` ends the invocation's part of the
/// phase (`continue '__inv`).
pub(super) struct PhaseLocals {
    /// The storage of each stored local.
    pub storage: std::collections::HashMap<LocalId, Ident>,
    /// The value of each recomputed local (its `let` emits nothing).
    pub recomputed: std::collections::HashMap<LocalId, ExprId>,
}

impl Gen<'_> {
    /// The storage element of `local` when it lives across phases.
    fn stored(&self, local: LocalId, span: Span) -> Option<TokenStream> {
        let name = self.phase?.storage.get(&local)?;
        let inv = internal("__inv");
        Some(quote_spanned!(span=> #name[#inv]))
    }

    pub(super) fn block(&self, b: &Block) -> TokenStream {
        let stmts = b.stmts.iter().map(|s| self.stmt(s));
        let tail = b.tail.map(|t| self.expr(t));
        quote!({ #(#stmts)* #tail })
    }

    pub(super) fn stmt(&self, s: &Stmt) -> TokenStream {
        match s {
            Stmt::Let { local, .. } if self.phase.is_some_and(|p| p.recomputed.contains_key(local)) => quote!(),
            Stmt::Let { local, init } if self.stored(*local, Span::call_site()).is_some() => {
                let span = self.f.locals[*local].span;
                let place = self.stored(*local, span);
                let init = init.map(|i| {
                    let i = self.expr(i);
                    quote_spanned!(span=> #place = #i;)
                });
                quote!(#init)
            }
            Stmt::LetTuple { locals, init } if locals.iter().any(|l| self.stored(*l, Span::call_site()).is_some()) => {
                // Bind the elements to fresh names, then store those that
                // live across phases.
                let mut pats = Vec::new();
                let mut stores = Vec::new();
                for (n, l) in locals.iter().enumerate() {
                    match self.stored(*l, self.f.locals[*l].span) {
                        Some(place) => {
                            let tmp = internal(&format!("__element{n}"));
                            stores.push(quote!(#place = #tmp;));
                            pats.push(quote!(#tmp));
                        }
                        None => pats.push(self.binding(*l)),
                    }
                }
                let init = self.expr(*init);
                quote!(let (#(#pats),*) = #init; #(#stores)*)
            }
            Stmt::Let { local, init } => {
                let l = &self.f.locals[*local];
                let pat = self.binding(*local);
                let annotation = l.annotated.map(|t| {
                    let t = rust_type(t, self.table);
                    quote!(: #t)
                });
                let init = init.map(|i| {
                    let i = self.expr(i);
                    quote!(= #i)
                });
                quote_spanned!(l.span=> let #pat #annotation #init;)
            }
            Stmt::Expr(e) => {
                let e = self.expr(*e);
                quote!(#e;)
            }
            Stmt::Const(c) => {
                let item = &self.f.consts[*c].item;
                quote!(#item)
            }
            Stmt::LetTuple { locals, init } => {
                let pats = locals.iter().map(|l| self.binding(*l));
                let init = self.expr(*init);
                quote!(let (#(#pats),*) = #init;)
            }
            Stmt::Shared(id) => {
                let d = &self.f.shared[*id];
                let k = &self.k;
                let name = user_ident(&d.name, d.span);
                let (callee, ty) = (&d.callee, &d.written_ty);
                // After an array whose length the launch sets, the offset is
                // the sum of the sizes before it, as rustc computes them.
                let before: Vec<_> = self.f.shared.iter().take_while(|(j, _)| j != id).map(|(_, d)| d).collect();
                let offset = if before.iter().any(|d| d.dims.iter().any(|&n| self.table.symbol(n).is_some())) {
                    let types = before.iter().map(|d| &d.written_ty);
                    quote!(0usize #(+ <#types as #k::SharedArray>::WORDS)*)
                } else {
                    let offset = self.layout.shared_offsets[*id] as usize;
                    quote!(#offset)
                };
                let workgroup = internal("__workgroup");
                let label = &d.name;
                quote_spanned!(d.span=> let #name = #k::builtin(#callee, #workgroup.shared::<#ty>(#offset, #label));)
            }
        }
    }

    /// A subgroup collective `.await`ed on the workgroup (every invocation
    /// of the subgroup contributes its value, then each takes its result).
    fn subgroup(
        &self,
        collective: SubgroupCollective,
        args: &[ExprId],
        site: u32,
        callee: &syn::Path,
        span: Span,
    ) -> TokenStream {
        let k = &self.k;
        let (invocation, workgroup) = (internal("__invocation"), internal("__workgroup"));
        let args = self.exprs(args);
        // A `bool` in, a `UVec4` mask out: its own method.
        if collective == SubgroupCollective::Ballot {
            let pred = &args[0];
            return quote_spanned!(span=> #workgroup.subgroup_ballot(&#invocation, #site, #k::builtin(#callee, #pred)).await);
        }
        // The ABI's variant, by its own name: the runtime re-exports the
        // ABI enum, so there is no second list to keep in step.
        let variant = format_ident!("{collective:?}");
        let v = &args[0];
        match args.get(1) {
            None => quote_spanned!(span=>
                #workgroup.subgroup(&#invocation, #site, #k::SubgroupCollective::#variant, #k::subgroup_operand(#callee, #v), 0).await
            ),
            Some(lane) => {
                let (value, lane_var) = (internal("__value"), internal("__lane"));
                quote_spanned!(span=> {
                    let (#value, #lane_var) = #k::subgroup_operands(#callee, #v, #lane);
                    #workgroup.subgroup(&#invocation, #site, #k::SubgroupCollective::#variant, #value, #lane_var).await
                })
            }
        }
    }

    /// A tile operation. Each invocation holds the whole tile (see the
    /// runtime's `tile` module): a load reads every element through the
    /// memory's own accessors (race-checked, the user's line in reports),
    /// `mma` is the runtime's function under the user's path, and a store
    /// writes this lane's share of the elements.
    ///
    /// A load or a store first waits for the whole workgroup (its `site` is
    /// a barrier's): on the GPU the subgroup's lanes load a tile together
    /// before any of them stores, and the CPU's invocations, which run one
    /// after the other between meetings, would otherwise see a store of a
    /// lane that ran ahead (`c = load(&m); ..; c.store_col_major(&m)`).
    fn tile(&self, op: TileOp, args: &[ExprId], site: u32, callee: &syn::Path, ty: Ty, span: Span) -> TokenStream {
        let k = &self.k;
        let workgroup = internal("__workgroup");
        let meet = quote_spanned!(span=> #workgroup.barrier(#site).await;);
        let args = self.exprs(args);
        let (offset, stride, index) = (internal("__offset"), internal("__stride"), internal("__index"));
        let position = |col_major: bool, r: &Ident, c: &Ident| {
            if col_major {
                quote_spanned!(span=> #offset + #c * #stride + #r)
            } else {
                quote_spanned!(span=> #offset + #r * #stride + #c)
            }
        };
        let (r, c, v) = (internal("__r"), internal("__c"), internal("__v"));
        match op {
            TileOp::Zeros(_) => quote_spanned!(span=> #callee()),
            TileOp::MulAdd => {
                let (a, b, acc) = (&args[0], &args[1], &args[2]);
                quote_spanned!(span=> #callee(#a, #b, #acc))
            }
            TileOp::Load { mem, col_major, .. } => {
                let tile_ty = rust_type(ty, self.table);
                let read = match mem {
                    TileMem::Buffer(p) => {
                        let buf = self.param(p, span);
                        match self.f.params[p].kind {
                            ParamKind::BufferMut { .. } => quote_spanned!(span=> #buf.load(#index)),
                            _ => quote_spanned!(span=> #buf[#index]),
                        }
                    }
                    TileMem::Shared(s) => {
                        let name = self.shared_name(s, span);
                        let load = Ident::new("load", span);
                        quote_spanned!(span=> #name.#load(#index))
                    }
                };
                // `F16Vec4`/`F16Vec2` memory: read as its flat lanes, row r
                // from lane `(offset + r * stride) * LANES` (offset and
                // stride count vectors, as the GPU's load does).
                let (elem, lanes) = (mem.elem(self.f), usize::from(mem.lanes(self.f)));
                // The runtime's `load` is generic over the memory
                // (`TileMemory`): named here, where no argument says it.
                let mut callee = callee.clone();
                if let Some(last) = callee.segments.last_mut() {
                    let elem = rust_type(elem, self.table);
                    last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote_spanned!(span=> ::<[#elem]>));
                }
                let (at, read) = if lanes == 1 {
                    (position(col_major, &r, &c), read)
                } else {
                    let (o, st) = (&offset, &stride);
                    let at = if col_major {
                        quote_spanned!(span=> (#o + #c * #st) * #lanes + #r)
                    } else {
                        quote_spanned!(span=> (#o + #r * #st) * #lanes + #c)
                    };
                    let lane = internal("__lane");
                    (
                        at,
                        quote_spanned!(span=> { let #lane: usize = #index % #lanes; let #index: usize = #index / #lanes; (#read)[#lane] }),
                    )
                };
                let (o, st) = (&args[0], &args[1]);
                quote_spanned!(span=> {
                    let #offset: usize = #o;
                    let #stride: usize = #st;
                    #meet
                    #k::builtin(#callee, ());
                    <#tile_ty>::from_fn(|#r, #c| { let #index: usize = #at; #read })
                })
            }
            TileOp::Store { mem, col_major } => {
                let write = match mem {
                    TileMem::Buffer(p) => {
                        let buf = self.param(p, span);
                        quote_spanned!(span=> #buf.store(#index, #v))
                    }
                    TileMem::Shared(s) => {
                        let name = self.shared_name(s, span);
                        let store = Ident::new("store", span);
                        quote_spanned!(span=> #name.#store(#index, #v))
                    }
                };
                let at = position(col_major, &r, &c);
                let (tile, o, st) = (&args[0], &args[1], &args[2]);
                let (invocation, value) = (internal("__invocation"), internal("__tile"));
                quote_spanned!(span=> {
                    let #value = #tile;
                    let #offset: usize = #o;
                    let #stride: usize = #st;
                    #meet
                    #value.for_lane(
                        #invocation.subgroup_invocation_id() as usize,
                        #invocation.subgroup_lanes(),
                        |#r, #c, #v| { let #index: usize = #at; #write },
                    );
                })
            }
        }
    }

    /// The pattern of a `let` or `for` binding: `x`, `mut x` or `_`.
    pub(super) fn binding(&self, local: LocalId) -> TokenStream {
        let l = &self.f.locals[local];
        if l.name == "_" {
            return quote_spanned!(l.span=> _);
        }
        let name = user_ident(&l.name, l.span);
        let m = l.mutable.then(|| quote_spanned!(l.span=> mut));
        quote!(#m #name)
    }

    fn param(&self, p: ParamId, span: Span) -> Ident {
        user_ident(&self.f.params[p].name, span)
    }

    fn shared_name(&self, s: SharedId, span: Span) -> Ident {
        user_ident(&self.f.shared[s].name, span)
    }

    fn label(&self, label: &Option<Label>) -> Option<syn::Lifetime> {
        label.as_ref().map(|l| syn::Lifetime::new(&l.name, l.span))
    }

    fn exprs(&self, es: &[ExprId]) -> Vec<TokenStream> {
        es.iter().map(|e| self.expr(*e)).collect()
    }

    pub(super) fn expr(&self, id: ExprId) -> TokenStream {
        let e = &self.f.exprs[id];
        let span = e.span;
        let k = &self.k;
        match &e.kind {
            // A function with an error is never generated.
            ExprKind::Error => quote_spanned!(span=> ::core::unreachable!()),
            ExprKind::Lit(lit) => literal(*lit, self.types.exprs[id], span),
            ExprKind::Const(c) => {
                let (bits32, bits) = (c.bits as u32, c.bits);
                match c.ty {
                    Ty::F32 => quote_spanned!(span=> ::core::primitive::f32::from_bits(#bits32)),
                    Ty::F64 => quote_spanned!(span=> ::core::primitive::f64::from_bits(#bits)),
                    Ty::F16 => {
                        let bits16 = c.bits as u16;
                        quote_spanned!(span=> #k::half::f16::from_bits(#bits16))
                    }
                    Ty::I32 => quote_spanned!(span=> (#bits32 as ::core::primitive::i32)),
                    Ty::I64 => quote_spanned!(span=> (#bits as ::core::primitive::i64)),
                    Ty::U64 => quote_spanned!(span=> #bits),
                    _ => quote_spanned!(span=> #bits32),
                }
            }
            ExprKind::Local(l) => match (self.stored(*l, span), self.phase.and_then(|p| p.recomputed.get(l))) {
                (Some(place), _) => quote_spanned!(span=> (#place)),
                (None, Some(value)) => {
                    let value = self.expr(*value);
                    quote_spanned!(span=> (#value))
                }
                (None, None) => user_ident(&self.f.locals[*l].name, span).into_token_stream(),
            },
            ExprKind::ConstRef(c) => user_ident(&self.f.consts[*c].name, span).into_token_stream(),
            // A const parameter of the CPU body, or the constant of the
            // kernel's scope (the body's module imports its parent's names).
            ExprKind::Override(i) => {
                let o = &self.f.overrides[*i];
                let ident = user_ident(&o.name, span);
                if o.any_int {
                    // An integer of any type, `i32` as the GPU has it (the
                    // launch checked that the value fits).
                    quote_spanned!(span=> (#ident as i32))
                } else {
                    ident.into_token_stream()
                }
            }
            ExprKind::Param(p) => self.param(*p, span).into_token_stream(),
            // In the chunk loop (a 1-D grid), `global_id()` is `(i, 0, 0)`;
            // `chunk_slices` admits no other builtin.
            ExprKind::Builtin { builtin: Builtin::GlobalId, callee } if self.chunk.is_some() => {
                let (_, i) = super::chunk::positions();
                quote_spanned!(span=> #k::builtin(#callee, #k::Dim3::new(#i, 0, 0)))
            }
            // The runtime's value for the ABI's variant, named by its own
            // name (`Invocation::get` matches on the same enum).
            ExprKind::Builtin { builtin, callee } => {
                let variant = format_ident!("{builtin:?}");
                let invocation = internal("__invocation");
                quote_spanned!(span=> #k::builtin_value(#callee, #invocation.get(#k::Builtin::#variant)))
            }
            ExprKind::Axis(base, axis) => {
                let base = self.expr(*base);
                let field = Ident::new(crate::infer::axis_name(*axis), span);
                quote_spanned!(span=> #base.#field)
            }
            ExprKind::Index { buffer, index } if self.chunk.is_some_and(|c| c.is_own(*index)) => {
                let (s, (j, _)) = (super::chunk::slice(*buffer), super::chunk::positions());
                quote_spanned!(span=> #s[#j])
            }
            ExprKind::Index { buffer, index } => {
                let buf = self.param(*buffer, span);
                let index = self.expr(*index);
                match self.f.params[*buffer].kind {
                    ParamKind::BufferMut { .. } => quote_spanned!(span=> #buf.load(#index)),
                    _ => quote_spanned!(span=> #buf[#index]),
                }
            }
            ExprKind::Len(p)
                if self.chunk.is_some() && matches!(self.f.params[*p].kind, ParamKind::BufferMut { .. }) =>
            {
                super::chunk::len(*p).into_token_stream()
            }
            ExprKind::Len(p) => {
                let buf = self.param(*p, span);
                quote_spanned!(span=> #buf.len())
            }
            ExprKind::SharedIndex { shared, indices } => {
                let name = self.shared_name(*shared, span);
                let indices = self.exprs(indices);
                // The method under the user's span too: the runtime's
                // `#[track_caller]` reports (panics, the race detector) then
                // point at the user's line, not at the attribute.
                let load = Ident::new(if indices.len() == 2 { "load2" } else { "load" }, span);
                quote_spanned!(span=> #name.#load(#(#indices),*))
            }
            ExprKind::Atomic { target, op, args, orderings } => {
                let element = match target {
                    AtomicTarget::Buffer { param, index } => {
                        let buf = self.param(*param, span);
                        let index = self.expr(*index);
                        quote_spanned!(span=> #buf[#index])
                    }
                    AtomicTarget::Shared { shared, indices } => {
                        let name = self.shared_name(*shared, span);
                        let indices = self.exprs(indices);
                        quote_spanned!(span=> #name.at(#(#indices),*))
                    }
                };
                let args = self.exprs(args);
                let method = Ident::new(op.method(), span);
                let is_ok = (*op == AtomicOp::CompareExchangeIsOk).then(|| quote_spanned!(span=> .is_ok()));
                quote_spanned!(span=> #element.#method(#(#args,)* #(#orderings),*) #is_ok)
            }
            ExprKind::Barrier { site, callee, .. } => {
                let workgroup = internal("__workgroup");
                quote_spanned!(span=> { #k::builtin(#callee, ()); #workgroup.barrier(#site).await })
            }
            ExprKind::Subgroup { op, args, site, callee } => self.subgroup(*op, args, *site, callee, span),
            ExprKind::Tile { op, args, site, callee } => {
                self.tile(*op, args, *site, callee, self.types.exprs[id], span)
            }
            ExprKind::UniformLoad { shared, indices, site, callee } => {
                // WGSL's `workgroupUniformLoad`: a barrier, the load, and a
                // barrier again, so that no thread writes the element before
                // every thread has read it.
                let workgroup = internal("__workgroup");
                let name = self.shared_name(*shared, span);
                let vars: Vec<Ident> = (0..indices.len()).map(|i| internal(&format!("__index{i}"))).collect();
                let indices = self.exprs(indices);
                let load = if vars.len() == 2 { quote!(load2) } else { quote!(load) };
                let value = internal("__value");
                quote_spanned!(span=> {
                    #(let #vars: usize = #indices;)*
                    #workgroup.barrier(#site).await;
                    let #value = #k::uniform_load_value(#callee, #name.#load(#(#vars),*));
                    #workgroup.barrier(#site).await;
                    #value
                })
            }
            ExprKind::Array(xs) => {
                let xs = self.exprs(xs);
                quote_spanned!(span=> [#(#xs),*])
            }
            ExprKind::Repeat(x, len) => {
                let x = self.expr(*x);
                let len = array_len(*len, self.table);
                quote_spanned!(span=> [#x; #len])
            }
            ExprKind::Vector { ctor, args, callee, .. } => {
                // The constructor as the user wrote it (`Vec4::new`,
                // `vec4`, `Vec4::ZERO`), so their imports stay used.
                let args = self.exprs(args);
                match ctor {
                    VecCtor::Const(_) => quote_spanned!(span=> #callee),
                    VecCtor::New | VecCtor::Splat => quote_spanned!(span=> #callee(#(#args),*)),
                }
            }
            ExprKind::Swizzle(base, lanes) => {
                // Through glam's trait by its full path: the user need not
                // have imported it.
                let size = self.types.exprs[*base].as_vector().map_or(4, |v| v.size);
                let tr = format_ident!("Vec{size}Swizzles");
                let method: String = lanes.iter().map(|l| crate::infer::axis_name(*l)).collect();
                let method = Ident::new(&method, span);
                let base = self.expr(*base);
                quote_spanned!(span=> #k::glam::#tr::#method(#base))
            }
            ExprKind::Tuple(xs) => {
                let xs = self.exprs(xs);
                quote_spanned!(span=> (#(#xs),*))
            }
            ExprKind::Element { base, index } => {
                let (base, index) = (self.expr(*base), self.expr(*index));
                quote_spanned!(span=> #base[#index])
            }
            ExprKind::Field(base, n) => {
                let base = self.expr(*base);
                let n = syn::Index { index: *n, span };
                quote_spanned!(span=> #base.#n)
            }
            ExprKind::NamedField(base, name) => {
                let base = self.expr(*base);
                let name = user_ident(name, span);
                quote_spanned!(span=> #base.#name)
            }
            ExprKind::StructLit { ty, fields } => {
                let Some((name, decl)) = self.table.as_struct(*ty) else { return quote!(()) };
                let name = user_ident(name, span);
                let fields = fields.iter().map(|(index, value)| {
                    let field = user_ident(&decl[*index as usize].0, span);
                    let value = self.expr(*value);
                    quote_spanned!(span=> #field: #value)
                });
                quote_spanned!(span=> #name { #(#fields),* })
            }
            ExprKind::ArrayLen(base) => {
                let base = self.expr(*base);
                quote_spanned!(span=> #base.len())
            }
            ExprKind::Unary(op, x) => {
                let op = match op {
                    UnOp::Neg => quote_spanned!(span=> -),
                    UnOp::Not => quote_spanned!(span=> !),
                };
                // `-2147483648i32` is one literal in Rust: keep it one.
                if let ExprKind::Lit(lit) = &self.f.exprs[*x].kind {
                    let lit = literal(*lit, self.types.exprs[*x], self.f.exprs[*x].span);
                    return quote_spanned!(span=> (#op #lit));
                }
                let x = self.expr(*x);
                quote_spanned!(span=> (#op #x))
            }
            ExprKind::Binary(op, l, r) => {
                // In the chunk loop, `i < out.len()` and the like are decided:
                // every buffer covers the chunk.
                if let Some(value) = self.chunk.and_then(|c| c.decided(self.f, *op, *l, *r)) {
                    let value = syn::LitBool::new(value, span);
                    return quote!(#value);
                }
                let (l, r) = (self.expr(*l), self.expr(*r));
                let op = bin_op(*op, span);
                quote_spanned!(span=> (#l #op #r))
            }
            ExprKind::Logical(op, l, r) => {
                let (l, r) = (self.expr(*l), self.expr(*r));
                match op {
                    LogicOp::And => quote_spanned!(span=> (#l && #r)),
                    LogicOp::Or => quote_spanned!(span=> (#l || #r)),
                }
            }
            ExprKind::Cast(x, t) => {
                let x = self.expr(*x);
                let t = rust_type(*t, self.table);
                quote_spanned!(span=> (#x as #t))
            }
            ExprKind::Convert(x, t) => {
                let x = self.expr(*x);
                let t = rust_type(*t, self.table);
                quote_spanned!(span=> <#t>::from(#x))
            }
            ExprKind::Typed(x, _) => self.expr(*x),
            ExprKind::Call { name, args } => {
                let name = user_ident(name, span);
                let args = self.exprs(args);
                if self.helper_scope {
                    // The helper's `println!`/`assert!` (rewritten by
                    // `#[helper]`, `expand/helper.rs`) find the invocation
                    // in the scope.
                    let (k, invocation) = (&self.k, internal("__invocation"));
                    let scope = internal("__helper_scope");
                    quote_spanned!(span=> {
                        let #scope = #k::HelperScope::enter(&#invocation, &KERNEL);
                        #name(#(#args),*)
                    })
                } else {
                    quote_spanned!(span=> #name(#(#args),*))
                }
            }
            // Associated functions of the result's type, whose argument has
            // another type: `f32::from_bits(u)`, `f16::from_f32(x)`,
            // `F16Vec4::from_vec4(v)`.
            ExprKind::Math(
                op @ (MathOp::FromBits | MathOp::F16FromF32 | MathOp::F16FromF64 | MathOp::FromVec2 | MathOp::FromVec4),
                args,
            ) => {
                let arg = self.expr(args[0]);
                let t = rust_type(self.types.exprs[id], self.table);
                let method = Ident::new(op.name(), span);
                quote_spanned!(span=> <#t>::#method(#arg))
            }
            ExprKind::Math(op, args) => {
                let method = Ident::new(op.name(), span);
                let rest = self.exprs(&args[1..]);
                match &self.f.exprs[args[0]].kind {
                    // `f32::sqrt(x)`, as written.
                    ExprKind::Typed(x, t) => {
                        let t = rust_type(*t, self.table);
                        let x = self.expr(*x);
                        quote_spanned!(span=> <#t>::#method(#x #(, #rest)*))
                    }
                    _ => {
                        let recv = self.expr(args[0]);
                        quote_spanned!(span=> (#recv).#method(#(#rest),*))
                    }
                }
            }
            ExprKind::If { cond, then, else_, .. } => {
                let cond = self.expr(*cond);
                let then = self.block(then);
                let else_ = else_.map(|e| {
                    let e = self.expr(e);
                    quote_spanned!(span=> else #e)
                });
                quote_spanned!(span=> if #cond #then #else_)
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Match { scrutinee, arms } => {
                let scrutinee = self.expr(*scrutinee);
                let arms = arms.iter().map(|arm| {
                    let pats = arm.pats.iter().map(|p| pattern(*p, span));
                    let pats = match arm.binding {
                        // `n => ..`: the binding is the (only) pattern.
                        Some(l) => self.binding(l),
                        None => quote!(#(#pats)|*),
                    };
                    let body = self.expr(arm.body);
                    quote_spanned!(span=> #pats => #body,)
                });
                quote_spanned!(span=> match #scrutinee { #(#arms)* })
            }
            ExprKind::Loop { label, kind, body } => {
                let label = self.label(label).map(|l| quote!(#l:));
                let body = self.block(body);
                match kind {
                    LoopKind::Loop => quote_spanned!(span=> #label loop #body),
                    LoopKind::While { cond } => {
                        let cond = self.expr(*cond);
                        quote_spanned!(span=> #label while #cond #body)
                    }
                    LoopKind::For { var, start, end, inclusive, step, reverse, .. } => {
                        let pat = self.binding(*var);
                        let (start, end) = (self.expr(*start), self.expr(*end));
                        let range = if *inclusive {
                            quote_spanned!(span=> (#start..=#end))
                        } else {
                            quote_spanned!(span=> (#start..#end))
                        };
                        let iter = match (step, reverse) {
                            (Some(s), _) => {
                                let s = self.expr(*s);
                                quote_spanned!(span=> #range.step_by(#s))
                            }
                            (None, true) => quote_spanned!(span=> #range.rev()),
                            (None, false) => range,
                        };
                        quote_spanned!(span=> #label for #pat in #iter #body)
                    }
                }
            }
            ExprKind::Break { label, value } => {
                let label = self.label(label);
                let value = value.map(|v| self.expr(v));
                quote_spanned!(span=> break #label #value)
            }
            ExprKind::Continue { label } => {
                let label = self.label(label);
                quote_spanned!(span=> continue #label)
            }
            // In a phase, an invocation's `return` (after its last barrier)
            // ends its part of the phase loop.
            // Likewise in the chunk loop.
            ExprKind::Return(_) if self.phase.is_some() || self.chunk.is_some() => {
                let inv = super::phases::invocation_label();
                quote_spanned!(span=> continue #inv)
            }
            ExprKind::Return(value) => {
                let value = value.map(|v| self.expr(v));
                quote_spanned!(span=> return #value)
            }
            ExprKind::Assign { place, op, value, name_span } => self.assign(place, *op, *value, span, *name_span),
            ExprKind::Debug(call) => self.debug(call, span),
        }
    }

    /// A `println!`, `assert!`, `panic!`, ...: Rust's own macro, so that the
    /// CPU formats and panics exactly as Rust does. A print goes through
    /// the runtime (`debug_print`), which prefixes each line with the
    /// kernel and the invocation; a panic first enters a `PanicSite`, so
    /// that the runtime reports it as `LaunchError::KernelPanic` of this
    /// invocation. `debug_assert*!` runs when the user's crate has
    /// `debug_assertions`.
    fn debug(&self, call: &DebugCall, span: Span) -> TokenStream {
        use onekernel_abi::DebugKind;
        let k = &self.k;
        let invocation = internal("__invocation");
        let leading = call.kind.leading_args();
        let lead: Vec<TokenStream> = call.args[..leading].iter().map(|(_, a)| self.expr(*a)).collect();
        let message_args: Vec<TokenStream> = call.args[leading..]
            .iter()
            .map(|(name, a)| {
                let v = self.expr(*a);
                match name {
                    Some(n) => {
                        let n = user_ident(n, span);
                        quote_spanned!(span=> #n = #v)
                    }
                    None => v,
                }
            })
            .collect();
        let message = call.format.as_ref().map(|f| quote_spanned!(span=> #f, #(#message_args),*));
        let enter = quote_spanned!(span=> let _site = #k::PanicSite::enter(&#invocation););
        let code = match call.kind {
            DebugKind::Print { stderr, newline } => {
                let message = message.unwrap_or_else(|| quote!(""));
                return quote_spanned!(span=>
                    #k::debug_print(&#invocation, &KERNEL, #stderr, #newline, ::core::format_args!(#message))
                );
            }
            DebugKind::Panic => quote_spanned!(span=> { #enter ::core::panic!(#message) }),
            DebugKind::Unreachable => quote_spanned!(span=> { #enter ::core::unreachable!(#message) }),
            DebugKind::Todo => quote_spanned!(span=> { #enter ::core::todo!(#message) }),
            DebugKind::Unimplemented => quote_spanned!(span=> { #enter ::core::unimplemented!(#message) }),
            DebugKind::Assert => {
                let cond = call.cond.map(|c| self.expr(c));
                let text = format!("assertion failed: {}", call.cond_text);
                let message = message.unwrap_or_else(|| quote_spanned!(span=> "{}", #text));
                quote_spanned!(span=> if !(#cond) { #enter ::core::panic!(#message) })
            }
            DebugKind::AssertEq | DebugKind::AssertNe => {
                let (l, r) = (&lead[0], &lead[1]);
                let (left, right) = (internal("__left"), internal("__right"));
                let message = message.map(|m| quote!(, #m));
                let (failed, assert) = match call.kind {
                    DebugKind::AssertEq => (quote!(!(*#left == *#right)), quote_spanned!(span=> ::core::assert_eq!)),
                    _ => (quote!(*#left == *#right), quote_spanned!(span=> ::core::assert_ne!)),
                };
                quote_spanned!(span=> match (&(#l), &(#r)) {
                    (#left, #right) => if #failed { #enter #assert(*#left, *#right #message) }
                })
            }
        };
        if call.debug_only {
            quote_spanned!(span=> if ::core::cfg!(debug_assertions) { #code })
        } else {
            code
        }
    }

    /// `place = value` / `place op= value`. Rust evaluates the value before
    /// the place; buffer and shared elements keep that order explicitly.
    fn assign(&self, place: &Place, op: Option<BinOp>, value: ExprId, span: Span, name_span: Span) -> TokenStream {
        let v = self.expr(value);
        let (value_var, index_var) = (internal("__value"), internal("__index"));
        let combine = |old: TokenStream| match op {
            None => quote!(#value_var),
            Some(op) => {
                let op = bin_op(op, span);
                quote_spanned!(span=> #old #op #value_var)
            }
        };
        match place {
            Place::Local(_) | Place::Param(_) => {
                let name = match place {
                    Place::Local(l) => match self.stored(*l, span) {
                        Some(place) => place,
                        None => user_ident(&self.f.locals[*l].name, name_span).into_token_stream(),
                    },
                    Place::Param(p) => self.param(*p, name_span).into_token_stream(),
                    _ => unreachable!("matched above"),
                };
                match op {
                    None => quote_spanned!(span=> #name = #v),
                    Some(op) => {
                        let op = compound_op(op, span);
                        quote_spanned!(span=> #name #op #v)
                    }
                }
            }
            Place::Project { local, steps } => {
                let name = match self.stored(*local, span) {
                    Some(place) => place,
                    None => user_ident(&self.f.locals[*local].name, name_span).into_token_stream(),
                };
                let steps = steps.iter().map(|s| match s {
                    Step::Index(i) => {
                        let i = self.expr(*i);
                        quote_spanned!(span=> [#i])
                    }
                    Step::Field(n) => {
                        let n = syn::Index { index: *n, span };
                        quote_spanned!(span=> .#n)
                    }
                    Step::NamedField(name) => {
                        let name = user_ident(name, span);
                        quote_spanned!(span=> .#name)
                    }
                });
                let op = match op {
                    None => quote_spanned!(span=> =),
                    Some(op) => compound_op(op, span),
                };
                quote_spanned!(span=> #name #(#steps)* #op #v)
            }
            Place::Index { buffer, index } if self.chunk.is_some_and(|c| c.is_own(*index)) => {
                let (s, (j, _)) = (super::chunk::slice(*buffer), super::chunk::positions());
                let new = combine(quote_spanned!(span=> #s[#j]));
                quote_spanned!(span=> {
                    let #value_var = #v;
                    #s[#j] = #new
                })
            }
            Place::Index { buffer, index } => {
                let buf = self.param(*buffer, span);
                let index = self.expr(*index);
                let new = combine(quote_spanned!(span=> #buf.load(#index_var)));
                quote_spanned!(span=> {
                    let #value_var = #v;
                    let #index_var = #index;
                    #buf.store(#index_var, #new)
                })
            }
            Place::Shared { shared, indices } => {
                let name = self.shared_name(*shared, span);
                let vars: Vec<Ident> = (0..indices.len()).map(|n| internal(&format!("__index{n}"))).collect();
                let indices = self.exprs(indices);
                let (load, store) = if vars.len() == 2 { ("load2", "store2") } else { ("load", "store") };
                let (load, store) = (Ident::new(load, span), Ident::new(store, span));
                let new = combine(quote_spanned!(span=> #name.#load(#(#vars),*)));
                quote_spanned!(span=> {
                    let #value_var = #v;
                    #(let #vars: usize = #indices;)*
                    #name.#store(#(#vars,)* #new)
                })
            }
        }
    }
}

/// A literal of type `ty`, suffixed (so it has that type whatever surrounds
/// it).
fn literal(lit: Lit, ty: Ty, span: Span) -> TokenStream {
    match lit {
        Lit::Bool(b) => {
            let b = syn::LitBool::new(b, span);
            quote!(#b)
        }
        Lit::Int(v, _) => {
            let suffix = ty.rust_name();
            let l = syn::LitInt::new(&format!("{v}{suffix}"), span);
            quote!(#l)
        }
        // The shortest text that reads back as the same value.
        Lit::Float(v, _) if ty == Ty::F64 => {
            let l = syn::LitFloat::new(&format!("{:?}f64", v.double), span);
            quote!(#l)
        }
        Lit::Float(v, _) => {
            let l = syn::LitFloat::new(&format!("{:?}f32", v.single), span);
            quote!(#l)
        }
    }
}

/// An integer pattern, unsuffixed so that it takes the scrutinee's type.
fn pattern(p: Pat, span: Span) -> TokenStream {
    let int = |v: i128| {
        let mut lit = proc_macro2::Literal::i128_unsuffixed(v.abs());
        lit.set_span(span);
        if v < 0 {
            quote_spanned!(span=> -#lit)
        } else {
            quote!(#lit)
        }
    };
    match p {
        Pat::Int(v) => int(v),
        Pat::Range { lo, hi, inclusive } => {
            let lo = lo.map(int);
            let hi = hi.map(int);
            if inclusive {
                quote_spanned!(span=> #lo..=#hi)
            } else {
                quote_spanned!(span=> #lo..#hi)
            }
        }
        Pat::Wild => quote_spanned!(span=> _),
    }
}

fn bin_op(op: BinOp, span: Span) -> TokenStream {
    match op {
        BinOp::Add => quote_spanned!(span=> +),
        BinOp::Sub => quote_spanned!(span=> -),
        BinOp::Mul => quote_spanned!(span=> *),
        BinOp::Div => quote_spanned!(span=> /),
        BinOp::Rem => quote_spanned!(span=> %),
        BinOp::BitAnd => quote_spanned!(span=> &),
        BinOp::BitOr => quote_spanned!(span=> |),
        BinOp::BitXor => quote_spanned!(span=> ^),
        BinOp::Shl => quote_spanned!(span=> <<),
        BinOp::Shr => quote_spanned!(span=> >>),
        BinOp::Eq => quote_spanned!(span=> ==),
        BinOp::Ne => quote_spanned!(span=> !=),
        BinOp::Lt => quote_spanned!(span=> <),
        BinOp::Le => quote_spanned!(span=> <=),
        BinOp::Gt => quote_spanned!(span=> >),
        BinOp::Ge => quote_spanned!(span=> >=),
    }
}

fn compound_op(op: BinOp, span: Span) -> TokenStream {
    match op {
        BinOp::Add => quote_spanned!(span=> +=),
        BinOp::Sub => quote_spanned!(span=> -=),
        BinOp::Mul => quote_spanned!(span=> *=),
        BinOp::Div => quote_spanned!(span=> /=),
        BinOp::Rem => quote_spanned!(span=> %=),
        BinOp::BitAnd => quote_spanned!(span=> &=),
        BinOp::BitOr => quote_spanned!(span=> |=),
        BinOp::BitXor => quote_spanned!(span=> ^=),
        BinOp::Shl => quote_spanned!(span=> <<=),
        BinOp::Shr => quote_spanned!(span=> >>=),
        // Not assignment operators: the recogniser never makes these.
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => quote_spanned!(span=> =),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_keep_their_value_and_type() {
        let f = |v: f32| literal(Lit::Float(FloatLit::exact(v), None), Ty::F32, Span::call_site()).to_string();
        assert_eq!(f(0.1), "0.1f32");
        assert_eq!(f(1e-40), "1e-40f32");
        assert_eq!(f(3.0), "3.0f32");
        let i = literal(Lit::Int(2147483648, None), Ty::I32, Span::call_site()).to_string();
        assert_eq!(i, "2147483648i32");
        let u = literal(Lit::Int(7, None), Ty::Usize, Span::call_site()).to_string();
        assert_eq!(u, "7usize");
    }
}
