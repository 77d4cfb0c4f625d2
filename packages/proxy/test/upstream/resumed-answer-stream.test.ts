import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { createAbortIsolatingFetch, RequestCarriers } from "../../src/upstream/abort-isolating-fetch.js";
import { useLoopbackServer } from "./loopback-server.js";

// An answer stream that carried event ids is resumed by the SDK when it ends without the answer (a GET with
// Last-Event-ID), again each time the resumed stream ends. The GET belongs to the call: it ends with it, and
// once the call is over a resumption is refused here, or a server could keep one connection per call open.

const NOTE = JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "w" } });
/** GETs that reached the server, and the resumed streams it holds open. */
const resumes: string[] = [];
const held: ServerResponse[] = [];

describe("a call's answer stream resumed by the SDK", () => {
  const server = useLoopbackServer((req, res) => {
    if (req.method === "GET") {
      resumes.push(String(req.headers["last-event-id"]));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      held.push(res);
      return;
    }
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const id = (JSON.parse(body) as { id: string }).id;
      res.writeHead(200, { "content-type": "text/event-stream" });
      // `…-open`: the stream stays open; otherwise it ends after its one event
      if (id.endsWith("1")) res.write(`id: ${id}-e\ndata: ${NOTE}\n\n`);
      else res.end(`id: ${id}-e\ndata: ${NOTE}\n\n`);
    });
  });
  const carriers = new RequestCarriers(/^acp-relay-[0-9]+$/);
  const fetchLike = createAbortIsolatingFetch(fetch, carriers);
  const connection = new AbortController();
  const post = (id: string): Promise<Response> =>
    fetchLike(`${server.url()}/mcp`, {
      method: "POST",
      body: `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{}}`,
      signal: connection.signal,
    });
  const resume = (from: string): Promise<Response> =>
    fetchLike(`${server.url()}/mcp`, { method: "GET", headers: { "last-event-id": from }, signal: connection.signal });

  it("is refused without asking the server once its call is over", async () => {
    const answer = await post("acp-relay-1");
    const reader = answer.body!.getReader();
    const first = (await reader.read()).value as Uint8Array;
    expect(new TextDecoder().decode(first)).toContain("id: acp-relay-1-e");
    carriers.end("acp-relay-1"); // the call timed out
    expect((await reader.read()).done).toBe(true);
    const again = await resume("acp-relay-1-e");
    expect(again.status).toBe(405);
    expect(resumes).toEqual([]);
  });

  it("is carried as its call's while the call waits: it ends when the call is over", async () => {
    const answer = await post("acp-relay-2");
    expect(await answer.text()).toContain("id: acp-relay-2-e");
    const resumed = await resume("acp-relay-2-e");
    expect(resumed.status).toBe(200);
    expect(resumes).toContain("acp-relay-2-e");
    carriers.end("acp-relay-2"); // the call timed out: the resumed stream the server holds is let go
    expect(await resumed.text()).toBe("");
    await expect.poll(() => held.every((res) => res.destroyed || res.writableEnded)).toBe(true);
    connection.abort();
  });
});
