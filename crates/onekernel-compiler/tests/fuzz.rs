//! Robustness: the compiler is fed mutated valid kernels and arbitrary token
//! streams. It must never panic, and every kernel it accepts must be valid:
//! naga validates the module, the WGSL re-parses and validates, and the
//! SPIR-V is written (all checked again here, outside `compile`).
//!
//! A seeded generator makes every run reproducible. CI runs a few thousand
//! inputs (seconds); a longer run:
//!
//! ```sh
//! KERNEL_FUZZ_ITERS=200000 cargo test -p onekernel-compiler --release --test fuzz -- --nocapture
//! ```
//!
//! (`KERNEL_FUZZ_SEED=N` picks another sequence.) Any input that ever made
//! the compiler panic or abort is kept in `REGRESSIONS` below.
//!
//! Inputs are parsed the way the macro and the tools parse them
//! (`parse_tokens`: the nesting check, then syn), and compiled on a thread
//! of the compiler's stack size (`nesting::with_stack`): one input in
//! twenty nests one recursive form (parentheses, blocks, `if` chains,
//! types, array literals, operators, ...) up to 10,000 levels deep, which
//! must be an error, never a stack overflow.

use onekernel_compiler::nesting::with_stack;
use onekernel_compiler::{compile, expand, parse_source, parse_tokens};
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The seed corpus: valid kernels and helpers covering the subset.
const CORPUS: &str = include_str!("../../../tests/language/kernels.rs");

/// Inputs that once panicked or aborted, as `(attribute, source, whether
/// it gets past the nesting check and syn)`.
const REGRESSIONS: &[(&str, &str, bool)] = &[
    // Found by a 1,000,000-input run (seed 1000001, iteration 56404): a
    // local array of 2^32 - 1 elements made naga panic ("type is too large").
    (
        "workgroup_size = 64",
        "fn k(a: &[f32], out: &mut [f32]) { let mut tile = [[0.0f32; 4294967295u32]; 4]; tile[0][0] = a[0]; out[0] = tile[0][0]; }",
        true,
    ),
    // 150 nested parentheses overflowed the playground server's stack
    // (issue 21): past the nesting limit, an error before syn parses.
    (
        "workgroup_size = 64",
        "fn k(a: &[f32], out: &mut [f32]) { out[0] = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((a[0]))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))); }",
        false,
    ),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The kernels (attribute tokens + function) and helpers of the corpus.
fn corpus() -> (Vec<(TokenStream, syn::ItemFn)>, Vec<syn::ItemFn>) {
    let file: syn::File = syn::parse_str(CORPUS).expect("corpus parses");
    let mut kernels = Vec::new();
    let mut helpers = Vec::new();
    for item in file.items {
        let syn::Item::Fn(mut f) = item else { continue };
        let kernel_attr = f.attrs.iter().find(|a| a.path().is_ident("kernel")).cloned();
        let is_helper = f.attrs.iter().any(|a| a.path().is_ident("helper"));
        f.attrs.retain(|a| a.path().is_ident("doc"));
        match kernel_attr {
            Some(a) => kernels.push((a.meta.require_list().expect("kernel(...)").tokens.clone(), f)),
            None if is_helper => helpers.push(f),
            None => {}
        }
    }
    assert!(kernels.len() >= 10 && helpers.len() >= 3, "corpus too small");
    (kernels, helpers)
}

const IDENTS: &[&str] = &[
    "i",
    "x",
    "y",
    "out",
    "a",
    "b",
    "n",
    "f32",
    "i32",
    "u32",
    "usize",
    "bool",
    "f64",
    "u8",
    "i64",
    "Vec",
    "String",
    "Box",
    "Option",
    "Some",
    "None",
    "global_id",
    "thread_id",
    "block_id",
    "block_dim",
    "grid_dim",
    "len",
    "sqrt",
    "powi",
    "pow",
    "min",
    "max",
    "clamp",
    "round",
    "step_by",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "loop",
    "for",
    "in",
    "break",
    "continue",
    "return",
    "as",
    "fn",
    "match",
    "unsafe",
    "true",
    "false",
    "self",
    "Self",
    "struct",
    "impl",
    "where",
    "smoothstep",
    "clamp01",
    "collatz_steps",
    "array",
    "var",
    "vec3",
    "x_1",
    "_",
    "MAX",
    "std",
    "consts",
    "PI",
];
const PUNCTS: &[char] =
    &['+', '-', '*', '/', '%', '^', '!', '&', '|', '=', '<', '>', '.', ',', ';', ':', '@', '#', '?', '~', '$', '\''];

fn random_literal(rng: &mut Rng) -> Literal {
    match rng.below(12) {
        0 => Literal::u128_unsuffixed(u128::MAX),
        1 => Literal::u64_suffixed(rng.next()),
        2 => Literal::i64_unsuffixed(-(rng.below(1 << 40) as i64)),
        3 => Literal::f64_unsuffixed(rng.next() as f64 / 7.0),
        4 => Literal::f32_suffixed(1e38),
        5 => Literal::f64_suffixed(0.5),
        6 => Literal::string("text"),
        7 => Literal::character('c'),
        8 => Literal::u8_suffixed(255),
        9 => Literal::u32_suffixed(u32::MAX),
        10 => Literal::i32_suffixed(i32::MIN + 1),
        _ => Literal::usize_unsuffixed(rng.below(70_000)),
    }
}

fn random_token(rng: &mut Rng) -> TokenTree {
    match rng.below(4) {
        0 => TokenTree::Literal(random_literal(rng)),
        1 => TokenTree::Punct(Punct::new(
            *rng.pick(PUNCTS),
            if rng.below(2) == 0 { Spacing::Alone } else { Spacing::Joint },
        )),
        _ => {
            let name = *rng.pick(IDENTS);
            TokenTree::Ident(Ident::new(name, Span::call_site()))
        }
    }
}

/// One random edit somewhere in the token tree.
fn mutate(rng: &mut Rng, ts: TokenStream, depth: usize) -> TokenStream {
    let mut tokens: Vec<TokenTree> = ts.into_iter().collect();
    // Descend into a group half the time.
    let groups: Vec<usize> =
        tokens.iter().enumerate().filter(|(_, t)| matches!(t, TokenTree::Group(_))).map(|(i, _)| i).collect();
    if !groups.is_empty() && depth < 8 && rng.below(3) != 0 {
        let gi = *rng.pick(&groups);
        if let TokenTree::Group(g) = &tokens[gi] {
            let inner = mutate(rng, g.stream(), depth + 1);
            let mut ng = Group::new(g.delimiter(), inner);
            ng.set_span(g.span());
            tokens[gi] = TokenTree::Group(ng);
        }
        return tokens.into_iter().collect();
    }
    let n = tokens.len();
    match rng.below(7) {
        0 if n > 0 => {
            tokens.remove(rng.below(n));
        }
        1 if n > 0 => {
            let t = tokens[rng.below(n)].clone();
            tokens.insert(rng.below(n + 1), t);
        }
        2 if n > 1 => {
            let (i, j) = (rng.below(n), rng.below(n));
            tokens.swap(i, j);
        }
        3 if n > 0 => {
            let i = rng.below(n);
            tokens[i] = random_token(rng);
        }
        4 => {
            let t = random_token(rng);
            tokens.insert(rng.below(n + 1), t);
        }
        5 if n > 0 => {
            // Wrap a run of tokens in a new group.
            let i = rng.below(n);
            let j = (i + 1 + rng.below(4)).min(n);
            let inner: TokenStream = tokens.drain(i..j).collect();
            let delim = *rng.pick(&[Delimiter::Parenthesis, Delimiter::Brace, Delimiter::Bracket]);
            tokens.insert(i, TokenTree::Group(Group::new(delim, inner)));
        }
        _ => {
            let t = random_token(rng);
            tokens.push(t);
        }
    }
    tokens.into_iter().collect()
}

/// Syntax-preserving edits on syn's tree, so that inputs get past parsing
/// and into typing and lowering: literals, operators, names, methods and
/// types are swapped, statements dropped, duplicated or reordered, and
/// expressions replaced by others from the corpus.
struct TreeMutator<'a> {
    rng: &'a mut Rng,
    exprs: &'a [syn::Expr],
    /// Probability (per 1000) of editing each node visited.
    rate: usize,
}

impl syn::visit_mut::VisitMut for TreeMutator<'_> {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if self.rng.below(1000) < self.rate {
            match self.rng.below(6) {
                0 => *e = self.rng.pick(self.exprs).clone(),
                1 => *e = syn::Expr::Lit(syn::ExprLit { attrs: vec![], lit: syn::Lit::new(random_literal(self.rng)) }),
                2 => {
                    let picked = *self.rng.pick(IDENTS);
                    let name = Ident::new(picked, Span::call_site());
                    set(e, quote::quote!(#name));
                }
                3 => {
                    let (l, r) = (self.rng.pick(self.exprs).clone(), self.rng.pick(self.exprs).clone());
                    let op = *self.rng.pick(&[
                        "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "<", ">=", "&&", "||", "+=", "<<=",
                    ]);
                    let op: TokenStream = op.parse().expect("operator");
                    set(e, quote::quote!(#l #op #r));
                }
                4 => {
                    let picked = *self.rng.pick(IDENTS);
                    let method = Ident::new(picked, Span::call_site());
                    let inner = e.clone();
                    set(e, quote::quote!((#inner).#method()));
                }
                _ => {
                    let ty = Ident::new(
                        {
                            let t = *self.rng.pick(&["f32", "i32", "u32", "usize", "bool", "f64", "u8", "i64"]);
                            t
                        },
                        Span::call_site(),
                    );
                    let inner = e.clone();
                    set(e, quote::quote!((#inner) as #ty));
                }
            }
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let n = b.stmts.len();
        if n > 0 && self.rng.below(1000) < self.rate {
            match self.rng.below(3) {
                0 => {
                    b.stmts.remove(self.rng.below(n));
                }
                1 => {
                    let s = b.stmts[self.rng.below(n)].clone();
                    b.stmts.insert(self.rng.below(n), s);
                }
                _ => b.stmts.swap(self.rng.below(n), self.rng.below(n)),
            }
        }
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_type_mut(&mut self, t: &mut syn::Type) {
        if self.rng.below(1000) < self.rate {
            *t = syn::parse_str(self.rng.pick::<&str>(&[
                "f32",
                "u32",
                "&[f32]",
                "&mut [u32]",
                "f64",
                "Vec<f32>",
                "&mut i32",
                "usize",
                "bool",
                "(f32, f32)",
            ]))
            .expect("type");
            return;
        }
        syn::visit_mut::visit_type_mut(self, t);
    }
}

/// Replaces `e` by `tokens` when they parse as an expression (a keyword
/// picked as a name does not).
fn set(e: &mut syn::Expr, tokens: TokenStream) {
    if let Ok(new) = syn::parse2(tokens) {
        *e = new;
    }
}

/// Every expression in the corpus, for replacing others.
fn all_exprs(kernels: &[(TokenStream, syn::ItemFn)]) -> Vec<syn::Expr> {
    struct Collect(Vec<syn::Expr>);
    impl<'ast> syn::visit::Visit<'ast> for Collect {
        fn visit_expr(&mut self, e: &'ast syn::Expr) {
            self.0.push(e.clone());
            syn::visit::visit_expr(self, e);
        }
    }
    let mut c = Collect(Vec::new());
    for (_, f) in kernels {
        syn::visit::Visit::visit_item_fn(&mut c, f);
    }
    c.0
}

/// A function made of random tokens around a plausible signature.
fn arbitrary_kernel(rng: &mut Rng) -> TokenStream {
    let body: TokenStream = (0..rng.below(40)).map(|_| random_token(rng)).collect();
    let params: TokenStream = (0..rng.below(8)).map(|_| random_token(rng)).collect();
    let mut ts: TokenStream = "fn k".parse().expect("tokens");
    ts.extend([
        TokenTree::Group(Group::new(Delimiter::Parenthesis, params)),
        TokenTree::Group(Group::new(Delimiter::Brace, body)),
    ]);
    ts
}

/// Compiles one input; panics (failing the test) if the compiler panics or
/// accepts something invalid. Returns whether it was accepted.
fn check(attr: TokenStream, item: &syn::ItemFn, helpers: &[syn::ItemFn], what: &dyn Fn() -> String) -> bool {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let r = compile(attr.clone(), item, helpers);
        // The macro's expansion must not panic either.
        match &r {
            Ok(k) => drop(expand::expand_kernel(item, k)),
            Err(e) => drop(expand::expand_errors(item, e)),
        }
        r
    }));
    let compiled = match result {
        Ok(r) => r,
        Err(_) => panic!("the compiler panicked on:\n{}", what()),
    };
    let Ok(k) = compiled else { return false };
    // Accepted: the WGSL must re-parse and validate, and the SPIR-V exist.
    let module = naga::front::wgsl::parse_str(k.info.wgsl())
        .unwrap_or_else(|e| panic!("accepted, but WGSL does not parse: {e}\n{}", what()));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), onekernel_compiler::emit::CAPABILITIES)
        .validate(&module)
        .unwrap_or_else(|e| panic!("accepted, but WGSL does not validate: {e:?}\n{}", what()));
    if k.info.consts.params.is_empty() {
        assert!(!k.info.spirv().is_empty(), "accepted without SPIR-V:\n{}", what());
    } else {
        // A name like `MAX` is a constant of the kernel's scope (an
        // `override`): SPIR-V exists per specialisation.
        let values = vec![1.0; k.info.consts.params.len()];
        let words = onekernel_compiler::emit::specialised_spirv(k.info.wgsl(), &k.info.consts.params, &values)
            .unwrap_or_else(|e| panic!("accepted, but no specialised SPIR-V: {e}\n{}", what()));
        assert!(!words.is_empty(), "accepted without specialised SPIR-V:\n{}", what());
    }
    let keys: Vec<_> = k.info.modules.iter().map(|m| m.key).collect();
    assert_eq!(keys, onekernel_compiler::MODULES, "accepted without every module:\n{}", what());
    true
}

#[test]
fn regressions_do_not_panic() {
    with_stack(|| {
        for (attr, src, parses) in REGRESSIONS {
            // Not skipped when it does not parse: whether it does is part of
            // the regression.
            match parse_source::<syn::ItemFn>(src) {
                Ok(item) => {
                    assert!(parses, "parsed, but expected an error before syn:\n{src}");
                    check(attr.parse().expect("attr"), &item, &[], &|| src.to_string());
                }
                Err(e) => {
                    assert!(!parses, "does not parse ({}):\n{src}", e[0].message);
                    assert_eq!(e.len(), 1, "{e:?}");
                }
            }
        }
    });
}

/// The recursive forms of the language, each as a way to nest a leaf
/// token (a literal or a name in an expression, a type name) `n` deep.
/// A form's name, and the text of a leaf nested `n` deep in it.
type Form = (&'static str, fn(&str, usize) -> String);

const FORMS: &[Form] = &[
    ("parentheses", |x, n| format!("{}{x}{}", "(".repeat(n), ")".repeat(n))),
    ("block expressions", |x, n| format!("{}{x}{}", "{ ".repeat(n), " }".repeat(n))),
    ("nested ifs", |x, n| format!("{}{x}{}", "if true { ".repeat(n), " } else { 0 }".repeat(n))),
    ("if chain", |x, n| format!("if false {{ 0 }} {} else {{ {x} }}", "else if false { 1 } ".repeat(n))),
    ("array literals", |x, n| format!("{}{x}{}", "[".repeat(n), "]".repeat(n))),
    ("negation", |x, n| format!("{}{x}", "-".repeat(n))),
    ("not", |x, n| format!("{}{x}", "!".repeat(n))),
    ("sums", |x, n| format!("{x}{}", " + 1".repeat(n))),
    ("method calls", |x, n| format!("{x}{}", ".abs()".repeat(n))),
    ("casts", |x, n| format!("{x}{}", " as f32".repeat(n))),
    ("calls", |x, n| format!("{}{x}{}", "f32::abs(".repeat(n), ")".repeat(n))),
    ("closures", |x, n| format!("{}{x}", "|v| ".repeat(n))),
    ("indexing", |x, n| format!("{x}{}", "[0]".repeat(n))),
];

/// Type forms, nesting a type name `n` deep.
const TYPE_FORMS: &[Form] = &[
    ("array types", |t, n| format!("{}{t}{}", "[".repeat(n), "; 1]".repeat(n))),
    ("reference types", |t, n| format!("{}{t}", "&".repeat(n))),
    ("generic types", |t, n| format!("{}{t}{}", "Option<".repeat(n), ">".repeat(n))),
    ("tuple types", |t, n| format!("{}{t}{}", "(".repeat(n), ",)".repeat(n))),
];

/// A depth: half near the nesting limit, half anywhere up to 10,000.
fn random_depth(rng: &mut Rng) -> usize {
    if rng.below(2) == 0 {
        60 + rng.below(140)
    } else {
        // Log-uniform over 1..=10,000.
        let exp = rng.below(1000) as f64 / 1000.0 * 4.0;
        (10f64.powf(exp) as usize).clamp(1, 10_000)
    }
}

/// `source`'s tokens with one leaf (a literal or name in the body, or a
/// scalar type name anywhere) nested `depth` deep in a random form.
/// Returns the new tokens and what was done (None without such a leaf).
fn nest_deep(rng: &mut Rng, source: &TokenStream, depth: usize) -> Option<(TokenStream, String)> {
    let text = source.to_string();
    let types = ["f32", "u32", "i32", "usize"];
    let typed = rng.below(4) == 0;
    // Leaves: byte offsets of the tokens to replace in the text.
    let body = text.find('{').unwrap_or(0);
    let leaves: Vec<(usize, &str)> = if typed {
        types.iter().flat_map(|t| text.match_indices(t)).collect()
    } else {
        ["0", "1", "i", "x", "a", "out"].iter().flat_map(|t| text.match_indices(t)).collect()
    };
    // Not inside string literals (doc comments are `#[doc = "..."]`).
    let mut in_string = vec![false; text.len()];
    let (mut inside, mut escaped) = (false, false);
    for (i, c) in text.char_indices() {
        in_string[i] = inside;
        match c {
            '\\' if inside => escaped = !escaped,
            '"' if !escaped => inside = !inside,
            _ => escaped = false,
        }
    }
    let leaves: Vec<(usize, &str)> = leaves
        .into_iter()
        .filter(|&(i, _)| !in_string[i])
        .filter(|&(i, s)| {
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
            (typed || i > body) && !word(text[..i].chars().next_back()) && !word(text[i + s.len()..].chars().next())
        })
        .collect();
    if leaves.is_empty() {
        return None;
    }
    let (at, leaf) = *rng.pick(&leaves);
    let (name, nested) = if typed {
        let (name, form) = rng.pick(TYPE_FORMS);
        (*name, form(leaf, depth))
    } else {
        let (name, form) = rng.pick(FORMS);
        (*name, form(leaf, depth))
    };
    let new = format!("{}{nested}{}", &text[..at], &text[at + leaf.len()..]);
    Some((new.parse().expect("nesting keeps the text lexable"), format!("{name}, {depth} levels, at `{leaf}`")))
}

#[test]
fn mutated_and_arbitrary_kernels_never_panic() {
    // The compiler recurses on the tree: run where the tools run it.
    with_stack(fuzz);
}

fn fuzz() {
    let iters: usize = std::env::var("KERNEL_FUZZ_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(3000);
    let seed: u64 = std::env::var("KERNEL_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng(seed | 1);
    let (kernels, helpers) = corpus();
    let exprs = all_exprs(&kernels);
    let (mut parsed, mut accepted) = (0usize, 0usize);
    // Deeply nested inputs: generated, rejected by the nesting check,
    // accepted by the compiler.
    let (mut deep, mut too_deep, mut deep_accepted) = (0usize, 0usize, 0usize);
    let start = std::time::Instant::now();
    for iter in 0..iters {
        let mut nested = None;
        let (attr, source): (TokenStream, TokenStream) = match rng.below(20) {
            // Arbitrary tokens.
            0 => ("workgroup_size = 64".parse().expect("attr"), arbitrary_kernel(&mut rng)),
            // A mutated attribute.
            1 => {
                let (attr, f) = rng.pick(&kernels);
                (mutate(&mut rng, attr.clone(), 0), quote::ToTokens::to_token_stream(f))
            }
            // Token-level edits: one to four.
            2..=5 => {
                let (attr, f) = rng.pick(&kernels);
                let mut ts = quote::ToTokens::to_token_stream(f);
                for _ in 0..1 + rng.below(4) {
                    ts = mutate(&mut rng, ts, 0);
                }
                (attr.clone(), ts)
            }
            // One recursive form nested deep.
            6 => {
                let (attr, f) = rng.pick(&kernels);
                let depth = random_depth(&mut rng);
                let tokens = quote::ToTokens::to_token_stream(f);
                match nest_deep(&mut rng, &tokens, depth) {
                    Some((deeper, what)) => {
                        nested = Some((depth, what));
                        (attr.clone(), deeper)
                    }
                    None => (attr.clone(), tokens),
                }
            }
            // Tree-level edits.
            _ => {
                let (attr, f) = rng.pick(&kernels);
                let mut f = f.clone();
                let rate = 5 + rng.below(60);
                syn::visit_mut::VisitMut::visit_item_fn_mut(
                    &mut TreeMutator { rng: &mut rng, exprs: &exprs, rate },
                    &mut f,
                );
                (attr.clone(), quote::ToTokens::to_token_stream(&f))
            }
        };
        // Sometimes mutate a helper too.
        let mut hs = helpers.clone();
        if rng.below(5) == 0 {
            let h = rng.below(hs.len());
            if let Ok(m) = parse_tokens::<syn::ItemFn>(mutate(&mut rng, quote::ToTokens::to_token_stream(&hs[h]), 0)) {
                hs[h] = m;
            }
        }
        let what = || format!("iteration {iter} (seed {seed}):\n#[kernel({attr})]\n{source}");
        deep += usize::from(nested.is_some());
        let item = match parse_tokens::<syn::ItemFn>(source.clone()) {
            Ok(item) => item,
            Err(errors) => {
                if errors[0].message.contains("nested too deep") {
                    assert_eq!(errors.len(), 1, "{errors:?}\n{}", what());
                    too_deep += usize::from(nested.is_some());
                } else if let Some((depth, form)) = &nested {
                    // Every form counts at least one level per level.
                    assert!(*depth <= onekernel_compiler::MAX_NESTING, "{form}: not a nesting error: {errors:?}");
                }
                continue;
            }
        };
        if let Some((depth, form)) = &nested {
            assert!(*depth <= onekernel_compiler::MAX_NESTING, "{form}: {depth} levels got past the check");
        }
        parsed += 1;
        if check(attr.clone(), &item, &hs, &what) {
            accepted += 1;
            deep_accepted += usize::from(nested.as_ref().is_some_and(|(d, _)| *d >= 60));
        }
    }
    println!(
        "fuzz: {iters} inputs, {parsed} parsed as functions, {accepted} accepted; {deep} nested deep, {too_deep} of them \
         too deep, {deep_accepted} accepted 60 or more levels deep; in {:.1?}",
        start.elapsed()
    );
    assert!(parsed > iters / 2, "too few inputs parsed: the mutations are too destructive");
    // The inputs reach the back ends: a mutation that always broke typing
    // would test only the front end (about 16% compile with the default
    // seed).
    assert!(
        accepted > parsed / 10,
        "too few inputs compiled ({accepted} of {parsed}): the mutations are too destructive"
    );
    if iters >= 1000 {
        assert!(too_deep > deep / 5, "too few deep inputs ({too_deep} of {deep}) past the nesting limit");
        assert!(deep_accepted > 0, "no deeply nested input compiled: the limit or the generator is wrong");
    }
}
