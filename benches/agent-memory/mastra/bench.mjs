// Mastra's agent memory (@mastra/memory over @mastra/libsql, one local file)
// measured step for step as runtime/benches/agent_memory.rs measures
// nodekit's: the same messages, the same 384-dimension feature-hashing
// embedder, the same loads and the same timed calls. No LLM.
//
// Usage (from this folder): npm ci && node bench.mjs   (prints one JSON object)
// Env: BENCH_N (messages in the thread, default 10000), BENCH_APPENDS
// (default 1000), BENCH_ITERS (default 300), BENCH_DB (the database file,
// default ./bench-data/bench.db, deleted first).
import { mkdirSync, rmSync, existsSync, statSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Memory } from '@mastra/memory';
import { LibSQLStore, LibSQLVector } from '@mastra/libsql';

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_N ?? 10000);
const APPENDS = Number(process.env.BENCH_APPENDS ?? 1000);
const ITERS = Number(process.env.BENCH_ITERS ?? 300);
const DB = process.env.BENCH_DB ?? join(here, 'bench-data', 'bench.db');
const DIM = 384;

// ---- the generator and embedder nodekit's benchmark reproduces -------------
let seed = 0x9e3779b9;
const rand = () => {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 0x100000000;
};
const WORDS = ('invoice customer refund shipping delay postgres redis workflow node agent memory token window ' +
  'summary error retry webhook schedule cron email slack github issue deploy docker kubernetes backup ' +
  'password login oauth credential spreadsheet report chart budget travel hotel flight weather paris berlin ' +
  'tokyo coffee pizza recipe garden music guitar piano football tennis meeting calendar deadline project').split(' ');
const sentence = (n) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');

function hashEmbed(text) {
  const v = new Float64Array(DIM);
  for (const w of text.toLowerCase().split(/\s+/).filter(Boolean)) {
    const h = createHash('sha1').update(w).digest();
    v[h.readUInt32BE(0) % DIM] += h[4] & 1 ? 1 : -1;
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm) || 1;
  return Array.from(v, (x) => x / norm);
}
const embedder = {
  specificationVersion: 'v2',
  provider: 'fake-hash',
  modelId: `feature-hash-${DIM}`,
  maxEmbeddingsPerCall: 2048,
  supportsParallelCalls: true,
  async doEmbed({ values }) {
    return { embeddings: values.map(hashEmbed), usage: { tokens: 0 } };
  },
};

// ---- helpers -----------------------------------------------------------------
const pct = (arr, p) => {
  const s = [...arr].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const r3 = (x) => Math.round(x * 1000) / 1000;
const stats = (arr) => ({ p50_ms: r3(pct(arr, 50)), p99_ms: r3(pct(arr, 99)) });
const version = (p) => JSON.parse(readFileSync(join(here, 'node_modules', p, 'package.json'), 'utf8')).version;

const base = Date.UTC(2025, 0, 1);
function message(i, threadId, resourceId) {
  const role = i % 2 === 0 ? 'user' : 'assistant';
  const text = `${role === 'user' ? 'Q' : 'A'}${i}: ${sentence(8 + Math.floor(rand() * 24))}`;
  return {
    id: `${threadId}-m${String(i).padStart(7, '0')}`,
    role,
    type: 'text',
    createdAt: new Date(base + i * 1000),
    threadId,
    resourceId,
    content: { format: 2, parts: [{ type: 'text', text }], content: text },
  };
}

// ---- setup -------------------------------------------------------------------
mkdirSync(dirname(DB), { recursive: true });
for (const suffix of ['', '-wal', '-shm']) if (existsSync(DB + suffix)) rmSync(DB + suffix);
const url = `file:${DB}`;
const storage = new LibSQLStore({ id: 'bench-store', url });
const vector = new LibSQLVector({ id: 'bench-vector', url });
const memory = new Memory({
  storage, vector, embedder,
  options: {
    lastMessages: 20,
    semanticRecall: { topK: 5, messageRange: { before: 2, after: 1 }, scope: 'thread' },
    workingMemory: { enabled: false },
  },
});
const storageOnly = new Memory({ storage, options: { lastMessages: 20, semanticRecall: false, workingMemory: { enabled: false } } });
const thread = async (m, id, resourceId) => m.saveThread({
  thread: { id, resourceId, title: id, createdAt: new Date(base), updatedAt: new Date(base), metadata: {} },
});

const resourceId = 'user-1';
const threadId = 'thread-bench';
await thread(memory, threadId, resourceId);
await thread(memory, 'thread-other', 'user-2');
for (let i = 0; i < 50; i++) await memory.saveMessages({ messages: [message(i, 'thread-other', 'user-2')] });

// Load: batches of 1,000, each embedded and indexed.
let t = performance.now();
for (let i = 0; i < N; i += 1000) {
  const batch = [];
  for (let j = i; j < Math.min(N, i + 1000); j++) batch.push(message(j, threadId, resourceId));
  await memory.saveMessages({ messages: batch });
}
const loadS = (performance.now() - t) / 1000;

// Single-message appends, each embedded and indexed before it returns.
const returned = [];
t = performance.now();
for (let j = N; j < N + APPENDS; j++) {
  const m = message(j, threadId, resourceId);
  const s = performance.now();
  await memory.saveMessages({ messages: [m] });
  returned.push(performance.now() - s);
}
const appendS = (performance.now() - t) / 1000;

// Storage only: another thread, semantic recall off.
await thread(storageOnly, 'thread-storage-only', resourceId);
const calls = [];
t = performance.now();
for (let j = 0; j < APPENDS; j++) {
  const m = message(j, 'thread-storage-only', resourceId);
  const s = performance.now();
  await storageOnly.saveMessages({ messages: [m] });
  calls.push(performance.now() - s);
}
const storageS = (performance.now() - t) / 1000;

// Recall with a new search string each time: embeds, searches, expands and
// merges with the 20 newest messages.
const recall = [];
let recalled = 0;
for (let q = 0; q < ITERS; q++) {
  const input = `recall ${q}: ${sentence(10)}`;
  const s = performance.now();
  const r = await memory.recall({ threadId, resourceId, vectorSearchString: input });
  recall.push(performance.now() - s);
  recalled = r.messages.length;
}
// The recent window alone.
const window = [];
for (let q = 0; q < ITERS; q++) {
  const s = performance.now();
  await memory.recall({ threadId, resourceId });
  window.push(performance.now() - s);
}

const ru = process.resourceUsage();
const dbBytes = ['', '-wal'].reduce((acc, s) => acc + (existsSync(DB + s) ? statSync(DB + s).size : 0), 0);
console.log(JSON.stringify({
  what: 'Mastra Memory over LibSQLStore + LibSQLVector on one file, same messages and 384-dim hash embedder as nodekit',
  versions: {
    node: process.version,
    '@mastra/memory': version('@mastra/memory'),
    '@mastra/core': version('@mastra/core'),
    '@mastra/libsql': version('@mastra/libsql'),
  },
  n: N,
  load: { batches_s: r3(loadS), msgs_per_s: Math.round(N / loadS) },
  append_with_embedding: { count: APPENDS, returned: stats(returned), msgs_per_s: Math.round(APPENDS / appendS) },
  append_storage_only: { count: APPENDS, store: { ...stats(calls), msgs_per_s: Math.round(APPENDS / storageS) } },
  recall: stats(recall),
  recall_messages: recalled,
  recent_window_20: stats(window),
  peak_rss_mb: r3(ru.maxRSS / 1024),
  db_file_mb: r3(dbBytes / 1048576),
}, null, 2));
process.exit(0);
