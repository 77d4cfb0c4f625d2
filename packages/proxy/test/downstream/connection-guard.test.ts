import { connect as tcpConnect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createProxy, listenHttp, type AcpProxy, type HttpListener, type HttpListenOptions } from "../../src/index.js";
import { decideByTool, scriptedBroker, textOf } from "../harness.js";
import { hostile } from "../upstream/hostile-upstream.js";

// A client that asks for large answers and reads none of them made the proxy keep every byte (Node's
// response buffers, the SDK's web streams): an agent could grow the process without bound. Each connection
// may now leave 64 MiB unread, or read nothing for 60 s, and the listener keeps 1,024 connections at most.
let proxy: AcpProxy | undefined;
let listener: HttpListener | undefined;
let client: Client | undefined;
const lines: string[] = [];

async function start(connections: HttpListenOptions["connections"]): Promise<{ url: string; session: string }> {
  proxy = createProxy({
    upstreams: [hostile()],
    decide: decideByTool({}),
    broker: scriptedBroker(() => ({ kind: "expired" })),
    log: (line) => lines.push(line),
  });
  await proxy.start();
  listener = await listenHttp(proxy, { port: 0, ...(connections !== undefined ? { connections } : {}) });
  const transport = new StreamableHTTPClientTransport(new URL(`${listener.url}/mcp`));
  client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(transport);
  return { url: listener.url, session: transport.sessionId ?? "" };
}

afterEach(async () => {
  await client?.close();
  await listener?.close();
  await proxy?.close();
  client = undefined;
  listener = undefined;
  proxy = undefined;
  lines.length = 0;
});

/**
 * Asks for a `size`-character answer on a raw connection that then reads nothing; `resume` reads again
 * and resolves when the connection has ended with fewer than `size` characters read (it was cut off).
 */
function askAndNeverRead(url: string, session: string, size: number): { resume: () => Promise<number> } {
  const { port } = new URL(url);
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "big", arguments: { size } },
  });
  let read = 0;
  const socket: Socket = tcpConnect(Number(port), "127.0.0.1", () => {
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
        `accept: application/json, text/event-stream\r\nmcp-session-id: ${session}\r\n` +
        `mcp-protocol-version: 2025-06-18\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
  });
  socket.on("error", () => undefined);
  socket.on("data", (chunk: Buffer) => (read += chunk.length));
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(read)));
  return {
    resume: () => {
      socket.resume();
      return closed;
    },
  };
}

describe("acp proxy --http: a client that does not read its answers", () => {
  it("is cut off once more than the most unread bytes wait for it; other clients go on", async () => {
    const { url, session } = await start({ maxUnreadBytes: 1024 * 1024, stalledMs: 600_000, checkEveryMs: 50 });
    // 9 MB: more than the kernel's socket buffers take, so megabytes wait in the process
    const asked = askAndNeverRead(url, session, 9_000_000);
    await expect
      .poll(() => lines.join("\n"), { timeout: 30_000 })
      .toMatch(/http: a connection closed: its client has not read \d+\.\d MiB of answers \(the most is 1\.0 MiB\)/);
    expect(await asked.resume()).toBeLessThan(9_000_000);
    expect(textOf(await client?.callTool({ name: "echo", arguments: { text: "still here" } }))).toBe(
      "echo: still here",
    );
  }, 60_000);

  it("is cut off once it has read nothing of what waits for the stall time", async () => {
    const { url, session } = await start({ stalledMs: 300, checkEveryMs: 50 });
    const asked = askAndNeverRead(url, session, 9_000_000);
    await expect
      .poll(() => lines.join("\n"), { timeout: 30_000 })
      .toMatch(/http: a connection closed: its client has read nothing of its answers for \d+ s/);
    expect(await asked.resume()).toBeLessThan(9_000_000);
  }, 60_000);

  it("leaves a client that reads alone, however large its answers (within the limits)", async () => {
    await start({ maxUnreadBytes: 16 * 1024 * 1024, stalledMs: 2_000, checkEveryMs: 50 });
    for (let i = 0; i < 3; i++) {
      const result = await client?.callTool({ name: "big", arguments: { size: 9_000_000 } });
      expect(textOf(result)).toHaveLength(9_000_000);
    }
    expect(lines.join("\n")).not.toContain("a connection closed");
  }, 60_000);
});

describe("acp proxy --http: connections open at once", () => {
  it("closes a connection beyond the most at once and says so; one is taken again after another closes", async () => {
    const { url } = await start({ maxConnections: 3 });
    const { port } = new URL(url);
    const opened: Socket[] = [];
    /** Opens a connection and asks for a page: an accepted one answers, a refused one is closed unanswered. */
    const open = (): Promise<"answered" | "closed"> =>
      new Promise((resolve) => {
        const socket = tcpConnect(Number(port), "127.0.0.1", () =>
          socket.write(`GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`),
        );
        opened.push(socket);
        socket.on("error", () => undefined);
        socket.once("data", () => resolve("answered"));
        socket.once("close", () => resolve("closed"));
      });
    try {
      // the SDK client holds one or two of the three; open more until one is refused
      const seen: string[] = [];
      for (let i = 0; i < 4 && !seen.includes("closed"); i++) seen.push(await open());
      expect(seen.at(-1)).toBe("closed");
      expect(seen.slice(0, -1).every((s) => s === "answered")).toBe(true);
      expect(lines.join("\n")).toMatch(/http: 1 connection\(s\) refused: 3 are open/);
      for (const socket of opened) socket.destroy();
      await client?.close();
      client = undefined;
      // room again: a fresh client connects and calls
      const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
      client = new Client({ name: "agent", version: "1.0.0" });
      await client.connect(transport);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "again" } }))).toBe("echo: again");
    } finally {
      for (const socket of opened) socket.destroy();
    }
  }, 30_000);
});
