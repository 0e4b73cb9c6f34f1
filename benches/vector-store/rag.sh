#!/usr/bin/env bash
# A RAG retrieval from a PGVector table, timed through `nodekit serve` and
# through the n8n bridge (`nodekit bridge`), with the release build; prints
# p50/p99 latency and throughput per path at each number of requests in
# flight. Not part of the test command.
#
# It fills a table of DOCS short notes with `nodekit index` (embeddings:
# bag-of-words vectors from the scripted OpenAI-compatible server,
# scripts/n8n-e2e/scripted-openai.js, on 127.0.0.1), then times (client:
# benches/vector-store/rag.mjs):
#   - serve agent:  a chat message to a Chat Trigger → nodekit agent whose
#                   tool is the PGVector node in `retrieve-as-tool` mode
#                   (scripted model: one tool call, then an answer quoting
#                   its result); each message is one run;
#   - serve load:   a chat message to a Chat Trigger → PGVector node in
#                   `load` mode (prompt: the chat input);
#   - bridge execute load / execute retrieve-as-tool: the node's execute()
#                   as the package's shims send it (the second is how n8n
#                   2.x's agent runs a tool call), one bridge process;
#   - bridge supply (cached) vectorSearch: a search of what the node supplies
#                   in `retrieve` mode, the same target each time (the
#                   bridge's supply cache answers it);
#   - bridge supply (uncached) vectorSearch, only with BRIDGE_UNCACHED=1:
#                   the same from 100 nodes in turn (more than the 64
#                   supplies the bridge keeps), so each search supplies the
#                   node again. Off by default: on a build whose PGVector
#                   node opens a store per call, each such supply keeps a
#                   pool with 2 open connections, and about 50 of them take
#                   all of a default server's 100 (then every client of
#                   that server, not only this one, is refused).
# The bridge is driven through the generated package's own client
# (`nodekit package`, lib/nodekit-bridge.js), as benches/n8n-bridge does.
# Each path is warmed up, then timed at each level; every answer is checked.
# Beside latency and throughput it reports the most PostgreSQL connections
# the process under test held at once (sampled with `ss` every 100 ms).
# Filling the table takes most of a minute (`index` writes file by file).
# Run the script once per build to compare builds (NODEKIT_BIN).
#
#   eval "$(scripts/services.sh)"; benches/vector-store/rag.sh
#
# Env:
#   PGVECTOR_DATABASE_URL  PostgreSQL with pgvector (needed)
#   NODEKIT_BIN  a prebuilt `nodekit` to measure (default: build the release
#                one here, `cargo build --release -p nodekit-nodes --bin nodekit`)
#   DOCS (default 1000), REQUESTS a level (default 400), LEVELS (default "1 16"),
#   LEVEL_SECONDS (a level starts no request after this; default 60),
#   WARMUP (default 40), BRIDGE_UNCACHED=1 (above),
#   RAG_BENCH_PORT first of 3 ports (default 18960),
#   KEEP=1 keeps the scratch folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/benches/vector-store"
[ -n "${PGVECTOR_DATABASE_URL:-}" ] || { echo "PGVECTOR_DATABASE_URL is needed: eval \"\$(scripts/services.sh)\"" >&2; exit 1; }
base=${RAG_BENCH_PORT:-18960}
mock_port=$base agent_port=$((base + 1)) load_port=$((base + 2))
table="rag_bench_$$"
work=$(mktemp -d -t nodekit-rag-bench-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PGVECTOR_DATABASE_URL" -X -q -c "DROP TABLE IF EXISTS $table" 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${NODEKIT_BIN:-}" ]; then
  bin=$(realpath "$NODEKIT_BIN")
else
  echo "building nodekit (release)" >&2
  (cd "$root" && cargo build -q --release -p nodekit-nodes --bin nodekit)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/nodekit"
fi
# The commit of the checkout the program was built from (a NODEKIT_BIN: the
# checkout whose target folder holds it), marked when its tracked files have
# uncommitted changes.
checkout=$root
[ -z "${NODEKIT_BIN:-}" ] || checkout=$(dirname "$bin")
if built=$(git -C "$checkout" rev-parse --short HEAD 2>/dev/null); then
  [ -z "$(git -C "$checkout" status --porcelain --untracked-files=no)" ] || built="$built+uncommitted"
else
  built="an unknown commit"
fi
echo "nodekit $bin (checkout at $built), $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$work/run.txt" >&2

pg=$(node -e 'const u = new URL(process.argv[1]); console.log(JSON.stringify({host: u.hostname, port: Number(u.port || 5432),
  database: u.pathname.slice(1), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), ssl: "disable"}))' "$PGVECTOR_DATABASE_URL")
api="{\"apiKey\": \"sk-local\", \"url\": \"http://127.0.0.1:$mock_port/v1\"}"
export NODEKIT_CREDENTIALS="{\"openAiApi\": $api, \"postgres\": $pg}"
# The table is searched by pgvector, as n8n's own node does.
unset NODEKIT_PGVECTOR_IN_PROCESS_INDEX

# ---- the scripted model (chat) and bag-of-words embeddings, one server
query="when to bleed the radiators"
PORT=$mock_port REQUEST_LOG=/dev/null TOOL_ARGS="{\"input\": \"$query\"}" node "$root/scripts/n8n-e2e/scripted-openai.js" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$mock_port/v1/models" >/dev/null && break; sleep 0.1; done

# ---- the table: DOCS notes, one file (one chunk) each, on 50 topics
mkdir -p "$work/notes"
python3 - "$work/notes" "${DOCS:-1000}" <<'PY'
import random, sys
out, n = sys.argv[1], int(sys.argv[2])
topics = ["radiators", "gutters", "boiler", "roof tiles", "window seals", "drains", "fence posts", "lawn",
          "chimney", "smoke alarms", "water heater", "attic insulation", "garage door", "deck boards", "paint",
          "grout", "sump pump", "ceiling fan", "dishwasher filter", "dryer vent", "septic tank", "garden hose",
          "door hinges", "floor tiles", "light switches", "thermostat", "pipes", "shed", "patio", "driveway",
          "kitchen sink", "shower head", "toilet cistern", "washing machine", "fridge coils", "oven", "hedges",
          "trees", "pond", "solar panels", "skylight", "carpets", "curtains", "stairs", "banisters", "basement",
          "loft ladder", "letterbox", "doorbell", "extractor fan"]
verbs = ["check", "clean", "bleed", "replace", "inspect", "repair", "seal", "drain", "service", "oil"]
when = ["in autumn", "every spring", "before winter", "twice a year", "after storms", "monthly", "when it rattles", "each summer"]
rng = random.Random(7)
for i in range(n):
    t = topics[i % len(topics)]
    text = f"Note {i}: {rng.choice(verbs)} the {t} {rng.choice(when)}; {rng.choice(verbs)} the {t} again if {rng.choice(topics)} needs it too."
    if t == "radiators":
        text += " Bleed radiators when they are cold at the top; a radiator key opens the valve."
    open(f"{out}/note-{i:05}.txt", "w").write(text + "\n")
PY
t0=$(date +%s.%N)
"$bin" index "$work/notes" --store "pgvector:$table" --model bag-of-words --chunk-size 1000 --chunk-overlap 0 > "$work/index.json"
echo "indexed: $(tr -d ' \n' < "$work/index.json") in $(python3 -c "import time; print(f'{time.time() - $t0:.1f} s')")" >&2

# ---- nodekit serve: the agent with the store as its tool, and the store's `load` alone
trigger() { echo "{\"name\": \"When chat message received\", \"type\": \"@n8n/n8n-nodes-langchain.chatTrigger\", \"typeVersion\": 1.4,
   \"webhookId\": \"$1\", \"parameters\": {\"public\": true, \"mode\": \"webhook\", \"options\": {\"responseMode\": \"lastNode\"}}}"; }
embeddings='{"name": "Embeddings", "type": "nodekit-nodes.embeddingsOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "bag-of-words"}}'
cat > "$work/agent.json" <<JSON
{"name": "rag bench agent",
 "nodes": [
  $(trigger rag-agent),
  {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
  {"name": "Chat Model", "type": "nodekit-nodes.lmChatOpenAiCompatible", "typeVersion": 1, "parameters": {"model": "scripted"}},
  {"name": "Knowledge Base", "type": "nodekit-nodes.vectorStorePGVector", "typeVersion": 1,
   "parameters": {"mode": "retrieve-as-tool", "tableName": "$table", "toolDescription": "Home maintenance notes.", "topK": 4}},
  $embeddings
 ],
 "connections": {
  "When chat message received": {"main": [[{"node": "AI Agent", "type": "main", "index": 0}]]},
  "Chat Model": {"ai_languageModel": [[{"node": "AI Agent", "type": "ai_languageModel", "index": 0}]]},
  "Knowledge Base": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
  "Embeddings": {"ai_embedding": [[{"node": "Knowledge Base", "type": "ai_embedding", "index": 0}]]}}}
JSON
cat > "$work/load.json" <<JSON
{"name": "rag bench load",
 "nodes": [
  $(trigger rag-load),
  {"name": "Knowledge Base", "type": "nodekit-nodes.vectorStorePGVector", "typeVersion": 1,
   "parameters": {"mode": "load", "tableName": "$table", "prompt": "={{ \$json.chatInput }}", "topK": 4}},
  $embeddings
 ],
 "connections": {
  "When chat message received": {"main": [[{"node": "Knowledge Base", "type": "main", "index": 0}]]},
  "Embeddings": {"ai_embedding": [[{"node": "Knowledge Base", "type": "ai_embedding", "index": 0}]]}}}
JSON
"$bin" serve "$work/agent.json" --addr "127.0.0.1:$agent_port" 2> "$work/serve-agent.log" &
agent_pid=$!
pids+=($agent_pid)
"$bin" serve "$work/load.json" --addr "127.0.0.1:$load_port" 2> "$work/serve-load.log" &
load_pid=$!
pids+=($load_pid)
for port in $agent_port $load_port; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
done

# ---- the n8n package, for its bridge client and its copy of the program
"$bin" package --out "$work/pkg" --name n8n-nodes-rag-bench --builtins > /dev/null 2> "$work/package.log"

cat > "$work/config.json" <<JSON
{"package": "$work/pkg", "pgPort": $(node -e 'console.log(new URL(process.argv[1]).port || 5432)' "$PGVECTOR_DATABASE_URL"),
 "serve": [
  {"name": "agent (retrieve-as-tool)", "url": "http://127.0.0.1:$agent_port/webhook/rag-agent/chat", "expect": "radiator", "pid": $agent_pid},
  {"name": "load", "url": "http://127.0.0.1:$load_port/webhook/rag-load/chat", "expect": "radiator", "pid": $load_pid}],
 "bridge": {"table": "$table", "postgres": $pg, "openAiApi": $api,
  "queries": ["$query", "how to bleed a radiator", "radiators cold at the top", "radiator key opens the valve"]},
 "levels": [$(echo "${LEVELS:-1 16}" | sed 's/ \+/, /g')], "requests": ${REQUESTS:-400},
 "levelSeconds": ${LEVEL_SECONDS:-60}, "warmup": ${WARMUP:-40}, "uncached": $([ "${BRIDGE_UNCACHED:-}" = 1 ] && echo true || echo false)}
JSON
# In the background, so that a stop (INT, TERM) ends the client and its bridge too.
node "$here/rag.mjs" "$work/config.json" > "$work/results.json" &
client=$!
pids+=($client)
wait "$client"
python3 - "$work/results.json" "$built" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"nodekit at {sys.argv[2]}, {r['requests']} requests a level")
print("| path | in flight | p50 | p99 | per second | failed | PostgreSQL connections (peak) |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for name, levels in r["paths"].items():
    for level in r["levels"]:
        x = levels[str(level)]
        print(f"| {name} | {level} | {x['p50_ms']:.2f} ms | {x['p99_ms']:.2f} ms | {x['per_second']:.0f} | {x['failures']} | {x['pg_connections_peak']} |")
PY
