import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const FILESYSTEM = join(ROOT, "node_modules/.bin/mcp-server-filesystem");
const SHARED = "shared-0123456789abcdef0123456789";
const CI_BOT = "ci-bot-0123456789abcdef0123456789";

/** config.yml with the proxy's tokens named (values sealed afterwards with `acp config set-secret`). */
function writeConfig(home: string, extra = ""): void {
  writeFileSync(
    join(home, "config.yml"),
    `version: "1"\nproxy:\n  bearer_token: ""\n  agent_tokens:\n    ci_bot: ""\n${extra}`,
  );
}

async function seal(home: string, path: string, value: string): Promise<void> {
  const out = await runCli(["config", "set-secret", path], { env: envFor(home), stdin: `${value}\n` });
  expect(out.code, out.stderr).toBe(0);
}

/** Starts `acp proxy --http 0` (built CLI); resolves with its URL once it listens, and its stderr so far. */
async function startProxy(
  home: string,
  dir: string,
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [ACP, "proxy", "--http", "0", "--upstream", `${FILESYSTEM} ${dir}`], {
    env: { PATH: process.env["PATH"] ?? "", ...envFor(home) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let text = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(text);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`acp proxy exited (${code}): ${text}`)));
  });
  return { child, url, stderr: () => text };
}

describe("acp proxy --http: a sealed proxy.bearer_token and proxy.agent_tokens (built CLI)", () => {
  const root = tempRoot("proxy-tokens");
  beforeAll(async () => {
    await promisify(execFile)("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT }).catch(() => undefined);
    if (!existsSync(join(ROOT, "packages/cli/dist/commands/proxy.js"))) throw new Error("the CLI did not build");
  }, 180_000);
  afterAll(() => root.cleanup());

  it("opens both with the home's key; a named token's calls are audited as its agent; doctor names it", async () => {
    const { home } = fixtureHome(root.dir);
    writeConfig(home);
    await seal(home, "proxy.bearer_token", SHARED);
    await seal(home, "proxy.agent_tokens.ci_bot", CI_BOT);
    const config = readFileSync(join(home, "config.yml"), "utf8");
    expect(config).not.toContain(SHARED);
    expect(config).not.toContain(CI_BOT);
    const doctor = await runCli(["doctor", "--json"], { env: envFor(home) });
    const checks = JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] };
    expect(checks.checks.find((c) => c.name === "config")?.status).toBe("ok");
    expect(checks.checks.find((c) => c.name === "proxy")?.detail).toContain("agents' tokens of ci_bot");

    const { child, url, stderr } = await startProxy(home, root.dir);
    try {
      expect(stderr()).toContain("agents with a token of their own: ci_bot");
      expect(stderr()).not.toContain(CI_BOT);
      const denied = await fetch(`${url}/mcp`, { method: "POST", body: "{}" });
      expect(denied.status).toBe(401);
      for (const [token, name] of [
        [CI_BOT, "calls-itself-something-else"],
        [SHARED, "shared-client"],
      ] as const) {
        const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        });
        const client = new Client({ name, version: "1.0.0" });
        await client.connect(transport);
        const listed = await client.callTool({ name: "list_allowed_directories", arguments: {} });
        expect(listed.isError, JSON.stringify(listed.content)).not.toBe(true);
        await client.close();
      }
    } finally {
      child.kill("SIGTERM");
      await once(child, "exit");
    }
    const events = readFileSync(join(home, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event_type: string; agent: string | null });
    const agents = events.filter((e) => e.event_type === "tool_call_intercepted").map((e) => e.agent);
    expect(agents).toEqual(["ci_bot", "shared-client"]);
    expect(readFileSync(join(home, "audit.jsonl"), "utf8")).not.toContain(CI_BOT);
  }, 60_000);

  it("refuses a token given twice, a sealed token without the passphrase, and a plain one in doctor", async () => {
    const { home } = fixtureHome(root.dir);
    writeConfig(home);
    await seal(home, "proxy.bearer_token", SHARED);
    await seal(home, "proxy.agent_tokens.ci_bot", SHARED);
    const twice = await runCli(["proxy", "--http", "0", "-u", "/nonexistent/server"], { env: envFor(home) });
    expect(twice.code).toBe(4);
    expect(twice.stderr).toContain("one token is given twice");
    expect(twice.stderr).not.toContain(SHARED);
    expect(twice.stderr).not.toContain("upstream `server` failed");

    const locked = await runCli(["proxy", "--http", "0", "-u", "/nonexistent/server"], { env: envFor(home, null) });
    expect(locked.code).toBe(4);
    expect(locked.stderr).toMatch(/`proxy\.bearer_token` is sealed and needs the home's key to open.*ACP_PASSPHRASE/);

    // acp config set-secret checks a proxy agent token as a bearer token before it seals it
    const short = await runCli(["config", "set-secret", "proxy.agent_tokens.ci_bot"], {
      env: envFor(home),
      stdin: "hunter2\n",
    });
    expect(short.code).toBe(4);
    expect(short.stderr).toMatch(/too short/);

    const plain = fixtureHome(root.dir).home;
    writeFileSync(join(plain, "config.yml"), `version: "1"\nproxy:\n  bearer_token: "${SHARED}"\n`);
    const doctor = await runCli(["doctor", "--json"], { env: envFor(plain) });
    const config = (
      JSON.parse(doctor.stdout) as { checks: { name: string; status: string; detail: string }[] }
    ).checks.find((c) => c.name === "config");
    expect(config?.status).toBe("fail");
    expect(config?.detail).toContain("`proxy.bearer_token`");
    expect(config?.detail).not.toContain(SHARED);
  });
});
