// Two things the browser test needs on 127.0.0.1, in one process:
// - a scripted OpenAI-compatible chat server (/v1/chat/completions): it
//   answers with what it was asked, word by word with pauses when the
//   request streams, so that a page can be seen receiving the answer;
// - the @n8n/chat widget's files (/chat/...), and a changed copy of them
//   (/tampered/...), from the npm package in this
//   folder, with the CORS header a module script from another origin needs.
// Usage: node helper.mjs PORT
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const port = Number(process.argv[2]);
const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, 'node_modules', '@n8n', 'chat', 'dist');
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.ico': 'image/x-icon' };

function answerTo(body) {
  const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  const asked = typeof user?.content === 'string' ? user.content : '';
  const earlier = (body.messages ?? []).filter((m) => m.role === 'user').length - 1;
  return `You asked: ${asked} Ada Lovelace lives in London. (${earlier} earlier questions)`;
}

const server = http.createServer((req, res) => {
  const copy = req.method === 'GET' && /^\/(chat|tampered)\//.exec(req.url);
  if (copy) {
    const file = path.join(dist, path.normalize(req.url.slice(copy[0].length).split('?')[0]));
    if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'content-type': types[path.extname(file)] ?? 'application/octet-stream',
      'access-control-allow-origin': '*',
    });
    // Under /tampered/, a script with one line added, as a changed copy would be.
    if (copy[1] === 'tampered' && file.endsWith('.js')) {
      res.end(Buffer.concat([fs.readFileSync(file), Buffer.from('\nconsole.log("changed");\n')]));
      return;
    }
    fs.createReadStream(file).pipe(res);
    return;
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    res.writeHead(404).end();
    return;
  }
  let text = '';
  req.on('data', (c) => (text += c));
  req.on('end', async () => {
    const body = JSON.parse(text);
    const answer = answerTo(body);
    const usage = { prompt_tokens: 10, completion_tokens: answer.split(' ').length, total_tokens: 10 + answer.split(' ').length };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', model: body.model, usage,
        choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const words = answer.split(' ');
    for (let i = 0; i < words.length; i++) {
      const content = (i === 0 ? '' : ' ') + words[i];
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: body.model,
        choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content } : { content }, finish_reason: null }] })}\n\n`);
      await new Promise((r) => setTimeout(r, 120));
    }
    res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: body.model, usage,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
});
server.listen(port, '127.0.0.1', () => console.log(`helper on http://127.0.0.1:${port}`));
