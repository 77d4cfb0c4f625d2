import { getEventListeners } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAbortIsolatingFetch } from "../../src/upstream/abort-isolating-fetch.js";

/** A loopback server: `/json` answers a small body, `/stream` sends one chunk and holds the response open, `/gone` a 404. */
function startServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.url === "/stream") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      return;
    }
    if (req.url === "/gone") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("no such thing");
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "x-echo": req.headers["x-tag"] ?? "" });
    res.end(JSON.stringify({ url: req.url }));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    );
  });
}

const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("abort-isolating fetch for URL upstreams", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    ({ server, url: base } = await startServer());
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("leaves no listener on the connection's signal after 2,000 answered requests", async () => {
    const connection = new AbortController();
    const isolating = createAbortIsolatingFetch();
    for (let i = 0; i < 2000; i++) {
      const response = await isolating(`${base}/json?n=${i}`, { signal: connection.signal });
      expect(await response.json()).toEqual({ url: `/json?n=${i}` });
    }
    expect(listeners(connection.signal)).toBe(0);
  });

  it("keeps status, headers and body bytes of a successful answer", async () => {
    const isolating = createAbortIsolatingFetch();
    const response = await isolating(`${base}/json?kept`, {
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
    const response = await createAbortIsolatingFetch()(`${base}/gone`, { signal: connection.signal });
    expect(response.status).toBe(404);
    expect(response.url).toBe(`${base}/gone`);
    expect(listeners(connection.signal)).toBe(0);
    expect(await response.text()).toBe("no such thing");
  });

  it("holds one listener while a streamed body is open, and lets go when it is cancelled", async () => {
    const connection = new AbortController();
    const response = await createAbortIsolatingFetch()(`${base}/stream`, { signal: connection.signal });
    const reader = response.body!.getReader();
    const first: unknown = (await reader.read()).value;
    expect(new TextDecoder().decode(first as Uint8Array)).toBe("data: first\n\n");
    expect(listeners(connection.signal)).toBe(1);
    await reader.cancel();
    expect(listeners(connection.signal)).toBe(0);
  });

  it("aborting the connection still ends a streamed body in flight", async () => {
    const connection = new AbortController();
    const response = await createAbortIsolatingFetch()(`${base}/stream`, { signal: connection.signal });
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
    const pending = hanging(`${base}/json`, { signal: connection.signal });
    expect(seen).not.toBe(connection.signal);
    connection.abort(new Error("connection closed"));
    await expect(pending).rejects.toThrow("connection closed");
    expect(seen?.aborted).toBe(true);
    expect(listeners(connection.signal)).toBe(0);
  });

  it("a request without a signal, or with one already aborted, goes to fetch unchanged", async () => {
    const calls: (RequestInit | undefined)[] = [];
    const recording = createAbortIsolatingFetch((_url, init) => {
      calls.push(init);
      return Promise.resolve(new Response("ok"));
    });
    await recording(`${base}/json`);
    const aborted = AbortSignal.abort();
    await recording(`${base}/json`, { signal: aborted });
    expect(calls[0]).toBeUndefined();
    expect(calls[1]?.signal).toBe(aborted);
  });
});
