/**
 * The privileged tools the sandbox runs (`unshare`, `setpriv`, and inside the init `mount` and `ip`) come from
 * the system's directories before PATH, with real namespaces: copies the agent could have left in a directory
 * on PATH (a project's `bin/`) are never run, so they cannot run outside the sandbox on the next `acp run`.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTool, probeIsolation, runSandboxed, SYSTEM_PATH } from "../../src/index.js";
import { quietRun, scratchDir } from "./net-fixture.js";

let work: { path: string; remove(): void };
let planted: string;
let marks: string;

beforeAll(() => {
  work = scratchDir("acp-sbx-tools-");
  planted = join(work.path, "bin");
  marks = join(work.path, "marks");
  mkdirSync(planted);
  mkdirSync(marks);
  // each planted tool leaves a mark, then runs the real one (so an old run still works and shows it ran)
  for (const tool of ["unshare", "setpriv", "mount", "ip", "true"]) {
    const real = findTool(tool, undefined);
    if (real === null) throw new Error(`${tool} not found`);
    writeFileSync(join(planted, tool), `#!/bin/sh\n: > "${marks}/${tool}" 2>/dev/null\nexec ${real} "$@"\n`);
    chmodSync(join(planted, tool), 0o755);
  }
});
afterAll(() => work?.remove());

describe("findTool", () => {
  it("looks in the system's directories before PATH", () => {
    expect(SYSTEM_PATH).toBe("/usr/sbin:/usr/bin:/sbin:/bin");
    expect(findTool("unshare", `${planted}:/usr/bin`)).not.toBe(join(planted, "unshare"));
    expect(findTool("no-such-tool-acp", `${planted}:/usr/bin`)).toBeNull();
  });
});

describe("probeIsolation", () => {
  it("runs neither the unshare nor the true found first on acp's own PATH", () => {
    const saved = process.env["PATH"];
    process.env["PATH"] = `${planted}:${saved ?? ""}`;
    try {
      const probe = probeIsolation();
      expect(probe.userns.ok).toBe(true);
    } finally {
      process.env["PATH"] = saved;
    }
    expect(readdirSync(marks)).toEqual([]);
  });
});

describe.each(["netns", "userns"] as const)("isolation %s", (level) => {
  it("never runs the copies of unshare, setpriv, mount or ip found first on the agent's PATH", async () => {
    const result = await runSandboxed(
      quietRun({
        argv: [process.execPath, "-e", "process.exit(0)"],
        isolation: level,
        home: join(work.path, "home"),
        env: { PATH: `${planted}:${process.env["PATH"] ?? ""}` },
        cwd: work.path,
      }),
    );
    expect(result.exitCode).toBe(0);
    expect(existsSync(marks) ? readdirSync(marks) : []).toEqual([]);
  });
});
