#!/usr/bin/env bash
# The project's test command, kept in one place (called by .ci/run, after
# .ci/env.sh has been sourced).
set -euo pipefail
export CARGO_TERM_COLOR=never
cargo test --workspace
# The book: every chapter's code is included from the examples tested above
# (`rust,ignore` blocks), so building it checks that every include resolves.
mdbook build docs/book
