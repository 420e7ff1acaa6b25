//! The nesting limit: how deep the compiler (and syn, which parses for it)
//! may recurse, checked on the tokens before anything recurses.
//!
//! syn parses nested expressions, blocks, types and `else if` chains by
//! recursion, and every later stage walks the tree it builds the same way
//! (drop included), so a kernel with thousands of nested parentheses would
//! overflow the stack: an abort, not an error (in rustc, in `onekernel
//! explain`, in the playground's server). [`check`] walks the token trees
//! with an explicit stack (no recursion, whatever the input) and estimates,
//! at every token, how deep the tree syn would build is there: one level
//! per enclosing group (`(..)`, `[..]`, `{..}`), plus, within a group, one
//! per operator, cast, call or index of the current expression (a chain
//! `a + b + c` or `x.f().g()` is a tree as deep as it is long), per `<`
//! and `|` of the current statement (generics and closures nest across
//! commas) and per `else` of an `if` chain. Past [`MAX_NESTING`] it is one
//! error at the token that went over. The estimate is an upper bound: what
//! it accepts, the compiler compiles within [`STACK_SIZE`] (tested at the
//! limit for every recursive form, in debug builds).
//!
//! [`parse_tokens`] and [`parse_source`] are the entry points the macro,
//! `onekernel explain` and the playground parse with: the check, then
//! syn. [`with_stack`] runs a compile on a thread of [`STACK_SIZE`].

use crate::diagnostic::Diagnostic;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

/// The deepest nesting the compiler reads (see the module docs for how it
/// is counted). Real kernels stay far below it: a loop in a loop in an
/// `if` with a ten-operator expression is about 20, and the kernels of
/// the language suite nest at most 44 (the WGSL a kernel becomes may nest
/// at most 127 braces, and naga's WGSL parser reads 200 levels).
pub const MAX_NESTING: usize = 128;

/// The stack [`with_stack`] gives a compile: enough for input at
/// [`MAX_NESTING`] in a debug build with a wide margin (an optimised build
/// needs a fraction of it; rustc's own thread, where the macro runs, has
/// 8 MiB). Only the pages a compile touches are ever committed.
pub const STACK_SIZE: usize = 64 << 20;

/// Runs `f` (a compile) on a new thread with a [`STACK_SIZE`] stack and
/// returns its result; a panic in `f` is resumed on the caller's thread.
/// Tools that compile untrusted text (`onekernel explain`, the playground)
/// use it, so that the depth [`check`] allows fits whatever stack their
/// own threads have.
pub fn with_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .name("onekernel-compile".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, f)
            .expect("spawn a compile thread");
        match handle.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Checks that `tokens` nest at most [`MAX_NESTING`] deep (see the module
/// docs); else the error at the first token past the limit. Iterative:
/// any input, however deep, is checked on a small stack.
pub fn check(tokens: &TokenStream) -> Result<(), Box<Diagnostic>> {
    walk(tokens, MAX_NESTING).map(drop)
}

/// How deep `tokens` nest, counted as [`check`] counts.
pub fn depth(tokens: &TokenStream) -> usize {
    walk(tokens, usize::MAX).unwrap_or(usize::MAX)
}

/// The deepest nesting of `tokens`, or the error at the first token past
/// `limit`.
fn walk(tokens: &TokenStream, limit: usize) -> Result<usize, Box<Diagnostic>> {
    let mut deepest = 0;
    let mut stack: Vec<Level> = Vec::new();
    let mut level = Level::new(tokens.clone(), 0);
    loop {
        let Some(token) = level.tokens.next() else {
            match stack.pop() {
                Some(outer) => {
                    level = outer;
                    continue;
                }
                None => return Ok(deepest),
            }
        };
        let after_brace = std::mem::replace(&mut level.after_brace, false);
        let first = std::mem::replace(&mut level.first, false);
        let after_else = std::mem::replace(&mut level.after_else, false);
        let after_hash = std::mem::replace(&mut level.after_hash, false);
        let after_group = std::mem::replace(&mut level.after_group, matches!(token, TokenTree::Group(_)));
        match &token {
            TokenTree::Group(g) => {
                // A call or an index after another continues a chain
                // (`f()()`, `a[0][0]`); a block does not, nor does an
                // attribute's `#[..]`.
                // Either way the group is one level.
                let depth = if g.delimiter() != Delimiter::Brace && !after_hash && after_group {
                    level.seg += 1;
                    level.depth()
                } else {
                    level.depth() + 1
                };
                deepest = deepest.max(depth);
                if depth > limit {
                    let what = match g.delimiter() {
                        Delimiter::Parenthesis => "parentheses",
                        Delimiter::Bracket => "brackets",
                        Delimiter::Brace => "blocks",
                        Delimiter::None => "groups",
                    };
                    return Err(too_deep(g.span_open(), what));
                }
                let inner = Level::new(g.stream(), depth);
                level.after_brace = g.delimiter() == Delimiter::Brace;
                stack.push(std::mem::replace(&mut level, inner));
                continue;
            }
            TokenTree::Punct(p) => match p.as_char() {
                ';' => {
                    level.new_statement();
                    continue;
                }
                // An attribute (`#[..]`, `#![..]`, doc comments): after a
                // block, it starts the next statement or item.
                '#' | '!' if p.as_char() == '#' || after_hash => {
                    if after_brace {
                        level.new_statement();
                    }
                    level.after_hash = true;
                    continue;
                }
                ',' => {
                    level.seg = 0;
                    level.ifs.clear();
                    continue;
                }
                // Generics and closures nest across the commas of their
                // argument lists.
                '<' | '|' => level.stmt += 1,
                // Paths, types after a name, lifetimes and labels: no
                // nesting.
                ':' | '\'' => {}
                _ => level.seg += 1,
            },
            TokenTree::Ident(i) => {
                let name = i.to_string();
                // After a block, a name other than `else` or `as` starts
                // the next statement (`if a {} if b {}`).
                let first = if after_brace && name != "else" && name != "as" {
                    level.new_statement();
                    level.first = false;
                    true
                } else {
                    first
                };
                match name.as_str() {
                    "else" => {
                        // The next link of an `if` chain: the condition of
                        // the last one is not around it, its `if` is.
                        level.stmt += 1;
                        if let Some(&s) = level.ifs.last() {
                            level.seg = s;
                        }
                        level.after_else = true;
                        deepest = deepest.max(level.depth());
                        if level.depth() > limit {
                            return Err(too_deep(i.span(), "`else if` chain"));
                        }
                        continue;
                    }
                    "if" if after_else => {}
                    "if" => {
                        level.ifs.push(level.seg);
                        if !first {
                            level.stmt += 1;
                        }
                    }
                    "match" | "while" | "for" | "loop" if !first => level.stmt += 1,
                    "as" | "return" | "break" | "move" | "box" | "yield" | "become" => level.seg += 1,
                    _ => {}
                }
            }
            TokenTree::Literal(_) => {}
        }
        deepest = deepest.max(level.depth());
        if level.depth() > limit {
            return Err(too_deep(token.span(), "expression"));
        }
    }
}

/// One group being walked.
struct Level {
    tokens: proc_macro2::token_stream::IntoIter,
    /// The depth of the group itself.
    base: usize,
    /// Nesting within the current statement: `<`, `|`, `else`, and
    /// `if`/`match`/loops that are not the statement's first token.
    stmt: usize,
    /// Nesting within the current comma-separated part: operators, casts,
    /// calls and indexing.
    seg: usize,
    /// `seg` at each `if` of the statement, for its `else`.
    ifs: Vec<usize>,
    /// At the start of a statement.
    first: bool,
    /// The last token was a `{..}` group.
    after_brace: bool,
    /// The last token was `else`.
    after_else: bool,
    /// The last token was the `#` (or `#!`) of an attribute.
    after_hash: bool,
    /// The last token was a group.
    after_group: bool,
}

impl Level {
    fn new(tokens: TokenStream, base: usize) -> Level {
        Level {
            tokens: tokens.into_iter(),
            base,
            stmt: 0,
            seg: 0,
            ifs: Vec::new(),
            first: true,
            after_brace: false,
            after_else: false,
            after_hash: false,
            after_group: false,
        }
    }

    fn depth(&self) -> usize {
        self.base + self.stmt + self.seg
    }

    fn new_statement(&mut self) {
        self.stmt = 0;
        self.seg = 0;
        self.ifs.clear();
        self.first = true;
    }
}

fn too_deep(span: Span, what: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::new(span, format!("{what} nested too deep: more than {MAX_NESTING} levels"))
            .label(format!("nesting level {} here", MAX_NESTING + 1))
            .note(format!(
                "the compiler reads at most {MAX_NESTING} levels of nesting: each block, parenthesis or bracket \
             around a token, each operator, call, index or cast of the expression it is in, and each `else` \
             of an `if` chain counts one"
            ))
            .help("split the expression into `let` statements, or move part of it into a `#[helper]` function"),
    )
}

/// Lexes `source`, checks its nesting, and parses it with syn as a `T`
/// (`syn::File`, `syn::ItemFn`, ...): the diagnostics of the first step
/// that fails.
pub fn parse_source<T: syn::parse::Parse>(source: &str) -> Result<T, Vec<Diagnostic>> {
    let tokens: TokenStream = source.parse().map_err(|e: proc_macro2::LexError| {
        vec![Diagnostic::new(e.span(), format!("the text does not lex as Rust: {e}"))]
    })?;
    parse_tokens(tokens)
}

/// Checks the nesting of `tokens`, then parses them with syn as a `T`.
pub fn parse_tokens<T: syn::parse::Parse>(tokens: TokenStream) -> Result<T, Vec<Diagnostic>> {
    check(&tokens).map_err(|d| vec![*d])?;
    syn::parse2(tokens).map_err(|e| e.into_iter().map(|e| Diagnostic::new(e.span(), e.to_string())).collect())
}
