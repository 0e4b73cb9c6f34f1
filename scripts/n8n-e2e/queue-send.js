'use strict';
// Sends COUNT webhook requests, CONCURRENCY at a time over kept-alive
// connections, and records each: request i posts
// {"session": "SESSION-i", "message": MESSAGE with {session} replaced}.
// A request fails unless n8n answers 200 with the agent's output quoting
// both customers of the shop database, or each string of the JSON array
// EXPECT when it is set.
//
//   node queue-send.js URL COUNT CONCURRENCY SESSION MESSAGE RESULTS.jsonl [VARIANT]
//
// With RATE set (requests a second), the load is open instead: request i
// leaves RATE-paced, i / RATE s after the first, however many are still
// waiting for their answers, and CONCURRENCY is not a limit.
//
// Appends one JSON line per request to RESULTS.jsonl ({session, message,
// status, at (sent, ms since the epoch), ms, body}) and prints {"variant", "requests", "concurrency",
// "failed", "p50_ms", "p99_ms", "throughput_rps", "seconds"} (and "rate"
// with RATE); exit status 1 if any request failed (the first failures are
// shown on standard error).
//
//   node queue-send.js --summary VARIANT RESULTS.jsonl PREFIX BATCHES.jsonl CONCURRENCY
//
// Prints the same summary for the requests of RESULTS.jsonl whose session
// starts with PREFIX, sent in the batches whose summaries BATCHES.jsonl
// holds (their seconds add up to the time the requests took).
const http = require('http');
const fs = require('fs');

const percentile = (sorted, p) => (sorted.length ? sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] : 0);

const expected = JSON.parse(process.env.EXPECT || '["Ada Lovelace", "Grace Hopper"]');

function answered(r) {
  if (r.status !== 200) return false;
  try {
    const output = String(JSON.parse(r.body).output || '');
    return expected.every((text) => output.includes(text));
  } catch (e) {
    return false;
  }
}

function summary(variant, results, concurrency, seconds) {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    variant,
    requests: results.length,
    concurrency,
    failed: results.filter((r) => !answered(r)).length,
    p50_ms: Math.round(percentile(ms, 0.5)),
    p99_ms: Math.round(percentile(ms, 0.99)),
    throughput_rps: Math.round((results.length / seconds) * 10) / 10,
    seconds: Math.round(seconds * 100) / 100,
  };
}

if (process.argv[2] === '--summary') {
  const [variant, resultsFile, prefix, batchesFile, concurrency] = process.argv.slice(3);
  const lines = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const results = lines(resultsFile).filter((r) => r.session.startsWith(prefix));
  const seconds = lines(batchesFile).reduce((sum, batch) => sum + batch.seconds, 0);
  console.log(JSON.stringify(summary(variant, results, Number(concurrency), seconds)));
  process.exit(0);
}

const [url, countText, concurrencyText, session, message, resultsFile, variant = 'requests'] = process.argv.slice(2);
const count = Number(countText);
const concurrency = Number(concurrencyText);
const rate = Number(process.env.RATE || 0);
const agent = new http.Agent({ keepAlive: true, maxSockets: rate > 0 ? Infinity : concurrency });
const TIMEOUT_MS = 180000;

function post(body) {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const at = Date.now();
    const started = process.hrtime.bigint();
    const done = (status, text) => resolve({ status, at, ms: Number(process.hrtime.bigint() - started) / 1e6, body: text });
    const req = http.request(url, {
      method: 'POST', agent, timeout: TIMEOUT_MS,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => done(res.statusCode, text));
      res.on('error', (e) => done(0, `response error: ${e.message}`));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (e) => done(0, `request error: ${e.message}`));
    req.end(data);
  });
}

(async () => {
  const results = new Array(count);
  const started = process.hrtime.bigint();
  const one = async (i) => {
    const s = `${session}-${String(i).padStart(4, '0')}`;
    const m = message.replace(/\{session\}/g, s);
    results[i] = { session: s, message: m, ...(await post({ session: s, message: m })) };
  };
  if (rate > 0) {
    const first = Date.now();
    await Promise.all(Array.from({ length: count }, async (_, i) => {
      await new Promise((resolve) => setTimeout(resolve, first + (i * 1000) / rate - Date.now()));
      await one(i);
    }));
  } else {
    let next = 0;
    const worker = async () => {
      while (next < count) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  fs.appendFileSync(resultsFile, results.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const failed = results.filter((r) => !answered(r));
  for (const r of failed.slice(0, 3)) console.error(`failed: ${r.session}: HTTP ${r.status}: ${r.body.slice(0, 600)}`);
  console.log(JSON.stringify({ ...summary(variant, results, concurrency, seconds), ...(rate > 0 ? { rate } : {}) }));
  process.exitCode = failed.length ? 1 : 0;
})();
