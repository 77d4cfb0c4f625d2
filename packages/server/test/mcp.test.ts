import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PRE_TOOL_CHECK_TOOL, serveMcpStdio } from "@acp/server";
import { at, READ_EVENT, startTestServer, WRITE_EVENT, type TestServer } from "./harness.js";

const TOKEN = "mcp-test-token";
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: TOKEN });
});
afterAll(async () => {
  await s.close();
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

describe("MCP tool aana_pre_tool_check over streamable HTTP", () => {
  it("lists the tool with the contract's schema and returns the route in structuredContent.route", async () => {
    const client = await connect(TOKEN);
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === PRE_TOOL_CHECK_TOOL);
      expect(tool?.inputSchema.required).toContain("tool_name");
      const accept = await client.callTool({ name: PRE_TOOL_CHECK_TOOL, arguments: { ...READ_EVENT } });
      expect(at(accept.structuredContent, "route")).toBe("accept");
      const ask = await client.callTool({ name: PRE_TOOL_CHECK_TOOL, arguments: { ...WRITE_EVENT } });
      expect(at(ask.structuredContent, "route")).toBe("ask");
      expect(at(ask.structuredContent, "gate_decision")).toBe("fail");
      const invalid = await client.callTool({ name: PRE_TOOL_CHECK_TOOL, arguments: { tool_name: "x" } });
      expect(at(invalid.structuredContent, "route")).toBe("refuse");
    } finally {
      await client.close();
    }
  });

  it("refuses a client with a wrong token", async () => {
    await expect(connect("not-the-token")).rejects.toThrow();
  });
});

describe("MCP tool over stdio", () => {
  it("answers tools/call on stdin with the route", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const served = await serveMcpStdio(s.server.service, { stdin, stdout });
    const lines: string[] = [];
    let buffer = "";
    stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts.filter((p) => p !== ""));
    });
    const send = (message: unknown): boolean => stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: PRE_TOOL_CHECK_TOOL, arguments: WRITE_EVENT },
    });
    while (!lines.some((l) => l.includes('"id":2'))) await new Promise((r) => setTimeout(r, 10));
    const reply: unknown = JSON.parse(lines.find((l) => l.includes('"id":2')) ?? "{}");
    expect(at(reply, "result", "structuredContent", "route")).toBe("ask");
    // a line that is not a message is answered, and the server goes on
    stdin.write("{not json\n");
    stdin.write('[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n');
    send({ jsonrpc: "2.0", id: 4, method: "ping" });
    while (!lines.some((l) => l.includes('"id":4'))) await new Promise((r) => setTimeout(r, 10));
    const errors = lines.filter((l) => l.includes('"id":null')).map((l) => at(JSON.parse(l), "error", "code"));
    expect(errors).toEqual([-32700, -32600]);
    stdin.end();
    await served.closed;
  });
});
