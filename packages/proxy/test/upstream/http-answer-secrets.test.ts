import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import type { CredentialHook } from "../../src/index.js";
import { startInMemory, textOf } from "../harness.js";
import { useLoopbackServer } from "./loopback-server.js";

const HEADER = "hdr-5ec12e7-value-0042";
const ARGUMENT = "arg-5ec12e7-value-0099";

/** A header on the upstream's transport, and a value in every call's `secret` argument. */
const credentials: CredentialHook = {
  inject: (_server, _tool, args) => Promise.resolve({ arguments: { ...args, secret: ARGUMENT }, injected: ["ARG"] }),
  secretValues: () => [ARGUMENT],
  upstream: () => Promise.resolve({ headers: { "x-api-key": HEADER }, injected: ["KEY"] }),
};

/** Says back what the proxy sent it, where the proxy quotes it: in an event that is no JSON-RPC, in an answer's id. */
function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  const m = JSON.parse(body) as { id?: string | number; method: string; params?: Record<string, unknown> };
  const json = (value: unknown): void => {
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
    res.end(JSON.stringify(value));
  };
  if (m.id === undefined) return void res.writeHead(202).end();
  if (m.method === "initialize") {
    const serverInfo = { name: "h", version: "1" };
    const result = { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo };
    return json({ jsonrpc: "2.0", id: m.id, result });
  }
  const tools = ["garbage", "other_id"].map((name) => ({ name, inputSchema: { type: "object" } }));
  if (m.method === "tools/list") return json({ jsonrpc: "2.0", id: m.id, result: { tools } });
  const args = m.params?.["arguments"] as { secret?: string } | undefined;
  const said = `${String(req.headers["x-api-key"])} ${args?.secret ?? ""}`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  if (m.params?.["name"] === "garbage") return void res.end(`data: {${said}\n\n`);
  res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: said, result: {} })}\n\n`);
}

// What the proxy says of an answer it fails a call on, or drops, quotes the upstream: never a value it injected.
describe("a URL upstream saying back injected values where the proxy quotes it", () => {
  const server = useLoopbackServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => answer(req, res, body));
  });

  it("the call's tool error and the proxy's log carry neither the header nor the argument's value", async () => {
    const lines: string[] = [];
    const env = await startInMemory({
      upstreams: [{ name: "h", transport: "streamable-http", url: `${server.url()}/mcp` }],
      credentials,
      callTimeoutMs: 60_000,
      log: (l) => lines.push(l),
    });
    try {
      const garbage = textOf(await env.client.callTool({ name: "garbage", arguments: {} }));
      expect(garbage).toMatch(/^upstream `h` failed: its answer stream carried an event that is not a JSON-RPC/);
      const other = textOf(await env.client.callTool({ name: "other_id", arguments: {} }));
      expect(other).toBe("upstream `h` failed: the server ended this call's answer without answering it");
      expect(lines.some((l) => l.includes("dropped an answer to"))).toBe(true);
      const everything = [garbage, other, ...lines].join("\n");
      expect(everything).toContain("[REDACTED]");
      expect(everything).not.toContain(HEADER);
      expect(everything).not.toContain(ARGUMENT);
    } finally {
      await env.close();
    }
  }, 60_000);
});
