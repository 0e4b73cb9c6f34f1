// The peer: LangChain JS's PostgresChatMessageHistory + BufferWindowMemory (k = 10)
// on the same PostgreSQL table, sessions and pseudo-random sequence as nodekit's
// `cargo bench -p nodekit --bench memory`. Run by benches/memory/run.sh.
import pg from "pg";
import { PostgresChatMessageHistory } from "@langchain/community/stores/message/postgres";
import { BufferWindowMemory } from "@langchain/classic/memory";

const sessions = Number(process.env.BENCH_SESSIONS || 1000);
const ops = Number(process.env.BENCH_OPS || 2000);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 });

// The same LCG as the Rust side, so both touch the same sessions.
let state = 42n;
const mask = (1n << 64n) - 1n;
function next(n) {
  state = (state * 6364136223846793005n + 1442695040888963407n) & mask;
  return Number((state >> 33n) % BigInt(n));
}

const memories = [];
for (let i = 0; i < Math.min(ops, 500); i++) {
  const chatHistory = new PostgresChatMessageHistory({ pool, tableName: "bench_chat_histories", sessionId: `bench-${next(sessions)}` });
  memories.push(new BufferWindowMemory({ chatHistory, k: 10, returnMessages: true, inputKey: "input", outputKey: "output" }));
}
const loads = [], saves = [];
for (let i = 0; i < ops; i++) {
  const memory = memories[i % memories.length];
  let t = process.hrtime.bigint();
  const vars = await memory.loadMemoryVariables({});
  loads.push(Number(process.hrtime.bigint() - t) / 1000);
  if (vars.history.length !== 20) throw new Error(`window of ${vars.history.length}`);
  t = process.hrtime.bigint();
  await memory.saveContext({ input: "a question" }, { output: "an answer" });
  saves.push(Number(process.hrtime.bigint() - t) / 1000);
}
const pct = (v, p) => v.sort((a, b) => a - b)[Math.floor((v.length - 1) * p)];
const result = { store: "PostgreSQL (LangChain JS)", load_p50_us: pct(loads, 0.5), load_p99_us: pct(loads, 0.99), save_p50_us: pct(saves, 0.5), save_p99_us: pct(saves, 0.99) };
console.log(`| ${result.store} | ${result.load_p50_us.toFixed(0)} µs | ${result.load_p99_us.toFixed(0)} µs | ${result.save_p50_us.toFixed(0)} µs | ${result.save_p99_us.toFixed(0)} µs |`);
if (process.env.BENCH_JSON) (await import("node:fs")).writeFileSync(process.env.BENCH_JSON, JSON.stringify(result));
await pool.end();
