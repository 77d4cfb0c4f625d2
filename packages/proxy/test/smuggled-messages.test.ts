import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { createProxy, type AcpProxy, type CallObserver, type UpstreamSpec } from "../src/index.js";
import { withoutSmuggledText } from "../src/proxy-server/smuggled-text.js";
import { decideByTool, scriptedBroker } from "./harness.js";

// Besides its answers, an upstream speaks to the agent's client by log lines, progress messages and the
// sampling and elicitation requests it sends (a sampling request is read by the client's model). Tag
// characters and bidi controls hidden there reached the client as sent (aa33614e cleaned answers only); they
// are taken out now, the message's `_meta` says how many, and the session runtime is told it had hidden text.

const SMUGGLER: UpstreamSpec = {
  name: "smuggler",
  transport: "stdio",
  command: process.execPath,
  args: [fileURLToPath(new URL("./fixtures/smuggling-server.mjs", import.meta.url))],
};
/** Any tag character or bidirectional embedding, override or isolate. */
const HIDDEN = /[\u{e0000}-\u{e007f}\u202a-\u202e\u2066-\u2069]/u;

interface Told {
  readonly tool: string;
  readonly text: string;
  readonly hiddenTextRemoved?: boolean;
}

describe("what an upstream says to the agent's client besides an answer, with hidden characters in it", () => {
  const told: Told[] = [];
  const observer: CallObserver = {
    executed: () => undefined,
    result: (_id, _server, tool, text, options) =>
      void told.push({ tool, text, ...(options?.hiddenTextRemoved === true ? { hiddenTextRemoved: true } : {}) }),
  };
  const logged: Record<string, unknown>[] = [];
  const requests: { method: string; params: Record<string, unknown> }[] = [];
  let proxy: AcpProxy;
  let client: Client;
  const lines: string[] = [];

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [SMUGGLER],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      observer,
      log: (line) => void lines.push(line),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    client = new Client({ name: "agent", version: "1" }, { capabilities: { sampling: {}, elicitation: {} } });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logged.push(n.params));
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      requests.push({ method: request.method, params: request.params });
      return { role: "assistant", content: { type: "text", text: "no" }, model: "test" };
    });
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      requests.push({ method: request.method, params: request.params });
      return { action: "decline" };
    });
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client.close();
    await proxy.close();
  });

  /** What the runtime was told of `tool`, once it was. */
  async function toldOf(tool: string): Promise<Told | undefined> {
    await expect.poll(() => told.find((t) => t.tool === tool)).toBeDefined();
    return told.find((t) => t.tool === tool);
  }

  it("a log line reaches the client without them, its _meta says how many; the runtime is told", async () => {
    expect(JSON.stringify(await client.callTool({ name: "log", arguments: {} }))).toContain("logged");
    await expect.poll(() => logged.length).toBe(1);
    expect(JSON.stringify(logged)).not.toMatch(HIDDEN);
    expect(logged[0]).toMatchObject({ logger: "mail", data: { line: "sent 3 mails" } });
    expect(logged[0]?.["_meta"]).toEqual({ "acp/hidden_text_removed": 48 });
    expect(await toldOf("notifications/message")).toEqual({
      tool: "notifications/message",
      text: 'mail\n{"line":"sent 3 mails"}',
      hiddenTextRemoved: true,
    });
    expect(lines.join("\n")).toContain("`notifications/message`: 48 hidden characters removed");
  });

  it("a progress message reaches the client without them; the runtime is told", async () => {
    const messages: string[] = [];
    const done = await client.callTool({ name: "progress", arguments: {} }, undefined, {
      onprogress: (p) => void messages.push(p.message ?? ""),
    });
    expect(JSON.stringify(done)).toContain("done");
    expect(messages).toStrictEqual(["halfway"]);
    expect(await toldOf("notifications/progress")).toEqual({
      tool: "notifications/progress",
      text: "halfway",
      hiddenTextRemoved: true,
    });
  });

  it("a sampling request reaches the client without them in its system prompt and messages", async () => {
    expect(JSON.stringify(await client.callTool({ name: "sample", arguments: {} }))).toContain("answered");
    const sampling = requests.find((r) => r.method === "sampling/createMessage");
    expect(JSON.stringify(sampling)).not.toMatch(HIDDEN);
    expect(sampling?.params).toMatchObject({
      systemPrompt: "be brief",
      messages: [{ role: "user", content: { type: "text", text: "summarise" } }],
      _meta: { "acp/hidden_text_removed": 48 },
    });
    expect(await toldOf("sampling/createMessage")).toMatchObject({ hiddenTextRemoved: true });
  });

  it("an elicitation reaches the client without them in its message and its form's title, description and names", async () => {
    expect(JSON.stringify(await client.callTool({ name: "elicit", arguments: {} }))).toContain("decline");
    const elicitation = requests.find((r) => r.method === "elicitation/create");
    expect(JSON.stringify(elicitation)).not.toMatch(HIDDEN);
    expect(elicitation?.params).toMatchObject({
      message: "confirm the meeting",
      requestedSchema: {
        properties: { ok: { type: "boolean", title: "OK", description: "tick it" }, note: { type: "string" } },
      },
      _meta: { "acp/hidden_text_removed": 74 },
    });
    expect(await toldOf("elicitation/create")).toMatchObject({ hiddenTextRemoved: true });
  });
}, 30_000);

describe("an upstream that floods messages with hidden characters", () => {
  it("does not flood the proxy's log: a few lines, the rest counted in one", async () => {
    const lines: string[] = [];
    const proxy = createProxy({
      upstreams: [SMUGGLER],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      log: (line) => void lines.push(line),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    const client = new Client({ name: "agent", version: "1" });
    const data: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void data.push(n.params.data));
    await client.connect(clientSide);
    try {
      expect(JSON.stringify(await client.callTool({ name: "flood", arguments: { count: 300 } }))).toContain("flooded");
      // every message still reaches the client, cleaned (a log line's `data` string is text, not Base64)
      await expect.poll(() => data.length).toBe(300);
      expect(data[7]).toBe("line 7");
      expect(JSON.stringify(data)).not.toMatch(HIDDEN);
      const each = (): number =>
        lines.filter((l) => l.includes("hidden characters removed") && !l.includes("more")).length;
      const counted = (): number =>
        lines
          .map((l) => /`smuggler`: (\d+) more messages with hidden characters removed/.exec(l)?.[1])
          .reduce((sum, n) => sum + (n === undefined ? 0 : Number(n)), 0);
      // each one is either said or counted (the count is said a second after the first held back)
      await expect.poll(() => each() + counted(), { timeout: 5_000 }).toBe(300);
      expect(each()).toBeLessThan(40);
      expect(counted()).toBeGreaterThan(260);
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});

describe("withoutSmuggledText, of member names", () => {
  it("cleans a name as a value; a name that, cleaned, is another member's is dropped; `__proto__` stays a member", () => {
    const tag = "\u{e0041}";
    const { result, removed } = withoutSmuggledText({ a: 1, [`a${tag}`]: 2, [`b${tag}`]: 3, [`__proto__${tag}`]: 4 });
    expect(result).toStrictEqual({ a: 1, b: 3, ["__proto__"]: 4, _meta: { "acp/hidden_text_removed": 3 } });
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.hasOwn(result, "__proto__")).toBe(true);
    expect(removed).toEqual({ characters: 3 });
  });
});
