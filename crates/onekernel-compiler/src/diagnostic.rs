//! Compile errors that point at the user's own tokens.
//!
//! Every problem the compiler finds becomes a [`Diagnostic`]: a primary message
//! in the tone of rustc, the span of the offending tokens, a short label, and
//! an optional `help:` that says what to write instead. The proc macro turns
//! them into `compile_error!`s; tools can render them however they like.

use proc_macro2::Span;
use std::fmt;

/// One compile error, attached to the tokens it is about.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// Where the problem is: the user's tokens, never generated code.
    pub span: Span,
    /// The primary message, e.g. "`Vec` is not supported in a kernel".
    pub message: String,
    /// What to write instead, when there is a fix.
    pub help: Option<String>,
    /// True for a problem in a `#[helper]` function's own code: the
    /// `#[helper]` attribute reports it at the definition (see
    /// [`crate::expand::expand_helper`]), so the kernels that call the
    /// helper do not repeat it in their `compile_error!`s.
    pub reported_by_helper: bool,
}

impl Diagnostic {
    /// A diagnostic with a message and no help.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic { span, message: message.into(), help: None, reported_by_helper: false }
    }

    /// A problem that rustc itself reports better (an unknown name, a type
    /// mismatch): it stops the GPU lowering but is not shown, so the user
    /// sees rustc's message once rather than ours beside it.
    pub fn silent() -> Self {
        Diagnostic::new(Span::call_site(), SILENT)
    }

    /// True for [`Diagnostic::silent`] ones.
    pub fn is_silent(&self) -> bool {
        self.message == SILENT
    }

    /// Adds a `help:` line saying what to write instead.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Converts to a `syn::Error`, which renders as one `compile_error!`
    /// under the offending tokens (the help becomes a second line).
    pub fn to_syn_error(&self) -> syn::Error {
        let text = match &self.help {
            Some(help) => format!("{}\n\nhelp: {}", self.message, help),
            None => self.message.clone(),
        };
        syn::Error::new(self.span, text)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\nhelp: {help}")?;
        }
        Ok(())
    }
}

const SILENT: &str = "(reported by rustc)";

/// Collects diagnostics so that several independent problems in one kernel
/// are all reported in one build.
#[derive(Default, Debug)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records one diagnostic.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.list.push(diagnostic);
    }

    /// Records an error at `span`.
    pub fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }

    /// How many diagnostics have been recorded (silent ones included).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True when nothing has been reported.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The diagnostics recorded so far, in the order they were found.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }

    /// `Ok(value)` if nothing was reported, else every diagnostic.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        if self.list.is_empty() {
            Ok(value)
        } else {
            Err(self.list)
        }
    }
}

/// Turns a list of diagnostics into one combined `syn::Error`; None when
/// all of them are silent (rustc reports those) or reported by a
/// `#[helper]` attribute.
pub fn to_syn_error(diagnostics: &[Diagnostic]) -> Option<syn::Error> {
    let mut iter = diagnostics.iter().filter(|d| !d.is_silent() && !d.reported_by_helper);
    let mut error = iter.next()?.to_syn_error();
    for d in iter {
        error.combine(d.to_syn_error());
    }
    Some(error)
}
