//! Compiler diagnostics rendered as rustc renders its own (source snippet,
//! underlines with labels, `= note:` and `= help:` lines), with
//! annotate-snippets, rustc's renderer.

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use onekernel_compiler::Diagnostic;

/// One diagnostic as text, ending in a blank line.
pub fn render(path: &str, source: &str, d: &Diagnostic) -> String {
    let title = Level::ERROR.primary_title(d.message.as_str());
    let group = match byte_range(source, d.span) {
        Some(r) => {
            let primary = AnnotationKind::Primary.span(r);
            let primary = match &d.label {
                Some(label) => primary.label(label.as_str()),
                None => primary,
            };
            let mut snippet = Snippet::source(source).path(path).annotation(primary);
            for l in &d.secondary {
                if let Some(r) = byte_range(source, l.span) {
                    snippet = snippet.annotation(AnnotationKind::Context.span(r).label(l.text.as_str()));
                }
            }
            title.element(snippet)
        }
        // No position (the call site): name the file only.
        None => title.element(Level::NOTE.message(format!("in `{path}`"))),
    };
    let group = d.notes.iter().fold(group, |g, n| g.element(Level::NOTE.message(n.as_str())));
    let group = match &d.help {
        Some(h) => group.element(Level::HELP.message(h.as_str())),
        None => group,
    };
    format!("{}\n\n", Renderer::plain().render(&[group]))
}

/// The span's bytes in `source` (proc-macro2 lines are 1-based, columns
/// count chars from 0), or None without a position.
fn byte_range(source: &str, span: proc_macro2::Span) -> Option<std::ops::Range<usize>> {
    let (start, end) = (span.start(), span.end());
    if start.line == 0 {
        return None;
    }
    let offset = |line: usize, column: usize| -> Option<usize> {
        let line_start = source.split_inclusive('\n').take(line - 1).map(str::len).sum::<usize>();
        let text = source.get(line_start..)?.lines().next().unwrap_or("");
        Some(line_start + text.char_indices().nth(column).map_or(text.len(), |(i, _)| i))
    };
    let s = offset(start.line, start.column)?;
    let e = offset(end.line, end.column)?.max(s);
    Some(s..e)
}
