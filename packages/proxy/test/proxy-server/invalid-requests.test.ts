import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ActionRequest } from "@acp/core";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { connectClient, decideByTool, fixture, rawStdioClient, scriptedBroker } from "../harness.js";

// A request the proxy cannot serve as sent gets a JSON-RPC error a client can act on: bad params are -32602
// (InvalidParams) with one line saying what is wrong, never -32603 (an internal error) with a schema dump; a
// second `initialize` on a session is -32600 (InvalidRequest).

let proxy: AcpProxy;
const decided: ActionRequest[] = [];

beforeAll(async () => {
  proxy = createProxy({
    upstreams: [fixture()],
    decide: decideByTool({}, decided),
    broker: scriptedBroker(() => ({ kind: "expired" })),
  });
  await proxy.start();
}, 60_000);
afterAll(async () => proxy.close());

type RawClient = Awaited<ReturnType<typeof rawStdioClient>>;

async function withRawClient(run: (client: RawClient) => Promise<void>): Promise<void> {
  const client = await rawStdioClient(proxy);
  try {
    await run(client);
  } finally {
    client.end();
  }
}

describe("a tools/call with bad params (stdio, raw JSON-RPC)", () => {
  it.each([
    ["a string", "x"],
    ["an array", [1, 2]],
    ["a number", 7],
    ["null", null],
    ["a boolean", true],
  ])("`arguments` that is %s: -32602, `arguments` must be an object; nothing decided or run", async (kind, args) => {
    await withRawClient(async (client) => {
      await client.initialize();
      const before = decided.length;
      client.send({ id: 1, method: "tools/call", params: { name: "echo", arguments: args } });
      expect((await client.answered(1)).error).toEqual({
        code: ErrorCode.InvalidParams,
        message: `tools/call: \`arguments\` must be an object (got ${kind})`,
      });
      expect(decided.length).toBe(before);
      // the session goes on
      client.send({ id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "after" } } });
      expect((await client.answered(2)).result?.["content"]).toEqual([{ type: "text", text: "fixture echo: after" }]);
    });
  });

  it("says what else is wrong in one line: params, name, a task-augmented call", async () => {
    await withRawClient(async (client) => {
      await client.initialize();
      // (`params` neither an object nor an array, or a bad `_meta`, is no JSON-RPC request: the transport says
      // -32600)
      const cases: [Record<string, unknown>, string][] = [
        [{ method: "tools/call" }, "tools/call: `params` must be an object with the tool's `name` (got nothing)"],
        [{ method: "tools/call", params: { name: 42 } }, "tools/call: `name` must be a string (got a number)"],
        // calls the fast path declines whatever their arguments (task-augmented)
        [
          { method: "tools/call", params: { name: "echo", arguments: {}, task: { ttl: "soon" } } },
          "tools/call: `task.ttl` must be a number (got a string)",
        ],
        [
          { method: "tools/call", params: { name: "echo", arguments: "x", task: { ttl: 1000 } } },
          "tools/call: `arguments` must be an object (got a string)",
        ],
      ];
      for (const [n, [message, text]] of cases.entries()) {
        client.send({ id: 10 + n, ...message });
        const error = (await client.answered(10 + n)).error;
        expect(error?.code, text).toBe(ErrorCode.InvalidParams);
        expect(error?.message.startsWith(text), `${error?.message} starts with ${text}`).toBe(true);
        expect(error?.message).not.toContain("\n");
      }
    });
  });
});

describe("a request of another method with bad params (stdio, raw JSON-RPC)", () => {
  // (invalid-params.test.ts has each method the proxy can serve; this proxy's upstream offers tools and logging)
  it("is -32602 when the session serves the method, and stays -32601 (method not found) when it does not", async () => {
    await withRawClient(async (client) => {
      await client.initialize();
      client.send({ id: 1, method: "logging/setLevel", params: { level: 3 } });
      expect((await client.answered(1)).error).toEqual({
        code: ErrorCode.InvalidParams,
        message:
          "logging/setLevel: `level` must be one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency` (got a number)",
      });
      // no upstream offers prompts, resources or completions: whatever the params, there is no such method
      const unserved: [string, Record<string, unknown>][] = [
        ["prompts/get", { name: 42 }],
        ["resources/read", { uri: 7 }],
        ["resources/subscribe", {}],
        ["completion/complete", { ref: "x" }],
        ["prompts/list", { cursor: 5 }],
      ];
      for (const [n, [method, params]] of unserved.entries()) {
        client.send({ id: 10 + n, method, params });
        expect((await client.answered(10 + n)).error?.code, method).toBe(ErrorCode.MethodNotFound);
      }
      client.send({ id: 2, method: "logging/setLevel", params: { level: "error" } });
      expect((await client.answered(2)).result).toEqual({});
    });
  });
});

describe("a tools/call with bad params from an SDK client (in memory) and over streamable HTTP", () => {
  it("the SDK client gets an McpError -32602 saying `arguments` must be an object", async () => {
    const client = await connectClient(proxy);
    try {
      const call = client.request(
        { method: "tools/call", params: { name: "echo", arguments: "x" as unknown as Record<string, unknown> } },
        CallToolResultSchema,
      );
      await expect(call).rejects.toBeInstanceOf(McpError);
      await expect(call).rejects.toMatchObject({
        code: ErrorCode.InvalidParams,
        message: "MCP error -32602: tools/call: `arguments` must be an object (got a string)",
      });
    } finally {
      await client.close();
    }
  });

  it("over streamable HTTP (the SDK transport's path): -32602 on the POST's stream, for logging/setLevel too", async () => {
    const listener: HttpListener = await listenHttp(proxy, { port: 0 });
    try {
      let session = "";
      const post = async (body: unknown): Promise<string> => {
        const res = await fetch(`${listener.url}/mcp`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-06-18",
            ...(session !== "" ? { "mcp-session-id": session } : {}),
          },
          body: JSON.stringify(body),
        });
        session ||= res.headers.get("mcp-session-id") ?? "";
        return res.text();
      };
      await post({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "http", version: "1" } },
      });
      await post({ jsonrpc: "2.0", method: "notifications/initialized" });
      const text = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: [] } });
      const data = text.split("\n").find((l) => l.startsWith("data: ")) ?? "data: {}";
      expect(JSON.parse(data.slice("data: ".length))).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: ErrorCode.InvalidParams, message: "tools/call: `arguments` must be an object (got an array)" },
      });
      // another method the session serves, the same way
      const level = await post({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: {} });
      const levelData = level.split("\n").find((l) => l.startsWith("data: ")) ?? "data: {}";
      expect(JSON.parse(levelData.slice("data: ".length))).toMatchObject({
        id: 2,
        error: {
          code: ErrorCode.InvalidParams,
          message: expect.stringMatching(
            /^logging\/setLevel: `level` must be one of `debug`, [^\n]+ \(got nothing\)$/,
          ) as unknown,
        },
      });
    } finally {
      await listener.close();
    }
  });
});

describe("initialize (stdio)", () => {
  const init = (name: string): Record<string, unknown> => ({
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name, version: "1" } },
  });

  it("a second initialize is refused (-32600): the client cannot rename itself in the middle of a session", async () => {
    await withRawClient(async (client) => {
      await client.initialize();
      client.send({ id: "again", ...init("someone-else") });
      expect((await client.answered("again")).error).toEqual({
        code: ErrorCode.InvalidRequest,
        message: "initialize: this session is already initialized (an MCP session is initialized once: open a new one)",
      });
      client.send({ id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "who" } } });
      await client.answered(1);
      expect(decided.at(-1)).toMatchObject({ tool: "echo", agent: "raw-client" });
    });
  });

  it("one with bad params is -32602 in a line, and a good one after it is served", async () => {
    await withRawClient(async (client) => {
      client.send({ id: "bad", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {} } });
      const bad = (await client.answered("bad")).error;
      expect(bad).toEqual({
        code: ErrorCode.InvalidParams,
        message: "initialize: `clientInfo` must be an object (got nothing)",
      });
      client.send({ id: "good", ...init("second-try") });
      expect((await client.answered("good")).result?.["serverInfo"]).toMatchObject({ name: "acp-proxy" });
    });
  });

  it("requests before initialize are served, as the SDK server serves them (MCP: the client SHOULD NOT send them)", async () => {
    await withRawClient(async (client) => {
      client.send({ id: 1, method: "tools/list" });
      const tools = (await client.answered(1)).result?.["tools"] as { name: string }[] | undefined;
      expect(tools?.map((t) => t.name)).toContain("echo");
    });
  });
});
