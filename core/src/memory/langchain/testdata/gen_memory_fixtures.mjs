// Regenerates memory_fixtures.json from the real LangChain JS packages, so the
// Rust tests pin LangChain's behaviour rather than our reading of it.
//
// Usage (no network needed at run time):
//   mkdir -p /tmp/lcmem && cd /tmp/lcmem && npm init -y
//   npm install --ignore-scripts --legacy-peer-deps @langchain/classic @langchain/core
//   mkdir -p /tmp/lcmem03 && cd /tmp/lcmem03 && npm init -y
//   npm install --ignore-scripts --legacy-peer-deps @langchain/core@0.3
//   cp gen_memory_fixtures.mjs /tmp/lcmem/ && cd /tmp/lcmem
//   node gen_memory_fixtures.mjs > memory_fixtures.json
//
// LangChain downloads tiktoken ranks from tiktoken.pages.dev at run time; this
// script answers that request from the ranks bundled in the js-tiktoken
// package (a dependency of @langchain/core), so token counts are real.
import { createRequire } from "node:module";
import {
  HumanMessage, AIMessage, ChatMessage, getBufferString, mapStoredMessagesToChatMessages,
} from "@langchain/core/messages";
import { BaseListChatMessageHistory, InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { getModelNameForTiktoken } from "@langchain/core/language_models/base";
import { getEncodingNameForModel } from "js-tiktoken/lite";
import { BufferMemory, BufferWindowMemory, ConversationTokenBufferMemory } from "@langchain/classic/memory";
import cl100k from "js-tiktoken/ranks/cl100k_base";
import o200k from "js-tiktoken/ranks/o200k_base";

const require = createRequire(import.meta.url);
import { readFileSync } from "node:fs";
// Read package.json from disk: some packages do not export it.
const version = (p) => JSON.parse(readFileSync(new URL(`./node_modules/${p}/package.json`, import.meta.url), "utf8")).version;
const core03 = await import("/tmp/lcmem03/node_modules/@langchain/core/dist/messages/index.js");
const core03Version = require("/tmp/lcmem03/node_modules/@langchain/core/package.json").version;

// Serve tiktoken ranks locally; count how often LangChain asks.
const ranks = { cl100k_base: cl100k, o200k_base: o200k };
globalThis.fetch = async (url) => {
  const name = String(url).match(/js\/(\w+)\.json$/)?.[1];
  if (!ranks[name]) return new Response("not here", { status: 404 });
  return new Response(JSON.stringify(ranks[name]), { status: 200 });
};
console.warn = () => {}; // LangChain warns on fallbacks; the fixtures record the outcome.

// nodekit JSON (runtime/src/message.rs) -> LangChain's stored form, exactly as
// `Message::to_stored` writes it -> LangChain messages, as n8n's persistent
// stores read them.
function toStored(m) {
  const data = { content: m.content ?? "" };
  if (m.name !== undefined) data.name = m.name;
  if (m.toolCallId !== undefined) data.tool_call_id = m.toolCallId;
  if (m.id !== undefined) data.id = m.id;
  if (m.role === "generic") data.role = m.chatRole;
  if (m.role === "ai") {
    data.tool_calls = (m.toolCalls ?? []).map((c) => ({ name: c.name, args: c.args, type: "tool_call", id: c.id }));
    data.invalid_tool_calls = [];
  }
  data.additional_kwargs = m.additionalKwargs ?? {};
  data.response_metadata = {};
  return { type: m.role, data };
}
const toLc = (ms) => mapStoredMessagesToChatMessages(ms.map(toStored));
const toLc03 = (ms) => core03.mapStoredMessagesToChatMessages(ms.map(toStored));

// LangChain message -> nodekit JSON (the fields these fixtures use).
function fromLc(m) {
  const out = { role: m.type, content: m.content };
  if (m.name) out.name = m.name;
  if (m.tool_call_id) out.toolCallId = m.tool_call_id;
  // nodekit's form of a tool call: its id, name and arguments.
  if (m.type === "ai" && m.tool_calls?.length) out.toolCalls = m.tool_calls.map(({ id, name, args }) => ({ id, name, args }));
  if (m.type === "generic") out.chatRole = m.role;
  return out;
}

const attempt = (f) => {
  try { return { value: f() }; } catch (e) { return { error: e.message }; }
};

const H = (content, extra = {}) => ({ role: "human", content, ...extra });
const A = (content, extra = {}) => ({ role: "ai", content, ...extra });
const S = (content, extra = {}) => ({ role: "system", content, ...extra });
const T = (content, toolCallId, extra = {}) => ({ role: "tool", content, toolCallId, ...extra });
const F = (content, name) => ({ role: "function", content, name });

// ---------------------------------------------------------------- defaults
const fakeLlm = (modelName) => {
  const llm = new FakeListChatModel({ responses: ["x"] });
  if (modelName !== undefined) llm.modelName = modelName;
  return llm;
};
const describeMemory = (m) => ({
  memoryKey: m.memoryKey,
  inputKey: m.inputKey ?? null,
  outputKey: m.outputKey ?? null,
  returnMessages: m.returnMessages,
  humanPrefix: m.humanPrefix,
  aiPrefix: m.aiPrefix,
  memoryKeys: m.memoryKeys,
  ...(m.k !== undefined ? { k: m.k } : {}),
  ...(m.maxTokenLimit !== undefined ? { maxTokenLimit: m.maxTokenLimit } : {}),
});
const defaults = {
  BufferMemory: describeMemory(new BufferMemory()),
  BufferWindowMemory: describeMemory(new BufferWindowMemory()),
  ConversationTokenBufferMemory: describeMemory(new ConversationTokenBufferMemory({ llm: fakeLlm("gpt-4o") })),
};

// ---------------------------------------------------------------- getBufferString
const longId = "call_" + "x".repeat(70);
const id64 = "c".repeat(64);
const emojiId = "e".repeat(63) + "😀" + "tail"; // the 64th UTF-16 unit is half of the emoji
const bufferCases = [
  { label: "empty list", messages: [] },
  { label: "every role", messages: [S("Be brief."), H("Hi"), A("Hello!"), T("72F", "call_1"), H("Thanks")] },
  { label: "function role", messages: [F("{\"ok\":true}", "lookup")] },
  { label: "free roles", messages: [{ role: "generic", chatRole: "critic", content: "Too long." }, H("ok"), { role: "generic", chatRole: "Narrator", content: "Later...", name: "n" }] },
  { label: "names", messages: [H("hi", { name: "alice" }), A("yo", { name: "bot" }), S("s", { name: "ops" }), T("r", "c1", { name: "search" })] },
  { label: "empty name is no name", messages: [H("hi", { name: "" })] },
  { label: "custom prefixes", messages: [H("q"), A("a"), S("s"), T("t", "c")], human: "User", ai: "Assistant" },
  { label: "empty prefixes", messages: [H("q"), A("a")], human: "", ai: "" },
  { label: "prefixes with spaces and unicode", messages: [H("q"), A("a")], human: " Ünïcode ", ai: "🤖" },
  { label: "empty content", messages: [H(""), A("")] },
  { label: "multiline content", messages: [H("line 1\nline 2\r\n\tline 3"), A("a\n\nb\n")] },
  { label: "odd characters", messages: [H("nul\u0000here"), A("bell\u0007 tab\t del\u007f"), H("\u2028\u2029\ufeff\u0085 zero\u200bwidth"), A("😀👍🏽 é e\u0301 漢字 عربى")] },
  { label: "text parts", messages: [H([{ type: "text", text: "a" }, { type: "text", text: "b" }])] },
  { label: "image parts", messages: [H([{ type: "text", text: "look: " }, { type: "image_url", image_url: { url: "https://x/y.png" } }, { type: "text", text: " ok" }])] },
  { label: "image only", messages: [H([{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } }])] },
  { label: "empty parts", messages: [H([]), A([{ type: "text", text: "" }])] },
  { label: "ai tool calls", messages: [A("Let me check", { toolCalls: [{ id: "call_1", name: "weather", args: { city: "Paris", days: 3 } }] }), T("sunny", "call_1")] },
  { label: "ai several tool calls, empty content", messages: [A("", { toolCalls: [{ id: "a", name: "f", args: {} }, { id: "b", name: "g", args: { x: [1, 2, { y: null }] } }] })] },
  { label: "tool call args: JS number and key order", messages: [A("", { toolCalls: [{ id: "n", name: "num", args: { b: 1.0, a: 0.1, big: 12345678901234567890, tiny: 1e-7, small: 0.000001, huge: 1e21, neg: -2.5e-8, zero: -0, "10": "ten", "2": "two", "01": "zero-one", "4294967295": "max", "4294967294": "idx" } }] })] },
  { label: "tool call args: string escapes", messages: [A("", { toolCalls: [{ id: "s", name: "str", args: { q: "say \"hi\"\\", ctl: "\u0000\u0001\b\f\n\r\t\u001f\u007f", u: "\u2028\u2029é😀" } }] })] },
  { label: "tool call id of 64 units kept", messages: [A("", { toolCalls: [{ id: id64, name: "f", args: {} }] })] },
  { label: "tool call id over 64 units shortened", messages: [A("x", { toolCalls: [{ id: "short", name: "f", args: {} }, { id: longId, name: "g", args: { k: 1 } }] })] },
  { label: "tool call id cut inside a surrogate pair", messages: [A("", { toolCalls: [{ id: emojiId, name: "f", args: {} }] })] },
  { label: "legacy function_call", messages: [A("", { additionalKwargs: { function_call: { name: "f", arguments: "{\"a\":1}" } } })] },
  { label: "function_call null", messages: [A("x", { additionalKwargs: { function_call: null } })] },
  { label: "tool calls win over function_call", messages: [A("x", { toolCalls: [{ id: "1", name: "t", args: {} }], additionalKwargs: { function_call: { name: "f" } } })] },
  { label: "function_call on a human message is ignored", messages: [H("x", { additionalKwargs: { function_call: { name: "f" } } })] },
];
const bufferString = bufferCases.map((c) => {
  const human = c.human ?? "Human";
  const ai = c.ai ?? "AI";
  const current = attempt(() => getBufferString(toLc(c.messages), human, ai));
  const old = attempt(() => core03.getBufferString(toLc03(c.messages), human, ai));
  return {
    label: c.label,
    messages: c.messages,
    human_prefix: human,
    ai_prefix: ai,
    expected: current.value ?? null,
    error: current.error ?? null,
    core_0_3: old.value ?? null,
  };
});
// Chat messages with a free role: nodekit has no such role; recorded for the docs.
const genericRole = getBufferString([new ChatMessage({ role: "Critic", content: "meh" }), new ChatMessage({ role: "", content: "x" })]);

// ---------------------------------------------------------------- window
const conversation = (n) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? H(`q${i / 2}`) : A(`a${(i - 1) / 2}`)));
const windowCases = [];
const histories = [
  ...[0, 1, 2, 3, 4, 5, 7, 12].map((n) => ({ label: `${n} alternating`, history: conversation(n) })),
  { label: "system and tool messages count too", history: [S("sys"), H("q0"), A("", { toolCalls: [{ id: "c", name: "t", args: {} }] }), T("r", "c"), A("a0"), H("q1"), A("a1")] },
];
for (const { label, history } of histories) {
  for (const k of [undefined, 0, 1, 2, 3, 100]) {
    for (const returnMessages of [true, false]) {
      const chatHistory = new InMemoryChatMessageHistory(toLc(history));
      const memory = new BufferWindowMemory({ chatHistory, returnMessages, ...(k === undefined ? {} : { k }) });
      const vars = await memory.loadMemoryVariables({});
      windowCases.push({
        label,
        k: k ?? null,
        return_messages: returnMessages,
        history,
        expected: returnMessages ? vars.history.map(fromLc) : vars.history,
      });
    }
  }
}

// ---------------------------------------------------------------- BufferMemory load
const bufferHistory = [S("sys"), H("q0", { name: "ann" }), A("a0"), H("q1"), A("a1")];
const bufferLoads = [];
for (const opts of [{}, { returnMessages: true }, { memoryKey: "chat_history", humanPrefix: "User", aiPrefix: "Bot" }, { memoryKey: "m", returnMessages: true }]) {
  const memory = new BufferMemory({ chatHistory: new InMemoryChatMessageHistory(toLc(bufferHistory)), ...opts });
  const vars = await memory.loadMemoryVariables({ input: "ignored", other: 1 });
  const key = memory.memoryKey;
  bufferLoads.push({
    options: opts,
    history: bufferHistory,
    key,
    keys: Object.keys(vars),
    expected: memory.returnMessages ? vars[key].map(fromLc) : vars[key],
  });
}

// ---------------------------------------------------------------- saveContext
const saveCases = [
  { label: "one key each, no keys configured", inputs: { input: "hi" }, outputs: { output: "yo" } },
  { label: "any single key name", inputs: { question: "q" }, outputs: { text: "a" } },
  { label: "two input keys, no input key", inputs: { input: "hi", extra: "x" }, outputs: { output: "yo" } },
  { label: "no input keys", inputs: {}, outputs: { output: "yo" } },
  { label: "input key configured and present among several", inputKey: "input", inputs: { input: "hi", system_message: "s", formatting_instructions: "f" }, outputs: { output: "yo" } },
  { label: "input key configured but missing", inputKey: "input", inputs: { question: "q" }, outputs: { output: "yo" } },
  { label: "input key configured, empty map", inputKey: "input", inputs: {}, outputs: { output: "yo" } },
  { label: "empty input string is an error", inputs: { input: "" }, outputs: { output: "yo" } },
  { label: "null input", inputs: { input: null }, outputs: { output: "yo" } },
  { label: "false input", inputs: { input: false }, outputs: { output: "yo" } },
  { label: "zero input", inputs: { input: 0 }, outputs: { output: "yo" } },
  { label: "empty output string is kept", inputs: { input: "hi" }, outputs: { output: "" } },
  { label: "two output keys, no output key", inputs: { input: "hi" }, outputs: { output: "yo", intermediateSteps: [] } },
  { label: "no output keys", inputs: { input: "hi" }, outputs: {} },
  { label: "output key configured and present among several", outputKey: "output", inputs: { input: "hi" }, outputs: { output: "yo", intermediateSteps: [] } },
  { label: "output key configured but missing", outputKey: "output", inputs: { input: "hi" }, outputs: { text: "yo" } },
  { label: "null output", inputs: { input: "hi" }, outputs: { output: null } },
  { label: "false output", inputs: { input: "hi" }, outputs: { output: false } },
  { label: "zero output", inputs: { input: "hi" }, outputs: { output: 0 } },
  { label: "both wrong: input reported", inputs: { a: "1", b: "2" }, outputs: { c: "1", d: "2" } },
  { label: "n8n seed keys", inputKey: "input", outputKey: "output", inputs: { input: "hi", chat_history: [] }, outputs: { output: "yo", intermediateSteps: [] } },
  { label: "content-part input", inputs: { input: [{ type: "text", text: "see" }, { type: "image_url", image_url: { url: "https://x/i.png" } }] }, outputs: { output: "ok" } },
  { label: "odd characters", inputs: { input: "nul\u0000 😀 \u2028" }, outputs: { output: "e\u0301" } },
];
const saveContext = [];
for (const c of saveCases) {
  const memory = new BufferMemory({ inputKey: c.inputKey, outputKey: c.outputKey, returnMessages: true });
  let error = null;
  try {
    await memory.saveContext(c.inputs, c.outputs);
  } catch (e) {
    error = e.message;
  }
  const stored = (await memory.chatHistory.getMessages()).map(fromLc);
  saveContext.push({
    label: c.label,
    input_key: c.inputKey ?? null,
    output_key: c.outputKey ?? null,
    inputs: c.inputs,
    outputs: c.outputs,
    error,
    stored_by_langchain: stored,
  });
}
// What JS does with values that are neither text nor content parts.
const oddValues = [];
for (const [label, value] of [["number", 5], ["true", true], ["object", { content: "obj" }]]) {
  const memory = new BufferMemory({ returnMessages: true });
  let error = null;
  try { await memory.saveContext({ input: value }, { output: "x" }); } catch (e) { error = `${e.constructor.name}: ${e.message}`; }
  oddValues.push({ label, value, error, stored: (await memory.chatHistory.getMessages()).map(fromLc) });
}

// ---------------------------------------------------------------- tokens
const tokenTexts = [
  "", "hello", "Hello world", "Human: Hi\nAI: Hello! How can I help?",
  "foo\n  ", "a \n \n  1", "x  \n\n", " ", "\n", "tab\there", "trailing   ",
  "It's we'll they'VE I'M", "'ſ 'K", "https://example.com/a/b?c=d&e=f", "// comment\n/path/to",
  "12345678 3.14159 -42", "漢字かなカナ 한국어", "😀👍🏽🇫🇷", "e\u0301 \u0301", "nul\u0000here",
  "\u0085next \ufeffbom \u00a0nbsp \u3000ideo", "<|endoftext|>", "a<|endofprompt|>b", "<|fim_prefix|>x",
  "<|endoftext", "=".repeat(300), "a".repeat(500), " ".repeat(100) + "x", "\n".repeat(50),
  "CamelCaseWordsHERE andLower UPPER", "λόγος Ελληνικά", "line1\r\nline2\rline3",
];
// js-tiktoken's pre-tokenizer split (the regex it runs before BPE).
const pieceTexts = [...tokenTexts, "a   b\n\n  c  ", "x \t\ty", "  1", "\t!", "Hello,   world!!\n\n\tNext", " 's 'S"];
const pieces = [];
for (const [encoding, r] of Object.entries(ranks)) {
  const re = new RegExp(r.pat_str, "gu");
  for (const text of pieceTexts) pieces.push({ encoding, text, pieces: text.match(re) ?? [] });
}
const countWith = async (modelName, text) => fakeLlm(modelName).getNumTokens(text);
const tokens = [];
for (const model of ["gpt-3.5-turbo", "gpt-4o-mini", "claude-3-haiku"]) {
  for (const text of tokenTexts) tokens.push({ model, text, count: await countWith(model, text) });
}
const noModelName = await fakeLlm(undefined).getNumTokens("hello world"); // "gpt2" encoding: not served -> approximate

const modelNames = [
  "gpt-3.5-turbo", "gpt-3.5-turbo-0125", "gpt-3.5-turbo-16k", "gpt-4", "gpt-4-0613", "gpt-4-turbo",
  "gpt-4-32k", "gpt-4o", "gpt-4o-mini", "gpt-4o-2024-11-20", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano-2025-04-14",
  "gpt-4.1-2026-01-01", "gpt-4.5-preview", "gpt-5", "gpt-5-mini", "gpt-5.1", "o1", "o1-mini", "o3", "o3-mini",
  "o3-pro", "o4-mini", "chatgpt-4o-latest", "text-embedding-3-small", "text-davinci-003", "davinci", "gpt2",
  "claude-3-haiku", "gemini-2.0-flash", "llama3", "", "openai/gpt-4o",
];
const modelEncoding = modelNames.map((model) => {
  const tiktokenModel = getModelNameForTiktoken(model);
  let encoding;
  try { encoding = getEncodingNameForModel(tiktokenModel); } catch { encoding = "approximate"; }
  return { model, tiktoken_model: tiktokenModel, encoding };
});

// ---------------------------------------------------------------- token buffer
// A store like n8n's Postgres/Redis histories: getMessages returns a fresh array.
class CopyingHistory extends BaseListChatMessageHistory {
  lc_namespace = ["fixtures"];
  stored = [];
  async getMessages() { return [...this.stored]; }
  async addMessage(m) { this.stored.push(m); }
  async clear() { this.stored = []; }
}
const exchanges = [
  ["Hi there!", "Hello! How can I help you today?"],
  ["What's the weather in Paris?", "It is sunny and 24 degrees in Paris."],
  ["And tomorrow?", "Tomorrow looks rainy, around 18 degrees."],
  ["Thanks", "You're welcome!"],
  ["Tell me a long story about a dragon who learned to code in Rust.", "Once upon a time, a dragon named Ferris found a compiler in a cave. It refused to borrow anything it could not return, and so it lived happily ever after."],
  ["ok", "k"],
];
const tokenBufferRuns = [];
const runs = [
  { model: "gpt-3.5-turbo", limit: 2000, exchanges },
  { model: "gpt-3.5-turbo", limit: 40, exchanges },
  { model: "gpt-4o-mini", limit: 40, exchanges },
  { model: "gpt-4o-mini", limit: 25, exchanges, humanPrefix: "User", aiPrefix: "Assistant" },
  { model: "gpt-4o-mini", limit: 25, exchanges },
  { model: "gpt-3.5-turbo", limit: 10, exchanges },
  { model: "gpt-3.5-turbo", limit: 0, exchanges: exchanges.slice(0, 2) },
  { model: "gpt-3.5-turbo", limit: 12, exchanges: [["short", "reply"], ["this one is definitely much longer than twelve tokens, by a lot", "tiny"]] },
  { model: "claude-3-haiku", limit: 20, exchanges },
  { model: "gpt-4o-mini", limit: 30, exchanges: [["a <|endoftext|> b", "special"], ["plain question here", "plain answer here"], ["x", "y"]] },
  { model: "gpt-4o", limit: 30, exchanges: [["漢字かなカナ 한국어 😀👍🏽", "e\u0301 nul\u0000 ok"], ["Ελληνικά λόγος", "fine\n  "], ["trailing   ", "done\n"]] },
];
for (const run of runs) {
  const prefixes = { ...(run.humanPrefix ? { humanPrefix: run.humanPrefix } : {}), ...(run.aiPrefix ? { aiPrefix: run.aiPrefix } : {}) };
  const inMemory = new ConversationTokenBufferMemory({ llm: fakeLlm(run.model), maxTokenLimit: run.limit, ...prefixes });
  const copying = new ConversationTokenBufferMemory({ llm: fakeLlm(run.model), maxTokenLimit: run.limit, chatHistory: new CopyingHistory(), ...prefixes });
  const steps = [];
  for (const [input, output] of run.exchanges) {
    await inMemory.saveContext({ input }, { output });
    await copying.saveContext({ input }, { output });
    const kept = await inMemory.chatHistory.getMessages();
    const vars = await inMemory.loadMemoryVariables({});
    steps.push({
      input,
      output,
      in_memory_store: kept.map(fromLc),
      in_memory_buffer: vars.history,
      in_memory_tokens: await fakeLlm(run.model).getNumTokens(vars.history),
      persistent_store_len: (await copying.chatHistory.getMessages()).length,
      persistent_buffer_len: (await copying.loadMemoryVariables({})).history.length,
    });
  }
  tokenBufferRuns.push({ model: run.model, max_token_limit: run.limit, human_prefix: run.humanPrefix ?? "Human", ai_prefix: run.aiPrefix ?? "AI", steps });
}

// JSON.stringify of numbers as serde_json reads them from text.
const numberTexts = ["0", "-0", "-0.0", "1.0", "1.5", "0.1", "100", "1e21", "1e20", "123456789012345678901234567890", "9007199254740993", "12345678901234567890", "-9223372036854775808", "1e-7", "1e-6", "0.000001", "0.0000001", "123e-20", "5e-324", "1.7976931348623157e308", "2.5e-8", "1234.5678", "1e300", "4.35", "0.3", "-1.5e+22"];
const jsonTexts = [
  ...numberTexts,
  '{"b":1,"10":"ten","2":"two","01":"zero-one","4294967295":"max","4294967294":"idx","-1":"neg","1.5":"frac","a":{"9":0,"z":1,"0":2}}',
  '["x",{"":"empty key"," ":"space"},[],{}]',
  '"quote \\" backslash \\\\ slash \\/ ctl \\u0000\\u001f\\u007f\\b\\f\\n\\r\\t sep \\u2028\\u2029 emoji \\ud83d\\ude00"',
  'null', 'true', 'false',
];
const jsNumbers = jsonTexts.map((text) => ({ text, js: JSON.stringify(JSON.parse(text)) }));

console.log(JSON.stringify({
  js_json: jsNumbers,
  generated_with: {
    "@langchain/classic": version("@langchain/classic"),
    "@langchain/core": version("@langchain/core"),
    "js-tiktoken": version("js-tiktoken"),
    "@langchain/core (old getBufferString)": core03Version,
  },
  defaults,
  buffer_string: bufferString,
  generic_role: genericRole,
  window: windowCases,
  buffer_load: bufferLoads,
  save_context: saveContext,
  odd_values: oddValues,
  tokens,
  pieces,
  no_model_name_count: noModelName,
  model_encoding: modelEncoding,
  token_buffer: tokenBufferRuns,
}, null, 1));
