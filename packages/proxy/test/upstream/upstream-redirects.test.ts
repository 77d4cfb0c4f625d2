import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { CredentialHook } from "../../src/index.js";
import { createAbortIsolatingFetch } from "../../src/upstream/abort-isolating-fetch.js";
import { startInMemory, textOf } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

// A URL upstream redirecting the proxy's requests elsewhere, through the real `acp proxy` and the SDK's
// transports: a credential injected as a custom header (which Node's fetch carries across origins, unlike
// `Authorization`) must never reach another origin, on a `tools/call` POST or on an event stream's GET.

const KEY = "redirect-5ec12e7-key-0077";
const credentials: CredentialHook = {
  inject: (_server, _tool, args) => Promise.resolve({ arguments: args, injected: [] }),
  secretValues: () => [],
  upstream: () => Promise.resolve({ headers: { "x-api-key": KEY }, injected: ["KEY"] }),
};

/** Every request a server saw: where, how, and the credential header it carried. */
interface Seen {
  readonly url: string;
  readonly method: string;
  readonly key: string | undefined;
}

function recording(seen: Seen[], handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const listener: RequestListener = (req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      seen.push({ url: req.url ?? "", method: req.method ?? "", key: req.headers["x-api-key"] as string | undefined });
      handle(req, res, body);
    });
  };
  return listener;
}

const TOOLS = [{ name: "away", inputSchema: { type: "object" } }];

/** A streamable HTTP server answering `initialize` and `tools/list`, and `tools/call` with `call`. */
function streamable(call: (res: ServerResponse) => void, get: (res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse, body: string): void => {
    if (req.method === "GET") return get(res);
    if (req.method !== "POST") return void res.writeHead(405).end();
    const m = JSON.parse(body) as { id?: number; method: string };
    const json = (value: unknown): void => {
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
      res.end(JSON.stringify(value));
    };
    if (m.id === undefined) return void res.writeHead(202).end();
    if (m.method === "initialize") {
      const result = {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "r", version: "1" },
      };
      return json({ jsonrpc: "2.0", id: m.id, result });
    }
    if (m.method === "tools/list") return json({ jsonrpc: "2.0", id: m.id, result: { tools: TOOLS } });
    call(res);
  };
}

describe("a streamable HTTP upstream redirecting to another origin", () => {
  const otherSeen: Seen[] = [];
  const homeSeen: Seen[] = [];
  let gotten: () => void = () => undefined;
  const got = new Promise<void>((resolve) => (gotten = resolve));
  const other = useLoopbackServer(recording(otherSeen, (_req, res) => res.writeHead(200).end("{}")));
  const home = useLoopbackServer(
    recording(
      homeSeen,
      streamable(
        (res) => res.writeHead(307, { location: `${other.url()}/mcp` }).end(),
        // the standalone event stream's GET: sent elsewhere too
        (res) => {
          res.writeHead(302, { location: `${other.url()}/events` }).end();
          gotten();
        },
      ),
    ),
  );

  it("fails the call naming the other origin; neither the POST nor the GET, nor the key, reaches it", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [{ name: "r", transport: "streamable-http", url: `${home.url()}/mcp` }],
      credentials,
      callTimeoutMs: 60_000,
      log: (l) => lines.push(l),
    });
    try {
      const result = await env.client.callTool({ name: "away", arguments: {} });
      expect(result.isError).toBe(true);
      const said = textOf(result);
      expect(said).toContain(`it redirected to another origin (${other.url()}): not followed`);
      expect([said, ...lines].join("\n")).not.toContain(KEY);
      // the proxy did send the credential home, on the POST and on the GET it redirected
      expect(homeSeen.some((s) => s.method === "POST" && s.key === KEY)).toBe(true);
      await got;
      expect(homeSeen.some((s) => s.method === "GET" && s.key === KEY)).toBe(true);
      expect(otherSeen).toEqual([]);
    } finally {
      await env.close();
    }
    expect(otherSeen).toEqual([]);
  }, 60_000);
});

describe("an HTTP+SSE upstream whose event stream's GET redirects to another origin", () => {
  const otherSeen: Seen[] = [];
  const homeSeen: Seen[] = [];
  // the other origin would serve a working event stream, were it ever reached
  const other = useLoopbackServer(
    recording(otherSeen, (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: endpoint\ndata: /messages\n\n");
    }),
  );
  const home = useLoopbackServer(
    recording(homeSeen, (_req, res) => res.writeHead(307, { location: `${other.url()}/sse` }).end()),
  );

  it("does not connect to it: the other origin never sees a request, nor the key", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [{ name: "s", transport: "sse", url: `${home.url()}/sse` }],
      credentials,
      callTimeoutMs: 60_000,
      log: (l) => lines.push(l),
    });
    try {
      const { tools } = await env.client.listTools();
      expect(tools.some((t) => t.name.startsWith("s"))).toBe(false);
      expect(homeSeen.some((s) => s.method === "GET" && s.key === KEY)).toBe(true);
      expect(otherSeen).toEqual([]);
      expect(lines.join("\n")).not.toContain(KEY);
    } finally {
      await env.close();
    }
  }, 60_000);
});

describe("a redirect from https to http on the same host and port", () => {
  it("is refused as another origin: the plain http URL is never asked", async () => {
    const asked: { url: string; redirect: RequestInit["redirect"]; key: string | null }[] = [];
    const given = (url: string | URL, init?: RequestInit): Promise<Response> => {
      asked.push({ url: String(url), redirect: init?.redirect, key: new Headers(init?.headers).get("x-api-key") });
      return Promise.resolve(
        new Response(null, { status: 308, headers: { location: "http://upstream.test:8443/mcp" } }),
      );
    };
    const fetchLike = createAbortIsolatingFetch(given);
    const post = { method: "POST", headers: { "x-api-key": KEY }, body: "{}" };
    await expect(fetchLike("https://upstream.test:8443/mcp", post)).rejects.toThrow(
      "it redirected to another origin (http://upstream.test:8443): not followed",
    );
    expect(asked).toEqual([{ url: "https://upstream.test:8443/mcp", redirect: "manual", key: KEY }]);
  });
});

describe("a redirect the proxy does not follow, within the origin", () => {
  it("is named without its query, userinfo or fragment (where an upstream could say back the key)", async () => {
    const given = (_url: string | URL, init?: RequestInit): Promise<Response> => {
      const key = new Headers(init?.headers).get("x-api-key") ?? "";
      const location = `http://me:${key}@upstream.test/next?key=${key}#${key}`;
      return Promise.resolve(new Response(null, { status: 303, headers: { location } }));
    };
    const post = { method: "POST", headers: { "x-api-key": KEY }, body: "{}" };
    const failure = await createAbortIsolatingFetch(given)("http://upstream.test/mcp", post).then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    expect(failure).toBe("it answered a POST with a redirect (303) to http://upstream.test/next");
    expect(failure).not.toContain(KEY);
  });
});
