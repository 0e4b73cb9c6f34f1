#!/usr/bin/env bash
# MCP tool calls over stdio: nodekit (`nodekit mcp serve`, selectQueryTool)
# against crystaldba's postgres-mcp 0.3.0 (restricted mode, execute_sql) on
# the same PostgreSQL table, with the same client (the official MCP Python
# SDK, benches/mcp/bench.py) and the same queries, in one run; and the
# protocol floor: an rmcp server whose tool does nothing (the mcp-server
# example's temperature tool) plus the query's own time in psql; and that
# floor with the rows as JSON, made by PostgreSQL itself (json_agg). Then the
# SQL attacks of benches/mcp/attacks.json (nodekit's own attack corpus, as
# statements) through nodekit's executeSqlTool and postgres-mcp's
# execute_sql. Not part of the test command.
#
# Needs DATABASE_URL (`eval "$(scripts/services.sh)"`). postgres-mcp 0.3.0
# wants Python 3.12; on 3.11 it runs in a scratch virtual environment
# ($MCP_BENCH_DIR, default ~/.cache/nodekit-mcp-bench) installed without its
# version checks, with pglast 7.20, mcp < 2, and `typing.override` taken
# from typing_extensions (sitecustomize.py).
#
# Env: CALLS (timed calls per size, default 500), WARMUP (default 50), OUT
# (folder for the results, default a new temporary one).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/benches/mcp"
[ -n "${DATABASE_URL:-}" ] || { echo "DATABASE_URL is needed: eval \"\$(scripts/services.sh)\"" >&2; exit 1; }
dir=${MCP_BENCH_DIR:-$HOME/.cache/nodekit-mcp-bench}
out=${OUT:-$(mktemp -d -t nodekit-mcp-bench-XXXXXX)}
mkdir -p "$out"
echo "results in $out" >&2
echo "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/run.txt" >&2

# ---- postgres-mcp in a scratch virtual environment
if [ ! -f "$dir/.installed" ]; then
  echo "== installing postgres-mcp 0.3.0 into $dir" >&2
  python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install -q --no-deps --ignore-requires-python postgres-mcp==0.3.0
  "$dir/venv/bin/pip" install -q "attrs>=25.3.0" "humanize>=4.8.0" "instructor>=1.7.9" "mcp[cli]>=1.5.0,<2" \
    "pglast==7.20" "psycopg-pool>=3.2.6" "psycopg[binary]>=3.2.6" 2>&1 | grep -v "dependency conflicts\|requires pglast" || true
  site=$("$dir/venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
  echo 'import typing, typing_extensions; typing.override = getattr(typing, "override", typing_extensions.override)' \
    > "$site/sitecustomize.py"
  touch "$dir/.installed"
fi
python="$dir/venv/bin/python"

# ---- the programs
(cd "$root" && cargo build -q --release -p nodekit-nodes --bin nodekit && cargo build -q --release -p mcp-server)
nodekit="$root/target/release/nodekit"
floor="$root/target/release/mcp-server"

# ---- the data: 1,000 customers, and a table no tool may read
psql "$DATABASE_URL" -X -q <<'SQL'
DROP SCHEMA IF EXISTS mcp_bench CASCADE;
CREATE SCHEMA mcp_bench;
CREATE TABLE mcp_bench.customers (id int PRIMARY KEY, name text NOT NULL, email text NOT NULL, city text, status text);
INSERT INTO mcp_bench.customers
  SELECT n, 'Customer ' || n, 'customer' || n || '@example.com',
         (ARRAY['London', 'New York', 'Berlin', 'Paris'])[1 + n % 4], CASE WHEN n % 5 = 0 THEN 'inactive' ELSE 'active' END
  FROM generate_series(1, 1000) AS n;
CREATE TABLE mcp_bench.secrets (id int PRIMARY KEY, api_key text NOT NULL);
INSERT INTO mcp_bench.secrets VALUES (1, 'sk-live-do-not-leak');
SQL
pg=$(python3 -c 'import sys, urllib.parse as u; p = u.urlparse(sys.argv[1]); print(__import__("json").dumps({"host": p.hostname, "port": p.port or 5432, "database": p.path[1:], "user": u.unquote(p.username or ""), "password": u.unquote(p.password or ""), "ssl": "disable"}))' "$DATABASE_URL")
cat > "$out/workflow.json" <<JSON
{"nodes": [
  {"name": "AI Agent", "type": "nodekit-nodes.agent", "typeVersion": 1, "parameters": {}},
  {"name": "Select Rows", "type": "nodekit-nodes.selectQueryTool", "typeVersion": 1,
   "parameters": {"options": {"allowedTables": "customers", "deniedTables": "secrets", "schema": "mcp_bench", "maxRows": 1000}}},
  {"name": "Run Query", "type": "nodekit-nodes.executeSqlTool", "typeVersion": 1,
   "parameters": {"options": {"allowedTables": "customers", "deniedTables": "secrets", "schema": "mcp_bench", "maxRows": 1000}}}
 ],
 "connections": {
  "Select Rows": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]},
  "Run Query": {"ai_tool": [[{"node": "AI Agent", "type": "ai_tool", "index": 0}]]}}}
JSON
export NODEKIT_CREDENTIALS="{\"postgres\": $pg}"
sep='?'; case "$DATABASE_URL" in *\?*) sep='&' ;; esac
peer_url="${DATABASE_URL}${sep}options=-csearch_path%3Dmcp_bench"
query() { echo "SELECT * FROM mcp_bench.customers ORDER BY id LIMIT $1"; }
calls=${CALLS:-500}
cat > "$out/config.json" <<JSON
{"calls": $calls, "warmup": ${WARMUP:-50}, "attacks": $(cat "$here/attacks.json"),
 "servers": [
  {"name": "nodekit", "command": "$nodekit", "args": ["mcp", "serve", "$out/workflow.json"],
   "sizes": {"1": {"tool": "Select_Rows", "args": {"tableName": "customers", "orderBy": "id", "limit": 1}, "rows": 1},
             "1000": {"tool": "Select_Rows", "args": {"tableName": "customers", "orderBy": "id", "limit": 1000}, "rows": 1000}},
   "attack": {"tool": "Run_Query", "key": "query"}},
  {"name": "postgres-mcp", "command": "$dir/venv/bin/postgres-mcp", "args": ["--access-mode", "restricted", "$peer_url"],
   "sizes": {"1": {"tool": "execute_sql", "args": {"sql": "$(query 1)"}, "rows": 1},
             "1000": {"tool": "execute_sql", "args": {"sql": "$(query 1000)"}, "rows": 1000}},
   "attack": {"tool": "execute_sql", "key": "sql"}},
  {"name": "floor (rmcp, a tool that does nothing)", "command": "$floor", "args": [],
   "sizes": {"1": {"tool": "convert_temperature", "args": {"value": 1, "unit": "C"}, "rows": 0}}}
 ]}
JSON
"$python" "$here/bench.py" "$out/config.json" > "$out/results.json"

# ---- the queries' own time, in psql (client round trip, rows received),
# and the same rows turned into JSON by PostgreSQL itself (json_agg)
psql_times() {
  { echo '\timing on'; for _ in $(seq "$calls"); do echo "$1;"; done; } > "$out/$2.sql"
  psql "$DATABASE_URL" -X -q -f "$out/$2.sql" -o /dev/null | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' > "$out/$2.txt"
}
for n in 1 1000; do
  psql_times "$(query "$n")" "psql-$n"
  psql_times "SELECT json_agg(c) FROM ($(query "$n")) c" "psql-json-$n"
done
psql "$DATABASE_URL" -X -q -c "DROP SCHEMA mcp_bench CASCADE"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
results = {r["name"].split(" ")[0]: r for r in json.load(open(f"{out}/results.json"))}
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]
nk, peer, floor = results["nodekit"], results["postgres-mcp"], results["floor"]
print("| rows | nodekit p50 / p99 | postgres-mcp p50 / p99 | lead p50 / p99 | floor p50 / p99 (rmcp + psql) | nodekit / floor p50 / p99 | JSON floor p50 / p99 (rmcp + json_agg) | nodekit / JSON floor p50 / p99 |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n in ("1", "1000"):
    r50, r99 = floor["sizes"]["1"]["p50_ms"], floor["sizes"]["1"]["p99_ms"]
    q = [float(x) for x in open(f"{out}/psql-{n}.txt")]
    j = [float(x) for x in open(f"{out}/psql-json-{n}.txt")]
    f50, f99 = r50 + pct(q, 50), r99 + pct(q, 99)
    j50, j99 = r50 + pct(j, 50), r99 + pct(j, 99)
    a, b = nk["sizes"][n], peer["sizes"][n]
    print(f"| {n} | {a['p50_ms']:.3f} / {a['p99_ms']:.3f} ms | {b['p50_ms']:.2f} / {b['p99_ms']:.2f} ms "
          f"| {b['p50_ms'] / a['p50_ms']:.1f}x / {b['p99_ms'] / a['p99_ms']:.1f}x "
          f"| {f50:.3f} / {f99:.3f} ms ({r50:.3f} + {pct(q, 50):.3f}) "
          f"| {a['p50_ms'] / f50:.2f} / {a['p99_ms'] / f99:.2f} "
          f"| {j50:.3f} / {j99:.3f} ms ({r50:.3f} + {pct(j, 50):.3f}) "
          f"| {a['p50_ms'] / j50:.2f} / {a['p99_ms'] / j99:.2f} |")
print()
for name, r in (("nodekit", nk), ("postgres-mcp", peer), ("floor", floor)):
    print(f"peak RSS {name}: {r['peak_rss_mb']:.1f} MB")
for name, r in (("nodekit", nk), ("postgres-mcp", peer)):
    a = r["attacks"]
    print(f"attacks {name}: {a['refused']} of {a['total']} refused, {a['refused_with_is_error']} of them with isError")
    for c in a["cases"]:
        if not c["refused"]:
            print(f"   not refused: {c['sql']}  ->  {c['answer'][:80]}")
PY
