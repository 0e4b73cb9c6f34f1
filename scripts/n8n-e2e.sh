#!/usr/bin/env bash
# nodekit nodes inside a real n8n, end to end (not part of the test command:
# it downloads n8n, about 1.6 GB, from the npm registry).
#
#   scripts/n8n-e2e.sh              the package installed as n8n installs it
#   scripts/n8n-e2e.sh --custom     the package in N8N_CUSTOM_EXTENSIONS
#
# 1. Installs n8n 2.8.4 (the newest release that runs on Node 20) into a
#    scratch folder, $N8N_E2E_DIR (default ~/.cache/nodekit-n8n-e2e); kept
#    between runs.
# 2. Builds the `n8n-package` example statically and checks it in an empty
#    chroot (scripts/static-sidecar.sh), writes its n8n package (nodekit's
#    built-in nodes and the example's) with `package`, and turns it into a
#    tarball with `npm pack`. By default the tarball is installed into
#    n8n's ~/.n8n/nodes with the steps and flags of n8n's community package
#    service (scripts/n8n-e2e/lib.sh), and the program must keep its
#    executable bit; with --custom the package folder is n8n's custom
#    extension folder instead.
# 3. Starts n8n on 127.0.0.1 with SQLite storage, telemetry and outside calls
#    off and otherwise default settings; sets up the owner, logs in and
#    checks that /types/nodes.json lists every packaged node with the
#    catalog's description.
# 4. Runs a workflow with `n8n execute`: n8n's AI Agent, n8n's OpenAI chat
#    model pointed at a scripted OpenAI-compatible server on 127.0.0.1,
#    nodekit's SQL select tool on a real SQLite file, and nodekit's SQLite chat
#    memory. Checks that the tool ran on the database, that the answer quotes
#    it, that the memory stored the exchange, and that the sub-nodes' calls
#    are in n8n's execution data. The same with nodekit's OpenAI-compatible
#    model, and with nodekit's packaged lmChatAnthropic (n8n's Anthropic node
#    by its own name, on n8n's anthropicApi credential) talking to the
#    scripted server's Anthropic-format /v1/messages.
# 5. Retrieval: nodekit's SQLite vector store inserts a text with nodekit's
#    embeddings (served by the scripted server), default data loader and
#    recursive character text splitter; then n8n's AI Agent, with n8n's
#    OpenAI chat model and the vector store as its tool, answers from it.
#    The same insert with n8n's own embeddings node must fail with an error
#    naming it.
# 6. MCP: the packaged program serves nodekit's select tool on the SQLite
#    file with `mcp serve --http` and a bearer token; n8n's AI Agent with
#    n8n's MCP Client Tool (v1.2, its httpBearerAuth credential) pointed at
#    it must answer quoting the rows; so must the same agent with nodekit's
#    packaged MCP Client Tool in its place (a toolkit in n8n's terms).
# Prints the timings at the end. Exit status 0 only if every check passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/n8n-e2e"
. "$here/lib.sh"
mode=install
case "${1:-}" in
  --custom) mode=custom ;;
  "") ;;
  *) echo "usage: scripts/n8n-e2e.sh [--custom]" >&2; exit 2 ;;
esac
work=$(mktemp -d -t nodekit-n8n-e2e-XXXXXX)
port=${N8N_PORT:-5688}
mock_port=${MOCK_PORT:-18431}
pids=()
cleanup() {
  # Each server runs in its own process group (setsid), n8n with its task runner.
  for p in "${pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

# ---- 1. n8n
install_n8n
n8n() { node "$n8n_dir/node_modules/n8n/bin/n8n" "$@"; }

# ---- 2. the package
# The benchmark (BENCH_RUNS) measures the release build.
if [ -n "${BENCH_RUNS:-}" ]; then profile=release; else profile=dev; fi
write_package "$profile" "$work"
n8n_env "$work/home" "$port"
export DB_TYPE=sqlite
if [ "$mode" = install ]; then
  say "installing $(basename "$tarball") as n8n's community package service does"
  community_install "$tarball" "$work/home"
  pkg="$work/home/.n8n/nodes/node_modules/n8n-nodes-text"
  export NODE_PREFIX=n8n-nodes-text
  for bin in "$pkg"/bin/*/*; do
    [ -x "$bin" ] || { echo "FAILED: $bin lost its executable bit in npm pack and install" >&2; exit 1; }
  done
else
  pkg="$work/src/n8n-nodes-text"
  export N8N_CUSTOM_EXTENSIONS="$work/src" NODE_PREFIX=CUSTOM
fi

# ---- the scripted model and the shop database
PORT=$mock_port REQUEST_LOG="$work/requests.jsonl" setsid node "$here/scripted-openai.js" &
pids+=($!)
N8N_DIR="$n8n_dir" node "$here/make-shop.js" "$work/shop.db"

# ---- 3. n8n lists the nodes
say "starting n8n on 127.0.0.1:$port ($mode)"
start=$(now)
setsid node "$n8n_dir/node_modules/n8n/bin/n8n" start > "$work/n8n.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$port"
wait_started "$url" "$work/n8n.log"
jar="$work/cookies"
owner='{"email":"owner@example.com","firstName":"Node","lastName":"Kit","password":"Passw0rd!Passw0rd"}'
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/owner/setup" -d "$owner" >/dev/null
curl -sf -c "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/login" \
  -d '{"emailOrLdapLoginId":"owner@example.com","password":"Passw0rd!Passw0rd"}' >/dev/null
ready=$(now)
curl -sf -b "$jar" "$url/types/nodes.json" > "$work/nodes.json"
say "checking /types/nodes.json against the catalog"
node "$here/check-nodes.js" "$work/nodes.json" "$pkg" "$program"

# ---- 4. the workflows
json_id() { node -e 'let s="";process.stdin.on("data",c=>s+=c).on("end",()=>{const j=JSON.parse(s);console.log((j.data||j).id)})'; }
post() { curl -sf -b "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/$1" -d "$2" | json_id; }
creds="\"openAiApi\":\"$(post credentials "{\"name\":\"Scripted OpenAI\",\"type\":\"openAiApi\",\"data\":{\"apiKey\":\"sk-local\",\"url\":\"http://127.0.0.1:$mock_port/v1\"}}")\""
creds="$creds,\"anthropicApi\":\"$(post credentials "{\"name\":\"Scripted Anthropic\",\"type\":\"anthropicApi\",\"data\":{\"apiKey\":\"sk-ant-local\",\"url\":\"http://127.0.0.1:$mock_port\"}}")\""
creds="$creds,\"sqlite\":\"$(post credentials "{\"name\":\"Shop database\",\"type\":\"sqlite\",\"data\":{\"databasePath\":\"$work/shop.db\"}}")\""
creds="$creds,\"vectors\":\"$(post credentials "{\"name\":\"Vector database\",\"type\":\"sqlite\",\"data\":{\"databasePath\":\"$work/vectors.db\"}}")\""

# Runs workflow VARIANT (workflow.js) with `n8n execute`; its output goes to run-VARIANT.txt.
execute() {
  local variant=$1 id
  node "$here/workflow.js" "$variant" "{$creds}" "$work/memory.db" > "$work/workflow-$variant.json"
  id=$(curl -sf -b "$jar" -H 'Content-Type: application/json' -X POST "$url/rest/workflows" -d @"$work/workflow-$variant.json" | json_id)
  [ -n "$id" ] || { echo "n8n refused workflow $variant" >&2; exit 1; }
  : > "$work/requests.jsonl"
  # `n8n execute` prints the run through its logger, at level info.
  N8N_LOG_LEVEL=info N8N_RUNNERS_BROKER_PORT=$((port + 2)) timeout 300 \
    node "$n8n_dir/node_modules/n8n/bin/n8n" execute --id "$id" > "$work/run-$variant.txt" 2>&1
}
check_run() {
  N8N_DIR="$n8n_dir" node "$here/check-run.js" "$1" "$work/run-$1.txt" "$work/requests.jsonl" "$work/memory.db"
}
# A run that must fail with a node error quoting `message`, n8n reporting it rather than crashing.
expect_error() {
  local variant=$1 message=$2 status=0
  execute "$variant" || status=$?
  if [ "$status" -ge 124 ] || ! grep -qF "$message" "$work/run-$variant.txt"; then
    tail -40 "$work/run-$variant.txt" >&2
    echo "FAILED: $variant: expected an n8n error quoting \"$message\" (exit status $status)" >&2
    exit 1
  fi
  echo "$variant: n8n reports the error: $(grep -oF "$message" "$work/run-$variant.txt" | head -1)" >&2
}

say "n8n's AI Agent, n8n's OpenAI model, nodekit's SQL tool and memory"
exec_start=$(now)
execute n8n-model || { tail -60 "$work/run-n8n-model.txt" >&2; exit 1; }
exec_end=$(now)
check_run n8n-model

say "the same with nodekit's chat model"
execute nodekit-model || { tail -60 "$work/run-nodekit-model.txt" >&2; exit 1; }
check_run nodekit-model

say "the same with nodekit's packaged Anthropic model (n8n's lmChatAnthropic by its name)"
execute nodekit-anthropic || { tail -60 "$work/run-nodekit-anthropic.txt" >&2; exit 1; }
check_run nodekit-anthropic
grep -q '"max_tokens":4096' "$work/requests.jsonl" \
  || { echo "FAILED: the Anthropic requests lack n8n's default max_tokens" >&2; exit 1; }

say "faults: a panicking node, a missing bridge program"
expect_error fault "panicked: the fault tool panics on purpose"
mv "$pkg/bin" "$work/bin-away"
expect_error n8n-model "the nodekit bridge program is missing"
mv "$work/bin-away" "$pkg/bin"

say "retrieval: nodekit's vector store inserts, n8n's AI Agent answers from it"
for variant in rag-insert rag-agent; do
  execute "$variant" || { tail -60 "$work/run-$variant.txt" >&2; exit 1; }
  node "$here/check-rag.js" "$variant" "$work/run-$variant.txt" "$work/requests.jsonl"
done
expect_error rag-n8n-embeddings "is connected to a sub-node that is not a nodekit node"

say "n8n's AI Agent with n8n's MCP Client Tool, then nodekit's, pointed at nodekit mcp serve"
mcp_port=$((mock_port + 1))
cat > "$work/mcp-tools.json" <<'JSON'
{"nodes": [
  {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
  {"name": "Read customers", "type": "nodekit-nodes.selectQueryTool", "typeVersion": 1, "parameters": {"options": {"allowedTables": "customers"}}}
 ],
 "connections": {"Read customers": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]}}}
JSON
token="e2e-$RANDOM$RANDOM"
MCP_E2E_TOKEN="$token" NODEKIT_CREDENTIALS="{\"sqlite\": {\"databasePath\": \"$work/shop.db\"}}" \
  setsid "$program" mcp serve "$work/mcp-tools.json" --http "127.0.0.1:$mcp_port" --token-env MCP_E2E_TOKEN \
  > "$work/mcp.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q serving "$work/mcp.log" && break; sleep 0.1; done
grep -q serving "$work/mcp.log" || { cat "$work/mcp.log" >&2; exit 1; }
creds="$creds,\"httpBearerAuth\":\"$(post credentials "{\"name\":\"MCP token\",\"type\":\"httpBearerAuth\",\"data\":{\"token\":\"$token\"}}")\""
export MCP_URL="http://127.0.0.1:$mcp_port/mcp"
for variant in mcp mcp-nodekit; do
  execute "$variant" || { tail -60 "$work/run-$variant.txt" >&2; exit 1; }
  node -e '
    const { readRun } = require(process.argv[1]);
    const { json, fail } = readRun(process.argv[2]);
    const answer = (json("AI Agent", "main")[0] || {}).output || "";
    console.error(`agent answer: ${answer}`);
    if (!answer.includes("Ada Lovelace") || !answer.includes("Grace Hopper")) fail("the answer does not quote the rows");
  ' "$here/run-data.js" "$work/run-$variant.txt"
done

awk -v s="$start" -v r="$ready" -v a="$exec_start" -v b="$exec_end" 'BEGIN {
  printf "n8n ready after %.1f s; n8n execute (process start to exit) %.2f s\n", r - s, b - a }'

# ---- 6. optional: agent run time against n8n's own Postgres tool
if [ -n "${BENCH_RUNS:-}" ]; then
  [ -n "${DATABASE_URL:-}" ] || { echo "BENCH_RUNS needs DATABASE_URL (eval \"\$(scripts/services.sh)\")" >&2; exit 1; }
  say "benchmark: $BENCH_RUNS runs each, nodekit's select tool and n8n's Postgres tool on PostgreSQL"
  pg=$(node -e 'const u=new URL(process.argv[1]);console.log(JSON.stringify({host:u.hostname,port:Number(u.port||5432),database:u.pathname.slice(1),user:decodeURIComponent(u.username),password:decodeURIComponent(u.password),ssl:"disable"}))' "$DATABASE_URL")
  creds="$creds,\"postgres\":\"$(post credentials "{\"name\":\"Shop PostgreSQL\",\"type\":\"postgres\",\"data\":$pg}")\""
  psql "$DATABASE_URL" -q -c "DROP TABLE IF EXISTS customers" \
    -c "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT)" \
    -c "INSERT INTO customers VALUES (1, 'Ada Lovelace', 'London'), (2, 'Grace Hopper', 'New York')"
  for variant in pg-nodekit pg-n8n; do
    for _ in $(seq "$BENCH_RUNS"); do
      execute "$variant" || { tail -40 "$work/run-$variant.txt" >&2; exit 1; }
      node "$here/timings.js" "$work/run-$variant.txt" >> "$work/timings-$variant.jsonl"
    done
    node "$here/timings.js" --summary "$variant" "$work/timings-$variant.jsonl"
  done
fi
say "all checks passed"
