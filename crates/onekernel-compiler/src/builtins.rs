//! The names a kernel can call, in one table each: builtin values and
//! subgroup collectives (the ABI's [`Builtin`] and [`SubgroupCollective`],
//! named by their own `name()`), barriers and shared memory ([`OTHER`]);
//! all of them in [`functions`]; math methods ([`MATH_METHODS`]) and named
//! constants ([`named_const`]).
//!
//! The recogniser ([`crate::parse`]) looks names up here and nowhere else.
//! Adding a builtin value means adding a variant to `onekernel_abi::Builtin`;
//! the exhaustive `match`es of the ABI's methods, the naga lowering and the
//! runtime's `Invocation::get` then say what else must handle it (see
//! docs/architecture.md, "Add a builtin").

use crate::hir::{BarrierKind, Builtin, ConstValue, ElemBound, MathOp, NamedConst, SubgroupCollective};
use crate::types::{Lane, Ty, VecTy};

/// What a builtin function call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinFn {
    /// A value of the invocation: `global_id()`, `subgroup_size()`, ...
    Value(Builtin),
    /// `workgroup_barrier()` / `storage_barrier()`.
    Barrier(BarrierKind),
    /// `shared::<[T; N]>()`: declares workgroup memory.
    Shared,
    /// `subgroup_add(v)` and the other subgroup collectives.
    Subgroup(SubgroupCollective),
    /// `workgroup_uniform_load(&tile[i])`.
    UniformLoad,
}

/// The builtin functions that are neither values nor collectives, by their
/// Rust name.
pub const OTHER: [(&str, BuiltinFn); 4] = [
    ("workgroup_barrier", BuiltinFn::Barrier(BarrierKind::Workgroup)),
    ("storage_barrier", BuiltinFn::Barrier(BarrierKind::Storage)),
    ("shared", BuiltinFn::Shared),
    ("workgroup_uniform_load", BuiltinFn::UniformLoad),
];

/// Every builtin function, by its Rust name (the last segment of the path
/// as written: `global_id()` and `onekernel::global_id()` are the same).
pub fn functions() -> impl Iterator<Item = (&'static str, BuiltinFn)> {
    let values = Builtin::ALL.into_iter().map(|b| (b.name(), BuiltinFn::Value(b)));
    let collectives = SubgroupCollective::ALL.into_iter().map(|c| (c.name(), BuiltinFn::Subgroup(c)));
    values.chain(collectives).chain(OTHER)
}

/// Looks a builtin function up by name.
pub fn function(name: &str) -> Option<BuiltinFn> {
    functions().find(|(n, _)| *n == name).map(|(_, f)| f)
}

impl BarrierKind {
    /// The Rust name.
    pub fn name(self) -> &'static str {
        OTHER.iter().find(|(_, f)| *f == BuiltinFn::Barrier(self)).map_or("?", |(n, _)| n)
    }
}

/// Every math method: its name and its number of arguments including the
/// receiver.
pub const MATH_METHODS: [(MathOp, &str, usize); 77] = {
    use MathOp::*;
    [
        (Abs, "abs", 1),
        (Sqrt, "sqrt", 1),
        (Exp, "exp", 1),
        (Exp2, "exp2", 1),
        (Ln, "ln", 1),
        (Log2, "log2", 1),
        (Log10, "log10", 1),
        (Powf, "powf", 2),
        (Powi, "powi", 2),
        (Pow, "pow", 2),
        (Sin, "sin", 1),
        (Cos, "cos", 1),
        (Tan, "tan", 1),
        (Asin, "asin", 1),
        (Acos, "acos", 1),
        (Atan, "atan", 1),
        (Atan2, "atan2", 2),
        (Sinh, "sinh", 1),
        (Cosh, "cosh", 1),
        (Tanh, "tanh", 1),
        (Floor, "floor", 1),
        (Ceil, "ceil", 1),
        (Round, "round", 1),
        (Trunc, "trunc", 1),
        (Fract, "fract", 1),
        (Min, "min", 2),
        (Max, "max", 2),
        (Clamp, "clamp", 3),
        (MulAdd, "mul_add", 3),
        (Signum, "signum", 1),
        (Recip, "recip", 1),
        (ToRadians, "to_radians", 1),
        (ToDegrees, "to_degrees", 1),
        (Hypot, "hypot", 2),
        (CountOnes, "count_ones", 1),
        (LeadingZeros, "leading_zeros", 1),
        (TrailingZeros, "trailing_zeros", 1),
        (ReverseBits, "reverse_bits", 1),
        (WrappingAdd, "wrapping_add", 2),
        (WrappingSub, "wrapping_sub", 2),
        (WrappingMul, "wrapping_mul", 2),
        (WrappingDiv, "wrapping_div", 2),
        (WrappingRem, "wrapping_rem", 2),
        (WrappingNeg, "wrapping_neg", 1),
        (WrappingAbs, "wrapping_abs", 1),
        (RemEuclid, "rem_euclid", 2),
        (AbsDiff, "abs_diff", 2),
        (RotateLeft, "rotate_left", 2),
        (RotateRight, "rotate_right", 2),
        (IsNan, "is_nan", 1),
        (IsFinite, "is_finite", 1),
        (IsInfinite, "is_infinite", 1),
        (ToBits, "to_bits", 1),
        (FromBits, "from_bits", 1),
        (Cbrt, "cbrt", 1),
        (Dot, "dot", 2),
        (Length, "length", 1),
        (LengthSquared, "length_squared", 1),
        (Normalize, "normalize", 1),
        (Distance, "distance", 2),
        (DistanceSquared, "distance_squared", 2),
        (ElementSum, "element_sum", 1),
        (ElementProduct, "element_product", 1),
        (MinElement, "min_element", 1),
        (MaxElement, "max_element", 1),
        (Lerp, "lerp", 3),
        (Cross, "cross", 2),
        (Extend, "extend", 2),
        (Truncate, "truncate", 1),
        (F16FromF32, "from_f32", 1),
        (F16FromF64, "from_f64", 1),
        (ToF32, "to_f32", 1),
        (ToF64, "to_f64", 1),
        (FromVec2, "from_vec2", 1),
        (FromVec4, "from_vec4", 1),
        (ToVec2, "to_vec2", 1),
        (ToVec4, "to_vec4", 1),
    ]
};

/// Looks a math method up by name.
pub fn math_method(name: &str) -> Option<MathOp> {
    MATH_METHODS.iter().find(|(_, n, _)| *n == name).map(|(op, _, _)| *op)
}

impl MathOp {
    /// The Rust method name.
    pub fn name(self) -> &'static str {
        MATH_METHODS.iter().find(|(op, _, _)| *op == self).map_or("?", |(_, n, _)| n)
    }

    /// Number of arguments including the receiver.
    pub fn arity(self) -> usize {
        MATH_METHODS.iter().find(|(op, _, _)| *op == self).map_or(1, |(_, _, a)| *a)
    }
}

/// `f32::MAX`, `i32::MIN`, `std::f32::consts::PI`, `f16::ONE`, ... from
/// the path's segments.
pub fn named_const(segs: &[String]) -> Option<NamedConst> {
    let n = segs.len();
    if n < 2 {
        return None;
    }
    let (ty_name, name) = (segs[n - 2].as_str(), segs[n - 1].as_str());
    let f = |v: f32| Some(NamedConst { ty: Ty::F32, bits: u64::from(v.to_bits()) });
    let d = |v: f64| Some(NamedConst { ty: Ty::F64, bits: v.to_bits() });
    let h = |v: half::f16| Some(NamedConst { ty: Ty::F16, bits: u64::from(v.to_bits()) });
    match (ty_name, name) {
        ("f32", "MAX") => f(f32::MAX),
        ("f32", "MIN") => f(f32::MIN),
        ("f32", "MIN_POSITIVE") => f(f32::MIN_POSITIVE),
        ("f32", "EPSILON") => f(f32::EPSILON),
        ("f32", "INFINITY") => f(f32::INFINITY),
        ("f32", "NEG_INFINITY") => f(f32::NEG_INFINITY),
        ("f32", "NAN") => f(f32::NAN),
        ("consts", c) if n >= 3 && segs[n - 3] == "f32" => {
            use std::f32::consts as k;
            match c {
                "PI" => f(k::PI),
                "TAU" => f(k::TAU),
                "E" => f(k::E),
                "SQRT_2" => f(k::SQRT_2),
                "LN_2" => f(k::LN_2),
                "LN_10" => f(k::LN_10),
                "FRAC_PI_2" => f(k::FRAC_PI_2),
                "FRAC_PI_4" => f(k::FRAC_PI_4),
                "FRAC_1_SQRT_2" => f(k::FRAC_1_SQRT_2),
                "LOG2_E" => f(k::LOG2_E),
                _ => None,
            }
        }
        ("f64", "MAX") => d(f64::MAX),
        ("f64", "MIN") => d(f64::MIN),
        ("f64", "MIN_POSITIVE") => d(f64::MIN_POSITIVE),
        ("f64", "EPSILON") => d(f64::EPSILON),
        ("f64", "INFINITY") => d(f64::INFINITY),
        ("f64", "NEG_INFINITY") => d(f64::NEG_INFINITY),
        ("f64", "NAN") => d(f64::NAN),
        ("consts", c) if n >= 3 && segs[n - 3] == "f64" => {
            use std::f64::consts as k;
            match c {
                "PI" => d(k::PI),
                "TAU" => d(k::TAU),
                "E" => d(k::E),
                "SQRT_2" => d(k::SQRT_2),
                "LN_2" => d(k::LN_2),
                "LN_10" => d(k::LN_10),
                "FRAC_PI_2" => d(k::FRAC_PI_2),
                "FRAC_PI_4" => d(k::FRAC_PI_4),
                "FRAC_1_SQRT_2" => d(k::FRAC_1_SQRT_2),
                "LOG2_E" => d(k::LOG2_E),
                _ => None,
            }
        }
        // half's associated constants (it has no `consts` module).
        ("f16", c) => {
            use half::f16 as k;
            match c {
                "ZERO" => h(k::ZERO),
                "ONE" => h(k::ONE),
                "NEG_ONE" => h(k::NEG_ONE),
                "NEG_ZERO" => h(k::NEG_ZERO),
                "MAX" => h(k::MAX),
                "MIN" => h(k::MIN),
                "MIN_POSITIVE" => h(k::MIN_POSITIVE),
                "EPSILON" => h(k::EPSILON),
                "INFINITY" => h(k::INFINITY),
                "NEG_INFINITY" => h(k::NEG_INFINITY),
                "NAN" => h(k::NAN),
                "E" => h(k::E),
                "PI" => h(k::PI),
                _ => None,
            }
        }
        ("i32", "MAX") => Some(NamedConst { ty: Ty::I32, bits: u64::from(i32::MAX as u32) }),
        ("i32", "MIN") => Some(NamedConst { ty: Ty::I32, bits: u64::from(i32::MIN as u32) }),
        ("u32", "MAX") => Some(NamedConst { ty: Ty::U32, bits: u64::from(u32::MAX) }),
        ("u32", "MIN") => Some(NamedConst { ty: Ty::U32, bits: 0 }),
        ("i64", "MAX") => Some(NamedConst { ty: Ty::I64, bits: i64::MAX as u64 }),
        ("i64", "MIN") => Some(NamedConst { ty: Ty::I64, bits: i64::MIN as u64 }),
        ("u64", "MAX") => Some(NamedConst { ty: Ty::U64, bits: u64::MAX }),
        ("u64", "MIN") => Some(NamedConst { ty: Ty::U64, bits: 0 }),
        _ => None,
    }
}

/// The value of glam's vector constant `name` (`ZERO`, `ONE`, `NEG_ONE`,
/// `X`, `NEG_Y`, `MIN`, `MAX`, ...), as each lane's bits; None for a name
/// the vector type has not.
pub fn vector_const(ty: VecTy, name: &str) -> Option<[u32; 4]> {
    if ty.lane == Lane::F16 {
        // onekernel's `F16Vec2`/`F16Vec4` have `ZERO` and `ONE` only.
        let one = u32::from(half::f16::ONE.to_bits());
        return match name {
            "ZERO" => Some([0; 4]),
            "ONE" => Some([one; 4]),
            _ => None,
        };
    }
    let bits = |v: f32| match ty.lane {
        Lane::F32 => v.to_bits(),
        Lane::I32 => (v as i32) as u32,
        Lane::U32 | Lane::F16 => v as u32,
    };
    let signed = ty.lane != Lane::U32;
    let unit = |axis: usize, v: f32| -> Option<[u32; 4]> {
        if axis >= usize::from(ty.size) || (v < 0.0 && !signed) {
            return None;
        }
        let mut lanes = [bits(0.0); 4];
        lanes[axis] = bits(v);
        Some(lanes)
    };
    let all = |b: u32| Some([b; 4]);
    match name {
        "ZERO" => all(bits(0.0)),
        "ONE" => all(bits(1.0)),
        "NEG_ONE" if signed => all(bits(-1.0)),
        "X" => unit(0, 1.0),
        "Y" => unit(1, 1.0),
        "Z" => unit(2, 1.0),
        "W" => unit(3, 1.0),
        "NEG_X" => unit(0, -1.0),
        "NEG_Y" => unit(1, -1.0),
        "NEG_Z" => unit(2, -1.0),
        "NEG_W" => unit(3, -1.0),
        "MIN" => all(match ty.lane {
            Lane::F32 => f32::MIN.to_bits(),
            Lane::I32 => i32::MIN as u32,
            Lane::U32 | Lane::F16 => 0,
        }),
        "MAX" => all(match ty.lane {
            Lane::F32 => f32::MAX.to_bits(),
            Lane::I32 => i32::MAX as u32,
            Lane::U32 | Lane::F16 => u32::MAX,
        }),
        _ => None,
    }
}

/// The lanes a swizzle method names (`xy` → `[0, 1]`, `zyx` → `[2, 1, 0]`),
/// for a vector of `size` lanes: two to four of `x`, `y`, `z`, `w`, each
/// within the vector.
pub fn swizzle(name: &str, size: u8) -> Option<Vec<u32>> {
    if !(2..=4).contains(&name.len()) {
        return None;
    }
    name.chars()
        .map(|c| match c {
            'x' => Some(0),
            'y' => Some(1),
            'z' => Some(2),
            'w' => Some(3),
            _ => None,
        })
        .map(|lane| lane.filter(|l| *l < u32::from(size)))
        .collect()
}

/// The bounds a generic kernel's element type may have (the traits of
/// `onekernel::num`, by their Rust name) and the types each stands for, in
/// the order the kernel is compiled for them.
pub const ELEMENT_BOUNDS: [(&str, ElemBound, &[Ty]); 3] = [
    ("Num", ElemBound::Num, &[Ty::F32, Ty::I32, Ty::U32, Ty::F16, Ty::F64, Ty::I64, Ty::U64]),
    ("Float", ElemBound::Float, &[Ty::F32, Ty::F64]),
    ("Int", ElemBound::Int, &[Ty::I32, Ty::U32, Ty::I64, Ty::U64]),
];

/// Looks an element bound up by its trait's name.
pub fn element_bound(name: &str) -> Option<ElemBound> {
    ELEMENT_BOUNDS.iter().find(|(n, _, _)| *n == name).map(|(_, b, _)| *b)
}

impl ElemBound {
    /// The trait's name.
    pub fn name(self) -> &'static str {
        ELEMENT_BOUNDS.iter().find(|(_, b, _)| *b == self).map_or("?", |(n, _, _)| n)
    }

    /// The types the bound stands for.
    pub fn types(self) -> &'static [Ty] {
        ELEMENT_BOUNDS.iter().find(|(_, b, _)| *b == self).map_or(&[], |(_, _, t)| t)
    }
}

/// The associated constants of `onekernel::num::Num` for one of its types:
/// `T::ZERO`, `T::ONE`, `T::MIN`, `T::MAX` in a generic kernel compiled for
/// `ty`.
pub fn element_const(ty: Ty, name: &str) -> Option<NamedConst> {
    let f = |v: f64| match ty {
        Ty::F32 => Some(NamedConst { ty, bits: u64::from((v as f32).to_bits()) }),
        Ty::F16 => Some(NamedConst { ty, bits: u64::from(half::f16::from_f64(v).to_bits()) }),
        Ty::F64 => Some(NamedConst { ty, bits: v.to_bits() }),
        _ => None,
    };
    // Integers as their two's complement in the type's width.
    let i = |v: i128| {
        let bits = match ty {
            Ty::I32 | Ty::U32 => u64::from(v as u32),
            _ => v as u64,
        };
        Some(NamedConst { ty, bits })
    };
    let (min, max): (i128, i128) = match ty {
        Ty::I32 => (i32::MIN.into(), i32::MAX.into()),
        Ty::U32 => (0, u32::MAX.into()),
        Ty::I64 => (i64::MIN.into(), i64::MAX.into()),
        Ty::U64 => (0, u64::MAX.into()),
        Ty::F32 | Ty::F16 | Ty::F64 => {
            let max = match ty {
                Ty::F32 => f64::from(f32::MAX),
                Ty::F16 => half::f16::MAX.to_f64(),
                _ => f64::MAX,
            };
            return match name {
                "ZERO" => f(0.0),
                "ONE" => f(1.0),
                "MIN" => f(-max),
                "MAX" => f(max),
                _ => None,
            };
        }
        _ => return None,
    };
    match name {
        "ZERO" => i(0),
        "ONE" => i(1),
        "MIN" => i(min),
        "MAX" => i(max),
        _ => None,
    }
}

impl NamedConst {
    /// The value, as the compiler evaluates constants.
    pub fn value(self) -> ConstValue {
        match self.ty {
            Ty::F16 => ConstValue::Float(half::f16::from_bits(self.bits as u16).to_f64()),
            Ty::F32 => ConstValue::Float(f64::from(f32::from_bits(self.bits as u32))),
            Ty::F64 => ConstValue::Float(f64::from_bits(self.bits)),
            Ty::I32 => ConstValue::Int(i128::from(self.bits as u32 as i32)),
            Ty::I64 => ConstValue::Int(i128::from(self.bits as i64)),
            _ => ConstValue::Int(i128::from(self.bits)),
        }
    }
}

/// "did you mean" for an unsupported method: a known alias, else the
/// nearest supported name by edit distance.
pub fn suggest_method(name: &str) -> String {
    let full = match name {
        "iter" | "into_iter" | "iter_mut" => {
            Some("loop over the indices instead: `for j in 0..a.len() { ... a[j] ... }`")
        }
        "get" | "get_mut" => Some("check the index, then index: `if i < a.len() { ... a[i] ... }`"),
        "clone" | "to_owned" | "copied" | "cloned" => {
            Some("scalars are `Copy`: use the value itself and drop the call")
        }
        "sin_cos" => Some("use `sin()` and `cos()`"),
        _ => None,
    };
    if let Some(h) = full {
        return h.to_string();
    }
    let alias = match name {
        "log" => Some("ln` (natural log) or `log2"),
        "powf64" => Some("powf"),
        "saturating_add" | "checked_add" | "overflowing_add" => Some("wrapping_add"),
        "saturating_sub" | "checked_sub" => Some("wrapping_sub"),
        "checked_mul" | "saturating_mul" => Some("wrapping_mul"),
        "rsqrt" | "inverse_sqrt" => Some("sqrt().recip"),
        "exp_m1" => Some("exp"),
        "ln_1p" => Some("ln"),
        "copysign" => Some("signum"),
        _ => None,
    };
    if let Some(a) = alias {
        return format!("use `{a}`");
    }
    let names = MATH_METHODS.iter().map(|(_, n, _)| *n).chain(["len"]);
    match names.map(|m| (edit_distance(name, m), m)).min() {
        Some((d, m)) if d <= 3 => format!("did you mean `{m}`? See docs/supported-rust.md for every supported method"),
        _ => "see docs/supported-rust.md for the supported math methods".to_string(),
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip() {
        for (name, f) in functions() {
            assert_eq!(function(name), Some(f));
        }
        for (op, name, arity) in MATH_METHODS {
            assert_eq!((math_method(name), op.name(), op.arity()), (Some(op), name, arity));
        }
        assert_eq!(Builtin::GridDim.name(), "grid_dim");
        assert_eq!(BarrierKind::Storage.name(), "storage_barrier");
        assert_eq!(SubgroupCollective::ShuffleXor.name(), "subgroup_shuffle_xor");
        // No two builtins share a name.
        let names: Vec<&str> = functions().map(|(n, _)| n).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(suggest_method("sqr").contains("`sqrt`"));
    }

    #[test]
    fn vector_constants_and_swizzles() {
        let v = |n| VecTy::from_name(n).unwrap();
        assert_eq!(vector_const(v("Vec2"), "Y"), Some([0, 1.0f32.to_bits(), 0, 0]));
        assert_eq!(vector_const(v("IVec4"), "NEG_W"), Some([0, 0, 0, -1i32 as u32]));
        assert_eq!(vector_const(v("UVec4"), "MAX"), Some([u32::MAX; 4]));
        // Only what glam has: no `Z` on two lanes, nothing negative unsigned.
        assert_eq!((vector_const(v("Vec2"), "Z"), vector_const(v("UVec2"), "NEG_ONE")), (None, None));
        // The f16 vectors: lanes of f16 bits, `ZERO` and `ONE` only.
        assert_eq!(vector_const(v("F16Vec4"), "ONE"), Some([0x3c00; 4]));
        assert_eq!((vector_const(v("F16Vec2"), "X"), vector_const(v("F16Vec4"), "MAX")), (None, None));
        assert_eq!(swizzle("zyx", 4), Some(vec![2, 1, 0]));
        assert_eq!(
            (swizzle("xz", 2), swizzle("x", 4), swizzle("xyzwx", 4), swizzle("len", 4)),
            (None, None, None, None)
        );
    }
}
