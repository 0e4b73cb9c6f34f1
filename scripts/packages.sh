#!/usr/bin/env bash
# nodekit's crates as crates.io would take them (nothing is uploaded):
# every publishable crate is packaged, and the library crates are then
# compiled from what their packages hold, all in one `cargo check`.
#
# That is cargo's own verification (`cargo package` without
# `--no-verify`) done once for all the crates: cargo verifies each package
# by building it on its own, with its own features, so that the
# dependencies they share were compiled again for each (over two minutes
# here). Checking them together resolves their features once and reuses
# what the workspace's lints checked. The crates that embed files (the
# agent memory's migrations, the n8n package's JavaScript) are checked
# with the features that embed them.
set -euo pipefail
cd "$(dirname "$0")/.."

libraries=(nodekit-rules nodekit-macros nodekit-vector-index nodekit-core nodekit-http nodekit-openai
  nodekit-db nodekit-history nodekit-vector-stores nodekit-sql nodekit-agent-memory nodekit-n8n
  nodekit-workflow nodekit-http-server nodekit-mcp nodekit-serve nodekit)
# The features each library is checked with, beyond its defaults.
declare -A features=(
  [nodekit-db]='"sqlite", "postgres"'
  [nodekit-history]='"sqlite", "postgres"'
  [nodekit-vector-stores]='"sqlite", "postgres"'
  [nodekit-sql]='"sqlite", "postgres"'
  [nodekit-agent-memory]='"sqlite", "postgres"'
  [nodekit-mcp]='"server", "client"'
)

packages=()
for name in "${libraries[@]}" nodekit-nodes; do packages+=(-p "$name"); done
cargo package "${packages[@]}" --no-verify --locked --offline

version=$(cargo pkgid -p nodekit --offline | sed 's/.*[@#]//')
target=$(cargo metadata --format-version 1 --no-deps --locked --offline \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
check="$target/package/check"
rm -rf "$check"
mkdir -p "$check"

# A crate of its own depends on every library by version, as on a
# registry, and every such dependency (its own and the packages' on each
# other) is patched to the copy unpacked from the package.
{
  echo '[package]'
  echo 'name = "packages"'
  echo 'version = "0.0.0"'
  echo 'edition = "2024"'
  echo 'publish = false'
  echo '[lib]'
  echo 'path = "lib.rs"'
  echo '[workspace]'
  # The workspace's dev profile, so that the lints' checks are reused.
  sed -n '/^\[profile\./,/^$/p' Cargo.toml
  echo '[dependencies]'
  for name in "${libraries[@]}"; do
    echo "$name = { version = \"=$version\", features = [${features[$name]:-}] }"
  done
  echo '[patch.crates-io]'
  for name in "${libraries[@]}"; do
    echo "$name = { path = \"$name-$version\" }"
  done
} > "$check/Cargo.toml"
: > "$check/lib.rs"
for name in "${libraries[@]}"; do
  tar -xzf "$target/package/$name-$version.crate" -C "$check"
done
# The workspace's lock, so that the dependencies are the versions tested.
cp Cargo.lock "$check/"

CARGO_TARGET_DIR="$target" cargo check --manifest-path "$check/Cargo.toml" --offline
