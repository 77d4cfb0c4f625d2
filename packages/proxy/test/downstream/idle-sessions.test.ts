import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { decideByTool, fixture, scriptedBroker, textOf } from "../harness.js";

async function connect(url: string, name: string): Promise<{ client: Client; session: string }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return { client, session: transport.sessionId ?? "" };
}

describe("streamable-HTTP sessions that went away without DELETE are closed once idle", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [fixture()],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0, idleSessionMs: 300 });
  });
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("a client that closed its streams loses its session; one with its event stream open keeps it", async () => {
    const gone = await connect(listener.url, "gone");
    const staying = await connect(listener.url, "staying");
    expect(proxy.sessions.has(gone.session)).toBe(true);
    await gone.client.close(); // closes its streams, sends no DELETE
    await expect.poll(() => proxy.sessions.has(gone.session), { timeout: 10_000 }).toBe(false);
    // well past the idle limit, the client holding its standalone event stream open is still served
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(proxy.sessions.has(staying.session)).toBe(true);
    const result = await staying.client.callTool({ name: "echo", arguments: { text: "still here" } });
    expect(textOf(result)).toBe("fixture echo: still here");
    await staying.client.close();
  });
});
