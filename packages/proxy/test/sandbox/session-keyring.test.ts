/**
 * The agent's own session keyring (`sessionKeyring`): which Perl and which system call number, the warning
 * when there is none, and a check that fails stopping the run before the agent starts (real namespaces; the
 * keys themselves are proved out of reach by `packages/cli/test/run-session-keyring.test.ts`).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYCTL_SYSCALL, runSandboxed, sessionKeyring, type SandboxRunOptions } from "../../src/index.js";
import { scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
beforeAll(() => void (work = scratchDir("acp-sbx-keyring-")));
afterAll(() => work.remove());

function options(argv: string[], level: "netns" | "userns", keyring: SandboxRunOptions["sessionKeyring"] | undefined) {
  const log: string[] = [];
  const run: SandboxRunOptions = {
    argv,
    isolation: level,
    home: join(work.path, "home"),
    env: { PATH: process.env["PATH"] },
    cwd: work.path,
    mcpTarget: { host: "127.0.0.1", port: 9 },
    egress: { allow: [], broker: { ask: () => Promise.resolve({ kind: "expired" }) } },
    audit: { record: () => undefined },
    log: (line) => void log.push(line),
    signals: { on: () => undefined, off: () => undefined },
    ...(keyring !== undefined ? { sessionKeyring: keyring } : {}),
  };
  return { run, log };
}

describe("sessionKeyring", () => {
  it("uses the system's Perl with this architecture's keyctl number", () => {
    const k = sessionKeyring("x64", (name) => (name === "perl" ? "/usr/bin/perl" : null));
    expect(k?.exec.slice(0, 2)).toEqual(["/usr/bin/perl", "-e"]);
    expect(k?.exec.at(-1)).toBe("--");
    expect(k?.exec[2]).toContain("syscall(250, 1, 0)");
    expect(k?.check[2]).toContain("syscall(250, 1, 0)");
    expect(sessionKeyring("arm64", () => "/usr/bin/perl")?.exec[2]).toContain("syscall(219, 1, 0)");
  });

  it("is none without Perl, or on an architecture whose keyctl number it does not know", () => {
    expect(sessionKeyring("x64", () => null)).toBeNull();
    expect(sessionKeyring("mips", () => "/usr/bin/perl")).toBeNull();
    expect(KEYCTL_SYSCALL["mips"]).toBeUndefined();
  });

  it("never takes a Perl from PATH (the check runs as the sandbox's init, with its capabilities)", () => {
    const looked: string[] = [];
    sessionKeyring("x64", (name) => (looked.push(name), null));
    expect(looked).toEqual(["perl"]);
    // the default lookup: the system's directories only (SYSTEM_PATH), whatever PATH says
    expect(sessionKeyring("x64")?.exec[0]).toBe("/usr/bin/perl");
  });
});

describe.each(["netns", "userns"] as const)("the agent's session keyring under %s", (level) => {
  it("says on stderr that the agent shares acp's keyring when it cannot have its own", async () => {
    const { run, log } = options(["sh", "-c", "exit 0"], level, null);
    expect(await runSandboxed(run)).toEqual({ level, exitCode: 0 });
    expect(log.join("\n")).toContain("acp run: the agent shares this session's kernel keyring");
  });

  it("stops before the agent starts when the check fails (fail closed, sandbox_setup_failed)", async () => {
    const marker = join(work.path, `started-${level}`);
    const { run, log } = options(["sh", "-c", `touch ${marker}`], level, { exec: [], check: ["/bin/false"] });
    await expect(runSandboxed(run)).rejects.toMatchObject({
      code: "sandbox_setup_failed",
      message: expect.stringContaining("cannot give the agent a session keyring of its own") as unknown,
    });
    expect(existsSync(marker)).toBe(false);
    expect(log.join("\n")).not.toContain("shares this session's kernel keyring");
  });

  it("with the default, the agent starts and does not warn", async () => {
    const { run, log } = options(["sh", "-c", "exit 7"], level, undefined);
    expect(await runSandboxed(run)).toEqual({ level, exitCode: 7 });
    expect(log.join("\n")).not.toContain("shares this session's kernel keyring");
  });
});
