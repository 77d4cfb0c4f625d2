import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { startFixtureProxy } from "../harness.js";

const IDLE_MS = 1000;

/**
 * A bare client: initialize, then hold the standalone event stream (GET) open. The stream's reader is
 * returned and must stay referenced: undici cancels the body of a Response that is garbage-collected
 * unread, which would close the stream under the test's feet (seen in CI).
 */
async function holdEventStream(url: string): Promise<{
  session: string;
  post: (body: object) => Promise<string>;
  events: ReadableStreamDefaultReader<Uint8Array>;
}> {
  let session = "";
  const post = async (body: object): Promise<string> => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...(session !== "" ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify(body),
    });
    session = response.headers.get("mcp-session-id") ?? session;
    return response.text();
  };
  await post({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "holder", version: "1.0.0" } },
  });
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  const stream = await fetch(url, {
    headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
  });
  expect(stream.status).toBe(200);
  if (stream.body === null) throw new Error("the event stream has no body");
  return { session, post, events: stream.body.getReader() };
}

describe("streamable-HTTP sessions that went away without DELETE are closed once idle", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  beforeAll(async () => {
    proxy = await startFixtureProxy();
    listener = await listenHttp(proxy, { port: 0, idleSessionMs: IDLE_MS });
  });
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("a client that closed its streams loses its session; one holding its event stream keeps it", async () => {
    const url = `${listener.url}/mcp`;
    const holder = await holdEventStream(url);
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const gone = new Client({ name: "gone", version: "1.0.0" });
    await gone.connect(transport);
    const goneSession = transport.sessionId ?? "";
    expect(proxy.sessions.has(goneSession)).toBe(true);
    await gone.close(); // closes its streams, sends no DELETE
    await expect.poll(() => proxy.sessions.has(goneSession), { timeout: 15_000 }).toBe(false);
    // well past the idle limit, the client holding its event stream open is still served
    await new Promise((resolve) => setTimeout(resolve, 2 * IDLE_MS));
    expect(proxy.sessions.has(holder.session)).toBe(true);
    const reply = await holder.post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "still here" } },
    });
    expect(reply).toContain("fixture echo: still here");
    await holder.events.cancel();
  });
});
