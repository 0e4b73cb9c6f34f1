#!/usr/bin/env bash
# Runs nodekit's whole test suite. Works on a fresh Debian machine that has
# only a Rust toolchain: whatever else the tests need is installed here.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== formatting"
cargo fmt --all -- --check

echo "== lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== tests"
cargo test --workspace --locked
