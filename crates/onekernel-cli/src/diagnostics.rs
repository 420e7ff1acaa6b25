//! Compiler diagnostics rendered as rustc renders its own (source snippet,
//! underline, `= help:`), with annotate-snippets, rustc's renderer.

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use onekernel_compiler::Diagnostic;

/// One diagnostic as text, ending in a blank line.
pub fn render(path: &str, source: &str, d: &Diagnostic) -> String {
    let range = byte_range(source, d.span);
    let title = Level::ERROR.primary_title(d.message.as_str());
    let group = match range {
        Some(r) => title.element(Snippet::source(source).path(path).annotation(AnnotationKind::Primary.span(r))),
        // No position (the call site): name the file only.
        None => title.element(Level::NOTE.message(format!("in `{path}`"))),
    };
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
        let text = source[line_start..].lines().next().unwrap_or("");
        Some(line_start + text.char_indices().nth(column).map_or(text.len(), |(i, _)| i))
    };
    let s = offset(start.line, start.column)?;
    let e = offset(end.line, end.column)?.max(s);
    Some(s..e)
}
