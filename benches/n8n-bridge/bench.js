'use strict';
// Time per call across the nodekit bridge, measured where n8n's shims call
// it: the package's own bridge client (lib/nodekit-bridge.js) and program.
//
//   node bench.js PACKAGE_DIR [CALLS] [CONCURRENCY]
//
// CALLS each (default 5000) after 200 warm-up calls: a line echoed by `cat`
// (the pipe round trip itself, the floor), `hello` (the bridge alone), a
// toolCall of the Text Statistics tool (JSON in and out plus a node that does
// almost nothing), and the same toolCall with CONCURRENCY (default 16) calls
// in flight. Prints one JSON object.
const path = require('path');
const { spawn } = require('child_process');
const readline = require('readline');
const dir = path.resolve(process.argv[2]);
const calls = Number(process.argv[3] || 5000);
const concurrency = Number(process.argv[4] || 16);
const { bridgeFor } = require(path.join(dir, 'lib', 'nodekit-bridge.js'));
const manifest = require(path.join(dir, 'package.json'));
// The program for this host's platform, as the shims pick it.
const bridge = bridgeFor(path.join(dir, manifest.nodekit.bridges[`${process.platform}-${process.arch}`]));

const tool = {
  node: 'n8n-nodes-text.textStatsTool', nodeName: 'Count words',
  parameters: { text: "={{ $fromAI('text') }}", wordCounts: false }, credentials: {}, item: null,
  input: { text: 'the quick brown fox jumps over the lazy dog', toolCallId: 'call_1' },
};
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function sequential(op, body, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await bridge.request(op, body, 'bench');
    times.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  times.sort((a, b) => a - b);
  return { p50_us: Math.round(percentile(times, 0.5)), p99_us: Math.round(percentile(times, 0.99)) };
}

async function concurrent(n, inFlight) {
  const t = process.hrtime.bigint();
  let next = 0;
  const worker = async () => {
    while (next++ < n) await bridge.request('toolCall', tool, 'bench');
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  return { calls_per_s: Math.round(n / seconds), in_flight: inFlight };
}

async function echo(n) {
  const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
  let answered;
  readline.createInterface({ input: cat.stdout }).on('line', () => answered());
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await new Promise((resolve) => { answered = resolve; cat.stdin.write('{"id":1}\n'); });
    times.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  cat.kill();
  times.sort((a, b) => a - b);
  return { p50_us: Math.round(percentile(times, 0.5)), p99_us: Math.round(percentile(times, 0.99)) };
}

(async () => {
  await sequential('toolCall', tool, 200);
  const out = {
    calls,
    pipe_echo: await echo(calls),
    hello: await sequential('hello', {}, calls),
    tool_call: await sequential('toolCall', tool, calls),
    tool_call_concurrent: await concurrent(calls, concurrency),
  };
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
