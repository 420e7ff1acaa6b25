#!/usr/bin/env bash
# The CPU executor's unsafe code (shared memory, output partitioning) under
# AddressSanitizer, with the nightly toolchain these machines have (Miri
# cannot be installed here): the runtime's CPU tests (its `cpu::` module;
# the cooperation suite's kernels, through the macro, would need the whole
# workspace built again with nightly). Without default features: the
# runtime's `inspect` (rspirv) is not needed by these tests.
#
#     bash .ci/asan.sh            # build and run (a step of .ci/test.sh)
#     bash .ci/asan.sh --no-run   # build only (.ci/run starts this early)
set -euo pipefail
export CARGO_TERM_COLOR=never
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "error: the AddressSanitizer step needs the nightly toolchain (rustup toolchain install nightly)" >&2
    exit 1
fi
target="$(rustc -vV | sed -n 's/^host: //p')"
# Not `scale_add_folded_grid`: on the CPU it is `scale_add_lengths` at 18
# million elements (the folding is the GPU's), and the slowest test under
# ASan (most of the step's test time); the CPU executor's code it runs is
# the same.
rest=(-- cpu:: --skip cpu::scale_add_folded_grid)
if [ "${1:-}" = --no-run ]; then rest=(--no-run); fi
# --target keeps the sanitizer out of build scripts and proc macros.
# naga unoptimised here (the workspace builds it at opt-level 3 for the
# specialisations of the GPU tests; the CPU tests run little of it): this
# build is a whole second dependency tree, and CI's time is its CPU time.
RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" ASAN_OPTIONS=detect_leaks=0 \
    exec cargo +nightly test --locked --target "$target" --target-dir target/asan \
    --config 'profile.dev.package.naga.opt-level=0' \
    -p onekernel-runtime --no-default-features --test integration "${rest[@]}"
