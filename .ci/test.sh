#!/usr/bin/env bash
# The project's test command, kept in one place (called by .ci/run, after
# .ci/env.sh has been sourced).
set -euo pipefail
export CARGO_TERM_COLOR=never
cargo test --workspace
