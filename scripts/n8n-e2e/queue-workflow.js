'use strict';
// The workflows of scripts/n8n-queue.sh: a Webhook (POST /webhook/PATH)
// into n8n's AI Agent, whose prompt is the body's `message`, with n8n's
// OpenAI chat model (the scripted server), a select tool on the shop's
// PostgreSQL database and a PostgreSQL chat memory keyed by the body's
// `session`; a Respond to Webhook node answers with the agent's output.
//
// Not the Webhook's "lastNode" response mode: in queue mode n8n 2.8.4's main
// answers those once Bull's job.finished() resolves, and a job that a
// worker completes (and Bull removes, removeOnComplete) before main calls
// it never resolves (OptimalBits/bull#1906): under load a few requests are
// never answered though their executions succeeded. A Respond to Webhook
// node's answer reaches main as a job progress message, which main awaits
// from before the job is queued.
//
//   node queue-workflow.js VARIANT PATH '{"openAiApi": ID, "postgres": ID}'
//
// VARIANT:
//   nodekit  nodekit's SQL select tool and PostgreSQL chat memory (table n8n_chat_histories)
//   n8n      n8n's own Postgres tool and Postgres chat memory (table n8n_own_chat_histories)
//   floor    n8n's Think tool (it answers with its input) and Simple Memory (in the
//            worker's memory): no database and no bridge, so about the time of n8n
//            itself, a floor for any tool and memory that reach a database
const [variant, path, credentialsText] = process.argv.slice(2);
const credentials = JSON.parse(credentialsText);
const prefix = process.env.NODE_PREFIX || 'n8n-nodes-text';
const cred = (type, name) => ({ [type]: { id: credentials[type], name } });
const postgres = cred('postgres', 'Shop PostgreSQL');
const session = '={{ $json.body.session }}';

const subNodes = {
  nodekit: [
    {
      name: 'Read customers', type: `${prefix}.selectQueryTool`, typeVersion: 1,
      parameters: { options: {} }, credentials: postgres,
    },
    {
      name: 'Chat memory', type: `${prefix}.memoryPostgresChat`, typeVersion: 1,
      parameters: { sessionIdType: 'customKey', sessionKey: session, tableName: 'n8n_chat_histories', contextWindowLength: 5 },
      credentials: postgres,
    },
  ],
  n8n: [
    {
      name: 'Read customers', type: 'n8n-nodes-base.postgresTool', typeVersion: 2.6,
      parameters: {
        descriptionType: 'manual', toolDescription: 'Reads the customers table',
        operation: 'select', schema: { __rl: true, mode: 'list', value: 'public' },
        table: { __rl: true, mode: 'name', value: 'customers' }, returnAll: true, options: {},
      },
      credentials: postgres,
    },
    {
      name: 'Chat memory', type: '@n8n/n8n-nodes-langchain.memoryPostgresChat', typeVersion: 1.3,
      parameters: { sessionIdType: 'customKey', sessionKey: session, tableName: 'n8n_own_chat_histories', contextWindowLength: 5 },
      credentials: postgres,
    },
  ],
  floor: [
    {
      name: 'Read customers', type: '@n8n/n8n-nodes-langchain.toolThink', typeVersion: 1.1,
      parameters: { description: 'Reads the customers table' },
    },
    {
      name: 'Chat memory', type: '@n8n/n8n-nodes-langchain.memoryBufferWindow', typeVersion: 1.3,
      parameters: { sessionIdType: 'customKey', sessionKey: session, contextWindowLength: 5 },
    },
  ],
}[variant];
if (!subNodes) throw new Error(`unknown variant ${variant}`);

const nodes = [
  {
    name: 'Webhook', type: 'n8n-nodes-base.webhook', typeVersion: 2.1, webhookId: `nodekit-queue-${variant}`,
    parameters: { httpMethod: 'POST', path, responseMode: 'responseNode', options: {} },
  },
  {
    name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: 3.1,
    parameters: { promptType: 'define', text: '={{ $json.body.message }}', options: {} },
  },
  {
    name: 'Respond', type: 'n8n-nodes-base.respondToWebhook', typeVersion: 1.5,
    parameters: { respondWith: 'firstIncomingItem', options: {} },
  },
  {
    name: 'Chat Model', type: '@n8n/n8n-nodes-langchain.lmChatOpenAi', typeVersion: 1.2,
    parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list', cachedResultName: 'gpt-4o-mini' }, options: {} },
    credentials: cred('openAiApi', 'Scripted OpenAI'),
  },
  ...subNodes,
].map((n, i) => ({ id: `n${i}`, position: [i * 200, i > 2 ? 200 : 0], ...n }));

const link = (to, type) => ({ [type]: [[{ node: to, type, index: 0 }]] });
const connections = {
  Webhook: link('AI Agent', 'main'),
  'AI Agent': link('Respond', 'main'),
  'Chat Model': link('AI Agent', 'ai_languageModel'),
  'Read customers': link('AI Agent', 'ai_tool'),
  'Chat memory': link('AI Agent', 'ai_memory'),
};
console.log(JSON.stringify({ name: `nodekit queue ${variant}`, nodes, connections, settings: { executionOrder: 'v1' } }));
