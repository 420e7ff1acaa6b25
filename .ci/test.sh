#!/usr/bin/env bash
# The project's test command, kept in one place (called by .ci/run, after
# .ci/env.sh has been sourced). Each step prints its time, so that the
# 15-minute budget of CI (all of .ci/run, on 2 cores) stays visible.
set -euo pipefail
export CARGO_TERM_COLOR=never
# As .ci/run (which compiled the tests this way): no incremental caches.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() {
    local name="$1" start=$SECONDS
    shift
    echo "==> $name"
    "$@"
    echo "    $name: $((SECONDS - start)) s"
}

# Habits the tools enforce (the allow-lists live in Cargo.toml's
# [workspace.lints]; a warning fails CI).
step "rustfmt" cargo fmt --all --check
step "clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
step "rustdoc" env RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --locked

step "tests" cargo test --workspace --locked

# Every publishable crate packages: its manifest is complete (description,
# license, repository, readme), its path dependencies carry versions, and its
# files are inside it. `--no-verify`: verifying compiles every packaged crate
# and the whole dependency tree again from scratch (23 minutes on 2 cores,
# more than CI's budget); run `cargo package --workspace` by hand before a
# release (it passed on 2026-12-01).
step "packaging" cargo package --workspace --exclude onekernel-playground --exclude onekernel-ui-tests --locked --allow-dirty --no-verify

# The README's demo, as a reader runs it (`cargo run --release --example
# vector_add`, and the quick start), but in the debug profile: `cargo test
# --workspace` above built both examples, so this compiles nothing and takes
# seconds (`--release` would compile the whole dependency tree again). They
# are built with `--workspace` and run from target/: a plain `cargo run
# --example` resolves the root package's features alone, a different set
# from the workspace's, and compiled the dependencies again (122 s). The demo must
# get the GPU (lavapipe here), and the quick start's SPIR-V file must be
# valid (the README disassembles it).
demo() {
    local out bin
    cargo build --workspace --locked --example vector_add --example quick_start
    bin="${CARGO_TARGET_DIR:-target}/debug/examples"
    out="$("$bin/vector_add")"
    echo "    $(tail -n 1 <<<"$out")"
    if ! grep -q "agrees bit for bit on the GPU, the CPU executor and plain Rust" <<<"$out"; then
        echo "error: the demo did not run on the GPU:" >&2
        echo "$out" >&2
        return 1
    fi
    rm -f vector_add.spv
    "$bin/quick_start" >/dev/null
    spirv-val vector_add.spv
    rm vector_add.spv
}
step "demo" demo

# The CPU executor's unsafe code under AddressSanitizer (.ci/asan.sh: the
# runtime's CPU tests, built with nightly). `.ci/run` starts its build at
# the lowest priority while apt installs and the tests build, so that it
# mostly takes cycles they leave idle; here cargo waits for that build (the
# build directory's lock) and runs the tests. `ONEKERNEL_CI_ASAN=0` skips
# the step (quick local runs; CI always runs it).
if [ "${ONEKERNEL_CI_ASAN:-1}" = 1 ]; then
    step "asan" bash .ci/asan.sh
else
    echo "==> asan: skipped (ONEKERNEL_CI_ASAN=0)"
fi

# The book: every chapter's code is included from the examples tested above
# (`rust,ignore` blocks); the tests check that its chapters and includes
# resolve. Built here when mdbook is installed (`cargo install mdbook`).
if command -v mdbook >/dev/null; then
    step "book" mdbook build docs/book
else
    echo "==> book: mdbook not installed; chapters and includes checked by tests/integration/doc_snippets.rs"
fi
