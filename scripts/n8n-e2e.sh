#!/usr/bin/env bash
# nodekit nodes inside a real n8n, end to end (not part of the test command:
# it downloads n8n, about 1.6 GB, from the npm registry).
#
#   scripts/n8n-e2e.sh
#
# 1. Installs n8n 2.8.4 (the newest release that runs on Node 20) into a
#    scratch folder, $N8N_E2E_DIR (default ~/.cache/nodekit-n8n-e2e); kept
#    between runs.
# 2. Builds the `n8n-package` example and writes its n8n package (nodekit's
#    built-in nodes and the example's) with `package`.
# 3. Starts n8n on 127.0.0.1 with SQLite storage, telemetry and outside calls
#    off, and the package as its custom extension folder; sets up the owner,
#    logs in and checks that /types/nodes.json lists every packaged node with
#    the catalog's description.
# 4. Runs a workflow with `n8n execute`: n8n's AI Agent, n8n's OpenAI chat
#    model pointed at a scripted OpenAI-compatible server on 127.0.0.1,
#    nodekit's SQL select tool on a real SQLite file, and nodekit's SQLite chat
#    memory. Checks that the tool ran on the database, that the answer quotes
#    it, that the memory stored the exchange, and that the sub-nodes' calls
#    are in n8n's execution data.
# 5. Retrieval: nodekit's SQLite vector store inserts a text with nodekit's
#    embeddings (served by the scripted server), default data loader and
#    recursive character text splitter; then n8n's AI Agent, with n8n's
#    OpenAI chat model and the vector store as its tool, answers from it.
#    The same insert with n8n's own embeddings node must fail with an error
#    naming it.
# Prints the timings at the end. Exit status 0 only if every check passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/n8n-e2e"
base=${N8N_E2E_DIR:-$HOME/.cache/nodekit-n8n-e2e}
n8n_dir="$base/n8n-2.8.4"
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
say() { echo "== $*" >&2; }
now() { date +%s.%N; }

command -v node >/dev/null || { echo "Node.js is needed (Debian: apt-get install nodejs npm)" >&2; exit 1; }

# ---- 1. n8n
if [ ! -x "$n8n_dir/node_modules/.bin/n8n" ] || [ ! -f "$n8n_dir/.installed" ]; then
  say "installing n8n 2.8.4 into $n8n_dir (a few minutes)"
  mkdir -p "$n8n_dir"
  cat > "$n8n_dir/package.json" <<'JSON'
{
  "name": "nodekit-n8n-e2e",
  "private": true,
  "version": "0.0.0",
  "dependencies": {
    "n8n": "2.8.4",
    "@opentelemetry/api": "~1.9.0",
    "@opentelemetry/core": "^2.1.0",
    "@opentelemetry/sdk-trace-base": "^2.1.0",
    "@opentelemetry/instrumentation": "^0.204.0",
    "@opentelemetry/exporter-trace-otlp-http": "^0.204.0"
  },
  "overrides": { "xlsx": "0.18.5", "@langchain/langgraph-checkpoint": "1.0.0" }
}
JSON
  # --ignore-scripts: n8n's install scripts fetch from outside the registry.
  # The OpenTelemetry packages are @sentry/node's peers, which
  # --legacy-peer-deps would otherwise leave out. xlsx is pinned to the
  # registry's copy (n8n names a CDN tarball); langgraph-checkpoint 1.0.0
  # matches n8n's @langchain/core.
  (cd "$n8n_dir" && npm install --ignore-scripts --legacy-peer-deps --no-audit --no-fund >/dev/null)
  # sqlite3's binding is built from source (its prebuilt download is outside the registry).
  nodedir=()
  [ -d /usr/include/node ] && nodedir=(--nodedir=/usr)
  (cd "$n8n_dir" && npm rebuild sqlite3 "${nodedir[@]}" >/dev/null)
  touch "$n8n_dir/.installed"
fi
n8n() { node "$n8n_dir/node_modules/n8n/bin/n8n" "$@"; }

# ---- 2. the package
# The benchmark (BENCH_RUNS) measures the release build.
if [ -n "${BENCH_RUNS:-}" ]; then profile=release; else profile=debug; fi
say "building the n8n-package example ($profile)"
(cd "$root" && cargo build -p n8n-package --locked --profile "${profile/debug/dev}")
program="$root/target/$profile/n8n-package"
pkg="$work/custom/n8n-nodes-text"
"$program" package --builtins --out "$pkg" --name n8n-nodes-text > "$work/package-report.json"

# ---- the environment n8n runs in: loopback only, nothing phoned home
export N8N_USER_FOLDER="$work/home"
export N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PORT="$port" N8N_PROTOCOL=http
export N8N_RUNNERS_BROKER_LISTEN_ADDRESS=127.0.0.1 N8N_RUNNERS_BROKER_PORT=$((port + 1))
export N8N_DIAGNOSTICS_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false
export N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED=false N8N_TEMPLATES_ENABLED=false
export N8N_PERSONALIZATION_ENABLED=false N8N_HIRING_BANNER_ENABLED=false N8N_DYNAMIC_BANNERS_ENABLED=false
export N8N_LICENSE_AUTO_RENEW_ENABLED=false N8N_AI_ENABLED=false
export N8N_PUBLIC_API_DISABLED=true N8N_PUBLIC_API_SWAGGERUI_DISABLED=true
export N8N_COMMUNITY_PACKAGES_ENABLED=false N8N_VERIFIED_PACKAGES_ENABLED=false N8N_UNVERIFIED_PACKAGES_ENABLED=false
export N8N_SECURE_COOKIE=false N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=true N8N_PYTHON_ENABLED=false
export DB_TYPE=sqlite N8N_LOG_LEVEL=${N8N_LOG_LEVEL:-warn} N8N_LOG_OUTPUT=console
export N8N_ENCRYPTION_KEY=nodekit-e2e-key-0123456789 EXTERNAL_FRONTEND_HOOKS_URLS=
export N8N_CUSTOM_EXTENSIONS="$work/custom"

# ---- the scripted model and the shop database
PORT=$mock_port REQUEST_LOG="$work/requests.jsonl" setsid node "$here/scripted-openai.js" &
pids+=($!)
N8N_DIR="$n8n_dir" node "$here/make-shop.js" "$work/shop.db"

# ---- 3. n8n lists the nodes
say "starting n8n on 127.0.0.1:$port"
start=$(now)
setsid node "$n8n_dir/node_modules/n8n/bin/n8n" start > "$work/n8n.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$port"
# Until n8n has started, every path answers "n8n is starting up. Please wait" (status 200).
started() { curl -sf "$url/rest/settings" 2>/dev/null | head -c1 | grep -q '{'; }
for _ in $(seq 600); do
  started && break
  sleep 0.2
done
started || { cat "$work/n8n.log" >&2; echo "n8n did not start" >&2; exit 1; }
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
