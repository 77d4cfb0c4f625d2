import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { decideByTool, fixture, scriptedBroker } from "../harness.js";

// What a hostile or broken client sends the HTTP listener: each is answered with an error of its own and
// leaves nothing behind; the sessions of other clients go on.

const ACCEPT = "application/json, text/event-stream";
const MAX_BODY = 64 * 1024;

const initialize = (id: number): Record<string, unknown> => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe("acp proxy --http: hostile requests", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let session = "";
  /** POSTs `body` (in the session unless `fresh`), with `headers` over the usual ones. */
  const post = (body: string, headers: Record<string, string> = {}, fresh = false, path = "/mcp") =>
    fetch(`${listener.url}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: ACCEPT,
        "mcp-protocol-version": "2025-06-18",
        ...(session !== "" && !fresh ? { "mcp-session-id": session } : {}),
        ...headers,
      },
      body,
    });
  const answer = async (response: Response): Promise<{ status: number; text: string }> => ({
    status: response.status,
    text: await response.text(),
  });

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [fixture()],
      decide: decideByTool({ transfer: "refuse" }),
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0, maxSessions: 4, maxBodyBytes: MAX_BODY });
    const init = await post(JSON.stringify(initialize(0)));
    session = init.headers.get("mcp-session-id") ?? "";
    await init.text();
    await (await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))).text();
  }, 60_000);
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("an initialize the transport refuses (Accept, Content-Type, version) opens no session and holds no server", async () => {
    const held = proxy.sessions.size;
    const refusals = [
      { accept: "application/json" },
      { "content-type": "text/plain" },
      { "content-type": "application/x-www-form-urlencoded" },
    ];
    // many more than max_sessions: none of them may count, nor stay behind
    for (let i = 0; i < 10; i++) {
      for (const headers of refusals) {
        const { status } = await answer(await post(JSON.stringify(initialize(1)), headers, true));
        expect([406, 415]).toContain(status);
      }
    }
    expect(proxy.sessions.size).toBe(held);
    // and a well-formed one still opens
    const ok = await post(JSON.stringify(initialize(2)), {}, true);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("mcp-session-id")).toMatch(/^[0-9a-f-]{36}$/);
    await ok.text();
    expect(proxy.sessions.size).toBe(held + 1);
  });

  it("a body over the limit is refused with 413, without a session or with one", async () => {
    const big = JSON.stringify({ ...initialize(3), pad: "x".repeat(MAX_BODY) });
    const fresh = await answer(await post(big, {}, true));
    expect(fresh.status).toBe(413);
    expect(fresh.text).toContain(`request body larger than ${MAX_BODY} bytes`);
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "x".repeat(MAX_BODY) } },
    });
    expect((await answer(await post(call))).status).toBe(413);
  });

  it("a body that is not JSON is refused with JSON-RPC's parse error", async () => {
    for (const body of ["{", "not json", '{"jsonrpc":"2.0",', "\u0000"]) {
      const { status, text } = await answer(await post(body));
      expect(status).toBe(400);
      expect(JSON.parse(text)).toMatchObject({ error: { code: -32700 }, id: null });
    }
  });

  it("a batch is gated call by call: a refused call in it is refused, the accepted one answered", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "echo", arguments: { text: "in a batch" } } },
      { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "transfer", arguments: {} } },
    ];
    const { status, text } = await answer(await post(JSON.stringify(batch)));
    // the SDK transport answers a batch (or refuses it, as JSON-RPC of 2025-06-18 has none): never unchecked
    if (status === 200) {
      expect(text).toContain("in a batch");
      expect(text).not.toContain('"id":11,"result":{"content":[{"type":"text","text":"transferred');
      expect(text).toMatch(/"id":11/);
      expect(text).toContain("policy:refuse-transfer");
    } else {
      expect(status).toBe(400);
    }
    // an initialize in a batch opens no session
    const init = await answer(await post(JSON.stringify([initialize(12), initialize(13)]), {}, true));
    expect(init.status).toBe(400);
  });

  it("a guessed or unknown session id is refused (streamable HTTP and HTTP+SSE)", async () => {
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 20,
      method: "tools/call",
      params: { name: "echo", arguments: {} },
    });
    const guessed = await answer(await post(call, { "mcp-session-id": "00000000-0000-4000-8000-000000000000" }));
    expect(guessed.status).toBe(404);
    const legacy = await answer(await post(call, {}, true, `/messages?sessionId=${encodeURIComponent(session)}`));
    // a streamable session's id is no HTTP+SSE session
    expect(legacy.status).toBe(404);
  });
});
