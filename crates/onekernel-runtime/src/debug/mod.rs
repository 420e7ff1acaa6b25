//! `println!`, `assert!` and `panic!` inside kernels: the host's side.
//!
//! On the GPU a kernel with such call sites writes records of raw bits
//! into its print buffer ([`onekernel_abi::debug::print_buffer`]); the
//! runtime reads the buffer back when the launch's work is waited for,
//! decodes each record with its site's argument types (`decode`) and
//! formats it from the site's format string with Rust's own formatting
//! (`format_site`), so a value prints as `format!` prints it. On the CPU
//! the kernel's body formats with Rust's macros itself and calls
//! [`debug_print`].
//!
//! Every line is prefixed with the kernel's name and the invocation's
//! global id (`[kernel (x, y, z)] text`, [`PrintedLine`]) and written to
//! stdout (`eprint!`/`eprintln!`: stderr), or handed to the handler set
//! with [`set_print_handler`].

use crate::grid::{Dim3, Invocation};
use crate::F16Vec2;
use crate::F16Vec4;
use onekernel_abi::debug::{parse_format, print_buffer, ArgRef, FormatSpec, FormatTrait, Piece};
use onekernel_abi::{DebugKind, DebugSite, KernelInfo, PrintType, ScalarType};
use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::{Arc, RwLock};

/// One printed line of a kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PrintedLine {
    /// The kernel's name.
    pub kernel: String,
    /// The global id of the invocation that printed it.
    pub invocation: [u32; 3],
    /// The line, without its newline.
    pub text: String,
    /// Printed with `eprint!`/`eprintln!`.
    pub stderr: bool,
}

impl fmt::Display for PrintedLine {
    /// `[kernel (x, y, z)] text`, as the runtime prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.invocation;
        write!(f, "[{} ({x}, {y}, {z})] {}", self.kernel, self.text)
    }
}

/// A handler of printed lines (see [`set_print_handler`]).
pub type PrintHandler = Arc<dyn Fn(&PrintedLine) + Send + Sync>;

static HANDLER: RwLock<Option<PrintHandler>> = RwLock::new(None);

/// Sends every line kernels print (on any device, in this process) to
/// `handler` instead of stdout/stderr; `None` restores printing. Returns
/// the previous handler.
pub fn set_print_handler(handler: Option<PrintHandler>) -> Option<PrintHandler> {
    let mut h = HANDLER.write().unwrap_or_else(|p| p.into_inner());
    std::mem::replace(&mut *h, handler)
}

/// Prints `line` (or hands it to the handler).
pub(crate) fn emit(line: &PrintedLine) {
    let handler = HANDLER.read().unwrap_or_else(|p| p.into_inner()).clone();
    match handler {
        Some(h) => h(line),
        None if line.stderr => eprintln!("{line}"),
        None => println!("{line}"),
    }
}

/// Text of one invocation, split into lines (an unfinished last line is a
/// line too).
fn emit_text(kernel: &str, invocation: [u32; 3], stderr: bool, text: &str) {
    for l in text.split_inclusive('\n') {
        let l = l.strip_suffix('\n').unwrap_or(l);
        emit(&PrintedLine { kernel: kernel.to_string(), invocation, text: l.to_string(), stderr });
    }
}

fn gid(inv: &Invocation) -> [u32; 3] {
    let g = inv.global_id;
    [g.x as u32, g.y as u32, g.z as u32]
}

/// An unfinished line: (kernel, invocation, stderr, text).
type Pending = (String, [u32; 3], bool, String);

thread_local! {
    /// An unfinished line (`print!` without a newline) of this thread's
    /// last printing invocation: (kernel, invocation, stderr, text).
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
    /// The invocation whose `panic!`/failed `assert!` is running on this
    /// thread (see [`PanicSite`]).
    static PANIC_SITE: RefCell<Option<[u32; 3]>> = const { RefCell::new(None) };
    /// The invocation and kernel of the helper call running on this
    /// thread (see [`HelperScope`]).
    static HELPER: std::cell::Cell<Option<([u32; 3], &'static KernelInfo)>> = const { std::cell::Cell::new(None) };
}

/// Entered by the CPU body around each call of a `#[helper]` when a helper
/// of the kernel prints or panics: the helper's `println!`
/// ([`helper_print`]) and panics ([`PanicSite::in_helper`]) then report
/// this invocation of this kernel, as the kernel's own do. Called from
/// host code, a helper prints and panics as plain Rust.
pub struct HelperScope(Option<([u32; 3], &'static KernelInfo)>);

impl HelperScope {
    /// Marks this thread as running a helper for `invocation` of `kernel`.
    pub fn enter(invocation: &Invocation, kernel: &'static KernelInfo) -> HelperScope {
        HelperScope(HELPER.with(|h| h.replace(Some((gid(invocation), kernel)))))
    }
}

impl Drop for HelperScope {
    fn drop(&mut self) {
        HELPER.with(|h| h.set(self.0));
    }
}

/// A helper's `print!`/`println!`/`eprint!`/`eprintln!` (as `#[helper]`
/// rewrites them): inside a kernel's [`HelperScope`], the kernel's
/// [`debug_print`]; elsewhere Rust's own.
pub fn helper_print(stderr: bool, newline: bool, args: fmt::Arguments<'_>) {
    match HELPER.with(std::cell::Cell::get) {
        Some((id, kernel)) => print_text(id, &kernel.name, stderr, newline, args),
        None => match (stderr, newline) {
            (false, false) => print!("{args}"),
            (false, true) => println!("{args}"),
            (true, false) => eprint!("{args}"),
            (true, true) => eprintln!("{args}"),
        },
    }
}

/// The CPU body's `print!`/`println!`/`eprint!`/`eprintln!`: the text,
/// prefixed per line. A `print!` without a newline waits in this thread
/// until its line ends, another invocation of this thread prints, or the
/// launch ends.
pub fn debug_print(
    invocation: &Invocation,
    kernel: &KernelInfo,
    stderr: bool,
    newline: bool,
    args: fmt::Arguments<'_>,
) {
    print_text(gid(invocation), &kernel.name, stderr, newline, args);
}

/// [`debug_print`] of the invocation `id` of the kernel `name`.
fn print_text(id: [u32; 3], name: &str, stderr: bool, newline: bool, args: fmt::Arguments<'_>) {
    let mut text = fmt::format(args);
    if newline {
        text.push('\n');
    }
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if let Some((k, i, e, pending)) = p.take() {
            if k == name && i == id && e == stderr {
                text.insert_str(0, &pending);
            } else {
                emit_text(&k, i, e, &pending);
            }
        }
        let done = text.rfind('\n').map_or(0, |at| at + 1);
        emit_text(name, id, stderr, &text[..done]);
        if done < text.len() {
            *p = Some((name.to_string(), id, stderr, text[done..].to_string()));
        }
    });
}

/// Ends this thread's unfinished line, if any (at the end of a launch).
pub(crate) fn flush_pending() {
    if let Some((k, i, e, text)) = PENDING.with(|p| p.borrow_mut().take()) {
        emit_text(&k, i, e, &text);
    }
}

/// Entered by the CPU body just before a `panic!` or a failed `assert!`:
/// the runtime's panic hook then reports the panic as
/// [`crate::LaunchError::KernelPanic`] of this invocation.
pub struct PanicSite(());

impl PanicSite {
    /// Marks this thread as panicking for `invocation`.
    pub fn enter(invocation: &Invocation) -> PanicSite {
        let id = gid(invocation);
        PANIC_SITE.with(|s| *s.borrow_mut() = Some(id));
        PanicSite(())
    }

    /// A helper's `panic!`/failed `assert!` (as `#[helper]` rewrites them):
    /// marks this thread as panicking for the invocation of the
    /// [`HelperScope`], if the helper runs in one.
    pub fn in_helper() -> PanicSite {
        if let Some((id, _)) = HELPER.with(std::cell::Cell::get) {
            PANIC_SITE.with(|s| *s.borrow_mut() = Some(id));
        }
        PanicSite(())
    }
}

impl Drop for PanicSite {
    fn drop(&mut self) {
        PANIC_SITE.with(|s| *s.borrow_mut() = None);
    }
}

/// The invocation of the panic site this thread is in (for the hook).
pub(crate) fn panic_site() -> Option<[u32; 3]> {
    PANIC_SITE.with(|s| *s.borrow())
}

// ---- decoding -------------------------------------------------------------

/// A value of a record, decoded.
#[derive(Clone)]
enum Value {
    Bool(bool),
    F16(half::f16),
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    Vec2(glam::Vec2),
    Vec3(glam::Vec3),
    Vec3A(glam::Vec3A),
    Vec4(glam::Vec4),
    IVec2(glam::IVec2),
    IVec3(glam::IVec3),
    IVec4(glam::IVec4),
    UVec2(glam::UVec2),
    UVec3(glam::UVec3),
    UVec4(glam::UVec4),
    F16Vec2(F16Vec2),
    F16Vec4(F16Vec4),
    Dim3(Dim3),
    Struct(String, Vec<(String, Value)>),
}

fn scalar(ty: ScalarType, words: &mut impl Iterator<Item = u32>) -> Value {
    let mut next = || words.next().unwrap_or(0);
    match ty {
        // Sent as the `f32` of the same value (see `PrintType::words`).
        ScalarType::F16 => Value::F16(half::f16::from_f32(f32::from_bits(next()))),
        ScalarType::F32 => Value::F32(f32::from_bits(next())),
        ScalarType::I32 => Value::I32(next() as i32),
        ScalarType::U32 => Value::U32(next()),
        ScalarType::F64 | ScalarType::I64 | ScalarType::U64 => {
            let low = u64::from(next());
            let bits = low | (u64::from(next()) << 32);
            match ty {
                ScalarType::F64 => Value::F64(f64::from_bits(bits)),
                ScalarType::I64 => Value::I64(bits as i64),
                _ => Value::U64(bits),
            }
        }
    }
}

/// Decodes one value of type `ty` from `words`.
fn decode(ty: &PrintType, words: &mut impl Iterator<Item = u32>) -> Value {
    match ty {
        PrintType::Bool => Value::Bool(words.next().unwrap_or(0) != 0),
        PrintType::Scalar(s) => scalar(*s, words),
        PrintType::Dim3 => {
            let mut n = || words.next().unwrap_or(0) as usize;
            Value::Dim3(Dim3::new(n(), n(), n()))
        }
        PrintType::Vector { elem, lanes, aligned } => {
            let lanes: Vec<Value> = (0..*lanes).map(|_| scalar(*elem, words)).collect();
            let f = |i: usize| match lanes[i] {
                Value::F32(x) => x,
                _ => 0.0,
            };
            let int = |i: usize| match lanes[i] {
                Value::I32(x) => x,
                _ => 0,
            };
            let uint = |i: usize| match lanes[i] {
                Value::U32(x) => x,
                _ => 0,
            };
            let half = |i: usize| match lanes[i] {
                Value::F16(x) => x,
                _ => half::f16::ZERO,
            };
            match (elem, lanes.len(), aligned) {
                (ScalarType::F32, 2, _) => Value::Vec2(glam::Vec2::new(f(0), f(1))),
                (ScalarType::F32, 3, false) => Value::Vec3(glam::Vec3::new(f(0), f(1), f(2))),
                (ScalarType::F32, 3, true) => Value::Vec3A(glam::Vec3A::new(f(0), f(1), f(2))),
                (ScalarType::F32, _, _) => Value::Vec4(glam::Vec4::new(f(0), f(1), f(2), f(3))),
                (ScalarType::I32, 2, _) => Value::IVec2(glam::IVec2::new(int(0), int(1))),
                (ScalarType::I32, 3, _) => Value::IVec3(glam::IVec3::new(int(0), int(1), int(2))),
                (ScalarType::I32, _, _) => Value::IVec4(glam::IVec4::new(int(0), int(1), int(2), int(3))),
                (ScalarType::U32, 2, _) => Value::UVec2(glam::UVec2::new(uint(0), uint(1))),
                (ScalarType::U32, 3, _) => Value::UVec3(glam::UVec3::new(uint(0), uint(1), uint(2))),
                (ScalarType::U32, _, _) => Value::UVec4(glam::UVec4::new(uint(0), uint(1), uint(2), uint(3))),
                (ScalarType::F16, 2, _) => Value::F16Vec2(F16Vec2::new(half(0), half(1))),
                (_, _, _) => Value::F16Vec4(F16Vec4::new(half(0), half(1), half(2), half(3))),
            }
        }
        PrintType::Struct { name, fields } => {
            Value::Struct(name.to_string(), fields.iter().map(|f| (f.name.to_string(), decode(&f.ty, words))).collect())
        }
    }
}

/// Forwards trait `$t` to the inner value, for the types that have it.
macro_rules! forward {
    ($t:path, $self:ident, $f:ident, [$($v:ident),*]) => {
        match $self {
            $(Value::$v(x) => <_ as $t>::fmt(x, $f),)*
            #[allow(unreachable_patterns)]
            _ => Err(fmt::Error),
        }
    };
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        forward!(
            fmt::Display,
            self,
            f,
            [
                Bool, F16, F32, F64, I32, U32, I64, U64, Vec2, Vec3, Vec3A, Vec4, IVec2, IVec3, IVec4, UVec2, UVec3,
                UVec4, Dim3
            ]
        )
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Value::Struct(name, fields) = self {
            let mut s = f.debug_struct(name);
            for (n, v) in fields {
                s.field(n, v);
            }
            return s.finish();
        }
        forward!(
            fmt::Debug,
            self,
            f,
            [
                Bool, F16, F32, F64, I32, U32, I64, U64, Vec2, Vec3, Vec3A, Vec4, IVec2, IVec3, IVec4, UVec2, UVec3,
                UVec4, F16Vec2, F16Vec4, Dim3
            ]
        )
    }
}

/// A value and the trait a placeholder formats it with; its `Display`
/// (and its `Debug`, for `{:x?}`) is that trait's, with the formatter's
/// flags.
struct Traited<'a>(&'a Value, FormatTrait);

impl fmt::Display for Traited<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        match self.1 {
            FormatTrait::Display => fmt::Display::fmt(v, f),
            FormatTrait::Debug | FormatTrait::DebugLowerHex | FormatTrait::DebugUpperHex => fmt::Debug::fmt(v, f),
            FormatTrait::LowerHex => forward!(fmt::LowerHex, v, f, [I32, U32, I64, U64]),
            FormatTrait::UpperHex => forward!(fmt::UpperHex, v, f, [I32, U32, I64, U64]),
            FormatTrait::Octal => forward!(fmt::Octal, v, f, [I32, U32, I64, U64]),
            FormatTrait::Binary => forward!(fmt::Binary, v, f, [I32, U32, I64, U64]),
            FormatTrait::LowerExp => forward!(fmt::LowerExp, v, f, [F16, F32, F64, I32, U32, I64, U64]),
            FormatTrait::UpperExp => forward!(fmt::UpperExp, v, f, [F16, F32, F64, I32, U32, I64, U64]),
        }
    }
}

impl fmt::Debug for Traited<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

/// Writes `v` as the placeholder `spec` does, with Rust's formatting: the
/// flags a format string fixes at compile time are one `write!` each
/// (`spec_table.rs`); the fill is written as NUL and replaced.
fn write_spec(out: &mut String, value: &Value, spec: &FormatSpec) -> fmt::Result {
    let v = Traited(value, spec.trait_);
    let kind = match spec.trait_ {
        FormatTrait::DebugLowerHex => 1u8,
        FormatTrait::DebugUpperHex => 2,
        _ => 0,
    };
    let align = match spec.align {
        None => 0u8,
        Some(onekernel_abi::debug::Align::Left) => 1,
        Some(onekernel_abi::debug::Align::Center) => 2,
        Some(onekernel_abi::debug::Align::Right) => 3,
    };
    let key = (kind, spec.plus, spec.alternate, spec.zero, spec.precision.is_some(), align);
    let (w, p) = (spec.width.unwrap_or(0), spec.precision.unwrap_or(0));
    let start = out.len();
    include!("spec_table.rs")?;
    if align != 0 && spec.fill != '\0' {
        let tail = out[start..].replace('\0', spec.fill.encode_utf8(&mut [0; 4]));
        out.truncate(start);
        out.push_str(&tail);
    }
    Ok(())
}

/// The message of a site's format string over `values` (the site's
/// arguments after its leading ones), as `format!` writes it.
fn format_message(site: &DebugSite, values: &[Value]) -> String {
    let mut out = String::new();
    let Ok(pieces) = parse_format(&site.format) else {
        return site.format.to_string();
    };
    let leading = site.kind.leading_args();
    let positional: Vec<usize> = (leading..site.args.len()).filter(|&i| site.args[i].name.is_none()).collect();
    for piece in pieces {
        match piece {
            Piece::Text(t) => out.push_str(&t),
            Piece::Arg { arg, spec } => {
                let index = match arg {
                    ArgRef::Index(i) => positional.get(i).copied(),
                    ArgRef::Name(n) => site.args.iter().position(|a| a.name.as_deref() == Some(n.as_str())),
                };
                match index.and_then(|i| values.get(i)) {
                    Some(v) => {
                        if write_spec(&mut out, v, &spec).is_err() {
                            out.push_str("<unprintable>");
                        }
                    }
                    None => out.push_str("<missing>"),
                }
            }
        }
    }
    out
}

/// A site's text: a print's formatted message, or a panic's message as
/// Rust's panics write it (`assertion `left == right` failed ...`).
fn format_site(site: &DebugSite, values: &[Value]) -> String {
    let message = site.has_message.then(|| format_message(site, values));
    let with = |prefix: &str| match &message {
        Some(m) => format!("{prefix}: {m}"),
        None => prefix.to_string(),
    };
    match site.kind {
        DebugKind::Print { newline, .. } => {
            let mut m = message.unwrap_or_default();
            if newline {
                m.push('\n');
            }
            m
        }
        DebugKind::Panic => message.unwrap_or_else(|| "explicit panic".to_string()),
        DebugKind::Unreachable => with("internal error: entered unreachable code"),
        DebugKind::Todo => with("not yet implemented"),
        DebugKind::Unimplemented => with("not implemented"),
        DebugKind::Assert => message.unwrap_or_else(|| format!("assertion failed: {}", site.condition)),
        DebugKind::AssertEq | DebugKind::AssertNe => {
            let op = if site.kind == DebugKind::AssertEq { "==" } else { "!=" };
            let head = with(&format!("assertion `left {op} right` failed"));
            let (l, r) = (values.first(), values.get(1));
            let show = |v: Option<&Value>| v.map(|v| format!("{v:?}")).unwrap_or_default();
            format!("{head}\n  left: {}\n right: {}", show(l), show(r))
        }
    }
}

/// One decoded record: the site, the invocation and the values.
struct Record<'k> {
    site: &'k DebugSite,
    invocation: [u32; 3],
    values: Vec<Value>,
}

/// Decodes the record at `words[0..]`; its length.
fn record<'k>(kernel: &'k KernelInfo, words: &[u32]) -> Option<(Record<'k>, usize)> {
    let site = kernel.debug_sites.get(*words.first()? as usize)?;
    let len = site.record_words() as usize;
    let words = words.get(..len)?;
    let invocation = [words[1], words[2], words[3]];
    let mut it = words[print_buffer::RECORD_HEADER as usize..].iter().copied();
    let values = site.args.iter().map(|a| decode(&a.ty, &mut it)).collect();
    Some((Record { site, invocation, values }, len))
}

/// What a launch's print buffer held: its lines were printed; the panic,
/// if one, as the launch's error.
pub(crate) fn drain(kernel: &'static KernelInfo, buffer: &[u32]) -> Result<(), crate::LaunchError> {
    let header = print_buffer::HEADER as usize;
    let (cursor, dropped, panics) = (
        buffer.get(print_buffer::CURSOR as usize).copied().unwrap_or(0) as usize,
        buffer.get(print_buffer::DROPPED as usize).copied().unwrap_or(0),
        buffer.get(print_buffer::PANICS as usize).copied().unwrap_or(0),
    );
    let words = buffer.get(header..).unwrap_or(&[]);
    let reserved = kernel.panic_record_words() as usize;
    let prints = words.get(reserved..).unwrap_or(&[]);
    let end = cursor.min(prints.len());
    let mut records = Vec::new();
    let mut at = 0;
    while at < end {
        let Some((r, len)) = record(kernel, &prints[at..end]) else { break };
        records.push(r);
        at += len;
    }
    // In a stable order: by invocation (z, y, x), each invocation's
    // records in the order it wrote them.
    records.sort_by_key(|r| (r.invocation[2], r.invocation[1], r.invocation[0]));
    let mut i = 0;
    while i < records.len() {
        let inv = records[i].invocation;
        let mut out = String::new();
        let mut err = String::new();
        while i < records.len() && records[i].invocation == inv {
            let r = &records[i];
            let stderr = matches!(r.site.kind, DebugKind::Print { stderr: true, .. });
            let text = format_site(r.site, &r.values);
            if stderr {
                err.push_str(&text);
            } else {
                out.push_str(&text);
            }
            i += 1;
        }
        emit_text(&kernel.name, inv, false, &out);
        emit_text(&kernel.name, inv, true, &err);
    }
    if dropped > 0 {
        emit(&PrintedLine {
            kernel: kernel.name.to_string(),
            invocation: [0; 3],
            text: format!(
                "... {dropped} printed line{} dropped: the print buffer was full",
                if dropped == 1 { "" } else { "s" }
            ),
            stderr: true,
        });
    }
    if panics > 0 {
        let Some((r, _)) = record(kernel, words) else {
            return Err(crate::LaunchError::InvalidKernel {
                kernel: &kernel.name,
                problem: "a panic's record names no panic site".to_string(),
            });
        };
        let [x, y, z] = r.invocation;
        return Err(crate::LaunchError::KernelPanic {
            kernel: &kernel.name,
            file: if r.site.file.is_empty() { &kernel.source_file } else { &r.site.file }.to_string(),
            line: r.site.line,
            column: r.site.column,
            message: format_site(r.site, &r.values),
            invocation: Dim3::new(x as usize, y as usize, z as usize),
            panics,
        });
    }
    Ok(())
}

/// The header words a launch of `kernel` starts its print buffer with.
pub(crate) fn header(kernel: &KernelInfo) -> [u32; print_buffer::HEADER as usize] {
    let debug = kernel.debug_sites.iter().any(|s| s.debug_only && s.enabled);
    let mut h = [0; print_buffer::HEADER as usize];
    h[print_buffer::DEBUG_ASSERTIONS as usize] = u32::from(debug);
    h
}

/// The print buffer's size in words for a launch of `kernel`: the header,
/// the panic slot and, if it prints, `room` words of records.
pub(crate) fn buffer_words(kernel: &KernelInfo, room: u32) -> u32 {
    let prints = kernel.debug_sites.iter().any(|s| !s.kind.panics());
    print_buffer::HEADER + kernel.panic_record_words() + if prints { room.max(1) } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU runs a kernel's `debug_assert!`s when the kernel's crate
    /// has `debug_assertions` (its sites say so), and only then.
    #[test]
    fn the_debug_assertions_word_follows_the_sites() {
        let site = |debug_only, enabled| DebugSite {
            kind: DebugKind::Assert,
            line: 1,
            column: 1,
            format: "".into(),
            has_message: false,
            args: (&[][..]).into(),
            condition: "x".into(),
            enabled,
            debug_only,
            file: "".into(),
        };
        let word = |sites: Vec<DebugSite>| {
            let k = KernelInfo { debug_sites: sites.into(), ..KernelInfo::EMPTY };
            header(&k)[print_buffer::DEBUG_ASSERTIONS as usize]
        };
        assert_eq!(word(vec![site(false, true)]), 0);
        assert_eq!(word(vec![site(false, true), site(true, false)]), 0);
        assert_eq!(word(vec![site(true, true)]), 1);
    }

    fn check(format: &str, value: Value, expected: &str) {
        let pieces = parse_format(format).expect("parses");
        let Piece::Arg { spec, .. } = &pieces[0] else { panic!("{format}") };
        let mut out = String::new();
        write_spec(&mut out, &value, spec).expect("formats");
        assert_eq!(out, expected, "{format}");
    }

    /// The host's formatting is Rust's: each flag combination against
    /// `format!` itself.
    #[test]
    fn formats_as_format_does() {
        check("{}", Value::F32(1.5), &format!("{}", 1.5f32));
        check("{:.3}", Value::F32(1.0 / 3.0), &format!("{:.3}", 1.0f32 / 3.0));
        check("{:>8.2}", Value::F64(2.5), &format!("{:>8.2}", 2.5f64));
        check("{:*^9}", Value::I32(-7), &format!("{:*^9}", -7));
        check("{:#010x}", Value::U32(255), &format!("{:#010x}", 255u32));
        check("{:+e}", Value::F32(1234.5), &format!("{:+e}", 1234.5f32));
        check("{:X}", Value::I64(-1), &format!("{:X}", -1i64));
        check("{:b}", Value::U64(5), &format!("{:b}", 5u64));
        check("{:?}", Value::Vec3(glam::Vec3::new(1.0, 2.0, 3.0)), &format!("{:?}", glam::Vec3::new(1.0, 2.0, 3.0)));
        check("{:.1}", Value::Vec4(glam::Vec4::ONE), &format!("{:.1}", glam::Vec4::ONE));
        check("{:x?}", Value::UVec2(glam::UVec2::new(10, 11)), &format!("{:x?}", glam::UVec2::new(10, 11)));
        check("{:?}", Value::Dim3(Dim3::new(1, 2, 3)), &format!("{:?}", Dim3::new(1, 2, 3)));
        check("{}", Value::F16(half::f16::from_f32(0.5)), &format!("{}", half::f16::from_f32(0.5)));
        check("{:5}", Value::Bool(true), &format!("{:5}", true));
        #[derive(Debug)]
        #[allow(dead_code)]
        struct P {
            a: u32,
            b: f32,
        }
        let s = Value::Struct("P".into(), vec![("a".into(), Value::U32(1)), ("b".into(), Value::F32(2.0))]);
        check("{:?}", s.clone(), &format!("{:?}", P { a: 1, b: 2.0 }));
        check("{:#?}", s.clone(), &format!("{:#?}", P { a: 1, b: 2.0 }));
        check("{:>4?}", s, &format!("{:>4?}", P { a: 1, b: 2.0 }));
    }
}
