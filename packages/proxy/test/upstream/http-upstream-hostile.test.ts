import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/upstream/abort-isolating-fetch.js";
import { fixture, startInMemory, textOf } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

// A URL upstream speaking streamable HTTP, each of whose tools answers a call one hostile way. Every call
// must end (a tool error that says why) — at once when its answer can no longer answer it, at its timeout
// when the server just keeps it waiting —, no answer stream may stay open once its call gave up on it, no
// answer may reach a call it was not sent on, and the other upstream answers throughout.

const NAMES = [
  "not_json",
  "not_json_event",
  "unsent_id",
  "silent",
  "endless",
  "html",
  "batch",
  "bad_batch",
  "ended",
  "huge_event",
  "held",
  "steal",
  "release",
  "json_as_events",
  "events_as_json",
  "primed_silent",
  "primed_405",
  "primed_resumed",
  "accepted",
] as const;
const TOOLS = NAMES.map((name) => ({ name, inputSchema: { type: "object" } }));
/** Answer streams of `silent` and `endless` still open. */
let open = 0;
/** The answer stream of the `held` call, and the id it carries, till `release` answers it. */
let held: { readonly res: ServerResponse; readonly id: string | number } | undefined;

const event = (value: unknown): string => `event: message\ndata: ${JSON.stringify(value)}\n\n`;
const text = (id: string | number | undefined, words: string): unknown => ({
  jsonrpc: "2.0",
  id,
  result: { content: [{ type: "text", text: words }] },
});

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  const m = JSON.parse(body) as { id?: string | number; method: string; params?: { name?: string } };
  const json = (value: unknown): void => {
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
    res.end(JSON.stringify(value));
  };
  if (m.id === undefined) return void res.writeHead(202).end();
  if (m.method === "initialize") {
    const serverInfo = { name: "h", version: "1" };
    return json({
      jsonrpc: "2.0",
      id: m.id,
      result: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo },
    });
  }
  if (m.method === "tools/list") return json({ jsonrpc: "2.0", id: m.id, result: { tools: TOOLS } });
  const stream = (): void => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
  };
  const hold = (): void => {
    open++;
    res.once("close", () => open--);
  };
  const note = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "working" } };
  switch (m.params?.name) {
    case "not_json":
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end("{not json");
    case "not_json_event":
      // the event is not JSON-RPC, and the stream stays open: only the call's timeout would end it
      stream();
      return void res.write(`${event(note)}event: message\ndata: {not json\n\n`);
    case "unsent_id":
      return json(text(`${String(m.id)}000`, "not yours"));
    case "silent":
      stream();
      return hold();
    case "endless": {
      stream();
      hold();
      const line = { ...note, params: { level: "info", data: "x".repeat(500) } };
      const timer = setInterval(() => res.write(event(line)), 5);
      return void res.once("close", () => clearInterval(timer));
    }
    case "batch":
      // a JSON-RPC batch in one event: each of its messages is taken, the answer too
      stream();
      return void res.write(`event: message\ndata: ${JSON.stringify([note, text(m.id, "from a batch")])}\n\n`);
    case "bad_batch":
      stream();
      return void res.write(`event: message\ndata: ${JSON.stringify([text(m.id, "no"), 42])}\n\n`);
    case "ended":
      stream();
      return void res.end(event(note));
    case "huge_event":
      stream();
      return void res.write(`event: message\ndata: "${"x".repeat(MAX_MESSAGE_BYTES)}"\n\n`);
    case "held":
      stream();
      held = { res, id: m.id };
      return;
    case "steal":
      // answers the `held` call on this call's stream, then ends it without answering this call
      stream();
      return void res.end(event(text(held?.id, "stolen")));
    case "release":
      held?.res.end(event(text(held.id, "its own answer")));
      held = undefined;
      return json(text(m.id, "released"));
    case "json_as_events":
      // a Content-Type that lies: the answer is JSON, but said to be an event stream (no event in it)
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.end(JSON.stringify(text(m.id, "as events")));
    case "events_as_json":
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(event(text(m.id, "as json")));
    case "primed_silent":
      // an event id lets the SDK resume the stream (a GET with Last-Event-ID) once it ends: it stays open
      stream();
      hold();
      return void res.write(`id: ps-${String(m.id)}\n${event(note)}`);
    case "primed_405":
      stream();
      return void res.end(`id: p4-${String(m.id)}\n${event(note)}`);
    case "primed_resumed":
      stream();
      return void res.end(`id: pr-${String(m.id)}\n${event(note)}`);
    case "accepted":
      // 202 is for notifications and answers: no answer to this request will come, on this POST or any stream
      return void res.writeHead(202).end();
    default:
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html></html>");
  }
}

/** Resumes (GET with Last-Event-ID) the answer stream of a `primed_*` call: held open, refused, or answered. */
function resume(res: ServerResponse, from: string): void {
  if (from.startsWith("ps-")) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    open++;
    return void res.once("close", () => open--);
  }
  if (from.startsWith("pr-")) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    return void res.end(event(text(from.slice(3), "resumed")));
  }
  res.writeHead(405).end();
}

describe("a URL upstream answering calls in hostile ways", () => {
  const server = useLoopbackServer((req, res) => {
    const from = req.headers["last-event-id"];
    if (req.method === "GET" && typeof from === "string") return resume(res, from);
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => answer(req, res, body));
  });
  const upstreams = () => [fixture(), { name: "h", transport: "streamable-http" as const, url: `${server.url()}/mcp` }];

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
  it("a call whose answer can no longer come fails at once, saying why, and the session goes on", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: upstreams(), callTimeoutMs: 60_000, log: (l) => lines.push(l) });
    try {
      const call = caller(env.client);
      expect(await call("not_json")).toMatch(/^upstream `h` failed: .*JSON/);
      expect(await call("not_json_event")).toBe(
        "upstream `h` failed: its answer stream carried an event that is not a JSON-RPC message (`{not json`)",
      );
      expect(lines.some((l) => /call `acp-relay-\d+` failed at once: its answer stream carried/.test(l))).toBe(true);
      expect(await call("batch", false)).toBe("from a batch");
      expect(await call("bad_batch")).toMatch(
        /^upstream `h` failed: its answer stream carried an event that is not a JSON-RPC message \(`\[\{"jsonrpc"/,
      );
      const unanswered = "upstream `h` failed: the server ended this call's answer without answering it";
      expect(await call("ended")).toBe(unanswered);
      expect(await call("unsent_id")).toBe(unanswered);
      expect(lines.some((l) => /dropped an answer to "acp-relay-\d+000" on the answer stream of/.test(l))).toBe(true);
      expect(await call("huge_event")).toBe(
        `upstream \`h\` failed: its answer stream failed: the server's answer is over the ${MAX_MESSAGE_BYTES}-byte limit of one message`,
      );
      expect(await call("html")).toBe("upstream `h` failed: Streamable HTTP error: Unexpected content type: text/html");
      expect(await call("json_as_events")).toBe(unanswered);
      expect(await call("events_as_json")).toMatch(/^upstream `h` failed: .*JSON/);
      // the SDK resumes a stream that carried an event id: a refused resumption ends the call at once
      expect(await call("primed_405")).toBe(
        "upstream `h` failed: its answer stream ended, and resuming it failed (HTTP 405)",
      );
      expect(await call("primed_resumed", false)).toBe("resumed");
      expect(await call("accepted")).toBe(
        "upstream `h` failed: it answered a `tools/call` request with 202 Accepted, so no answer will come (a streamable HTTP server answers a request with JSON or an event stream)",
      );
    } finally {
      await env.close();
    }
  }, 120_000);

  it("an answer sent on another call's stream reaches neither call", async () => {
    const lines: string[] = [];
    const env = await startInMemory({ upstreams: upstreams(), callTimeoutMs: 60_000, log: (l) => lines.push(l) });
    try {
      const call = caller(env.client);
      const waiting = env.client.callTool({ name: "held", arguments: {} });
      await expect.poll(() => held !== undefined, { timeout: 10_000 }).toBe(true);
      expect(await call("steal")).toBe("upstream `h` failed: the server ended this call's answer without answering it");
      expect(lines.some((l) => /dropped an answer to "acp-relay-\d+" on the answer stream of/.test(l))).toBe(true);
      expect(await call("release", false)).toBe("released");
      expect(textOf(await waiting)).toBe("its own answer");
    } finally {
      await env.close();
    }
  }, 120_000);

  it("a call the server keeps waiting ends at its timeout, and its stream is let go", async () => {
    const env = await startInMemory({ upstreams: upstreams(), callTimeoutMs: 800 });
    try {
      const call = caller(env.client);
      const timedOut = /^upstream `h` did not answer in time/;
      expect(await call("silent")).toMatch(timedOut);
      expect(await call("endless")).toMatch(timedOut);
      // nor is a stream resumed after its call was over
      expect(await call("primed_silent")).toMatch(timedOut);
      // the answers of the calls given up on are not read for ever: the proxy closed them
      await expect.poll(() => open, { timeout: 10_000 }).toBe(0);
    } finally {
      await env.close();
    }
  }, 60_000);
});
