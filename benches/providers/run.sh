#!/usr/bin/env bash
# Per-call client time, whole answers, nodekit's native Anthropic and
# Gemini clients against the Node.js ones (the official @anthropic-ai/sdk
# and @google/genai, LangChain's @langchain/anthropic and
# @langchain/google-genai), with bare reqwest and bare fetch posting the
# same body as the floors: one local keep-alive server, one run, the same
# conversation. Not part of the test command.
#
#   benches/providers/run.sh        (env: BENCH_CALLS, BENCH_WARMUP, BENCH_NODE_DIR)
#
# The Node.js packages are installed from npm (about 60 MB) into a
# scratch folder, ~/.cache/nodekit-provider-bench unless BENCH_NODE_DIR
# names one; nothing of them is kept in the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir="${BENCH_NODE_DIR:-$HOME/.cache/nodekit-provider-bench}"
packages=(@anthropic-ai/sdk@1.16.0 @google/genai@3.3.0 @langchain/core@1.4.0 @langchain/anthropic@1.5.11 @langchain/google-genai@2.3.2)
stamp="$dir/.installed-$(echo "${packages[*]}" | tr ' /@' '_.-')"
if [ ! -f "$stamp" ]; then
  echo "installing ${packages[*]} into $dir (npm) ..." >&2
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && npm init -y >/dev/null && npm pkg set type=module >/dev/null \
    && npm install --silent --no-audit --no-fund --legacy-peer-deps "${packages[@]}")
  touch "$stamp"
fi
(cd "$root" && BENCH_NODE_DIR="$dir" cargo bench -q --locked -p nodekit --features anthropic,gemini --bench provider_calls)
