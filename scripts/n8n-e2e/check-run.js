'use strict';
// Checks the end-to-end run: n8n's run data, the scripted model's requests
// and the memory database.
//   N8N_DIR=... node check-run.js VARIANT RUN_OUTPUT REQUESTS_JSONL MEMORY_DB
const path = require('path');
const { readRun, readRequests } = require('./run-data');

const [variant, runFile, requestsFile, memoryDb] = process.argv.slice(2);
const { runData, json, fail } = readRun(runFile);
const answer = (json('AI Agent', 'main')[0] || {}).output || '';
console.error(`agent answer: ${answer}`);
if (!answer.includes('Ada Lovelace') || !answer.includes('Grace Hopper')) fail('the answer does not quote the database');

const tool = json('Read customers', 'ai_tool');
if (!tool.length || !tool[0].success || tool[0].data.length !== 2) fail(`the tool output: ${JSON.stringify(tool)}`);

const memoryRuns = runData['Chat memory'] || [];
if (!memoryRuns.length) fail('the memory node has no runs in the execution data');
const actions = memoryRuns.map((r) => (((r.data || {}).ai_memory || [[]])[0][0] || {}).json || {}).map((j) => j.action);
console.error(`memory runs: ${actions.join(', ')}`);
if (!actions.includes('loadMemory') || !actions.includes('saveMemory')) fail('memory loads and saves are not both logged');

if (variant === 'nodekit-model' || variant === 'nodekit-anthropic') {
  const calls = json('Chat Model', 'ai_languageModel');
  console.error(`nodekit chat model runs: ${calls.map((c) => c.action).join(', ')}`);
  if (calls.length !== 2 || calls.some((c) => c.action !== 'invoke')) fail('the chat model calls are not in the execution data');
}

const requests = readRequests(requestsFile);
const second = requests[1] || { messages: [] };
// OpenAI's tool message, or Anthropic's tool_result block.
const toolMessage = variant === 'nodekit-anthropic'
  ? second.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_result')
  : second.messages.find((m) => m.role === 'tool');
if (requests.length !== 2 || !toolMessage || !String(toolMessage.content).includes('Ada Lovelace')) {
  fail(`the model requests: ${requests.length}, tool message ${JSON.stringify(toolMessage)}`);
}

const sqlite3 = require(path.join(process.env.N8N_DIR, 'node_modules', 'sqlite3'));
const db = new sqlite3.Database(memoryDb, sqlite3.OPEN_READONLY);
db.all('SELECT * FROM n8n_chat_histories ORDER BY id', (e, rows) => {
  if (e) { fail(`memory database: ${e.message}`); return; }
  // n8n's flat form ({type, content, ...}), as its Postgres chat memory stores it.
  const messages = rows.map((r) => JSON.parse(r.message));
  console.error(`memory holds: ${messages.map((m) => `${m.type}: ${String(m.content).slice(0, 60)}`).join(' | ')}`);
  const human = messages.find((m) => m.type === 'human');
  const ai = messages.filter((m) => m.type === 'ai').pop();
  if (!human || human.content !== 'Who are our customers?') fail('the memory lacks the question');
  if (!ai || !String(ai.content).includes('Ada Lovelace')) fail('the memory lacks the answer');
  // Each run adds its question and answer.
  const runs = { 'nodekit-model': 2, 'nodekit-anthropic': 3 }[variant] || 1;
  if (messages.length !== 2 * runs) fail(`the memory holds ${messages.length} messages after ${runs} run(s)`);
  if (rows.some((r) => r.session_id !== 'e2e-session')) fail('a message is stored under another session');
  db.close();
});
