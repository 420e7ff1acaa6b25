//! The reference: an interpreter of the generated kernels with the
//! language's documented semantics (docs/semantics.md).
//!
//! Integers are computed exactly as Rust computes them on the CPU executor.
//! Where the page documents that the CPU and the GPU differ (an overflow of
//! plain `+ - *`, `abs` or `-`, a division by zero, NaN, infinities,
//! subnormals) the interpreter gives up on the kernel with
//! [`Skip`]: such kernels are not compared, only counted.
//!
//! Floats are computed in `f32` with Rust's operations (what the CPU does)
//! and carry an absolute error bound that covers what WGSL allows the GPU:
//! correctly rounded `+ - *` that may be fused, `/` within 2.5 ulp, `sqrt`
//! through `inverseSqrt`, `sin`/`cos` within 2^-11 on [-π, π]. A branch, a
//! cast to an integer or a `floor` whose outcome the bound leaves open
//! (the GPU's value could fall on the other side) also gives up: the
//! result would legitimately differ.

use super::ast::*;

/// A value, with an error bound for floats.
#[derive(Clone, Copy, Debug)]
pub enum V {
    I(i32),
    U(u32),
    F(f32, f64),
    B(bool),
}

impl V {
    fn i(self) -> i32 {
        match self {
            V::I(x) => x,
            _ => unreachable!("not an i32: {self:?}"),
        }
    }
    fn u(self) -> u32 {
        match self {
            V::U(x) => x,
            _ => unreachable!("not a u32: {self:?}"),
        }
    }
    fn b(self) -> bool {
        match self {
            V::B(x) => x,
            _ => unreachable!("not a bool: {self:?}"),
        }
    }
}

/// Why a kernel is not compared (a documented difference or an ambiguous
/// float).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip(pub &'static str);

type R<T> = Result<T, Skip>;

/// Inputs of a launch.
pub struct Inputs {
    pub ai: Vec<i32>,
    pub au: Vec<u32>,
    pub af: Vec<f32>,
    pub si: i32,
    pub sf: f32,
}

impl Inputs {
    pub fn new(seed: u64) -> Inputs {
        let mut r = Rng::new(seed.wrapping_mul(31).wrapping_add(7));
        let ai = (0..N).map(|_| if r.chance(80) { r.below(201) as i32 - 100 } else { r.next() as i32 }).collect();
        let au = (0..N).map(|_| if r.chance(80) { r.below(300) as u32 } else { r.next() as u32 }).collect();
        let af = (0..N).map(|_| (r.below(2001) as f32 - 1000.0) / 64.0).collect();
        Inputs { ai, au, af, si: r.below(21) as i32 - 10, sf: (r.below(81) as f32 - 40.0) / 8.0 }
    }
}

/// What a launch computes: the outputs, their float error bounds, and the
/// accumulator.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub oi: Vec<i32>,
    pub ou: Vec<u32>,
    pub of: Vec<f32>,
    pub of_err: Vec<f64>,
    pub acc: Vec<u32>,
}

/// One invocation's state.
struct Inv {
    gid: u32,
    tid: u32,
    env: Vec<Option<V>>,
    /// Local arrays, by variable id, their elements row by row (arrays
    /// are values: a copy is a new `Vec`).
    arrs: Vec<Option<Vec<V>>>,
}

struct Machine<'a> {
    kernel: &'a Kernel,
    inp: &'a Inputs,
    tile: Vec<u32>,
    acc: Vec<u32>,
    /// Loop iterations left: the generated loops are bounded, but keep the
    /// reference from ever hanging.
    fuel: u64,
}

/// Runs the kernel over the whole grid.
pub fn run(k: &Kernel, inp: &Inputs) -> R<Outputs> {
    let mut m = Machine { kernel: k, inp, tile: vec![0; WG], acc: vec![0; ACC], fuel: 1 << 22 };
    let mut out = Outputs { acc: vec![], ..Outputs::default() };
    for group in 0..N / WG {
        let mut invs: Vec<Inv> = (0..WG)
            .map(|t| Inv {
                gid: (group * WG + t) as u32,
                tid: t as u32,
                env: vec![None; k.vars.len()],
                arrs: vec![None; k.vars.len()],
            })
            .collect();
        // Phase 1: every invocation up to the barrier, then the tile.
        let mut staged = vec![0u32; WG];
        for inv in invs.iter_mut() {
            m.block(&k.before, inv, false)?;
            if let Some(e) = &k.tile {
                staged[inv.tid as usize] = m.expr(e, inv, false)?.u();
            }
        }
        m.tile = staged;
        // Phase 2: after the barrier.
        for inv in invs.iter_mut() {
            m.block(&k.after, inv, true)?;
            out.oi.push(m.expr(&k.out_i, inv, true)?.i());
            out.ou.push(m.expr(&k.out_u, inv, true)?.u());
            match m.expr(&k.out_f, inv, true)? {
                V::F(x, e) => {
                    out.of.push(x);
                    out.of_err.push(e);
                }
                v => unreachable!("{v:?}"),
            }
        }
    }
    out.acc = m.acc;
    Ok(out)
}

/// Rounding error of one `f32` operation giving `x` (half an ulp, with
/// room for a flushed subnormal).
fn ulp(x: f32) -> f64 {
    (x.abs() as f64) * f64::from(f32::EPSILON) + f64::from(f32::MIN_POSITIVE)
}

fn float(x: f32, e: f64) -> R<V> {
    if !x.is_finite() || x.abs() > 1e30 || e > 1e30 {
        return Err(Skip("float overflow, infinity or NaN"));
    }
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        return Err(Skip("subnormal float"));
    }
    Ok(V::F(x, e))
}

/// A read of a variable or array the (shrunk) kernel never set.
fn unset() -> Skip {
    Skip("a variable read before it is set (a shrunk kernel)")
}

impl Machine<'_> {
    /// The position of element `idx` of array `v` among its elements row
    /// by row.
    fn flat(&mut self, v: usize, idx: &[Idx], inv: &Inv, after: bool) -> R<usize> {
        let mut at = 0;
        for (i, len) in idx.iter().zip(&self.kernel.dims[v]) {
            let i = match i {
                Idx::Const(c) => *c,
                Idx::Loop { var, add, .. } => (inv.env[*var].ok_or_else(unset)?.u() as usize + add) % len,
                Idx::Dyn(e, _) => (self.expr(e, inv, after)?.u() % *len as u32) as usize,
            };
            assert!(i < *len, "index {i} out of 0..{len}: the generator keeps indices in range");
            at = at * len + i;
        }
        Ok(at)
    }

    fn block(&mut self, stmts: &[Stmt], inv: &mut Inv, after: bool) -> R<()> {
        for s in stmts {
            match s {
                Stmt::Let(v, e) | Stmt::Assign(v, e) => {
                    let x = self.expr(e, inv, after)?;
                    inv.env[*v] = Some(x);
                }
                Stmt::If(c, t, f) => {
                    if self.expr(c, inv, after)?.b() {
                        self.block(t, inv, after)?;
                    } else {
                        self.block(f, inv, after)?;
                    }
                }
                Stmt::For(v, bound, body) => {
                    let n = self.expr(bound, inv, after)?.u();
                    for j in 0..n {
                        self.fuel = self.fuel.checked_sub(1).ok_or(Skip("out of fuel"))?;
                        inv.env[*v] = Some(V::U(j));
                        self.block(body, inv, after)?;
                    }
                }
                Stmt::Unroll(v, n, body) => {
                    for j in 0..*n as u32 {
                        inv.env[*v] = Some(V::U(j));
                        self.block(body, inv, after)?;
                    }
                }
                Stmt::ArrLet(v, init) => {
                    let len: usize = self.kernel.dims[*v].iter().product();
                    let elems = match init {
                        Init::Repeat(e) => vec![self.expr(e, inv, after)?; len],
                        Init::List(es) => es.iter().map(|e| self.expr(e, inv, after)).collect::<R<Vec<V>>>()?,
                        Init::Copy(src) => inv.arrs[*src].clone().ok_or_else(unset)?,
                        Init::Row(src, i) => {
                            let at = self.flat(*src, std::slice::from_ref(i), inv, after)? * len;
                            inv.arrs[*src].as_ref().ok_or_else(unset)?[at..at + len].to_vec()
                        }
                    };
                    inv.arrs[*v] = Some(elems);
                }
                Stmt::ArrCopy(dst, src) => {
                    let elems = inv.arrs[*src].clone().ok_or_else(unset)?;
                    inv.arrs[*dst] = Some(elems);
                }
                Stmt::RowSet(dst, i, src) => {
                    let row = inv.arrs[*src].clone().ok_or_else(unset)?;
                    let at = self.flat(*dst, std::slice::from_ref(i), inv, after)? * row.len();
                    inv.arrs[*dst].as_mut().ok_or_else(unset)?[at..at + row.len()].copy_from_slice(&row);
                }
                Stmt::ArrSet(v, idx, op, e) => {
                    // A primitive compound assignment evaluates its right
                    // operand first (the Rust reference); nothing here has
                    // a side effect, so only the skips could tell.
                    let x = self.expr(e, inv, after)?;
                    let at = self.flat(*v, idx, inv, after)?;
                    let arr = inv.arrs[*v].as_mut().ok_or_else(unset)?;
                    arr[at] = match op {
                        None => x,
                        Some(op) => binary(*op, arr[at], x)?,
                    };
                }
                Stmt::Atomic(i, v) => {
                    let i = self.expr(i, inv, after)?.u() as usize % ACC;
                    let v = self.expr(v, inv, after)?.u();
                    self.acc[i] = self.acc[i].wrapping_add(v);
                }
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr, inv: &Inv, after: bool) -> R<V> {
        Ok(match &e.kind {
            Kind::Lit(bits) => match e.ty {
                Ty::I => V::I(*bits as i32),
                Ty::U => V::U(*bits),
                Ty::F => V::F(f32::from_bits(*bits), 0.0),
                Ty::B => V::B(*bits != 0),
            },
            Kind::Var(v) | Kind::LoopIdx(v) => inv.env[*v].ok_or_else(unset)?,
            Kind::Elem(v, idx) => {
                let at = self.flat(*v, idx, inv, after)?;
                inv.arrs[*v].as_ref().ok_or_else(unset)?[at]
            }
            Kind::Input(idx) => {
                let i = (self.expr(idx, inv, after)?.u() % N as u32) as usize;
                match e.ty {
                    Ty::I => V::I(self.inp.ai[i]),
                    Ty::U => V::U(self.inp.au[i]),
                    _ => V::F(self.inp.af[i], 0.0),
                }
            }
            Kind::Gid => V::U(inv.gid),
            Kind::Tid => V::U(inv.tid),
            Kind::Scalar => match e.ty {
                Ty::I => V::I(self.inp.si),
                _ => V::F(self.inp.sf, 0.0),
            },
            Kind::Tile(idx) => {
                assert!(after);
                let i = (self.expr(idx, inv, after)?.u() % WG as u32) as usize;
                V::U(self.tile[i])
            }
            Kind::Select(c, a, b) => {
                if self.expr(c, inv, after)?.b() {
                    self.expr(a, inv, after)?
                } else {
                    self.expr(b, inv, after)?
                }
            }
            Kind::Cast(a) => cast(self.expr(a, inv, after)?, e.ty)?,
            Kind::Un(op, a) => unary(*op, self.expr(a, inv, after)?)?,
            Kind::Bin(Bin::LAnd, a, b) => V::B(self.expr(a, inv, after)?.b() && self.expr(b, inv, after)?.b()),
            Kind::Bin(Bin::LOr, a, b) => V::B(self.expr(a, inv, after)?.b() || self.expr(b, inv, after)?.b()),
            Kind::Bin(op, a, b) => {
                let a = self.expr(a, inv, after)?;
                let b = self.expr(b, inv, after)?;
                binary(*op, a, b)?
            }
        })
    }
}

fn cast(v: V, to: Ty) -> R<V> {
    Ok(match (v, to) {
        (V::I(x), Ty::I) => V::I(x),
        (V::I(x), Ty::U) => V::U(x as u32),
        (V::I(x), Ty::F) => {
            let f = x as f32;
            V::F(f, if f as i64 == x as i64 { 0.0 } else { ulp(f) })
        }
        (V::U(x), Ty::I) => V::I(x as i32),
        (V::U(x), Ty::U) => V::U(x),
        (V::U(x), Ty::F) => {
            let f = x as f32;
            V::F(f, if f as u64 == x as u64 { 0.0 } else { ulp(f) })
        }
        (V::B(b), Ty::I) => V::I(b as i32),
        (V::B(b), Ty::U) => V::U(b as u32),
        (V::F(x, e), Ty::I) => {
            decided((x as f64 - e) as i32 == (x as f64 + e) as i32)?;
            V::I(x as i32)
        }
        (V::F(x, e), Ty::U) => {
            decided((x as f64 - e) as u32 == (x as f64 + e) as u32)?;
            V::U(x as u32)
        }
        (V::F(x, e), Ty::F) => V::F(x, e),
        (v, t) => unreachable!("cast {v:?} to {t:?}"),
    })
}

/// Gives up unless the result does not depend on float error.
fn decided(same: bool) -> R<()> {
    if same {
        Ok(())
    } else {
        Err(Skip("float result within its error bound of a discontinuity"))
    }
}

fn unary(op: Un, v: V) -> R<V> {
    Ok(match (op, v) {
        (Un::Not, V::B(b)) => V::B(!b),
        (Un::Neg, V::I(x)) => V::I(x.checked_neg().ok_or(Skip("overflow of -i32::MIN"))?),
        (Un::Abs, V::I(x)) => V::I(x.checked_abs().ok_or(Skip("overflow of i32::MIN.abs()"))?),
        (Un::Neg, V::F(x, e)) => V::F(-x, e),
        (Un::Abs, V::F(x, e)) => V::F(x.abs(), e),
        (Un::Floor | Un::Ceil | Un::Trunc, V::F(x, e)) => {
            let f = |y: f64| {
                let y = y as f32;
                match op {
                    Un::Floor => y.floor(),
                    Un::Ceil => y.ceil(),
                    _ => y.trunc(),
                }
            };
            decided(f(x as f64 - e) == f(x as f64 + e))?;
            float(f(x as f64), 0.0)?
        }
        (Un::Sqrt, V::F(x, e)) => {
            if (x as f64) - e < 0.0 {
                return Err(Skip("sqrt of a value that may be negative"));
            }
            let r = x.sqrt();
            let lo = ((x as f64) - e).max(0.0);
            let prop = if lo > 0.0 { e / (2.0 * lo.sqrt()) } else { e.sqrt() };
            float(r, prop + 4.0 * ulp(r))?
        }
        (Un::Sin | Un::Cos, V::F(x, e)) => {
            if (x.abs() as f64) + e > std::f64::consts::PI {
                return Err(Skip("sin/cos outside [-pi, pi] (no WGSL bound)"));
            }
            let r = if op == Un::Sin { x.sin() } else { x.cos() };
            float(r, e + 2f64.powi(-11) + ulp(r))?
        }
        (op, v) => unreachable!("{op:?} {v:?}"),
    })
}

fn binary(op: Bin, a: V, b: V) -> R<V> {
    let ov = || Skip("integer overflow of a plain operator (panics on the CPU)");
    let dz = || Skip("integer division by zero or MIN / -1 (panics on the CPU)");
    Ok(match (a, b) {
        (V::I(x), V::I(y)) => match op {
            Bin::Add => V::I(x.checked_add(y).ok_or_else(ov)?),
            Bin::Sub => V::I(x.checked_sub(y).ok_or_else(ov)?),
            Bin::Mul => V::I(x.checked_mul(y).ok_or_else(ov)?),
            Bin::Div => V::I(x.checked_div(y).ok_or_else(dz)?),
            Bin::Rem => V::I(x.checked_rem(y).ok_or_else(dz)?),
            Bin::WAdd => V::I(x.wrapping_add(y)),
            Bin::WSub => V::I(x.wrapping_sub(y)),
            Bin::WMul => V::I(x.wrapping_mul(y)),
            Bin::And => V::I(x & y),
            Bin::Or => V::I(x | y),
            Bin::Xor => V::I(x ^ y),
            Bin::Shl => V::I(x << (y & 31)),
            Bin::Shr => V::I(x >> (y & 31)),
            Bin::Min => V::I(x.min(y)),
            Bin::Max => V::I(x.max(y)),
            Bin::Lt => V::B(x < y),
            Bin::Le => V::B(x <= y),
            Bin::Eq => V::B(x == y),
            Bin::Ne => V::B(x != y),
            Bin::LAnd | Bin::LOr => unreachable!(),
        },
        (V::U(x), V::U(y)) => match op {
            Bin::Add => V::U(x.checked_add(y).ok_or_else(ov)?),
            Bin::Sub => V::U(x.checked_sub(y).ok_or_else(ov)?),
            Bin::Mul => V::U(x.checked_mul(y).ok_or_else(ov)?),
            Bin::Div => V::U(x.checked_div(y).ok_or_else(dz)?),
            Bin::Rem => V::U(x.checked_rem(y).ok_or_else(dz)?),
            Bin::WAdd => V::U(x.wrapping_add(y)),
            Bin::WSub => V::U(x.wrapping_sub(y)),
            Bin::WMul => V::U(x.wrapping_mul(y)),
            Bin::And => V::U(x & y),
            Bin::Or => V::U(x | y),
            Bin::Xor => V::U(x ^ y),
            Bin::Shl => V::U(x << (y & 31)),
            Bin::Shr => V::U(x >> (y & 31)),
            Bin::Min => V::U(x.min(y)),
            Bin::Max => V::U(x.max(y)),
            Bin::Lt => V::B(x < y),
            Bin::Le => V::B(x <= y),
            Bin::Eq => V::B(x == y),
            Bin::Ne => V::B(x != y),
            Bin::LAnd | Bin::LOr => unreachable!(),
        },
        (V::F(x, ex), V::F(y, ey)) => {
            let (ax, ay) = (x.abs() as f64, y.abs() as f64);
            match op {
                Bin::Add => {
                    let r = x + y;
                    float(r, ex + ey + ulp(r))?
                }
                Bin::Sub => {
                    let r = x - y;
                    float(r, ex + ey + ulp(r))?
                }
                Bin::Mul => {
                    let r = x * y;
                    float(r, ax * ey + ay * ex + ex * ey + ulp(r))?
                }
                Bin::Div => {
                    if ay <= 2.0 * ey || ay < 1e-30 {
                        return Err(Skip("float division by a value that may be zero"));
                    }
                    let r = x / y;
                    float(r, (ax * ey + ay * ex) / (ay * (ay - ey)) + 3.0 * ulp(r))?
                }
                Bin::Min => float(x.min(y), ex.max(ey))?,
                Bin::Max => float(x.max(y), ex.max(ey))?,
                Bin::Lt | Bin::Le | Bin::Eq | Bin::Ne => {
                    // Decided only if the values are far enough apart (or
                    // both exact).
                    let d = (x as f64 - y as f64).abs();
                    decided(ex + ey == 0.0 || d > ex + ey)?;
                    V::B(match op {
                        Bin::Lt => x < y,
                        Bin::Le => x <= y,
                        Bin::Eq => x == y,
                        _ => x != y,
                    })
                }
                _ => unreachable!("{op:?} on floats"),
            }
        }
        (V::B(x), V::B(y)) => match op {
            Bin::Eq => V::B(x == y),
            Bin::Ne => V::B(x != y),
            _ => unreachable!("{op:?} on bools"),
        },
        (a, b) => unreachable!("{op:?} on {a:?}, {b:?}"),
    })
}
