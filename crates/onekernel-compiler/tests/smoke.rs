/// Cooperative matrices (tiles) in naga IR built by hand.
#[path = "smoke/coop_ir.rs"]
mod coop_ir;
/// Local arrays indexed only by constants become variables.
#[path = "smoke/split_arrays.rs"]
mod split_arrays;

use onekernel_compiler::{compile, CompiledKernel};

/// `src` compiled with `#[kernel(attr)]` and `helpers`, or a panic that
/// prints the diagnostics: the one compile step of every test here.
fn compiled(attr: &str, src: &str, helpers: &[&str]) -> CompiledKernel {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let helpers: Vec<syn::ItemFn> = helpers.iter().map(|h| syn::parse_str(h).unwrap()).collect();
    match compile(attr.parse().unwrap(), &item, &helpers) {
        Ok(k) => k,
        Err(e) => panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()),
    }
}

fn wgsl(attr: &str, src: &str) -> String {
    compiled(attr, src, &[]).info.wgsl().to_string()
}

#[test]
fn vector_add() {
    let w = wgsl(
        "workgroup_size = 256",
        r#"
fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    if i < out.len() { out[i] = a[i] + b[i]; }
}"#,
    );
    println!("{w}");
}

#[test]
fn control_flow() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(a: &[i32], out: &mut [i32], n: u32) {
    let i = global_id().x;
    if i >= out.len() { return; }
    let mut acc = 0;
    'outer: for j in 0..n {
        let mut k = 0u32;
        while k < 4 {
            k += 1;
            if k == 2 { continue; }
            if j as i32 > a[i] { break 'outer; }
            acc += (j * k) as i32;
        }
    }
    let x = if acc > 10 { acc - 10 } else { -acc };
    let y = loop { break 5; };
    out[i] = x + y + 2i32.pow(3) + (2.5f32.powi(2) as i32) + (1.5f32).round() as i32;
}"#,
    );
    println!("{w}");
}

#[test]
fn local_arrays_and_tuples() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    let i = global_id().x;
    let mut acc = [0.0f32; 4];
    let mut m = [[1.0f32, 2.0], [3.0, 4.0]];
    for j in 0..acc.len() {
        acc[j] = a[i] * j as f32;
    }
    m[1][0] += acc[3];
    let w = [a[i], 2.0, 3.0];
    let (s, c) = (w[2], w[1]);
    let mut t = (s, 1u32);
    t.1 += 2;
    out[i] = acc[0] + m[1][0] + w[i % 3] + s + c + t.1 as f32 + t.0 + [1.0f32; 3][1];
}"#,
    );
    assert!(w.contains("array<f32, 4>"), "{w}");
    println!("{w}");
}

fn wgsl_with(attr: &str, src: &str, helpers: &[&str]) -> String {
    compiled(attr, src, helpers).info.wgsl().to_string()
}

#[test]
fn tuple_returning_helper() {
    let w = wgsl_with(
        "workgroup_size = 64",
        "fn k(a: &[f32], out: &mut [f32]) { let i = global_id().x; let (s, c) = split(a[i]); let arr = halves([a[i]; 2]); out[i] = s * c + arr[1]; }",
        &["fn split(x: f32) -> (f32, f32) { (x.sin(), x.cos()) }", "fn halves(v: [f32; 2]) -> [f32; 2] { [v[0] / 2.0, v[1] / 2.0] }"],
    );
    println!("{w}");
}

#[test]
fn integer_match() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(a: &[i32], out: &mut [i32]) {
    let i = global_id().x;
    let x = a[i];
    let y = match x {
        0 => 10,
        1 | 2 => 20,
        -3 => 30,
        n => n * 2,
    };
    let z = match i { 0..=3 => 1, 4..8 => 2, _ => 3 };
    for j in 0..4u32 {
        match j {
            2 => continue,
            3 => break,
            _ => {}
        }
        out[i] += 1;
    }
    match y { 20 => { out[i] = 0; } _ => {} }
    out[i] += y + z;
}"#,
    );
    assert!(w.contains("switch"), "{w}");
    println!("{w}");
}

#[test]
fn exact_ranges() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(out: &mut [u32], n: u32) {
    let i = global_id().x;
    let mut s = 0u32;
    for j in (0..n).rev() { s += j; }
    for j in (1..=n).rev() { s += j; }
    for j in (4294967290u32..=u32::MAX) { s += j; }
    for j in (0..n).step_by(3) { s += j; }
    for j in (-5..=5i32).step_by(2) { s += j as u32; }
    out[i] = s;
}"#,
    );
    assert!(w.contains("break if"), "{w}");
    println!("{w}");
}

#[test]
fn methods_users_reach_for() {
    let w = wgsl(
        "workgroup_size = 64",
        r#"
fn k(a: &[f32], b: &[i32], out: &mut [u32]) {
    let i = global_id().x;
    let x = a[i];
    let n = b[i];
    let mut r = 0u32;
    if x.is_nan() { r += 1; }
    if x.is_finite() { r += 2; }
    if x.is_infinite() { r += 4; }
    r += x.to_bits() ^ f32::from_bits(7u32).to_bits();
    r += n.wrapping_div(3).wrapping_rem(2).wrapping_neg().wrapping_abs() as u32;
    r += n.rem_euclid(5) as u32 + (x.rem_euclid(2.0) as u32) + n.abs_diff(-4);
    r += (n.rotate_left(3) as u32).rotate_right(5) + u32::from(x > 0.0);
    r += std::cmp::min(r, 10) + std::cmp::max(3u32, r) + x.cbrt() as u32;
    for j in (0..4u32).rev() { r += j; }
    out[i] = r;
}"#,
    );
    println!("{w}");
}

#[test]
fn constants_in_the_body() {
    let w = wgsl(
        "workgroup_size = 16",
        r#"
fn k(a: &[f32], out: &mut [f32]) {
    const TILE: usize = 16;
    const HALF: usize = TILE / 2;
    const SCALE: f32 = 0.5 * 3.0;
    const NEG: i32 = -(1 << 4);
    let tile = shared::<[[f32; TILE + 1]; TILE]>();
    let mut acc = [0.0; HALF];
    let t = thread_id().x;
    tile[t][t + 1] = a[global_id().x] * SCALE;
    workgroup_barrier();
    for j in 0..HALF { acc[j] = tile[j][t] + NEG as f32; }
    out[global_id().x] = acc[HALF - 1] + acc.len() as f32;
}"#,
    );
    assert!(w.contains("array<array<f32, 17>, 16>"), "{w}");
    // `acc` of `HALF` elements, indexed only in an unrolled loop: eight
    // variables (`onekernel-abi/src/specialise.rs`).
    assert!(w.contains("var acc_7_: f32;") && !w.contains("acc_8_"), "{w}");
    println!("{w}");
}

#[test]
fn vector_add_expands() {
    let item: syn::ItemFn = syn::parse_str(
        "fn vector_add(a: &[f32], b: &[f32], out: &mut [f32]) { let i = global_id().x; if i < out.len() { out[i] = a[i] + b[i]; } }",
    )
    .unwrap();
    let k = compile("workgroup_size = 64".parse().unwrap(), &item, &[]).unwrap();
    let tokens = onekernel_compiler::expand::expand_kernel(&item, &k);
    println!("{tokens}");
}

/// Constant shifts and negations that Rust defines by wrapping are folded
/// as Rust computes them: WGSL rejects them as constant expressions
/// (`2147483647i << 19u` overflows, `-(-2147483648i)` too), so emitting
/// them unfolded made naga's WGSL fail to re-parse (found by the
/// differential fuzzer, tests/differential).
#[test]
fn overflowing_constant_shifts_and_negations_compile() {
    let item: syn::ItemFn = syn::parse_str(
        "fn k(out: &mut [i32]) { out[0] = (2147483647i32 << 19) ^ i32::MIN.wrapping_neg() ^ (6i32 << 0); }",
    )
    .unwrap();
    let compiled = onekernel_compiler::compile("workgroup_size = 64".parse().unwrap(), &item, &[]);
    let compiled = compiled.unwrap_or_else(|e| panic!("{}", e.iter().map(|d| d.to_string()).collect::<String>()));
    // The value the CPU computes, as one literal.
    let want = (2147483647i32 << 19) ^ i32::MIN.wrapping_neg() ^ 6;
    assert!(compiled.info.wgsl().contains(&format!("{want}i")), "{}", compiled.info.wgsl());
}

/// Found by the differential fuzzer (tests/differential): an expression
/// of constants whose value is infinite or NaN is valid Rust (`0.5 / 0.0`
/// is infinity, even in a branch never taken), and so are a shift of a
/// constant that drops bits (`21u32.max(65536u32) << 25`) and an integer
/// division by a constant zero in code never run, but WGSL's constant
/// evaluation rejects each of them ("Float literal is infinite", "sqrt
/// built-in function argument is out of valid range", "<< operation
/// overflowed", "Division by zero"). The lowering now keeps them out of
/// constant evaluation (`lower/const_reject.rs`); the values are checked
/// on the CPU and the GPU by the language suite (`rejected_constants`).
#[test]
fn constant_expressions_wgsl_rejects_compile() {
    for body in [
        "out[0] = if out.len() > 9 { 0.5f32 / 0.0f32 } else { 1.0 };",
        "out[0] = (-1.75f32).ceil().sqrt();",
        "out[0] = (21u32.max(65536u32) << 25) as f32;",
        "if out.len() > 9 { out[1] = (3 / (false as i32)) as f32; }",
    ] {
        let item: syn::ItemFn = syn::parse_str(&format!("fn k(out: &mut [f32]) {{ {body} }}")).unwrap();
        let r = onekernel_compiler::compile("workgroup_size = 64".parse().unwrap(), &item, &[]);
        assert!(r.is_ok(), "{body}: {}", r.err().unwrap().iter().map(|d| d.to_string()).collect::<String>());
    }
}

/// Local arrays too large for a GPU type (naga panics past 4 GiB) are one
/// spanned error each, also when only nested arrays together are too large.
#[test]
fn oversized_local_arrays_are_errors() {
    for src in [
        "fn k(out: &mut [f32]) { let t = [[0.0f32; 4294967295u32]; 4]; out[0] = t[0][0]; }",
        "fn k(out: &mut [f32]) { let t = [[0.0f32; 65536]; 65536]; out[0] = t[0][0]; }",
        "fn k(out: &mut [f32]) { let t: [[f32; 65536]; 65536] = [[0.0; 65536]; 65536]; out[0] = t[0][0]; }",
    ] {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        let errors = compile("workgroup_size = 64".parse().unwrap(), &item, &[]).err().expect(src);
        assert!(errors.iter().all(|d| d.to_string().contains("is too large for a kernel")), "{src}: {errors:?}");
    }
}

/// A generic kernel compiles once per type of its bound; its generics'
/// problems are one error each.
#[test]
fn generic_kernels() {
    use onekernel_compiler::parse::generic_param;
    let item: syn::ItemFn = syn::parse_str(
        "fn k<T>(a: &[T], out: &mut [T]) where T: onekernel::num::Float { out[0] = -a[0].sqrt() + T::ONE; }",
    )
    .unwrap();
    let param = generic_param(&item.sig).unwrap().expect("generic");
    assert_eq!(param.name, "T");
    let kernel = onekernel_compiler::Kernel {
        attr: "workgroup_size = 64".parse().unwrap(),
        item: item.clone(),
        module: Default::default(),
    };
    let instances = onekernel_compiler::compile_kernel(&kernel, &[], &Default::default())
        .unwrap_or_else(|e| panic!("{:?}", e.iter().map(|d| d.to_string()).collect::<Vec<_>>()));
    let names: Vec<_> = instances.iter().map(|c| c.info.name.to_string()).collect();
    assert_eq!(names, ["k::<f32>", "k::<f64>"]);
    assert!(instances[0].info.wgsl().contains("array<f32>") && instances[0].info.wgsl().contains(" + 1f)"));
    assert!(instances[1].info.wgsl().contains("array<f64>") && instances[1].info.wgsl().contains(" + 1.0lf)"));
    // `compile` alone compiles the first type of the bound.
    assert_eq!(compile("workgroup_size = 64".parse().unwrap(), &item, &[]).unwrap().info.name, "k::<f32>");

    for (src, errors) in [
        ("fn k<T: Num + Float>(a: &[T]) {}", 1),
        ("fn k<T: Num>(a: &[T]) where U: Num {}", 1),
        ("fn k<T: Num, U: Int, V>(a: &[T]) {}", 2),
        ("fn k<T: Num = f32>(a: &[T]) {}", 1),
        ("fn k<T: ?Sized + Num>(a: &[T]) {}", 1),
        ("fn k<const N: u64>(a: &[f32]) {}", 1),
        ("fn k<const N: u32 = 4, const B: bool>(a: &[f32]) {}", 2),
    ] {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        let got = generic_param(&item.sig).expect_err(src);
        assert_eq!(got.len(), errors, "{src}: {:?}", got.iter().map(|d| d.to_string()).collect::<Vec<_>>());
        // The whole compile reports them and does not panic.
        assert!(compile("workgroup_size = 64".parse().unwrap(), &item, &[]).is_err(), "{src}");
    }
}

/// Const parameters are `override`s of the one module, by id in order
/// (after the checked modules' loop budget, id 0), with SPIR-V per
/// specialisation only; constants of the kernel's scope follow them, typed
/// from their uses.
#[test]
fn const_parameters_are_overrides() {
    use onekernel_compiler::parse::generic_param;
    let item: syn::ItemFn = syn::parse_str(
        "fn k<T: Float, const N: u32, const S: i32>(a: &[T], out: &mut [T]) { let i = global_id().x; if i < a.len() { out[i] = a[i] + T::ONE; let _k = N as i32 + S * (BLOCK as i32); } }",
    )
    .unwrap();
    assert!(generic_param(&item.sig).unwrap().is_some(), "the type parameter is still the generic one");
    let c = compile("workgroup_size = 64".parse().unwrap(), &item, &[]).unwrap_or_else(|e| {
        panic!("{:?}", e.iter().map(|d| format!("{d} at {:?}", d.span.source_text())).collect::<Vec<_>>())
    });
    let names: Vec<_> = c.info.consts.params.iter().map(|p| (p.name.to_string(), p.id, p.generic)).collect();
    assert_eq!(names, [("N".into(), 1, true), ("S".into(), 2, true), ("BLOCK".into(), 3, false)]);
    for decl in ["@id(1) override N: u32;", "@id(2) override S: i32;", "@id(3) override BLOCK: i32;"] {
        assert!(c.info.wgsl().contains(decl), "{decl} in\n{}", c.info.wgsl());
        let checked = &c.info.module(onekernel_abi::ModuleKey::CHECKED).expect("a checked module").wgsl;
        assert!(checked.contains(decl), "{decl} in the checked module");
    }
    assert!(c.info.spirv().is_empty());
    let values = [4.0, -1.0, 256.0];
    let params = &c.info.consts.params;
    let words = onekernel_compiler::emit::specialised_spirv(c.info.wgsl(), params, &values).unwrap();
    assert_eq!(words[0], 0x0723_0203, "SPIR-V magic");
    // A missing value is an error, not a panic.
    assert!(onekernel_compiler::emit::specialised_spirv(c.info.wgsl(), params, &values[..2]).is_err());
}

/// What the tools show of a specialisation (`specialise`): values parsed as
/// the overrides' types, every override a `const` of its value (extreme
/// values included), the module still valid, bad input an `Err`.
#[test]
fn specialisations_for_the_tools() {
    use onekernel_abi::ConstType;
    use onekernel_compiler::specialise;
    let item: syn::ItemFn = syn::parse_str(
        "fn k<const N: u32, const S: i32>(a: &[f32], out: &mut [f32]) { let i = global_id().x; if i < a.len() && FLAG { out[i] = a[i] * SCALE + (N as f32) - (S as f32); } }",
    )
    .unwrap();
    let c = compile("workgroup_size = 64".parse().unwrap(), &item, &[]).unwrap_or_else(|e| panic!("{}", e[0]));
    let params = &c.info.consts.params;
    let pairs = |s: &[(&str, &str)]| s.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>();
    let given = pairs(&[("S", "-2147483648"), ("N", "4294967295"), ("SCALE", "1e-3"), ("FLAG", "true")]);
    let values = specialise::values("k", params, &given).unwrap();
    let shown = specialise::kernel(&c.info, &values).unwrap();
    let wgsl = shown.wgsl();
    for decl in [
        "const N: u32 = 4294967295u;",
        "const S: i32 = i32(-2147483648);",
        "const SCALE: f32 = 0.001f;",
        "const FLAG: bool = true;",
    ] {
        assert!(wgsl.contains(decl), "{decl} in\n{wgsl}");
    }
    assert!(!wgsl.contains("override N") && !shown.spirv().is_empty(), "{wgsl}");
    let checked = &shown.module(onekernel_abi::ModuleKey::CHECKED).unwrap().wgsl;
    assert!(checked.contains("override loop_budget") && checked.contains("const N: u32"), "{checked}");
    assert_eq!(shown.consts.values.len(), 4);
    // Bad input: each an error that says what is wrong.
    for (given, want) in [
        (pairs(&[("N", "1"), ("S", "1"), ("SCALE", "1"), ("FLAG", "yes")]), "is not a `bool`"),
        (pairs(&[("N", "1"), ("S", "1"), ("SCALE", "inf"), ("FLAG", "true")]), "is not a finite `f32`"),
        (pairs(&[("N", "1"), ("T", "1")]), "it has: N: u32, S: i32, FLAG: bool, SCALE: f32"),
        (pairs(&[("N", "1")]), "missing: `S`, `FLAG`, `SCALE`"),
    ] {
        let e = specialise::values("k", params, &given).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
    assert_eq!(specialise::parse_value(ConstType::Usize, "1_024"), Ok(1024.0));
    assert!(specialise::parse_value(ConstType::U32, "-1").is_err());
}

/// The tools show a kernel whose parameters size arrays and the workgroup
/// (an override-sized local array is WGSL only once specialised): each
/// length and size the value, the module valid, its SPIR-V written; a
/// tuple that cannot run is an error naming the parameter.
#[test]
fn specialisations_of_sizes_for_the_tools() {
    use onekernel_compiler::specialise;
    let item: syn::ItemFn = syn::parse_str(
        "fn k<const TM: usize, const B: u32>(a: &[f32], out: &mut [f32]) { let t = shared::<[f32; TM]>(); let mut acc = [[0.0f32; TM]; 4]; let i = global_id().x; t[thread_id().x % TM] = 1.0; workgroup_barrier(); if i < a.len() { acc[0][i % TM] = a[i] + t[0]; out[i] = acc[0][i % acc[0].len()] + SCALE; } }",
    )
    .unwrap();
    let c = compile("workgroup_size = (B, 2)".parse().unwrap(), &item, &[]).unwrap_or_else(|e| panic!("{}", e[0]));
    let wgsl = c.info.wgsl();
    for text in ["var<workgroup> t: array<f32, TM>;", "var acc_0_: array<f32, TM>;", "@workgroup_size(B, 2, 1)"] {
        assert!(wgsl.contains(text), "{text} in\n{wgsl}");
    }
    assert_eq!(c.info.workgroup_size, [0, 2, 1]);
    assert_eq!(c.info.consts.workgroup_size, [Some(1), None, None]);
    assert_eq!(c.info.consts.arrays.len(), 2, "{:?}", c.info.consts.arrays);
    let given: Vec<(String, String)> =
        [("TM", "8"), ("B", "32"), ("SCALE", "2")].iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    let values = specialise::values("k", &c.info.consts.params, &given).unwrap();
    let shown = specialise::kernel(&c.info, &values).unwrap();
    assert!(shown.wgsl().contains("const TM: u32 = 8u;") && !shown.spirv().is_empty(), "{}", shown.wgsl());
    assert_eq!(shown.workgroup_size, [32, 2, 1]);
    assert_eq!(shown.workgroup_memory_words, 8);
    let zero = specialise::kernel(&c.info, &[0.0, 32.0, 2.0]).unwrap_err();
    assert!(zero.contains("`TM` = 0"), "{zero}");
}

/// A problem of one type of the bound says which instantiation it is in.
#[test]
fn generic_kernel_error_of_one_type() {
    // 3000 elements: 12000 bytes of `f32`, 24000 of `f64` (over 16384).
    let item: syn::ItemFn = syn::parse_str(
        "fn k<T: Num>(out: &mut [T]) { let tile = shared::<[T; 3000]>(); tile[0] = T::ONE; out[0] = tile[0]; }",
    )
    .unwrap();
    let kernel =
        onekernel_compiler::Kernel { attr: "workgroup_size = 64".parse().unwrap(), item, module: Default::default() };
    let errors = onekernel_compiler::compile_kernel(&kernel, &[], &Default::default()).err().expect("f64 does not fit");
    assert_eq!(errors.len(), 1);
    let text = format!("{:?}", errors[0]);
    assert!(text.contains("24000 bytes") && text.contains("in `k::<f64>`"), "{text}");
}

/// A kernel whose `f16` values are only conversions and named expressions
/// (no `f16` buffer, parameter or variable) still enables `f16` in its
/// WGSL, which otherwise does not parse.
#[test]
fn f16_only_in_expressions_is_enabled() {
    let k = compiled(
        "workgroup_size = 64",
        "fn k(x: &[f32], out: &mut [f32]) { let i = global_id().x; if i < out.len() { let h = f16::from_f32(x[i]); out[i] = h.to_f32(); } }",
        &[],
    );
    assert!(k.info.wgsl().starts_with("enable f16;"), "{}", k.info.wgsl());
    assert!(k.info.features.contains(onekernel_abi::Features::F16));
}
