//! Compile errors that point at the user's own tokens.
//!
//! Every problem the compiler finds becomes one [`Diagnostic`]: a message in
//! the tone of rustc, a primary span on the offending tokens (with an
//! optional label), secondary labels on related tokens, notes, and a `help`
//! that says what to write instead. Its [`Disposition`] says who shows it:
//! the `#[kernel]` macro, rustc (for problems rustc explains better, such as
//! an unknown name), or the `#[helper]` attribute of the helper it is in.
//!
//! The proc macro renders diagnostics as `compile_error!`s (stable Rust has
//! no API for notes, so they follow the message: [`Diagnostic::to_syn_error`]);
//! tools that run no rustc (`onekernel explain`, the playground) render them
//! the way rustc does, labels and notes included, with
//! [`Diagnostic::render`].

use proc_macro2::Span;
use std::fmt;

/// Who reports a diagnostic to the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// The `#[kernel]` macro reports it.
    Report,
    /// rustc reports the same problem itself, better (an unknown name, a
    /// type mismatch): it stops the GPU lowering but is not shown, so the
    /// user sees rustc's message once rather than ours beside it.
    LeftToRustc,
    /// A problem in a `#[helper]` function's own code: that attribute
    /// reports it at the definition, so kernels that call the helper do not
    /// repeat it.
    ReportedAtHelper,
}

/// A span with a short text, shown under the tokens.
#[derive(Clone, Debug)]
pub struct Label {
    /// The tokens.
    pub span: Span,
    /// What to say about them.
    pub text: String,
}

/// One problem, attached to the tokens it is about.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The primary message, e.g. "`Vec` is not supported in a kernel".
    pub message: String,
    /// Where the problem is: the user's tokens, never generated code.
    pub span: Span,
    /// A short text under the primary span.
    pub label: Option<String>,
    /// Related tokens (where a name was declared, the other branch, ...).
    pub secondary: Vec<Label>,
    /// Background a reader may need ("GPUs have no call stack").
    pub notes: Vec<String>,
    /// What to write instead, when there is a fix.
    pub help: Option<String>,
    /// Who shows it.
    pub disposition: Disposition,
}

impl Diagnostic {
    /// A diagnostic the macro reports, with a message and nothing else.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            label: None,
            secondary: Vec::new(),
            notes: Vec::new(),
            help: None,
            disposition: Disposition::Report,
        }
    }

    /// A problem rustc reports itself (see [`Disposition::LeftToRustc`]).
    pub fn left_to_rustc(span: Span) -> Self {
        Diagnostic { disposition: Disposition::LeftToRustc, ..Diagnostic::new(span, "(reported by rustc)") }
    }

    /// Adds a `help:` that says what to write instead.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a label under the primary span.
    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.label = Some(text.into());
        self
    }

    /// Adds a label on other tokens.
    pub fn secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label { span, text: text.into() });
        self
    }

    /// Adds a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Marks it as found in a helper's own code.
    pub fn at_helper(self) -> Self {
        Diagnostic { disposition: Disposition::ReportedAtHelper, ..self }
    }

    /// True for diagnostics the `#[kernel]` macro shows.
    pub fn is_reported(&self) -> bool {
        self.disposition == Disposition::Report
    }

    /// Converts to a `syn::Error`: one `compile_error!` under the primary
    /// tokens, the label, notes and help as further lines.
    pub fn to_syn_error(&self) -> syn::Error {
        syn::Error::new(self.span, self.to_string())
    }

    /// The diagnostic as rustc prints its own, for a tool that runs no
    /// rustc: the message, the snippet of `source` (the text the spans were
    /// parsed from, shown as `path`) with the label under the primary span
    /// and the secondary labels, then `= note:` and `= help:` lines
    /// (annotate-snippets, rustc's renderer). Ends with a newline. A
    /// diagnostic without a position names the file only.
    pub fn render(&self, source: &str, path: &str) -> String {
        use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
        let range = |span: Span| {
            let start = byte_offset(source, span.start())?;
            Some(start..byte_offset(source, span.end())?.max(start))
        };
        let title = Level::ERROR.primary_title(self.message.as_str());
        let group = match range(self.span) {
            Some(r) => {
                let primary = AnnotationKind::Primary.span(r);
                let primary = match &self.label {
                    Some(label) => primary.label(label.as_str()),
                    None => primary,
                };
                let mut snippet = Snippet::source(source).path(path).annotation(primary);
                for l in &self.secondary {
                    if let Some(r) = range(l.span) {
                        snippet = snippet.annotation(AnnotationKind::Context.span(r).label(l.text.as_str()));
                    }
                }
                title.element(snippet)
            }
            None => title.element(Level::NOTE.message(format!("in `{path}`"))),
        };
        let group = self.notes.iter().fold(group, |g, n| g.element(Level::NOTE.message(n.as_str())));
        let group = match &self.help {
            Some(h) => group.element(Level::HELP.message(h.as_str())),
            None => group,
        };
        format!("{}\n", Renderer::plain().render(&[group]))
    }
}

/// The byte offset in `source` of a proc-macro2 position (lines count
/// from 1, columns in chars from 0), or None for a span without a
/// position (line 0).
pub fn byte_offset(source: &str, at: proc_macro2::LineColumn) -> Option<usize> {
    if at.line == 0 {
        return None;
    }
    let line_start = source.split_inclusive('\n').take(at.line - 1).map(str::len).sum::<usize>();
    let text = source.get(line_start..)?.lines().next().unwrap_or("");
    Some(line_start + text.char_indices().nth(at.column).map_or(text.len(), |(i, _)| i))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        let mut first = true;
        let mut line = |f: &mut fmt::Formatter<'_>, kind: &str, text: &str| {
            // A blank line between the message and what follows, as rustc
            // separates a message from its notes.
            let sep = if std::mem::take(&mut first) { "\n\n" } else { "\n" };
            write!(f, "{sep}{kind}: {text}")
        };
        if let Some(label) = &self.label {
            line(f, "note", label)?;
        }
        for l in &self.secondary {
            line(f, "note", &l.text)?;
        }
        for n in &self.notes {
            line(f, "note", n)?;
        }
        if let Some(help) = &self.help {
            line(f, "help", help)?;
        }
        Ok(())
    }
}

/// Collects diagnostics so that several independent problems in one
/// function are all reported in one build.
#[derive(Default, Debug)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records one diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    /// Records every diagnostic of `more`.
    pub fn extend(&mut self, more: impl IntoIterator<Item = Diagnostic>) {
        self.list.extend(more);
    }

    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }

    /// Records a problem rustc reports itself.
    pub fn left_to_rustc(&mut self, span: Span) {
        self.push(Diagnostic::left_to_rustc(span));
    }

    /// Whether a diagnostic with this message has been recorded.
    pub fn has_message(&self, message: &str) -> bool {
        self.list.iter().any(|d| d.message == message)
    }

    /// How many diagnostics have been recorded (any disposition).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The diagnostics recorded so far, in the order they were found.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }

    /// `Ok(value)` if nothing was recorded, else every diagnostic.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        if self.list.is_empty() {
            Ok(value)
        } else {
            Err(self.list)
        }
    }
}

/// The diagnostics the `#[kernel]` macro shows, as one combined
/// `syn::Error`; None when rustc or a `#[helper]` reports all of them.
pub fn to_syn_error(diagnostics: &[Diagnostic]) -> Option<syn::Error> {
    let mut iter = diagnostics.iter().filter(|d| d.is_reported());
    let mut error = iter.next()?.to_syn_error();
    for d in iter {
        error.combine(d.to_syn_error());
    }
    Some(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_message_then_notes_then_help() {
        let d = Diagnostic::new(Span::call_site(), "`Vec` is not supported in a kernel")
            .note("GPUs cannot allocate")
            .help("take a `&[T]` buffer parameter");
        assert_eq!(
            d.to_string(),
            "`Vec` is not supported in a kernel\n\nnote: GPUs cannot allocate\nhelp: take a `&[T]` buffer parameter"
        );
        assert!(to_syn_error(&[Diagnostic::left_to_rustc(Span::call_site())]).is_none());
        assert!(to_syn_error(&[d.clone().at_helper()]).is_none());
        assert!(to_syn_error(&[d]).is_some());
    }
}

/// Code as a person writes it, for messages: tokens printed with Rust's
/// usual spacing (`thread_id().x < 32`, `Vec<f32>`), not token by token
/// (`thread_id () . x < 32`).
pub fn code(tokens: &impl quote::ToTokens) -> String {
    let mut out = String::new();
    write_code(tokens.to_token_stream(), &mut out);
    out
}

fn write_code(ts: proc_macro2::TokenStream, out: &mut String) {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    // What the previous token was: an operand (identifier, literal, closing
    // delimiter), and whether the next token glues to it.
    let mut operand = false;
    let mut glue = true;
    // Open generic brackets (`Vec<f32>`).
    let mut angles = 0u32;
    let mut tokens = ts.into_iter().peekable();
    while let Some(t) = tokens.next() {
        match t {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                // A call or an index glues to what it applies to.
                let applied = operand && g.delimiter() != Delimiter::Brace;
                if !glue && !applied && !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(open);
                write_code(g.stream(), out);
                out.push_str(close);
                operand = true;
                glue = false;
            }
            TokenTree::Punct(p) => {
                // One operator from its joint puncts (`&&`, `::`, `<=`).
                let mut op = p.as_char().to_string();
                let mut spacing = p.spacing();
                while spacing == Spacing::Joint {
                    match tokens.peek() {
                        Some(TokenTree::Punct(next)) => {
                            op.push(next.as_char());
                            spacing = next.spacing();
                            tokens.next();
                        }
                        _ => break,
                    }
                }
                let (space_before, space_after) = match op.as_str() {
                    "." | "::" => (false, false),
                    "," | ";" => (false, true),
                    // Generic brackets after a type name: `Vec<f32>`.
                    "<" if operand && out.ends_with(|c: char| c.is_alphanumeric()) && starts_type(out) => {
                        angles += 1;
                        (false, false)
                    }
                    ">" if angles > 0 => {
                        angles -= 1;
                        (false, false)
                    }
                    // Unary operators and references: `!done`, `-1.0`, `&mut x`.
                    "!" | "-" | "&" | "*" if !operand => (true, false),
                    _ => (true, true),
                };
                if space_before && !glue && !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(&op);
                glue = !space_after;
                operand = op == ">" && angles == 0 && !space_after;
            }
            other => {
                if !glue && !out.is_empty() {
                    out.push(' ');
                }
                let text = other.to_string();
                // Keywords are not operands: `&mut [T]`, `in (a..b)`.
                operand = !matches!(text.as_str(), "mut" | "dyn" | "impl" | "in" | "as" | "return" | "ref" | "move");
                out.push_str(&text);
                glue = false;
            }
        }
    }
}

/// True when the text ends in a capitalised name (a type, which takes
/// generic arguments), rather than a value compared with `<`.
fn starts_type(out: &str) -> bool {
    let word: String = out.chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    word.chars().last().is_some_and(|c| c.is_ascii_uppercase())
}

#[cfg(test)]
mod code_tests {
    use super::code;

    #[track_caller]
    fn same(src: &str) {
        let e: syn::Expr = syn::parse_str(src).unwrap();
        assert_eq!(code(&e), src);
    }

    #[test]
    fn prints_like_a_person() {
        same("thread_id().x < 32");
        same("i < a.len() && !done");
        same("f32::sqrt(x * 2.0) >= -1.0");
        same("a[i + 1] == b[j]");
        same("n % 2 == 0 || x <= 3");
        let t: syn::Type = syn::parse_str("Vec<f32>").unwrap();
        assert_eq!(code(&t), "Vec<f32>");
        let t: syn::Type = syn::parse_str("&mut [Option<u64>]").unwrap();
        assert_eq!(code(&t), "&mut [Option<u64>]");
    }
}
