import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runCli } from "./run.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const FIXTURE = join(ROOT, "packages/proxy/test/upstream/credential-echo-server.mjs");
const HEADER_CANARY = "hdrcanary-5d1e0c77-value-9911";
const ENV_CANARY = "envcanary-a0b7e2f4-value-3377";
const CANARIES = [HEADER_CANARY, ENV_CANARY];
const sha = (v: string): string => createHash("sha256").update(v).digest("hex");

const POLICY = `version: "1"
default_action: deny
rules:
  - id: ask-first
    match: { tool: "*ask_me" }
    action: ask
  - id: tools
    match: { tool: "*" }
    action: allow
`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

function expectNoCanary(text: string): void {
  for (const canary of CANARIES) expect(text).not.toContain(canary);
}

async function startHttpFixture(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [FIXTURE, "http", "Authorization"], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const m = /port (\d+)/.exec(out);
      if (m !== null) resolve(Number(m[1]));
    });
    child.on("exit", (code) => reject(new Error(`fixture exited with ${String(code)}`)));
  });
  return { child, port };
}

interface PendingRow {
  id: string;
  tool: string;
}

async function waitForPending(env: Record<string, string>): Promise<{ row: PendingRow; stdout: string }> {
  for (let i = 0; i < 400; i++) {
    const out = await runCli(["pending", "--json"], { env, now: new Date() });
    const rows = JSON.parse(out.stdout || "[]") as PendingRow[];
    if (rows[0] !== undefined) return { row: rows[0], stdout: out.stdout };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no pending consent request appeared");
}

function text(result: unknown): string {
  return JSON.stringify((result as { content?: unknown }).content ?? result);
}

describe("credentials in an upstream's transport: a header for a URL, the environment of a command", () => {
  const root = tempRoot("proxy-credentials-transport");
  let home = "";
  let env: Record<string, string> = {};
  let http: { child: ChildProcess; port: number };
  let client: Client;
  let transport: StdioClientTransport;
  let stderr = "";
  let tools: string[] = [];

  beforeAll(async () => {
    ({ home } = fixtureHome(root.dir));
    env = envFor(home);
    expect((await runCli(["vault", "set", "HEADER_TOKEN"], { env, stdin: `${HEADER_CANARY}\n` })).code).toBe(0);
    expect((await runCli(["vault", "set", "ENV_TOKEN"], { env, stdin: `${ENV_CANARY}\n` })).code).toBe(0);
    http = await startHttpFixture();
    writeFileSync(join(home, "policy.yml"), POLICY);
    writeFileSync(
      join(home, "config.yml"),
      `proxy:
  upstream_servers:
    - name: web
      url: http://127.0.0.1:${http.port}/mcp
    - name: local
      command: ${JSON.stringify(`${process.execPath} ${FIXTURE} stdio ECHO_ENV`)}
credentials:
  - secret: HEADER_TOKEN
    server: web
    inject: { header: Authorization, format: "Bearer {value}" }
  - secret: ENV_TOKEN
    server: local
    inject: { env: ECHO_ENV }
`,
    );
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [ACP, "proxy"],
      env: { PATH: process.env["PATH"] ?? "", ...env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    client = new Client({ name: "credentials-agent", version: "1.0.0" });
    await client.connect(transport);
    tools = (await client.listTools()).tools.map((t) => t.name);
  }, 120_000);

  afterAll(() => {
    http?.child.kill();
    root.cleanup();
  });

  const named = (server: string, tool: string): string =>
    tools.find((t) => t.includes(server) && t.endsWith(tool)) ?? `${server}__${tool}`;

  it("the URL upstream receives the header, the command upstream the variable; the agent sees only hashes", async () => {
    const web = text(await client.callTool({ name: named("web", "saw_credential"), arguments: {} }));
    const local = text(await client.callTool({ name: named("local", "saw_credential"), arguments: {} }));
    expect(web).toContain(sha(`Bearer ${HEADER_CANARY}`));
    expect(local).toContain(sha(ENV_CANARY));
    expectNoCanary(web + local);
  });

  it("an upstream that returns the value gets it redacted before the agent sees it", async () => {
    const web = text(await client.callTool({ name: named("web", "leak"), arguments: {} }));
    const local = text(await client.callTool({ name: named("local", "leak"), arguments: {} }));
    expect(web + local).toContain("[REDACTED]");
    expectNoCanary(web + local);
  });

  it("a call carrying a vault value is shown redacted to the person asked (acp pending)", async () => {
    const call = client.callTool({ name: named("local", "ask_me"), arguments: { note: `use ${ENV_CANARY} now` } });
    const { row, stdout } = await waitForPending(env);
    expectNoCanary(stdout);
    expect(stdout).toContain("[redacted]");
    expect((await runCli(["deny", row.id, "--reason", "no"], { env, now: new Date() })).code).toBe(0);
    expectNoCanary(text(await call));
  });

  it("the values never reach the proxy's own environment, its log, the audit or the home's files", async () => {
    const pid = transport.pid;
    if (pid !== null && existsSync(`/proc/${pid}/environ`))
      expectNoCanary(readFileSync(`/proc/${pid}/environ`, "utf8"));
    await client.close();
    expectNoCanary(stderr);
    // the command upstream printed its variable to stderr: the proxy scrubbed the line
    expect(stderr).toContain("credential-echo: env ECHO_ENV=[REDACTED]");
    const audit = readFileSync(join(home, "audit.jsonl"), "utf8");
    expect(audit).toContain('"credential_injected"');
    expect(audit).toContain("HEADER_TOKEN");
    expect(audit).toContain("ENV_TOKEN");
    for (const file of filesUnder(home)) expectNoCanary(readFileSync(file, "latin1"));
  });
});
