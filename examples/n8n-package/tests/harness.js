'use strict';
// Runs a generated node shim's `execute()` the way n8n's workflow engine
// does, without n8n: a stand-in for n8n's execute context that serves the
// case's parameters, credentials and items. Used by the Rust tests.
//
//   node harness.js <package-dir> <ClassName> <cases-json>
//
// cases: a list of {"parameters": {...}, "credentials": {...}, "items": [...],
//        "continueOnFail": false, "inputs": {...}}, run one after the other
//        in this process. `inputs` holds the sub-nodes connected to the
//        node's AI inputs, by connection type: {"class", "nodeName",
//        "parameters", "credentials", "inputs"} for a node of the package
//        (made by its own `supplyData`), or {"foreign": "ClassName"} for an
//        object n8n would have made itself. With "supply": {"method", "args"},
//        the case calls `supplyData(0)` instead, then that method of what it
//        supplied (if any), and prints {"output": what the method returned}.
// Prints one JSON line per case: {"output": [[...]], "runs": [...]} or
// {"error": {"name", "message"}, "runs": [...]}; `runs` lists the runs the
// shims recorded on sub-nodes ({"node", "connection", "action", "error"?}),
// and `credentialReads` how often the case read credentials. A case's
// "executionId" is what its contexts' getExecutionId() returns. With
// "credentialDelayMs", each read takes that long, and a supplying case also
// prints `readBeforeSupplied`: the reads that had finished when
// `supplyData` returned.
//
// n8n's LangChain classes the shims extend are stood in for by empty ones.

const path = require('path');
const Module = require('module');

const standIns = {
  '@langchain/core/embeddings': { Embeddings: class Embeddings {} },
  '@langchain/core/language_models/chat_models': { BaseChatModel: class BaseChatModel {} },
  '@langchain/core/messages': { mapStoredMessagesToChatMessages: (m) => m, mapChatMessagesToStoredMessages: (m) => m },
  '@langchain/core/utils/function_calling': { convertToOpenAITool: (t) => t },
  '@langchain/core/vectorstores': { VectorStore: class VectorStore { constructor(embeddings) { this.embeddings = embeddings; } } },
  '@langchain/core/documents': { Document: class Document { constructor(fields) { Object.assign(this, fields); } } },
  '@langchain/core/tools': { DynamicStructuredTool: class DynamicStructuredTool { constructor(fields) { Object.assign(this, fields); } } },
};
const load = Module._load;
Module._load = function standIn(request, ...rest) {
  return request in standIns ? standIns[request] : load.call(this, request, ...rest);
};

const [dir, className, casesText] = process.argv.slice(2);
const classOf = (name) => require(path.join(path.resolve(dir), 'nodes', name, `${name}.node.js`))[name];
const NodeClass = classOf(className);
const node = new NodeClass();

let runs = [];
let credentialReads = 0;
let readsDone = 0;

/** What n8n's getInputConnectionData returns for the sub-nodes `connected`. */
async function supplied(type, connected, itemIndex) {
  const out = [];
  for (const sub of connected) {
    if (sub.foreign) {
      out.push(new ({ [sub.foreign]: class {} })[sub.foreign]());
      continue;
    }
    const SubClass = classOf(sub.class);
    const instance = new SubClass();
    const { response } = await instance.supplyData.call(context(sub, instance), itemIndex);
    out.push(response);
  }
  return type === 'ai_tool' ? out : out[0];
}

const itemsOf = (c) => (c.items || [{}]).map((json) => ({ json }));

const context = (c, shim = node) => ({
  getNode: () => ({
    name: c.nodeName || shim.description.defaults.name,
    type: `CUSTOM.${shim.description.name}`,
    typeVersion: 1,
    parameters: c.parameters || {},
    credentials: Object.fromEntries(Object.keys(c.credentials || {}).map((k) => [k, { id: k, name: k }])),
  }),
  getInputConnectionData: async (type, itemIndex) => {
    const connected = (c.inputs || {})[type];
    // n8n: an input the node does not have (in its current mode).
    if (!connected) throw new Error('Node does not have input of type');
    return supplied(type, connected, itemIndex);
  },
  addInputData: (connection, data) => {
    runs.push({ node: c.nodeName || shim.description.defaults.name, connection, action: data[0][0].json.action });
    return { index: runs.length - 1 };
  },
  addOutputData: (connection, index, data) => {
    if (data instanceof Error) runs[index].error = data.message;
  },
  getNodeParameter: (path, itemIndex, fallback) => {
    let value = c.parameters || {};
    for (const key of path.split('.')) value = value === undefined || value === null ? undefined : value[key];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    throw new Error(`Could not get parameter "${path}"`);
  },
  getExecutionId: () => c.executionId,
  getCredentials: async (name) => {
    credentialReads += 1;
    if (c.credentialDelayMs) await new Promise((resolve) => setTimeout(resolve, c.credentialDelayMs));
    readsDone += 1;
    const creds = c.credentials || {};
    if (name in creds) return creds[name];
    throw new Error(`Node does not have any credentials set for "${name}"`);
  },
  getInputData: () => itemsOf(c),
  // A sub-node's: its parent's input items, where `$json` is read from.
  connectionInputData: itemsOf(c),
  continueOnFail: () => Boolean(c.continueOnFail),
  evaluateExpression: () => ({}),
});

(async () => {
  for (const c of JSON.parse(casesText)) {
    runs = [];
    credentialReads = 0;
    readsDone = 0;
    try {
      let output;
      let readBeforeSupplied;
      if (c.supply) {
        const { response } = await node.supplyData.call(context(c), 0);
        readBeforeSupplied = readsDone;
        output = c.supply.method ? await response[c.supply.method](...(c.supply.args || [])) : null;
      } else {
        output = await node.execute.call(context(c));
      }
      console.log(JSON.stringify({ output, runs, credentialReads, readBeforeSupplied }));
    } catch (e) {
      console.log(JSON.stringify({ error: { name: e.name, message: e.message }, runs, credentialReads }));
    }
  }
})();
