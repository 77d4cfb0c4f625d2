import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRE_TOOL_CHECK_TOOL, serveMcpStdio } from "@acp/server";
import { at, READ_EVENT, startTestServer, type TestServer } from "./harness.js";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ token: "mcp-stdio-ambiguous-token" });
});
afterAll(async () => {
  await s.close();
});

describe("acp serve --stdio: a line whose JSON repeats a key is refused, as an HTTP body is", () => {
  it("answers a tools/call whose event gives tool_category twice with an error, never a route", async () => {
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
    const answerTo = async (id: number): Promise<unknown> => {
      const mine = (l: string): boolean => at(JSON.parse(l), "id") === id;
      while (!lines.some(mine)) await new Promise((r) => setTimeout(r, 10));
      return JSON.parse(lines.find(mine) ?? "{}");
    };
    const send = (message: unknown): boolean => stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // JSON.parse keeps the last tool_category (public_read: accept); a reader keeping the first sees `unknown`
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: PRE_TOOL_CHECK_TOOL, arguments: { ...READ_EVENT, tool_category: "unknown" } },
    }).replace('"tool_category":"unknown"', '"tool_category":"unknown","tool_category":"public_read"');
    stdin.write(`${call}\n`);
    const reply = await answerTo(2);
    expect(at(reply, "result")).toBeUndefined();
    expect(at(reply, "error", "code")).toBe(-32600);
    expect(String(at(reply, "error", "message"))).toContain("tool_category");
    // the same call written once is answered, and the server went on
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: PRE_TOOL_CHECK_TOOL, arguments: READ_EVENT } });
    expect(at(await answerTo(3), "result", "structuredContent", "route")).toBe("accept");
    stdin.end();
    await served.closed;
  });
});
