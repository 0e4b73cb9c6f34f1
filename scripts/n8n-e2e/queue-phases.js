'use strict';
// Where the load's requests spent their time, per workflow, from n8n's own
// records of each execution (execution_entity's createdAt, startedAt and
// stoppedAt), matched to the requests by the session in the run data.
//
//   N8N_DIR=... node queue-phases.js N8N_DATABASE_URL PREFIX RESULTS.jsonl...
//
// For the requests of RESULTS whose session starts with PREFIX, prints one
// JSON line per file: {"file", "requests", and p50/p99 in ms of
//   "main":   request sent -> execution stored (main's webhook handling),
//   "queued": stored -> started by a worker (Bull's queue),
//   "run":    started -> stopped (the workflow itself, on the worker),
//   "answer": stopped -> response received (the answer's way back)}.
// The phases of one request add up to its latency, give or take a
// millisecond of clock rounding. Two parts of "run", from the nodes' own
// run records: "setup", the Webhook node's end -> the memory's first run
// (the agent starting and its sub-nodes supplying their objects), and
// "agent", the memory's first run -> the agent's end (loading the memory,
// the model's two calls, the tool's run, saving the memory). A nodekit
// memory's run is recorded when the bridge answers, n8n's when the call
// begins: nodekit's "setup" holds its first memory load.
const fs = require('fs');
const path = require('path');

const modules = path.join(process.env.N8N_DIR, 'node_modules');
const { Client } = require(path.join(modules, 'pg'));
const { parse } = require(path.join(modules, 'flatted'));

const percentile = (sorted, p) => (sorted.length ? sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] : 0);

(async () => {
  const [url, prefix, ...files] = process.argv.slice(2);
  const db = new Client({ connectionString: url });
  await db.connect();
  const { rows } = await db.query(`SELECT extract(epoch from e."createdAt") * 1000 AS created,
    extract(epoch from e."startedAt") * 1000 AS started, extract(epoch from e."stoppedAt") * 1000 AS stopped, d.data
    FROM execution_entity e JOIN execution_data d ON d."executionId" = e.id`);
  await db.end();
  const bySession = new Map();
  for (const row of rows) {
    let runData;
    try {
      runData = parse(row.data).resultData.runData;
    } catch (e) {
      continue;
    }
    const webhook = (runData.Webhook || [])[0];
    const session = webhook && JSON.stringify(webhook.data || {}).match(/"session":"([^"]+)"/);
    const memory = (runData['Chat memory'] || [])[0];
    const agent = (runData['AI Agent'] || [])[0];
    if (!session) continue;
    bySession.set(session[1], {
      created: +row.created,
      started: +row.started,
      stopped: +row.stopped,
      setup: memory && memory.startTime - (webhook.startTime + webhook.executionTime),
      agent: memory && agent && agent.startTime + agent.executionTime - memory.startTime,
    });
  }
  for (const file of files) {
    const phases = { main: [], queued: [], run: [], setup: [], agent: [], answer: [] };
    let matched = 0;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line);
      const e = bySession.get(r.session);
      if (!r.session.startsWith(prefix) || !e || !r.at) continue;
      matched += 1;
      phases.main.push(e.created - r.at);
      phases.queued.push(e.started - e.created);
      phases.run.push(e.stopped - e.started);
      if (e.setup !== undefined) phases.setup.push(e.setup);
      if (e.agent !== undefined) phases.agent.push(e.agent);
      phases.answer.push(r.at + r.ms - e.stopped);
    }
    const out = { file: path.basename(file), requests: matched };
    for (const [name, values] of Object.entries(phases)) {
      values.sort((a, b) => a - b);
      out[name] = { p50_ms: Math.round(percentile(values, 0.5)), p99_ms: Math.round(percentile(values, 0.99)) };
    }
    console.log(JSON.stringify(out));
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
