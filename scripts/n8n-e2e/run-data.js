'use strict';
// What the checks of the end-to-end runs share: the run `n8n execute`
// printed, each node's output items by connection, and how a check fails.
const fs = require('fs');

/** The run in `runFile`: {data, json(node, connection), fail(why)}; a failed run is reported. */
function readRun(runFile) {
  const text = fs.readFileSync(runFile, 'utf8');
  // `n8n execute` prints log lines, then "Execution was successful:", a rule,
  // and the run as indented JSON; a late log line (the task runner's
  // registration) may follow it.
  const start = text.indexOf('\n{') + 1;
  const end = text.indexOf('\n}', start);
  const run = JSON.parse(text.slice(start, end < 0 ? undefined : end + 2));
  const data = run.data || run;
  const runData = data.resultData.runData;
  const fail = (why) => { console.error(`FAILED: ${why}`); process.exitCode = 1; };
  const json = (node, conn) => (runData[node] || []).flatMap((r) => ((r.data || {})[conn] || [[]])[0] || []).map((i) => i.json);
  if (data.resultData.error) fail(`the run failed: ${JSON.stringify(data.resultData.error).slice(0, 500)}`);
  return { data, runData, json, fail };
}

/** The scripted model's requests, one JSON line each. */
function readRequests(requestsFile) {
  return fs.readFileSync(requestsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

module.exports = { readRun, readRequests };
