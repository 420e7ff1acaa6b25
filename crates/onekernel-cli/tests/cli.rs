//! `onekernel-cli`, run as a binary over the examples and over bad inputs:
//! its output (snapshots) and its exit status.

use std::process::Command;

/// Runs the binary from the workspace root; (exit status, stdout, stderr).
fn cli(args: &[&str]) -> (i32, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO_BIN_EXE_onekernel")).args(args).current_dir(root).output().expect("runs");
    let text = |b: Vec<u8>| String::from_utf8(b).expect("UTF-8");
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

fn ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = cli(args);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    stdout
}

#[test]
fn vector_add_every_emit() {
    for emit in ["explain", "wgsl", "spirv", "spirv-asm", "naga", "bindings"] {
        let out = ok(&["explain", "examples/vector_add.rs", "--emit", emit]);
        insta::assert_snapshot!(format!("vector_add_{emit}"), out);
    }
    // `explain` is the default.
    assert_eq!(
        ok(&["explain", "examples/vector_add.rs"]),
        ok(&["explain", "examples/vector_add.rs", "--emit=explain"])
    );
}

#[test]
fn cooperation_kernels() {
    for emit in ["explain", "wgsl", "bindings"] {
        let out = ok(&["explain", "tests/cooperation/kernels.rs", "--emit", emit]);
        insta::assert_snapshot!(format!("cooperation_{emit}"), out);
    }
    let one = ok(&["explain", "tests/cooperation/kernels.rs", "--kernel", "block_sum", "--emit", "spirv-asm"]);
    assert!(one.contains("OpEntryPoint GLCompute") && one.contains("\"block_sum\""), "{one}");
    assert!(!one.contains("===="), "one kernel, no headers");
}

/// A generic kernel: every instantiation, each under its own header.
#[test]
fn generic_kernel_every_instantiation() {
    let out = ok(&["explain", "examples/axpy.rs", "--emit", "wgsl"]);
    let headers: Vec<&str> = out.lines().filter(|l| l.starts_with("// ==== kernel")).collect();
    let want: Vec<String> = ["f32", "i32", "u32", "f16", "f64", "i64", "u64"]
        .iter()
        .map(|t| format!("// ==== kernel `axpy::<{t}>` ===="))
        .collect();
    assert_eq!(headers, want, "{out}");
    assert!(out.contains("array<f16>") && out.contains("enable f16;") && out.contains("array<u64>"), "{out}");
    let explain = ok(&["explain", "examples/axpy.rs", "--kernel", "axpy"]);
    assert_eq!(explain.matches("y[i] = a * x[i] + y[i];").count(), 7, "{explain}");
}

/// Kernel errors: rendered like rustc's, exit status 1.
#[test]
fn bad_inputs() {
    for file in [
        "tests/ui/fail/closure.rs",
        "tests/ui/fail/attr_unknown_key.rs",
        "tests/ui/fail/helper_recursion_mutual.rs",
        "tests/ui/fail/buffer_passed_to_helper.rs",
        "crates/onekernel-cli/tests/fixtures/syntax_error.rs",
    ] {
        let (code, stdout, stderr) = cli(&["explain", file]);
        assert_eq!(code, 1, "{file}: {stderr}");
        assert!(stdout.is_empty(), "{file}: {stdout}");
        let name = file.rsplit('/').next().unwrap().trim_end_matches(".rs");
        insta::assert_snapshot!(format!("error_{name}"), stderr);
    }
}

/// Requests that cannot be carried out: exit status 2, and one line that
/// says why.
#[test]
fn usage_errors() {
    for args in [
        &[][..],
        &["explain"][..],
        &["build", "x.rs"][..],
        &["explain", "examples/vector_add.rs", "--emit", "llvm"][..],
        &["explain", "examples/vector_add.rs", "--kernel"][..],
        &["explain", "examples/vector_add.rs", "--kernel", "nope"][..],
        &["explain", "no/such/file.rs"][..],
        &["explain", "crates/onekernel-cli/tests/fixtures/no_kernels.rs"][..],
        &["explain", "tests/cooperation/kernels.rs", "--emit", "spirv", "-o", "/tmp/onekernel-cli-two.spv"][..],
    ] {
        let (code, stdout, stderr) = cli(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        // No arguments at all: the help, as cargo does.
        let what = if args.is_empty() { "Usage: onekernel <COMMAND>" } else { "error: " };
        assert!(stdout.is_empty() && stderr.contains(what), "{args:?}: {stderr}");
    }
    let (_, _, stderr) = cli(&["explain", "examples/vector_add.rs", "--emit", "llvm"]);
    insta::assert_snapshot!("usage_bad_emit", stderr);
}

/// `--help`, `-h`, `--version` and `explain --help`, as any Rust CLI: exit
/// status 0, text on standard output.
#[test]
fn help_and_version() {
    let top = ok(&["--help"]);
    assert!(top.contains("Usage: onekernel <COMMAND>") && top.contains("explain"), "{top}");
    assert!(top.contains("Exit status"), "{top}");
    assert_eq!(ok(&["-h"]).lines().next(), top.lines().next());
    assert_eq!(ok(&["--version"]).trim(), format!("onekernel {}", env!("CARGO_PKG_VERSION")));
    let explain = ok(&["explain", "--help"]);
    for kind in ["explain", "wgsl", "spirv", "spirv-asm", "naga", "bindings"] {
        assert!(explain.contains(kind), "{kind}: {explain}");
    }
    for flag in ["--kernel", "--emit", "--folded", "--checked", "--const", "--output"] {
        assert!(explain.contains(flag), "{flag}: {explain}");
    }
    insta::assert_snapshot!("help_explain", explain);
}

/// `-o FILE`: the binary SPIR-V of one kernel (a `.spv` file spirv-val
/// accepts), or any text output.
#[test]
fn writes_files() {
    let dir = std::env::temp_dir().join(format!("onekernel-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spv = dir.join("vector_add.spv");
    let out = ok(&[
        "explain",
        "examples/vector_add.rs",
        "--kernel",
        "vector_add",
        "--emit",
        "spirv",
        "-o",
        spv.to_str().unwrap(),
    ]);
    assert!(out.is_empty(), "{out}");
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "the SPIR-V magic number");
    let val = Command::new("spirv-val").arg("--target-env").arg("vulkan1.1").arg(&spv).output();
    let val = val.expect("spirv-val (from spirv-tools) is installed by .ci/run");
    assert!(val.status.success(), "{}", String::from_utf8_lossy(&val.stderr));
    let wgsl = dir.join("folded.wgsl");
    ok(&["explain", "examples/vector_add.rs", "--emit", "wgsl", "--folded", "-o", wgsl.to_str().unwrap()]);
    let text = std::fs::read_to_string(&wgsl).unwrap();
    assert!(text.contains("block_offset") && text.contains("num_workgroups"), "{text}");
    assert_ne!(text, ok(&["explain", "examples/vector_add.rs", "--emit", "wgsl"]));
    // Only the plain module has SPIR-V: no program reads another's.
    let (code, _, err) = cli(&["explain", "examples/vector_add.rs", "--emit", "spirv-asm", "--folded"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("only the plain module has SPIR-V"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A kernel of a `#[onekernel::kernels]` module sees the module's structs
/// and constants, in the tool as in the macro.
#[test]
fn kernels_module() {
    let out = ok(&["explain", "tests/integration/structs.rs", "--kernel", "step", "--emit", "wgsl"]);
    assert!(
        out.contains("struct Particle {") && out.contains("var<storage, read_write> ps: array<Particle>;"),
        "{out}"
    );
}

/// `--checked`: the module checked launches run, WGSL only.
#[test]
fn checked_module() {
    let checked = ok(&["explain", "examples/vector_add.rs", "--emit", "wgsl", "--checked"]);
    assert!(checked.contains("fn check_failed(") && checked.contains("check_report"), "{checked}");
    let both = ok(&["explain", "examples/vector_add.rs", "--emit", "wgsl", "--checked", "--folded"]);
    assert!(both.contains("check_failed(") && both.contains("block_offset"), "{both}");
    let (code, _, err) = cli(&["explain", "examples/vector_add.rs", "--checked"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("add `--emit wgsl`"), "{err}");
}

/// A helper in a sibling module file (`mod helpers;`) is found, as cargo
/// finds it.
#[test]
fn helpers_in_module_files() {
    let out = ok(&["explain", "crates/onekernel-cli/tests/fixtures/with_module/main.rs", "--emit", "wgsl"]);
    assert!(out.contains("fn twice("), "{out}");
}

/// Nesting 10,000 levels deep (each recursive form) is one error, exit
/// status 1, never a stack overflow; nesting at the limit compiles (the
/// tool compiles on a thread of the compiler's stack size).
#[test]
fn deep_nesting_is_an_error_not_an_abort() {
    let dir = std::env::temp_dir().join(format!("onekernel-cli-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kernel = |body: String| {
        format!("use onekernel::prelude::*;\n#[kernel(workgroup_size = 64)]\nfn k(a: &[f32], out: &mut [f32]) {{\n    {body}\n}}\n")
    };
    type Form = (&'static str, fn(usize) -> String);
    let forms: [Form; 6] = [
        ("parentheses", |n| format!("out[0] = {}a[0]{};", "(".repeat(n), ")".repeat(n))),
        ("blocks", |n| format!("{} out[0] = a[0]; {}", "{".repeat(n), "}".repeat(n))),
        ("else_if", |n| {
            format!("if a[0] > 0.0 {{ out[0] = 1.0; }} {}", "else if a[0] > 1.0 { out[0] = 2.0; } ".repeat(n))
        }),
        ("array", |n| format!("let v = {}a[0]{}; out[0] = 1.0;", "[".repeat(n), "]".repeat(n))),
        ("types", |n| format!("let v: {}f32{} = 0.0; out[0] = a[0];", "[".repeat(n), "; 1]".repeat(n))),
        ("sum", |n| format!("out[0] = a[0]{};", " + a[0]".repeat(n))),
    ];
    for (name, form) in forms {
        let file = dir.join(format!("{name}.rs"));
        std::fs::write(&file, kernel(form(10_000))).unwrap();
        let (code, stdout, stderr) = cli(&["explain", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stdout.is_empty(), "{name}");
        assert!(stderr.contains("due to 1 previous error"), "{name}: {stderr}");
        assert!(stderr.contains("nested too deep: more than 128 levels"), "{name}: {stderr}");
        // At the line of the kernel's body.
        assert!(stderr.contains(&format!("{name}.rs:4:")), "{name}: {stderr}");
    }
    // 100 levels of parentheses and 100 nested blocks compile.
    for (name, body) in [
        ("parens_100", format!("out[0] = {}a[0]{};", "(".repeat(100), ")".repeat(100))),
        ("blocks_100", format!("{} out[0] = a[0]; {}", "{".repeat(100), "}".repeat(100))),
    ] {
        let file = dir.join(format!("{name}.rs"));
        std::fs::write(&file, kernel(body)).unwrap();
        let out = ok(&["explain", file.to_str().unwrap(), "--emit", "wgsl"]);
        assert!(out.contains("@compute"), "{name}: {out}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--const NAME=VALUE`: every view shows the module specialised for the
/// values (each `override` a `const`), and the SPIR-V of that
/// specialisation; without values the WGSL keeps its `override`s and the
/// SPIR-V views say which `--const` they need.
#[test]
fn const_parameters() {
    let file = "tests/language/consts.rs";
    let plain = ok(&["explain", file, "--kernel", "const_affine", "--emit", "wgsl"]);
    assert!(plain.contains("@id(1) override N: u32;") && plain.contains("@id(2) override M: i32;"), "{plain}");
    let args = ["explain", file, "--kernel", "const_affine", "--const", "N=3", "--const", "M=-2"];
    let wgsl = ok(&[&args[..], &["--emit", "wgsl"]].concat());
    insta::assert_snapshot!("consts_wgsl_specialised", wgsl);
    assert!(wgsl.contains("const N: u32 = 3u;") && wgsl.contains("const M: i32 = -2i;"), "{wgsl}");
    assert!(!wgsl.contains("override N"), "{wgsl}");
    // Line for line the unspecialised module but for the declarations.
    let differ = plain.lines().zip(wgsl.lines()).filter(|(a, b)| a != b).count();
    assert_eq!((differ, plain.lines().count()), (2, wgsl.lines().count()), "{wgsl}");
    let explain = ok(&args);
    assert!(explain.starts_with("// Specialised: N = 3, M = -2"), "{explain}");
    assert!(explain.contains("const N: u32 = 3u;") && !explain.contains("override N"), "{explain}");
    let naga = ok(&[&args[..], &["--emit", "naga"]].concat());
    assert!(!naga.is_empty(), "{naga}");
    let asm = ok(&[&args[..], &["--emit", "spirv-asm"]].concat());
    assert!(asm.contains("OpEntryPoint GLCompute") && !asm.contains("no SPIR-V"), "{asm}");
    // Other values, other SPIR-V.
    let other =
        ok(&["explain", file, "--kernel", "const_affine", "--const", "N=4", "--const", "M=-2", "--emit", "spirv"]);
    assert_ne!(other, ok(&[&args[..], &["--emit", "spirv"]].concat()));
    // The specialised module passes spirv-val.
    let dir = std::env::temp_dir().join(format!("onekernel-cli-consts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spv = dir.join("const_affine.spv");
    ok(&[&args[..], &["--emit", "spirv", "-o", spv.to_str().unwrap()]].concat());
    let val = Command::new("spirv-val").arg("--target-env").arg("vulkan1.1").arg(&spv).output().expect("spirv-val");
    assert!(val.status.success(), "{}", String::from_utf8_lossy(&val.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
    // Constants of a plain kernel's scope, each of its type; the checked
    // module keeps its own `loop_budget` override.
    let scope = [
        "explain",
        file,
        "--kernel",
        "scope_constants",
        "--emit",
        "wgsl",
        "--const",
        "REPEAT=4",
        "--const",
        "OFFSET=0.25",
        "--const",
        "NEGATE=false",
        "--const",
        "STEP=2",
    ];
    let out = ok(&scope);
    for decl in ["const REPEAT: i32 = 4i;", "const OFFSET: f32 = 0.25f;", "const NEGATE: bool = false;"] {
        assert!(out.contains(decl), "{decl}: {out}");
    }
    let checked = ok(&[&scope[..], &["--checked"]].concat());
    assert!(checked.contains("override loop_budget") && checked.contains("const STEP: i32 = 2i;"), "{checked}");
    // Each instantiation of a generic kernel.
    let generic = ok(&["explain", file, "--kernel", "generic_strided", "--const", "STRIDE=4", "--emit", "spirv-asm"]);
    assert!(generic.matches("OpEntryPoint").count() > 1, "{generic}");
}

/// `--const` errors: exit status 2 and one message that names the
/// parameters (never a panic).
#[test]
fn const_parameter_errors() {
    let file = "tests/language/consts.rs";
    let k = ["explain", file, "--kernel", "const_affine"];
    let mut all = String::new();
    for extra in [
        &["--emit", "spirv"][..],
        &["--emit", "spirv-asm"][..],
        &["--const", "X=3"][..],
        &["--const", "N=-3", "--const", "M=1"][..],
        &["--const", "N=3", "--const", "M=1.5"][..],
        &["--const", "N=99999999999", "--const", "M=1"][..],
        &["--const", "N=3"][..],
    ] {
        let args = [&k[..], extra].concat();
        let (code, stdout, stderr) = cli(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty() && stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains("N: u32, M: i32") || stderr.contains("is not"), "{args:?}: {stderr}");
        all.push_str(&format!("$ {}\n{stderr}\n", extra.join(" ")));
    }
    // Not `NAME=VALUE`: clap's usage error.
    let (code, _, stderr) = cli(&[&k[..], &["--const", "N"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not `NAME=VALUE`"), "{stderr}");
    // A kernel without parameters.
    let (code, _, stderr) = cli(&["explain", "examples/vector_add.rs", "--const", "N=3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no kernel shown has const parameters"), "{stderr}");
    all.push_str(&format!("$ vector_add --const N=3\n{stderr}"));
    insta::assert_snapshot!("consts_errors", all);
}
