'use strict';
// The memory check of scripts/n8n-queue.sh: every request sent to a
// workflow (RESULTS.jsonl, as queue-send.js writes them, in the order sent)
// against the chat history table and the scripted model's requests.
//
//   N8N_DIR=... node queue-check.js RESULTS.jsonl REQUESTS.jsonl DATABASE_URL TABLE [--tool-steps]
//
// - Each session's rows in TABLE are exactly its answered requests'
//   exchanges, in order: the question (human) and the agent's answer (ai);
//   a failed request leaves nothing, and no row belongs to another session.
//   With --tool-steps (n8n's own Postgres chat memory), an exchange may
//   hold the agent's tool calls and results (ai and tool messages) between
//   the question and the answer.
// - A request in a session that already had an answered one showed the
//   model that earlier exchange (its first chat request holds the earlier
//   question and answer before its own question).
const fs = require('fs');
const path = require('path');

const [resultsFile, requestsFile, databaseUrl, table, toolSteps] = process.argv.slice(2);
const { Client } = require(path.join(process.env.N8N_DIR, 'node_modules', 'pg'));
const lines = (file) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const failures = [];
const fail = (why) => { if (failures.length < 10) console.error(`FAILED: ${why}`); failures.push(why); };

const outputOf = (r) => {
  try {
    return r.status === 200 ? JSON.parse(r.body).output : undefined;
  } catch (e) {
    return undefined;
  }
};
// Stored messages: n8n's flat form ({type, content}) or LangChain's ({type, data: {content}}).
const stored = (m) => ({ type: m.type, content: m.data && m.data.content !== undefined ? m.data.content : m.content });
const text = (c) => (Array.isArray(c) ? c.map((p) => (p && p.text) || '').join('') : String(c === undefined || c === null ? '' : c));

(async () => {
  const results = lines(resultsFile);
  const sessions = new Map();
  for (const r of results) {
    if (!sessions.has(r.session)) sessions.set(r.session, []);
    sessions.get(r.session).push(r);
  }

  // ---- the table
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query(`SELECT session_id, message FROM ${table} ORDER BY id`);
  await client.end();
  const bySession = new Map();
  for (const row of rows) {
    if (!bySession.has(row.session_id)) bySession.set(row.session_id, []);
    const m = typeof row.message === 'string' ? JSON.parse(row.message) : row.message;
    bySession.get(row.session_id).push(stored(m));
  }
  for (const s of bySession.keys()) if (!sessions.has(s)) fail(`${table} holds messages of session ${s}, which no request used`);
  let answered = 0;
  for (const [s, requests] of sessions) {
    const expected = [];
    for (const r of requests) {
      const output = outputOf(r);
      if (output === undefined) continue;
      answered += 1;
      expected.push({ type: 'human', content: r.message }, { type: 'ai', content: output });
    }
    let got = (bySession.get(s) || []).map((m) => ({ type: m.type, content: text(m.content) }));
    if (toolSteps === '--tool-steps') {
      // The steps between a question and its answer: ai tool calls and tool results.
      const steps = got.filter((m, i) => m.type === 'ai' && got[i + 1] && got[i + 1].type === 'tool');
      got = got.filter((m) => m.type !== 'tool' && !steps.includes(m));
    }
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      fail(`session ${s}: ${table} holds ${got.length} messages, expected ${expected.length} `
        + `(${requests.length} requests, ${expected.length / 2} answered): `
        + `${got.map((m) => `${m.type}: ${m.content.slice(0, 50)}`).join(' | ')}`);
    }
  }

  // ---- what the model saw
  const chats = lines(requestsFile);
  const firstChatOf = new Map();
  for (const body of chats) {
    const messages = body.messages || [];
    const user = messages.filter((m) => m.role === 'user').pop();
    const key = user && text(user.content);
    if (key && !firstChatOf.has(key)) firstChatOf.set(key, messages);
  }
  let followUps = 0;
  for (const requests of sessions.values()) {
    let previous = null;
    for (const r of requests) {
      if (previous) {
        followUps += 1;
        const messages = firstChatOf.get(r.message);
        if (!messages) {
          fail(`the model never saw "${r.message}"`);
        } else {
          const own = messages.findIndex((m) => m.role === 'user' && text(m.content) === r.message);
          const before = messages.slice(0, own);
          const asked = before.findIndex((m) => m.role === 'user' && text(m.content) === previous.message);
          const told = before.findIndex((m) => m.role === 'assistant' && text(m.content) === previous.output);
          if (asked < 0 || told < asked) {
            fail(`"${r.message}": the model's request lacks the session's earlier exchange: `
              + `${JSON.stringify(messages.map((m) => [m.role, text(m.content).slice(0, 40)]))}`);
          }
          const others = before.filter((m) => m.role === 'user' && text(m.content) !== previous.message
            && !requests.some((o) => o.message === text(m.content)));
          if (others.length) fail(`"${r.message}": the model saw another session's question "${text(others[0].content)}"`);
        }
      }
      const output = outputOf(r);
      if (output !== undefined) previous = { message: r.message, output };
    }
  }
  console.log(`${table}: ${sessions.size} sessions, ${results.length} requests (${answered} answered), ${rows.length} rows: `
    + `each session holds exactly its answered exchanges in order; ${followUps} follow-up requests showed the model the session's earlier exchange`);
  process.exitCode = failures.length ? 1 : 0;
})().catch((e) => { console.error(`FAILED: ${e.stack || e}`); process.exitCode = 1; });
