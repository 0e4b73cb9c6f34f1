#!/usr/bin/env bash
# A chat history with nodekit's typed blocks (a PDF, an image, cited text),
# in LangChain's stored form, read as n8n reads it: for the same history,
# the messages nodekit's Anthropic, OpenAI and Gemini clients send equal
# those @langchain/anthropic, @langchain/openai and @langchain/google-genai
# send, at the versions n8n 2.8.1 ships, both to servers on 127.0.0.1.
# Run by hand: it installs the packages from npm (about 85 MB) into a
# scratch folder (~/.cache/nodekit-langchain-blocks, or $LANGCHAIN_BLOCKS_DIR).
#
# Needs Node.js 20 or newer and npm.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="${LANGCHAIN_BLOCKS_DIR:-$HOME/.cache/nodekit-langchain-blocks}"
packages=(@langchain/core@1.1.8 @langchain/anthropic@1.1.3 @langchain/openai@1.1.3 @langchain/google-genai@2.1.10)
say() { echo "== $*" >&2; }

stamp="$dir/.installed-$(echo "${packages[*]}" | tr ' /@' '_.-')"
if [ ! -f "$stamp" ]; then
  say "installing ${packages[*]} into $dir"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund --legacy-peer-deps "${packages[@]}")
  touch "$stamp"
fi
cp "$root/scripts/langchain-blocks/langchain.mjs" "$dir/"

history="$root/scripts/langchain-blocks/history.json"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
say "nodekit's messages"
(cd "$root" && cargo run --quiet --locked -p nodekit --features anthropic,gemini,openai --example stored_blocks) < "$history" > "$out/nodekit.json"
say "LangChain's messages"
node "$dir/langchain.mjs" "$history" > "$out/langchain.json"
python3 "$root/scripts/langchain-blocks/compare.py" "$out/nodekit.json" "$out/langchain.json"
say "all equal"
