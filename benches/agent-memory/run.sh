#!/usr/bin/env bash
# Agent memory: nodekit (runtime/benches/agent_memory.rs) and Mastra
# (benches/agent-memory/mastra: @mastra/memory + @mastra/libsql, installed
# with npm into a scratch folder) on the same messages, the same embedder
# and the same steps, size after size in one run; prints one table with the
# ratios. Not part of the test command.
#
# Env:
#   SIZES        messages per thread, both systems (default "1000 10000 100000")
#   NODEKIT_ONLY sizes for nodekit alone (default none; e.g. 1000000: Mastra
#                loads 100,000 messages in about an hour and grows its file by
#                ~82 KB a message, so a million is out of reach here)
#   PG_SIZES     sizes for nodekit on PostgreSQL with pgvector (default none;
#                e.g. "10000 100000"; needs PGVECTOR_DATABASE_URL, which
#                `eval "$(scripts/services.sh)"` sets; PG_AGREEMENT=0 skips
#                its agreement thread, which doubles the load)
#   THREADS      "T N": also T threads of N messages in one process (default
#                none; e.g. "1000 1000")
#   OUT          folder for the JSON results (default a new temporary one)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d -t nodekit-agent-memory-bench-XXXXXX)}
mkdir -p "$out"
echo "results in $out" >&2
echo "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/run.txt" >&2

nodekit() { # name, then env assignments
  local name=$1
  shift
  echo "== nodekit $name" >&2
  (cd "$root" && env "$@" BENCH_JSON="$out/nodekit-$name.json" \
    cargo bench -q -p nodekit --bench agent_memory >/dev/null)
}

sizes=${SIZES-1000 10000 100000}
if [ -n "$sizes" ]; then
  scratch=$(mktemp -d -t nodekit-mastra-XXXXXX)
  trap 'rm -rf "$scratch"' EXIT
  cp "$root"/benches/agent-memory/mastra/{bench.mjs,package.json,package-lock.json} "$scratch/"
  (cd "$scratch" && npm ci --no-audit --no-fund >/dev/null 2>&1)
fi
for n in $sizes; do
  nodekit "$n" BENCH_N="$n"
  echo "== Mastra $n" >&2
  (cd "$scratch" && BENCH_N=$n BENCH_DB="$scratch/data/bench.db" node bench.mjs >"$out/mastra-$n.json")
  rm -rf "$scratch/data"
done
for n in ${NODEKIT_ONLY-}; do
  nodekit "$n" BENCH_N="$n"
done
for n in ${PG_SIZES-}; do
  : "${PGVECTOR_DATABASE_URL:?PG_SIZES needs PGVECTOR_DATABASE_URL (eval \"\$(scripts/services.sh)\")}"
  nodekit "pg-$n" BENCH_N="$n" BENCH_DATABASE_URL="$PGVECTOR_DATABASE_URL" BENCH_AGREEMENT="${PG_AGREEMENT:-1}"
done
if [ -n "${THREADS-}" ]; then
  read -r t n <<<"$THREADS"
  nodekit "threads-$t-$n" BENCH_THREADS="$t" BENCH_N="$n"
fi

python3 "$root/benches/agent-memory/table.py" "$out"
