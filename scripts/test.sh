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

# One rustdoc run, every feature on, both checks the docs (their links and
# HTML, warnings denied) and lists the public API.
section "docs and public API"
scripts/public-api.sh

section "crate graph"
scripts/crate-graph.py

# The crates as crates.io would take them (nothing is uploaded): each
# packaged, and each package checked to hold every file the lints'
# build of its library read.
section "packages"
scripts/packages.sh

section "services (PostgreSQL, PostgreSQL with pgvector, Redis)"
if services=$(scripts/services.sh); then
  eval "$services"
elif [ "${CI:-}" = true ]; then
  echo "services: the servers could not be started; CI needs them" >&2
  exit 1
else
  echo "services: PostgreSQL or Redis could not be started; the tests that need them will skip" >&2
fi

# nodekit's features: authoring alone, then each feature alone, so that no
# combination a user picks breaks unseen (the workspace build has them all).
# The library alone each time (and with authoring alone its tests): the
# tests are linted and run in the workspace build, where every feature is
# on. The first failure stops the check.
# host-features, beside each, keeps syn's features (and so the proc
# macros) the same in every check.
check_features() {
  local lint=(cargo clippy -p host-features --no-default-features --lib --locked)
  # Authoring alone: the library and its tests (which the workspace's run
  # runs with every feature).
  "${lint[@]}" -p nodekit --tests -- -D warnings || return 1
  for feature in openai anthropic gemini ollama agent tiktoken sqlite postgres redis \
    sql-tools-sqlite sql-tools-postgres agent-memory-sqlite agent-memory-postgres \
    vector-store-sqlite vector-store-postgres ann n8n mcp-server mcp-client serve; do
    echo "-- nodekit with --features $feature (at ${SECONDS} s)"
    "${lint[@]}" -p nodekit --features "nodekit/$feature" -- -D warnings || return 1
  done
  # An outside program's command line: alone, and with `mcp serve` (as
  # `nodekit new` makes it).
  for features in nodekit-nodes/cli nodekit-nodes/cli,nodekit-nodes/mcp-server; do
    echo "-- nodekit-nodes with --features $features (at ${SECONDS} s)"
    "${lint[@]}" -p nodekit-nodes --bins --features "$features" -- -D warnings || return 1
  done
}

# The authoring guide's example (the example's `weather` program) needs
# its `cli` feature; in the same run it reuses every crate the other tests
# built.
section "building the tests"
tests=(cargo test --workspace --features custom-nodes/cli --locked)
"${tests[@]}" --no-run

# The tests mostly wait on their databases and leave about half of the two
# cores idle. The features' lints and trybuild's cases (the `ui` test,
# compiled by a cargo of its own in a target directory of its own) use that
# time, at a lower priority so that the tests' own timing is as when alone.
# Cargo holds the build directory only until the tests start running, so
# the lints wait for that. The lints print as they go; the tests' and
# trybuild's reports are printed when the lints are done.
logs=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT
"${tests[@]}" --no-fail-fast -- --exact --skip compile_fail_cases >"$logs/tests" 2>&1 &
tests_pid=$!
until grep -q '^     Running ' "$logs/tests" || ! kill -0 "$tests_pid" 2>/dev/null; do sleep 0.2; done
nice -n 10 "${tests[@]}" --test ui >"$logs/ui" 2>&1 &
ui=$!
failed=0

section "features, beside the tests"
(renice -n 10 -p "$BASHPID" >/dev/null && check_features) || failed=1

section "tests (run beside the features' lints)"
wait "$tests_pid" || failed=1
cat "$logs/tests"

section "trybuild's cases (checked beside the tests above)"
wait "$ui" || failed=1
cat "$logs/ui"

if [ "$failed" = 1 ]; then
  echo "== failed after ${SECONDS} s" >&2
  exit 1
fi
echo "== done in ${SECONDS} s"
