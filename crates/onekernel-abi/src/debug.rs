//! `println!`, `assert!` and `panic!` inside kernels: what the compiler
//! keeps of each call site ([`DebugSite`]), the one parser of Rust's format
//! strings both sides use ([`parse_format`]), and the layout of the print
//! buffer a kernel with such sites binds on the GPU ([`print_buffer`]).
//!
//! The GPU writes only raw argument bits; the runtime decodes them with the
//! site's argument types and formats them on the host with Rust's own
//! formatting, so a value prints exactly as `format!` prints it.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use crate::ScalarType;

/// The print buffer of a kernel with [`DebugSite`]s, bound at
/// `@group(0) @binding(`[`crate::KernelInfo::print_binding`]`)` as
/// `struct { cursor: atomic<u32>, dropped: atomic<u32>, panics: atomic<u32>, debug_assertions: u32, words: array<u32> }`.
/// The runtime writes the four header words before the launch.
///
/// `words` starts with the panic record (the first failed `assert!` or
/// `panic!` writes its record there, [`crate::KernelInfo::panic_record_words`]
/// words), then the print records: an invocation reserves a record's words
/// with `atomicAdd` on `cursor` (only while `cursor` is below the capacity,
/// so the cursor never wraps) and writes them if they fit, else counts one
/// more in `dropped`. A record is `[site, global_id.x, global_id.y,
/// global_id.z, argument words...]` ([`DebugSite::record_words`]).
pub mod print_buffer {
    /// The words reserved so far (may pass the capacity by a few records).
    pub const CURSOR: u32 = 0;
    /// Records that did not fit.
    pub const DROPPED: u32 = 1;
    /// Failed `assert!`/`panic!`s in the launch.
    pub const PANICS: u32 = 2;
    /// 1 when the kernel's `debug_assert*!`s run (the user's crate has
    /// `debug_assertions`), written by the runtime.
    pub const DEBUG_ASSERTIONS: u32 = 3;
    /// Header words before `words`.
    pub const HEADER: u32 = 4;
    /// Words of a record before its arguments: the site and the
    /// invocation's global id.
    pub const RECORD_HEADER: u32 = 4;
    /// The print records' room, in words, unless the device says otherwise
    /// (`Device::set_print_buffer_size`): 1 MiB.
    pub const DEFAULT_WORDS: u32 = 1 << 18;
}

/// What a call site does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DebugKind {
    /// `print!`, `println!`, `eprint!`, `eprintln!`.
    Print {
        /// `eprint!`/`eprintln!`: to stderr.
        stderr: bool,
        /// `println!`/`eprintln!`: a newline after the text.
        newline: bool,
    },
    /// `panic!` (with or without a message).
    Panic,
    /// `unreachable!`.
    Unreachable,
    /// `todo!`.
    Todo,
    /// `unimplemented!`.
    Unimplemented,
    /// `assert!(cond)` / `debug_assert!`.
    Assert,
    /// `assert_eq!(left, right)` / `debug_assert_eq!`: the first two
    /// arguments are `left` and `right`.
    AssertEq,
    /// `assert_ne!(left, right)` / `debug_assert_ne!`.
    AssertNe,
}

impl DebugKind {
    /// Whether the site ends the invocation (every kind but a print).
    pub const fn panics(self) -> bool {
        !matches!(self, DebugKind::Print { .. })
    }

    /// How many of the site's arguments come before the message's own
    /// (`left` and `right` of `assert_eq!`/`assert_ne!`).
    pub const fn leading_args(self) -> usize {
        match self {
            DebugKind::AssertEq | DebugKind::AssertNe => 2,
            _ => 0,
        }
    }
}

/// A printable value's type, as the record holds it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PrintType {
    /// `bool`: one word, 0 or 1.
    Bool,
    /// A scalar: one word (an `f16` as the bits of the `f32` of the same
    /// value, as WGSL cannot bit-cast one `f16`), two for 64-bit types
    /// (low word first).
    Scalar(ScalarType),
    /// A glam vector or `F16Vec*`: each lane as its scalar.
    Vector {
        /// The lanes' type.
        elem: ScalarType,
        /// 2, 3 or 4.
        lanes: u8,
        /// `Vec3A` (named so by `{:?}`), not `Vec3`.
        aligned: bool,
    },
    /// `Dim3`: three words.
    Dim3,
    /// A struct of the module: its fields in declaration order.
    Struct {
        /// The Rust name.
        name: Cow<'static, str>,
        /// Its fields.
        fields: Cow<'static, [PrintField]>,
    },
}

/// A field of a [`PrintType::Struct`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PrintField {
    /// The field's name.
    pub name: Cow<'static, str>,
    /// Its type.
    pub ty: PrintType,
}

impl PrintType {
    /// Words of the record it takes.
    pub fn words(&self) -> u32 {
        match self {
            PrintType::Bool | PrintType::Scalar(ScalarType::F16) => 1,
            PrintType::Scalar(s) => s.size().div_ceil(4),
            PrintType::Vector { elem, lanes, .. } => u32::from(*lanes) * PrintType::Scalar(*elem).words(),
            PrintType::Dim3 => 3,
            PrintType::Struct { fields, .. } => fields.iter().map(|f| f.ty.words()).sum(),
        }
    }
}

/// One argument of a [`DebugSite`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DebugArg {
    /// `name = value` (or a captured `{name}`): its name; `None` for a
    /// positional argument.
    pub name: Option<Cow<'static, str>>,
    /// Its type.
    pub ty: PrintType,
}

/// One `println!`, `assert!`, `panic!`, ... in a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DebugSite {
    /// What it does.
    pub kind: DebugKind,
    /// The source line (1-based) of the macro.
    pub line: u32,
    /// The column (1-based).
    pub column: u32,
    /// The format string as written (without quotes, escapes resolved);
    /// empty when the macro has none.
    pub format: Cow<'static, str>,
    /// Whether the macro has a message (an `assert!` without one says
    /// `assertion failed: cond`).
    pub has_message: bool,
    /// The arguments: [`DebugKind::leading_args`] first, then the
    /// message's positional and named ones.
    pub args: Cow<'static, [DebugArg]>,
    /// `assert!`'s condition as `stringify!` writes it.
    pub condition: Cow<'static, str>,
    /// `debug_assert*!`: the site runs only when this is true, which
    /// `#[kernel]` writes as `cfg!(debug_assertions)` in the user's crate
    /// (the runtime passes it to the GPU in the print buffer's
    /// [`print_buffer::DEBUG_ASSERTIONS`] word). Always true for the
    /// other macros.
    pub enabled: bool,
    /// Whether it is a `debug_assert*!`.
    pub debug_only: bool,
    /// The file of a site in a `#[helper]` the kernel calls, as `file!()`
    /// writes it; empty for the kernel's own sites (and a helper's where
    /// the compiler cannot tell): the kernel's [`KernelInfo::source_file`](crate::KernelInfo::source_file).
    pub file: Cow<'static, str>,
}

impl DebugSite {
    /// Words of one record of this site.
    pub fn record_words(&self) -> u32 {
        print_buffer::RECORD_HEADER + self.args.iter().map(|a| a.ty.words()).sum::<u32>()
    }
}

/// Alignment of a placeholder (`<`, `^`, `>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Align {
    /// `<`
    Left,
    /// `^`
    Center,
    /// `>`
    Right,
}

/// Which formatting trait a placeholder uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatTrait {
    /// `{}`
    Display,
    /// `{:?}`
    Debug,
    /// `{:x?}`
    DebugLowerHex,
    /// `{:X?}`
    DebugUpperHex,
    /// `{:x}`
    LowerHex,
    /// `{:X}`
    UpperHex,
    /// `{:o}`
    Octal,
    /// `{:b}`
    Binary,
    /// `{:e}`
    LowerExp,
    /// `{:E}`
    UpperExp,
}

/// A placeholder's format spec: `[[fill]align][sign]['#']['0'][width]['.' precision]type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FormatSpec {
    /// The fill character (a space unless given).
    pub fill: char,
    /// The alignment, if given.
    pub align: Option<Align>,
    /// `+`
    pub plus: bool,
    /// `-` (accepted and unused, as in Rust).
    pub minus: bool,
    /// `#`
    pub alternate: bool,
    /// `0`
    pub zero: bool,
    /// The width, a literal.
    pub width: Option<usize>,
    /// The precision, a literal.
    pub precision: Option<usize>,
    /// The trait.
    pub trait_: FormatTrait,
}

/// Which argument a placeholder formats.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ArgRef {
    /// The `n`-th positional argument (`{}` counts them implicitly).
    Index(usize),
    /// A named argument or a captured variable.
    Name(String),
}

/// A piece of a parsed format string.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Piece {
    /// Text printed as it is (`{{` already `{`).
    Text(String),
    /// A placeholder.
    Arg {
        /// Its argument.
        arg: ArgRef,
        /// Its spec.
        spec: FormatSpec,
    },
}

/// Why a format string is not one a kernel can print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What is wrong.
    pub message: String,
    /// Whether rustc rejects it too (bad syntax, `{:p}`): then rustc's
    /// error is the one shown.
    pub rustc_rejects: bool,
}

fn err(message: &str, rustc_rejects: bool) -> FormatError {
    FormatError { message: String::from(message), rustc_rejects }
}

/// Parses a format string as `format_args!` does (positional `{}` counted
/// implicitly, `{0}`, `{name}`, `{{`/`}}`), with width and precision as
/// literals only (`{:1$}`, `{:.*}` and `{:w$}` are refused: a kernel's
/// format is fixed when it is compiled).
pub fn parse_format(s: &str) -> Result<Vec<Piece>, FormatError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    let mut next = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err(err("unmatched `}` in format string", true)),
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => return Err(err("expected `}` in format string", true)),
                    }
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(core::mem::take(&mut text)));
                }
                let (name, spec) = match inner.find(':') {
                    Some(at) => (&inner[..at], Some(&inner[at + 1..])),
                    None => (&inner[..], None),
                };
                let name = name.trim();
                let arg = if name.is_empty() {
                    next += 1;
                    ArgRef::Index(next - 1)
                } else if let Ok(n) = name.parse::<usize>() {
                    ArgRef::Index(n)
                } else if is_identifier(name) {
                    ArgRef::Name(String::from(name.strip_prefix("r#").unwrap_or(name)))
                } else {
                    return Err(err("invalid argument name in format string", true));
                };
                let spec = match spec {
                    Some(spec) => parse_spec(spec)?,
                    None => FormatSpec::DISPLAY,
                };
                pieces.push(Piece::Arg { arg, spec });
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn is_identifier(s: &str) -> bool {
    let s = s.strip_prefix("r#").unwrap_or(s);
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_') && chars.all(|c| c.is_alphanumeric() || c == '_')
}

impl FormatSpec {
    /// `{}`
    pub const DISPLAY: FormatSpec = FormatSpec {
        fill: ' ',
        align: None,
        plus: false,
        minus: false,
        alternate: false,
        zero: false,
        width: None,
        precision: None,
        trait_: FormatTrait::Display,
    };
}

fn align_of(c: char) -> Option<Align> {
    match c {
        '<' => Some(Align::Left),
        '^' => Some(Align::Center),
        '>' => Some(Align::Right),
        _ => None,
    }
}

fn parse_spec(spec: &str) -> Result<FormatSpec, FormatError> {
    let mut out = FormatSpec::DISPLAY;
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    if chars.len() >= 2 && align_of(chars[1]).is_some() {
        out.fill = chars[0];
        out.align = align_of(chars[1]);
        i = 2;
    } else if let Some(a) = chars.first().and_then(|&c| align_of(c)) {
        out.align = Some(a);
        i = 1;
    }
    if chars.get(i) == Some(&'+') {
        out.plus = true;
        i += 1;
    } else if chars.get(i) == Some(&'-') {
        out.minus = true;
        i += 1;
    }
    if chars.get(i) == Some(&'#') {
        out.alternate = true;
        i += 1;
    }
    // `0` is the flag unless it is followed by `$` (an argument index).
    if chars.get(i) == Some(&'0') && chars.get(i + 1) != Some(&'$') {
        out.zero = true;
        i += 1;
    }
    let (width, after) = count(&chars, i)?;
    out.width = width;
    i = after;
    if chars.get(i) == Some(&'.') {
        if chars.get(i + 1) == Some(&'*') {
            return Err(err("a precision from an argument (`.*`) cannot be printed by a kernel", false));
        }
        let (precision, after) = count(&chars, i + 1)?;
        if precision.is_none() {
            return Err(err("expected a precision after `.` in format string", true));
        }
        out.precision = precision;
        i = after;
    }
    let rest: String = chars[i..].iter().collect();
    out.trait_ = match rest.as_str() {
        "" => FormatTrait::Display,
        "?" => FormatTrait::Debug,
        "x?" => FormatTrait::DebugLowerHex,
        "X?" => FormatTrait::DebugUpperHex,
        "x" => FormatTrait::LowerHex,
        "X" => FormatTrait::UpperHex,
        "o" => FormatTrait::Octal,
        "b" => FormatTrait::Binary,
        "e" => FormatTrait::LowerExp,
        "E" => FormatTrait::UpperExp,
        // No kernel value is a pointer: rustc says so.
        "p" => return Err(err("`{:p}` prints an address, and a kernel's values have none", true)),
        _ => return Err(err("unknown format trait in format string", true)),
    };
    Ok(out)
}

/// A width or precision at `i`: digits, or an argument (`name$`, `1$`),
/// which a kernel cannot take.
fn count(chars: &[char], i: usize) -> Result<(Option<usize>, usize), FormatError> {
    let mut j = i;
    while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
        j += 1;
    }
    if chars.get(j) == Some(&'$') {
        return Err(err("a width or precision from an argument (`name$`, `1$`) cannot be printed by a kernel", false));
    }
    let mut j = i;
    let mut n: Option<usize> = None;
    while let Some(d) = chars.get(j).and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        j += 1;
    }
    Ok((n, j))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn parses_rusts_format_specs() {
        let p = parse_format("a {{ {} {:>8.3} {x:#010x} {1:?} }}").expect("parses");
        assert_eq!(p.len(), 9);
        assert_eq!(p[0], Piece::Text("a { ".into()));
        assert_eq!(p[1], Piece::Arg { arg: ArgRef::Index(0), spec: FormatSpec::DISPLAY });
        let Piece::Arg { arg: ArgRef::Index(1), spec } = &p[3] else { panic!("{p:?}") };
        assert_eq!((spec.align, spec.width, spec.precision), (Some(Align::Right), Some(8), Some(3)));
        let Piece::Arg { arg: ArgRef::Name(n), spec } = &p[5] else { panic!("{p:?}") };
        assert_eq!(n, "x");
        assert!(spec.alternate && spec.zero && spec.width == Some(10) && spec.trait_ == FormatTrait::LowerHex);
        let Piece::Arg { arg: ArgRef::Index(1), spec } = &p[7] else { panic!("{p:?}") };
        assert_eq!(spec.trait_, FormatTrait::Debug);
        let fill = parse_format("{:*^+9e}").expect("parses");
        let Piece::Arg { spec, .. } = &fill[0] else { panic!() };
        assert_eq!(
            (spec.fill, spec.align, spec.plus, spec.trait_),
            ('*', Some(Align::Center), true, FormatTrait::LowerExp)
        );
        assert_eq!(parse_format("x").expect("parses"), vec![Piece::Text("x".into())]);
    }

    #[test]
    fn refuses_what_a_kernel_cannot_print() {
        for (s, rustc) in
            [("{:p}", true), ("{:w$}", false), ("{:.*}", false), ("{:1$}", false), ("{", true), ("}", true)]
        {
            let e = parse_format(s).expect_err(s);
            assert_eq!(e.rustc_rejects, rustc, "{s}: {}", e.message);
        }
    }
}
