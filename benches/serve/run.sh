#!/usr/bin/env bash
# Chat messages through `nodekit serve` against n8n 2.8.4's Chat Trigger
# (production webhook of an active workflow, n8n's default settings, one
# process), the same agent workflow behind each, in one run:
#   - nodekit: nodekit's agent, its OpenAI-compatible model, selectQueryTool
#     and PostgreSQL chat memory (nodekit serve, release build);
#   - n8n: n8n's AI Agent, OpenAI model, Postgres tool and Postgres chat
#     memory (benches/serve/n8n-workflow.js).
# Both ask the same scripted OpenAI-compatible server
# (scripts/n8n-e2e/scripted-openai.js: a tool call, then an answer quoting
# the tool's result) and read the same 10-row customers table. Each message
# is n8n's `sendMessage`, answered when the last node finishes. The client
# (benches/serve/load.mjs) runs sessions that send one message after
# another, at 1, 16 and 64 sessions at once, each server in turn at each
# level, and times the scripted model alone for the same two requests.
# Prints the table for BENCHMARKS.md. Not part of the test command: it
# installs n8n (scripts/n8n-e2e/lib.sh). Needs DATABASE_URL
# (eval "$(scripts/services.sh)").
#
# Env: MESSAGES (a level, default 640), WARMUP (default 40), KEEP=1 keeps
# the scratch folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/benches/serve"
e2e="$root/scripts/n8n-e2e"
# shellcheck source=../../scripts/n8n-e2e/lib.sh
source "$e2e/lib.sh"
[ -n "${DATABASE_URL:-}" ] || { echo "DATABASE_URL is needed: eval \"\$(scripts/services.sh)\"" >&2; exit 1; }
base=${SERVE_BENCH_PORT:-18900}
mock_port=$base serve_port=$((base + 1)) n8n_port=$((base + 10))
schema="serve_bench_$$"
work=$(mktemp -d -t nodekit-serve-bench-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$DATABASE_URL" -X -q -c "DROP SCHEMA IF EXISTS $schema CASCADE" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
echo "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$work/run.txt" >&2

install_n8n
say "building nodekit (release)"
(cd "$root" && cargo build -q --release -p nodekit-nodes --bin nodekit)

# ---- the data: 10 customers; each side's chat memory in a table of its own
psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 <<SQL
CREATE SCHEMA $schema;
CREATE TABLE $schema.customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
INSERT INTO $schema.customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Grace Hopper', 'New York'),
  (3, 'Alan Turing', 'Manchester'), (4, 'Katherine Johnson', 'Hampton'), (5, 'Edsger Dijkstra', 'Austin'),
  (6, 'Barbara Liskov', 'Boston'), (7, 'Donald Knuth', 'Stanford'), (8, 'Margaret Hamilton', 'Cambridge'),
  (9, 'John Backus', 'San Francisco'), (10, 'Frances Allen', 'New York');
SQL
pg=$(node -e 'const u = new URL(process.argv[1]); console.log(JSON.stringify({host: u.hostname, port: Number(u.port || 5432),
  database: u.pathname.slice(1), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), ssl: "disable"}))' "$DATABASE_URL")

# ---- the scripted model
PORT=$mock_port REQUEST_LOG=/dev/null TOOL_ARGS='{"tableName":"customers","orderBy":"id"}' node "$e2e/scripted-openai.js" &
pids+=($!)

# ---- nodekit serve
cat > "$work/nodekit.json" <<JSON
{"name": "serve bench",
 "nodes": [
  {"name": "When chat message received", "type": "@n8n/n8n-nodes-langchain.chatTrigger", "typeVersion": 1.4,
   "webhookId": "serve-bench-nodekit", "parameters": {"public": true, "mode": "webhook", "options": {"responseMode": "lastNode"}}},
  {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
  {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "gpt-4o-mini"}},
  {"name": "Read customers", "type": "nodekit-nodes.selectQueryTool", "typeVersion": 1,
   "parameters": {"options": {"schema": "$schema", "allowedTables": "customers"}}},
  {"name": "Chat memory", "type": "nodekit-nodes.memoryPostgresChat", "typeVersion": 1,
   "parameters": {"tableName": "${schema}_nodekit_chat", "contextWindowLength": 5}}
 ],
 "connections": {
  "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
  "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
  "Read customers": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
  "Chat memory": {"ai_memory": [[{"node": "AI Agent", "type": "ai_memory", "index": 0}]]}}}
JSON
NODEKIT_CREDENTIALS="{\"openAiApi\": {\"apiKey\": \"sk-local\", \"url\": \"http://127.0.0.1:$mock_port/v1\"}, \"postgres\": $pg}" \
  "$root/target/release/nodekit" serve "$work/nodekit.json" --addr "127.0.0.1:$serve_port" 2> "$work/nodekit.log" &
nodekit_pid=$!
pids+=($nodekit_pid)

# ---- n8n: one process, its own SQLite database, otherwise default settings
say "starting n8n 2.8.4 on 127.0.0.1:$n8n_port"
(
  n8n_env "$work/n8n" "$n8n_port"
  exec setsid node "$n8n_dir/node_modules/n8n/bin/n8n" start > "$work/n8n.log" 2>&1
) &
n8n_pid=$!
pids+=($n8n_pid)
url="http://127.0.0.1:$n8n_port"
wait_started "$url" "$work/n8n.log"
jar="$work/cookies"
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/owner/setup" \
  -d '{"email":"owner@example.com","firstName":"Node","lastName":"Kit","password":"Passw0rd!Passw0rd"}' >/dev/null
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/login" \
  -d '{"emailOrLdapLoginId":"owner@example.com","password":"Passw0rd!Passw0rd"}' >/dev/null
field() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const j=JSON.parse(s);console.log((j.data||j)[process.argv[1]])})' "$1"; }
rest() { curl -sS -f -b "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/$1" -d "$2"; }
creds="{\"openAiApi\":\"$(rest credentials "{\"name\":\"Scripted OpenAI\",\"type\":\"openAiApi\",\"data\":{\"apiKey\":\"sk-local\",\"url\":\"http://127.0.0.1:$mock_port/v1\"}}" | field id)\""
creds="$creds,\"postgres\":\"$(rest credentials "{\"name\":\"Shop PostgreSQL\",\"type\":\"postgres\",\"data\":$pg}" | field id)\"}"
node "$here/n8n-workflow.js" serve-bench-n8n "$schema" "${schema}_n8n_chat" "$creds" > "$work/n8n-workflow.json"
created=$(rest workflows @"$work/n8n-workflow.json")
rest "workflows/$(field id <<< "$created")/activate" "{\"versionId\":\"$(field versionId <<< "$created")\"}" > "$work/activate.json"
[ "$(field active < "$work/activate.json")" = true ] || { head -c 400 "$work/activate.json" >&2; exit 1; }
for _ in $(seq 100); do grep -q "OpenAI-compatible" "$work/nodekit.log" && break; sleep 0.1; done

# ---- the load
cat > "$work/config.json" <<JSON
{"servers": [
  {"name": "nodekit", "url": "http://127.0.0.1:$serve_port/webhook/serve-bench-nodekit/chat"},
  {"name": "n8n", "url": "$url/webhook/serve-bench-n8n/chat"}],
 "model": "http://127.0.0.1:$mock_port/v1/chat/completions",
 "levels": [1, 16, 64], "messages": ${MESSAGES:-640}, "warmup": ${WARMUP:-40}}
JSON
say "sending messages"
node "$here/load.mjs" "$work/config.json" > "$work/results.json"

# Peak resident memory: nodekit's one process; n8n's process and its children (the task runner).
hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
tree_hwm() { local sum; sum=$(hwm "$1"); for c in $(pgrep -P "$1" || true); do sum=$((sum + $(tree_hwm "$c"))); done; echo "$sum"; }
n8n_node=$(pgrep -P "$n8n_pid" -f "n8n/bin/n8n" || echo "$n8n_pid")
python3 - "$work/results.json" "$(hwm "$nodekit_pid")" "$(tree_hwm "$n8n_pid")" "$(hwm "$n8n_node")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
nk, n8, model = r["servers"]["nodekit"], r["servers"]["n8n"], r["model"]
print("| sessions | nodekit p50 / p99 | n8n p50 / p99 | model alone p50 / p99 | nodekit msg/s | n8n msg/s | throughput lead | failed (nodekit / n8n) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for level in r["levels"]:
    a, b, m = nk[str(level)], n8[str(level)], model[str(level)]
    print(f"| {level} | {a['p50_ms']:.2f} / {a['p99_ms']:.2f} ms | {b['p50_ms']:.1f} / {b['p99_ms']:.1f} ms | {m['p50_ms']:.2f} / {m['p99_ms']:.2f} ms "
          f"| {a['per_second']:.0f} | {b['per_second']:.1f} | {a['per_second']/b['per_second']:.1f}x | {a['failures']} / {b['failures']} |")
# Overhead: a message's time less the model's own median time for its two
# requests, at one session (nothing else running).
a, b, m = nk["1"], n8["1"], model["1"]["p50_ms"]
oa, ob = (a["p50_ms"] - m, a["p99_ms"] - m), (b["p50_ms"] - m, b["p99_ms"] - m)
print("\n| overhead at 1 session | p50 | p99 |")
print("| --- | ---: | ---: |")
print(f"| nodekit | {oa[0]:.2f} ms | {oa[1]:.2f} ms |")
print(f"| n8n | {ob[0]:.1f} ms | {ob[1]:.1f} ms |")
print(f"| n8n ÷ nodekit | {ob[0]/oa[0]:.1f}x | {ob[1]/oa[1]:.1f}x |")
print(f"\npeak RSS nodekit serve: {int(sys.argv[2])/1024:.1f} MB; n8n: {int(sys.argv[3])/1024:.1f} MB with its children ({int(sys.argv[4])/1024:.1f} MB its main process)")
PY
