/**
 * `acp run`'s MCP listener on the host's loopback (the one the sandbox's bridge forwards to) asks for a random
 * bearer token only the bridge knows: every user and program of the host can reach its port, and without
 * the token none of them may open an MCP session there (they would call the agent's tools, with the vault's
 * credentials, under its policy). The built `bin/acp.js`, its ports found with `ss`, asked as another user.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../../proxy/test/sandbox/net-fixture.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const ACP = join(ROOT, "packages/cli/bin/acp.js");
const EVERYTHING = join(ROOT, "node_modules/.bin/mcp-server-everything");
const USER = "cloudsdk";
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "intruder", version: "1" } },
});

let work: { path: string; remove(): void };
let env: Record<string, string>;

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "packages/cli"], { cwd: ROOT, stdio: "ignore" });
  work = scratchDir("acp-run-token-");
  env = { PATH: process.env["PATH"] ?? "", HOME: work.path, ACP_HOME: join(work.path, "home") };
  const init = spawnSync(process.execPath, [ACP, "init", "--no-passphrase"], { env, cwd: work.path, encoding: "utf8" });
  expect(init.status, init.stderr).toBe(0);
}, 120_000);

afterAll(() => work?.remove());

/** The TCP ports process `pid` listens on (`ss -ltnpH`). */
function listeningPorts(pid: number): number[] {
  const table = execFileSync("ss", ["-ltnpH"], { encoding: "utf8" });
  return table
    .split("\n")
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => Number(/127\.0\.0\.1:(\d+)/.exec(line)?.[1]))
    .filter((port) => port > 0);
}

/** The status of an MCP `initialize` sent to `port` by another user of the host, without a token. */
function initializeAs(user: string, port: number): string {
  const r = spawnSync(
    "runuser",
    ["-u", user, "--", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "10", "-X", "POST"].concat([
      `http://127.0.0.1:${port}/mcp`,
      "-H",
      "content-type: application/json",
      "-H",
      "accept: application/json, text/event-stream",
      "-d",
      INITIALIZE,
    ]),
    { encoding: "utf8", timeout: 20_000 },
  );
  return r.stdout;
}

describe("acp run's MCP listener", () => {
  it("refuses another user of the host without the token, while the agent inside runs", async () => {
    const started = join(work.path, "started");
    const done = join(work.path, "done");
    const script = `touch ${started}; while [ ! -e ${done} ]; do sleep 0.05; done`;
    const child = spawn(
      process.execPath,
      [ACP, "run", "--isolation", "netns", "-u", EVERYTHING, "--writable", work.path, "--", "sh", "-c", script],
      { env, cwd: work.path, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const answers: Record<number, string> = {};
    try {
      while (!existsSync(started)) {
        if (child.exitCode !== null) throw new Error(`acp run ended early: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const port of listeningPorts(child.pid ?? 0)) answers[port] = initializeAs(USER, port);
    } finally {
      // the agent ends before anything is asserted: a failure must not leave it running
      writeFileSync(done, "");
    }
    expect(await exited, stderr).toBe(0);
    // the proxy's listener is there to be asked (the test would notice a scan that found nothing)
    expect(Object.keys(answers).length, stderr).toBeGreaterThan(0);
    for (const [port, status] of Object.entries(answers)) expect(status, `port ${port}`).toBe("401");
  }, 120_000);
});
