import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { fixture, startInMemory, textOf } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

// A URL upstream speaking streamable HTTP, each of whose tools answers a call one hostile way. Every call
// must end (a tool error that says why), no answer stream may stay open once its call gave up on it, and
// the other upstream answers throughout.

const NAMES = ["not_json", "not_json_event", "unsent_id", "silent", "endless", "html"] as const;
const TOOLS = NAMES.map((name) => ({ name, inputSchema: { type: "object" } }));
/** Answer streams of `silent` and `endless` still open. */
let open = 0;

function answer(req: IncomingMessage, res: ServerResponse, text: string): void {
  const m = JSON.parse(text) as { id?: string | number; method: string; params?: { name?: string } };
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
  const held = (): void => {
    open++;
    res.once("close", () => open--);
  };
  switch (m.params?.name) {
    case "not_json":
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end("{not json");
    case "not_json_event":
      stream();
      return void res.write("event: message\ndata: {not json\n\n");
    case "unsent_id":
      return json({ jsonrpc: "2.0", id: `${String(m.id)}000`, result: { content: [] } });
    case "silent":
      stream();
      return held();
    case "endless": {
      stream();
      held();
      const note = {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "x".repeat(500) },
      };
      const timer = setInterval(() => res.write(`event: message\ndata: ${JSON.stringify(note)}\n\n`), 5);
      return void res.once("close", () => clearInterval(timer));
    }
    default:
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html></html>");
  }
}

describe("a URL upstream answering calls in hostile ways", () => {
  const server = useLoopbackServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => answer(req, res, text));
  });

  it("each call ends with a tool error that says why, its stream is let go, and the others go on", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [fixture(), { name: "h", transport: "streamable-http", url: `${server.url()}/mcp` }],
      callTimeoutMs: 800,
      log: (l) => lines.push(l),
    });
    try {
      const call = async (name: string): Promise<string> => {
        const [result, echo] = await Promise.all([
          env.client.callTool({ name, arguments: {} }),
          env.client.callTool({ name: "echo", arguments: { text: "alive" } }),
        ]);
        expect(textOf(echo)).toContain("alive");
        expect(result.isError).toBe(true);
        return textOf(result);
      };
      const timedOut = /^upstream `h` did not answer in time/;
      expect(await call("not_json")).toMatch(/^upstream `h` failed: .*JSON/);
      expect(await call("not_json_event")).toMatch(timedOut);
      expect(await call("unsent_id")).toMatch(timedOut);
      expect(lines.some((l) => l.includes("an id the proxy never sent: dropped"))).toBe(true);
      expect(await call("silent")).toMatch(timedOut);
      expect(await call("endless")).toMatch(timedOut);
      expect(await call("html")).toBe("upstream `h` failed: Streamable HTTP error: Unexpected content type: text/html");
      // the answers of the calls given up on are not read for ever: the proxy closed them
      await expect.poll(() => open, { timeout: 10_000 }).toBe(0);
    } finally {
      await env.close();
    }
  }, 60_000);
});
