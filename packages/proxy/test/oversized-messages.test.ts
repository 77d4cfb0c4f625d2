import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createProxy, serveStdio, type UpstreamSpec } from "../src/index.js";
import { decideByTool, memoryAudit, scriptedBroker, startInMemory, textOf } from "./harness.js";

const OVERSIZED: UpstreamSpec = {
  name: "big",
  transport: "stdio",
  command: process.execPath,
  args: [fileURLToPath(new URL("./fixtures/oversized-server.mjs", import.meta.url))],
};

/** A started proxy with no upstreams, for what a client sends; `lines` is its log. */
async function bareProxy(): Promise<{ proxy: ReturnType<typeof createProxy>; lines: string[] }> {
  const lines: string[] = [];
  const proxy = createProxy({
    upstreams: [],
    decide: decideByTool({}),
    broker: scriptedBroker(() => ({ kind: "expired" })),
    log: (l) => lines.push(l),
  });
  await proxy.start();
  return { proxy, lines };
}

// The stdio transports hold one message to 10 MiB. What goes over it must be said, not disappear.
describe("messages over the stdio size limit", () => {
  it("an upstream answering with more than 10 MiB: the call gets a tool error and the log and audit say why", async () => {
    const lines: string[] = [];
    const audit = memoryAudit();
    const env = await startInMemory({ upstreams: [OVERSIZED], log: (l) => lines.push(l), audit });
    try {
      const result = await env.client.callTool({ name: "flood", arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^upstream `big` failed/);
      await expect
        .poll(() => lines.find((l) => l.startsWith("upstream `big` stopped")))
        .toMatch(/sent a message over the 10485760-byte limit/);
      await expect
        .poll(() => audit.events.find((e) => e.type === "upstream_failed" && e.fields["phase"] === "closed"))
        .toBeDefined();
      const closed = audit.events.find((e) => e.type === "upstream_failed" && e.fields["phase"] === "closed");
      expect(String(closed?.fields["message"])).toContain("over the 10485760-byte limit");
      expect(String(closed?.fields["message"])).not.toContain("the server closed the connection");
    } finally {
      await env.close();
    }
  });

  it("a client sending more than 10 MiB on stdio: the session closes and the log says why", async () => {
    const { proxy, lines } = await bareProxy();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    stdout.resume();
    const { closed } = await serveStdio(proxy, { stdin, stdout });
    const chunk = "x".repeat(1024 * 1024);
    stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"');
    for (let i = 0; i < 11; i++) stdin.write(chunk);
    await closed;
    expect(lines.some((l) => /the client sent a message over the 10485760-byte limit/.test(l))).toBe(true);
    await proxy.close();
  });

  it("a client line that is not JSON is reported on the log, and the session goes on", async () => {
    const { proxy, lines } = await bareProxy();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    await serveStdio(proxy, { stdin, stdout });
    stdin.write("this is not json\n");
    stdin.write('{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
    await expect.poll(() => out).toContain('"id":7');
    expect(lines.some((l) => l.startsWith("the client sent something its transport refused:"))).toBe(true);
    stdin.end();
    await proxy.close();
  });

  it("a client line that is not a message is answered with JSON-RPC's error, never left to time out", async () => {
    const { proxy } = await bareProxy();
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
    await serveStdio(proxy, { stdin, stdout });
    const sent = [
      "{not json",
      '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
      "42",
      '{"jsonrpc":"2.0","id":"bad-method","method":5}',
      '{"jsonrpc":"1.0","id":9,"method":"ping"}',
      '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
      // a response is never answered, even a malformed one
      '{"jsonrpc":"2.0","id":3,"result":5}',
      '{"jsonrpc":"2.0","id":"last","method":"ping"}',
    ];
    for (const line of sent) stdin.write(`${line}\n`);
    await expect.poll(() => out).toContain('"id":"last"');
    const answers = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    expect(answers.map((a) => [a.id, a.error?.code ?? "result"])).toEqual([
      [null, -32700],
      [null, -32600],
      [null, -32600],
      ["bad-method", -32600],
      [9, -32600],
      [null, -32600],
      ["last", "result"],
    ]);
    expect(answers[1]?.error?.message).toMatch(/batches are not supported/);
    stdin.end();
    await proxy.close();
  });
});
