// The load of benches/serve/run.sh: chat sessions, each sending its
// messages one after another (n8n's chat protocol, `sendMessage`), at
// several numbers of sessions at once, against each server in turn; and
// the scripted model alone, asked the same two requests a message makes.
//
//   node load.mjs CONFIG.json > results.json
//
// CONFIG: {"servers": [{"name", "url"}], "model": URL of /v1/chat/completions,
//          "levels": [1, 16, 64], "messages": N a level, "warmup": N}
import fs from 'node:fs';
import { post, pct } from '../lib/http.mjs';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const run = `${process.pid}-${Date.now()}`;

const summary = (times, elapsed) => {
  const s = [...times].sort((a, b) => a - b);
  return { messages: s.length, p50_ms: pct(s, 50), p99_ms: pct(s, 99), mean_ms: s.reduce((a, b) => a + b, 0) / s.length, per_second: s.length / (elapsed / 1000) };
};

/** `total` messages over `sessions` sessions at once; each session sends in turn. */
async function load(send, sessions, total, tag) {
  const times = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: sessions }, async (_, s) => {
    const session = `${tag}-${run}-${sessions}-${s}`;
    while (next < total) {
      next += 1;
      const t0 = performance.now();
      const ok = await send(session).catch(() => false);
      times.push(performance.now() - t0);
      if (!ok) failures += 1;
    }
  }));
  return { ...summary(times, performance.now() - started), failures };
}

const message = (url) => async (session) => {
  const r = await post(url, { action: 'sendMessage', sessionId: session, chatInput: 'Who are our customers?' });
  if (r.status !== 200) return false;
  const output = JSON.parse(r.text).output ?? '';
  return output.includes('Here is what the database says') && output.includes('Ada Lovelace');
};

// The model's part of one message: the request that gets the tool call,
// then the one with the tool's result that gets the answer.
const tools = [{ type: 'function', function: { name: 'Read_customers', description: 'Reads the customers table', parameters: { type: 'object', properties: { tableName: { type: 'string' } } } } }];
const modelOnly = async () => {
  const first = await post(config.model, { model: 'scripted', tools, messages: [{ role: 'user', content: 'Who are our customers?' }] });
  const call = JSON.parse(first.text).choices[0].message;
  const second = await post(config.model, { model: 'scripted', tools, messages: [
    { role: 'user', content: 'Who are our customers?' }, call,
    { role: 'tool', tool_call_id: call.tool_calls[0].id, content: '[{"id":1,"name":"Ada Lovelace"}]' }] });
  return second.status === 200;
};

const results = { levels: config.levels, servers: {} };
for (const s of config.servers) {
  // Warm-up, each server in its own sessions.
  await load(message(s.url), 4, config.warmup, `warm-${s.name}`);
  results.servers[s.name] = {};
}
results.model = {};
for (const level of config.levels) {
  results.model[level] = await load(modelOnly, level, config.messages, 'model');
  for (const s of config.servers) {
    results.servers[s.name][level] = await load(message(s.url), level, config.messages, s.name);
    console.error(`${s.name} at ${level} sessions: ${JSON.stringify(results.servers[s.name][level])}`);
  }
}
console.log(JSON.stringify(results, null, 1));
agent.destroy();
