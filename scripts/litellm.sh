#!/usr/bin/env bash
# nodekit's native Anthropic and Gemini clients through the LiteLLM proxy,
# all on 127.0.0.1: LiteLLM serves Anthropic's /v1/messages and Gemini's
# generateContent and streamGenerateContent in front of the scripted
# OpenAI-compatible server (scripts/n8n-e2e/scripted-openai.js), and the
# `native_clients` example talks to it whole and streamed, with a tool
# round and an error (runtime/examples/native_clients.rs).
#
# Run by hand: it installs LiteLLM 1.80.17 and its dependencies, each
# pinned and hash-checked (scripts/litellm/requirements.txt, made with
# `uv pip compile --universal --generate-hashes` from `litellm[proxy]==1.80.17`),
# about 530 MB, into a scratch virtual environment (~/.cache/nodekit-litellm,
# or $LITELLM_DIR).
#
# Needs Python 3 with venv, and Node.js for the scripted server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="${LITELLM_DIR:-$HOME/.cache/nodekit-litellm}"
lock="$root/scripts/litellm/requirements.txt"
mock_port=${MOCK_PORT:-18501}
proxy_port=${LITELLM_PORT:-18502}
say() { echo "== $*" >&2; }

stamp="$dir/.installed-$(sha256sum "$lock" | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  say "installing LiteLLM from $lock (hash-checked) into $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$lock"
  touch "$stamp"
fi

work=$(mktemp -d -t nodekit-litellm-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

say "the scripted model on 127.0.0.1:$mock_port, LiteLLM on 127.0.0.1:$proxy_port"
PORT=$mock_port TOOL_ARGS='{"city":"Paris"}' REQUEST_LOG="$work/requests.jsonl" \
  setsid node "$root/scripts/n8n-e2e/scripted-openai.js" > "$work/mock.log" 2>&1 &
pids+=($!)
SCRIPTED_OPENAI_URL="http://127.0.0.1:$mock_port/v1" LITELLM_LOG=ERROR NO_DOCS=True \
  setsid "$dir/bin/litellm" --config "$root/scripts/litellm/config.yaml" \
  --host 127.0.0.1 --port "$proxy_port" > "$work/litellm.log" 2>&1 &
pids+=($!)
for _ in $(seq 120); do
  curl -sf -o /dev/null "http://127.0.0.1:$proxy_port/health/liveliness" && break
  sleep 0.5
done
curl -sf -o /dev/null "http://127.0.0.1:$proxy_port/health/liveliness" \
  || { cat "$work/litellm.log" >&2; echo "LiteLLM did not start" >&2; exit 1; }

say "nodekit's native clients through LiteLLM"
(cd "$root" && cargo run --quiet --locked -p nodekit --features anthropic,gemini --example native_clients -- "http://127.0.0.1:$proxy_port")
streamed=$(grep -c '"stream":true' "$work/requests.jsonl" || true)
say "the scripted model saw $(wc -l < "$work/requests.jsonl") requests, $streamed of them streamed"
[ "$streamed" -gt 0 ] || { echo "no streamed request reached the model" >&2; exit 1; }
say "all passed"
