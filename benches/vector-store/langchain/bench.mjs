// LangChain JS's vector stores measured the way
// runtime/benches/vector_store.rs measures nodekit's: the same documents and
// queries (read from the files the Rust side writes), the same in-process
// embedder (the Mastra harness's 384-dimension feature hashing), the same
// batches and the same timed calls.
//
// - MemoryVectorStore (@langchain/classic, what n8n's Simple Vector Store
//   uses): addDocuments in batches of 1,000 (embedding included);
//   similaritySearchWithScore with k = 4 (n8n's default), embedding the
//   query included.
// - PGVectorStore (@langchain/community, what n8n's PGVector node uses) on
//   the same PostgreSQL, n8n's table layout, a fresh table: the same calls
//   (LangChain writes 500 rows per statement).
// - RecursiveCharacterTextSplitter (@langchain/textsplitters) on the corpus
//   file, chunk size 1000, overlap 200 (the Default Data Loader's).
//
// Usage (from this folder): npm ci && node bench.mjs   (prints one JSON object)
// Env: BENCH_DATA (the folder the Rust side fills: texts.json,
// queries.json), BENCH_DATABASE_URL (PostgreSQL with pgvector; PGVector is
// skipped without it), BENCH_CORPUS (a text file to split; skipped without
// it), BENCH_STORES (default "memory pgvector"; "pgvector_graph", the
// Rust side's other PGVector, runs PGVector here too).
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { MemoryVectorStore } from '@langchain/classic/vectorstores/memory';
import { PGVectorStore } from '@langchain/community/vectorstores/pgvector';
import { RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { Document } from '@langchain/core/documents';
import { Embeddings } from '@langchain/core/embeddings';
import pg from 'pg';

const here = dirname(fileURLToPath(import.meta.url));
const data = process.env.BENCH_DATA;
const stores = (process.env.BENCH_STORES ?? 'memory pgvector').split(' ').filter(Boolean);
const BATCH = 1000;
const K = 4;

const pct = (arr, p) => {
  const s = [...arr].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};
const r3 = (x) => Math.round(x * 1000) / 1000;
const stats = (arr) => ({ p50_ms: r3(pct(arr, 50)), p99_ms: r3(pct(arr, 99)) });
const version = (p) => JSON.parse(readFileSync(join(here, 'node_modules', p, 'package.json'), 'utf8')).version;

const DIM = 384;
/** The Mastra harness's feature hashing: each word adds ±1 to the
 * dimension its SHA-1 picks; L2-normalised. */
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

class HashEmbeddings extends Embeddings {
  constructor() { super({}); }
  async embedDocuments(texts) { return texts.map(hashEmbed); }
  async embedQuery(text) { return hashEmbed(text); }
}

const out = { what: 'LangChain JS vector stores, same documents, queries and feature-hashing embedder as nodekit', versions: {
  node: process.version,
  '@langchain/classic': version('@langchain/classic'),
  '@langchain/community': version('@langchain/community'),
  '@langchain/core': version('@langchain/core'),
  '@langchain/textsplitters': version('@langchain/textsplitters'),
  pg: version('pg'),
} };

async function measure(store, docs, queries) {
  const t = performance.now();
  for (let i = 0; i < docs.length; i += BATCH) {
    await store.addDocuments(docs.slice(i, i + BATCH));
  }
  const insertS = (performance.now() - t) / 1000;
  // Warm-up searches, outside the figures, as many as nodekit's
  // (BENCH_WARMUP, default 10): the first few pay for cold caches.
  for (let i = 0; i < Number(process.env.BENCH_WARMUP ?? 10); i++) {
    await store.similaritySearchWithScore('warm', K);
  }
  const times = [];
  const found = [];
  for (const q of queries) {
    const s = performance.now();
    const r = await store.similaritySearchWithScore(q, K);
    times.push(performance.now() - s);
    found.push(r.map(([d]) => d.metadata.i));
  }
  return {
    insert: { s: r3(insertS), docs_per_s: Math.round(docs.length / insertS) },
    search: stats(times),
    found,
  };
}

if (data) {
  const texts = JSON.parse(readFileSync(join(data, 'texts.json'), 'utf8'));
  const queries = JSON.parse(readFileSync(join(data, 'queries.json'), 'utf8'));
  const docs = texts.map((t, i) => new Document({ pageContent: t, metadata: { i } }));
  out.n = docs.length;
  out.dims = DIM;
  if (stores.includes('memory')) {
    const store = new MemoryVectorStore(new HashEmbeddings());
    const { found, ...figures } = await measure(store, docs, queries);
    out.memory = { ...figures, found: found.slice(0, 20) };
  }
  const url = process.env.BENCH_DATABASE_URL;
  if (stores.some((s) => s.startsWith('pgvector')) && url) {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    const table = `lc_vectors_${process.pid}`;
    const store = await PGVectorStore.initialize(new HashEmbeddings(), { pool, tableName: table });
    const { found, ...figures } = await measure(store, docs, queries);
    out.pgvector = { ...figures, table, found: found.slice(0, 20) };
    await pool.query(`DROP TABLE ${table}`);
    await store.end();
  }
}

const corpus = process.env.BENCH_CORPUS;
if (corpus) {
  const text = readFileSync(corpus, 'utf8');
  const splitter = new RecursiveCharacterTextSplitter({ chunkSize: 1000, chunkOverlap: 200 });
  const t = performance.now();
  const chunks = await splitter.splitText(text);
  const s = (performance.now() - t) / 1000;
  const digest = createHash('sha1');
  for (const c of chunks) digest.update(c).update('\u0000');
  out.splitter = { bytes: Buffer.byteLength(text), s: r3(s), mb_per_s: r3(Buffer.byteLength(text) / 1048576 / s), chunks: chunks.length, sha1: digest.digest('hex') };
}

out.peak_rss_mb = r3(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify(out, null, 2));
process.exit(0);
