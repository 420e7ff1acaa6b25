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

/// Usage errors: exit status 2, with the usage line.
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
    ] {
        let (code, stdout, stderr) = cli(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty() && stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
    let (_, _, stderr) = cli(&["explain", "examples/vector_add.rs", "--emit", "llvm"]);
    insta::assert_snapshot!("usage_bad_emit", stderr);
}

/// The library's argument parser.
#[test]
fn parses_arguments() {
    let args: Vec<String> =
        ["explain", "f.rs", "--kernel=k", "--emit", "spirv-asm"].iter().map(|s| s.to_string()).collect();
    let a = onekernel_cli::parse_args(&args).unwrap();
    assert_eq!(
        a,
        onekernel_cli::Args { file: "f.rs".into(), kernel: Some("k".into()), emit: onekernel_cli::Emit::SpirvAsm }
    );
}
