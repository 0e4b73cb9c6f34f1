// Per-call time and CPU of the Node.js clients against the bench's local server
// (benches/providers/run.sh): the official @anthropic-ai/sdk and
// @google/genai, LangChain's @langchain/anthropic and
// @langchain/google-genai, and bare fetch with the same body as the floor.
// The same conversation nodekit's side sends: a system prompt, a question,
// a tool call and its result, a follow-up, and one tool.
//
// env: ANTHROPIC_URL, GEMINI_URL, BENCH_CALLS, BENCH_WARMUP, BENCH_BODIES
// (the JSON bodies nodekit sent, for the fetch floor). Prints one JSON line.
import fs from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatGoogleGenerativeAI } from '@langchain/google-genai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';

const calls = Number(process.env.BENCH_CALLS ?? 2000);
const warmup = Number(process.env.BENCH_WARMUP ?? 200);
const anthropicUrl = process.env.ANTHROPIC_URL;
const geminiUrl = process.env.GEMINI_URL;
const bodies = JSON.parse(fs.readFileSync(process.env.BENCH_BODIES, 'utf8'));

const system = 'You are a helpful assistant. Answer briefly.';
const question = 'What is the weather in Paris?';
const followUp = 'And should I take an umbrella?';
const weather = {name: 'get_weather', description: 'The weather in a city',
  parameters: {type: 'object', properties: {city: {type: 'string'}}, required: ['city']}};

async function time(name, call) {
  for (let i = 0; i < warmup; i++) await call();
  const us = new Float64Array(calls);
  const cpu = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    await call();
    us[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  const spent = process.cpuUsage(cpu);
  us.sort();
  const at = (q) => us[Math.min(calls - 1, Math.floor(q * calls))];
  // The process's CPU time per call (its threads: V8's compiler and
  // collector included), the client's own cost.
  return {client: name, p50_us: at(0.5), p99_us: at(0.99), cpu_us: (spent.user + spent.system) / calls};
}

const results = [];

// Anthropic.
const sdk = new Anthropic({apiKey: 'sk-ant-bench', baseURL: anthropicUrl, maxRetries: 0});
const anthropicMessages = [
  {role: 'user', content: question},
  {role: 'assistant', content: [{type: 'text', text: 'Let me check.'},
    {type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {city: 'Paris'}}]},
  {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_01', content: 'Rain, 14 °C'}]},
  {role: 'user', content: followUp},
];
results.push(await time('@anthropic-ai/sdk', () => sdk.messages.create({
  model: 'claude-sonnet-4-5', max_tokens: 1024, system, messages: anthropicMessages,
  tools: [{name: weather.name, description: weather.description, input_schema: weather.parameters}],
})));
const lcMessages = () => [
  new SystemMessage(system),
  new HumanMessage(question),
  new AIMessage({content: 'Let me check.', tool_calls: [{id: 'toolu_01', name: 'get_weather', args: {city: 'Paris'}, type: 'tool_call'}]}),
  new ToolMessage({content: 'Rain, 14 °C', tool_call_id: 'toolu_01'}),
  new HumanMessage(followUp),
];
const chatAnthropic = new ChatAnthropic({model: 'claude-sonnet-4-5', apiKey: 'sk-ant-bench', anthropicApiUrl: anthropicUrl, maxRetries: 0, maxTokens: 1024})
  .bindTools([{type: 'function', function: weather}]);
results.push(await time('@langchain/anthropic', () => chatAnthropic.invoke(lcMessages())));
const anthropicBody = JSON.stringify(bodies.anthropic);
results.push(await time('fetch (Anthropic body)', async () => {
  const r = await fetch(`${anthropicUrl}/v1/messages`, {method: 'POST', body: anthropicBody,
    headers: {'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01'}});
  await r.arrayBuffer();
}));

// Gemini.
const genai = new GoogleGenAI({apiKey: 'AIza-bench', httpOptions: {baseUrl: geminiUrl}});
const geminiContents = [
  {role: 'user', parts: [{text: question}]},
  {role: 'model', parts: [{text: 'Let me check.'}, {functionCall: {name: 'get_weather', args: {city: 'Paris'}}}]},
  {role: 'user', parts: [{functionResponse: {name: 'get_weather', response: {result: 'Rain, 14 °C'}}}]},
  {role: 'user', parts: [{text: followUp}]},
];
results.push(await time('@google/genai', () => genai.models.generateContent({
  model: 'gemini-2.5-flash', contents: geminiContents,
  config: {systemInstruction: system, tools: [{functionDeclarations: [weather]}]},
})));
const chatGemini = new ChatGoogleGenerativeAI({model: 'gemini-2.5-flash', apiKey: 'AIza-bench', baseUrl: geminiUrl, maxRetries: 0})
  .bindTools([{type: 'function', function: weather}]);
const lcGeminiMessages = () => {
  const m = lcMessages();
  m[3] = new ToolMessage({content: 'Rain, 14 °C', tool_call_id: 'toolu_01', name: 'get_weather'});
  return m;
};
results.push(await time('@langchain/google-genai', () => chatGemini.invoke(lcGeminiMessages())));
const geminiBody = JSON.stringify(bodies.gemini);
results.push(await time('fetch (Gemini body)', async () => {
  const r = await fetch(`${geminiUrl}/v1beta/models/gemini-2.5-flash:generateContent`, {method: 'POST', body: geminiBody,
    headers: {'content-type': 'application/json', 'x-goog-api-key': 'AIza-bench'}});
  await r.arrayBuffer();
}));

process.stdout.write(JSON.stringify(results) + '\n');
