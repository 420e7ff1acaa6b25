//! Every ```rust block in the documentation and the book is code that is
//! compiled and tested: either the book includes it from a tested file
//! (`{{#include ...}}`), or each of its lines appears, verbatim, in the
//! examples, tests or benchmarks (which CI builds and runs). A snippet that
//! drifts from the code it quotes fails here. Illustrations that are not
//! code to compile (generated code, error output) are ```text blocks.

use std::path::Path;

/// The tested sources snippets may quote.
fn tested_sources() -> String {
    let mut all = String::new();
    for dir in [
        "examples",
        "examples/common",
        "tests",
        "tests/integration",
        "tests/language",
        "tests/cooperation",
        "tests/integration/compiles",
        "tests/ui/fail",
        "benches",
        "crates/onekernel-ops/examples",
    ] {
        let Ok(entries) = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)) else { continue };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "rs") {
                all.push_str(&std::fs::read_to_string(e.path()).expect("readable"));
                all.push('\n');
            }
        }
    }
    all
}

/// The ```rust blocks of a markdown file: (first line number, lines).
fn rust_blocks(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        match &mut current {
            None if t.starts_with("```rust") => current = Some((n + 1, Vec::new())),
            Some(_) if t.starts_with("```") => blocks.push(current.take().expect("open block")),
            Some((_, lines)) => lines.push(line.to_string()),
            None => {}
        }
    }
    blocks
}

/// A line with its trailing `//` comment and surrounding space removed.
fn code_of(line: &str) -> &str {
    // The first `//` outside a string literal (an even number of quotes
    // before it) starts the comment.
    let comment = line.match_indices("//").map(|(i, _)| i).find(|&i| line[..i].matches('"').count() % 2 == 0);
    match comment {
        Some(i) => line[..i].trim(),
        None => line.trim(),
    }
}

#[test]
fn every_rust_snippet_is_tested_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tested: std::collections::HashSet<String> = tested_sources().lines().map(|l| code_of(l).to_string()).collect();
    let mut pages: Vec<_> = ["docs", "docs/book/src"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("docs exist").flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.push(root.join("README.md"));
    let mut failures = Vec::new();
    let mut checked = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).expect("readable");
        for (line_no, block) in rust_blocks(&text) {
            if block.iter().any(|l| l.contains("{{#include")) {
                continue; // the book includes a tested file
            }
            checked += 1;
            for l in &block {
                let code = code_of(l);
                if code.is_empty() || code == "..." {
                    continue;
                }
                if !tested.contains(code) {
                    failures.push(format!(
                        "{}:{line_no}: `{code}` is not in any example, test or benchmark",
                        page.display()
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "documentation snippets that are not tested code:\n{}", failures.join("\n"));
    assert!(checked >= 5, "found only {checked} snippets: is the markdown scan broken?");
}

/// What `mdbook build` would refuse, checked without mdbook (CI does not
/// install it: compiling it took 3 of CI's 20 minutes): every chapter
/// `SUMMARY.md` lists exists, and every `{{#include path}}` and
/// `{{#include path:anchor}}` of the book names a file that exists and, for
/// an anchor, holds `ANCHOR: name` and `ANCHOR_END: name`.
#[test]
fn the_books_chapters_and_includes_resolve() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).expect("SUMMARY.md");
    let mut failures = Vec::new();
    let mut chapters = 0;
    for link in summary.split("](").skip(1) {
        let target = &link[..link.find(')').expect("a closed link")];
        chapters += 1;
        if !src.join(target).is_file() {
            failures.push(format!("SUMMARY.md lists `{target}`, which does not exist"));
        }
    }
    let mut includes = 0;
    for page in std::fs::read_dir(&src).expect("the book").flatten().map(|e| e.path()) {
        if page.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&page).expect("readable");
        for (n, line) in text.lines().enumerate() {
            let Some(at) = line.find("{{#include ") else { continue };
            let rest = &line[at + "{{#include ".len()..];
            let spec = rest[..rest.find("}}").expect("a closed include")].trim();
            includes += 1;
            // `path`, `path:anchor`, or a line range `path:5:`, `path:2:9`.
            let mut parts = spec.split(':');
            let path = parts.next().expect("a path");
            let anchor = parts.next().filter(|a| !a.is_empty() && !a.chars().all(|c| c.is_ascii_digit()));
            let at = format!("{}:{}", page.display(), n + 1);
            let Ok(included) = std::fs::read_to_string(page.parent().expect("a folder").join(path)) else {
                failures.push(format!("{at}: includes `{path}`, which does not exist"));
                continue;
            };
            if let Some(a) = anchor {
                let ends = |l: &str, tag: &str| l.trim_end().ends_with(&format!("{tag}: {a}"));
                let start = included.lines().any(|l| ends(l, "ANCHOR"));
                let end = included.lines().any(|l| ends(l, "ANCHOR_END"));
                if !(start && end) {
                    failures.push(format!("{at}: `{path}` has no `ANCHOR: {a}` … `ANCHOR_END: {a}`"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "the book would not build:\n{}", failures.join("\n"));
    assert!(chapters >= 5 && includes >= 5, "found {chapters} chapters and {includes} includes: is the scan broken?");
}
