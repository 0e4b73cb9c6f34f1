#!/usr/bin/env bash
# Time per tool call across the n8n bridge (JSON in and out), through the
# generated package's own client, with the release build. Not part of the
# test command.
#
#   benches/n8n-bridge/run.sh        (env: CALLS, CONCURRENCY)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d -t nodekit-bridge-bench-XXXXXX)
trap 'rm -rf "$out"' EXIT
(cd "$root" && cargo build --release -p n8n-package --locked)
"$root/target/release/n8n-package" package --out "$out/pkg" --name n8n-nodes-text \
  --node textStatsTool > /dev/null
node "$root/benches/n8n-bridge/bench.js" "$out/pkg" "${CALLS:-5000}" "${CONCURRENCY:-16}"
