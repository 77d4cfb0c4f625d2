import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/upstream/abort-isolating-fetch.js";
import { fixture, startInMemory, textOf } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

// A URL upstream speaking the older HTTP+SSE transport (every answer on the one event stream of the
// connection, POSTs answered 202), each of whose tools answers a call one hostile way. A call whose answer can
// no longer come fails at once; one the server keeps waiting ends at its timeout; the other upstream answers.

const NAMES = ["not_json_event", "batch", "unsent_id", "huge_event", "hang_up", "broken_answer"] as const;
const TOOLS = NAMES.map((name) => ({ name, inputSchema: { type: "object" } }));
/** The connection's event stream, and how many were opened. */
let events: ServerResponse | undefined;
let opened = 0;

const event = (value: unknown): string => `event: message\ndata: ${JSON.stringify(value)}\n\n`;
const text = (id: string | number | undefined, words: string): unknown => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: words }] },
});
const write = (chunk: string): void => void (events?.writableEnded === false && events.write(chunk));

function answer(body: string): void {
  const m = JSON.parse(body) as { id?: string | number; method: string; params?: { name?: string } };
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    const serverInfo = { name: "h", version: "1" };
    const result = { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo };
    return write(event({ jsonrpc: "2.0", id: m.id, result }));
  }
  if (m.method === "tools/list") return write(event({ jsonrpc: "2.0", id: m.id, result: { tools: TOOLS } }));
  const note = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "working" } };
  switch (m.params?.name) {
    case "not_json_event":
      return write("event: message\ndata: {not json\n\n");
    case "batch":
      // a JSON-RPC batch (HTTP+SSE servers speak 2024-11-05, which has them): each message is taken
      return write(`event: message\ndata: ${JSON.stringify([note, text(m.id, "from a batch")])}\n\n`);
    case "broken_answer":
      // an answer cut short: not JSON-RPC, but it names its call
      return write(`event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"content":[\n\n`);
    case "unsent_id":
      return write(event(text(`${String(m.id)}000`, "not yours")));
    case "huge_event":
      return write(`event: message\ndata: "${"x".repeat(MAX_MESSAGE_BYTES)}"\n\n`);
    default:
      events?.end();
  }
}

describe("a URL upstream over HTTP+SSE answering calls in hostile ways", () => {
  const server = useLoopbackServer((req, res) => {
    if (req.method === "GET" && req.url === "/sse") {
      events = res;
      opened++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.write("event: endpoint\ndata: /messages\n\n");
    }
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      res.writeHead(202).end("Accepted");
      answer(body);
    });
  });
  const upstreams = () => [fixture(), { name: "h", transport: "sse" as const, url: `${server.url()}/sse` }];

  /** Calls `name` on `h` beside a call to the other upstream, which must answer; returns the call's text. */
  const caller =
    (client: Awaited<ReturnType<typeof startInMemory>>["client"]) =>
    async (name: string, isError = true): Promise<string> => {
      const [result, echo] = await Promise.all([
        client.callTool({ name, arguments: {} }),
        client.callTool({ name: "echo", arguments: { text: "alive" } }),
      ]);
      expect(textOf(echo)).toContain("alive");
      expect(result.isError === true).toBe(isError);
      return textOf(result);
    };

  // the call timeout is a minute: each of these answers long before it, or the test fails
  it("a batch is taken apart; when the event stream ends, fails or carries what names no call, the calls in flight fail at once", async () => {
    opened = 0;
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: upstreams(), callTimeoutMs: 60_000, log: (l) => lines.push(l) });
    try {
      const call = caller(env.client);
      expect(await call("batch", false)).toBe("from a batch");
      expect(await call("broken_answer")).toMatch(
        /^upstream `h` failed: its event stream \(HTTP\+SSE\) carried, for this call, an event that is not a JSON-RPC message \(`\{"jsonrpc":"2\.0","id":"acp-relay-\d+","result"/,
      );
      expect(await call("huge_event")).toBe(
        `upstream \`h\` failed: the server's event stream (HTTP+SSE), which carries every answer, failed: the server's answer is over the ${MAX_MESSAGE_BYTES}-byte limit of one message`,
      );
      expect(lines.some((l) => l.includes("1 call(s) in flight failed at once: the server's event stream"))).toBe(true);
      // the SDK opens the stream again (a new session at the endpoint it names): the session goes on
      await expect.poll(() => opened, { timeout: 20_000 }).toBe(2);
      expect(await call("hang_up")).toBe(
        "upstream `h` failed: the server's event stream (HTTP+SSE), which carries every answer, ended",
      );
      await expect.poll(() => opened, { timeout: 20_000 }).toBe(3);
      // an event that is no JSON-RPC and names no call: the stream is broken, it ends there and is opened again
      expect(await call("not_json_event")).toBe(
        "upstream `h` failed: the server's event stream (HTTP+SSE), which carries every answer, broke: it carried an event that is not a JSON-RPC message (`{not json`)",
      );
      await expect.poll(() => opened, { timeout: 20_000 }).toBe(4);
      expect(await call("batch", false)).toBe("from a batch");
    } finally {
      await env.close();
    }
  }, 120_000);

  // one stream carries every call's answers: an answer under an id never sent (JSON-RPC, to a call that may
  // have been given up on) is reported and dropped, and the calls wait for their answers
  it("an answer to an id never sent is reported, and the call ends at its timeout", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: upstreams(), callTimeoutMs: 800, log: (l) => lines.push(l) });
    try {
      const call = caller(env.client);
      const timedOut = /^upstream `h` did not answer in time/;
      expect(await call("unsent_id")).toMatch(timedOut);
      expect(lines.some((l) => l.includes("an id the proxy never sent: dropped"))).toBe(true);
      expect(await call("batch", false)).toBe("from a batch");
    } finally {
      await env.close();
    }
  }, 60_000);
});
