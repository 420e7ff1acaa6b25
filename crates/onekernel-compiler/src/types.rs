//! The types a kernel can compute with, as rustc sees them.
//!
//! Inference works on type variables so that unsuffixed literals get exactly
//! the type rustc gives them (`let mut i = 0; ... i < n` makes `i` a `u32`
//! when `n` is one); [`Ty`] is the resolved result. `Ty` is `Copy`: compound
//! types (arrays, tuples) are interned in the program's [`TypeTable`] and
//! named by a [`TypeId`], so two equal types are the same id.

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
    /// `half::f16` (WGSL `f16`; needs the device's `SHADER_F16`).
    F16,
    /// `f64` (needs `SHADER_F64`).
    F64,
    /// `i64` (needs `SHADER_INT64`).
    I64,
    /// `u64` (needs `SHADER_INT64`).
    U64,
    /// An array, a tuple: see [`TypeTable`].
    Compound(TypeId),
    /// A glam vector (`Vec4`, `IVec2`, `Vec3A`, ...): a WGSL `vecN<T>`.
    Vector(VecTy),
    /// The `Dim3 { x, y, z }` that thread-indexing builtins return; `vec3<u32>`.
    Dim3,
    /// A matrix tile (`onekernel::tile::MatrixA<16, 16>`, ...): naga's
    /// cooperative matrix, held by a whole subgroup on the GPU and by each
    /// invocation on the CPU.
    Tile(TileTy),
    /// `()`
    Unit,
    /// `!`: the type of `return`, `break` and `continue`.
    Never,
}

/// The type of a vector's lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// `Vec2`, `Vec3`, `Vec3A`, `Vec4`
    F32,
    /// `IVec2`, `IVec3`, `IVec4`
    I32,
    /// `UVec2`, `UVec3`, `UVec4`
    U32,
    /// `F16Vec2`, `F16Vec4`: onekernel's own (glam has no `f16` vectors).
    F16,
}

impl Lane {
    /// The scalar type of one lane.
    pub fn ty(self) -> Ty {
        match self {
            Lane::F32 => Ty::F32,
            Lane::I32 => Ty::I32,
            Lane::U32 => Ty::U32,
            Lane::F16 => Ty::F16,
        }
    }
}

/// A glam vector type: its lanes' type, their number, and for `Vec3A`
/// the 16-byte alignment that makes it WGSL's `vec3<f32>` in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VecTy {
    /// The lanes' type.
    pub lane: Lane,
    /// 2, 3 or 4.
    pub size: u8,
    /// `Vec3A`: 16 bytes, aligned as WGSL's `vec3<f32>` (glam's `Vec3`,
    /// `IVec3` and `UVec3` take 12 bytes).
    pub aligned: bool,
}

/// Every vector type a kernel knows, by its glam name (onekernel's own
/// for the `f16` ones, named as glam names `I16Vec4` and `DVec4`).
pub const VECTORS: [(&str, VecTy); 12] = {
    const fn v(lane: Lane, size: u8, aligned: bool) -> VecTy {
        VecTy { lane, size, aligned }
    }
    [
        ("Vec2", v(Lane::F32, 2, false)),
        ("Vec3", v(Lane::F32, 3, false)),
        ("Vec3A", v(Lane::F32, 3, true)),
        ("Vec4", v(Lane::F32, 4, false)),
        ("IVec2", v(Lane::I32, 2, false)),
        ("IVec3", v(Lane::I32, 3, false)),
        ("IVec4", v(Lane::I32, 4, false)),
        ("UVec2", v(Lane::U32, 2, false)),
        ("UVec3", v(Lane::U32, 3, false)),
        ("UVec4", v(Lane::U32, 4, false)),
        ("F16Vec2", v(Lane::F16, 2, false)),
        ("F16Vec4", v(Lane::F16, 4, false)),
    ]
};

impl VecTy {
    /// The glam name: `Vec4`, `IVec2`, `Vec3A`.
    pub fn name(self) -> &'static str {
        VECTORS.iter().find(|(_, v)| *v == self).map_or("?", |(n, _)| n)
    }

    /// The vector type named `name` (`Vec4`, `UVec2`, ...).
    pub fn from_name(name: &str) -> Option<VecTy> {
        VECTORS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// The vector type whose glam constructor function is `name`
    /// (`vec4`, `ivec2`, `vec3a`, ...); the `f16` vectors have none.
    pub fn from_fn_name(name: &str) -> Option<VecTy> {
        VECTORS.iter().find(|(n, v)| v.is_glam() && n.to_lowercase() == name).map(|(_, v)| *v)
    }

    /// True for glam's vectors; false for onekernel's `F16Vec2` and
    /// `F16Vec4`, which have a smaller API (docs/supported-rust.md) and
    /// live in the runtime, not in glam.
    pub fn is_glam(self) -> bool {
        self.lane != Lane::F16
    }

    /// The glam constructor function: `vec4`, `ivec2`, `vec3a`.
    pub fn fn_name(self) -> String {
        self.name().to_lowercase()
    }

    /// The vector of `size` lanes of the same type that a swizzle of this
    /// one returns (glam: `Vec4::xyz()` is a `Vec3`, `Vec3A::zyx()` a
    /// `Vec3A`).
    pub fn resized(self, size: u8) -> VecTy {
        VecTy { lane: self.lane, size, aligned: size == 3 && self.aligned }
    }

    /// The same lanes without `Vec3A`'s alignment (glam's `extend` and
    /// `truncate` return `Vec3`, never `Vec3A`).
    pub fn unaligned(self) -> VecTy {
        VecTy { aligned: false, ..self }
    }

    /// WGSL's size and alignment in a buffer, a struct or the uniform
    /// block; None for glam's 12-byte `Vec3`, `IVec3` and `UVec3`, which
    /// WGSL's `vec3<T>` (16-byte aligned) does not match.
    pub fn wgsl_layout(self) -> Option<(u32, u32)> {
        match (self.size, self.aligned) {
            _ if self.lane == Lane::F16 => Some((2 * u32::from(self.size), 2 * u32::from(self.size))),
            (2, _) => Some((8, 8)),
            (3, true) => Some((16, 16)),
            (3, false) => None,
            _ => Some((16, 16)),
        }
    }

    /// Rust's size in bytes (shared memory on the CPU).
    pub fn bytes(self) -> u32 {
        match (self.lane, self.aligned) {
            (_, true) => 16,
            (Lane::F16, _) => 2 * u32::from(self.size),
            _ => 4 * u32::from(self.size),
        }
    }

    /// What to use instead of a 12-byte three-lane vector in memory the
    /// GPU shares.
    pub fn aligned_alternative(self) -> &'static str {
        match self.lane {
            Lane::F32 => "`Vec3A` (16 bytes, laid out as the GPU's `vec3<f32>`) or `Vec4`",
            Lane::I32 => "`IVec4` (glam has no 16-byte `IVec3`)",
            Lane::U32 => "`UVec4` (glam has no 16-byte `UVec3`)",
            Lane::F16 => "`F16Vec4`",
        }
    }
}

/// The role of a matrix tile in `C = A·B + C` (naga's `CooperativeRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileRole {
    /// `MatrixA<M, K>`: the left operand, M×K.
    A,
    /// `MatrixB<K, N>`: the right operand, K×N.
    B,
    /// `Accumulator<T, M, N>`: the accumulator and result, M×N.
    Acc,
}

impl TileRole {
    /// The facade's type name.
    pub fn name(self) -> &'static str {
        match self {
            TileRole::A => "MatrixA",
            TileRole::B => "MatrixB",
            TileRole::Acc => "Accumulator",
        }
    }

    /// The role whose facade type is `name`.
    pub fn from_name(name: &str) -> Option<TileRole> {
        [TileRole::A, TileRole::B, TileRole::Acc].into_iter().find(|r| r.name() == name)
    }
}

/// A matrix tile type: its role, element type (`f16`, or `f32` for an
/// accumulator) and shape. The shapes are the ones naga's cooperative
/// matrices have (8 or 16 per side); which combinations a device runs is
/// the device's `cooperative_matrix_properties()`, checked at launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TileTy {
    /// A, B or the accumulator.
    pub role: TileRole,
    /// `F16` or `F32`.
    pub elem: TileElem,
    /// Rows (M for A and the accumulator, K for B).
    pub rows: u8,
    /// Columns (K for A, N for B and the accumulator).
    pub cols: u8,
}

/// The element type of a tile: `f16`, or `f32` for an accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileElem {
    /// `half::f16`
    F16,
    /// `f32`
    F32,
}

impl TileElem {
    /// The scalar type.
    pub fn ty(self) -> Ty {
        match self {
            TileElem::F16 => Ty::F16,
            TileElem::F32 => Ty::F32,
        }
    }
}

impl TileTy {
    /// The Rust spelling: `MatrixA<16, 16>`, `Accumulator<f32, 16, 8>`.
    pub fn name(self) -> String {
        match self.role {
            TileRole::Acc => format!("Accumulator<{}, {}, {}>", self.elem.ty().rust_name(), self.rows, self.cols),
            r => format!("{}<{}, {}>", r.name(), self.rows, self.cols),
        }
    }
}

/// The id of an interned compound type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(u32);

/// A compound type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Compound {
    /// `[elem; len]`
    Array {
        /// The element type.
        elem: Ty,
        /// The number of elements (at least 1).
        len: u32,
    },
    /// `(a, b, ...)`, two elements or more.
    Tuple(Vec<Ty>),
    /// A user's struct (declared in a `#[onekernel::kernels]` module), its
    /// fields in declaration order. Structs are nominal: one per name.
    Struct {
        /// The Rust name.
        name: String,
        /// The fields' names and types.
        fields: Vec<(String, Ty)>,
    },
}

/// The compound types of one program, interned.
#[derive(Clone, Debug, Default)]
pub struct TypeTable {
    compounds: Vec<Compound>,
    /// The lengths a launch sets (`[f32; TM]`, `shared::<[f32; BM]>()`),
    /// each standing in the table, the naga IR and the WGSL writer's text
    /// as a placeholder length ([`Symbol`]).
    symbols: Vec<Symbol>,
    /// Integers the kernel's source writes: never a placeholder.
    avoid: Vec<u32>,
}

/// An array length that is one of the kernel's overrides (a const
/// parameter or a constant of its scope): everything before the WGSL text
/// sees an ordinary array of `placeholder` elements (a prime no literal of
/// the kernel's source is), and the text then names the override
/// (`array<f32, TM>`; `emit::name_symbols`), which the runtime turns into
/// a `const` of the launch's value (`onekernel_abi::wgsl_with_constants`).
/// The CPU body writes the Rust name, which rustc monomorphises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The stand-in length.
    pub placeholder: u32,
    /// The index of the override in `hir::Function::overrides`.
    pub over: usize,
    /// Its Rust name.
    pub name: String,
}

/// The stand-ins of [`Symbol`]: primes, small enough that two nested
/// symbolic lengths of 16-byte elements fit naga's 32-bit type sizes.
const PLACEHOLDERS: [u32; 32] = [
    8191, 8179, 8171, 8167, 8161, 8147, 8123, 8117, 8111, 8101, 8093, 8089, 8087, 8081, 8069, 8059, 8053, 8039, 8017,
    8011, 8009, 7993, 7963, 7951, 7949, 7937, 7933, 7927, 7919, 7907, 7901, 7883,
];

impl TypeTable {
    /// The integers of the kernel's source (`avoid`): no placeholder is one.
    pub fn avoid_literals(&mut self, avoid: Vec<u32>) {
        self.avoid = avoid;
    }

    /// The placeholder length for override `over` (named `name`), made on
    /// first use; None when there are no more.
    pub fn symbolic_len(&mut self, over: usize, name: &str) -> Option<u32> {
        if let Some(s) = self.symbols.iter().find(|s| s.over == over) {
            return Some(s.placeholder);
        }
        let placeholder = PLACEHOLDERS
            .into_iter()
            .find(|p| !self.avoid.contains(p) && self.symbols.iter().all(|s| s.placeholder != *p))?;
        self.symbols.push(Symbol { placeholder, over, name: name.to_string() });
        Some(placeholder)
    }

    /// The symbol whose placeholder `len` is.
    pub fn symbol(&self, len: u32) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.placeholder == len)
    }

    /// Every symbolic length.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// `len` counted as elements: 1 for a symbolic length (the runtime
    /// checks the launch's value).
    pub fn len_elements(&self, len: u32) -> u64 {
        if self.symbol(len).is_some() {
            1
        } else {
            u64::from(len)
        }
    }

    /// Whether `ty` is an array with a symbolic length at some level.
    pub fn is_symbolic(&self, ty: Ty) -> bool {
        match self.as_array(ty) {
            Some((elem, len)) => self.symbol(len).is_some() || self.is_symbolic(elem),
            None => false,
        }
    }

    /// The type `c`, interned.
    pub fn intern(&mut self, c: Compound) -> Ty {
        let id = match self.compounds.iter().position(|x| *x == c) {
            Some(i) => i,
            None => {
                self.compounds.push(c);
                self.compounds.len() - 1
            }
        };
        Ty::Compound(TypeId(id as u32))
    }

    /// The elements of `ty` counted through nested arrays (`[[f32; 4]; 3]`:
    /// 12), 1 for anything that is not an array.
    pub fn array_elements(&self, ty: Ty) -> u64 {
        match ty {
            Ty::Compound(TypeId(id)) => match &self.compounds[id as usize] {
                Compound::Array { elem, len } => self.len_elements(*len).saturating_mul(self.array_elements(*elem)),
                _ => 1,
            },
            _ => 1,
        }
    }

    /// `[elem; len]`.
    pub fn array(&mut self, elem: Ty, len: u32) -> Ty {
        self.intern(Compound::Array { elem, len })
    }

    /// Declares the struct `name`; None if a struct of that name exists.
    pub fn define_struct(&mut self, name: &str, fields: Vec<(String, Ty)>) -> Option<Ty> {
        if self.struct_named(name).is_some() {
            return None;
        }
        Some(self.intern(Compound::Struct { name: name.to_string(), fields }))
    }

    /// The struct named `name`, if one is declared.
    pub fn struct_named(&self, name: &str) -> Option<Ty> {
        self.compounds
            .iter()
            .position(|c| matches!(c, Compound::Struct { name: n, .. } if n == name))
            .map(|i| Ty::Compound(TypeId(i as u32)))
    }

    /// The name and fields of a struct type.
    pub fn as_struct(&self, ty: Ty) -> Option<(&str, &[(String, Ty)])> {
        match ty {
            Ty::Compound(id) => match self.get(id) {
                Compound::Struct { name, fields } => Some((name, fields)),
                Compound::Array { .. } | Compound::Tuple(_) => None,
            },
            _ => None,
        }
    }

    /// The index and type of the field `field` of the struct type `ty`.
    pub fn struct_field(&self, ty: Ty, field: &str) -> Option<(u32, Ty)> {
        let (_, fields) = self.as_struct(ty)?;
        fields.iter().position(|(n, _)| n == field).map(|i| (i as u32, fields[i].1))
    }

    /// What a compound type is.
    pub fn get(&self, id: TypeId) -> &Compound {
        &self.compounds[id.0 as usize]
    }

    /// The element type and length of an array type.
    pub fn as_array(&self, ty: Ty) -> Option<(Ty, u32)> {
        match ty {
            Ty::Compound(id) => match self.get(id) {
                Compound::Array { elem, len } => Some((*elem, *len)),
                Compound::Tuple(_) | Compound::Struct { .. } => None,
            },
            _ => None,
        }
    }

    /// The element types of a tuple type.
    pub fn as_tuple(&self, ty: Ty) -> Option<&[Ty]> {
        match ty {
            Ty::Compound(id) => match self.get(id) {
                Compound::Tuple(elems) => Some(elems),
                Compound::Array { .. } | Compound::Struct { .. } => None,
            },
            _ => None,
        }
    }

    /// WGSL's size and alignment of a type that can live in a buffer or
    /// the uniform block (host-shareable): None for `bool`, `usize`,
    /// tuples and the like. A struct's fields are at the offsets of
    /// [`TypeTable::struct_offsets`].
    pub fn wgsl_layout(&self, ty: Ty) -> Option<(u32, u32)> {
        match ty {
            Ty::F32 | Ty::I32 | Ty::U32 => Some((4, 4)),
            Ty::F16 => Some((2, 2)),
            Ty::F64 | Ty::I64 | Ty::U64 => Some((8, 8)),
            Ty::Compound(id) => match self.get(id) {
                Compound::Array { elem, len } => {
                    let (size, align) = self.wgsl_layout(*elem)?;
                    Some((size.next_multiple_of(align) * len, align))
                }
                Compound::Struct { fields, .. } => {
                    let (mut end, mut align) = (0u32, 1u32);
                    for (_, t) in fields {
                        let (s, a) = self.wgsl_layout(*t)?;
                        end = end.next_multiple_of(a) + s;
                        align = align.max(a);
                    }
                    Some((end.next_multiple_of(align), align))
                }
                Compound::Tuple(_) => None,
            },
            Ty::Vector(v) => v.wgsl_layout(),
            Ty::Bool | Ty::Usize | Ty::Dim3 | Ty::Tile(_) | Ty::Unit | Ty::Never => None,
        }
    }

    /// The WGSL byte offset of each field of a struct type.
    pub fn struct_offsets(&self, ty: Ty) -> Option<Vec<u32>> {
        let (_, fields) = self.as_struct(ty)?;
        let mut end = 0u32;
        let mut offsets = Vec::new();
        for (_, t) in fields {
            let (s, a) = self.wgsl_layout(*t)?;
            let at = end.next_multiple_of(a);
            offsets.push(at);
            end = at + s;
        }
        Some(offsets)
    }

    /// True when a value of `ty` holds an array (which WGSL indexes only
    /// through a variable).
    pub fn contains_array(&self, ty: Ty) -> bool {
        match ty {
            Ty::Compound(id) => match self.get(id) {
                Compound::Array { .. } => true,
                Compound::Tuple(elems) => elems.iter().any(|t| self.contains_array(*t)),
                Compound::Struct { fields, .. } => fields.iter().any(|(_, t)| self.contains_array(*t)),
            },
            _ => false,
        }
    }

    /// The Rust spelling, for messages and generated code.
    pub fn name(&self, ty: Ty) -> String {
        match ty {
            Ty::Compound(id) => match self.get(id) {
                Compound::Array { elem, len } => match self.symbol(*len) {
                    Some(sym) => format!("[{}; {}]", self.name(*elem), sym.name),
                    None => format!("[{}; {len}]", self.name(*elem)),
                },
                Compound::Tuple(elems) => {
                    let names: Vec<String> = elems.iter().map(|t| self.name(*t)).collect();
                    format!("({})", names.join(", "))
                }
                Compound::Struct { name, .. } => name.clone(),
            },
            Ty::Tile(t) => t.name(),
            scalar => scalar.rust_name().to_string(),
        }
    }

    /// True for a type a local variable may hold (not `()`, `!` or `Dim3`
    /// alone... `Dim3` may: `let g = global_id();`).
    pub fn is_value(&self, ty: Ty) -> bool {
        !matches!(ty, Ty::Unit | Ty::Never)
    }
}

impl Ty {
    /// True for the integer types.
    pub fn is_integer(self) -> bool {
        matches!(self, Ty::I32 | Ty::U32 | Ty::Usize | Ty::I64 | Ty::U64)
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }

    /// The vector type, if this is one.
    pub fn as_vector(self) -> Option<VecTy> {
        match self {
            Ty::Vector(v) => Some(v),
            _ => None,
        }
    }

    /// The type of one lane of a vector; a scalar type itself.
    pub fn lane(self) -> Ty {
        match self {
            Ty::Vector(v) => v.lane.ty(),
            t => t,
        }
    }

    /// True for the numeric types.
    pub fn is_numeric(self) -> bool {
        self.is_integer() || self.is_float()
    }

    /// True for the signed types (integers and floats).
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I32 | Ty::I64) || self.is_float()
    }

    /// True for the 64-bit scalars (`f64`, `i64`, `u64`), which need a
    /// device feature and have fewer GPU builtins than the 32-bit ones.
    pub fn is_wide(self) -> bool {
        matches!(self, Ty::F64 | Ty::I64 | Ty::U64)
    }

    /// True for the types that can be stored in a local or passed around.
    pub fn is_scalar(self) -> bool {
        self.is_numeric() || self == Ty::Bool
    }

    /// The Rust spelling of a non-compound type, for messages (compound
    /// types need their table: [`TypeTable::name`]).
    pub fn rust_name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::F32 => "f32",
            Ty::I32 => "i32",
            Ty::U32 => "u32",
            Ty::Usize => "usize",
            Ty::F16 => "f16",
            Ty::F64 => "f64",
            Ty::I64 => "i64",
            Ty::U64 => "u64",
            Ty::Compound(_) => "(array, tuple or struct)",
            Ty::Vector(v) => v.name(),
            Ty::Dim3 => "Dim3",
            Ty::Tile(t) => t.role.name(),
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
            "f16" => Ty::F16,
            "f64" => Ty::F64,
            "i64" => Ty::I64,
            "u64" => Ty::U64,
            "Dim3" => Ty::Dim3,
            _ => return VecTy::from_name(name).map(Ty::Vector),
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
        "i128" => "use `i64` (it needs the device's `SHADER_INT64`) or `i32`",
        "u128" => "use `u64` (it needs the device's `SHADER_INT64`) or `u32`",
        "isize" => "use `i32`, or `i64` for 64-bit values",
        "i8" | "i16" => "use `i32`: WGSL has no 8- or 16-bit integers",
        "u8" | "u16" => "use `u32`: WGSL has no 8- or 16-bit integers",
        "char" | "str" | "String" => "kernels compute with numbers: use `u32` code points",
        "Vec" => "a kernel cannot allocate: take a `&[T]` or `&mut [T]` buffer parameter",
        "Box" | "Rc" | "Arc" => "a kernel cannot allocate: pass values or buffers",
        "AtomicU64" | "AtomicI64" => {
            "64-bit atomics are not supported (WGSL has `atomic<u32>` and `atomic<i32>` only): use `&[AtomicU32]` or `&[AtomicI32]`"
        }
        "Option" | "Result" => "use a `bool` flag beside the value",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_types_are_interned() {
        let mut t = TypeTable::default();
        let a = t.array(Ty::F32, 4);
        let b = t.array(Ty::F32, 4);
        let m = t.array(a, 2);
        assert_eq!(a, b);
        assert_ne!(a, m);
        assert_eq!(t.name(m), "[[f32; 4]; 2]");
        assert_eq!(t.as_array(m), Some((a, 2)));
        let p = t.intern(Compound::Tuple(vec![Ty::F32, Ty::U32]));
        assert_eq!(t.name(p), "(f32, u32)");
        assert_eq!(t.as_tuple(p), Some(&[Ty::F32, Ty::U32][..]));
    }

    #[test]
    fn vectors_by_name_and_layout() {
        for (name, v) in VECTORS {
            assert_eq!(Ty::from_name(name), Some(Ty::Vector(v)));
            assert_eq!(v.name(), name);
            let ctor = VecTy::from_fn_name(&name.to_lowercase());
            assert_eq!(ctor, v.is_glam().then_some(v));
        }
        let t = TypeTable::default();
        let layout = |n: &str| t.wgsl_layout(Ty::from_name(n).unwrap());
        assert_eq!((layout("Vec2"), layout("Vec4"), layout("Vec3A")), (Some((8, 8)), Some((16, 16)), Some((16, 16))));
        // glam's 12-byte three-lane vectors have no WGSL memory layout.
        assert_eq!((layout("Vec3"), layout("IVec3"), layout("UVec3")), (None, None, None));
        // WGSL's vec2<f16> and vec4<f16>, which the runtime's types match.
        assert_eq!((layout("F16Vec2"), layout("F16Vec4")), (Some((4, 4)), Some((8, 8))));
        let v3a = VecTy::from_name("Vec3A").unwrap();
        assert_eq!((v3a.resized(3), v3a.resized(4).name(), v3a.unaligned().name()), (v3a, "Vec4", "Vec3"));
    }
}
