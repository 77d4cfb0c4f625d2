import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// A script runs `acp … --json | jq`: when the command stops with an error before printing anything, stdout
// still carries JSON (the message also goes to stderr, and the exit code is the command's).
describe("--json and errors", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-json-errors-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = { HOME: "/nonexistent-home", ACP_HOME: join(dir, "home") };

  it("an error before any output prints {error: {message, exit_code}} on stdout", async () => {
    const missing = join(dir, "missing.yml");
    const out = await runCli(["policy", "validate", missing, "--json"], { env });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`acp: `);
    const parsed = JSON.parse(out.stdout) as { error: { message: string; exit_code: number } };
    expect(parsed.error.exit_code).toBe(1);
    expect(out.stderr).toContain(parsed.error.message);
    expect(out.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("a usage error with --json is JSON too (exit 2)", async () => {
    const out = await runCli(["policy", "validate", "--json", "--no-such-flag"], { env });
    expect(out.code).toBe(2);
    expect(JSON.parse(out.stdout)).toEqual({ error: { message: "unknown option '--no-such-flag'", exit_code: 2 } });
  });

  it("a command that printed its JSON report and then exits non-zero prints nothing more", async () => {
    const bad = join(dir, "bad.yml");
    writeFileSync(bad, 'version: "1"\ndefault_action: maybe\nrules: []\n');
    const out = await runCli(["policy", "validate", bad, "--json"], { env });
    expect(out.code).toBe(4);
    const report = JSON.parse(out.stdout) as Record<string, unknown>;
    expect(report).not.toHaveProperty("error");
    expect(report["valid"]).toBe(false);
  });

  it("without --json an error prints nothing on stdout; --json after `--` belongs to the agent", async () => {
    const plain = await runCli(["policy", "validate", join(dir, "missing.yml")], { env });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe("");
    const after = await runCli(["policy", "validate", join(dir, "missing.yml"), "--", "--json"], { env });
    expect(after.stdout).toBe("");
  });
});
