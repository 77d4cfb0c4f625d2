import { spawn, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createProxy, listenHttp, parsePublicUrl, type AcpProxy, type HttpListener } from "../src/index.js";
import { connectClient, decideByTool, fixture, ROOT, scriptedBroker, textOf, startFixtureProxy } from "./harness.js";

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts server-everything over HTTP (`streamableHttp` or `sse`) on a free loopback port. */
async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(`${ROOT}node_modules/.bin/mcp-server-everything`, [mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything ${mode} did not start`)), 20_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (/listening|running/i.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { url: `http://127.0.0.1:${port}/${mode === "sse" ? "sse" : "mcp"}`, child };
}

async function httpClient(url: string, token?: string, legacy = false): Promise<Client> {
  const requestInit = token !== undefined ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const transport = legacy
    ? new SSEClientTransport(new URL(`${url}/sse`), requestInit ? { requestInit } : {})
    : new StreamableHTTPClientTransport(new URL(`${url}/mcp`), requestInit ? { requestInit } : {});
  const client = new Client({ name: "http-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("HTTP on both sides", () => {
  const children: ChildProcess[] = [];
  let proxy: AcpProxy;
  let listener: HttpListener;
  beforeAll(async () => {
    const streamable = await startEverythingHttp("streamableHttp");
    const sse = await startEverythingHttp("sse");
    children.push(streamable.child, sse.child);
    proxy = createProxy({
      upstreams: [
        { name: "streamable", transport: "streamable-http", url: streamable.url },
        { name: "legacy", transport: "sse", url: sse.url },
        fixture(),
      ],
      decide: decideByTool({ "get-sum": "refuse" }),
      broker: scriptedBroker(() => ({ kind: "expired" })),
      prefixTools: "always",
    });
    await proxy.start();
    listener = await listenHttp(proxy, { port: 0 });
  }, 60_000);
  afterAll(async () => {
    await listener.close();
    await proxy.close();
    for (const child of children) child.kill();
  });

  it("connects to upstreams over streamable HTTP and over SSE", () => {
    expect(proxy.upstreams().map((u) => [u.spec.name, u.status])).toEqual([
      ["streamable", "connected"],
      ["legacy", "connected"],
      ["fixture", "connected"],
    ]);
  });

  it("serves streamable HTTP at /mcp and the older HTTP+SSE at /sse", async () => {
    for (const legacy of [false, true]) {
      const client = await httpClient(listener.url, undefined, legacy);
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("streamable__echo");
      expect(names).toContain("legacy__echo");
      const result = await client.callTool({ name: "legacy__echo", arguments: { message: `via ${String(legacy)}` } });
      expect(textOf(result)).toContain(`via ${String(legacy)}`);
      const refused = await client.callTool({ name: "streamable__get-sum", arguments: { a: 1, b: 2 } });
      expect(refused.isError).toBe(true);
      await client.close();
    }
  });

  it("8 concurrent clients each get the reply to their own calls", async () => {
    const clients = await Promise.all(Array.from({ length: 8 }, () => httpClient(listener.url)));
    const calls = clients.flatMap((client, c) =>
      Array.from({ length: 6 }, (_, i) => {
        const tag = `client-${c}-call-${i}`;
        const name = ["streamable__echo", "legacy__echo", "fixture__echo"][i % 3] ?? "fixture__echo";
        const args = name === "fixture__echo" ? { text: tag } : { message: tag };
        return client.callTool({ name, arguments: args }).then((r) => ({ tag, text: textOf(r) }));
      }),
    );
    const replies = await Promise.all(calls);
    for (const { tag, text } of replies) {
      expect(text).toMatch(new RegExp(`${tag}$`));
    }
    await Promise.all(clients.map((c) => c.close()));
  });

  it("thousands of calls to URL upstreams leave no pile of abort listeners (no leak warning in the log)", async () => {
    // the SDK's HTTP client transports hand one signal to every request; Node's fetch adds a listener to it
    // per request and drops it only at garbage collection, warning past 1,500 (in the client's log, on stdio)
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      if (warning.name === "MaxListenersExceededWarning") warnings.push(warning.message);
    };
    process.on("warning", onWarning);
    const client = await connectClient(proxy);
    try {
      for (const name of ["streamable__echo", "legacy__echo"]) {
        for (let i = 0; i < 1600; i++) {
          const result = await client.callTool({ name, arguments: { message: `n${i}` } });
          expect(textOf(result)).toBe(`Echo: n${i}`);
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await client.close();
    }
  }, 60_000);
});

describe("bearer token rules", () => {
  let proxy: AcpProxy;
  beforeAll(async () => {
    proxy = await startFixtureProxy();
  });
  afterAll(async () => proxy.close());

  it("refuses to listen beyond loopback without a token", async () => {
    await expect(listenHttp(proxy, { port: 0, bind: "0.0.0.0" })).rejects.toThrow(/without a bearer token/);
  });

  it("refuses to listen beyond loopback over plain HTTP unless TLS ends in front or the risk is accepted", async () => {
    const bearerToken = "s3cret-token-of-enough-length";
    await expect(listenHttp(proxy, { port: 0, bind: "0.0.0.0", bearerToken })).rejects.toMatchObject({
      code: "proxy_plain_http_refused",
    });
    const http = parsePublicUrl("http://mcp.example.com");
    if (!http.ok) throw new Error(http.message);
    await expect(listenHttp(proxy, { port: 0, bind: "0.0.0.0", bearerToken, publicUrl: http.value })).rejects.toThrow(
      /over plain HTTP/,
    );
    const https = parsePublicUrl("https://mcp.example.com");
    if (!https.ok) throw new Error(https.message);
    const behind = await listenHttp(proxy, { port: 0, bind: "0.0.0.0", bearerToken, publicUrl: https.value });
    await behind.close();
  });

  it("answers 401 for a missing or wrong token, 400 for a malformed header, and serves the right token", async () => {
    const token = "s3cret-token-of-enough-length";
    const listener = await listenHttp(proxy, { port: 0, bind: "0.0.0.0", bearerToken: token, insecurePlainHttp: true });
    try {
      const url = `http://127.0.0.1:${listener.port}/mcp`;
      const post = (authorization?: string): Promise<Response> =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(authorization !== undefined ? { authorization } : {}),
          },
          body: "{}",
        });
      expect((await post()).status).toBe(401);
      expect((await post("Bearer wrong-token")).status).toBe(401);
      expect((await post("Basic abc")).status).toBe(400);
      expect((await post(`Bearer ${token} extra`)).status).toBe(400);
      const client = await httpClient(`http://127.0.0.1:${listener.port}`, token);
      expect(textOf(await client.callTool({ name: "echo", arguments: { text: "authorised" } }))).toBe(
        "fixture echo: authorised",
      );
      await client.close();
    } finally {
      await listener.close();
    }
  });

  it("a loopback listener refuses a foreign Host header (DNS rebinding)", async () => {
    const listener = await listenHttp(proxy, { port: 0 });
    try {
      // fetch will not send a foreign Host header; node:http will
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port: listener.port, path: "/mcp", method: "POST", headers: { host: "evil.example" } },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.once("error", reject);
        req.end("{}");
      });
      expect(status).toBe(403);
    } finally {
      await listener.close();
    }
  });

  it("a loopback listener refuses `Origin: null` (a sandboxed iframe or data: page on any site) and a foreign origin", async () => {
    const listener = await listenHttp(proxy, { port: 0 });
    const statusFor = (origin: string): Promise<number | undefined> =>
      new Promise((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: listener.port,
            path: "/mcp",
            method: "POST",
            headers: { origin, "content-type": "application/json", accept: "application/json, text/event-stream" },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.once("error", reject);
        req.end("{}");
      });
    try {
      expect(await statusFor("null")).toBe(403);
      expect(await statusFor("https://evil.example")).toBe(403);
      // a page served from loopback is still local
      expect(await statusFor(`http://127.0.0.1:${listener.port}`)).not.toBe(403);
    } finally {
      await listener.close();
    }
  });

  it("behind a reverse proxy: a public URL's Host and Origin are taken, any other still refused", async () => {
    const parsed = parsePublicUrl("https://mcp.example.test");
    if (!parsed.ok) throw new Error(parsed.message);
    const listener = await listenHttp(proxy, { port: 0, publicUrl: parsed.value });
    const bare = await listenHttp(proxy, { port: 0 });
    const post = (port: number, headers: Record<string, string>) =>
      new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port,
            path: "/mcp",
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
          },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (body += c));
            res.on("end", () => resolve({ status: res.statusCode, body }));
          },
        );
        req.once("error", reject);
        req.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
          }),
        );
      });
    try {
      const through = await post(listener.port, { host: "mcp.example.test", origin: "https://mcp.example.test" });
      expect(through.status).toBe(200);
      expect(through.body).toContain('"serverInfo"');
      expect((await post(listener.port, { host: "evil.example" })).status).toBe(403);
      expect((await post(listener.port, { host: "mcp.example.test", origin: "https://evil.example" })).status).toBe(
        403,
      );
      // without a public URL the same request is refused, and the answer says what to set
      const refused = await post(bare.port, { host: "mcp.example.test", origin: "https://mcp.example.test" });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain("--public-url");
    } finally {
      await listener.close();
      await bare.close();
    }
  });
});
