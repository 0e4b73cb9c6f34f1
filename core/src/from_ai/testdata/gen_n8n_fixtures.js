// Regenerates n8n_fixtures.json from the real n8n packages, so the Rust tests pin
// n8n's behaviour rather than our reading of it.
// Usage: NODE_PATH=/path/to/node_modules node gen_n8n_fixtures.js > n8n_fixtures.json
// (needs n8n-workflow, @langchain/core, @n8n/tournament, zod 3).
const wf = require('n8n-workflow');
const { toJsonSchema } = require('@langchain/core/utils/json_schema');
const { z } = require('zod');
const { Tournament } = require('@n8n/tournament');

const keyRe = /^[a-zA-Z0-9_-]{1,64}$/;

// `getSchema` from n8n-core's create-node-as-tool.js, run against the current
// n8n-workflow (n8n-core pins an older copy without type lowercasing).
function getSchema(parameters) {
  const collectedArguments = [];
  wf.traverseNodeParameters(parameters, collectedArguments);
  const nameValidationRegex = /^[a-zA-Z0-9_-]{1,64}$/;
  const keyMap = new Map();
  for (const argument of collectedArguments) {
    if (argument.key.length === 0 || !nameValidationRegex.test(argument.key)) {
      throw new Error(argument.key.length === 0
        ? 'You must specify a key when using $fromAI()'
        : `Parameter key \`${argument.key}\` is invalid`);
    }
    if (keyMap.has(argument.key)) {
      const existingArg = keyMap.get(argument.key);
      if (existingArg.description !== argument.description || existingArg.type !== argument.type) {
        throw new Error(`Duplicate key '${argument.key}' found with different description or type`);
      }
    } else {
      keyMap.set(argument.key, argument);
    }
  }
  const uniqueArgsMap = collectedArguments.reduce((map, arg) => { map.set(arg.key, arg); return map; }, new Map());
  const schemaObj = Array.from(uniqueArgsMap.values()).reduce((acc, placeholder) => {
    acc[placeholder.key] = wf.generateZodSchema(placeholder);
    return acc;
  }, {});
  return z.object(schemaObj).required();
}

// parse_calls: extractFromAICalls, then getSchema's key check on each call.
const parseInputs = [
  "$fromAI('email')",
  '$fromAI("email")',
  '$fromAI(`email`)',
  "$fromAI(email)",
  "$fromAI( 'email' , 'The address' )",
  "$FROMAI('a')", "$fromai('a')", "$FromAi('a')",
  "$fromAI\t(\n'a')",
  "$fromAI ('a')",
  "no call here",
  "$fromAI",
  "fromAI('a')",
  "$fromAI('a', 'it\\'s', 'string')",
  "$fromAI('a', \"say \\\"hi\\\"\", 'string')",
  "$fromAI('a', `tick \\` tock`)",
  "$fromAI('a', 'back\\\\slash')",
  "$fromAI('a', 'triple\\\\\\'q')",
  "$fromAI('a', 'mixed \"quotes\" and `ticks`')",
  "$fromAI('a', 'comma, inside')",
  "$fromAI('a', 'paren ) inside')",
  "$fromAI('a', 'paren ( inside')",
  "$fromAI('a', unquoted words here)",
  "$fromAI('a', (nested, parens))",
  "$fromAI('a', 'unterminated)",
  "$fromAI('a'",
  "$fromAI(",
  "$fromAI()",
  "$fromAI('')",
  "$fromAI(' ')",
  "$fromAI('a b')",
  "$fromAI('a.b')",
  "$fromAI('é')",
  "$fromAI('" + 'k'.repeat(64) + "')",
  "$fromAI('" + 'k'.repeat(65) + "')",
  "$fromAI('A-z_0-9')",
  "$fromAI('a', 'd')",
  "$fromAI('a', '')",
  "$fromAI('a', 'd', 'string')",
  "$fromAI('a', 'd', 'String')",
  "$fromAI('a', 'd', 'NUMBER')",
  "$fromAI('a', 'd', 'boolean')",
  "$fromAI('a', 'd', 'json')",
  "$fromAI('a', 'd', 'Json')",
  "$fromAI('a', 'd', 'int')",
  "$fromAI('a', 'd', '')",
  "$fromAI('a', 'd', number)",
  "$fromAI('a', 'd', 'object')",
  "$fromAI('a', 'd', 'string', 'hello')",
  "$fromAI('a', 'd', 'string', 42)",
  "$fromAI('a', 'd', 'string', '')",
  "$fromAI('a', 'd', 'number', 42)",
  "$fromAI('a', 'd', 'number', '42')",
  "$fromAI('a', 'd', 'number', -3.5)",
  "$fromAI('a', 'd', 'number', 1e3)",
  "$fromAI('a', 'd', 'number', 0x1F)",
  "$fromAI('a', 'd', 'number', '')",
  "$fromAI('a', 'd', 'number', )",
  "$fromAI('a', 'd', 'number',)",
  "$fromAI('a', 'd', 'number', 'ten')",
  "$fromAI('a', 'd', 'number', '[1,2]')",
  "$fromAI('a', 'd', 'number', Infinity)",
  "$fromAI('a', 'd', 'number', 1.50)",
  "$fromAI('a', 'd', 'boolean', true)",
  "$fromAI('a', 'd', 'boolean', 'FALSE')",
  "$fromAI('a', 'd', 'boolean', 'yes')",
  "$fromAI('a', 'd', 'boolean', 1)",
  "$fromAI('a', 'd', 'boolean', 'null')",
  "$fromAI('a', 'd', 'json', '{\"a\": [1, 2]}')",
  "$fromAI('a', 'd', 'json', '[]')",
  "$fromAI('a', 'd', 'json', '{bad json}')",
  "$fromAI('a', 'd', 'json', 5)",
  "$fromAI('a', 'd', 'json', {\"k\": 1})",
  "$fromAI('a', 'd', 'string', 'x', 'extra', 'more')",
  "$fromAI('a', 'd', 'string', 'x', )",
  "$fromAI('a','b','c','d','e')",
  "$fromAI('a',,'number')",
  "$fromAI(,)",
  "$fromAI('a') and $fromAI('b', 'second', 'number')",
  "{{ $fromAI('a') }} {{ $fromAI('a') }}",
  "$fromAI('outer', '$fromAI(\"inner\")')",
  "$fromAI('outer', $fromAI('inner'))",
  "$fromAI('a', 'd') $fromAI('b'",
  "$fromAI('a', 'd', 'foo') $fromAI(",
  "$fromAI(\\'x')",
  "$fromAI('x\\')",
  "$fromAI('x' 'y')",
  "$fromAI('a', '\\n\\t')",
  "$fromAI('a', 'ünïcødé 🎉')",
  "$fromAI('a', '  padded  ')",
  "$fromAI('a', \"'\")",
  "$fromAI('a', ')",
  "$fromAI('a', ')')",
  "$fromAI(\u00a0'a'\u00a0)",
  "$fromAI(\ufeff'a')",
  "$fromAI('a', 'd'\u2028)",
  "={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('Query', ``, 'string') }}",
  "$fromAI('a', 'd', 'string', 'it''s')",
  "$fromAI('a', 'd', 'number', ' 7 ')",
  "$fromAI('a', 'd', 'number', '0b11')",
  "$fromAI('a', 'd', 'number', '12345678901234567890')",
  "$fromAI('a', 'd', 'json', '12345678901234567890')",
  "$fromAI('a', 'd', 'json', 'true')",
  "$fromAI('a', 'd', 'json', '\"str\"')",
  "$fromAI('a', 'd', 'json', 'null')",
];

const parseCases = parseInputs.map((input) => {
  try {
    const calls = wf.extractFromAICalls(input);
    for (const c of calls) {
      if (c.key.length === 0) throw new Error('You must specify a key when using $fromAI()');
      if (!keyRe.test(c.key)) throw new Error(`Parameter key \`${c.key}\` is invalid`);
    }
    return { input, calls };
  } catch (e) {
    return { input, error: e.message };
  }
});

// collect_calls + arguments_schema: getSchema above and LangChain's zod-to-JSON-Schema conversion.
const paramCases = [
  {},
  { a: 'plain', b: 1, c: true, d: null },
  { a: "={{ $fromAI('q', 'query text') }}", b: "={{ $fromAI('limit', 'How many', 'number', 10) }}" },
  { b: "$fromAI('b')", 10: "$fromAI('ten')", a: "$fromAI('a')", 2: "$fromAI('two')" },
  { list: ["$fromAI('x')", { deep: ["$fromAI('y', 'why', 'boolean')"] }], z: "$fromAI('z', 'zed', 'json')" },
  { a: "$fromAI('k', 'same', 'number', 1)", b: "$fromAI('k', 'same', 'number', 2)" },
  { a: "$fromAI('k', 'same', 'number', 1)", b: "$fromAI('k', 'same', 'number')" },
  { a: "$fromAI('k', 'same', 'number')", b: "$fromAI('k', 'same', 'number', 3)" },
  { a: "$fromAI('k', 'one')", b: "$fromAI('k', 'two')" },
  { a: "$fromAI('k', 'one')", b: "$fromAI('k', 'one', 'number')" },
  { a: "$fromAI('k')", b: "$fromAI('k', '')" },
  { a: "$fromAI('k', 'd', 'String')", b: "$fromAI('k', 'd', 'string')" },
  { a: "$fromAI('ok')", b: "$fromAI('bad key')" },
  { a: "$fromAI('bad key')", b: "$fromAI('x', 'd', 'nope')" },
  { a: "$fromAI('k', 'one')", b: "$fromAI('k', 'two')", c: "$fromAI('')" },
  { a: "$fromAI('')", b: "$fromAI('k', 'one')", c: "$fromAI('k', 'two')" },
  { a: "$fromAI('x', '  ', 'string')", b: "$fromAI('y', ' spaced ', 'number', 'Infinity')" },
  { a: "$fromAI('j', 'obj', 'json', '{\"a\":1}')", b: "$fromAI('s', 'str', 'string', 'dflt')" },
  { nested: { a: { b: { c: ["=Hello {{ $fromAI('name') }} and {{ $fromAI('other', 'o', 'number') }}"] } } } },
  { a: "$fromAI('x'" },
];
const schemaCases = paramCases.map((params) => {
  try {
    const schema = toJsonSchema(getSchema(params));
    delete schema.$schema;
    return { params, schema };
  } catch (e) {
    return { params, error: e.message };
  }
});

// tool_name: nodeNameToToolName.
const names = ['Node', 'My Node', 'My  Node', 'a__b', 'a _b', 'Tool (v2)!', 'émoji 🎉 name', '---', '', ' ',
  'x'.repeat(70), 'y'.repeat(63) + ' z', 'y'.repeat(62) + '--z', 'y'.repeat(63) + '_-_', '_'.repeat(70), 'Get-Rows_2'];
const toolNames = names.map((name) => ({ name, tool: wf.nodeNameToToolName(name) }));

// substitute: zod-parse the arguments (defaults filled, as LangChain does), then
// evaluate each `=` string with the expression engine and a `$fromAI` that reads them.
const t = new Tournament();
const substituteCases = [
  { params: { limit: "={{ $fromAI('limit', 'How many', 'number', 10) }}", q: "={{ $fromAI('q') }}" }, args: { q: 'cats' } },
  { params: { limit: "={{ $fromAI('limit', 'How many', 'number', 10) }}" }, args: { limit: 3 } },
  { params: { body: "={{ $fromAI('body', 'payload', 'json') }}" }, args: { body: { a: [1, 2], b: null } } },
  { params: { flag: "={{ $fromAI('flag', '', 'boolean', false) }}" }, args: {} },
  { params: { greeting: "=Hello {{ $fromAI('name') }}!" }, args: { name: 'Ada' } },
  { params: { t: "=n={{ $fromAI('n', '', 'number') }}, big={{ $fromAI('big', '', 'number') }}, tiny={{ $fromAI('tiny', '', 'number') }}" }, args: { n: 1.5, big: 1e21, tiny: 1.5e-7 } },
  { params: { t: "=obj={{ $fromAI('o', '', 'json') }} arr={{ $fromAI('arr', '', 'json') }}" }, args: { o: { a: 1 }, arr: [1, [2, 3], { x: 1 }] } },
  { params: { t: "={{ $fromAI('s') }} " }, args: { s: 'trailing' } },
  { params: { t: "= {{ $fromAI('n', '', 'number') }}" }, args: { n: 5 } },
  { params: { t: "=plain text" }, args: {} },
  { params: { t: "=" }, args: {} },
  { params: { t: "no equals {{ $fromAI('x') }}" }, args: { x: 'v' } },
  { params: { t: "=esc \\{{ not code }} {{ $fromAI('x') }}" }, args: { x: 'v' } },
  { params: { t: "=a \\\\{{ $fromAI('x') }}" }, args: { x: 'v' } },
  { params: { t: "={{ /*n8n-auto-generated-fromAI-override*/ $fromAI('Query', ``, 'string') }}" }, args: { Query: 'q' } },
  { params: { t: "={{ $fromai('lower') }}|{{ $fromAi('mixed') }}" }, args: { lower: 'l', mixed: 'm' } },
  { params: { list: ["={{ $fromAI('a', '', 'number') }}", { x: "=x{{ $fromAI('a', '', 'number') }}" }], n: 5, b: true, z: null }, args: { a: 7 } },
  { params: { d: "={{ $fromAI('d', 'dflt', 'string', 'fallback') }}", e: "=<{{ $fromAI('d', 'dflt', 'string', 'fallback') }}>" }, args: {} },
  { params: { t: "={{ $fromAI('x', 'd', 'json', '{\"k\": [1]}') }}" }, args: {} },
  { params: { t: "={{ $fromAI('a', 'unterminated block') " }, args: { a: 'v' } },
];
const substituteCaseResults = substituteCases.map(({ params, args }) => {
  const parsed = getSchema(params).parse(args);
  const fromAI = (name, _d, _t, def) => (Object.prototype.hasOwnProperty.call(parsed, name) ? parsed[name] : undefined) ?? def;
  const data = { $fromAI: fromAI, $fromai: fromAI, $fromAi: fromAI };
  const resolve = (v) => {
    if (typeof v === 'string') return v.startsWith('=') ? t.execute(v.slice(1), data) ?? null : v;
    if (Array.isArray(v)) return v.map(resolve);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
    return v;
  };
  return { params, args, result: resolve(params) };
});

process.stdout.write(JSON.stringify({ parse: parseCases, schema: schemaCases, toolName: toolNames, substitute: substituteCaseResults }, null, 1) + '\n');
