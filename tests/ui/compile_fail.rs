//! Compile-fail cases for `#[kernel]` / `#[helper]`: each must show one
//! clear error under the offending tokens. (Kernels that must compile are
//! the modules of `tests/integration/compiles/`: a trybuild pass case would
//! make trybuild build every dependency again, in full.)
//!
//! The `.stderr` files were written with rustc 1.95.0, pinned in
//! `rust-toolchain.toml` (rustc's rendering of errors changes between
//! releases). After changing a message, regenerate them with
//! `TRYBUILD=overwrite cargo test -p onekernel-ui-tests` and review the
//! result with `git diff tests/ui`: each failing case must still show one
//! clear error per problem, under the offending tokens.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("fail/*.rs");
}
