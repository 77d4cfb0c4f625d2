import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// A --storage-url that is not a postgres:// URL is a mistake in the command line: usage (exit 2), said at once,
// for every command that takes the flag (before 28 Nov 2026: exit 1, as a database that cannot be reached).

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function emptyHome(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "acp-storage-flag-"));
  dirs.push(dir);
  return { HOME: dir, ACP_HOME: dir };
}

describe("--storage-url that is not a postgres:// URL", () => {
  it.each([
    [["pending"]],
    [["approve", `cr_${"0".repeat(32)}`]],
    [["deny", `cr_${"0".repeat(32)}`]],
    [["audit", "verify"]],
  ])("acp %j: usage (exit 2), saying how to write one, the password never shown", async (args) => {
    const out = await runCli([...args, "--storage-url", "mysql://root:hunter2secret@127.0.0.1/acp"], {
      env: emptyHome(),
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--storage-url: storage url scheme `mysql` is not postgres");
    expect(out.stderr).toContain("postgres://user:password@host:5432/database");
    expect(out.stderr).not.toContain("hunter2secret");
  });

  it("one that is no URL at all is usage too, and --json carries exit_code 2", async () => {
    const out = await runCli(["audit", "verify", "--json", "--storage-url", "not a url"], { env: emptyHome() });
    expect(out.code).toBe(2);
    expect(JSON.parse(out.stdout)).toMatchObject({ error: { exit_code: 2 } });
    expect(out.stderr).toContain("--storage-url: storage url is not a valid URL");
  });

  it("from ACP_STORAGE_URL it is not a flag: still exit 1 where it is used", async () => {
    const out = await runCli(["pending"], { env: { ...emptyHome(), ACP_STORAGE_URL: "mysql://h/acp" } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("ACP_STORAGE_URL: storage url scheme `mysql` is not postgres");
  });
});
