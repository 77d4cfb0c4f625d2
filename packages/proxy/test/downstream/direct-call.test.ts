import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { decideByTool, fixture, scriptedBroker } from "../harness.js";

// A POSTed plain tools/call of a streamable-HTTP session is answered by the listener itself (not through the
// SDK transport's Node -> Web conversion); on the wire it must be what the SDK transport sends, and anything
// the SDK transport would refuse still goes to it.

const ACCEPT = "application/json, text/event-stream";

describe("a tools/call POSTed over streamable HTTP, answered by the listener", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let session = "";
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${listener.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: ACCEPT,
        "mcp-protocol-version": "2025-06-18",
        ...(session !== "" ? { "mcp-session-id": session } : {}),
        ...headers,
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "refuse" }),
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0 });
    const init = await post({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    session = init.headers.get("mcp-session-id") ?? "";
    await init.text();
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text();
  }, 60_000);
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("answers with the SDK transport's SSE response: headers, one `message` event, then the end", async () => {
    const sdk = vi.spyOn(StreamableHTTPServerTransport.prototype, "handleRequest");
    const res = await post({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "hi" } },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(res.headers.get("mcp-session-id")).toBe(session);
    const body = await res.text();
    const reply = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "fixture echo: hi" }] } };
    expect(body).toBe(`event: message\ndata: ${JSON.stringify(reply)}\n\n`);
    // answered without the SDK transport
    expect(sdk).not.toHaveBeenCalled();
    sdk.mockRestore();
  });

  it("a refused call is answered the same way (a tool error under the caller's id, a string id kept)", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: "t-1",
      method: "tools/call",
      params: { name: "transfer", arguments: { amount: 5 } },
    });
    const body = await res.text();
    const message = JSON.parse(body.replace(/^event: message\ndata: /, "")) as {
      id: unknown;
      result: { isError?: boolean };
    };
    expect(message.id).toBe("t-1");
    expect(message.result.isError).toBe(true);
  });

  it("what the SDK transport refuses is still refused by it (Accept, Content-Type, protocol version)", async () => {
    const call = { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } };
    expect((await post(call, { accept: "application/json" })).status).toBe(406);
    expect((await post(call, { "content-type": "text/plain" })).status).toBe(415);
    expect((await post(call, { "mcp-protocol-version": "1999-01-01" })).status).toBe(400);
    // and a call with a member a plain call does not have goes through the SDK transport, answered as before
    const odd = await post({ ...call, id: 9, params: { ...call.params, task: { ttl: 1000 } } });
    expect(odd.status).toBe(200);
    expect(await odd.text()).toContain('"id":9');
  });
});
