//! The checked form of a kernel: a small tree made from syn's AST by the
//! recogniser ([`crate::parse`]), typed by [`crate::infer`], and turned into
//! everything else by the back ends: naga IR ([`crate::lower`]), the CPU
//! body ([`crate::expand::cpu_body`]) and the explain view.
//!
//! Expressions, locals, parameters and shared arrays live in one [`Arena`]
//! each per function and refer to each other by typed [`Handle`]s, the way
//! naga's own IR does. Besides what the GPU needs, the tree keeps the few
//! tokens the CPU body repeats as the user wrote them (the paths of
//! builtins, atomic orderings, parameter types), so that the user's
//! imports resolve and stay used.

use crate::arena::{Arena, Handle};
use crate::types::Ty;
pub use onekernel_abi::{Builtin, BuiltinType, SubgroupCollective};
use proc_macro2::Span;

/// An expression's id.
pub type ExprId = Handle<Expr>;
/// A local's id.
pub type LocalId = Handle<Local>;
/// A parameter's id.
pub type ParamId = Handle<Param>;
/// A shared array's id.
pub type SharedId = Handle<SharedDecl>;
/// A constant's id.
pub type ConstId = Handle<ConstDecl>;

/// A kernel or a helper function.
#[derive(Debug)]
pub struct Function {
    /// The Rust name.
    pub name: String,
    /// Where the name is, for messages.
    pub span: Span,
    /// The parameters in order.
    pub params: Arena<Param>,
    /// The result type (`Unit` for kernels).
    pub ret: Ty,
    /// Every local `let` binding (shadowing makes new ones).
    pub locals: Arena<Local>,
    /// Every expression.
    pub exprs: Arena<Expr>,
    /// The body.
    pub body: Block,
    /// The helper functions this one calls, each once, in order of first
    /// call, with the span of that call: the call graph, computed here only.
    pub calls: Vec<CallSite>,
    /// Workgroup shared arrays declared in the kernel's body.
    pub shared: Arena<SharedDecl>,
    /// Constants the function can see: its own `const` items.
    pub consts: Arena<ConstDecl>,
    /// Values known when the pipeline is created, not when the kernel is
    /// compiled: the kernel's const parameters (`fn k<const N: u32>`), then
    /// the constants of its Rust scope it names (`BLOCK`, see
    /// [`OverrideDecl`]). Each is a WGSL `override` (`ExprKind::Override`
    /// holds the index here).
    pub overrides: Vec<OverrideDecl>,
    /// Number of synchronising call sites: barriers, subgroup collectives
    /// and `workgroup_uniform_load`s (each has an id, in source order).
    pub barriers: u32,
    /// Call arguments that pass a whole buffer (`helper(a)`): always an
    /// error, left for the callee to explain (a helper that takes a buffer
    /// reports it at its definition; otherwise rustc's type check does).
    pub buffer_args: Vec<Span>,
    /// Number of debug call sites (`ExprKind::Debug`), in source order.
    pub debug_sites: u32,
}

/// One call of a helper function.
#[derive(Clone, Debug)]
pub struct CallSite {
    /// The helper's name.
    pub name: String,
    /// The call.
    pub span: Span,
}

/// The bound of a generic kernel's element type: `fn axpy<T: Num>(..)`.
/// The kernel is compiled once per type of the bound
/// ([`crate::builtins::ELEMENT_BOUNDS`] lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElemBound {
    /// `onekernel::num::Num`: every kernel scalar type.
    Num,
    /// `onekernel::num::Float`: `f32` and `f64`.
    Float,
    /// `onekernel::num::Int`: `i32`, `u32`, `i64` and `u64`.
    Int,
}

/// A generic kernel's type parameter, as recognised from its signature.
#[derive(Clone, Debug)]
pub struct GenericParam {
    /// Its name (`T`).
    pub name: String,
    /// Its bound.
    pub bound: ElemBound,
    /// The parameter as written, for messages.
    pub span: Span,
}

/// How a parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// `&[T]`: a read-only storage buffer.
    Buffer { elem: Ty },
    /// `&mut [T]`: a read-write storage buffer.
    BufferMut { elem: Ty },
    /// A scalar by value: uniform data in a kernel, an argument in a helper.
    Scalar { ty: Ty, mutable: bool },
    /// `&[AtomicU32]` / `&[AtomicI32]`: a read-write storage buffer of
    /// atomics; `elem` is `u32` or `i32`.
    Atomics { elem: Ty },
}

impl ParamKind {
    /// The element type of a buffer, or the scalar's type.
    pub fn ty(self) -> Ty {
        match self {
            ParamKind::Buffer { elem } | ParamKind::BufferMut { elem } | ParamKind::Atomics { elem } => elem,
            ParamKind::Scalar { ty, .. } => ty,
        }
    }

    /// True for the three kinds of buffer.
    pub fn is_buffer(self) -> bool {
        !matches!(self, ParamKind::Scalar { .. })
    }
}

/// One parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// The Rust name.
    pub name: String,
    /// Where it is declared (its name).
    pub span: Span,
    /// How it is passed.
    pub kind: ParamKind,
    /// The type as written (`&[AtomicU32]`), repeated in the CPU body's
    /// signature so that the user's imports stay used.
    pub written_ty: syn::Type,
}

/// `let tile = shared::<[f32; 256]>();`: a workgroup shared array.
#[derive(Clone, Debug)]
pub struct SharedDecl {
    /// The Rust name.
    pub name: String,
    /// Where it is declared.
    pub span: Span,
    /// The element type (`u32`/`i32` for atomics).
    pub elem: Ty,
    /// `[AtomicU32; N]` / `[AtomicI32; N]`.
    pub atomic: bool,
    /// `[N]` or `[rows, cols]`.
    pub dims: Vec<u32>,
    /// The array type as written (`[f32; 256]`).
    pub written_ty: syn::Type,
    /// The callee as written (`shared`, `onekernel::shared`).
    pub callee: syn::Path,
}

impl SharedDecl {
    /// Size in 32-bit words: the elements' bytes, packed, rounded up to a
    /// word (as the CPU executor's `SharedArray::WORDS`).
    pub fn words(&self) -> u32 {
        Self::words_of(self.elem, &self.dims)
    }

    /// [`SharedDecl::words`] of an array of `elem` with `dims` (at most
    /// `u32::MAX`: the caller rejects anything near it).
    pub fn words_of(elem: Ty, dims: &[u32]) -> u32 {
        let bytes = match elem {
            Ty::F16 => 2,
            Ty::F64 | Ty::I64 | Ty::U64 => 8,
            t => t.as_vector().map_or(4, |v| u64::from(v.bytes())),
        };
        let words = (dims.iter().map(|&d| u64::from(d)).product::<u64>().saturating_mul(bytes)).div_ceil(4);
        u32::try_from(words).unwrap_or(u32::MAX)
    }
}

/// `const NAME: T = value;`, evaluated when the kernel is compiled.
#[derive(Clone, Debug)]
pub struct ConstDecl {
    /// The Rust name.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Its value's bits (the float's bits, or the integer's two's
    /// complement, in the low bits for types narrower than 64).
    pub bits: u64,
    /// Its value.
    pub value: ConstValue,
    /// The item as written: the CPU body declares it again.
    pub item: syn::ItemConst,
}

/// A value the kernel uses whose value the compiler does not see, which
/// the launch supplies when the pipeline is created (a WGSL `override`):
/// a const parameter `fn k<const N: u32>` (the launch's `launch::<128>`)
/// or a constant of the kernel's Rust scope, `const BLOCK: usize = 256;`
/// beside a plain `#[kernel]` (the generated launch reads `BLOCK`, and
/// rustc checks its type).
#[derive(Clone, Debug)]
pub struct OverrideDecl {
    /// The Rust name.
    pub name: String,
    /// Its type (`u32`, `i32` or `usize`); for a constant of the kernel's
    /// scope, None until the type check infers it from its uses.
    pub ty: Option<Ty>,
    /// Where it is declared (a const parameter) or first used.
    pub span: Span,
    /// A const parameter (else a constant of the kernel's scope).
    pub generic: bool,
    /// A constant of the kernel's scope whose uses leave it an integer of
    /// any type (`0..BLOCK`): `i32` on the GPU, and the launch converts
    /// the constant's value, whatever its Rust integer type.
    pub any_int: bool,
}

/// A constant's value, as the compiler evaluates it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    /// An integer (of any integer type).
    Int(i128),
    /// A float, as `f64` (rounded to the declared type when used).
    Float(f64),
    /// `true` / `false`.
    Bool(bool),
}

/// `workgroup_barrier()` or `storage_barrier()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    /// Execution barrier plus workgroup memory (WGSL `workgroupBarrier`).
    Workgroup,
    /// Execution barrier plus storage memory (WGSL `storageBarrier`).
    Storage,
}

/// Where a tile is loaded from or stored to: a buffer parameter or a 1-D
/// shared array, at an element offset with a row stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileMem {
    /// `&a` / `&mut c`: a `&[f16]`, `&[f32]`, `&[F16Vec4]` or `&mut [T]` parameter.
    Buffer(ParamId),
    /// `&tile`: a shared array `[f16; N]` (or `[f32; N]`, `[F16Vec4; N]`).
    Shared(SharedId),
}

impl TileMem {
    /// The memory's element type: the tile's element, or an `f16` vector
    /// whose lanes an `f16` tile is loaded from.
    pub fn elem(self, f: &Function) -> Ty {
        match self {
            TileMem::Buffer(p) => f.params[p].kind.ty(),
            TileMem::Shared(s) => f.shared[s].elem,
        }
    }

    /// Lanes per element: 1 for scalars, 2 or 4 for `F16Vec2`/`F16Vec4`
    /// (offsets and strides count elements, the tile reads lanes).
    pub fn lanes(self, f: &Function) -> u8 {
        self.elem(f).as_vector().map_or(1, |v| v.size)
    }
}

/// Matrix-tile operations (`onekernel::tile`): naga's cooperative matrices,
/// the tensor cores of a GPU. Loads, products and stores are subgroup
/// collectives (every invocation of the subgroup takes part), checked like
/// barriers by `uniformity.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileOp {
    /// `Accumulator::<f32, 16, 16>::zeros()`: no operands.
    Zeros(crate::types::TileTy),
    /// `MatrixA::<16, 16>::load(&a, offset, stride)` (or `load_col_major`):
    /// operands `[offset, stride]`.
    Load {
        /// The tile's type.
        tile: crate::types::TileTy,
        /// Where from.
        mem: TileMem,
        /// `load_col_major`: element (r, c) at `offset + c * stride + r`.
        col_major: bool,
    },
    /// `mma(a, b, c)`: `a·b + c`, operands `[a, b, c]`.
    MulAdd,
    /// `c.store(&mut out, offset, stride)` (or `store_col_major`):
    /// operands `[tile, offset, stride]`.
    Store {
        /// Where to.
        mem: TileMem,
        /// `store_col_major`.
        col_major: bool,
    },
}

impl TileOp {
    /// Whether the subgroup must reach it together (all but `zeros`).
    pub fn is_collective(self) -> bool {
        !matches!(self, TileOp::Zeros(_))
    }

    /// The name as written, for messages.
    pub fn name(self) -> &'static str {
        match self {
            TileOp::Zeros(_) => "zeros",
            TileOp::Load { col_major: false, .. } => "load",
            TileOp::Load { col_major: true, .. } => "load_col_major",
            TileOp::MulAdd => "mma",
            TileOp::Store { col_major: false, .. } => "store",
            TileOp::Store { col_major: true, .. } => "store_col_major",
        }
    }
}

/// Atomic operations, by their Rust std names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum AtomicOp {
    Load,
    Store,
    Swap,
    FetchAdd,
    FetchSub,
    FetchMin,
    FetchMax,
    FetchAnd,
    FetchOr,
    FetchXor,
    /// `compare_exchange(current, new, ..).is_ok()`
    CompareExchangeIsOk,
}

impl AtomicOp {
    /// Every operation with its method name.
    pub const ALL: [(AtomicOp, &'static str); 11] = [
        (AtomicOp::Load, "load"),
        (AtomicOp::Store, "store"),
        (AtomicOp::Swap, "swap"),
        (AtomicOp::FetchAdd, "fetch_add"),
        (AtomicOp::FetchSub, "fetch_sub"),
        (AtomicOp::FetchMin, "fetch_min"),
        (AtomicOp::FetchMax, "fetch_max"),
        (AtomicOp::FetchAnd, "fetch_and"),
        (AtomicOp::FetchOr, "fetch_or"),
        (AtomicOp::FetchXor, "fetch_xor"),
        (AtomicOp::CompareExchangeIsOk, "compare_exchange"),
    ];

    /// The method name.
    pub fn method(self) -> &'static str {
        Self::ALL.iter().find(|(o, _)| *o == self).map_or("?", |(_, n)| n)
    }

    /// Value operands before the orderings.
    pub fn values(self) -> usize {
        match self {
            AtomicOp::Load => 0,
            AtomicOp::CompareExchangeIsOk => 2,
            _ => 1,
        }
    }
}

/// Which atomic an operation works on.
#[derive(Clone, Debug)]
pub enum AtomicTarget {
    /// An element of an `&[AtomicU32]` parameter.
    Buffer { param: ParamId, index: ExprId },
    /// An element of a shared atomic array.
    Shared { shared: SharedId, indices: Vec<ExprId> },
}

/// One `let` binding (or a `for` loop variable).
#[derive(Clone, Debug)]
pub struct Local {
    /// The Rust name.
    pub name: String,
    /// Where it is declared.
    pub span: Span,
    /// `let mut`.
    pub mutable: bool,
    /// The declared type, if written.
    pub annotated: Option<Ty>,
}

/// A `{ ... }` block.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// Statements in order.
    pub stmts: Vec<Stmt>,
    /// The final expression without a semicolon: the block's value.
    pub tail: Option<ExprId>,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let x = init;` or `let x;`
    Let {
        /// The binding.
        local: LocalId,
        /// Its value.
        init: Option<ExprId>,
    },
    /// An expression statement (with or without `;`).
    Expr(ExprId),
    /// `let tile = shared::<[f32; 256]>();`: where a shared array comes
    /// into scope (its storage lives as long as the workgroup).
    Shared(SharedId),
    /// `const N: usize = 4;` in the body (its value is folded where it is
    /// used; the CPU body declares it again).
    Const(ConstId),
    /// `let (a, b) = init;`: one local per element of a tuple.
    LetTuple {
        /// The bindings, in order.
        locals: Vec<LocalId>,
        /// The tuple.
        init: ExprId,
    },
}

/// One step from a variable to a part of it: `[i]` of an array, `.0` of a
/// tuple, `.name` of a struct.
#[derive(Clone, Debug)]
pub enum Step {
    /// An array element.
    Index(ExprId),
    /// A tuple element.
    Field(u32),
    /// A named field (of a struct), resolved by type.
    NamedField(String),
}

/// An expression with its source span.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// The user's tokens.
    pub span: Span,
}

/// Literal values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lit {
    /// An integer, with its suffix type if written.
    Int(u128, Option<Ty>),
    /// A float, with its suffix type if written.
    Float(FloatLit, Option<Ty>),
    /// `true` / `false`
    Bool(bool),
}

/// A float literal's value as each float type reads the digits: rustc
/// rounds the decimal straight to the literal's type, so an `f32` is not
/// the `f64` rounded again (which could round twice).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FloatLit {
    /// The value as an `f32`.
    pub single: f32,
    /// The value as an `f64`.
    pub double: f64,
}

impl FloatLit {
    /// The literal `v`, exact in both types (for small integers and the
    /// like, which both represent).
    pub fn exact(v: f32) -> FloatLit {
        FloatLit { single: v, double: f64::from(v) }
    }
}

/// A label (`'outer`), with its tokens.
#[derive(Clone, Debug)]
pub struct Label {
    /// The name, with its `'`.
    pub name: String,
    /// The tokens.
    pub span: Span,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!x`: logical not on bool, bitwise not on integers.
    Not,
}

/// Binary operators (short-circuit `&&`/`||` are [`ExprKind::Logical`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    /// True for `== != < <= > >=`.
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
    /// True for `<< >>`, whose right side may have another integer type.
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
    /// The Rust token.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }
}

/// Short-circuit logical operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogicOp {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// Math methods and associated functions (`x.sqrt()`, `a.min(b)`); the
/// table in [`crate::builtins::MATH_METHODS`] names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MathOp {
    Abs,
    Sqrt,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Powf,
    Powi,
    Pow,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    Min,
    Max,
    Clamp,
    MulAdd,
    Signum,
    Recip,
    ToRadians,
    ToDegrees,
    Hypot,
    CountOnes,
    LeadingZeros,
    TrailingZeros,
    ReverseBits,
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingDiv,
    WrappingRem,
    WrappingNeg,
    WrappingAbs,
    RemEuclid,
    AbsDiff,
    RotateLeft,
    RotateRight,
    IsNan,
    IsFinite,
    IsInfinite,
    ToBits,
    /// `f32::from_bits(bits)`: an associated function, not a method.
    FromBits,
    Cbrt,
    /// `f16::from_f32(x)` (half's rounding conversion; an associated
    /// function whose argument is an `f32`).
    F16FromF32,
    /// `f16::from_f64(x)`.
    F16FromF64,
    /// `h.to_f32()` of an `f16` (exact).
    ToF32,
    /// `h.to_f64()` of an `f16` (exact).
    ToF64,
    // Vector methods (glam's).
    Dot,
    Length,
    LengthSquared,
    Normalize,
    Distance,
    DistanceSquared,
    ElementSum,
    ElementProduct,
    MinElement,
    MaxElement,
    Lerp,
    Cross,
    Extend,
    Truncate,
    // The `f16` vectors' conversions (onekernel's `F16Vec2`/`F16Vec4`).
    /// `F16Vec2::from_vec2(v)`: an associated function whose argument is
    /// a `Vec2`, each lane rounded to `f16`.
    FromVec2,
    /// `F16Vec4::from_vec4(v)`.
    FromVec4,
    /// `h.to_vec2()` of an `F16Vec2`: a `Vec2` (exact).
    ToVec2,
    /// `h.to_vec4()` of an `F16Vec4`.
    ToVec4,
}

/// How a vector value is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VecCtor {
    /// `Vec4::new(x, y, z, w)` or `vec4(x, y, z, w)`.
    New,
    /// `Vec4::splat(x)`.
    Splat,
    /// `Vec4::ZERO`, `Vec4::X`, ...: each lane's bits.
    Const([u32; 4]),
}

/// Named constants such as `f32::MAX` or `std::f32::consts::PI`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamedConst {
    /// The type.
    pub ty: Ty,
    /// The bits of the value (the float's bits, or the integer's two's
    /// complement, in the low bits for types narrower than 64).
    pub bits: u64,
}

/// Loop forms.
#[derive(Clone, Debug)]
pub enum LoopKind {
    /// `loop { }`
    Loop,
    /// `while cond { }`
    While {
        /// The condition.
        cond: ExprId,
    },
    /// `for var in start..end`, `start..=end` or `(start..end).step_by(step)`.
    For {
        /// The loop variable.
        var: LocalId,
        /// The first value.
        start: ExprId,
        /// The bound.
        end: ExprId,
        /// `..=`
        inclusive: bool,
        /// The `step_by` argument.
        step: Option<ExprId>,
        /// `(start..end).rev()`: from the last value down.
        reverse: bool,
        /// Unrolled (`#[unroll]`, or a small constant loop that indexes a
        /// local array): the loop variable's values, in order. The GPU
        /// module repeats the body once per value, so that array indices
        /// become constants and the arrays stay in registers; the CPU
        /// body is the loop as written.
        unroll: Option<Vec<i64>>,
        /// `#[unroll]` of a loop whose bounds the launch sets (`0..TM`):
        /// a loop in the module, its counter named `unroll_` + its name
        /// (`onekernel_abi::UNROLL_PREFIX`), which each specialisation
        /// unrolls once the values are constants.
        late_unroll: bool,
    },
}

/// A place that can be assigned to.
#[derive(Clone, Debug)]
pub enum Place {
    /// A `let mut` local.
    Local(LocalId),
    /// A `mut` scalar parameter.
    Param(ParamId),
    /// An element of a `&mut [T]` buffer.
    Index {
        /// The buffer.
        buffer: ParamId,
        /// The element.
        index: ExprId,
    },
    /// An element of a shared array: `tile[i]` or `tile[r][c]`.
    Shared {
        /// The array.
        shared: SharedId,
        /// One index per dimension.
        indices: Vec<ExprId>,
    },
    /// A part of a `let mut` local array or tuple: `acc[i][j]`, `pair.0`.
    Project {
        /// The local.
        local: LocalId,
        /// The steps from it, outermost first.
        steps: Vec<Step>,
    },
}

/// One arm of an integer `match`.
#[derive(Clone, Debug)]
pub struct Arm {
    /// The patterns, joined by `|`.
    pub pats: Vec<Pat>,
    /// `n => ...`: the local bound to the matched value.
    pub binding: Option<LocalId>,
    /// The arm's value.
    pub body: ExprId,
}

/// A pattern of an integer `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pat {
    /// A literal (or a named constant such as `u32::MAX`).
    Int(i128),
    /// `lo..hi`, `lo..=hi`, `lo..`, `..=hi`.
    Range {
        /// The lower bound, inclusive.
        lo: Option<i128>,
        /// The upper bound.
        hi: Option<i128>,
        /// `..=`
        inclusive: bool,
    },
    /// `_` or a binding.
    Wild,
}

impl Pat {
    /// Whether `v` matches.
    pub fn matches(self, v: i128) -> bool {
        match self {
            Pat::Int(x) => x == v,
            Pat::Range { lo, hi, inclusive } => {
                lo.is_none_or(|lo| v >= lo) && hi.is_none_or(|hi| if inclusive { v <= hi } else { v < hi })
            }
            Pat::Wild => true,
        }
    }
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Something the recogniser rejected (and reported, or left to rustc):
    /// never typed further or lowered, and uses of it report nothing more.
    Error,
    /// A literal.
    Lit(Lit),
    /// A named constant (`f32::MAX`).
    Const(NamedConst),
    /// A `const` item of the kernel (or of its `#[onekernel::kernels]`
    /// module).
    ConstRef(ConstId),
    /// A value set when the pipeline is created: index into
    /// [`Function::overrides`].
    Override(usize),
    /// A local variable.
    Local(LocalId),
    /// A scalar parameter.
    Param(ParamId),
    /// `global_id()`, `subgroup_size()` and the other values of the ABI's
    /// [`Builtin`]; `callee` is the path as written.
    Builtin {
        /// Which one.
        builtin: Builtin,
        /// The path as written.
        callee: syn::Path,
    },
    /// `.x`, `.y`, `.z` of a `Dim3`; `.x` to `.w` of a vector (lane 0 to 3).
    Axis(ExprId, u32),
    /// A vector value: `Vec4::new(x, y, z, w)`, `vec4(..)`,
    /// `Vec4::splat(x)`, `Vec4::ZERO`.
    Vector {
        /// The vector type.
        ty: crate::types::VecTy,
        /// How it is made.
        ctor: VecCtor,
        /// One value per lane (`New`), one value (`Splat`), none (`Const`).
        args: Vec<ExprId>,
        /// The path as written (`Vec4::new`, `glam::vec4`, `Vec4::ZERO`),
        /// which the CPU body repeats.
        callee: syn::Path,
    },
    /// `v.xy()`, `v.zyx()`, `v.xxxx()`: lanes of a vector, by glam's
    /// swizzle traits.
    Swizzle(ExprId, Vec<u32>),
    /// `buffer[index]`
    Index {
        /// The buffer.
        buffer: ParamId,
        /// The element.
        index: ExprId,
    },
    /// `buffer.len()`
    Len(ParamId),
    /// `tile[i]`, `tile[r][c]`: a shared array element.
    SharedIndex {
        /// The array.
        shared: SharedId,
        /// One index per dimension.
        indices: Vec<ExprId>,
    },
    /// An atomic operation. On the GPU all atomics are relaxed; the CPU
    /// body passes the user's `orderings` on.
    Atomic {
        /// The element.
        target: AtomicTarget,
        /// The operation.
        op: AtomicOp,
        /// The value operands.
        args: Vec<ExprId>,
        /// The `Ordering` arguments as written.
        orderings: Vec<syn::Expr>,
    },
    /// A barrier, with its call-site id (source order).
    Barrier {
        /// Which barrier.
        kind: BarrierKind,
        /// The call-site id.
        site: u32,
        /// The path as written.
        callee: syn::Path,
    },
    /// A subgroup collective (WGSL's `subgroupAdd`, ...: the ABI's
    /// [`SubgroupCollective`], one list, which the CPU body names
    /// directly); every invocation of the subgroup takes part, so it is
    /// checked like a barrier (see `uniformity.rs`). `site` numbers the
    /// collectives with the barriers (source order), for the CPU
    /// executor's divergence check.
    Subgroup {
        /// Which one.
        op: SubgroupCollective,
        /// The value, then the lane, mask or delta.
        args: Vec<ExprId>,
        /// The call-site id.
        site: u32,
        /// The path as written.
        callee: syn::Path,
    },
    /// A matrix-tile operation; `site` numbers the collectives with the
    /// barriers (source order).
    Tile {
        /// Which one.
        op: TileOp,
        /// Its operands (see [`TileOp`]).
        args: Vec<ExprId>,
        /// The call-site id (collectives only; 0 for `zeros`).
        site: u32,
        /// The path as written (`MatrixA::<16, 16>::load`, `mma`), or the
        /// method's name for `store`.
        callee: syn::Path,
    },
    /// `workgroup_uniform_load(&tile[i])`: one shared element, read by
    /// every thread of the workgroup between two barriers, so that the
    /// value is the same for all (uniform, as WGSL's `workgroupUniformLoad`).
    UniformLoad {
        /// The array.
        shared: SharedId,
        /// One index per dimension (uniform).
        indices: Vec<ExprId>,
        /// The call-site id (it is a barrier).
        site: u32,
        /// The path as written.
        callee: syn::Path,
    },
    /// `[a, b, c]`
    Array(Vec<ExprId>),
    /// `[value; len]`
    Repeat(ExprId, u32),
    /// `(a, b)`
    Tuple(Vec<ExprId>),
    /// `base[index]` on an array value (a local, a nested element, ...).
    Element {
        /// The array.
        base: ExprId,
        /// The element.
        index: ExprId,
    },
    /// `base.0` on a tuple value.
    Field(ExprId, u32),
    /// `base.name` on a struct value (resolved by the base's type; `.x`,
    /// `.y` and `.z` are [`ExprKind::Axis`] until typed).
    NamedField(ExprId, String),
    /// `Name { a: .., b: .. }`: a struct value, the fields in the order
    /// written (and evaluated), each with its index in the declaration.
    StructLit {
        /// The struct type.
        ty: crate::types::Ty,
        /// `(field index, value)` in the order written.
        fields: Vec<(u32, ExprId)>,
    },
    /// `base.len()` on an array value: its length, a constant.
    ArrayLen(ExprId),
    /// `-x`, `!x`
    Unary(UnOp, ExprId),
    /// `a + b` etc.
    Binary(BinOp, ExprId, ExprId),
    /// `a && b`, `a || b`
    Logical(LogicOp, ExprId, ExprId),
    /// `x as T`
    Cast(ExprId, Ty),
    /// `T::from(x)`: a lossless conversion (`f64::from(x_f32)`,
    /// `f32::from(h)` of an `f16`, `u32::from(flag)`), computed as `as`
    /// would; rustc accepts it for more pairs than `as` (`f16` has no `as`).
    Convert(ExprId, Ty),
    /// `x`, known to have type `T` (the receiver of `f32::sqrt(x)`).
    Typed(ExprId, Ty),
    /// A call of a helper function.
    Call {
        /// The helper.
        name: String,
        /// The arguments.
        args: Vec<ExprId>,
    },
    /// A math method; the receiver is `args[0]`.
    Math(MathOp, Vec<ExprId>),
    /// `if cond { } else { }`; `else_` is a `Block` or `If` expression.
    If {
        /// The condition.
        cond: ExprId,
        /// The `then` block.
        then: Block,
        /// The `else` branch.
        else_: Option<ExprId>,
        /// The condition as written, for messages.
        cond_text: String,
    },
    /// `match scrutinee { arms }` on an integer.
    Match {
        /// The matched value.
        scrutinee: ExprId,
        /// The arms, in order.
        arms: Vec<Arm>,
    },
    /// `{ ... }`
    Block(Block),
    /// A loop, maybe labelled.
    Loop {
        /// The label.
        label: Option<Label>,
        /// The form.
        kind: LoopKind,
        /// The body.
        body: Block,
    },
    /// `break 'label value`
    Break {
        /// The label.
        label: Option<Label>,
        /// The value.
        value: Option<ExprId>,
    },
    /// `continue 'label`
    Continue {
        /// The label.
        label: Option<Label>,
    },
    /// `return value`
    Return(Option<ExprId>),
    /// `println!`, `assert!`, `panic!`, ...: a debug call site
    /// (`onekernel_abi::debug`).
    Debug(Box<DebugCall>),
    /// `place = value` or `place op= value`.
    Assign {
        /// Where.
        place: Place,
        /// `Some(op)` for `op=`.
        op: Option<BinOp>,
        /// The value.
        value: ExprId,
        /// The span of the place's root name as written (`acc` of `acc[k]
        /// = ..`): the CPU body names the local with it, so that rustc
        /// resolves it with the hygiene of that token (a `macro_rules!`
        /// metavariable), not with the joined span of the whole assignment.
        name_span: Span,
    },
}

/// One `println!`, `assert!`, `panic!`, ... of a kernel (its index among
/// the kernel's sites is `site`, which the GPU's records carry).
#[derive(Clone, Debug)]
pub struct DebugCall {
    /// What it does.
    pub kind: onekernel_abi::DebugKind,
    /// Its index in `KernelInfo::debug_sites`.
    pub site: u32,
    /// `debug_assert*!`: compiled only with the user's crate's
    /// `debug_assertions`.
    pub debug_only: bool,
    /// The macro's path as written (`println`, `std::assert_eq`), for the
    /// CPU body.
    pub path: syn::Path,
    /// `assert!`'s condition.
    pub cond: Option<ExprId>,
    /// `assert!`'s condition as Rust's message writes it
    /// (`crate::debug::expr_text`).
    pub cond_text: String,
    /// The format string, if the macro has one.
    pub format: Option<syn::LitStr>,
    /// The arguments: `left` and `right` of `assert_eq!`/`assert_ne!`, then
    /// the message's positional ones, then its named ones (`name = value`,
    /// and the variables the format string captures), each with its name.
    pub args: Vec<(Option<String>, ExprId)>,
}

/// A kernel and the helpers it calls, ready to be typed and lowered.
#[derive(Debug)]
pub struct Program {
    /// The kernel (entry point).
    pub kernel: Function,
    /// The helpers it reaches, callees before callers.
    pub helpers: Vec<Function>,
    /// The compound types of all of them.
    pub types: crate::types::TypeTable,
}

impl Function {
    /// A function named `name` with nothing in it yet.
    pub fn named(name: String, span: proc_macro2::Span) -> Function {
        Function {
            name,
            span,
            params: crate::arena::Arena::default(),
            ret: crate::types::Ty::Unit,
            locals: crate::arena::Arena::default(),
            exprs: crate::arena::Arena::default(),
            body: Block::default(),
            calls: Vec::new(),
            shared: crate::arena::Arena::default(),
            consts: crate::arena::Arena::default(),
            overrides: Vec::new(),
            barriers: 0,
            buffer_args: Vec::new(),
            debug_sites: 0,
        }
    }

    /// The label's name as a `String`, for loops and jumps.
    pub fn label_name(label: &Option<Label>) -> Option<&str> {
        label.as_ref().map(|l| l.name.as_str())
    }
}
