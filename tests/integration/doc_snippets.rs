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
        "tests/ui/pass",
        "tests/ui/fail",
        "benches",
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
