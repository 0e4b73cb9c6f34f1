#!/usr/bin/env bash
# `nodekit serve` against software nodekit did not write, all on 127.0.0.1.
# Run by hand: it installs Debian's chromium (if missing), about 30 MB from
# the npm registry and LiteLLM's proxy from PyPI (a few hundred MB) into a
# scratch folder, ~/.cache/nodekit-serve-e2e (or $SERVE_E2E_DIR).
#
#   1. Headless Chromium, driven by playwright-core, opens the hosted chat
#      page of `nodekit serve`, which loads n8n's widget (@n8n/chat 1.37.0,
#      installed here from npm) from a local URL. A message typed there
#      must be answered, its text seen arriving in pieces while the
#      scripted model streams it; after a reload, the previous session must
#      come back from PostgreSQL chat memory. A screenshot is saved. A
#      second server's page, whose widget copy was changed, must not run it
#      (the page's integrity hashes no longer match).
#   2. OpenAI's Python client (openai, from PyPI) against
#      /v1/chat/completions, whole and streamed, in one session.
#   3. The same through a LiteLLM proxy in front of `nodekit serve`.
#
# The workflow: n8n's Chat Trigger (public, hosted, streaming, previous
# sessions from memory), nodekit's agent, nodekit's OpenAI-compatible model
# pointed at a scripted server (scripts/serve-e2e/helper.mjs) and nodekit's
# PostgreSQL chat memory. Needs DATABASE_URL (eval "$(scripts/services.sh)")
# and Node.js. Exit status 0 only if every check passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/serve-e2e"
dir=${SERVE_E2E_DIR:-$HOME/.cache/nodekit-serve-e2e}
port=${SERVE_E2E_PORT:-18760}
helper_port=$((port + 1))
litellm_port=$((port + 2))
tampered_port=$((port + 3))
say() { echo "== $*" >&2; }

[ -n "${DATABASE_URL:-}" ] || { echo "DATABASE_URL is needed: eval \"\$(scripts/services.sh)\"" >&2; exit 1; }
command -v node >/dev/null || { echo "Node.js is needed (Debian: apt-get install nodejs npm)" >&2; exit 1; }
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  say "installing Debian's chromium"
  apt-get install -y -q chromium >/dev/null
fi
if [ ! -f "$dir/.installed" ]; then
  say "installing playwright-core, @n8n/chat, openai and litellm[proxy] into $dir"
  mkdir -p "$dir"
  cat > "$dir/package.json" <<'JSON'
{"name": "nodekit-serve-e2e", "private": true, "version": "0.0.0", "type": "module",
 "dependencies": {"playwright-core": "1.65.1"}}
JSON
  (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts >/dev/null)
  # The widget's published bundle holds everything it needs; installing the
  # package would pull its build-time dependencies, one of them unpublished.
  (cd "$dir" && npm pack -q @n8n/chat@1.37.0 >/dev/null && mkdir -p node_modules/@n8n/chat \
    && tar xzf n8n-chat-1.37.0.tgz -C node_modules/@n8n/chat --strip-components=1 && rm n8n-chat-1.37.0.tgz)
  python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q "litellm[proxy]==1.105.7" openai
  touch "$dir/.installed"
fi
cp "$here/helper.mjs" "$here/browser.mjs" "$dir/"

say "building nodekit"
(cd "$root" && cargo build -q -p nodekit-nodes --bin nodekit)
nodekit="$root/target/debug/nodekit"

work=$(mktemp -d -t nodekit-serve-e2e-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$DATABASE_URL" -X -q -c "DROP TABLE IF EXISTS $table" >/dev/null 2>&1 || true
  rm -rf "$work"
}
table="serve_e2e_$$"
trap cleanup EXIT

# Waits until FILE holds TEXT (a program's log saying it listens).
wait_for() {
  for _ in $(seq 300); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$1" >&2
  return 1
}

webhook="3c5b4a9e-e2e0-4f7c-9d1a-0b6f2d8e7a51"
cat > "$work/workflow.json" <<JSON
{"name": "Shop assistant",
 "nodes": [
  {"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "typeVersion": 1.4,
   "webhookId": "$webhook", "parameters": {"public": true, "initialMessages": "Hi! Ask me where someone lives.",
   "options": {"loadPreviousSession": "memory", "responseMode": "streaming", "title": "Shop assistant"}}},
  {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "id": "agent-1", "parameters": {}},
  {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "scripted"}},
  {"name": "Memory", "type": "nodekit-nodes.memoryPostgresChat", "typeVersion": 1,
   "parameters": {"tableName": "$table", "contextWindowLength": 10}}
 ],
 "connections": {
  "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
  "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
  "Memory": {"ai_memory": [[{"node": "AI Agent", "type": "ai_memory", "index": 0},
                            {"node": "When chat message received", "type": "ai_memory", "index": 0}]]}}}
JSON
pg=$(python3 -c 'import sys, json, urllib.parse as u; p = u.urlparse(sys.argv[1]); print(json.dumps({"host": p.hostname, "port": p.port or 5432, "database": p.path[1:], "user": u.unquote(p.username or ""), "password": u.unquote(p.password or ""), "ssl": "disable"}))' "$DATABASE_URL")
export NODEKIT_CREDENTIALS="{\"openAiApi\": {\"apiKey\": \"sk-scripted\", \"url\": \"http://127.0.0.1:$helper_port/v1\"}, \"postgres\": $pg}"
export SERVE_E2E_KEY="sk-e2e-$RANDOM$RANDOM"

(cd "$dir" && node helper.mjs "$helper_port") > "$work/helper.log" 2>&1 &
pids+=($!)
wait_for "$work/helper.log" "helper on"
"$nodekit" serve "$work/workflow.json" --addr "127.0.0.1:$port" \
  --chat-bundle-url "http://127.0.0.1:$helper_port/chat" --api-key-env SERVE_E2E_KEY 2> "$work/serve.log" &
pids+=($!)
wait_for "$work/serve.log" "OpenAI-compatible endpoint"
# The same, its widget from a changed copy.
"$nodekit" serve "$work/workflow.json" --addr "127.0.0.1:$tampered_port" \
  --chat-bundle-url "http://127.0.0.1:$helper_port/tampered" 2> "$work/tampered.log" &
pids+=($!)
wait_for "$work/tampered.log" "OpenAI-compatible endpoint"

failed=0
say "n8n's chat widget in headless Chromium, on the hosted chat page"
shot="${SCREENSHOT:-$dir/chat.png}"
(cd "$dir" && CHROMIUM="$chromium" node browser.mjs "http://127.0.0.1:$port/webhook/$webhook/chat" "$shot" \
  "http://127.0.0.1:$tampered_port/webhook/$webhook/chat") || failed=1

say "OpenAI's Python client against /v1/chat/completions"
"$dir/venv/bin/python" "$here/clients.py" "http://127.0.0.1:$port/v1" "$SERVE_E2E_KEY" shop "openai client" --check-key || failed=1

say "the same client through a LiteLLM proxy"
cat > "$work/litellm.yaml" <<YAML
model_list:
  - model_name: shop
    litellm_params:
      model: openai/shop
      api_base: http://127.0.0.1:$port/v1
      api_key: os.environ/SERVE_E2E_KEY
litellm_settings:
  # LiteLLM drops "user"; it forwards the X-Session-Id header when told to.
  model_group_settings:
    forward_client_headers_to_llm_api: [shop]
general_settings:
  master_key: sk-litellm-e2e
YAML
# Offline: LiteLLM's model price list from its package, no telemetry; and
# no database (it would take DATABASE_URL as its own).
env -u DATABASE_URL LITELLM_LOCAL_MODEL_COST_MAP=True LITELLM_TELEMETRY=False \
  "$dir/venv/bin/litellm" --config "$work/litellm.yaml" --host 127.0.0.1 --port "$litellm_port" > "$work/litellm.log" 2>&1 &
pids+=($!)
if wait_for "$work/litellm.log" "Uvicorn running"; then
  "$dir/venv/bin/python" "$here/clients.py" "http://127.0.0.1:$litellm_port/v1" sk-litellm-e2e shop "via LiteLLM" || failed=1
else
  echo "FAIL LiteLLM did not start" >&2
  failed=1
fi

if [ "$failed" = 0 ]; then say "all passed"; else say "some checks FAILED"; fi
exit "$failed"
