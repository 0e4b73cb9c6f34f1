'use strict';
// Runs a generated node shim's `execute()` the way n8n's workflow engine
// does, without n8n: a stand-in for n8n's execute context that serves the
// case's parameters, credentials and items. Used by the Rust tests.
//
//   node harness.js <package-dir> <ClassName> <cases-json>
//
// cases: a list of {"parameters": {...}, "credentials": {...}, "items": [...],
//        "continueOnFail": false}, run one after the other in this process.
// Prints one JSON line per case: {"output": [[...]]} or {"error": {"name", "message"}}.

const path = require('path');

const [dir, className, casesText] = process.argv.slice(2);
const file = path.join(path.resolve(dir), 'nodes', className, `${className}.node.js`);
const NodeClass = require(file)[className];
const node = new NodeClass();

const context = (c) => ({
  getNode: () => ({
    name: c.nodeName || node.description.defaults.name,
    type: `CUSTOM.${node.description.name}`,
    typeVersion: 1,
    parameters: c.parameters || {},
    credentials: Object.fromEntries(Object.keys(c.credentials || {}).map((k) => [k, { id: k, name: k }])),
  }),
  getNodeParameter: (path, itemIndex, fallback) => {
    let value = c.parameters || {};
    for (const key of path.split('.')) value = value === undefined || value === null ? undefined : value[key];
    if (value !== undefined) return value;
    if (fallback !== undefined) return fallback;
    throw new Error(`Could not get parameter "${path}"`);
  },
  getCredentials: async (name) => {
    const creds = c.credentials || {};
    if (name in creds) return creds[name];
    throw new Error(`Node does not have any credentials set for "${name}"`);
  },
  getInputData: () => (c.items || [{}]).map((json) => ({ json })),
  continueOnFail: () => Boolean(c.continueOnFail),
  evaluateExpression: () => ({}),
});

(async () => {
  for (const c of JSON.parse(casesText)) {
    try {
      const output = await node.execute.call(context(c));
      console.log(JSON.stringify({ output }));
    } catch (e) {
      console.log(JSON.stringify({ error: { name: e.name, message: e.message } }));
    }
  }
})();
