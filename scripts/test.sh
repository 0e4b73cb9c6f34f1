#!/usr/bin/env bash
# Runs nodekit's whole test suite. Works on a fresh Debian machine that has
# only a Rust toolchain: whatever else the tests need is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== formatting"
cargo fmt --all -- --check

echo "== lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== services (PostgreSQL, PostgreSQL with pgvector, Redis)"
if services=$(scripts/services.sh); then
  eval "$services"
elif [ "${CI:-}" = true ]; then
  echo "services: the servers could not be started; CI needs them" >&2
  exit 1
else
  echo "services: PostgreSQL or Redis could not be started; the tests that need them will skip" >&2
fi

echo "== tests"
cargo test --workspace --locked
