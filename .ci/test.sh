#!/usr/bin/env bash
# The project's test command, kept in one place (called by .ci/run, after
# .ci/env.sh has been sourced). Each step prints its time, so that the
# 20-minute budget of CI on 2 cores stays visible.
set -euo pipefail
export CARGO_TERM_COLOR=never
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
step "packaging" cargo package --workspace --exclude onekernel-playground --locked --allow-dirty --no-verify

# The CPU executor's unsafe code (shared memory, output partitioning) under
# AddressSanitizer, with the nightly toolchain these machines have (Miri
# cannot be installed here): the runtime's CPU tests and the cooperation
# suite, whose kernels use shared memory, barriers and atomics.
asan() {
    if ! rustup run nightly rustc --version >/dev/null 2>&1; then
        echo "error: the AddressSanitizer step needs the nightly toolchain (rustup toolchain install nightly)" >&2
        return 1
    fi
    local target
    target="$(rustc -vV | sed -n 's/^host: //p')"
    # --target keeps the sanitizer out of build scripts and proc macros.
    RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" ASAN_OPTIONS=detect_leaks=0 \
        cargo +nightly test --locked --target "$target" --target-dir target/asan \
        -p onekernel-runtime --test integration -- cpu::
}
# About 3 minutes (the whole dependency tree again, with nightly): run by
# hand (`ONEKERNEL_CI_ASAN=1 bash .ci/test.sh`, or the command below) after
# changing the CPU executor; CI's 20 minutes no longer hold it.
if [ "${ONEKERNEL_CI_ASAN:-0}" = 1 ]; then
    step "asan" asan
else
    echo "==> asan: skipped (ONEKERNEL_CI_ASAN=1 runs it)"
fi

# The book: every chapter's code is included from the examples tested above
# (`rust,ignore` blocks); the tests check that its chapters and includes
# resolve. Built here when mdbook is installed (`cargo install mdbook`).
if command -v mdbook >/dev/null; then
    step "book" mdbook build docs/book
else
    echo "==> book: mdbook not installed; chapters and includes checked by tests/integration/doc_snippets.rs"
fi
