//! Compiler diagnostics as the page shows them: the message, label, notes
//! and help the macro gives, the span as lines and columns (the editor
//! underlines it), and the text rustc would print (annotate-snippets, as
//! `onekernel explain` renders it).

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use onekernel_compiler::diagnostic::Disposition;
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

/// The diagnostics the page shows for `d`, or None for those shown
/// elsewhere (at a helper).
pub fn convert(source: &str, d: &Diagnostic) -> Option<Error> {
    let d = match d.disposition {
        Disposition::Report => d.clone(),
        Disposition::ReportedAtHelper => return None,
        // rustc reports these (an unknown name, a type mismatch) when it
        // compiles the kernel as Rust; the playground runs no rustc.
        Disposition::LeftToRustc => Diagnostic::new(d.span, "rustc reports an error here: an unknown name, or a type that does not match")
            .label("rustc's error")
            .help("the playground does not run rustc: check the names and types here, or build the kernel with `cargo build` to see rustc's message"),
    };
    Some(Error {
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
        rendered: render(source, &d),
    })
}

/// One diagnostic as rustc shows it.
pub fn render(source: &str, d: &Diagnostic) -> String {
    let title = Level::ERROR.primary_title(d.message.as_str());
    let group = match byte_range(source, d.span) {
        Some(r) => {
            let primary = AnnotationKind::Primary.span(r);
            let primary = match &d.label {
                Some(label) => primary.label(label.as_str()),
                None => primary,
            };
            let mut snippet = Snippet::source(source).path(FILE).annotation(primary);
            for l in &d.secondary {
                if let Some(r) = byte_range(source, l.span) {
                    snippet = snippet.annotation(AnnotationKind::Context.span(r).label(l.text.as_str()));
                }
            }
            title.element(snippet)
        }
        None => title.element(Level::NOTE.message(format!("in `{FILE}`"))),
    };
    let group = d.notes.iter().fold(group, |g, n| g.element(Level::NOTE.message(n.as_str())));
    let group = match &d.help {
        Some(h) => group.element(Level::HELP.message(h.as_str())),
        None => group,
    };
    format!("{}\n", Renderer::plain().render(&[group]))
}

fn byte_range(source: &str, span: proc_macro2::Span) -> Option<std::ops::Range<usize>> {
    let s = crate::source::offset(source, span.start())?;
    let e = crate::source::offset(source, span.end())?.max(s);
    Some(s..e)
}
