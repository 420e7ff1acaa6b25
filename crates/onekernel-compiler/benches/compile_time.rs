//! Compile time against source size: one kernel of K statements
//! `x = x * 1.0001 + a[(i + k) % n];`, timed stage by stage (syn's parse,
//! the recogniser, the checks, one lowering, validation and WGSL/SPIR-V
//! writing, the WGSL re-parse, the explain view) and as a whole
//! (`compile`, which lowers four variants and the explain view).
//!
//! ```sh
//! cargo bench -p onekernel-compiler --bench compile_time
//! # other sizes:
//! KERNEL_BENCH_STATEMENTS=250,1000,4000 cargo bench -p onekernel-compiler --bench compile_time
//! ```
//!
//! docs/performance.md has the table. Compile time should grow linearly
//! with K: the last column (µs per statement) should stay flat.

use onekernel_compiler::{check, emit, explain, hir, layout::Layout, lower, parse, Options};
use std::time::{Duration, Instant};

fn kernel(statements: usize) -> String {
    let mut s = String::from(
        "fn k(a: &[f32], out: &mut [f32]) {\n    let n = a.len();\n    let i = onekernel::global_id().x;\n    let mut x = 0.0f32;\n",
    );
    for k in 0..statements {
        s.push_str(&format!("    x = x * 1.0001 + a[(i + {k}) % n];\n"));
    }
    s.push_str("    out[i] = x;\n}\n");
    s
}

/// The best of `runs` timings of `f`, and its last result.
fn best<R>(runs: usize, mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        last = Some(r);
    }
    (best, last.expect("runs > 0"))
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs it once
    // at a small size, as a smoke test.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = match std::env::var("KERNEL_BENCH_STATEMENTS") {
        Ok(v) => v.split(',').map(|s| s.trim().parse().expect("KERNEL_BENCH_STATEMENTS: numbers")).collect(),
        Err(_) if smoke => vec![50],
        Err(_) => vec![250, 500, 1000, 2000, 4000],
    };
    let attr: proc_macro2::TokenStream = "workgroup_size = 64".parse().expect("attribute");
    println!(
        "| K | source bytes | syn | recognise | + check | lower ×4 | validate + write ×4 | re-parse WGSL ×4 | explain | compile | µs per statement |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &k in &sizes {
        let source = kernel(k);
        let runs = if smoke { 1 } else { (2000 / k).clamp(1, 5) };
        let (t_syn, item) =
            best(runs, || onekernel_compiler::parse_source::<syn::ItemFn>(&source).expect("the kernel parses"));
        let (t_parse, _) = best(runs, || {
            parse::parse_function(&item, parse::FnRole::Kernel, &mut Default::default()).expect("recognised")
        });
        let (t_check, checked) = best(runs, || {
            let mut types = Default::default();
            let f = parse::parse_function(&item, parse::FnRole::Kernel, &mut types).expect("recognised");
            check(hir::Program { kernel: f, helpers: vec![], types }).unwrap_or_else(|e| panic!("{}", e[0].message))
        });
        let layout = Layout::of(&checked.program.kernel, &checked.program.types).expect("layout");
        let variants = onekernel_compiler::MODULES.map(lower::Variant::of);
        let lower_all = || {
            variants.map(|v| {
                lower::lower_program(
                    &checked.program,
                    &checked.kernel_types,
                    &checked.helper_types,
                    &layout,
                    [64, 1, 1],
                    v,
                )
                .expect("lowers")
            })
        };
        let (t_lower, lowered) = best(runs, lower_all);
        let span = checked.program.kernel.span;
        let (t_emit, wgsl) =
            best(runs, || lowered.each_ref().map(|l| emit::emit(l, span).expect("validates and writes").0));
        let (t_reparse, _) = best(runs, || wgsl.each_ref().map(|w| emit::reparse_wgsl(w).expect("re-parses")));
        if std::env::var("KERNEL_BENCH_SPLIT").is_ok() {
            for (i, w) in wgsl.iter().enumerate() {
                let t = Instant::now();
                let m = naga::front::wgsl::parse_str(w).expect("parses");
                let parse = t.elapsed();
                let t = Instant::now();
                naga::valid::Validator::new(naga::valid::ValidationFlags::all(), emit::CAPABILITIES)
                    .validate(&m)
                    .unwrap();
                eprintln!(
                    "variant {i}: {} bytes of WGSL, parse {} ms, validate {} ms",
                    w.len(),
                    ms(parse),
                    ms(t.elapsed())
                );
            }
        }
        let wgsl = &wgsl[0];
        let (t_explain, _) = best(runs, || {
            explain::explain(
                &checked.program,
                &checked.kernel_types,
                &checked.helper_types,
                &layout,
                [64, 1, 1],
                &[&item],
                wgsl,
            )
            .expect("explains")
        });
        let (t_compile, _) = best(runs, || {
            let kernel =
                onekernel_compiler::Kernel { attr: attr.clone(), item: item.clone(), module: Default::default() };
            onekernel_compiler::compile_kernel(&kernel, &[], &Options::default()).map(|_| ()).expect("compiles")
        });
        println!(
            "| {k} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
            source.len(),
            ms(t_syn),
            ms(t_parse),
            ms(t_check),
            ms(t_lower),
            ms(t_emit),
            ms(t_reparse),
            ms(t_explain),
            ms(t_compile),
            t_compile.as_secs_f64() * 1e6 / k as f64,
        );
    }
}
