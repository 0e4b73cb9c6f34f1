// An MCP server written with the official TypeScript SDK, over stdio, for
// nodekit's MCP Client Tool:
//   city_of     answers with a customer's city (text)
//   always_fails  answers with isError
//   slow        answers after 5 seconds
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const cities = { "Ada Lovelace": "London", "Grace Hopper": "New York" };
const server = new Server({ name: "ts-sdk-e2e", version: "1.0.0" }, { capabilities: { tools: {} } });
const nameArg = { type: "object", properties: { name: { type: "string", description: "The customer's name" } }, required: ["name"] };
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
await server.connect(new StdioServerTransport());
