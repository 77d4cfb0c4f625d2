import { describe, expect, it } from "vitest";
import { streamOpenBudget } from "../../src/upstream/stream-open-budget.js";
import { fixture, startInMemory } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

// The SDK opens an upstream's event stream again as soon as the server ends it, at once when the server
// said `retry: 0`: a server ending each at once kept the proxy looping, hundreds of GETs a second.

describe("opening an upstream's event streams again and again", () => {
  it("is free for a burst, then one a second, each open waiting its turn", () => {
    let now = 0;
    const wait = streamOpenBudget(() => now, 3, 1);
    expect([wait(), wait(), wait()]).toEqual([0, 0, 0]);
    expect([wait(), wait()]).toEqual([1000, 2000]);
    now = 10_000; // quiet for a while: the burst is back
    expect([wait(), wait(), wait(), wait()]).toEqual([0, 0, 0, 1000]);
  });

  let gets = 0;
  const server = useLoopbackServer((req, res) => {
    if (req.method === "GET") {
      gets++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.end("retry: 0\n\n");
    }
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s" });
      const serverInfo = { name: "h", version: "1" };
      const result =
        m.method === "initialize"
          ? { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo }
          : { tools: [] };
      res.end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
    });
  });

  it("a server ending its stream at once (retry: 0) gets it opened at most once a second, and it is said", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [fixture(), { name: "h", transport: "streamable-http", url: `${server.url()}/mcp` }],
      log: (l) => lines.push(l),
    });
    try {
      await expect
        .poll(() => lines.some((l) => l.includes("its event streams were opened 10 times at once")), {
          timeout: 10_000,
        })
        .toBe(true);
      // the burst, and the one open waiting its turn
      expect(gets).toBeLessThanOrEqual(11);
    } finally {
      await env.close();
    }
  }, 30_000);
});
