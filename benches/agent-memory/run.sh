#!/usr/bin/env bash
# Agent memory: nodekit (runtime/benches/agent_memory.rs) and the Mastra peer
# (@mastra/memory 1.x + @mastra/libsql, from ../shared/peers/mastra-bench,
# installed from npm into a scratch folder) on the same messages and the same
# deterministic 384-dimension embedder, in one run. Not part of the test
# command.
#
# Env: SIZES (nodekit, default "100000 1000000"), PEER_SIZES (Mastra,
# default "10000 100000"; Mastra appends 25-34 messages/s and its database
# grows by ~82 KB a message, so 1,000,000 would take 8-11 hours and 82 GB),
# PEER_DIR (the peer harness, default ../shared/peers/mastra-bench
# beside the checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
peer_dir=${PEER_DIR:-$root/../shared/peers/mastra-bench}
out=${OUT:-$(mktemp -d -t nodekit-agent-memory-bench-XXXXXX)}
mkdir -p "$out"
echo "results in $out" >&2

for n in ${SIZES:-100000 1000000}; do
  echo "== nodekit, $n messages" >&2
  (cd "$root" && BENCH_N=$n BENCH_JSON="$out/nodekit-$n.json" \
    /usr/bin/time -v cargo bench -q -p nodekit --bench agent_memory >/dev/null 2>"$out/nodekit-$n.time")
done

if [ -n "${PEER_SIZES-10000 100000}" ]; then
  scratch=$(mktemp -d -t nodekit-mastra-XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
  cp "$peer_dir/bench.mjs" "$peer_dir/package.json" "$peer_dir/package-lock.json" "$scratch/"
  (cd "$scratch" && npm install --legacy-peer-deps --no-audit --no-fund >/dev/null 2>&1)
  for n in ${PEER_SIZES-10000 100000}; do
    echo "== Mastra, $n messages" >&2
    (cd "$scratch" && BENCH_N=$n BENCH_DB="$scratch/data/bench.db" node bench.mjs >"$out/mastra-$n.json")
    rm -rf "$scratch/data"
  done
fi

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
load = lambda f: json.load(open(f))
ours = {load(f)["n"]: load(f) for f in glob.glob(f"{out}/nodekit-*.json")}
peer = {load(f)["config"]["N"]: load(f) for f in glob.glob(f"{out}/mastra-*.json")}
print("| messages | system | append msg/s | recall p50 / p99 ms | context p50 / p99 ms | window p50 ms | peak RSS MB |")
print("|---|---|---|---|---|---|---|")
for n in sorted(set(ours) | set(peer)):
    if n in ours:
        o = ours[n]
        print(f"| {n:,} | nodekit | {o['append_single_with_embedding']['msgs_per_s']:.0f} | "
              f"{o['recall_top5']['p50_ms']} / {o['recall_top5']['p99_ms']} | "
              f"{o['context_assembly']['p50_ms']} / {o['context_assembly']['p99_ms']} | "
              f"{o['recent_window_20']['p50_ms']} | {o['peak_rss_mb']} |")
    if n in peer:
        p = peer[n]
        print(f"| {n:,} | Mastra | {p['a_append_N_with_embedding']['msgs_per_s']} | "
              f"{p['c_semantic_recall_top5']['median_ms']} / {p['c_semantic_recall_top5']['p99_ms']} | "
              f"– | {p['b_recent_window_20']['median_ms']} | {p['d_peak_rss_mb']['maxRSS_resourceUsage']} |")
PY
