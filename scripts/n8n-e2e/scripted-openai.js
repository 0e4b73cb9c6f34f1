'use strict';
// A scripted OpenAI-compatible server on 127.0.0.1 for the n8n end-to-end
// run: POST /v1/chat/completions answers the first round with a call of the
// first offered tool whose name matches TOOL_PATTERN (default: any) and, once the
// request carries a tool result, with a final answer that quotes it.
// TOOL_ARGS holds the arguments of every tool the runs use; a tool keeps
// the ones its schema names. Every chat request is appended to REQUEST_LOG
// as one JSON line. POST /v1/embeddings answers bags of words (each word
// hashed into one of 64 slots, the vector scaled to length 1), so texts
// sharing words are near.
// A marker `[table:NAME]` in the conversation's last user message makes
// the tool call name table NAME instead (scripts/n8n-queue.sh uses it);
// `[status:NNN]` makes the answer an OpenAI error with that HTTP status
// (scripts/litellm.sh uses it).
// POST /v1/messages plays the same script in Anthropic's Messages API
// format (a `tool_use` block, then text quoting the `tool_result`), whole
// or as its event stream.
//
//   PORT=18080 REQUEST_LOG=requests.jsonl node scripted-openai.js

const http = require('http');
const fs = require('fs');

const port = Number(process.env.PORT || 18080);
const log = process.env.REQUEST_LOG || 'requests.jsonl';
const pattern = new RegExp(process.env.TOOL_PATTERN || '.', 'i');
const toolArgs = JSON.parse(process.env.TOOL_ARGS
  || '{"tableName":"customers","orderBy":"id","text":"hi","input":"when to bleed the radiators"}');
let calls = 0;

function completion(message, finish) {
  calls += 1;
  return {
    id: `chatcmpl-${calls}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
  };
}

/** The text of the conversation's last user message. */
function lastUserText(messages) {
  const user = messages.filter((m) => m.role === 'user').pop();
  if (!user) return '';
  const { content } = user;
  return Array.isArray(content) ? content.map((p) => (p && p.text) || '').join('') : String(content || '');
}

function answer(body) {
  const messages = body.messages || [];
  const last = messages[messages.length - 1] || {};
  const table = /\[table:(\w+)\]/.exec(lastUserText(messages));
  const args = table ? { ...toolArgs, tableName: table[1] } : toolArgs;
  if (last.role === 'tool') {
    return completion({ role: 'assistant', content: `Here is what the database says: ${last.content}` }, 'stop');
  }
  const tool = (body.tools || []).map((t) => t.function.name).find((n) => pattern.test(n));
  if (!tool) return completion({ role: 'assistant', content: 'No tool was offered.' }, 'stop');
  return completion({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${calls + 1}`, type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }],
  }, 'tool_calls');
}

/** The same script in Anthropic's Messages API format. */
function anthropicAnswer(body) {
  const messages = body.messages || [];
  const last = messages[messages.length - 1] || {};
  const result = Array.isArray(last.content) ? last.content.find((b) => b.type === 'tool_result') : null;
  calls += 1;
  const message = (content, stopReason) => ({
    id: `msg_${calls}`, type: 'message', role: 'assistant', model: body.model || 'scripted', content,
    stop_reason: stopReason, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 10 },
  });
  if (result) {
    const text = typeof result.content === 'string' ? result.content
      : (result.content || []).map((b) => b.text || '').join('');
    return message([{ type: 'text', text: `Here is what the database says: ${text}` }], 'end_turn');
  }
  const tool = (body.tools || []).map((t) => t.name).find((n) => pattern.test(n));
  if (!tool) return message([{ type: 'text', text: 'No tool was offered.' }], 'end_turn');
  return message([{ type: 'tool_use', id: `toolu_${calls}`, name: tool, input: toolArgs }], 'tool_use');
}

/** A whole Anthropic message as the events of its stream. */
function anthropicEvents(m) {
  const events = [['message_start', { type: 'message_start', message: { ...m, content: [], stop_reason: null, usage: { input_tokens: 50, output_tokens: 1 } } }]];
  m.content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: start }]);
    const delta = block.type === 'text' ? { type: 'text_delta', text: block.text }
      : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
    events.push(['content_block_delta', { type: 'content_block_delta', index, delta }]);
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: m.stop_reason, stop_sequence: null }, usage: { output_tokens: 10 } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

const DIMS = 64;
function bagOfWords(text) {
  const v = new Array(DIMS).fill(0);
  for (const word of String(text).toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean)) {
    let h = 0x811c9dc5;
    for (const b of Buffer.from(word)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    v[h % DIMS] += 1;
  }
  const n = Math.hypot(...v);
  return n > 0 ? v.map((x) => x / n) : v;
}

function embeddings(body) {
  const input = Array.isArray(body.input) ? body.input : [body.input];
  return {
    object: 'list',
    model: body.model || 'bag-of-words',
    data: input.map((text, index) => ({ object: 'embedding', index, embedding: bagOfWords(text) })),
    usage: { prompt_tokens: input.length, total_tokens: input.length },
  };
}

http.createServer((req, res) => {
  let text = '';
  req.on('data', (c) => { text += c; });
  req.on('end', () => {
    if (req.method === 'GET' && req.url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }));
      return;
    }
    if (req.method === 'POST' && req.url.endsWith('/embeddings')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(embeddings(JSON.parse(text || '{}'))));
      return;
    }
    if (req.method === 'POST' && req.url.endsWith('/v1/messages')) {
      const body = JSON.parse(text || '{}');
      fs.appendFileSync(log, JSON.stringify(body) + '\n');
      const reply = anthropicAnswer(body);
      res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' });
      res.end(body.stream ? anthropicEvents(reply) : JSON.stringify(reply));
      return;
    }
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404);
      res.end();
      return;
    }
    const body = JSON.parse(text || '{}');
    fs.appendFileSync(log, JSON.stringify(body) + '\n');
    const status = /\[status:(\d{3})\]/.exec(lastUserText(body.messages || []));
    if (status) {
      const code = Number(status[1]);
      const type = code === 429 ? 'rate_limit_exceeded' : 'invalid_request_error';
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `scripted failure ${code}`, type, param: null, code: type } }));
      return;
    }
    const reply = answer(body);
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const m = reply.choices[0].message;
      const delta = { role: 'assistant', content: m.content || '' };
      if (m.tool_calls) delta.tool_calls = m.tool_calls.map((t, index) => ({ index, ...t }));
      res.write(`data: ${JSON.stringify({ ...reply, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...reply, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: reply.choices[0].finish_reason }] })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply));
  });
}).listen(port, '127.0.0.1');
