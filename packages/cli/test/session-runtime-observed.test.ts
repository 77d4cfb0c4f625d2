import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createPipeline } from "@acp/core";
import { createProxy, type AcpProxy } from "@acp/proxy";
import { createProxySessionRuntime } from "../src/wiring/session-runtime.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");

// server-everything's `echo` is annotated read-only: from a server marked trusted (only then does the proxy
// take a `readOnlyHint`) the decision judges it `read`. The runtime must record
// the call as the decision judged it; told the call without its annotations it judged a `write`, counted it
// against the consequential budget and, once that was spent, refused to record the calls the decision had
// accepted ("executed although the session refuses it"), so their results never reached provenance.
describe("the session runtime records each call as the decision judged it", () => {
  const runtime = createProxySessionRuntime({
    intent: { goal: "echo things", allowed_actions: ["everything.echo"], budgets: { max_consequential_calls: 1 } },
    trustedServers: [],
    classify: [],
    now: () => new Date(),
  });
  const logged: string[] = [];
  let proxy: AcpProxy;
  let client: Client;

  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [{ name: "everything", transport: "stdio", command: EVERYTHING, args: [], trusted: true }],
      decide: (request, context) =>
        createPipeline(context === undefined ? [] : [runtime.sourceFor(context.sessionId)]).decide(request, new Date()),
      observer: runtime.observer,
      broker: { ask: () => Promise.resolve({ kind: "expired" }) },
      log: (line) => void logged.push(line),
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide, "s1");
    client = new Client({ name: "observed-agent", version: "1.0.0" });
    await client.connect(clientSide);
  }, 120_000);

  afterAll(async () => {
    await client.close();
    await proxy.close();
  });

  it("an annotated read-only tool is recorded as a read: every result enters provenance", async () => {
    for (let i = 0; i < 3; i++) {
      const result = await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      expect(result.isError).not.toBe(true);
    }
    const session = runtime.sessionOf("s1");
    await vi.waitFor(() => expect(session?.history).toHaveLength(3));
    expect(session?.history.map((h) => [h.category, h.consequential])).toStrictEqual([
      ["read", false],
      ["read", false],
      ["read", false],
    ]);
    await vi.waitFor(() =>
      expect(session?.provenance.filter((e) => e.source.startsWith("everything.echo#"))).toHaveLength(3),
    );
    expect(logged.filter((l) => l.includes("could not record"))).toStrictEqual([]);
  });
});
