'use strict';
// The workflow n8n runs in benches/serve/run.sh: n8n's Chat Trigger (public,
// embedded, answer when the last node finishes) into n8n's AI Agent, with
// n8n's OpenAI chat model (the scripted server), n8n's Postgres tool
// reading the customers table and n8n's Postgres chat memory.
//   node n8n-workflow.js WEBHOOK_ID SCHEMA MEMORY_TABLE '{"openAiApi": ID, "postgres": ID}'
const [webhookId, schema, memoryTable, credentialsText] = process.argv.slice(2);
const credentials = JSON.parse(credentialsText);
const cred = (type, name) => ({ [type]: { id: credentials[type], name } });
const nodes = [
  {
    name: 'When chat message received', type: '@n8n/n8n-nodes-langchain.chatTrigger', typeVersion: 1.4, webhookId,
    parameters: { public: true, mode: 'webhook', options: { responseMode: 'lastNode' } },
  },
  {
    name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: 3.1,
    parameters: { promptType: 'define', text: '={{ $json.chatInput }}', options: {} },
  },
  {
    name: 'Chat Model', type: '@n8n/n8n-nodes-langchain.lmChatOpenAi', typeVersion: 1.2,
    parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list', cachedResultName: 'gpt-4o-mini' }, options: {} },
    credentials: cred('openAiApi', 'Scripted OpenAI'),
  },
  {
    name: 'Read customers', type: 'n8n-nodes-base.postgresTool', typeVersion: 2.6,
    parameters: {
      descriptionType: 'manual', toolDescription: 'Reads the customers table',
      operation: 'select', schema: { __rl: true, mode: 'name', value: schema },
      table: { __rl: true, mode: 'name', value: 'customers' }, returnAll: true, options: {},
    },
    credentials: cred('postgres', 'Shop PostgreSQL'),
  },
  {
    name: 'Chat memory', type: '@n8n/n8n-nodes-langchain.memoryPostgresChat', typeVersion: 1.3,
    parameters: { sessionIdType: 'fromInput', tableName: memoryTable, contextWindowLength: 5 },
    credentials: cred('postgres', 'Shop PostgreSQL'),
  },
].map((n, i) => ({ id: `n${i}`, position: [i * 200, i > 1 ? 200 : 0], ...n }));
const link = (to, type) => ({ [type]: [[{ node: to, type, index: 0 }]] });
const connections = {
  'When chat message received': link('AI Agent', 'main'),
  'Chat Model': link('AI Agent', 'ai_languageModel'),
  'Read customers': link('AI Agent', 'ai_tool'),
  'Chat memory': link('AI Agent', 'ai_memory'),
};
console.log(JSON.stringify({ name: 'serve bench', nodes, connections, settings: { executionOrder: 'v1' } }));
