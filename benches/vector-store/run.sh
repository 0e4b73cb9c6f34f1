#!/usr/bin/env bash
# Vector stores and the text splitter: nodekit (runtime/benches/vector_store.rs)
# and LangChain JS (benches/vector-store/langchain: MemoryVectorStore,
# PGVectorStore, RecursiveCharacterTextSplitter, installed with npm into a
# scratch folder) on the same files, size after size in one run; prints one
# table with the ratios. Not part of the test command.
#
# Env:
#   SIZES      documents, both systems (default "10000 100000")
#   CORPUS_MB  megabytes of text to split, both systems (default 50; 0 skips)
#   OUT        folder for the data and the JSON results (default a new temporary one)
#   BENCH_WARMUP  untimed searches before the timed ones, both systems (default 10)
# PostgreSQL with pgvector comes from PGVECTOR_DATABASE_URL
# (`eval "$(scripts/services.sh)"`); without it PGVector is left out.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d -t nodekit-vector-store-bench-XXXXXX)}
mkdir -p "$out"
echo "results in $out" >&2
echo "commit $(git -C "$root" rev-parse --short HEAD), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/run.txt" >&2

scratch=$(mktemp -d -t nodekit-langchain-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
cp "$root"/benches/vector-store/langchain/{bench.mjs,package.json,package-lock.json} "$scratch/"
(cd "$scratch" && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund >/dev/null 2>&1)
(cd "$root" && cargo bench -q -p nodekit --bench vector_store --no-run >/dev/null 2>&1)

pg=${PGVECTOR_DATABASE_URL:-}
for n in ${SIZES-10000 100000}; do
  echo "== nodekit $n" >&2
  (cd "$root" && BENCH_N=$n BENCH_DATA="$out/data-$n" BENCH_DATABASE_URL="$pg" BENCH_JSON="$out/nodekit-$n.json" \
    cargo bench -q -p nodekit --bench vector_store >/dev/null)
  echo "== LangChain $n" >&2
  (cd "$scratch" && BENCH_DATA="$out/data-$n" BENCH_DATABASE_URL="$pg" node bench.mjs >"$out/langchain-$n.json")
done
mb=${CORPUS_MB-50}
if [ "$mb" != 0 ]; then
  echo "== nodekit splitter ($mb MB)" >&2
  (cd "$root" && BENCH_CORPUS="$out/corpus-$mb.txt" BENCH_CORPUS_MB="$mb" BENCH_JSON="$out/nodekit-split.json" \
    cargo bench -q -p nodekit --bench vector_store >/dev/null)
  echo "== LangChain splitter" >&2
  (cd "$scratch" && BENCH_CORPUS="$out/corpus-$mb.txt" node --max-old-space-size=8192 bench.mjs >"$out/langchain-split.json")
fi
python3 "$root/benches/vector-store/table.py" "$out"
