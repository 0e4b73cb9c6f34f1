#!/usr/bin/env bash
# nodekit's native Anthropic and Gemini clients against the official SDKs,
# all on 127.0.0.1. Run by hand: it installs the SDKs from PyPI (about
# 130 MB with their dependencies) into a scratch virtual environment
# (~/.cache/nodekit-provider-sdks, or $PROVIDER_SDKS_DIR).
#
# For two conversations (a system prompt, a tool call and its result, an
# image, tools, sampling settings and a stop sequence; then thinking with its
# signature sent back, cache breakpoints and structured output), the request
# bodies nodekit sends (the crates' `request_body` examples) must equal the
# ones the official `anthropic` and `google-genai` SDKs send to a recording
# server, up to key order (scripts/provider-sdks/compare.py).
#
# Needs Python 3 with venv (Debian: apt-get install python3-venv).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="${PROVIDER_SDKS_DIR:-$HOME/.cache/nodekit-provider-sdks}"
anthropic_version=2.16.0
genai_version=3.6.1
say() { echo "== $*" >&2; }

stamp="$dir/.installed-$anthropic_version-$genai_version"
if [ ! -f "$stamp" ]; then
  say "installing anthropic $anthropic_version and google-genai $genai_version into $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check \
    "anthropic==$anthropic_version" "google-genai==$genai_version"
  touch "$stamp"
fi

say "nodekit's request bodies"
bodies=$(mktemp -d)
trap 'rm -rf "$bodies"' EXIT
(cd "$root" && cargo run --quiet --locked -p nodekit-anthropic --example request_body) > "$bodies/anthropic.json"
(cd "$root" && cargo run --quiet --locked -p nodekit-gemini --example request_body) > "$bodies/gemini.json"

say "the official SDKs' request bodies, compared"
"$dir/bin/python" "$root/scripts/provider-sdks/compare.py" "$bodies/anthropic.json" "$bodies/gemini.json"
say "all equal"
