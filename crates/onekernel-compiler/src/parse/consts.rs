//! Constants: `const TILE: usize = 16;` in a kernel's body (and, through
//! `#[onekernel::kernels]`, in the module around it), evaluated when the
//! kernel is compiled so that they can size arrays and shared memory.

use super::{strip, strip_type, Binding, Parser};
use crate::diagnostic::Diagnostic;
use crate::hir::{ConstDecl, ConstId, ConstValue};
use crate::types::Ty;
use syn::spanned::Spanned;

impl Parser<'_> {
    /// `const NAME: T = expr;`: evaluates and binds it.
    pub(super) fn const_item(&mut self, c: &syn::ItemConst) -> Option<ConstId> {
        let ty = self.scalar_type(&c.ty)?;
        let value = match self.const_eval(&c.expr) {
            Some(v) => v,
            None => {
                self.diags.push(
                    Diagnostic::new(
                        c.expr.span(),
                        format!("the value of `{}` must be known when the kernel is compiled", c.ident),
                    )
                    .help("write it with literals, other constants, arithmetic and `as` casts"),
                );
                return None;
            }
        };
        let Some(bits) = const_bits(value, ty) else {
            self.diags
                .push(Diagnostic::new(c.expr.span(), format!("the value of `{}` does not fit in `{ty}`", c.ident)));
            return None;
        };
        let name = c.ident.to_string();
        let id = self.f.consts.append(ConstDecl { name: name.clone(), ty, bits, value, item: c.clone() });
        self.scopes.last_mut().expect("scope").insert(name, Binding::Const(id));
        Some(id)
    }

    /// The value of a constant expression, or None.
    pub(super) fn const_eval(&mut self, e: &syn::Expr) -> Option<ConstValue> {
        use ConstValue::*;
        Some(match strip(e) {
            syn::Expr::Lit(l) => match &l.lit {
                syn::Lit::Int(i) if matches!(i.suffix(), "f32" | "f64") => Float(i.base10_digits().parse().ok()?),
                syn::Lit::Int(i) => Int(i.base10_parse().ok()?),
                syn::Lit::Float(f) => Float(f.base10_parse().ok()?),
                syn::Lit::Bool(b) => Bool(b.value),
                _ => return None,
            },
            syn::Expr::Path(p) => {
                if let Some(ident) = p.path.get_ident() {
                    match self.lookup_or_module_const(&ident.to_string())? {
                        Binding::Const(id) => self.f.consts[id].value,
                        _ => return None,
                    }
                } else {
                    let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                    crate::builtins::named_const(&segs)?.value()
                }
            }
            syn::Expr::Unary(u) => match (u.op, self.const_eval(&u.expr)?) {
                (syn::UnOp::Neg(_), Int(v)) => Int(-v),
                (syn::UnOp::Neg(_), Float(v)) => Float(-v),
                (syn::UnOp::Not(_), Bool(v)) => Bool(!v),
                _ => return None,
            },
            syn::Expr::Binary(b) => {
                use syn::BinOp as B;
                match (self.const_eval(&b.left)?, self.const_eval(&b.right)?) {
                    (Int(x), Int(y)) => match b.op {
                        B::Add(_) => Int(x.checked_add(y)?),
                        B::Sub(_) => Int(x.checked_sub(y)?),
                        B::Mul(_) => Int(x.checked_mul(y)?),
                        B::Div(_) => Int(x.checked_div(y)?),
                        B::Rem(_) => Int(x.checked_rem(y)?),
                        B::Shl(_) => Int(x.checked_shl(u32::try_from(y).ok()?)?),
                        B::Shr(_) => Int(x.checked_shr(u32::try_from(y).ok()?)?),
                        B::BitAnd(_) => Int(x & y),
                        B::BitOr(_) => Int(x | y),
                        B::BitXor(_) => Int(x ^ y),
                        B::Eq(_) => Bool(x == y),
                        B::Ne(_) => Bool(x != y),
                        B::Lt(_) => Bool(x < y),
                        B::Le(_) => Bool(x <= y),
                        B::Gt(_) => Bool(x > y),
                        B::Ge(_) => Bool(x >= y),
                        _ => return None,
                    },
                    (Float(x), Float(y)) => match b.op {
                        B::Add(_) => Float(x + y),
                        B::Sub(_) => Float(x - y),
                        B::Mul(_) => Float(x * y),
                        B::Div(_) => Float(x / y),
                        _ => return None,
                    },
                    (Bool(x), Bool(y)) => match b.op {
                        B::And(_) => Bool(x && y),
                        B::Or(_) => Bool(x || y),
                        _ => return None,
                    },
                    _ => return None,
                }
            }
            syn::Expr::Cast(c) => {
                let to = match strip_type(&c.ty) {
                    syn::Type::Path(p) => Ty::from_name(&p.path.segments.last()?.ident.to_string())?,
                    _ => return None,
                };
                match (self.const_eval(&c.expr)?, to) {
                    (Int(v), t) if t.is_integer() => Int(v),
                    (Int(v), Ty::F32 | Ty::F64) => Float(v as f64),
                    (Float(v), t) if t.is_integer() => Int(v as i128),
                    (Float(v), Ty::F32) => Float(f64::from(v as f32)),
                    (Float(v), Ty::F64) => Float(v),
                    (Bool(v), t) if t.is_integer() => Int(i128::from(v)),
                    _ => return None,
                }
            }
            syn::Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                syn::Stmt::Expr(e, None) => self.const_eval(e)?,
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// The bits of `value` as a `ty` (the float's bits, or two's complement,
/// in the low bits), if it fits.
fn const_bits(value: ConstValue, ty: Ty) -> Option<u64> {
    match (value, ty) {
        (ConstValue::Int(v), Ty::I32) => i32::try_from(v).ok().map(|v| u64::from(v as u32)),
        (ConstValue::Int(v), Ty::U32 | Ty::Usize) => u32::try_from(v).ok().map(u64::from),
        (ConstValue::Int(v), Ty::I64) => i64::try_from(v).ok().map(|v| v as u64),
        (ConstValue::Int(v), Ty::U64) => u64::try_from(v).ok(),
        (ConstValue::Float(v), Ty::F32) => Some(u64::from((v as f32).to_bits())),
        (ConstValue::Float(v), Ty::F64) => Some(v.to_bits()),
        (ConstValue::Bool(b), Ty::Bool) => Some(u64::from(b)),
        _ => None,
    }
}
