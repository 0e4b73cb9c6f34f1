#!/usr/bin/env bash
# Agent-loop overhead per model call: nodekit and LangChain JS (the peer
# harness in ../shared/peers/langchain-agent-bench) against the same local
# mock OpenAI server, in one run. Not part of the test command.
#
#   benches/agent-loop/run.sh          (env: PORT, BENCH_N, BENCH_R, BENCH_REPS, BENCH_MODES)
#
# The peer is copied to a scratch folder and installed there from the npm
# registry; nothing of it is kept in the repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
peer="$root/../shared/peers/langchain-agent-bench"
[ -d "$peer" ] || { echo "the peer harness is not at $peer" >&2; exit 1; }
scratch=$(mktemp -d -t nodekit-agent-bench-XXXXXX)
mock_pid=
cleanup() { [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT

cp -r "$peer"/. "$scratch"/
echo "installing the LangChain JS peer (npm) ..." >&2
(cd "$scratch" && npm install --legacy-peer-deps --ignore-scripts --no-audit --no-fund >/dev/null 2>&1)

port=${PORT:-8765}
PORT=$port python3 "$scratch/mock_openai.py" >/dev/null 2>&1 &
mock_pid=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/stats')" 2>/dev/null && break
  sleep 0.2
done
export MOCK_URL="http://127.0.0.1:$port"

echo "== LangChain JS (peer)" >&2
(cd "$scratch" && BENCH_MODES="${BENCH_MODES:-fetch_const,createAgent,classic_executor}" BENCH_JSON="$scratch/peer.json" node bench.mjs)

echo "== nodekit" >&2
(cd "$root" && BENCH_JSON="$scratch/nodekit.json" cargo bench -q -p nodekit --bench agent_loop)

python3 - "$scratch/peer.json" "$scratch/nodekit.json" <<'PY'
import json, sys
peer = json.load(open(sys.argv[1]))
ours = json.load(open(sys.argv[2]))
rows = peer.get("results", peer) if isinstance(peer, dict) else peer
def overhead(client, n):
    for r in rows:
        if r.get("mode", r.get("client")) == client and int(r.get("n", r.get("tools", -1))) == n:
            return r.get("overhead_us_median", r.get("overhead_us_per_call", r.get("overhead")))
our_floor = next(o["overhead_us_per_call"] for o in ours if o["client"] == "reqwest_const")
js_floor = overhead("fetch_const", 1)
fmt = lambda v: f"{v:.0f}" if isinstance(v, (int, float)) else "?"
ratio = lambda a, b: f"{a/b:.1f}x" if isinstance(a, (int, float)) and b > 0 else "?"
print(f"\nHTTP floors (bare client, constant body): reqwest {our_floor:.0f} µs/call, Node fetch {fmt(js_floor)} µs/call")
print("\n| tools N | nodekit | createAgent | ratio | classic AgentExecutor | ratio | nodekit − floor | createAgent − floor | ratio | classic − floor | ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for o in ours:
    if o["client"] != "nodekit":
        continue
    n = o["tools"]; us = o["overhead_us_per_call"]
    ca = overhead("createAgent", n); ce = overhead("classic_executor", n)
    ours_fw = max(us - our_floor, 1.0)
    ca_fw = ca - js_floor if isinstance(ca, (int, float)) and js_floor else None
    ce_fw = ce - js_floor if isinstance(ce, (int, float)) and js_floor else None
    print(f"| {n} | {us:.0f} | {fmt(ca)} | {ratio(ca, us)} | {fmt(ce)} | {ratio(ce, us)} | {ours_fw:.0f} | {fmt(ca_fw)} | {ratio(ca_fw, ours_fw)} | {fmt(ce_fw)} | {ratio(ce_fw, ours_fw)} |")
PY
