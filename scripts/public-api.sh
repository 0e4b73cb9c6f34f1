#!/usr/bin/env bash
# nodekit's public API (every feature) against the listing checked in as
# runtime/public-api.txt, so that every change to the API is deliberate.
#
#   scripts/public-api.sh           compare; on a difference, print it and fail
#   scripts/public-api.sh --bless   write the listing anew (after a change
#                                   made on purpose), to be committed with it
#
# The listing comes from rustdoc's JSON (tools/api-listing), which rustdoc
# writes only behind an unstable flag: RUSTC_BOOTSTRAP=1 lets the stable
# toolchain do it. The format changes between Rust releases; api-listing
# reads the one of the toolchain in rust-version's line (rustc 1.95) and
# names the mismatch otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
listing=runtime/public-api.txt
target=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

RUSTC_BOOTSTRAP=1 cargo rustdoc -q -p nodekit --lib --locked -- -Z unstable-options --output-format json
now=$(mktemp)
trap 'rm -f "$now"' EXIT
cargo run -q -p api-listing --locked -- "$target/doc/nodekit.json" > "$now"

if [ "${1:-}" = --bless ]; then
  cp "$now" "$listing"
  echo "public API: $listing written ($(wc -l < "$listing") items)"
elif diff -u "$listing" "$now"; then
  echo "public API: unchanged ($(wc -l < "$listing") items)"
else
  echo "public API: it differs from $listing (above: - the listing, + the code)." >&2
  echo "If the change is meant, run scripts/public-api.sh --bless and commit the listing." >&2
  exit 1
fi
