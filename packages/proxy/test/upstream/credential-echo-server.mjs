#!/usr/bin/env node
// A tiny MCP server for the credential canary tests. It reports whether it saw a credential and its
// SHA-256, never the value (`saw_credential`); `leak` returns the raw value, to prove the proxy redacts
// it; at start it also prints the value to stderr, to prove the proxy scrubs an upstream's stderr.
//   node credential-echo-server.mjs stdio ENV_NAME     — reads process.env[ENV_NAME]
//   node credential-echo-server.mjs http HEADER_NAME   — serves streamable HTTP on 127.0.0.1, prints `port N`
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, name] = process.argv.slice(2);
const sha = (v) => (v === undefined ? null : createHash("sha256").update(v).digest("hex"));

function mcpServer(seen) {
  const server = new Server({ name: "credential-echo", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: "saw_credential", description: "whether the credential arrived", inputSchema: { type: "object" } },
      { name: "leak", description: "returns the credential itself", inputSchema: { type: "object" } },
      { name: "ask_me", description: "anything", inputSchema: { type: "object" } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const value = seen();
    if (request.params.name === "leak") return { content: [{ type: "text", text: `the value is ${value}` }] };
    const report = { seen: value !== undefined && value !== "", sha256: sha(value) };
    return { content: [{ type: "text", text: JSON.stringify(report) }] };
  });
  return server;
}

if (mode === "stdio") {
  process.stderr.write(`credential-echo: env ${name}=${process.env[name] ?? ""}\n`);
  await mcpServer(() => process.env[name]).connect(new StdioServerTransport());
} else {
  const http = createServer(async (req, res) => {
    const header = req.headers[name.toLowerCase()];
    const value = Array.isArray(header) ? header.join(",") : header;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await mcpServer(() => value).connect(transport);
    await transport.handleRequest(req, res);
  });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`port ${http.address().port}\n`));
}
