//! Compiler diagnostics as the page shows them: the message, label, notes
//! and help the macro gives, the span as lines and columns (the editor
//! underlines it), and the text rustc would print (the compiler's
//! `Diagnostic::render`, as `onekernel explain` prints it).

use onekernel_compiler::Diagnostic;
use serde::Serialize;

/// A position: 1-based line, column in characters from 0.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// Characters from the start of the line.
    pub column: usize,
}

/// A label on other tokens.
#[derive(Debug, Serialize)]
pub struct Secondary {
    /// Where.
    pub start: Pos,
    /// Its end.
    pub end: Pos,
    /// What it says.
    pub text: String,
}

/// One error, as the page shows it.
#[derive(Debug, Serialize)]
pub struct Error {
    /// The primary message.
    pub message: String,
    /// Under the primary span.
    pub label: Option<String>,
    /// `= note:` lines.
    pub notes: Vec<String>,
    /// `= help:` line.
    pub help: Option<String>,
    /// Start of the primary span (None: no position, the whole kernel).
    pub start: Option<Pos>,
    /// Its end.
    pub end: Option<Pos>,
    /// Labels on related tokens.
    pub secondary: Vec<Secondary>,
    /// The error as rustc prints it.
    pub rendered: String,
}

/// The file name shown in rendered errors.
pub const FILE: &str = "kernel.rs";

fn pos(p: proc_macro2::LineColumn) -> Option<Pos> {
    (p.line > 0).then_some(Pos { line: p.line, column: p.column })
}

/// A diagnostic as the page shows it (those of
/// `onekernel_compiler::compile_program`: to be shown, each once).
pub fn convert(source: &str, d: &Diagnostic) -> Error {
    Error {
        message: d.message.clone(),
        label: d.label.clone(),
        notes: d.notes.clone(),
        help: d.help.clone(),
        start: pos(d.span.start()),
        end: pos(d.span.end()),
        secondary: d
            .secondary
            .iter()
            .filter_map(|l| {
                Some(Secondary { start: pos(l.span.start())?, end: pos(l.span.end())?, text: l.text.clone() })
            })
            .collect(),
        rendered: d.render(source, FILE),
    }
}
