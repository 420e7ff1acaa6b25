//! Compile-fail and compile-pass cases for `#[kernel]` / `#[helper]`: each
//! failing case must show one clear error under the offending tokens.
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
