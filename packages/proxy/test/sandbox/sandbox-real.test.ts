/**
 * The sandbox with real namespaces on this machine (as root: `netns`, and `userns` with root's user
 * namespace): every way out fails, ACP's home is out of reach, MCP works over stdio and HTTP, egress goes
 * through the CONNECT proxy, a destination not allowed becomes a consent request.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createProxy,
  listenHttp,
  parseEgressAllowList,
  runSandboxed,
  serveStdio,
  type AcpProxy,
  type ConsentAsk,
  type HttpListener,
} from "../../src/index.js";
import { EVERYTHING, decision } from "../harness.js";
import {
  createTargetNamespace,
  fillHome,
  HOME_FILES,
  listenHostLoopback,
  scratchDir,
  type TargetNamespace,
} from "./net-fixture.js";

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const SECRET = "s3cr3t-acp-passphrase-4711";

let target: TargetNamespace;
let loopback: { port: number; server: Server };
let work: { path: string; remove(): void };
let homeFiles: Record<string, string>;
let proxy: AcpProxy;
let http: HttpListener;

beforeAll(async () => {
  target = await createTargetNamespace();
  loopback = await listenHostLoopback();
  work = scratchDir("acp-sbx-proxy-");
  homeFiles = fillHome(join(work.path, "home"));
  proxy = createProxy({
    upstreams: [EVERYTHING],
    decide: () => Promise.resolve(decision("accept", "policy:allow-all")),
    broker: { ask: () => Promise.resolve({ kind: "denied", reason: "test" }) },
  });
  await proxy.start();
  http = await listenHttp(proxy, { port: 0 });
}, 60_000);

afterAll(async () => {
  await http?.close();
  await proxy?.close();
  loopback?.server.close();
  target?.stop();
  work?.remove();
});

function options(level: "netns" | "userns", argv: string[]) {
  const asks: ConsentAsk[] = [];
  const audit: [string, Record<string, unknown>][] = [];
  const log: string[] = [];
  const allow = parseEgressAllowList([`${target.address}:8080`]);
  if (!allow.ok) throw new Error("bad allow-list");
  return {
    asks,
    audit,
    log,
    run: {
      argv,
      isolation: level,
      home: join(work.path, "home"),
      env: {
        PATH: process.env["PATH"],
        HOME: "/root",
        ACP_PASSPHRASE: SECRET,
        ACP_HOME: join(work.path, "home"),
        MY_TOKEN: `prefix-${SECRET}`,
      },
      cwd: work.path,
      mcpTarget: { host: "127.0.0.1", port: http.port },
      egress: {
        allow: allow.value,
        broker: {
          ask: (a: ConsentAsk) => {
            asks.push(a);
            return Promise.resolve({ kind: "expired" as const });
          },
        },
      },
      audit: { record: (type: string, fields: Record<string, unknown>) => void audit.push([type, fields]) },
      log: (line: string) => void log.push(line),
      secretValues: [SECRET],
      signals: { on: () => undefined, off: () => undefined },
    },
  };
}

type Probe = Record<string, { ok: boolean; error?: string; value?: unknown } | string[]>;

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it("blocks every way out and hides ACP's home, but lets allowed egress through the CONNECT proxy", async () => {
    const out = join(work.path, `probe-${level}.json`);
    const config = JSON.stringify({
      hostPort: loopback.port,
      target: target.address,
      allowedPort: 8080,
      deniedPort: 8081,
      home: join(work.path, "home"),
      secret: SECRET,
    });
    const o = options(level, [process.execPath, fixture("probe.mjs"), out, config]);
    const result = await runSandboxed(o.run);
    expect(result).toEqual({ level, exitCode: 0 });
    const probe = JSON.parse(readFileSync(out, "utf8")) as Probe;
    for (const way of ["tcp_host_loopback", "tcp_outside", "udp_outside", "dns", "umount_home"]) {
      expect(probe[way], way).toMatchObject({ ok: false });
    }
    expect(probe["tcp_outside"]).toEqual({ ok: false, error: "ENETUNREACH" });
    expect(probe["udp_outside"]).toEqual({ ok: false, error: "ENETUNREACH" });
    for (const file of HOME_FILES) {
      expect(probe[`read ${file}`], file).toMatchObject({ ok: false });
      expect(probe[`write ${file}`], file).toMatchObject({ ok: false });
      expect(readFileSync(join(work.path, "home", file), "utf8")).toBe(homeFiles[file]);
    }
    expect(probe["env_secret"]).toEqual([]);
    expect(probe["env_acp"]).toEqual(["ACP_MCP_URL", "ACP_SANDBOX"]);
    expect(probe["egress_allowed"]).toEqual({ ok: true, value: "hello from egress 8080" });
    expect(probe["egress_denied"]).toMatchObject({ ok: false });
    expect(o.asks).toHaveLength(1);
    expect(o.asks[0]).toMatchObject({
      tool: "network.connect",
      server: "acp-sandbox",
      arguments: { host: target.address, port: 8081 },
      decision: { category: "network.connect", route: "ask" },
    });
    const egress = o.audit.find(([type]) => type === "sandbox_egress")?.[1];
    expect(egress).toMatchObject({ host: target.address, port: 8080, by: "allow_list" });
    expect(egress?.["bytes_down"]).toBeGreaterThan(0);
    expect(egress?.["bytes_up"]).toBeGreaterThan(0);
    expect(o.audit.find(([type]) => type === "sandbox_egress_refused")?.[1]).toMatchObject({ port: 8081 });
    expect(o.audit[0]).toEqual(["sandbox_started", expect.objectContaining({ isolation: level })]);
    expect(JSON.stringify(o.audit)).not.toContain(SECRET);
    expect(o.log.join("\n")).toContain(`isolation ${level}`);
  });

  it("an MCP SDK client inside lists and calls tools over HTTP at ACP_MCP_URL", async () => {
    const out = join(work.path, `mcp-http-${level}.json`);
    const o = options(level, [process.execPath, fixture("mcp-client.mjs"), out, "http"]);
    expect(await runSandboxed(o.run)).toEqual({ level, exitCode: 0 });
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over http");
  });

  it("an MCP SDK client inside lists and calls tools over its own stdin/stdout", async () => {
    const out = join(work.path, `mcp-stdio-${level}.json`);
    const o = options(level, [process.execPath, fixture("mcp-client.mjs"), out, "stdio"]);
    const result = await runSandboxed({
      ...o.run,
      stdio: async (pipes) => void (await serveStdio(proxy, { stdin: pipes.stdout, stdout: pipes.stdin })),
    });
    expect(result).toEqual({ level, exitCode: 0 });
    const answer = JSON.parse(readFileSync(out, "utf8")) as { tools: string[]; echo: { content: { text: string }[] } };
    expect(answer.tools).toContain("echo");
    expect(answer.echo.content[0]?.text).toContain("hello over stdio");
  });
});
