/**
 * The MCP bridge with a token: the proxy's HTTP listener on the host's loopback asks for a bearer token, which
 * only the bridge knows and adds to each request. Every user and program of the host can reach the listener's
 * port; without the token they cannot use it, while the agent (inside the sandbox, or with `none` at its
 * ACP_MCP_URL) needs none. Real namespaces, a real MCP SDK client inside.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProxy, listenHttp, runSandboxed, type AcpProxy, type HttpListener } from "../../src/index.js";
import { EVERYTHING, decision } from "../harness.js";
import { scratchDir } from "./net-fixture.js";

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const TOKEN = "bridge-token-4b1d9e";

let work: { path: string; remove(): void };
let proxy: AcpProxy;
let http: HttpListener;

beforeAll(async () => {
  work = scratchDir("acp-sbx-mcpbridge-");
  proxy = createProxy({
    upstreams: [EVERYTHING],
    decide: () => Promise.resolve(decision("accept", "policy:allow-all")),
    broker: { ask: () => Promise.resolve({ kind: "denied", reason: "test" }) },
  });
  await proxy.start();
  http = await listenHttp(proxy, { port: 0, bearerToken: TOKEN });
}, 60_000);

afterAll(async () => {
  await http?.close();
  await proxy?.close();
  work?.remove();
});

/** An MCP `initialize` straight to the listener, as another program of the host would send it. */
async function initializeDirectly(headers: Record<string, string> = {}): Promise<number> {
  const answer = await fetch(`http://127.0.0.1:${http.port}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "intruder", version: "1" } },
    }),
  });
  await answer.body?.cancel();
  return answer.status;
}

describe("the listener with a token", () => {
  it("refuses a program of the host that does not have the token (401), and takes one that has it", async () => {
    expect(await initializeDirectly()).toBe(401);
    expect(await initializeDirectly({ authorization: "Bearer not-the-token" })).toBe(401);
    expect(await initializeDirectly({ authorization: `Bearer ${TOKEN}` })).toBe(200);
  });
});

describe.each(["netns", "userns", "none"] as const)("the MCP bridge under %s", (level) => {
  it("the agent lists and calls tools at ACP_MCP_URL without a token: the bridge adds it", async () => {
    const out = join(work.path, `mcp-${level}.json`);
    const result = await runSandboxed({
      argv: [process.execPath, fixture("mcp-client.mjs"), out, "http"],
      isolation: level,
      home: join(work.path, "home"),
      env: { PATH: process.env["PATH"] },
      cwd: work.path,
      mcpTarget: { host: "127.0.0.1", port: http.port, token: TOKEN },
      egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
      audit: { record: () => undefined },
      log: () => undefined,
      signals: { on: () => undefined, off: () => undefined },
    });
    expect(result).toEqual({ level, exitCode: 0 });
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over http");
  });
});
