import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createProxy, listenHttp, type AcpProxy, type HttpListener } from "../../src/index.js";
import { decideByTool, fixture, scriptedBroker, textOf } from "../harness.js";

// A slow-loris client opens connections and sends its request a byte now and then, never finishing: each
// one holds a connection (at most 1,024 are open at once) for as long as the listener waits. The listener
// waits a bounded time for the headers and for the whole request, then answers 408 and closes; what it
// answers (a call's event stream) is not bound by it.

/** Writes `text` on a raw connection to `port` and resolves with all it received once it is closed. */
function stall(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1", () => socket.write(text));
    let received = "";
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

describe("acp proxy --http: clients that send their request slowly", () => {
  let proxy: AcpProxy;
  let listener: HttpListener;
  beforeAll(async () => {
    proxy = createProxy({
      upstreams: [fixture()],
      decide: decideByTool({}),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      callTimeoutMs: 1_500,
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0, headersTimeoutMs: 200, requestTimeoutMs: 400 });
  }, 60_000);
  afterAll(async () => {
    await listener.close();
    await proxy.close();
  });

  it("a request whose headers stop half-way is answered 408 and its connection closed", async () => {
    const received = await stall(listener.port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty");
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it("a request whose body stops half-way is answered 408 and its connection closed", async () => {
    const received = await stall(
      listener.port,
      "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n" +
        '{"jsonrpc":"2.0","id":1,',
    );
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);

  it("an answer that takes longer than a request may is not cut: a session's call is answered", async () => {
    const client = new Client({ name: "agent", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${listener.url}/mcp`));
    await client.connect(transport);
    try {
      // `hang` is answered at the call timeout (1.5 s), well after the request's 400 ms
      const result = await client.callTool({ name: "hang", arguments: {} });
      expect(textOf(result)).toMatch(/^upstream `fixture` did not answer in time/);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "after" } }))).toContain("after");
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  }, 20_000);
});
