/**
 * `createProxyWiring(...).close()` lets go of `state.db` even when the audit log's close rejects (a log
 * that stopped recording rejects its close with the failure): a long-lived host of the wiring (the guard,
 * a test harness) must not keep the database open after a failed audit.
 */
import { mkdirSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliContext } from "../src/context.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

const root = tempRoot("proxy-wiring-close");
afterAll(root.cleanup);

/** This process's open descriptors on `path` (state.db, its -wal and -shm). */
function openOn(path: string): number {
  let n = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(path)) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

describe("the proxy wiring's close", () => {
  it("closes state.db when the audit log's close fails, and still rejects with that failure", async () => {
    const { home } = fixtureHome(root.dir);
    const lines: string[] = [];
    const ctx: CliContext = {
      io: {
        stdout: { write: () => true },
        stderr: { write: (s: string) => (lines.push(s), true) },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env: envFor(home),
        cwd: root.dir,
        now: () => new Date(),
      },
      exitCode: 0,
    };
    rmSync(join(home, "audit.jsonl"), { force: true });
    mkdirSync(join(home, "audit.jsonl")); // not a file: the audit log cannot open
    const wiring = createProxyWiring(ctx);
    const config = configInUse(readConfigFile(join(home, "config.yml"), false));
    const audit = wiring.createAudit({ home, config });
    const decide = wiring.createDecide({ policyPath: join(home, "policy.yml"), home, config });
    await decide({ tool: "read_file", arguments: { path: "/srv/notes.txt" } }, { sessionId: "s1" });
    await expect(audit.record("tool_call_requested", { tool: "x" })).rejects.toThrow();
    const stateDb = join(home, "state.db");
    expect(openOn(stateDb)).toBeGreaterThan(0);
    await expect(wiring.close()).rejects.toThrow();
    expect(openOn(stateDb)).toBe(0);
  });
});
