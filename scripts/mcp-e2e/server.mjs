// An MCP server written with the official TypeScript SDK, for nodekit's
// MCP Client Tool: over stdio, or with `--sse PORT` over the protocol's
// older HTTP+SSE transport (GET /sse, POST /messages) on 127.0.0.1.
//   city_of     answers with a customer's city (text)
//   always_fails  answers with isError
//   slow        answers after 5 seconds
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { createServer } from "node:http";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const cities = { "Ada Lovelace": "London", "Grace Hopper": "New York" };
const nameArg = { type: "object", properties: { name: { type: "string", description: "The customer's name" } }, required: ["name"] };
function makeServer() {
const server = new Server({ name: "ts-sdk-e2e", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "city_of", description: "The city a customer lives in.", inputSchema: nameArg },
    { name: "always_fails", description: "A tool that always fails.", inputSchema: nameArg },
    { name: "slow", description: "A tool that answers after five seconds.", inputSchema: nameArg },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
  const who = params.arguments?.name;
  if (params.name === "city_of") {
    return { content: [{ type: "text", text: `${who} lives in ${cities[who] ?? "an unknown city"}.` }] };
  }
  if (params.name === "always_fails") {
    return { isError: true, content: [{ type: "text", text: `the directory is closed for ${who}` }] };
  }
  if (params.name === "slow") {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    return { content: [{ type: "text", text: "too late" }] };
  }
  throw new Error(`unknown tool ${params.name}`);
});
return server;
}

if (process.argv[2] === "--sse") {
  const sessions = new Map();
  createServer(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      res.on("close", () => sessions.delete(transport.sessionId));
      await makeServer().connect(transport);
    } else if (req.method === "POST" && url.pathname === "/messages") {
      const transport = sessions.get(url.searchParams.get("sessionId"));
      if (transport) await transport.handlePostMessage(req, res);
      else res.writeHead(404).end("no such session");
    } else {
      res.writeHead(404).end();
    }
  }).listen(Number(process.argv[3]), "127.0.0.1");
} else {
  await makeServer().connect(new StdioServerTransport());
}
