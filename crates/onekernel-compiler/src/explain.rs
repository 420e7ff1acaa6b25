//! The explain view: each Rust line of a kernel beside the WGSL it produced.
//!
//! The kernel is lowered a third time, in explain mode
//! ([`lower::Variant::explain`](crate::lower::Variant::explain)): before each statement that starts a
//! new Rust line the body stores that line number into a private global,
//! `explain_line = 7u;`. The WGSL of that module is then read line by line:
//! a marker sets the current Rust line and is dropped, every other line is
//! attributed to the current Rust line. The declarations and the entry
//! point's header belong to the kernel's `fn` line, a helper's header to its
//! own `fn` line, and polyfills the compiler adds to "support code".
//!
//! The Rust text of each line is rebuilt from the tokens' positions
//! (`proc_macro2`'s `span-locations`), so it is exact but for comments.

use crate::hir;
use crate::infer::Types;
use crate::layout::Layout;
use crate::lower;
use naga::valid::{ValidationFlags, Validator};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::{BTreeMap, HashMap};

/// Renders the explain view of a compiled program. `items` are the syn
/// functions (kernel and helpers) the program came from, for their text.
///
/// `plain_wgsl` is the kernel's real WGSL: naga's temporaries (`_e7`) are
/// renamed to the ones it has, which the markers' own expressions shift.
pub fn explain(
    program: &hir::Program,
    kernel_types: &Types,
    helper_types: &[Types],
    layout: &Layout,
    workgroup_size: [u32; 3],
    items: &[&syn::ItemFn],
    plain_wgsl: &str,
) -> Result<String, String> {
    let lowered =
        lower::lower_program(program, kernel_types, helper_types, layout, workgroup_size, lower::Variant::EXPLAIN)
            .map_err(|d| d.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; "))?;
    let info = Validator::new(ValidationFlags::all(), crate::emit::CAPABILITIES)
        .validate(&lowered.module)
        .map_err(|e| e.as_inner().to_string())?;
    let wgsl = naga::back::wgsl::write_string(&lowered.module, &info, naga::back::wgsl::WriterFlags::empty())
        .map_err(|e| e.to_string())?;
    let (wgsl, _) = crate::emit::spell_struct_layouts(&lowered.module, &wgsl)?;
    let wgsl = crate::emit::name_symbols(&wgsl, &lowered.symbols)?;
    // Each function's `fn` line, as (index in `items`, line): helpers may
    // be in other files, so lines are only compared within one item.
    let fn_lines: HashMap<String, Place> = std::iter::once(&program.kernel)
        .chain(&program.helpers)
        .filter_map(|f| {
            Some((f.name.clone(), (items.iter().position(|i| i.sig.ident == f.name)?, f.span.start().line)))
        })
        .collect();
    let kernel = fn_lines.get(&program.kernel.name).copied().unwrap_or((0, program.kernel.span.start().line));
    let mut groups = attribute(&wgsl, &fn_lines, kernel);
    // naga numbers temporaries per function: rename function by function.
    let ours = temporaries_by_function(groups.iter().flat_map(|(_, g)| g).map(String::as_str));
    let real = temporaries_by_function(plain_wgsl.lines());
    if ours.len() == real.len() && ours.iter().zip(&real).all(|(o, r)| o.len() == r.len()) {
        let renames: Vec<HashMap<&str, &str>> = ours
            .iter()
            .zip(&real)
            .map(|(o, r)| o.iter().map(String::as_str).zip(r.iter().map(String::as_str)).collect())
            .collect();
        let mut function = 0;
        let mut seen_fn = false;
        for line in groups.iter_mut().flat_map(|(_, g)| g) {
            if line.starts_with("fn ") {
                function += usize::from(seen_fn);
                seen_fn = true;
            }
            if let Some(rename) = renames.get(function) {
                *line = rename_temporaries(line, rename);
            }
        }
    }
    Ok(render(&program.kernel.name, &groups, &source_lines(items)))
}

/// A Rust line: (index of its function in the `items`, line number).
pub type Place = (usize, usize);

/// WGSL lines grouped by the Rust line they came from (None: support code),
/// in WGSL order; consecutive lines of one Rust line form one group.
pub fn attribute(
    wgsl: &str,
    fn_lines: &HashMap<String, Place>,
    kernel_line: Place,
) -> Vec<(Option<Place>, Vec<String>)> {
    // naga may rename the marker if the kernel has a name that clashes.
    let marker = wgsl
        .lines()
        .filter_map(|l| l.strip_prefix("var<private> ")?.strip_suffix(": u32;"))
        .find(|name| name.starts_with(lower::EXPLAIN_LINE))
        .unwrap_or(lower::EXPLAIN_LINE)
        .to_string();
    let declaration = format!("var<private> {marker}: u32;");
    let mut current = Some(kernel_line);
    let mut after_compute = false;
    let mut loops: Vec<(usize, Option<Place>)> = Vec::new();
    let mut groups: Vec<(Option<Place>, Vec<String>)> = Vec::new();
    // The item whose body is being read (its markers' lines are its own).
    let mut item = kernel_line.0;
    for line in wgsl.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed == declaration {
            continue;
        }
        if let Some(n) =
            trimmed.strip_prefix(&marker).and_then(|r| r.strip_prefix(" = ")).and_then(|r| r.strip_suffix("u;"))
        {
            if let Ok(n) = n.parse() {
                current = Some((item, n));
                continue;
            }
        }
        // A `continuing` block belongs to the line of its loop.
        let indent = line.len() - line.trim_start().len();
        if trimmed == "loop {" {
            loops.push((indent, current));
        } else if trimmed == "continuing {" {
            if let Some((_, l)) = loops.last() {
                current = *l;
            }
        } else if trimmed == "}" && loops.last().is_some_and(|(i, _)| *i == indent) {
            loops.pop();
        }
        if line.starts_with("@compute") {
            current = Some(kernel_line);
        } else if let Some(rest) = line.strip_prefix("fn ") {
            let name = rest.split('(').next().unwrap_or("");
            // The entry point's header follows its `@compute` line.
            let entry = after_compute.then_some(kernel_line);
            current = fn_lines.get(name).copied().or(entry);
            item = current.map_or(item, |(i, _)| i);
        }
        after_compute = line.starts_with("@compute");
        match groups.last_mut() {
            Some((l, g)) if *l == current => g.push(line.to_string()),
            _ => groups.push((current, vec![line.to_string()])),
        }
    }
    groups
}

/// naga's temporaries (`_e12`) of each function, in order of first
/// appearance; the text before the first function counts with it.
fn temporaries_by_function<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen_fn = false;
    for line in lines {
        if line.starts_with("fn ") {
            if seen_fn {
                out.push(Vec::new());
            }
            seen_fn = true;
        }
        let current = out.last_mut().expect("one function at least");
        for_each_temporary(line, |t| {
            if !current.iter().any(|o| o == t) {
                current.push(t.to_string());
            }
        });
    }
    out
}

fn rename_temporaries(line: &str, rename: &HashMap<&str, &str>) -> String {
    let mut out = String::new();
    let mut rest = line;
    for_each_temporary(line, |t| {
        let at = rest.find(t).unwrap_or(0);
        out.push_str(&rest[..at]);
        out.push_str(rename.get(t).copied().unwrap_or(t));
        rest = &rest[at + t.len()..];
    });
    out + rest
}

/// Calls `f` with each `_e<digits>` identifier in `line`, in order.
fn for_each_temporary<'a>(line: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = line.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if line[i..].starts_with("_e") && (i == 0 || !ident(bytes[i - 1])) {
            let end = i + 2 + bytes[i + 2..].iter().take_while(|b| b.is_ascii_digit()).count();
            if end > i + 2 && (end == bytes.len() || !ident(bytes[end])) {
                f(&line[i..end]);
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

/// Each Rust line's text, rebuilt from the positions of the items' tokens.
fn source_lines(items: &[&syn::ItemFn]) -> BTreeMap<Place, String> {
    let mut placed: BTreeMap<Place, Vec<(usize, String)>> = BTreeMap::new();
    fn walk(tokens: TokenStream, place: &mut dyn FnMut(proc_macro2::LineColumn, String)) {
        for t in tokens {
            match t {
                TokenTree::Group(g) => {
                    let (open, close) = match g.delimiter() {
                        proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                        proc_macro2::Delimiter::Brace => ("{", "}"),
                        proc_macro2::Delimiter::Bracket => ("[", "]"),
                        proc_macro2::Delimiter::None => ("", ""),
                    };
                    place(g.span_open().start(), open.to_string());
                    walk(g.stream(), place);
                    // Re-printed groups (syn's `to_tokens`) may have one span
                    // for the whole group: the closing delimiter is the last
                    // character of its end.
                    let end = g.span_close().end();
                    place(
                        proc_macro2::LineColumn { line: end.line, column: end.column.saturating_sub(1) },
                        close.to_string(),
                    );
                }
                other => place(other.span().start(), other.to_string()),
            }
        }
    }
    for (index, item) in items.iter().enumerate() {
        let mut tokens = item.vis.to_token_stream();
        tokens.extend(item.sig.to_token_stream());
        tokens.extend(item.block.to_token_stream());
        walk(tokens, &mut |at: proc_macro2::LineColumn, text: String| {
            if at.line > 0 {
                placed.entry((index, at.line)).or_default().push((at.column, text));
            }
        });
    }
    placed
        .into_iter()
        .map(|(line, mut parts)| {
            parts.sort_by_key(|(c, _)| *c);
            let mut s = String::new();
            for (col, text) in parts {
                let width = s.chars().count();
                if col > width {
                    s.push_str(&" ".repeat(col - width));
                }
                s.push_str(&text);
            }
            (line, s)
        })
        .collect()
}

/// The text layout: a Rust line (`  5 | let i = ...`), then the WGSL lines
/// it produced (`    |     let i = ...`), in WGSL order.
fn render(name: &str, groups: &[(Option<Place>, Vec<String>)], source: &BTreeMap<Place, String>) -> String {
    let width = groups.iter().filter_map(|(l, _)| Some(l.as_ref()?.1)).max().unwrap_or(0).to_string().len().max(3);
    // Dedent the Rust text by its smallest indentation.
    let shown = groups.iter().filter_map(|(l, _)| source.get(&(*l)?));
    let indent = shown.map(|s| s.len() - s.trim_start().len()).min().unwrap_or(0);
    let mut out = format!("// Kernel `{name}`: each Rust line (with its number), then the WGSL it produced.\n");
    for (line, wgsl) in groups {
        match line {
            Some(place) => {
                let n = place.1;
                let text = source.get(place).map(|s| s.get(indent..).unwrap_or(s.trim_start())).unwrap_or("");
                out.push_str(&format!("{n:>width$} | {text}\n"));
            }
            None => out.push_str(&format!("{:>width$} | (support code added by the compiler)\n", "")),
        }
        for w in wgsl {
            out.push_str(&format!("{:>width$} |     {}\n", "", w.trim_end()));
        }
    }
    out
}
