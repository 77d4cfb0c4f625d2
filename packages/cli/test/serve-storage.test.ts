/** Which storage `acp serve` uses, and a clear error (password masked, non-zero exit) when it cannot open it. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { STARTER_POLICY } from "@acp/store";
import { resolveStorageUrl } from "@acp/server";
import { runCli } from "./run.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function freshHome(config?: string): string {
  const home = mkdtempSync(join(tmpdir(), "acp-serve-storage-"));
  homes.push(home);
  writeFileSync(join(home, "policy.yml"), STARTER_POLICY);
  if (config !== undefined) writeFileSync(join(home, "config.yml"), config);
  return home;
}

const UNREACHABLE = "postgres://acp:hunter2secret@127.0.0.1:1/acp";

describe("acp serve storage", () => {
  it("takes --storage-url over ACP_STORAGE_URL over storage.url, and SQLite when none is set", () => {
    expect(resolveStorageUrl({ flag: "postgres://f/x", env: "postgres://e/x", config: "postgres://c/x" })).toEqual({
      url: "postgres://f/x",
      source: "--storage-url",
    });
    expect(resolveStorageUrl({ env: "postgres://e/x", config: "postgres://c/x" })?.source).toBe("ACP_STORAGE_URL");
    expect(resolveStorageUrl({ env: "", config: "postgres://c/x" })?.source).toBe("config.yml storage.url");
    expect(resolveStorageUrl({})).toBeNull();
  });

  it("an unreachable database: exit 1, the URL named with its password masked, and the fix", async () => {
    const home = freshHome();
    // no wait for a database starting (default 30 s): said at once; the wait itself is serve-connect-wait.test.ts's
    const out = await runCli(["serve", "--port", "0", "--storage-connect-wait", "0", "--storage-url", UNREACHABLE], {
      env: { HOME: home, ACP_HOME: home },
      now: new Date(),
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("--storage-url: cannot reach PostgreSQL at postgres://acp:***@127.0.0.1:1/acp");
    expect(out.stderr).toContain("remove the URL to use SQLite");
    expect(out.stderr).not.toContain("hunter2secret");
  });

  it("storage.url in config.yml is used, and a URL that is not postgres:// says how to write one", async () => {
    const home = freshHome("storage:\n  url: mysql://root:pw@127.0.0.1/acp\n");
    const out = await runCli(["serve", "--port", "0"], { env: { HOME: home, ACP_HOME: home }, now: new Date() });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("config.yml storage.url: storage url scheme `mysql` is not postgres");
    expect(out.stderr).toContain("postgres://user:password@host:5432/database");
    expect(out.stderr).not.toContain("pw@");
  });

  it("ACP_STORAGE_URL is used when no flag is given", async () => {
    const home = freshHome();
    const out = await runCli(["serve", "--port", "0", "--storage-connect-wait", "0"], {
      env: { HOME: home, ACP_HOME: home, ACP_STORAGE_URL: UNREACHABLE },
      now: new Date(),
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("ACP_STORAGE_URL: cannot reach PostgreSQL at postgres://acp:***@127.0.0.1:1/acp");
  });

  it("acp console-link refuses to guess when the running service is on PostgreSQL and no URL is given", async () => {
    const home = freshHome();
    writeFileSync(
      join(home, "serve.json"),
      JSON.stringify({ url: "http://127.0.0.1:1", pid: 1, started_at: "", storage: "postgres" }),
    );
    const out = await runCli(["console-link"], { env: { HOME: home, ACP_HOME: home }, now: new Date() });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("pass --storage-url or set ACP_STORAGE_URL");
  });
});
