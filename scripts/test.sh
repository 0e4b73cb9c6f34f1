#!/usr/bin/env bash
# Runs nodekit's whole test suite. Works on a fresh Debian machine that has
# only a Rust toolchain: whatever else the tests need is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it began, so a slow run shows where its time went.
section() { echo "== $1 (at ${SECONDS} s)"; }

# Every crate is compiled from scratch on a fresh clone: incremental
# compilation's bookkeeping would only slow that down.
export CARGO_INCREMENTAL=0
# numkong (usearch's distance kernels) compiles its C at -O3 whatever the
# profile: about 3.5 minutes of the lints' longest path on two cores. The
# tests check results, not speed, so their C is built at -O0, as debug
# builds build the other C dependencies (the later flag wins; the tests
# take as long as with -O3). Release builds and the benchmarks keep -O3.
export CFLAGS="${CFLAGS:+$CFLAGS }-O0"

section "formatting"
cargo fmt --all -- --check

section "lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

# nodekit's features: authoring alone, then each feature alone, so that no
# combination a user picks breaks unseen (the workspace build has them all).
# The library alone each time: the tests are linted in the workspace build,
# where every feature is on, and the authoring-only tests are built and run
# by the last step.
section "features"
cargo clippy -p nodekit --no-default-features --lib --locked -- -D warnings
for feature in openai agent tiktoken sqlite postgres redis \
  sql-tools-sqlite sql-tools-postgres agent-memory-sqlite agent-memory-postgres \
  vector-store-sqlite vector-store-postgres ann n8n mcp serve; do
  echo "-- nodekit with --features $feature"
  cargo clippy -p nodekit --no-default-features --features "$feature" --lib --locked -- -D warnings
done

section "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# The library crates as crates.io would take them (nothing is uploaded).
# All four are packaged; the three nodekit needs are also built from their
# packages, nodekit with authoring only: its features compile in the lints
# above, and a verified full build would redo every dependency (~4 min).
section "packages"
cargo package -p nodekit-rules -p nodekit-macros -p nodekit -p nodekit-nodes --no-verify --locked
cargo package -p nodekit-rules -p nodekit-macros -p nodekit --no-default-features --locked

section "services (PostgreSQL, PostgreSQL with pgvector, Redis)"
if services=$(scripts/services.sh); then
  eval "$services"
elif [ "${CI:-}" = true ]; then
  echo "services: the servers could not be started; CI needs them" >&2
  exit 1
else
  echo "services: PostgreSQL or Redis could not be started; the tests that need them will skip" >&2
fi

# The README's tour (the example's `weather` program) needs its `cli`
# feature; in the same run it reuses every crate the other tests built.
section "tests"
tests=(cargo test --workspace --features custom-nodes/cli --locked)
"${tests[@]}" --no-run

# trybuild's cases (the `ui` test) are compiled by a cargo of their own, in
# a target directory of their own, for about three minutes. The other tests
# mostly wait on their databases, so the cases are checked beside them and
# their report is printed at the end.
ui_log=$(mktemp)
"${tests[@]}" --test ui >"$ui_log" 2>&1 &
ui=$!
trap 'kill "$ui" 2>/dev/null || true; rm -f "$ui_log"' EXIT
failed=0
"${tests[@]}" --no-fail-fast -- --exact --skip compile_fail_cases || failed=1

section "tests of nodekit with authoring only"
cargo test -p nodekit --no-default-features --locked || failed=1

section "trybuild's cases (checked beside the tests above)"
wait "$ui" || failed=1
cat "$ui_log"

if [ "$failed" = 1 ]; then
  echo "== failed after ${SECONDS} s" >&2
  exit 1
fi
echo "== done in ${SECONDS} s"
