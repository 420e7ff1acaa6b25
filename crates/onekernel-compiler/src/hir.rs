//! The checked form of a kernel: a small typed tree, made from syn's AST by
//! [`crate::parse`], typed by [`crate::infer`], lowered by [`crate::lower`].
//!
//! Expressions live in one arena per function and refer to each other by
//! [`ExprId`], the way naga's own IR does.

use crate::types::Ty;
use proc_macro2::Span;

/// Index of an expression in [`Function::exprs`].
pub type ExprId = usize;
/// Index of a local in [`Function::locals`].
pub type LocalId = usize;
/// Index of a parameter in [`Function::params`].
pub type ParamId = usize;
/// Index of a shared array in [`Function::shared`].
pub type SharedId = usize;

/// A kernel or a helper function.
#[derive(Debug)]
pub struct Function {
    /// The Rust name.
    pub name: String,
    /// Where the name is, for messages.
    pub span: Span,
    /// The parameters in order.
    pub params: Vec<Param>,
    /// The result type (`Unit` for kernels).
    pub ret: Ty,
    /// Every local `let` binding (shadowing makes new ones).
    pub locals: Vec<Local>,
    /// Every expression.
    pub exprs: Vec<Expr>,
    /// The body.
    pub body: Block,
    /// Helper functions this one calls, by name.
    pub calls: Vec<String>,
    /// Workgroup shared arrays declared in the kernel's body.
    pub shared: Vec<SharedDecl>,
    /// Number of barrier call sites (each gets an id, in order).
    pub barriers: u32,
    /// Call arguments that pass a whole buffer (`helper(a)`): always an
    /// error, left for the callee to explain (a helper that takes a buffer
    /// reports it at its definition; otherwise rustc's type check does).
    pub buffer_args: Vec<Span>,
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
}

impl SharedDecl {
    /// Size in 32-bit words.
    pub fn words(&self) -> u32 {
        self.dims.iter().product()
    }
}

/// `workgroup_barrier()` or `storage_barrier()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierKind {
    /// Execution barrier plus workgroup memory (WGSL `workgroupBarrier`).
    Workgroup,
    /// Execution barrier plus storage memory (WGSL `storageBarrier`).
    Storage,
}

/// Atomic operations, by their Rust std names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// Which atomic an operation works on.
#[derive(Clone, Debug)]
pub enum AtomicTarget {
    /// An element of an `&[AtomicU32]` parameter.
    Buffer { param: ParamId, index: ExprId },
    /// An element of a shared atomic array.
    Shared { shared: SharedId, indices: Vec<ExprId> },
}

/// One parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// The Rust name.
    pub name: String,
    /// Where it is declared.
    pub span: Span,
    /// How it is passed.
    pub kind: ParamKind,
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
    Let { local: LocalId, init: Option<ExprId> },
    /// An expression statement (with or without `;`).
    Expr(ExprId),
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
    Float(f64, Option<Ty>),
    /// `true` / `false`
    Bool(bool),
}

/// Thread-indexing builtins, named as in CUDA/Mojo (see the docs for the
/// WGSL names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `global_id()`: the thread's position in the whole grid.
    GlobalId,
    /// `thread_id()`: the thread's position in its block (workgroup).
    ThreadId,
    /// `block_id()`: the block's position in the grid.
    BlockId,
    /// `block_dim()`: threads per block.
    BlockDim,
    /// `grid_dim()`: blocks in the grid.
    GridDim,
}

impl Builtin {
    /// All builtins with their Rust names.
    pub const ALL: [(Builtin, &'static str); 5] = [
        (Builtin::GlobalId, "global_id"),
        (Builtin::ThreadId, "thread_id"),
        (Builtin::BlockId, "block_id"),
        (Builtin::BlockDim, "block_dim"),
        (Builtin::GridDim, "grid_dim"),
    ];

    /// Looks a builtin up by its Rust name.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(b, _)| *b)
    }

    /// The Rust name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(b, _)| *b == self).map(|(_, n)| *n).unwrap_or("?")
    }
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

/// Math methods and associated functions (`x.sqrt()`, `a.min(b)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
}

/// Named constants such as `f32::MAX` or `std::f32::consts::PI`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NamedConst {
    /// The type.
    pub ty: Ty,
    /// The bits of the value (f32 bits, or the integer's two's complement).
    pub bits: u32,
}

/// Loop forms.
#[derive(Clone, Debug)]
pub enum LoopKind {
    /// `loop { }`
    Loop,
    /// `while cond { }`
    While { cond: ExprId },
    /// `for var in start..end` or `(start..end).step_by(step)`; `inclusive`
    /// for `..=`.
    For { var: LocalId, start: ExprId, end: ExprId, inclusive: bool, step: Option<ExprId> },
}

/// A place that can be assigned to.
#[derive(Clone, Debug)]
pub enum Place {
    /// A `let mut` local (or `mut` parameter).
    Local(LocalId),
    /// A `mut` scalar parameter.
    Param(ParamId),
    /// An element of a `&mut [T]` buffer.
    Index { buffer: ParamId, index: ExprId },
    /// An element of a shared array: `tile[i]` or `tile[r][c]`.
    Shared { shared: SharedId, indices: Vec<ExprId> },
}

/// Expression kinds.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A literal.
    Lit(Lit),
    /// A named constant (`f32::MAX`).
    Const(NamedConst),
    /// A local variable.
    Local(LocalId),
    /// A scalar parameter.
    Param(ParamId),
    /// `global_id()` and friends.
    Builtin(Builtin),
    /// `.x`, `.y`, `.z` of a `Dim3`.
    Axis(ExprId, u32),
    /// `buffer[index]`
    Index { buffer: ParamId, index: ExprId },
    /// `buffer.len()`
    Len(ParamId),
    /// `tile[i]`, `tile[r][c]`: a shared array element.
    SharedIndex { shared: SharedId, indices: Vec<ExprId> },
    /// An atomic operation; `args` are its value operands (orderings
    /// dropped: GPU atomics are relaxed).
    Atomic { target: AtomicTarget, op: AtomicOp, args: Vec<ExprId> },
    /// A barrier, with its call-site id.
    Barrier(BarrierKind, u32),
    /// `-x`, `!x`
    Unary(UnOp, ExprId),
    /// `a + b` etc.
    Binary(BinOp, ExprId, ExprId),
    /// `a && b`, `a || b`
    Logical(LogicOp, ExprId, ExprId),
    /// `x as T`
    Cast(ExprId, Ty),
    /// `x`, known to have type `T` (from `f32::sqrt(x)`); no conversion.
    Typed(ExprId, Ty),
    /// A call of a helper function.
    Call { name: String, args: Vec<ExprId> },
    /// A math method; the receiver is `args[0]`.
    Math(MathOp, Vec<ExprId>),
    /// `if cond { } else { }`; `else_` is a `Block` or `If` expression.
    /// `cond_text` is the condition as written, for messages.
    If { cond: ExprId, then: Block, else_: Option<ExprId>, cond_text: String },
    /// `{ ... }`
    Block(Block),
    /// A loop, maybe labelled.
    Loop { label: Option<String>, kind: LoopKind, body: Block },
    /// `break 'label value`
    Break { label: Option<String>, value: Option<ExprId> },
    /// `continue 'label`
    Continue { label: Option<String> },
    /// `return value`
    Return(Option<ExprId>),
    /// `place = value` or `place op= value`.
    Assign { place: Place, op: Option<BinOp>, value: ExprId },
}

/// A parsed set of kernel and helper functions, ready to be typed and lowered.
#[derive(Debug)]
pub struct Program {
    /// The kernel (entry point).
    pub kernel: Function,
    /// Helper functions it may call, callees before callers once sorted.
    pub helpers: Vec<Function>,
}
