/**
 * The agent's own session keyring (`sessionKeyring`): which Perl and which system call number, the warning
 * when there is none, and a check that fails stopping the run before the agent starts (real namespaces; the
 * keys themselves are proved out of reach by `packages/cli/test/run-session-keyring.test.ts`).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endianness } from "node:os";
import {
  KEYCTL_SYSCALL,
  keyringAbis,
  keyringWrapper,
  PRCTL_SYSCALL,
  runSandboxed,
  sessionKeyring,
  type KeyringAbi,
  type SandboxRunOptions,
} from "../../src/index.js";
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

  it("then sets no_new_privs and the keyring filter with this architecture's prctl, and checks it took", () => {
    const k = sessionKeyring("x64", () => "/usr/bin/perl");
    for (const program of [k?.exec[2], k?.check[2]]) {
      expect(program).toContain("syscall(157, 38, 1, 0, 0, 0)");
      expect(program).toContain("syscall(157, 22, 2, $fprog, 0, 0)");
      expect(program).toContain("for my $nr (248, 249, 250)");
      // the filter starts by loading seccomp_data.arch and comparing it with AUDIT_ARCH_X86_64
      expect(program).toContain(`pack("(SCCL)*", 32,0,0,4, 21,2,0,${0xc000003e}`);
    }
    expect(sessionKeyring("arm64", () => "/usr/bin/perl")?.check[2]).toContain("syscall(167, 22, 2, $fprog, 0, 0)");
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
    // under netns the agent is uid 0 of the host: with no filter, root's user keyring is open to it too
    expect(log.join("\n").includes("and those of root's user keyring")).toBe(level === "netns");
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

  // the host's own ABI with one thing wrong, as a wrong number in the tables would be
  const native = (keyringAbis(process.arch, endianness()) ?? [])[0] as KeyringAbi;
  const prctl = PRCTL_SYSCALL[process.arch] ?? -1;
  it.each([
    [
      "an architecture value that is not this one's (the check is killed by SIGSYS)",
      { ...native, audit: 0x1234 },
      prctl,
    ],
    ["a prctl number that is not prctl's (no filter is installed)", native, -1],
  ])("stops before the agent starts when the filter has %s", async (_, abi, prctlNumber) => {
    const marker = join(work.path, `filtered-${level}`);
    const wrapper = keyringWrapper("/usr/bin/perl", [abi], prctlNumber);
    const { run } = options(["sh", "-c", `touch ${marker}`], level, wrapper);
    await expect(runSandboxed(run)).rejects.toMatchObject({
      code: "sandbox_setup_failed",
      message: expect.stringMatching(
        /cannot give the agent a session keyring of its own: (killed by SIGSYS|cannot keep the agent from the kernel's keyrings: cannot install the seccomp filter: )/,
      ) as unknown,
    });
    expect(existsSync(marker)).toBe(false);
  });

  it("with the default, the agent starts and does not warn", async () => {
    const { run, log } = options(["sh", "-c", "exit 7"], level, undefined);
    expect(await runSandboxed(run)).toEqual({ level, exitCode: 7 });
    expect(log.join("\n")).not.toContain("shares this session's kernel keyring");
  });
});
