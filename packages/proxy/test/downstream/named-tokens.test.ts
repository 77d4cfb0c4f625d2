import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionRequest } from "@acp/core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createProxy, listenHttp, type AcpProxy, type DecideContext, type HttpListener } from "../../src/index.js";
import { decideByTool, fixture, memoryAudit, scriptedBroker, textOf, startFixtureProxy } from "../harness.js";

const SHARED = "shared-token-0123456789abcdef";
const CI_BOT = "ci-bot-token-0123456789abcdef";
const NIGHTLY = "nightly-token-0123456789abcdef";

/** A streamable-HTTP client that calls itself `name`, sending `token`. */
async function connect(
  url: string,
  token: string,
  name = "self-named-agent",
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** A raw POST of a JSON-RPC message to a session, with a given token (or none). */
function postTo(url: string, sessionId: string, token: string | undefined, body: unknown): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

describe("acp proxy --http: tokens that name their agent (proxy.agent_tokens)", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  let url: string;
  const seen: ActionRequest[] = [];
  const contexts: (DecideContext | undefined)[] = [];
  const audit = memoryAudit();
  beforeAll(async () => {
    const decide = decideByTool({}, seen);
    proxy = createProxy({
      upstreams: [fixture()],
      decide: (request, context) => {
        contexts.push(context);
        return decide(request, context);
      },
      broker: scriptedBroker(() => ({ kind: "expired" })),
      audit,
    });
    await proxy.start();
    listener = await listenHttp(proxy, {
      port: 0,
      bearerToken: SHARED,
      agentTokens: new Map([
        ["ci_bot", CI_BOT],
        ["nightly", NIGHTLY],
      ]),
    });
    url = listener.url;
  });
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("a named token's calls are decided and audited as its agent, whatever the client calls itself", async () => {
    const { client } = await connect(url, CI_BOT, "nightly");
    try {
      const before = seen.length;
      const result = await client.callTool({ name: "echo", arguments: { text: "from the bot" } });
      expect(textOf(result)).toBe("fixture echo: from the bot");
      expect(seen.slice(before).map((r) => r.agent)).toEqual(["ci_bot"]);
      // the decision is told which token's agent it is (its share of the process's provenance room)
      expect(contexts.slice(before).map((c) => c?.tokenAgent)).toEqual(["ci_bot"]);
      const intercepted = audit.events.filter((e) => e.type === "tool_call_intercepted");
      expect(intercepted.at(-1)?.fields["agent"]).toBe("ci_bot");
    } finally {
      await client.close();
    }
  });

  it("the shared token's calls keep the client's own name", async () => {
    const { client } = await connect(url, SHARED, "claude-code");
    try {
      const before = seen.length;
      await client.callTool({ name: "echo", arguments: { text: "shared" } });
      expect(seen.slice(before).map((r) => r.agent)).toEqual(["claude-code"]);
      // a name the client chose is never taken for a token's agent
      expect(contexts.slice(before).map((c) => c !== undefined && "tokenAgent" in c)).toEqual([false]);
    } finally {
      await client.close();
    }
  });

  it("only the token that opened a session may use it: another named token or the shared one gets 403", async () => {
    const { client, transport } = await connect(url, CI_BOT);
    try {
      const sessionId = transport.sessionId;
      expect(sessionId).toBeTypeOf("string");
      const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } };
      const before = seen.length;
      for (const token of [NIGHTLY, SHARED]) {
        const res = await postTo(url, sessionId as string, token, call);
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/another token/);
      }
      const res = await fetch(`${url}/mcp`, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId as string, authorization: `Bearer ${NIGHTLY}` },
      });
      expect(res.status).toBe(403);
      // nothing was decided for the refused posts, and the session still works for its own token
      expect(seen.length).toBe(before);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "still mine" } }))).toBe(
        "fixture echo: still mine",
      );
      // a session of the shared token is not open to a named one either
      const shared = await connect(url, SHARED);
      try {
        const other = await postTo(url, shared.transport.sessionId as string, CI_BOT, call);
        expect(other.status).toBe(403);
      } finally {
        await shared.client.close();
      }
    } finally {
      await client.close();
    }
  });

  it("the legacy HTTP+SSE transport binds its session to the token the same way", async () => {
    const controller = new AbortController();
    const stream = await fetch(`${url}/sse`, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${CI_BOT}` },
      signal: controller.signal,
    });
    try {
      expect(stream.status).toBe(200);
      const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      while (!/sessionId=[^\s]+/.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const endpoint = /data: (\/messages\?sessionId=[^\s]+)/.exec(text)?.[1];
      expect(endpoint).toBeDefined();
      const post = (token?: string): Promise<Response> =>
        fetch(`${url}${endpoint}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        });
      expect((await post(NIGHTLY)).status).toBe(403);
      expect((await post(SHARED)).status).toBe(403);
      expect((await post()).status).toBe(401);
      expect((await post(CI_BOT)).status).toBe(202);
    } finally {
      controller.abort();
    }
  });
});

describe("acp proxy --http with named tokens only", () => {
  let proxy: AcpProxy;
  beforeAll(async () => {
    proxy = await startFixtureProxy();
  });
  afterAll(async () => proxy.close());

  it("listens beyond loopback and refuses a request without one of them", async () => {
    const listener = await listenHttp(proxy, {
      port: 0,
      bind: "0.0.0.0",
      insecurePlainHttp: true,
      agentTokens: new Map([["ci_bot", CI_BOT]]),
    });
    try {
      const local = `http://127.0.0.1:${listener.port}`;
      const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: {} };
      const post = (token?: string): Promise<Response> =>
        fetch(`${local}/mcp`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(init),
        });
      const none = await post();
      expect(none.status).toBe(401);
      expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect((await post(SHARED)).status).toBe(401);
      const { client } = await connect(local, CI_BOT);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "ok" } }))).toBe("fixture echo: ok");
      await client.close();
    } finally {
      await listener.close();
    }
  });
});
