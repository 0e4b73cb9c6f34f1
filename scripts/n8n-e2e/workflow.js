'use strict';
// The end-to-end workflows: n8n's AI Agent answering "Who are our
// customers?" with a chat model, a database tool and (some) a memory; and
// retrieval: documents inserted by nodekit's vector store, then n8n's AI
// Agent answering from them.
//
//   node workflow.js VARIANT '{"openAiApi": ID, "sqlite": ID, "postgres": ID, "vectors": ID}' MEMORY_DB
//
// VARIANT:
//   n8n-model      n8n's OpenAI chat model, nodekit's SQL select tool (SQLite), nodekit's SQLite memory
//   nodekit-model  the same with nodekit's OpenAI-compatible chat model
//   nodekit-anthropic  the same with nodekit's packaged lmChatAnthropic (n8n's
//                  Anthropic node by its own name) on the scripted server's /v1/messages
//   fault          n8n's OpenAI chat model and nodekit's Fault Tool set to panic
//   pg-nodekit     n8n's OpenAI chat model and nodekit's SQL select tool on PostgreSQL
//   pg-n8n         n8n's OpenAI chat model and n8n's own Postgres tool on the same database
//   rag-insert     nodekit's SQLite vector store inserting a text, with nodekit's embeddings,
//                  default data loader and recursive character text splitter
//   rag-agent      n8n's AI Agent and OpenAI chat model, nodekit's SQLite vector store as its tool
//   rag-n8n-embeddings  rag-insert with n8n's own OpenAI embeddings node (refused)
//   mcp            n8n's OpenAI chat model and n8n's MCP Client Tool (v1.2, bearer token)
//                  pointed at `nodekit mcp serve --http` (MCP_URL) serving nodekit's select tool
//   mcp-nodekit    the same with nodekit's MCP Client Tool (several tools from one node: a toolkit)
const [variant, credentialsText, memoryDb] = process.argv.slice(2);
const credentials = JSON.parse(credentialsText);
// The nodes' type prefix: CUSTOM from n8n's custom folder, the package name when installed.
const prefix = process.env.NODE_PREFIX || 'CUSTOM';
const cred = (type, name) => ({ [type]: { id: credentials[type], name } });

const n8nModel = {
  name: 'Chat Model', type: '@n8n/n8n-nodes-langchain.lmChatOpenAi', typeVersion: 1.2,
  parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list', cachedResultName: 'gpt-4o-mini' }, options: {} },
  credentials: cred('openAiApi', 'Scripted OpenAI'),
};
const nodekitModel = {
  name: 'Chat Model', type: `${prefix}.lmChatOpenAiCompatible`, typeVersion: 1,
  parameters: { model: 'gpt-4o-mini', options: {} },
  credentials: cred('openAiApi', 'Scripted OpenAI'),
};
const anthropicModel = {
  name: 'Chat Model', type: `${prefix}.lmChatAnthropic`, typeVersion: 1.3,
  parameters: { model: { __rl: true, value: 'claude-sonnet-4-5-20250929', mode: 'list', cachedResultName: 'Claude Sonnet 4.5' }, options: {} },
  credentials: cred('anthropicApi', 'Scripted Anthropic'),
};
const selectTool = (type, name) => ({
  name: 'Read customers', type: `${prefix}.selectQueryTool`, typeVersion: 1,
  parameters: { options: {} }, credentials: cred(type, name),
});
const memory = {
  name: 'Chat memory', type: `${prefix}.memorySqliteChat`, typeVersion: 1,
  parameters: { sessionIdType: 'customKey', sessionKey: 'e2e-session', databasePath: memoryDb },
};
const mcpClient = {
  name: 'Shop MCP', type: '@n8n/n8n-nodes-langchain.mcpClientTool', typeVersion: 1.2,
  parameters: {
    endpointUrl: process.env.MCP_URL || '', serverTransport: 'httpStreamable',
    authentication: 'bearerAuth', include: 'all', options: {},
  },
  credentials: cred('httpBearerAuth', 'MCP token'),
};
const nodekitMcpClient = { ...mcpClient, type: `${prefix}.mcpClientTool` };
const faultTool = {
  name: 'Fault', type: `${prefix}.faultTool`, typeVersion: 1, parameters: { fault: 'panic' },
};
const n8nPostgresTool = {
  name: 'Read customers', type: 'n8n-nodes-base.postgresTool', typeVersion: 2.6,
  parameters: {
    descriptionType: 'manual', toolDescription: 'Reads the customers table',
    operation: 'select', schema: { __rl: true, mode: 'list', value: 'public' },
    table: { __rl: true, mode: 'name', value: 'customers' }, returnAll: true, options: {},
  },
  credentials: cred('postgres', 'Shop PostgreSQL'),
};

// ---- retrieval
// One paragraph a sentence: the splitter (80 characters) keeps each whole.
const manual = 'The boiler pressure must stay between one and two bar.\n\n'
  + 'Bleed the radiators every autumn, before the heating season starts.\n\n'
  + 'Descale the hot water tank every second year.';
const node = (name, type, parameters, extra = {}) => ({ name, type, typeVersion: 1, parameters, ...extra });
const vectors = { sqlite: { id: credentials.vectors, name: 'Vector database' } };
const embeddings = node('Embeddings', `${prefix}.embeddingsOpenAiCompatible`, { model: 'bag-of-words', options: {} },
  { credentials: cred('openAiApi', 'Scripted OpenAI') });
const ragNodes = {
  'rag-insert': [
    node('Start', 'n8n-nodes-base.manualTrigger', {}),
    node('Manual text', 'n8n-nodes-base.set', {
      assignments: { assignments: [{ id: 'a1', name: 'text', value: manual, type: 'string' }] }, options: {},
    }, { typeVersion: 3.4 }),
    node('Insert', `${prefix}.vectorStoreSqlite`, { mode: 'insert', collection: 'manual' }, { credentials: vectors }),
    embeddings,
    node('Loader', `${prefix}.documentDefaultDataLoader`, {
      jsonMode: 'expressionData', jsonData: '={{ $json.text }}', textSplittingMode: 'custom', options: {},
    }),
    node('Splitter', `${prefix}.textSplitterRecursiveCharacterTextSplitter`, { chunkSize: 80, chunkOverlap: 0, options: {} }),
  ],
  'rag-agent': [
    node('Start', 'n8n-nodes-base.manualTrigger', {}),
    node('AI Agent', '@n8n/n8n-nodes-langchain.agent', {
      promptType: 'define', text: 'How often should the radiators be bled?', options: {},
    }, { typeVersion: 3.1 }),
    n8nModel,
    node('Manual', `${prefix}.vectorStoreSqlite`, {
      mode: 'retrieve-as-tool', toolDescription: 'The heating manual', collection: 'manual', topK: 1,
    }, { credentials: vectors }),
    embeddings,
  ],
};
ragNodes['rag-n8n-embeddings'] = ragNodes['rag-insert'].map((n) => (n.name !== 'Embeddings' ? n : {
  name: 'Embeddings', type: '@n8n/n8n-nodes-langchain.embeddingsOpenAi', typeVersion: 1.2,
  parameters: { options: {} }, credentials: cred('openAiApi', 'Scripted OpenAI'),
}));
const ragLinks = {
  'rag-insert': [['Start', 'main', 'Manual text'], ['Manual text', 'main', 'Insert'], ['Embeddings', 'ai_embedding', 'Insert'],
    ['Loader', 'ai_document', 'Insert'], ['Splitter', 'ai_textSplitter', 'Loader']],
  'rag-agent': [['Start', 'main', 'AI Agent'], ['Chat Model', 'ai_languageModel', 'AI Agent'], ['Manual', 'ai_tool', 'AI Agent'],
    ['Embeddings', 'ai_embedding', 'Manual']],
};
ragLinks['rag-n8n-embeddings'] = ragLinks['rag-insert'];
if (ragNodes[variant]) {
  const nodes = ragNodes[variant].map((n, i) => ({ id: `n${i}`, position: [i * 200, 0], ...n }));
  const connections = {};
  for (const [from, type, to] of ragLinks[variant]) {
    connections[from] = { [type]: [[{ node: to, type, index: 0 }]] };
  }
  console.log(JSON.stringify({ name: `nodekit e2e ${variant}`, nodes, connections, settings: { executionOrder: 'v1' }, active: false }));
  process.exit(0);
}

const subNodes = {
  'n8n-model': [n8nModel, selectTool('sqlite', 'Shop database'), memory],
  'nodekit-model': [nodekitModel, selectTool('sqlite', 'Shop database'), memory],
  'nodekit-anthropic': [anthropicModel, selectTool('sqlite', 'Shop database'), memory],
  fault: [n8nModel, faultTool],
  'pg-nodekit': [n8nModel, selectTool('postgres', 'Shop PostgreSQL')],
  'pg-n8n': [n8nModel, n8nPostgresTool],
  mcp: [n8nModel, mcpClient],
  'mcp-nodekit': [n8nModel, nodekitMcpClient],
}[variant];
if (!subNodes) throw new Error(`unknown variant ${variant}`);

const connection = {
  'Chat Model': 'ai_languageModel', 'Read customers': 'ai_tool', Fault: 'ai_tool', 'Chat memory': 'ai_memory', 'Shop MCP': 'ai_tool',
};
const nodes = [
  { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
  {
    name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: 3.1,
    parameters: { promptType: 'define', text: 'Who are our customers?', options: {} },
  },
  ...subNodes,
].map((n, i) => ({ id: `n${i}`, position: [i * 200, i > 1 ? 200 : 0], ...n }));
const connections = { Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] } };
for (const n of subNodes) {
  const type = connection[n.name];
  connections[n.name] = { [type]: [[{ node: 'AI Agent', type, index: 0 }]] };
}
console.log(JSON.stringify({ name: `nodekit e2e ${variant}`, nodes, connections, settings: { executionOrder: 'v1' }, active: false }));
