'use strict';
// Checks the retrieval runs: what nodekit's vector store inserted (and its
// sub-nodes' runs in n8n's execution data), then the agent's answer from it.
//   node check-rag.js VARIANT RUN_OUTPUT REQUESTS_JSONL
const { readRun, readRequests } = require('./run-data');

const [variant, runFile, requestsFile] = process.argv.slice(2);
const { json, fail } = readRun(runFile);
const actions = (node, conn) => json(node, conn).map((j) => j.action);
if (variant === 'rag-insert') {
  const chunks = json('Insert', 'main').map((d) => d.pageContent);
  console.error(`inserted ${chunks.length} chunks: ${JSON.stringify(chunks)}`);
  if (chunks.length !== 3 || chunks.some((c) => c.length > 80)) fail('the splitter (80 characters) did not cut the text in its 3 paragraphs');
  if (!chunks.includes('Bleed the radiators every autumn, before the heating season starts.')) fail('the chunks lack the text');
  for (const [node, conn] of [['Embeddings', 'ai_embedding'], ['Loader', 'ai_document'], ['Splitter', 'ai_textSplitter']]) {
    const done = actions(node, conn);
    console.error(`${node} runs: ${done.join(', ')}`);
    if (!done.length) fail(`the ${node} sub-node has no runs in the execution data`);
  }
} else {
  const answer = (json('AI Agent', 'main')[0] || {}).output || '';
  console.error(`agent answer: ${answer}`);
  if (!answer.includes('every autumn')) fail('the answer does not quote the manual');
  const tool = json('Manual', 'ai_tool');
  console.error(`tool output: ${JSON.stringify(tool).slice(0, 300)}`);
  if (!tool.length || !JSON.stringify(tool).includes('radiators')) fail('the vector store tool did not find the text');
  const requests = readRequests(requestsFile);
  const toolMessage = ((requests[1] || {}).messages || []).find((m) => m.role === 'tool');
  if (requests.length !== 2 || !toolMessage || !String(toolMessage.content).includes('every autumn')) {
    fail(`the model requests: ${requests.length}, tool message ${JSON.stringify(toolMessage)}`);
  }
  if (!actions('Embeddings', 'ai_embedding').length) fail('the embeddings sub-node has no runs in the execution data');
}
