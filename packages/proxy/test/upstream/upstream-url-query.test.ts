import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { fixture, memoryAudit, startInMemory } from "../harness.js";

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

// Hosted MCP servers often take their key in the URL's query (`/sse?api_key=…`). A URL upstream that fails is
// reported with its address, on stderr and in the audit log (`upstream_failed`): never with that key.
describe("a URL upstream with a key in its query that cannot be reached", () => {
  it("is reported by address with the query's names only, the key in no log line nor audit event", async () => {
    const port = await closedPort();
    for (const url of [
      `http://127.0.0.1:${port}/mcp?api_key=k3y-in-the-query&v=2`,
      // fetch refuses a URL with a user in it, quoting the whole URL, query and all
      `http://agent@127.0.0.1:${port}/mcp?api_key=k3y-in-the-query&v=2`,
    ]) {
      const lines: string[] = [];
      const audit = memoryAudit();
      const env = await startInMemory({
        upstreams: [fixture(), { name: "remote", transport: "streamable-http", url }],
        log: (l) => lines.push(l),
        audit,
      });
      await env.close();
      const said = [...lines, ...audit.events.map((e) => JSON.stringify(e))].join("\n");
      expect(said).toContain(`http://127.0.0.1:${port}/mcp?api_key=…&v=…: `);
      expect(audit.events.some((e) => e.type === "upstream_failed")).toBe(true);
      expect(said).not.toContain("k3y-in-the-query");
    }
  }, 60_000);
});
