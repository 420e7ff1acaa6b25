//! `docs/supported-rust.md` checked against the compiler, so that the
//! reference cannot drift from what compiles: the table of where each type
//! may appear (every cell compiled as a tiny kernel), the `#[kernel]`
//! arguments, the builtin functions, the math methods, the element bounds
//! of generic kernels and the compile-fail cases the rejection tables name.
//! A row that lies fails here, and so does a type, argument, builtin or
//! method the compiler accepts that the page does not list.

use onekernel_compiler::parse::ModuleItems;
use onekernel_compiler::{attr, builtins, compile_kernel, types, Kernel, Options};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn reference() -> String {
    std::fs::read_to_string(repo().join("docs/supported-rust.md")).expect("docs/supported-rust.md")
}

/// The lines of the section that starts with the heading `heading` (up to
/// the next heading of the same or a higher level).
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = text.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "docs/supported-rust.md has no heading `{heading}`");
    lines
        .take_while(|l| {
            let hashes = l.chars().take_while(|c| *c == '#').count();
            !(hashes > 0 && hashes <= level && l[hashes..].starts_with(' '))
        })
        .collect()
}

/// The cells of a Markdown table row (`\|` is a literal bar).
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|').replace("\\|", "\u{1}");
    row.split('|').map(|c| c.trim().replace('\u{1}', "|")).collect()
}

/// The tables of `lines`: each a header and its rows of cells.
fn tables(lines: &[&str]) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        if lines[i].starts_with('|') && lines[i + 1].starts_with("|---") {
            let header = cells(lines[i]);
            let mut rows = Vec::new();
            i += 2;
            while i < lines.len() && lines[i].starts_with('|') {
                rows.push(cells(lines[i]));
                i += 1;
            }
            out.push((header, rows));
        } else {
            i += 1;
        }
    }
    out
}

/// The `code` spans of a piece of Markdown.
fn code_spans(s: &str) -> Vec<&str> {
    s.split('`').skip(1).step_by(2).collect()
}

/// Compiles `kernel` (with `#[kernel(attr)]`, `helpers` and the module's
/// `structs`): Ok, or the compiler's messages.
fn compiles(attr: &str, kernel: &str, helpers: &[String], structs: &[String]) -> Result<(), String> {
    let item: syn::ItemFn = syn::parse_str(kernel).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let helpers: Vec<syn::ItemFn> = helpers.iter().map(|h| syn::parse_str(h).unwrap()).collect();
    let module = ModuleItems { consts: vec![], structs: structs.iter().map(|s| syn::parse_str(s).unwrap()).collect() };
    compile_kernel(&Kernel { attr: attr.parse().unwrap(), item, module }, &helpers, &Options::default())
        .map(|_| ())
        .map_err(|e| e.iter().map(|d| d.message.clone()).collect::<Vec<_>>().join("; "))
}

/// The struct of the module the table's struct row stands for.
const PARTICLE: &str = "pub struct Particle { pub pos: Vec2, pub mass: f32, pub id: u32 }";

/// The concrete type a name in the table's first column is probed with,
/// and a value of it.
fn probe_type(name: &str) -> (String, String) {
    let (ty, value) = match name {
        "Particle" => ("Particle", "Particle { pos: Vec2::ONE, mass: 1.0f32, id: 7u32 }".to_string()),
        "[T; N]" => ("[f32; 4]", "[1.0f32; 4]".into()),
        "(A, B, ...)" => ("(f32, u32)", "(1.0f32, 1u32)".into()),
        "f32" => ("f32", "1.0f32".into()),
        "i32" => ("i32", "1i32".into()),
        "u32" => ("u32", "1u32".into()),
        "usize" => ("usize", "1usize".into()),
        "bool" => ("bool", "true".into()),
        "f16" => ("f16", "f16::from_f32(1.0)".into()),
        "f64" => ("f64", "1.0f64".into()),
        "i64" => ("i64", "1i64".into()),
        "u64" => ("u64", "1u64".into()),
        "Dim3" => ("Dim3", "global_id()".into()),
        v if types::VecTy::from_name(v).is_some() => (v, format!("{v}::ONE")),
        other => panic!("the types table names `{other}`, which the compiler does not know as a type"),
    };
    (ty.to_string(), value)
}

/// The columns of the types table, each with the kernel (and helpers)
/// that puts a `T` there.
const PLACES: [&str; 6] = [
    "`&[T]`, `&mut [T]`",
    "`x: T`",
    "`let x: T`",
    "`shared::<[T; N]>()`",
    "struct field",
    "helper parameter and result",
];

fn probe(place: usize, ty: &str, value: &str) -> Result<(), String> {
    let structs = |extra: Option<String>| {
        let mut s = vec![PARTICLE.to_string()];
        s.extend(extra);
        s
    };
    let k = |src: String| compiles("workgroup_size = 64", &src, &[], &structs(None));
    match place {
        0 => k(format!("fn k(a: &[{ty}], out: &mut [u32]) {{ let _x = a[0]; }}"))
            .and_then(|()| k(format!("fn k(a: &mut [{ty}]) {{ let x = a[0]; a[0] = x; }}"))),
        1 => k(format!("fn k(x: {ty}, out: &mut [u32]) {{ let _y = x; }}")),
        2 => k(format!("fn k(out: &mut [u32]) {{ let x: {ty} = {value}; let _y = x; }}")),
        3 => k(format!("fn k(out: &mut [u32]) {{ let s = shared::<[{ty}; 4]>(); }}")),
        4 => compiles(
            "workgroup_size = 64",
            "fn k(s: &mut [Holder]) { let x = s[0]; s[0] = x; }",
            &[],
            &structs(Some(format!("pub struct Holder {{ pub f: {ty} }}"))),
        ),
        5 => compiles(
            "workgroup_size = 64",
            &format!("fn k(out: &mut [u32]) {{ let _y = h({value}); }}"),
            &[format!("fn h(x: {ty}) -> {ty} {{ x }}")],
            &structs(None),
        ),
        _ => unreachable!(),
    }
}

#[test]
fn the_types_table_is_what_compiles() {
    let text = reference();
    let lines = section(&text, "### Where each type may appear");
    let tables = tables(&lines);
    assert_eq!(tables.len(), 1, "one table under `### Where each type may appear`");
    let (header, rows) = &tables[0];
    assert_eq!(header[1..], PLACES.map(String::from), "the table's columns are the places the test compiles");
    let mut listed = Vec::new();
    let mut wrong = Vec::new();
    for row in rows {
        assert_eq!(row.len(), PLACES.len() + 1, "row {row:?}");
        for name in code_spans(&row[0]) {
            listed.push(name.to_string());
            let (ty, value) = probe_type(name);
            for (place, cell) in row[1..].iter().enumerate() {
                let says_yes = match cell.split([' ', ':', ',', ';', '(']).next() {
                    Some("yes") => true,
                    Some("no") => false,
                    _ => panic!("a cell of the types table starts with `yes` or `no`: {cell:?}"),
                };
                let got = probe(place, &ty, &value);
                if got.is_ok() != says_yes {
                    wrong.push(format!(
                        "`{name}` in {}: the table says {cell:?}, the compiler {}",
                        PLACES[place],
                        match got {
                            Ok(()) => "accepts it".to_string(),
                            Err(e) => format!("says: {e}"),
                        }
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "docs/supported-rust.md's types table is wrong:\n{}", wrong.join("\n"));
    // Every type the compiler knows by name has a row.
    let candidates = [
        "bool", "char", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
        "u128", "usize", "Dim3",
    ];
    let known = candidates
        .into_iter()
        .filter(|n| types::Ty::from_name(n).is_some())
        .chain(types::VECTORS.iter().map(|(n, _)| *n));
    for name in known {
        assert!(
            listed.iter().any(|l| l == name),
            "the compiler knows the type `{name}`; the types table has no row for it"
        );
    }
}

#[test]
fn the_attribute_table_is_the_compilers() {
    let text = reference();
    let lines = section(&text, "## The attribute");
    let tables = tables(&lines);
    let (header, rows) = &tables[0];
    assert_eq!(header[..2], ["Argument".to_string(), "Example".to_string()]);
    let documented: Vec<&str> = rows.iter().map(|r| code_spans(&r[0])[0]).collect();
    // The compiler's list of its arguments is the help of an unknown one.
    let help = attr::KernelAttr::parse(
        "workgroup_size = 64, no_such_argument = 1".parse().unwrap(),
        proc_macro2::Span::call_site(),
    )
    .unwrap_err()
    .into_iter()
    .filter_map(|d| d.help)
    .collect::<Vec<_>>()
    .join(" ");
    assert!(help.contains("the arguments are"), "{help}");
    let mut compilers: Vec<&str> = code_spans(&help).into_iter().collect();
    let mut ours = documented.clone();
    compilers.sort_unstable();
    ours.sort_unstable();
    assert_eq!(ours, compilers, "the attribute table lists other arguments than the compiler has");
    for row in rows {
        let key = code_spans(&row[0])[0];
        for example in code_spans(&row[1]) {
            let (attr, kernel) = match key {
                "workgroup_size" => (example.to_string(), "fn k(a: &mut [f32]) {}"),
                "types" => (format!("workgroup_size = 64, {example}"), "fn k<T: Num>(a: &mut [T]) {}"),
                _ => (format!("workgroup_size = 64, {example}"), "fn k(a: &mut [f32]) {}"),
            };
            compiles(&attr, kernel, &[], &[])
                .unwrap_or_else(|e| panic!("`#[kernel({attr})]`, the table's example, fails: {e}"));
        }
        // The default the table gives is the compiler's.
        let default = &row[2];
        match key {
            "max_workgroup_invocations" => {
                assert!(default.contains(&attr::DEFAULT_MAX_WORKGROUP_INVOCATIONS.to_string()), "{key}: {default}")
            }
            "max_shared_bytes" => {
                assert!(default.contains(&attr::DEFAULT_MAX_SHARED_BYTES.to_string()), "{key}: {default}")
            }
            _ => {}
        }
    }
}

#[test]
fn every_builtin_function_and_math_method_is_listed() {
    let text = reference();
    for (name, _) in builtins::functions() {
        assert!(
            text.contains(&format!("`{name}(")) || text.contains(&format!("`{name}::<")),
            "the builtin `{name}()` is not in docs/supported-rust.md"
        );
    }
    let methods: Vec<&str> = builtins::MATH_METHODS.iter().map(|(_, n, _)| *n).collect();
    for name in &methods {
        assert!(
            text.contains(&format!("`{name}`"))
                || text.contains(&format!("`{name}("))
                || text.contains(&format!(".{name}("))
                || text.contains(&format!("::{name}(")),
            "the method `{name}` is not in docs/supported-rust.md"
        );
    }
    // Conversely, each method of the math tables is one the compiler has
    // (a few rows are functions or conversions, not methods).
    let not_methods = ["std::cmp::min", "std::cmp::max", "u32::from", "f32::from_bits"];
    for heading in
        ["### Mapped to a WGSL builtin", "### Written out, because WGSL's builtin differs from Rust's method"]
    {
        let lines = section(&text, heading);
        for (_, rows) in tables(&lines) {
            for row in rows {
                for span in code_spans(&row[0]) {
                    let Some((name, _)) = span.split_once('(') else { continue };
                    if not_methods.iter().any(|n| name.ends_with(n) || *n == name) || name.contains("::") {
                        continue;
                    }
                    assert!(methods.contains(&name), "the math tables list `{name}`, which the compiler does not have");
                }
            }
        }
    }
    // And the methods the page calls not supported are not.
    let line = text.lines().find(|l| l.contains("Not supported yet include")).expect("the list of unsupported methods");
    let mut unsupported = code_spans(line);
    let next = text.lines().skip_while(|l| !l.contains("Not supported yet include")).nth(1).unwrap_or("");
    unsupported.extend(code_spans(next));
    assert!(!unsupported.is_empty());
    for name in unsupported {
        assert!(!methods.contains(&name), "docs/supported-rust.md calls `{name}` unsupported, but the compiler has it");
    }
}

#[test]
fn the_generic_bounds_are_the_compilers() {
    let text = reference();
    let lines = section(&text, "## Generic kernels");
    let (_, rows) = tables(&lines).into_iter().find(|(h, _)| h[0] == "Bound").expect("the bounds table");
    let documented: Vec<(String, Vec<String>)> = rows
        .iter()
        .map(|r| (code_spans(&r[0])[0].to_string(), code_spans(&r[1]).into_iter().map(String::from).collect()))
        .collect();
    let compilers: Vec<(String, Vec<String>)> = builtins::ELEMENT_BOUNDS
        .iter()
        .map(|(name, _, tys)| (name.to_string(), tys.iter().map(|t| t.to_string()).collect()))
        .collect();
    assert_eq!(documented, compilers);
}

#[test]
fn every_rejection_names_an_existing_compile_fail_case() {
    let text = reference();
    let lines = section(&text, "## What is rejected");
    let mut named = 0;
    for (header, rows) in tables(&lines) {
        if header.last().map(String::as_str) != Some("Case") {
            continue;
        }
        for row in rows {
            for case in code_spans(row.last().expect("a cell")) {
                named += 1;
                let path = repo().join("tests/ui/fail").join(format!("{case}.rs"));
                assert!(
                    path.exists(),
                    "docs/supported-rust.md names the compile-fail case `{case}`, which does not exist"
                );
            }
        }
    }
    assert!(named > 50, "only {named} cases found: is the table format still `| You write | Error | Help | Case |`?");
}
