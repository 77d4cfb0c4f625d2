/**
 * The agent's lifecycle: `none` warns on every start, exit codes and signals pass through (128 + signal),
 * nothing is left running, and bad input stops before anything starts.
 */
import { EventEmitter } from "node:events";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSandboxed, SandboxError, type SandboxRunOptions } from "../../src/index.js";
import { scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-life-")));
afterAll(() => work.remove());

function base(argv: string[], isolation: SandboxRunOptions["isolation"], signals = new EventEmitter()) {
  const log: string[] = [];
  const options: SandboxRunOptions = {
    argv,
    isolation,
    home: join(work.path, "home"),
    env: { PATH: process.env["PATH"], ACP_PASSPHRASE: "do-not-leak-me" },
    cwd: work.path,
    mcpTarget: { host: "127.0.0.1", port: 9 },
    egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
    audit: { record: () => undefined },
    log: (line) => void log.push(line),
    signals,
  };
  return { options, log, signals };
}

/** Processes whose command line holds `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
      } catch {
        return false;
      }
    });
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 50));
}

describe("isolation none", () => {
  it("prints the loud warning on every start and passes the exit code through", async () => {
    for (let i = 0; i < 2; i++) {
      const { options, log } = base(["sh", "-c", "exit 3"], "none");
      expect(await runSandboxed(options)).toEqual({ level: "none", exitCode: 3 });
      expect(log.join("\n")).toContain("WARNING: the agent runs WITHOUT A SANDBOX");
      expect(log.join("\n")).toContain("isolation none");
    }
  });

  it("scrubs ACP variables from the agent's environment", async () => {
    const out = join(work.path, "env.txt");
    const { options } = base(["sh", "-c", `env > ${out}`], "none");
    await runSandboxed(options);
    const env = readFileSync(out, "utf8");
    expect(env).not.toContain("do-not-leak-me");
    expect(env).toContain("ACP_MCP_URL=http://127.0.0.1:9/mcp");
  });
});

describe.each(["none", "netns", "userns"] as const)("signals with isolation %s", (level) => {
  it("SIGTERM reaches the whole process group, the run ends with 128+15 and nothing is orphaned", async () => {
    const marker = `acp-sbx-marker-${level}-${process.pid}`;
    const started = join(work.path, `started-${level}`);
    // a grandchild that ignores SIGTERM and would outlive a careless parent; found by the marker in its argv
    const grandchild = `${process.execPath} -e 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)' ${marker}`;
    const { options, signals } = base(["sh", "-c", `${grandchild} & touch ${started}; wait`], level);
    const run = runSandboxed(options);
    await until(() => existsSync(started) && processesWith(marker).length > 0);
    signals.emit("SIGTERM");
    expect(await run).toEqual({ level, exitCode: 143 });
    await until(() => processesWith(marker).length === 0);
    expect(processesWith(marker)).toEqual([]);
  });
});

describe("bad input", () => {
  it("a command that does not exist is refused before anything starts", async () => {
    const { options } = base(["no-such-agent-xyz"], "netns");
    const bridgeDir = join(work.path, "never-created");
    await expect(runSandboxed({ ...options, bridgeDir })).rejects.toMatchObject({
      code: "sandbox_command_not_found",
      message: expect.stringContaining("command `no-such-agent-xyz` not found") as string,
    });
    expect(existsSync(bridgeDir)).toBe(false);
  });

  it("a bridge socket in use is refused with the fix, and the other listener is untouched", async () => {
    const dir = join(work.path, "bridge");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dir, { mode: 0o700 });
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(join(dir, "egress.sock"), () => r()));
    const { options } = base(["true"], "userns");
    const error = await runSandboxed({ ...options, bridgeDir: dir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error).toMatchObject({ code: "sandbox_bridge_in_use" });
    expect((error as Error).message).toContain("pass a different --bridge-dir");
    expect(holder.listening).toBe(true);
    await new Promise((r) => holder.close(r));
  });
});

describe("isolation none with --bridge-dir (the Docker recipe)", () => {
  it("binds mcp.sock and egress.sock for a container and removes nothing it did not create", async () => {
    const dir = join(work.path, "docker-bridge");
    const seen = join(work.path, "docker-seen.txt");
    const { options } = base(["sh", "-c", `ls ${dir} > ${seen}`], "none");
    expect(await runSandboxed({ ...options, bridgeDir: dir })).toMatchObject({ exitCode: 0 });
    expect(readFileSync(seen, "utf8").split("\n")).toEqual(expect.arrayContaining(["egress.sock", "mcp.sock"]));
    expect(existsSync(dir)).toBe(true);
  });
});
