'use strict';
// Times from an `n8n execute` run: the AI Agent node's execution time (the
// whole agent run, model and tool calls included) and the tool node's.
//   node timings.js RUN_OUTPUT                  one JSON line
//   node timings.js --summary NAME FILE.jsonl   medians of those lines
const fs = require('fs');
const args = process.argv.slice(2);
if (args[0] === '--summary') {
  const rows = fs.readFileSync(args[2], 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const median = (k) => { const v = rows.map((r) => r[k]).sort((a, b) => a - b); return v[Math.floor(v.length / 2)]; };
  console.log(`${args[1]}: ${rows.length} runs; agent run median ${median('agentMs')} ms, tool run median ${median('toolMs')} ms`);
} else {
  const text = fs.readFileSync(args[0], 'utf8');
  const runData = JSON.parse(text.slice(text.indexOf('\n{') + 1)).data.resultData.runData;
  const agentMs = runData['AI Agent'].reduce((t, r) => t + r.executionTime, 0);
  const toolMs = runData['Read customers'].reduce((t, r) => t + r.executionTime, 0);
  console.log(JSON.stringify({ agentMs, toolMs }));
}
