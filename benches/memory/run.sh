#!/usr/bin/env bash
# Conversation memory: nodekit on SQLite, PostgreSQL and Redis, and LangChain
# JS (PostgresChatMessageHistory + BufferWindowMemory) on the same PostgreSQL
# table, in one run. Starts the servers with scripts/services.sh. Not part of
# the test command.   Env: BENCH_SESSIONS, BENCH_MESSAGES, BENCH_OPS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
eval "$("$root/scripts/services.sh")"
scratch=$(mktemp -d -t nodekit-memory-bench-XXXXXX)
trap 'rm -rf "$scratch"' EXIT

echo "== nodekit" >&2
(cd "$root" && BENCH_JSON="$scratch/nodekit.json" cargo bench -q -p nodekit --bench memory)

echo "== LangChain JS (installing from npm)" >&2
cp "$root/benches/memory/langchain.mjs" "$scratch/"
(cd "$scratch" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --ignore-scripts --legacy-peer-deps --no-audit --no-fund pg @langchain/community @langchain/classic @langchain/core >/dev/null 2>&1)
(cd "$scratch" && BENCH_JSON="$scratch/peer.json" node langchain.mjs)

python3 - "$scratch/nodekit.json" "$scratch/peer.json" <<'PY'
import json, sys
ours = {r["store"]: r for r in json.load(open(sys.argv[1])) if "store" in r}
peer = json.load(open(sys.argv[2]))
pg = ours.get("PostgreSQL")
if pg:
    print(f"\nPostgreSQL, nodekit vs LangChain JS: window load p50 {peer['load_p50_us']/pg['load_p50_us']:.1f}x faster, "
          f"save p50 {peer['save_p50_us']/pg['save_p50_us']:.1f}x faster")
PY
