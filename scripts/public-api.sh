#!/usr/bin/env bash
# The public API of nodekit's library crates (every feature) against the
# listings checked in beside them (runtime/public-api.txt for nodekit,
# core/public-api.txt, ...), so that every change to an API is deliberate.
# What the facade re-exports from nodekit-core is listed in core's.
#
#   scripts/public-api.sh           compare; on a difference, print it and fail
#   scripts/public-api.sh --bless   write the listings anew (after a change
#                                   made on purpose), to be committed with them
#
# The listing comes from rustdoc's JSON (tools/api-listing), which rustdoc
# writes only behind an unstable flag: RUSTC_BOOTSTRAP=1 lets the stable
# toolchain do it. The format changes between Rust releases; api-listing
# reads the one of the toolchain in rust-version's line (rustc 1.95) and
# names the mismatch otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
now=$(mktemp)
trap 'rm -f "$now"' EXIT
failed=0

# One rustdoc run writes every crate's JSON (one resolution of features:
# a run per crate would build the dependencies again for each). rustdoc's
# lints run as for HTML, so the docs' broken links and HTML fail it here.
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="-D warnings -Z unstable-options --output-format json" \
  cargo doc -q --workspace --no-deps --lib --all-features --locked

# Each crate and the folder its listing is in.
for crate in nodekit:runtime nodekit-core:core nodekit-http:http nodekit-openai:openai nodekit-anthropic:anthropic nodekit-gemini:gemini nodekit-ollama:ollama nodekit-db:db \
  nodekit-history:history nodekit-vector-stores:vector-stores nodekit-vector-index:vector-index \
  nodekit-sql:sql nodekit-agent-memory:agent-memory nodekit-n8n:n8n \
  nodekit-workflow:workflow nodekit-http-server:http-server nodekit-mcp:mcp nodekit-serve:serve; do
  name=${crate%%:*}
  listing=${crate#*:}/public-api.txt
  cargo run -q -p api-listing --locked -- "$target/doc/${name//-/_}.json" > "$now"
  if [ "${1:-}" = --bless ]; then
    cp "$now" "$listing"
    echo "public API: $listing written ($(wc -l < "$listing") items)"
  elif diff -u "$listing" "$now"; then
    echo "public API of $name: unchanged ($(wc -l < "$listing") items)"
  else
    echo "public API of $name: it differs from $listing (above: - the listing, + the code)." >&2
    failed=1
  fi
done
if [ "$failed" = 1 ]; then
  echo "If the change is meant, run scripts/public-api.sh --bless and commit the listings." >&2
  exit 1
fi
