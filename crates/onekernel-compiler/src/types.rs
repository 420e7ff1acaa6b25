//! The types a kernel can compute with, as rustc sees them.
//!
//! Inference works on [`TypeVar`]s so that unsuffixed literals get exactly
//! the type rustc gives them (`let mut i = 0; ... i < n` makes `i` a `u32`
//! when `n` is one); [`Ty`] is the resolved result.

use std::fmt;

/// A resolved kernel type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `bool`
    Bool,
    /// `f32`
    F32,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `usize`: indices and lengths; lowered to `u32` (the GPU is 32-bit).
    Usize,
    /// The `Dim3 { x, y, z }` that thread-indexing builtins return; `vec3<u32>`.
    Dim3,
    /// `()`
    Unit,
    /// `!`: the type of `return`, `break` and `continue`.
    Never,
}

impl Ty {
    /// True for the integer types.
    pub fn is_integer(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::Usize)
    }

    /// True for the numeric types.
    pub fn is_numeric(self) -> bool {
        self.is_integer() || self == Ty::F32
    }

    /// True for the types that can be stored in a local or passed around.
    pub fn is_scalar(self) -> bool {
        self.is_numeric() || self == Ty::Bool
    }

    /// The Rust spelling, for messages.
    pub fn rust_name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::F32 => "f32",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::Usize => "usize",
            Ty::Dim3 => "Dim3",
            Ty::Unit => "()",
            Ty::Never => "!",
        }
    }

    /// Parses a Rust type name of a supported scalar.
    pub fn from_name(name: &str) -> Option<Ty> {
        Some(match name {
            "bool" => Ty::Bool,
            "f32" => Ty::F32,
            "i32" => Ty::I32,
            "u32" => Ty::U32,
            "usize" => Ty::Usize,
            "Dim3" => Ty::Dim3,
            _ => return None,
        })
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rust_name())
    }
}

/// Help text for a scalar type the device cannot use.
pub fn unsupported_type_help(name: &str) -> Option<&'static str> {
    Some(match name {
        "f64" => "GPUs without the `SHADER_F64` feature have no 64-bit floats; use `f32`",
        "f16" => "use `f32`",
        "i64" | "i128" | "isize" => "use `i32`: WGSL has 32-bit integers only",
        "u64" | "u128" => "use `u32`: WGSL has 32-bit integers only",
        "i8" | "i16" => "use `i32`: WGSL has no 8- or 16-bit integers",
        "u8" | "u16" => "use `u32`: WGSL has no 8- or 16-bit integers",
        "char" | "str" | "String" => "kernels compute with numbers: use `u32` code points",
        "Vec" => "a kernel cannot allocate: take a `&[T]` or `&mut [T]` buffer parameter",
        "Box" | "Rc" | "Arc" => "a kernel cannot allocate: pass values or buffers",
        "Option" | "Result" => "use a `bool` flag beside the value",
        _ => return None,
    })
}
