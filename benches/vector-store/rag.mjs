// The load of benches/vector-store/rag.sh: retrievals from one PGVector
// table, timed at several numbers of requests in flight, path after path:
//   - serve: chat messages to `nodekit serve` (n8n's `sendMessage`), one
//     server for each workflow;
//   - bridge: requests to one `nodekit bridge` process through the
//     generated package's own client (lib/nodekit-bridge.js), shaped as the
//     package's shims send them.
// Every answer is checked (a wrong or failed one counts as a failure).
//
//   node rag.mjs CONFIG.json > results.json
//
// For each level it also samples (`ss`, every 100 ms) how many connections
// the process under test holds open to PostgreSQL, and reports the peak.
//
// CONFIG: {"package": DIR, "serve": [{"name", "url", "expect", "pid"}], "pgPort": N,
//          "bridge": {"table", "postgres", "openAiApi", "queries": [text]},
//          "levels": [1, 16], "requests": N a level, "levelSeconds": S (a level
//          starts no request after S seconds), "warmup": N, "uncached": bool}
import fs from 'node:fs';
import { post, pct } from '../lib/http.mjs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const require = createRequire(import.meta.url);
const run = `${process.pid}-${Date.now()}`;


/** How many TCP connections process `pid` has open to PostgreSQL. */
const connections = (pid) => new Promise((resolve) => {
  execFile('ss', ['-tnpH', 'state', 'established', `( dport = :${config.pgPort} )`], (e, out) => {
    resolve(e ? NaN : out.split('\n').filter((l) => l.includes(`pid=${pid},`)).length);
  });
});

/** Samples `pid`'s connections until the returned function is called; it resolves with the peak. */
function sampler(pid) {
  let peak = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      peak = Math.max(peak, await connections(pid));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return async () => { on = false; await loop; return peak; };
}

/**
 * `total` requests, `inFlight` at a time, none started after `config.levelSeconds`;
 * `send(i)` resolves true when the answer is right.
 */
async function load(send, inFlight, total, pid) {
  const stop = pid ? sampler(pid) : null;
  const times = [];
  let failures = 0;
  let firstError;
  let next = 0;
  const started = performance.now();
  const deadline = performance.now() + (config.levelSeconds || Infinity) * 1000;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < total && performance.now() < deadline) {
      const i = next++;
      const t0 = performance.now();
      let ok;
      try {
        ok = await send(i);
      } catch (e) {
        ok = false;
        firstError ??= String(e && e.message || e).slice(0, 300);
      }
      times.push(performance.now() - t0);
      if (!ok) failures += 1;
    }
  }));
  const elapsed = performance.now() - started;
  const peak = stop ? await stop() : null;
  const s = times.sort((a, b) => a - b);
  return { requests: s.length, p50_ms: pct(s, 50), p99_ms: pct(s, 99), per_second: s.length / (elapsed / 1000), failures, pg_connections_peak: peak, ...(firstError ? { first_error: firstError } : {}) };
}

// ---- serve: a chat message per request, each in a session of its own
const chat = (server) => async (i) => {
  const r = await post(server.url, { action: 'sendMessage', sessionId: `rag-${run}-${i}`, chatInput: config.bridge.queries[i % config.bridge.queries.length] });
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  return r.text.includes(server.expect);
};

// ---- bridge: the package's client, its program for this platform
const pkg = path.resolve(config.package);
const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
const { bridgeFor } = require(path.join(pkg, 'lib', 'nodekit-bridge.js'));
const bridge = bridgeFor(path.join(pkg, manifest.nodekit.bridges[`${process.platform}-${process.arch}`]));
const b = config.bridge;
const embeddings = {
  node: 'nodekit-nodes.embeddingsOpenAiCompatible', nodeName: 'Embeddings', typeVersion: 1,
  parameters: { model: 'bag-of-words' }, credentials: { openAiApi: b.openAiApi }, item: null, inputs: {},
};
/** The PGVector node's target, as the shims send it (n8n has resolved its expressions). */
const store = (nodeName, parameters, item) => ({
  node: 'nodekit-nodes.vectorStorePGVector', nodeName, typeVersion: 1,
  parameters: { tableName: b.table, ...parameters }, credentials: { postgres: b.postgres },
  item, inputs: { ai_embedding: [embeddings] },
});
const query = (i) => b.queries[i % b.queries.length];
const found = (text) => typeof text === 'string' && text.includes('radiator');
const bridgePaths = {
  // The node run on an item in `load` mode (n8n: the node's execute()).
  'execute load': async (i) => {
    const item = { chatInput: query(i), sessionId: `s${i}` };
    const { result } = await bridge.request('execute', { ...store('Knowledge Base', { mode: 'load', prompt: query(i), topK: 4 }, item), input: { items: [item] } }, 'bench');
    return result.items.length === 4 && found(result.items[0].document.pageContent);
  },
  // A tool call of the node in `retrieve-as-tool` mode, as n8n 2.x's agent
  // runs it: the node's execute() on the item holding the model's arguments.
  'execute retrieve-as-tool': async (i) => {
    const item = { input: query(i), toolCallId: `call_${i}` };
    const { result } = await bridge.request('execute', { ...store('Knowledge Base', { mode: 'retrieve-as-tool', toolDescription: 'Home maintenance notes.', topK: 4 }, item), input: { items: [item] } }, 'bench');
    return found(JSON.stringify(result.items));
  },
  // A search of the vector store the node supplies in `retrieve` mode
  // (n8n's Vector Store Tool / QA chain); the same target every time, so
  // the bridge's cache of supplies answers all but the first.
  'supply (cached) vectorSearch': async (i) => {
    const { result } = await bridge.request('vectorSearch', { ...store('Knowledge Base', { mode: 'retrieve' }, null), input: { query: query(i), k: 4 } }, 'bench');
    return result.documents.length === 4 && found(result.documents[0].pageContent);
  },
  // The same search from one of 100 nodes on the same table (100 workflows,
  // say), in turn: more than the bridge keeps supplies of (64), so each is
  // supplied again. Only with "uncached": true (see rag.sh).
  ...(config.uncached ? { 'supply (uncached) vectorSearch': async (i) => {
    const { result } = await bridge.request('vectorSearch', { ...store(`Knowledge Base ${i % 100}`, { mode: 'retrieve' }, null), input: { query: query(i), k: 4 } }, 'bench');
    return result.documents.length === 4 && found(result.documents[0].pageContent);
  } } : {}),
};

const results = { levels: config.levels, requests: config.requests, paths: {} };
const paths = [
  ...config.serve.map((s) => [`serve ${s.name}`, chat(s), () => s.pid]),
  ...Object.entries(bridgePaths).map(([name, send]) => [`bridge ${name}`, send, () => bridge.child && bridge.child.pid]),
];
for (const [name, send, pid] of paths) {
  const warm = await load(send, 4, config.warmup);
  if (warm.failures) console.error(`${name}: ${warm.failures} of ${warm.requests} warm-up requests failed: ${warm.first_error ?? 'wrong answer'}`);
  results.paths[name] = {};
  for (const level of config.levels) {
    const r = await load(send, level, config.requests, pid());
    results.paths[name][level] = r;
    console.error(`${name} @${level}: p50 ${r.p50_ms.toFixed(2)} ms, p99 ${r.p99_ms.toFixed(2)} ms, ${r.per_second.toFixed(0)}/s, ${r.failures} failed, ${r.pg_connections_peak} PostgreSQL connections at most${r.first_error ? ` (${r.first_error})` : ''}`);
  }
}
console.log(JSON.stringify(results));
process.exit(0);
