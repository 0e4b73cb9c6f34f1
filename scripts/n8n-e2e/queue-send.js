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
// With MIX set to a JSON array of further targets ({"url", "session",
// "results", "variant", and "expect": an array in place of EXPECT's}),
// COUNT requests go to each target and to URL's, interleaved in one stream
// (request k to target k mod the number of targets), CONCURRENCY (or RATE)
// being the whole stream's: every target meets the same load at the same
// moments.
// Each target's requests go to its RESULTS file, and one summary line is
// printed per target (its throughput: its requests over the stream's time).
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

const BOTH_CUSTOMERS = ['Ada Lovelace', 'Grace Hopper'];

/** What answers must quote: the JSON array `expect`, or both customers. */
function expectedOf(expect) {
  return expect ? JSON.parse(expect) : BOTH_CUSTOMERS;
}

/** Whether `r` is an answer quoting every string of `expected`. */
function answered(r, expected) {
  if (r.status !== 200) return false;
  try {
    const output = String(JSON.parse(r.body).output || '');
    return expected.every((text) => output.includes(text));
  } catch (e) {
    return false;
  }
}

function summary(variant, results, concurrency, seconds, expected) {
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  return {
    variant,
    requests: results.length,
    concurrency,
    failed: results.filter((r) => !answered(r, expected)).length,
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
  console.log(JSON.stringify(summary(variant, results, Number(concurrency), seconds, expectedOf(process.env.EXPECT))));
  process.exit(0);
}

const [url, countText, concurrencyText, session, message, resultsFile, variant = 'requests'] = process.argv.slice(2);
const targets = [
  { url, session, results: resultsFile, variant, expected: expectedOf(process.env.EXPECT) },
  ...JSON.parse(process.env.MIX || '[]').map((t) => ({ ...t, expected: t.expect || BOTH_CUSTOMERS })),
];
const count = Number(countText);
const concurrency = Number(concurrencyText);
const rate = Number(process.env.RATE || 0);
const agent = new http.Agent({ keepAlive: true, maxSockets: rate > 0 ? Infinity : concurrency });
const TIMEOUT_MS = 180000;

function post(url, body) {
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
  const total = count * targets.length;
  const results = targets.map(() => new Array(count));
  const started = process.hrtime.bigint();
  // Request k of the stream: request k / targets of target k % targets.
  const one = async (k) => {
    const target = targets[k % targets.length];
    const i = Math.floor(k / targets.length);
    const s = `${target.session}-${String(i).padStart(4, '0')}`;
    const m = message.replace(/\{session\}/g, s);
    results[k % targets.length][i] = { session: s, message: m, ...(await post(target.url, { session: s, message: m })) };
  };
  if (rate > 0) {
    const first = Date.now();
    await Promise.all(Array.from({ length: total }, async (_, k) => {
      await new Promise((resolve) => setTimeout(resolve, first + (k * 1000) / rate - Date.now()));
      await one(k);
    }));
  } else {
    let next = 0;
    const worker = async () => {
      while (next < total) await one(next++);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  let failures = 0;
  targets.forEach((target, t) => {
    fs.appendFileSync(target.results, results[t].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const failed = results[t].filter((r) => !answered(r, target.expected));
    failures += failed.length;
    for (const r of failed.slice(0, 3)) console.error(`failed: ${r.session}: HTTP ${r.status}: ${r.body.slice(0, 600)}`);
    const line = summary(target.variant, results[t], concurrency, seconds, target.expected);
    console.log(JSON.stringify({ ...line, ...(rate > 0 ? { rate } : {}) }));
  });
  process.exitCode = failures ? 1 : 0;
})();
