import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../src/index.js";
import { CONFORMANCE_SERVER, startConformanceServer, type Started } from "./fixtures/conformance-harness.js";
import { decideByTool, scriptedBroker, textOf } from "./harness.js";

interface RpcMessage {
  jsonrpc: "2.0";
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/** A bare streamable-HTTP client that never opens the standalone GET stream: only POST response streams. */
class PostOnlyClient {
  #session = "";
  constructor(readonly url: string) {}

  async post(message: RpcMessage): Promise<Response> {
    const response = await fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...(this.#session !== "" ? { "mcp-session-id": this.#session } : {}),
      },
      body: JSON.stringify(message),
    });
    this.#session = response.headers.get("mcp-session-id") ?? this.#session;
    return response;
  }

  async initialize(): Promise<void> {
    const init = await this.post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: { elicitation: {} },
        clientInfo: { name: "post-only-agent", version: "1.0.0" },
      },
    });
    await init.text();
    await (await this.post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
  }

  /** Calls a tool and reads its response stream to the end, answering server requests with `answer`. */
  async call(
    id: number,
    name: string,
    args: Record<string, unknown>,
    answer: (request: RpcMessage) => Record<string, unknown>,
  ): Promise<RpcMessage[]> {
    const response = await this.post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const seen: RpcMessage[] = [];
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
    if (reader === undefined) throw new Error("no response body");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return seen;
      buffered += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = event
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("");
        if (data === "") continue;
        const message = JSON.parse(data) as RpcMessage;
        seen.push(message);
        if (message.method !== undefined && message.id !== undefined) {
          const reply = { jsonrpc: "2.0" as const, id: message.id, result: answer(message) };
          await (await this.post(reply)).text();
        }
        if (message.id === id && message.method === undefined) {
          await reader.cancel();
          return seen;
        }
      }
    }
  }
}

async function sdkClient(url: string, name: string): Promise<Client & { elicited: string[]; logs: unknown[] }> {
  const client = Object.assign(new Client({ name, version: "1.0.0" }, { capabilities: { elicitation: {} } }), {
    elicited: [] as string[],
    logs: [] as unknown[],
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    client.elicited.push(String(request.params.message));
    return { action: "accept", content: { username: name, email: `${name}@example.com` } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void client.logs.push(n.params.data));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe("server-to-client messages through the proxy go to the right client, on the right stream", () => {
  let upstream: Started;
  let proxy: AcpProxy;
  let listener: HttpListener;
  let url = "";
  const clients: Client[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const broker = scriptedBroker(async () => {
    await held;
    return { kind: "approved", arguments: { ms: 10 }, consentResponse: {}, scope: "once" } as const;
  });

  beforeAll(async () => {
    upstream = await startConformanceServer();
    proxy = createProxy({
      upstreams: [{ name: "conformance", transport: "streamable-http", url: upstream.url }],
      // fixture_wait with ms 10 asks a person; the broker holds the ask until `release()`
      decide: (request) => decideByTool({ fixture_wait: request.arguments["ms"] === 10 ? "ask" : "accept" })(request),
      broker,
      callTimeoutMs: 20_000,
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0 });
    url = `${listener.url}/mcp`;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await listener?.close();
    await proxy?.close();
    await upstream?.stop();
  });

  it("an elicitation request and log lines reach a client that never opened the standalone stream", async () => {
    const client = new PostOnlyClient(url);
    await client.initialize();
    const asked: RpcMessage[] = [];
    const elicitation = await client.call(2, "test_elicitation", { message: "who are you?" }, (request) => {
      asked.push(request);
      return { action: "accept", content: { username: "post-only", email: "post@example.com" } };
    });
    expect(asked.map((r) => [r.method, r.params?.["message"]])).toEqual([["elicitation/create", "who are you?"]]);
    expect(textOf(elicitation.at(-1)?.result)).toContain('"username":"post-only"');

    const logging = await client.call(3, "test_tool_with_logging", {}, () => ({}));
    expect(logging.filter((m) => m.method === "notifications/message").map((m) => m.params?.["data"])).toEqual([
      "Tool execution started",
      "Tool processing data",
      "Tool execution completed",
    ]);
    expect(textOf(logging.at(-1)?.result)).toContain("executed successfully");
  });

  it("with one session's call in flight, an elicitation goes to that session only", async () => {
    const a = await sdkClient(url, "agent-a");
    const b = await sdkClient(url, "agent-b");
    clients.push(a, b);
    const result = await b.callTool({ name: "test_elicitation", arguments: { message: "for b" } });
    expect(textOf(result)).toContain('"username":"agent-b"');
    expect(b.elicited).toEqual(["for b"]);
    expect(a.elicited).toEqual([]);
  });

  it("with calls of two sessions in flight, an elicitation is refused rather than sent to either", async () => {
    const a = await sdkClient(url, "agent-c");
    const b = await sdkClient(url, "agent-d");
    clients.push(a, b);
    const waiting = a.callTool({ name: "fixture_wait", arguments: { ms: 1500 } });
    await expect.poll(() => [...proxy.sessions.values()].some((s) => s.calls.size > 0)).toBe(true);
    await expect(b.callTool({ name: "test_elicitation", arguments: { message: "whose?" } })).rejects.toThrow(
      /no agent client to answer `elicitation\/create`: calls of 2 agent sessions are in flight/,
    );
    const logged = await b.callTool({ name: "test_tool_with_logging", arguments: {} });
    expect(textOf(logged)).toContain("executed successfully");
    expect(textOf(await waiting)).toBe("waited 1500 ms");
    expect(a.elicited).toEqual([]);
    expect(b.elicited).toEqual([]);
    // the other session's log lines never reach a
    expect(a.logs).toEqual([]);
  });

  it("a call waiting for a person does not count as in flight: another session's elicitation still goes through", async () => {
    const waiting = await sdkClient(url, "agent-waiting");
    const asking = await sdkClient(url, "agent-asking");
    clients.push(waiting, asking);
    const pending = waiting.callTool({ name: "fixture_wait", arguments: { ms: 10 } }).catch((err: unknown) => err);
    await expect.poll(() => broker.asks.length).toBe(1);
    const result = await asking.callTool({ name: "test_elicitation", arguments: { message: "for asking" } });
    expect(textOf(result)).toContain('"username":"agent-asking"');
    expect(waiting.elicited).toEqual([]);
    release();
    expect(textOf(await pending)).toContain("waited 10 ms");
  });

  it("a resource update reaches the sessions subscribed to it, and only while they are", async () => {
    const uri = "test://watched-resource";
    const make = async (name: string): Promise<{ client: Client; updates: string[] }> => {
      const client = await sdkClient(url, name);
      clients.push(client);
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
      return { client, updates };
    };
    const subscriber = await make("subscriber");
    const other = await make("bystander");
    await subscriber.client.subscribeResource({ uri });
    await other.client.callTool({ name: "fixture_touch_resource", arguments: { uri } });
    await expect.poll(() => subscriber.updates).toEqual([uri]);
    await subscriber.client.unsubscribeResource({ uri });
    await other.client.callTool({ name: "fixture_touch_resource", arguments: { uri } });
    await subscriber.client.callTool({ name: "fixture_touch_resource", arguments: { uri } });
    expect(proxy.subscriptions.subscribers("conformance", uri)).toEqual([]);
    // updates arrive in order on one upstream stream: once the bystander's own arrives, the earlier ones were handled
    await other.client.subscribeResource({ uri });
    await subscriber.client.callTool({ name: "fixture_touch_resource", arguments: { uri } });
    await expect.poll(() => other.updates).toEqual([uri]);
    expect(subscriber.updates).toEqual([uri]);
  });
});

describe("progress from a stdio upstream", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let client: Client;

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [
        { name: "conformance", transport: "stdio", command: process.execPath, args: [CONFORMANCE_SERVER, "--stdio"] },
      ],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0 });
    client = await sdkClient(`${listener.url}/mcp`, "progress-agent");
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await listener?.close();
    await proxy?.close();
  });

  it("the last notification, written together with the result, is not lost (every time)", async () => {
    // the SDK client alone drops it most of the time: it forgets the progress handler with the response
    for (let i = 0; i < 8; i++) {
      const seen: number[] = [];
      const result = await client.request(
        { method: "tools/call", params: { name: "test_tool_with_progress", arguments: {} } },
        CallToolResultSchema,
        { onprogress: (p) => void seen.push(p.progress) },
      );
      expect(textOf(result)).toContain("executed successfully");
      expect(seen).toEqual([0, 50, 100]);
    }
  });
});

describe("the call timeout with progress from upstream", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let client: Client;

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [
        { name: "conformance", transport: "stdio", command: process.execPath, args: [CONFORMANCE_SERVER, "--stdio"] },
      ],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      callTimeoutMs: 600,
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0 });
    client = await sdkClient(`${listener.url}/mcp`, "timeout-agent");
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await listener?.close();
    await proxy?.close();
  });

  const call = (args: Record<string, unknown>, seen: number[]) =>
    client.request({ method: "tools/call", params: { name: "fixture_wait", arguments: args } }, CallToolResultSchema, {
      onprogress: (p) => void seen.push(p.progress),
      timeout: 30_000,
    });

  it("each progress notification restarts it: a long call that keeps reporting completes", async () => {
    const seen: number[] = [];
    const result = await call({ ms: 2000, every: 100 }, seen);
    expect(textOf(result)).toBe("waited 2000 ms");
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("a call that goes silent is cut off by it", async () => {
    const result = await call({ ms: 3000 }, []);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^upstream `conformance` did not answer in time/);
  });
});
