'use strict';
// The end-to-end workflow: n8n's AI Agent with n8n's OpenAI chat model,
// nodekit's SQL select tool and nodekit's SQLite chat memory.
//   node workflow.js OPENAI_CREDENTIAL_ID SQLITE_CREDENTIAL_ID MEMORY_DB
const [openai, sqlite, memoryDb] = process.argv.slice(2);
const workflow = {
  name: 'nodekit end to end',
  nodes: [
    { id: 'n1', name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, position: [0, 0], parameters: {} },
    {
      id: 'n2', name: 'AI Agent', type: '@n8n/n8n-nodes-langchain.agent', typeVersion: 3.1, position: [300, 0],
      parameters: { promptType: 'define', text: 'Who are our customers?', options: {} },
    },
    {
      id: 'n3', name: 'OpenAI Chat Model', type: '@n8n/n8n-nodes-langchain.lmChatOpenAi', typeVersion: 1.2, position: [200, 200],
      parameters: { model: { __rl: true, value: 'gpt-4o-mini', mode: 'list', cachedResultName: 'gpt-4o-mini' }, options: {} },
      credentials: { openAiApi: { id: openai, name: 'Scripted OpenAI' } },
    },
    {
      id: 'n4', name: 'Read customers', type: 'CUSTOM.selectQueryTool', typeVersion: 1, position: [400, 200],
      parameters: { options: {} },
      credentials: { sqlite: { id: sqlite, name: 'Shop database' } },
    },
    {
      id: 'n5', name: 'Chat memory', type: 'CUSTOM.memorySqliteChat', typeVersion: 1, position: [300, 200],
      parameters: { sessionIdType: 'customKey', sessionKey: 'e2e-session', databasePath: memoryDb },
    },
  ],
  connections: {
    Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
    'OpenAI Chat Model': { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
    'Read customers': { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
    'Chat memory': { ai_memory: [[{ node: 'AI Agent', type: 'ai_memory', index: 0 }]] },
  },
  settings: { executionOrder: 'v1' },
  active: false,
};
console.log(JSON.stringify(workflow));
