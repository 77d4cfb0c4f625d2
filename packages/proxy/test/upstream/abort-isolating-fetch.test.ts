import { getEventListeners } from "node:events";
import type { RequestListener } from "node:http";
import { describe, expect, it } from "vitest";
import { createAbortIsolatingFetch } from "../../src/upstream/abort-isolating-fetch.js";
import { useLoopbackServer } from "./loopback-server.js";

/**
 * A loopback server: `/json` answers a small body, `/stream` sends one chunk and holds the response open, `/gone`
 * a 404, `/accepted` a 202.
 */
const answer: RequestListener = (req, res) => {
  if (req.url === "/stream") {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    return;
  }
  if (req.url === "/accepted") {
    res.writeHead(202).end();
    return;
  }
  if (req.url === "/gone") {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("no such thing");
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "x-echo": req.headers["x-tag"] ?? "" });
  res.end(JSON.stringify({ url: req.url }));
};

const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("abort-isolating fetch for URL upstreams", () => {
  const server = useLoopbackServer(answer);

  it("leaves no listener on the connection's signal after 2,000 answered requests", async () => {
    const connection = new AbortController();
    const isolating = createAbortIsolatingFetch();
    for (let i = 0; i < 2000; i++) {
      const response = await isolating(`${server.url()}/json?n=${i}`, { signal: connection.signal });
      expect(await response.json()).toEqual({ url: `/json?n=${i}` });
    }
    expect(listeners(connection.signal)).toBe(0);
  });

  it("keeps status, headers and body bytes of a successful answer", async () => {
    const isolating = createAbortIsolatingFetch();
    const response = await isolating(`${server.url()}/json?kept`, {
      headers: { "x-tag": "t1" },
      signal: new AbortController().signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("x-echo")).toBe("t1");
    expect(await response.text()).toBe('{"url":"/json?kept"}');
  });

  it("returns an error answer as it came and lets go of the signal at once", async () => {
    const connection = new AbortController();
    const response = await createAbortIsolatingFetch()(`${server.url()}/gone`, { signal: connection.signal });
    expect(response.status).toBe(404);
    expect(response.url).toBe(`${server.url()}/gone`);
    expect(listeners(connection.signal)).toBe(0);
    expect(await response.text()).toBe("no such thing");
  });

  it("holds one listener while a streamed body is open, and lets go when it is cancelled", async () => {
    const connection = new AbortController();
    const response = await createAbortIsolatingFetch()(`${server.url()}/stream`, { signal: connection.signal });
    const reader = response.body!.getReader();
    const first: unknown = (await reader.read()).value;
    expect(new TextDecoder().decode(first as Uint8Array)).toBe("data: first\n\n");
    expect(listeners(connection.signal)).toBe(1);
    await reader.cancel();
    expect(listeners(connection.signal)).toBe(0);
  });

  it("aborting the connection still ends a streamed body in flight", async () => {
    const connection = new AbortController();
    const response = await createAbortIsolatingFetch()(`${server.url()}/stream`, { signal: connection.signal });
    const reader = response.body!.getReader();
    await reader.read();
    const next = reader.read();
    connection.abort(new Error("connection closed"));
    await expect(next).rejects.toThrow();
    expect(listeners(connection.signal)).toBe(0);
  });

  it("aborting the connection aborts a request still waiting for its answer", async () => {
    const connection = new AbortController();
    let seen: AbortSignal | undefined;
    const hanging = createAbortIsolatingFetch((_url, init) => {
      seen = init?.signal ?? undefined;
      return new Promise<Response>((_resolve, reject) =>
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason as Error)),
      );
    });
    const pending = hanging(`${server.url()}/json`, { signal: connection.signal });
    expect(seen).not.toBe(connection.signal);
    connection.abort(new Error("connection closed"));
    await expect(pending).rejects.toThrow("connection closed");
    expect(seen?.aborted).toBe(true);
    expect(listeners(connection.signal)).toBe(0);
  });

  it("a request without a signal, or with one already aborted, goes to fetch unchanged (but for redirects)", async () => {
    const calls: (RequestInit | undefined)[] = [];
    const recording = createAbortIsolatingFetch((_url, init) => {
      calls.push(init);
      return Promise.resolve(new Response("ok"));
    });
    await recording(`${server.url()}/json`);
    const aborted = AbortSignal.abort();
    await recording(`${server.url()}/json`, { signal: aborted });
    // redirects are followed here, within the upstream's origin only (below)
    expect(calls[0]).toEqual({ redirect: "manual" });
    expect(calls[1]).toEqual({ signal: aborted, redirect: "manual" });
  });
});

// a streamable HTTP server answers a request with JSON or an event stream, and only notifications and answers with
// 202 Accepted; the SDK takes a 202 as the request sent, and its caller waits for an answer that cannot come
describe("a request a streamable HTTP server answers 202 Accepted", () => {
  const server = useLoopbackServer(answer);
  const post = (message: unknown): RequestInit => ({
    method: "POST",
    body: JSON.stringify(message),
    signal: new AbortController().signal,
  });
  const request = { jsonrpc: "2.0", id: "acp-relay-1", method: "tools/call", params: { name: "x" } };
  const failure =
    "it answered a `tools/call` request with 202 Accepted, so no answer will come (a streamable HTTP server answers a request with JSON or an event stream)";

  it("fails at once, with or without a signal, in a batch too", async () => {
    const fetchLike = createAbortIsolatingFetch();
    await expect(fetchLike(`${server.url()}/accepted`, post(request))).rejects.toThrow(failure);
    const { signal, ...unsignalled } = post(request);
    void signal;
    await expect(fetchLike(`${server.url()}/accepted`, unsignalled)).rejects.toThrow(failure);
    const note = { jsonrpc: "2.0", method: "notifications/progress", params: {} };
    await expect(fetchLike(`${server.url()}/accepted`, post([note, request]))).rejects.toThrow(failure);
    // the SDK client's own requests (numbered ids) too
    const read = { jsonrpc: "2.0", id: 7, method: "resources/read", params: { uri: "file:///x" } };
    await expect(fetchLike(`${server.url()}/accepted`, post(read))).rejects.toThrow(
      "it answered a `resources/read` request with 202 Accepted",
    );
  });

  it("passes a 202 to a notification or an answer, and every 202 over HTTP+SSE (whose answers come on its stream)", async () => {
    const fetchLike = createAbortIsolatingFetch();
    const note = { jsonrpc: "2.0", method: "notifications/initialized" };
    expect((await fetchLike(`${server.url()}/accepted`, post(note))).status).toBe(202);
    expect((await fetchLike(`${server.url()}/accepted`, post({ jsonrpc: "2.0", id: 3, result: {} }))).status).toBe(202);
    const sse = createAbortIsolatingFetch(fetch, undefined, { sse: true });
    expect((await sse(`${server.url()}/accepted`, post(request))).status).toBe(202);
  });
});

// Node's fetch follows a redirect to any host with every header but Authorization: a credential injected as
// a header would go wherever the upstream (or anyone on plain http between) points it.
describe("redirects of a URL upstream", () => {
  const seen: { where: string; method: string; key: string | undefined; body: string }[] = [];
  const record =
    (name: string, handle: RequestListener): RequestListener =>
    (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const key = req.headers["x-api-key"] as string | undefined;
        seen.push({ where: `${name}${req.url ?? ""}`, method: req.method ?? "", key, body });
        handle(req, res);
      });
    };
  const otherServer = useLoopbackServer(record("other", (_req, res) => res.end("{}")));
  const homeServer = useLoopbackServer(
    record("home", (req, res) => {
      if (req.url === "/away") res.writeHead(307, { location: `${otherServer.url()}/mcp` }).end();
      else if (req.url === "/moved") res.writeHead(308, { location: "/mcp" }).end();
      else if (req.url === "/see-other") res.writeHead(303, { location: "/mcp" }).end();
      else if (req.url === "/loop") res.writeHead(307, { location: "/loop" }).end();
      else res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }));
    }),
  );
  const post = { method: "POST", headers: { "x-api-key": "injected-credential-123" }, body: '{"jsonrpc":"2.0"}' };

  it("refuses a redirect to another origin: nothing, and no credential, reaches it", async () => {
    seen.length = 0;
    const fetchLike = createAbortIsolatingFetch();
    await expect(fetchLike(`${homeServer.url()}/away`, post)).rejects.toThrow(
      `it redirected to another origin (${otherServer.url()}): not followed`,
    );
    expect(seen.map((s) => s.where)).toEqual(["home/away"]);
  });

  it("follows 307 and 308 within the origin with the same method, body and headers", async () => {
    seen.length = 0;
    const response = await createAbortIsolatingFetch()(`${homeServer.url()}/moved`, post);
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toEqual([
      { where: "home/moved", method: "POST", key: "injected-credential-123", body: '{"jsonrpc":"2.0"}' },
      { where: "home/mcp", method: "POST", key: "injected-credential-123", body: '{"jsonrpc":"2.0"}' },
    ]);
  });

  it("refuses a POST turned into a GET (303), and a redirect loop, with an error that says so", async () => {
    await expect(createAbortIsolatingFetch()(`${homeServer.url()}/see-other`, post)).rejects.toThrow(
      /it answered a POST with a redirect \(303\)/,
    );
    await expect(createAbortIsolatingFetch()(`${homeServer.url()}/loop`, post)).rejects.toThrow(
      /redirected more than 5 times/,
    );
    const get = await createAbortIsolatingFetch()(`${homeServer.url()}/see-other`);
    expect(await get.json()).toEqual({ ok: true });
  });
});
