import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { ActionRequest } from "@acp/core";
import { createProxy, type AcpProxy } from "../src/index.js";
import { decision, EVERYTHING, fixture, ROOT, scriptedBroker, textOf } from "./harness.js";

describe("resources, prompts, notifications and server requests pass through", () => {
  const seen: ActionRequest[] = [];
  let proxy: AcpProxy;
  let client: Client;
  const logs: unknown[] = [];
  let listChanged = 0;
  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [EVERYTHING, fixture()],
      decide: (request) => {
        seen.push(request);
        const refused = request.tool === "resources/read" && String(request.arguments["uri"]).endsWith("/2");
        return Promise.resolve(decision(refused ? "refuse" : "accept", refused ? "policy:no-resource-2" : null));
      },
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    client = new Client({ name: "pass-agent", version: "1.0.0" }, { capabilities: { sampling: {} } });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (listChanged += 1));
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      content: { type: "text", text: "sampled by the agent's client" },
      model: "test-model",
    }));
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client.close();
    await proxy.close();
  });

  it("lists resources and templates and reads a resource through Decide (tool `resources/read`)", async () => {
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.length).toBeGreaterThan(0);
    const uri = resources[0]?.uri ?? "";
    const read = await client.readResource({ uri });
    expect(read.contents[0]?.uri).toBe(uri);
    expect(seen.at(-1)).toMatchObject({ tool: "resources/read", server: "everything", arguments: { uri } });
  });

  it("a refused resources/read is an error naming the rule", async () => {
    await expect(client.readResource({ uri: "demo://resource/dynamic/text/2" })).rejects.toThrow(
      /refused by policy rule `no-resource-2`/,
    );
  });

  it("an error the agent gets names its JSON-RPC code once, with the proxy's or the upstream's own text", async () => {
    const refused = await client.readResource({ uri: "demo://resource/dynamic/text/2" }).catch((e: unknown) => e);
    expect((refused as Error).message).toMatch(/^MCP error -32600: refused by policy rule `no-resource-2`/);
    const unknown = await client.getPrompt({ name: "no-such-prompt" }).catch((e: unknown) => e);
    expect((unknown as Error).message).toBe("MCP error -32602: unknown prompt `no-such-prompt`");
    // an upstream's own error reaches the agent as it reaches a client connected to that server directly
    const direct = new Client({ name: "direct", version: "1.0.0" });
    await direct.connect(new StdioClientTransport({ command: `${ROOT}node_modules/.bin/mcp-server-everything` }));
    try {
      const bad = { name: "args-prompt", arguments: {} };
      const expected = await direct.getPrompt(bad).catch((e: unknown) => e as Error);
      const relayed = await client.getPrompt(bad).catch((e: unknown) => e as Error);
      expect(expected).toBeInstanceOf(Error);
      expect((relayed as Error).message).toBe((expected as Error).message);
    } finally {
      await direct.close();
    }
  });

  it("lists and gets prompts", async () => {
    const { prompts } = await client.listPrompts();
    const simple = prompts.find((p) => p.name === "simple-prompt");
    expect(simple).toBeDefined();
    const got = await client.getPrompt({ name: "simple-prompt" });
    expect(got.messages.length).toBeGreaterThan(0);
  });

  it("relays upstream progress to the client's progress token", async () => {
    const ticks: Progress[] = [];
    const result = await client.request(
      {
        method: "tools/call",
        params: { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
      },
      CallToolResultSchema,
      { onprogress: (p) => void ticks.push(p) },
    );
    expect(textOf(result)).toContain("Long running operation completed");
    // the SDK client handles a progress notification a microtask after it is read, and drops one that
    // comes after the response: the last step can be lost on any connection, direct or not
    const values = ticks.map((t) => t.progress);
    expect(values.length).toBeGreaterThanOrEqual(2);
    expect(values).toEqual([1, 2, 3].slice(0, values.length));
    expect(ticks.every((t) => t.total === 3)).toBe(true);
  });

  it("forwards upstream logging messages to the client", async () => {
    await client.callTool({ name: "log", arguments: { text: "from upstream" } });
    await expect.poll(() => logs).toContain("from upstream");
  });

  it("an upstream tools/list_changed reaches the client and the new tool is served (and pinned)", async () => {
    const before = listChanged;
    await client.callTool({ name: "grow", arguments: {} });
    await expect.poll(() => listChanged).toBeGreaterThan(before);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("grown");
    expect(textOf(await client.callTool({ name: "grown", arguments: {} }))).toBe("grown");
  });

  it("forwards an upstream sampling request to the client with the call in flight", async () => {
    const result = await client.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "say something", maxTokens: 10 },
    });
    expect(textOf(result)).toContain("sampled by the agent's client");
  });
});
