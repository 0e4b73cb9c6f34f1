// The official MCP TypeScript SDK's client (the version n8n 2.8.4 uses)
// against `nodekit mcp serve` serving examples/workflows/sql-agent.json.
//
//   node client.mjs stdio NODEKIT_PROGRAM WORKFLOW
//   node client.mjs http URL TOKEN
//
// NODEKIT_CREDENTIALS (the sqlite credential) is passed on to the program.
// Prints one line per check; exits 1 if any fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, extra] = process.argv.slice(2);
let failed = 0;
const check = (what, ok, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} ${mode}: ${what}${ok || !detail ? "" : ` (${detail})`}`);
  if (!ok) failed++;
};
const client = () => new Client({ name: "nodekit-mcp-e2e", version: "1.0.0" });

function transport(token) {
  if (mode === "stdio") {
    return new StdioClientTransport({
      command: target,
      args: ["mcp", "serve", extra],
      env: { ...process.env },
      stderr: "ignore",
    });
  }
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
}

const text = (result) => result.content?.find((c) => c.type === "text")?.text ?? "";

if (mode === "http") {
  // Without the token, or with a wrong one, the server refuses to talk.
  for (const token of [undefined, "wrong-token"]) {
    let refused = false;
    try {
      await client().connect(transport(token));
    } catch (e) {
      refused = /401|nauthori/.test(String(e));
    }
    check(`refused ${token ? "a wrong token" : "a request without the token"}`, refused);
  }
}

const mcp = client();
await mcp.connect(transport(extra));
check("initialised with nodekit", mcp.getServerVersion()?.name === "nodekit", JSON.stringify(mcp.getServerVersion()));

const { tools } = await mcp.listTools();
const names = tools.map((t) => t.name);
check("lists the workflow's tools", JSON.stringify(names) === JSON.stringify(["Select_Rows", "Run_Query"]), names.join(","));
const select = tools.find((t) => t.name === "Select_Rows");
check(
  "a flat object schema with properties",
  select?.inputSchema?.type === "object" && !!select.inputSchema.properties?.tableName &&
    !/\$ref|oneOf/.test(JSON.stringify(select.inputSchema)),
  JSON.stringify(select?.inputSchema),
);

const books = await mcp.callTool({
  name: "Select_Rows",
  arguments: { tableName: "products", whereConditions: "category = 'books'", orderBy: "price DESC", columns: "name, price" },
});
const rows = JSON.parse(text(books) || "{}").data ?? [];
check(
  "selectQueryTool answers with the rows",
  !books.isError && rows.length === 2 && rows[0].name === "Rust in practice (e-book)",
  text(books),
);

const attacks = [
  { tableName: "customers", whereConditions: "1=1; DROP TABLE customers" },
  { tableName: "customers", whereConditions: "1=1 UNION SELECT name, salary FROM staff_salaries" },
  { tableName: "customers; DROP TABLE customers" },
];
for (const args of attacks) {
  const refused = await mcp.callTool({ name: "Select_Rows", arguments: args });
  const answer = JSON.parse(text(refused) || "{}");
  check(
    `refuses an injection with isError (${JSON.stringify(args).slice(0, 60)})`,
    refused.isError === true && answer.success === false && typeof answer.errorType === "string",
    text(refused),
  );
}

const badArgs = await mcp.callTool({ name: "Select_Rows", arguments: { tableName: 7 } });
check("arguments that fail the schema are a tool error", badArgs.isError === true && /tableName/.test(text(badArgs)), text(badArgs));

let unknown = "";
try {
  await mcp.callTool({ name: "Drop_Everything", arguments: {} });
} catch (e) {
  unknown = String(e);
}
check("an unknown tool is a protocol error", /-32602/.test(unknown), unknown);

await mcp.close();
process.exit(failed ? 1 : 0);
