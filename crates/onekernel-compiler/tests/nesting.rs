//! Deep nesting of every recursive form (expressions, blocks, `if` chains,
//! types, array literals, ...) is one spanned error, never a stack
//! overflow; input at the limit compiles on a thread with rustc's 8 MiB
//! stack (these tests run unoptimised, where frames are largest).

use onekernel_compiler::nesting::{self, with_stack};
use onekernel_compiler::{compile, parse_source, MAX_NESTING};

/// A recursive form: a kernel with `n` levels of it.
pub struct Form {
    pub name: &'static str,
    pub kernel: fn(usize) -> String,
    /// Whether the kernel compiles at the deepest nesting the check
    /// accepts (else an error is expected there, but never an abort:
    /// outside the subset, or control flow deeper than WGSL's 127 braces).
    pub valid: bool,
}

fn r(s: &str, n: usize) -> String {
    s.repeat(n)
}

pub const FORMS: &[Form] = &[
    Form {
        name: "parentheses",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = {}a[0]{}; }}", r("(", n), r(")", n)),
        valid: true,
    },
    Form {
        name: "blocks",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ {} out[0] = a[0]; {} }}", r("{", n), r("}", n)),
        valid: true,
    },
    Form {
        name: "block expressions",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = {}a[0]{}; }}", r("{ 1.0 + ", n), r("}", n)),
        valid: true,
    },
    Form {
        name: "nested ifs",
        kernel: |n| {
            format!("fn k(a: &[f32], out: &mut [f32]) {{ {} out[0] = a[0]; {} }}", r("if a[0] > 0.0 {", n), r("}", n))
        },
        valid: true,
    },
    Form {
        name: "else-if chain",
        kernel: |n| {
            format!(
                "fn k(a: &[f32], out: &mut [f32]) {{ let x = a[0]; if x > 0.0 {{ out[0] = 1.0; }} {} else {{ out[0] = 3.0; }} }}",
                r("else if x > 1.0 { out[0] = 2.0; } ", n)
            )
        },
        valid: false,
    },
    Form {
        name: "if in a condition",
        kernel: |n| {
            format!(
                "fn k(a: &[f32], out: &mut [f32]) {{ if {} a[0] > 0.0 {} {{ out[0] = 1.0; }} }}",
                r("if ", n),
                r(" { true } else { false }", n)
            )
        },
        valid: false,
    },
    Form {
        name: "array literals",
        kernel: |n| {
            format!("fn k(a: &[f32], out: &mut [f32]) {{ let v = {}a[0]{}; out[0] = 1.0; }}", r("[", n), r("]", n))
        },
        valid: true,
    },
    Form {
        name: "array types",
        kernel: |n| {
            format!(
                "fn k(a: &[f32], out: &mut [f32]) {{ let v: {}f32{} = 0.0; out[0] = a[0]; }}",
                r("[", n),
                r("; 1]", n)
            )
        },
        valid: false,
    },
    Form {
        name: "reference types",
        kernel: |n| format!("fn k(a: {}[f32], out: &mut [f32]) {{ out[0] = a[0]; }}", r("&", n)),
        valid: false,
    },
    Form {
        name: "generic types",
        kernel: |n| format!("fn k(a: &[{}f32{}], out: &mut [f32]) {{ out[0] = 1.0; }}", r("Option<", n), r(">", n)),
        valid: false,
    },
    Form {
        name: "generic types after commas",
        kernel: |n| format!("fn k(a: &[{}f32{}], out: &mut [f32]) {{ out[0] = 1.0; }}", r("R<u32, ", n), r(">", n)),
        valid: false,
    },
    Form {
        name: "tuple types",
        kernel: |n| {
            format!(
                "fn k(a: &[f32], out: &mut [f32]) {{ let t: {}f32{} = 0.0; out[0] = a[0]; }}",
                r("(", n),
                r(",)", n)
            )
        },
        valid: false,
    },
    Form {
        name: "negation",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = {}a[0]; }}", r("- ", n)),
        valid: true,
    },
    Form {
        name: "logical not",
        kernel: |n| format!("fn k(a: &[u32], out: &mut [u32]) {{ out[0] = {}a[0]; }}", r("!", n)),
        valid: true,
    },
    Form {
        name: "a sum",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]{}; }}", r(" + a[0]", n)),
        valid: true,
    },
    Form {
        name: "a sum of blocks",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]{}; }}", r(" + { 1.0 }", n)),
        valid: true,
    },
    Form {
        name: "a sum of if expressions",
        kernel: |n| {
            format!(
                "fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]{}; }}",
                r(" + if a[0] > 0.0 { 1.0 } else { 2.0 }", n)
            )
        },
        valid: true,
    },
    Form {
        name: "method calls",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]{}; }}", r(".abs()", n)),
        valid: true,
    },
    Form {
        name: "casts",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]{}; }}", r(" as f32", n)),
        valid: true,
    },
    Form {
        name: "assignments",
        kernel: |n| {
            format!("fn k(a: &[f32], out: &mut [f32]) {{ let mut x = 0.0; x = {} a[0]; out[0] = x; }}", r("x = ", n))
        },
        valid: false,
    },
    Form {
        name: "calls",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = {}a[0]{}; }}", r("f32::abs(", n), r(")", n)),
        valid: true,
    },
    Form {
        name: "closures",
        kernel: |n| {
            format!("fn k(a: &[f32], out: &mut [f32]) {{ let f = {}1.0; out[0] = a[0]; }}", r("|x: f32, y: f32| ", n))
        },
        valid: false,
    },
    Form {
        name: "returns",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = a[0]; {} }}", r("return ", n)),
        valid: false,
    },
    Form {
        name: "reference patterns",
        kernel: |n| format!("fn k(a: &[f32], out: &mut [f32]) {{ let {}x = a[0]; out[0] = x; }}", r("&", n)),
        valid: false,
    },
];

/// Runs `f` on a thread with rustc's stack (8 MiB), where the macro runs
/// the compiler. These tests are unoptimised, so this is several times
/// what the macro (built with `opt-level = 3`) needs; the tools compile on
/// `nesting::STACK_SIZE`, more again.
fn on_rustc_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|s| std::thread::Builder::new().stack_size(8 << 20).spawn_scoped(s, f).unwrap().join().unwrap())
}

/// The deepest `n` the check accepts for `form`.
fn deepest_accepted(form: &Form) -> usize {
    let accepted = |n: usize| {
        let tokens: proc_macro2::TokenStream = (form.kernel)(n).parse().expect("lexes");
        nesting::check(&tokens).is_ok()
    };
    assert!(accepted(1), "{}: depth 1 is rejected", form.name);
    let (mut lo, mut hi) = (1, 10_000);
    assert!(!accepted(hi), "{}: depth 10,000 is accepted", form.name);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if accepted(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[test]
fn depth_10000_is_one_spanned_error() {
    for form in FORMS {
        let source = (form.kernel)(10_000);
        let errors = match parse_source::<syn::ItemFn>(&source) {
            Ok(_) => panic!("{}: depth 10,000 parsed", form.name),
            Err(e) => e,
        };
        assert_eq!(errors.len(), 1, "{}: {errors:?}", form.name);
        let e = &errors[0];
        assert!(
            e.message.contains("nested too deep") && e.message.contains(&MAX_NESTING.to_string()),
            "{}: {}",
            form.name,
            e.message
        );
        // Spanned: at the construct past the limit, on the first line.
        let at = e.span.start();
        assert!(at.line == 1 && at.column > 20, "{}: error at {at:?}", form.name);
    }
}

#[test]
fn the_deepest_accepted_input_compiles_without_overflow() {
    let mut report = Vec::new();
    for form in FORMS {
        let n = deepest_accepted(form);
        // Not absurdly cautious: real code nests a few levels.
        assert!(n >= 40, "{}: only {n} levels accepted", form.name);
        let source = (form.kernel)(n);
        let ok = on_rustc_stack(|| {
            let item = parse_source::<syn::ItemFn>(&source).expect("accepted input parses");
            compile("workgroup_size = 64".parse().unwrap(), &item, &[]).map(drop).map_err(|e| e[0].message.clone())
        });
        let ok = match ok {
            Ok(()) => true,
            Err(e) => {
                report.push(format!("  {e}"));
                false
            }
        };
        report.push(format!("{}: {n} levels, compiled: {ok}", form.name));
        assert!(
            !report.last().unwrap().contains("internal compiler error"),
            "{}: an internal error at {n} levels:\n{}",
            form.name,
            report.join("\n")
        );
        if form.valid {
            assert!(ok, "{}: {n} levels do not compile:\n{}", form.name, report.join("\n"));
        }
    }
    println!("{}", report.join("\n"));
}

/// The error's span is at the construct past the limit, not at the start
/// of the kernel.
#[test]
fn the_error_points_at_the_level_past_the_limit() {
    let source = format!("fn k(a: &[f32], out: &mut [f32]) {{ out[0] = {}a[0]{}; }}", "(".repeat(300), ")".repeat(300));
    let errors = parse_source::<syn::ItemFn>(&source).unwrap_err();
    let column = errors[0].span.start().column;
    assert!(source[column..].starts_with('('), "{column}");
    assert_eq!(errors[0].label.as_deref(), Some(format!("nesting level {} here", MAX_NESTING + 1).as_str()));
}

/// Real code is far from the limit: every kernel of the language suite's
/// corpus passes the check with room to spare.
#[test]
fn the_corpus_is_far_below_the_limit() {
    let corpus = include_str!("../../../tests/language/kernels.rs");
    let tokens: proc_macro2::TokenStream = corpus.parse().expect("lexes");
    let depth = nesting::depth(&tokens);
    println!("the corpus nests {depth} levels deep");
    assert!(depth < MAX_NESTING / 2, "the corpus nests {depth} levels deep");
    assert!(depth > 5, "the count is too low to be true: {depth}");
}

/// Control flow as deep as the nesting limit allows compiles, but for an
/// `else if` chain: naga writes each link inside the `else` of the one
/// before, and WGSL allows 127 levels of braces, so a chain that long is
/// an error at the link past it (not an internal error from re-parsing
/// the WGSL).
#[test]
fn control_flow_at_the_limit() {
    let compile_at = |form: &Form, n: usize| {
        let source = (form.kernel)(n);
        with_stack(move || {
            let item = parse_source::<syn::ItemFn>(&source).expect("parses");
            compile("workgroup_size = 64".parse().unwrap(), &item, &[])
                .map(drop)
                .map_err(|e| (e[0].message.clone(), e[0].span.start().column))
        })
    };
    for form in FORMS.iter().filter(|f| ["blocks", "nested ifs"].contains(&f.name)) {
        let n = deepest_accepted(form);
        assert!(compile_at(form, n).is_ok(), "{}: {n} levels", form.name);
    }
    let chain = FORMS.iter().find(|f| f.name == "else-if chain").unwrap();
    assert!(compile_at(chain, 100).is_ok());
    let e = compile_at(chain, deepest_accepted(chain)).unwrap_err();
    let (message, column) = e;
    assert!(message.starts_with("blocks nested too deep for WGSL") && message.contains("127"), "{message}");
    // At the link past the limit: the 126th `else if` (the first line
    // holds the kernel).
    let source = (chain.kernel)(deepest_accepted(chain));
    let before = source[..column].matches("else if").count();
    assert!((120..=127).contains(&before), "error after {before} links");
}
