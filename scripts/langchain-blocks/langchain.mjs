// Reads a history in LangChain's stored form (argv[2]) as n8n does
// (mapStoredMessagesToChatMessages) and sends it with @langchain/anthropic,
// @langchain/openai and @langchain/google-genai to a recording server on
// 127.0.0.1; prints the messages each sent:
// {"anthropic": [...], "openai": [...], "gemini": [...]}.
import http from 'node:http';
import fs from 'node:fs';
import { mapStoredMessagesToChatMessages } from '@langchain/core/messages';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';

const answers = {
  anthropic: {id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{type: 'text', text: 'ok'}], stop_reason: 'end_turn', usage: {input_tokens: 1, output_tokens: 1}},
  openai: {id: 'c1', object: 'chat.completion', created: 0, model: 'gpt-4o', choices: [{index: 0, message: {role: 'assistant', content: 'ok'}, finish_reason: 'stop'}]},
  gemini: {candidates: [{content: {role: 'model', parts: [{text: 'ok'}]}, finishReason: 'STOP'}]},
};
const seen = {};
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const which = req.url.includes('/messages') ? 'anthropic' : req.url.includes('chat/completions') ? 'openai' : 'gemini';
    seen[which] = JSON.parse(body);
    res.writeHead(200, {'content-type': 'application/json'});
    res.end(JSON.stringify(answers[which]));
  });
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;
const history = () => mapStoredMessagesToChatMessages(JSON.parse(fs.readFileSync(process.argv[2], 'utf8')));
const models = {
  anthropic: new ChatAnthropic({model: 'claude-sonnet-4-5', apiKey: 'key', anthropicApiUrl: base, maxRetries: 0}),
  openai: new ChatOpenAI({model: 'gpt-4o', apiKey: 'key', configuration: {baseURL: `${base}/v1`}, maxRetries: 0}),
  gemini: new ChatGoogleGenerativeAI({model: 'gemini-2.5-flash', apiKey: 'key', baseUrl: base, maxRetries: 0}),
};
const out = {};
for (const [name, model] of Object.entries(models)) {
  try {
    await model.invoke(history());
    out[name] = name === 'gemini' ? seen[name].contents : seen[name].messages;
  } catch (e) {
    out[name] = {error: String(e.message ?? e)};
  }
}
server.close();
process.stdout.write(JSON.stringify(out) + '\n');
