//! The generated kernels: their syntax tree, a seeded generator of
//! well-typed ones, and the printer that writes them as kernel source.
//!
//! Every kernel has the same signature (three inputs, three outputs, an
//! atomic accumulator, two scalars) and the same frame: statements, an
//! optional stage through shared memory with a barrier at the top level
//! (uniform control flow by construction), more statements, then one write
//! to each output at `global_id().x`. The grid is exactly `N` invocations,
//! two workgroups of `WG`, so no guard is needed.
//!
//! Local arrays (`[e; N]`, `[e0, e1, ..]`, `[[e; M]; N]`) exercise the
//! compiler's array splitting (`lower/split_arrays.rs`): each array is made
//! either *splittable* (indexed only by literals and by the variables of
//! `#[unroll]` loops, never read whole, so the pass turns it into one
//! variable per element) or *kept* (also indexed at run time, or copied
//! whole into another array), and the run counts how many of each the
//! compiled WGSL shows.

use std::fmt::Write;

/// Invocations per launch (and length of every buffer).
pub const N: usize = 128;
/// Invocations per workgroup.
pub const WG: usize = 64;
/// Elements of the atomic accumulator.
pub const ACC: usize = 8;

/// A small deterministic generator (SplitMix64).
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_F00D)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// The value types of the generated language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    I,
    U,
    F,
    B,
}

impl Ty {
    pub fn rust(self) -> &'static str {
        match self {
            Ty::I => "i32",
            Ty::U => "u32",
            Ty::F => "f32",
            Ty::B => "bool",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    WAdd,
    WSub,
    WMul,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    Lt,
    Le,
    Eq,
    Ne,
    LAnd,
    LOr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    Neg,
    Not,
    Abs,
    Floor,
    Ceil,
    Trunc,
    Sqrt,
    Sin,
    Cos,
}

/// An expression and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub ty: Ty,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A literal: the bits of an `i32`/`u32`/`f32`, or 0/1.
    Lit(u32),
    Var(usize),
    /// `ai[(e % N) as usize]` (by the expression's type: `ai`, `au`, `af`).
    Input(Box<Expr>),
    /// `i as u32` (global id) or `t as u32` (thread id).
    Gid,
    Tid,
    /// `si` or `sf`.
    Scalar,
    /// `tile[(e % WG) as usize]` (after the barrier only).
    Tile(Box<Expr>),
    /// `v{id}[i]` or `v{id}[i][j]`: an element of a local array.
    Elem(usize, Vec<Idx>),
    /// `(v{id} as u32)`: the `usize` variable of an `#[unroll]` loop.
    LoopIdx(usize),
    Bin(Bin, Box<Expr>, Box<Expr>),
    Un(Un, Box<Expr>),
    Cast(Box<Expr>),
    /// `if c { a } else { b }`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// An index into one level of a local array of `len` elements, in range
/// by construction.
#[derive(Clone, Debug, PartialEq)]
pub enum Idx {
    /// A literal `k < len`: a constant index.
    Const(usize),
    /// The variable `v{id}` of an `#[unroll]` loop, `v{id}` itself when
    /// `plain` (the loop is no longer than the array, `add` is 0), else
    /// `(v{id} + add) % len`: constant once unrolled.
    Loop { var: usize, add: usize, len: usize, plain: bool },
    /// `((e) % len) as usize`: known only at run time.
    Dyn(Box<Expr>, usize),
}

/// How a local array is initialised.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `[e; N]` or `[[e; M]; N]` (`e` evaluated once).
    Repeat(Expr),
    /// `[e0, e1, ..]` or `[[e00, e01], [e10, e11]]`, row by row.
    List(Vec<Expr>),
    /// `v{src}`: a copy of another array of the same shape.
    Copy(usize),
    /// `v{src}[i]`: a copy of a row of an array of arrays.
    Row(usize, Idx),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let mut v{id}: T = e;`
    Let(usize, Expr),
    /// `v{id} = e;`
    Assign(usize, Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `for v{id} in 0..bound { .. }` (`bound` a `u32`: a literal, or `e % 4`).
    For(usize, Expr, Vec<Stmt>),
    /// `acc[(i % ACC) as usize].fetch_add(v, Relaxed);`
    Atomic(Expr, Expr),
    /// `let mut v{id}: [T; N] = init;` (or `[[T; M]; N]`).
    ArrLet(usize, Init),
    /// `v{id}[i] = e;`, or `v{id}[i][j] op= e;` with a compound operator
    /// (`Add`, `Sub`, `Mul`, `And`, `Or`, `Xor`).
    ArrSet(usize, Vec<Idx>, Option<Bin>, Expr),
    /// `v{dst} = v{src};`: a whole-array store of a copy.
    ArrCopy(usize, usize),
    /// `v{dst}[i] = v{src};`: a row of an array of arrays stored whole.
    RowSet(usize, Idx, usize),
    /// `#[unroll] for v{id} in 0..n { .. }` (`v{id}` a `usize`).
    Unroll(usize, usize, Vec<Stmt>),
}

/// One generated kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub before: Vec<Stmt>,
    /// What each invocation stores to `tile[t]` before the barrier (no
    /// shared memory when `None`).
    pub tile: Option<Expr>,
    pub after: Vec<Stmt>,
    pub out_i: Expr,
    pub out_u: Expr,
    pub out_f: Expr,
    /// Types of the variables, by id (of the elements, for an array).
    pub vars: Vec<Ty>,
    /// Dimensions of the variables, by id: empty for a scalar, `[N]` for
    /// `[T; N]`, `[N, M]` for `[[T; M]; N]`.
    pub dims: Vec<Vec<usize>>,
}

impl Kernel {
    /// The Rust type of variable `v`.
    pub fn rust_ty(&self, v: usize) -> String {
        self.dims[v].iter().rev().fold(self.vars[v].rust().to_string(), |t, n| format!("[{t}; {n}]"))
    }
}

/// Generation state: the variables in scope and the budget.
struct Gen<'r> {
    rng: &'r mut Rng,
    vars: Vec<Ty>,
    /// Variables in scope, with whether they may be assigned.
    scope: Vec<(usize, bool)>,
    tile: bool,
    stmts_left: usize,
    /// Dimensions of the variables, by id (empty for scalars).
    dims: Vec<Vec<usize>>,
    /// Whether each array is kept splittable: indexed by constants only
    /// and never read whole.
    split: Vec<bool>,
    /// The enclosing `#[unroll]` loops: (variable, iterations).
    loops: Vec<(usize, usize)>,
}

impl Gen<'_> {
    fn lit(&mut self, ty: Ty) -> Expr {
        let r = &mut *self.rng;
        let bits = match ty {
            Ty::I => {
                let pick = [0i32, 1, -1, 2, 3, 7, -5, 100, -1000, i32::MAX, i32::MIN, 65536];
                (if r.chance(70) { r.below(41) as i32 - 20 } else { pick[r.below(pick.len())] }) as u32
            }
            Ty::U => {
                let pick = [0u32, 1, 2, 31, 32, 255, 1 << 16, u32::MAX, 0x8000_0000, 12345];
                if r.chance(70) {
                    r.below(40) as u32
                } else {
                    pick[r.below(pick.len())]
                }
            }
            Ty::F => {
                let pick = [0.0f32, 1.0, -1.0, 0.5, 2.0, -3.25, 0.1, 100.0, 1e6, -1e-3, 3.0e4];
                if r.chance(60) { (r.below(33) as f32 - 16.0) * 0.25 } else { pick[r.below(pick.len())] }.to_bits()
            }
            Ty::B => r.below(2) as u32,
        };
        Expr { ty, kind: Kind::Lit(bits) }
    }

    fn leaf(&mut self, ty: Ty) -> Expr {
        let vars: Vec<usize> =
            self.scope.iter().map(|(v, _)| *v).filter(|v| self.vars[*v] == ty && self.dims[*v].is_empty()).collect();
        let arrays = self.arrays(Some(ty));
        let leaf = |kind| Expr { ty, kind };
        // Arrays are read often once there are some: their elements are
        // what the split pass rewrites.
        match if !arrays.is_empty() && self.rng.chance(30) { 8 } else { self.rng.below(10) } {
            8 if !arrays.is_empty() => {
                let a = arrays[self.rng.below(arrays.len())];
                let idx = self.indices(a);
                leaf(Kind::Elem(a, idx))
            }
            9 if ty == Ty::U && !self.loops.is_empty() => {
                leaf(Kind::LoopIdx(self.loops[self.rng.below(self.loops.len())].0))
            }
            0 | 1 if !vars.is_empty() => leaf(Kind::Var(vars[self.rng.below(vars.len())])),
            2 if ty != Ty::B => {
                let idx = self.expr(Ty::U, 1);
                leaf(Kind::Input(Box::new(idx)))
            }
            3 if ty == Ty::U => leaf(if self.rng.chance(50) { Kind::Gid } else { Kind::Tid }),
            4 if ty == Ty::I || ty == Ty::F => leaf(Kind::Scalar),
            5 if ty == Ty::U && self.tile => {
                let idx = self.expr(Ty::U, 1);
                leaf(Kind::Tile(Box::new(idx)))
            }
            _ => self.lit(ty),
        }
    }

    fn expr(&mut self, ty: Ty, depth: usize) -> Expr {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        let b = |op, x: Expr, y: Expr| Expr { ty, kind: Kind::Bin(op, Box::new(x), Box::new(y)) };
        let u = |op, x: Expr| Expr { ty, kind: Kind::Un(op, Box::new(x)) };
        match ty {
            Ty::I | Ty::U => match self.rng.below(12) {
                0..=4 => {
                    use Bin::*;
                    // Plain `+ - *` overflow often (a documented
                    // difference, skipped): the wrapping forms are likelier.
                    let ops =
                        [Add, Sub, Mul, Div, Rem, WAdd, WSub, WMul, WAdd, WSub, WMul, And, Or, Xor, Shl, Shr, Min, Max];
                    let op = ops[self.rng.below(ops.len())];
                    let (x, mut y) = (self.expr(ty, d), self.expr(ty, d));
                    if matches!(op, Div | Rem) && self.rng.chance(80) {
                        // Mostly a divisor that cannot be zero.
                        let one = Expr { ty, kind: Kind::Lit(1) };
                        y = Expr { ty, kind: Kind::Bin(Or, Box::new(y), Box::new(one)) };
                    }
                    b(op, x, y)
                }
                5 if ty == Ty::I => {
                    let op = if self.rng.chance(50) { Un::Neg } else { Un::Abs };
                    let x = self.expr(ty, d);
                    u(op, x)
                }
                6 | 7 => {
                    let from = [Ty::I, Ty::U, Ty::F, Ty::B][self.rng.below(4)];
                    let x = self.expr(from, d);
                    Expr { ty, kind: Kind::Cast(Box::new(x)) }
                }
                8 => self.select(ty, d),
                _ => self.leaf(ty),
            },
            Ty::F => match self.rng.below(12) {
                0..=4 => {
                    use Bin::*;
                    let ops = [Add, Sub, Mul, Div, Min, Max];
                    let op = ops[self.rng.below(ops.len())];
                    let (x, y) = (self.expr(ty, d), self.expr(ty, d));
                    b(op, x, y)
                }
                5 | 6 => {
                    use Un::*;
                    let ops = [Neg, Abs, Floor, Ceil, Trunc, Sqrt, Sin, Cos];
                    let op = ops[self.rng.below(ops.len())];
                    let mut x = self.expr(ty, d);
                    if op == Sqrt && self.rng.chance(70) {
                        x = Expr { ty, kind: Kind::Un(Abs, Box::new(x)) };
                    }
                    u(op, x)
                }
                7 => {
                    let from = [Ty::I, Ty::U][self.rng.below(2)];
                    let x = self.expr(from, d);
                    Expr { ty, kind: Kind::Cast(Box::new(x)) }
                }
                8 => self.select(ty, d),
                _ => self.leaf(ty),
            },
            Ty::B => match self.rng.below(6) {
                0..=2 => {
                    use Bin::*;
                    let ops = [Lt, Le, Eq, Ne];
                    let op = ops[self.rng.below(ops.len())];
                    let t = [Ty::I, Ty::U, Ty::F][self.rng.below(3)];
                    let (x, y) = (self.expr(t, d), self.expr(t, d));
                    b(op, x, y)
                }
                3 => {
                    let op = if self.rng.chance(50) { Bin::LAnd } else { Bin::LOr };
                    let (x, y) = (self.expr(ty, d), self.expr(ty, d));
                    b(op, x, y)
                }
                4 => {
                    let x = self.expr(ty, d);
                    u(Un::Not, x)
                }
                _ => self.leaf(ty),
            },
        }
    }

    fn select(&mut self, ty: Ty, d: usize) -> Expr {
        let c = self.expr(Ty::B, d);
        let (x, y) = (self.expr(ty, d), self.expr(ty, d));
        Expr { ty, kind: Kind::Select(Box::new(c), Box::new(x), Box::new(y)) }
    }

    fn value_ty(&mut self) -> Ty {
        [Ty::I, Ty::U, Ty::F, Ty::F, Ty::I, Ty::U, Ty::B][self.rng.below(7)]
    }

    fn block(&mut self, len: usize, depth: usize) -> Vec<Stmt> {
        let mark = self.scope.len();
        let mut out = Vec::new();
        for _ in 0..len {
            if self.stmts_left == 0 {
                break;
            }
            self.stmts_left -= 1;
            let assignable: Vec<usize> =
                self.scope.iter().filter(|(v, m)| *m && self.dims[*v].is_empty()).map(|(v, _)| *v).collect();
            let arrays = self.arrays(None);
            let s = match self.rng.below(16) {
                10 | 11 if arrays.len() < 3 => self.array_let(),
                12 if !arrays.is_empty() => self.array_copy(&arrays),
                10 | 11 | 13 | 14 if !arrays.is_empty() => {
                    let a = arrays[self.rng.below(arrays.len())];
                    self.array_set(a, None)
                }
                15 if depth > 0 && !arrays.is_empty() => self.unroll(&arrays, depth),
                0..=3 => {
                    let ty = self.value_ty();
                    let e = self.expr(ty, 3);
                    let id = self.var(ty, vec![]);
                    self.scope.push((id, true));
                    Stmt::Let(id, e)
                }
                4 | 5 if !assignable.is_empty() => {
                    let v = assignable[self.rng.below(assignable.len())];
                    let e = self.expr(self.vars[v], 3);
                    Stmt::Assign(v, e)
                }
                6 if depth > 0 => {
                    let c = self.expr(Ty::B, 2);
                    let (n1, n2) = (1 + self.rng.below(3), self.rng.below(3));
                    let t = self.block(n1, depth - 1);
                    let f = self.block(n2, depth - 1);
                    Stmt::If(c, t, f)
                }
                7 if depth > 0 => {
                    let bound = if self.rng.chance(50) {
                        Expr { ty: Ty::U, kind: Kind::Lit(1 + self.rng.below(4) as u32) }
                    } else {
                        let e = self.expr(Ty::U, 2);
                        Expr {
                            ty: Ty::U,
                            kind: Kind::Bin(Bin::Rem, Box::new(e), Box::new(Expr { ty: Ty::U, kind: Kind::Lit(4) })),
                        }
                    };
                    let id = self.var(Ty::U, vec![]);
                    self.scope.push((id, false));
                    let n = 1 + self.rng.below(3);
                    let body = self.block(n, depth - 1);
                    self.scope.retain(|(v, _)| *v != id);
                    Stmt::For(id, bound, body)
                }
                8 => {
                    let (i, v) = (self.expr(Ty::U, 2), self.expr(Ty::U, 2));
                    Stmt::Atomic(i, v)
                }
                _ => {
                    let ty = self.value_ty();
                    let e = self.expr(ty, 2);
                    let id = self.var(ty, vec![]);
                    self.scope.push((id, true));
                    Stmt::Let(id, e)
                }
            };
            out.push(s);
        }
        self.scope.truncate(mark);
        out
    }

    /// A new variable of element type `ty` and dimensions `dims`.
    fn var(&mut self, ty: Ty, dims: Vec<usize>) -> usize {
        self.vars.push(ty);
        self.dims.push(dims);
        self.split.push(false);
        self.vars.len() - 1
    }

    /// The arrays in scope (of element type `ty`, if given).
    fn arrays(&self, ty: Option<Ty>) -> Vec<usize> {
        let ok = |v: usize| !self.dims[v].is_empty() && ty.is_none_or(|t| self.vars[v] == t);
        self.scope.iter().map(|(v, _)| *v).filter(|v| ok(*v)).collect()
    }

    /// One index per level of array `a`: constants and unrolled loop
    /// variables only while it is splittable, sometimes a run-time index
    /// otherwise.
    fn indices(&mut self, a: usize) -> Vec<Idx> {
        let dims = self.dims[a].clone();
        dims.into_iter().map(|len| self.index(a, len, None)).collect()
    }

    fn index(&mut self, a: usize, len: usize, prefer_loop: Option<(usize, usize)>) -> Idx {
        let pick = self.rng.below(10);
        let looped = prefer_loop
            .or_else(|| (pick < 4 && !self.loops.is_empty()).then(|| self.loops[self.rng.below(self.loops.len())]));
        if let Some((var, n)) = looped {
            let add = if self.rng.chance(70) { 0 } else { self.rng.below(len) };
            return Idx::Loop { var, add, len, plain: add == 0 && n <= len };
        }
        if !self.split[a] && pick >= 6 {
            let e = self.expr(Ty::U, 2);
            return Idx::Dyn(Box::new(e), len);
        }
        Idx::Const(self.rng.below(len))
    }

    /// `let mut v{id} = [..];`: a fresh array, splittable or not.
    fn array_let(&mut self) -> Stmt {
        let ty = self.value_ty();
        let dims = if self.rng.chance(20) {
            vec![2 + self.rng.below(3), 2 + self.rng.below(3)]
        } else {
            vec![2 + self.rng.below(7)]
        };
        let init = if self.rng.chance(50) {
            Init::Repeat(self.expr(ty, 2))
        } else {
            let n = dims.iter().product();
            Init::List((0..n).map(|_| self.expr(ty, 1)).collect())
        };
        let id = self.var(ty, dims);
        self.split[id] = self.rng.chance(50);
        self.scope.push((id, true));
        Stmt::ArrLet(id, init)
    }

    /// `v{a}[..] (op)= e;`, the first index the variable of `lp` if given.
    fn array_set(&mut self, a: usize, lp: Option<(usize, usize)>) -> Stmt {
        let dims = self.dims[a].clone();
        let mut idx = Vec::new();
        for (level, len) in dims.into_iter().enumerate() {
            let prefer = if level == 0 { lp } else { None };
            idx.push(self.index(a, len, prefer));
        }
        let ty = self.vars[a];
        let op = match ty {
            Ty::B => None,
            _ if self.rng.chance(50) => None,
            Ty::F => Some([Bin::Add, Bin::Sub, Bin::Mul][self.rng.below(3)]),
            _ => Some([Bin::Add, Bin::Sub, Bin::Mul, Bin::And, Bin::Or, Bin::Xor][self.rng.below(6)]),
        };
        let e = self.expr(ty, 2);
        Stmt::ArrSet(a, idx, op, e)
    }

    /// `#[unroll] for j in 0..n { v{a}[j] = ..; .. }` over an array in
    /// scope.
    fn unroll(&mut self, arrays: &[usize], depth: usize) -> Stmt {
        let a = arrays[self.rng.below(arrays.len())];
        let len = self.dims[a][0];
        let n = if self.rng.chance(70) { len } else { 2 + self.rng.below(7) };
        let id = self.var(Ty::U, vec![]);
        self.loops.push((id, n));
        let mut body = vec![self.array_set(a, Some((id, n)))];
        let more = self.rng.below(3);
        body.extend(self.block(more, depth - 1));
        self.loops.pop();
        Stmt::Unroll(id, n, body)
    }

    /// A whole-array copy out of a kept array: `let mut b = a;`, or
    /// `b = a;` into an array of the same shape; or a row of an array of
    /// arrays, read whole (`let mut r = m[1];`) or stored whole
    /// (`m[1] = r;`).
    fn array_copy(&mut self, arrays: &[usize]) -> Stmt {
        let kept: Vec<usize> = arrays.iter().copied().filter(|&a| !self.split[a]).collect();
        let nested: Vec<usize> = arrays.iter().copied().filter(|&a| self.dims[a].len() == 2).collect();
        if !nested.is_empty() && self.rng.chance(50) {
            let m = nested[self.rng.below(nested.len())];
            let (ty, rows, cols) = (self.vars[m], self.dims[m][0], self.dims[m][1]);
            let fits: Vec<usize> =
                kept.iter().copied().filter(|&r| self.vars[r] == ty && self.dims[r] == [cols]).collect();
            if !fits.is_empty() && self.rng.chance(50) {
                let idx = self.index(m, rows, None);
                return Stmt::RowSet(m, idx, fits[self.rng.below(fits.len())]);
            }
            let idx = self.index(m, rows, None);
            let id = self.var(ty, vec![cols]);
            self.split[id] = self.rng.chance(50);
            self.scope.push((id, true));
            return Stmt::ArrLet(id, Init::Row(m, idx));
        }
        if kept.is_empty() {
            return self.array_let();
        }
        let src = kept[self.rng.below(kept.len())];
        let same: Vec<usize> = arrays
            .iter()
            .copied()
            .filter(|&b| b != src && self.vars[b] == self.vars[src] && self.dims[b] == self.dims[src])
            .filter(|&b| self.scope.iter().any(|&(v, m)| v == b && m))
            .collect();
        if !same.is_empty() && self.rng.chance(40) {
            return Stmt::ArrCopy(same[self.rng.below(same.len())], src);
        }
        let id = self.var(self.vars[src], self.dims[src].clone());
        self.split[id] = self.rng.chance(50);
        self.scope.push((id, true));
        Stmt::ArrLet(id, Init::Copy(src))
    }
}

/// A random kernel from `seed`.
pub fn generate(seed: u64) -> Kernel {
    let mut rng = Rng::new(seed);
    let stmts = 3 + rng.below(10);
    let mut g = Gen {
        rng: &mut rng,
        vars: Vec::new(),
        scope: Vec::new(),
        tile: false,
        stmts_left: stmts,
        dims: Vec::new(),
        split: Vec::new(),
        loops: Vec::new(),
    };
    let n = 1 + g.rng.below(4);
    let before = g.block_top(n);
    let tile = if g.rng.chance(40) { Some(g.expr(Ty::U, 3)) } else { None };
    g.tile = tile.is_some();
    g.stmts_left += 3;
    let n = 1 + g.rng.below(4);
    let after = g.block_top(n);
    let (out_i, out_u, out_f) = (g.expr(Ty::I, 3), g.expr(Ty::U, 3), g.expr(Ty::F, 3));
    Kernel { before, tile, after, out_i, out_u, out_f, vars: g.vars, dims: g.dims }
}

impl Gen<'_> {
    /// A top-level block whose variables stay in scope after it.
    fn block_top(&mut self, len: usize) -> Vec<Stmt> {
        let scope = self.scope.clone();
        let out = self.block(len, 2);
        // `block` drops its own variables; top-level ones stay visible, so
        // redo the scope from the statements.
        self.scope = scope;
        for s in &out {
            if let Stmt::Let(id, _) | Stmt::ArrLet(id, _) = s {
                self.scope.push((*id, true));
            }
        }
        out
    }
}

/// The kernel's source text: a `#[kernel]` function named `name`.
pub fn print(k: &Kernel, name: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#[kernel(workgroup_size = {WG})]");
    let _ = writeln!(
        s,
        "pub fn {name}(ai: &[i32], au: &[u32], af: &[f32], oi: &mut [i32], ou: &mut [u32], of: &mut [f32], acc: &[AtomicU32], si: i32, sf: f32) {{"
    );
    s.push_str("    let i = global_id().x;\n    let t = thread_id().x;\n");
    if k.tile.is_some() {
        let _ = writeln!(s, "    let tile = shared::<[u32; {WG}]>();");
    }
    block(&mut s, &k.before, k, 1);
    if let Some(e) = &k.tile {
        let _ = writeln!(s, "    tile[t] = {};\n    workgroup_barrier();", expr(e));
    }
    block(&mut s, &k.after, k, 1);
    let _ = writeln!(s, "    oi[i] = {};", expr(&k.out_i));
    let _ = writeln!(s, "    ou[i] = {};", expr(&k.out_u));
    let _ = writeln!(s, "    of[i] = {};", expr(&k.out_f));
    s.push_str("}\n");
    s
}

fn block(s: &mut String, stmts: &[Stmt], k: &Kernel, indent: usize) {
    let vars = &k.vars;
    let pad = "    ".repeat(indent);
    for st in stmts {
        match st {
            Stmt::Let(v, e) => {
                let _ = writeln!(s, "{pad}let mut v{v}: {} = {};", vars[*v].rust(), expr(e));
            }
            Stmt::Assign(v, e) => {
                let _ = writeln!(s, "{pad}v{v} = {};", expr(e));
            }
            Stmt::If(c, t, f) => {
                let _ = writeln!(s, "{pad}if {} {{", expr(c));
                block(s, t, k, indent + 1);
                if f.is_empty() {
                    let _ = writeln!(s, "{pad}}}");
                } else {
                    let _ = writeln!(s, "{pad}}} else {{");
                    block(s, f, k, indent + 1);
                    let _ = writeln!(s, "{pad}}}");
                }
            }
            Stmt::For(v, bound, body) => {
                let _ = writeln!(s, "{pad}for v{v} in 0..{} {{", expr(bound));
                block(s, body, k, indent + 1);
                let _ = writeln!(s, "{pad}}}");
            }
            Stmt::Atomic(i, v) => {
                let _ = writeln!(
                    s,
                    "{pad}acc[(({}) % {ACC}u32) as usize].fetch_add({}, Ordering::Relaxed);",
                    expr(i),
                    expr(v)
                );
            }
            Stmt::ArrLet(v, init) => {
                let init = match init {
                    Init::Repeat(e) => k.dims[*v].iter().rev().fold(expr(e), |t, n| format!("[{t}; {n}]")),
                    Init::List(es) => {
                        let row = |es: &[Expr]| format!("[{}]", es.iter().map(expr).collect::<Vec<_>>().join(", "));
                        match k.dims[*v][..] {
                            [_, m] => format!("[{}]", es.chunks(m).map(row).collect::<Vec<_>>().join(", ")),
                            _ => row(es),
                        }
                    }
                    Init::Copy(src) => format!("v{src}"),
                    Init::Row(src, i) => format!("v{src}{}", indices(std::slice::from_ref(i))),
                };
                let _ = writeln!(s, "{pad}let mut v{v}: {} = {init};", k.rust_ty(*v));
            }
            Stmt::ArrSet(v, idx, op, e) => {
                let op = match op {
                    None => "",
                    Some(Bin::Add) => "+",
                    Some(Bin::Sub) => "-",
                    Some(Bin::Mul) => "*",
                    Some(Bin::And) => "&",
                    Some(Bin::Or) => "|",
                    Some(Bin::Xor) => "^",
                    Some(op) => unreachable!("compound {op:?}"),
                };
                let _ = writeln!(s, "{pad}v{v}{} {op}= {};", indices(idx), expr(e));
            }
            Stmt::ArrCopy(dst, src) => {
                let _ = writeln!(s, "{pad}v{dst} = v{src};");
            }
            Stmt::RowSet(dst, i, src) => {
                let _ = writeln!(s, "{pad}v{dst}{} = v{src};", indices(std::slice::from_ref(i)));
            }
            Stmt::Unroll(v, n, body) => {
                let _ = writeln!(s, "{pad}#[unroll]\n{pad}for v{v} in 0..{n}usize {{");
                block(s, body, k, indent + 1);
                let _ = writeln!(s, "{pad}}}");
            }
        }
    }
}

/// `[i][j]`: the indices of an element.
fn indices(idx: &[Idx]) -> String {
    idx.iter()
        .map(|i| match i {
            Idx::Const(k) => format!("[{k}]"),
            Idx::Loop { var, plain: true, .. } => format!("[v{var}]"),
            Idx::Loop { var, add, len, .. } => format!("[(v{var} + {add}) % {len}]"),
            Idx::Dyn(e, len) => format!("[(({}) % {len}u32) as usize]", expr(e)),
        })
        .collect()
}

/// An expression, fully parenthesised (the printed kernel means exactly
/// the tree, whatever Rust's precedence).
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        Kind::Lit(bits) => match e.ty {
            Ty::I => format!("({}i32)", *bits as i32),
            Ty::U => format!("{bits}u32"),
            Ty::F => format!("({:?}f32)", f32::from_bits(*bits)),
            Ty::B => (if *bits != 0 { "true" } else { "false" }).into(),
        },
        Kind::Var(v) => format!("v{v}"),
        Kind::Input(idx) => {
            let buf = match e.ty {
                Ty::I => "ai",
                Ty::U => "au",
                _ => "af",
            };
            format!("{buf}[(({}) % {N}u32) as usize]", expr(idx))
        }
        Kind::Gid => "(i as u32)".into(),
        Kind::Tid => "(t as u32)".into(),
        Kind::Scalar => (if e.ty == Ty::I { "si" } else { "sf" }).into(),
        Kind::Tile(idx) => format!("tile[(({}) % {WG}u32) as usize]", expr(idx)),
        Kind::Elem(v, idx) => format!("v{v}{}", indices(idx)),
        Kind::LoopIdx(v) => format!("(v{v} as u32)"),
        Kind::Bin(op, a, b) => {
            let (a, b) = (expr(a), expr(b));
            let infix = |o: &str| format!("({a} {o} {b})");
            match op {
                Bin::Add => infix("+"),
                Bin::Sub => infix("-"),
                Bin::Mul => infix("*"),
                Bin::Div => infix("/"),
                Bin::Rem => infix("%"),
                Bin::And => infix("&"),
                Bin::Or => infix("|"),
                Bin::Xor => infix("^"),
                // The amount masked to 0..32, as both sides define it.
                Bin::Shl => format!("({a} << ({b} & 31{}))", e.ty.rust()),
                Bin::Shr => format!("({a} >> ({b} & 31{}))", e.ty.rust()),
                Bin::WAdd => format!("{a}.wrapping_add({b})"),
                Bin::WSub => format!("{a}.wrapping_sub({b})"),
                Bin::WMul => format!("{a}.wrapping_mul({b})"),
                Bin::Min => format!("{a}.min({b})"),
                Bin::Max => format!("{a}.max({b})"),
                Bin::Lt => infix("<"),
                Bin::Le => infix("<="),
                Bin::Eq => infix("=="),
                Bin::Ne => infix("!="),
                Bin::LAnd => infix("&&"),
                Bin::LOr => infix("||"),
            }
        }
        Kind::Un(op, a) => {
            let a = expr(a);
            match op {
                Un::Neg => format!("(-{a})"),
                Un::Not => format!("(!{a})"),
                Un::Abs => format!("{a}.abs()"),
                Un::Floor => format!("{a}.floor()"),
                Un::Ceil => format!("{a}.ceil()"),
                Un::Trunc => format!("{a}.trunc()"),
                Un::Sqrt => format!("{a}.sqrt()"),
                Un::Sin => format!("{a}.sin()"),
                Un::Cos => format!("{a}.cos()"),
            }
        }
        Kind::Cast(a) => format!("({} as {})", expr(a), e.ty.rust()),
        Kind::Select(c, a, b) => format!("(if {} {{ {} }} else {{ {} }})", expr(c), expr(a), expr(b)),
    }
}
