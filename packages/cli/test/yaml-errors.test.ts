import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run.js";

// The yaml library's own message ends in " at line 3, column 3:" and a snippet of the source.
const BAD = "a: [\n  b,\n  - x\n]\n";
const MESSAGE = "block collections are not allowed within flow collections";

describe("a YAML syntax error is FILE:LINE:COL: message, once, with no snippet", () => {
  let dir: string;
  let bad: string;
  let env: Record<string, string>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-yaml-errors-"));
    bad = join(dir, "bad.yml");
    writeFileSync(bad, BAD);
    writeFileSync(join(dir, "policy.yml"), 'version: "1"\ndefault_action: allow\nrules: []\n');
    writeFileSync(join(dir, "trace.jsonl"), '{"type":"user_input","text":"hi"}\n');
    // PATH: acp run looks its agent command up before anything else (1a707be)
    env = { HOME: dir, ACP_HOME: join(dir, "home"), PATH: process.env["PATH"] ?? "" };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function expectClean(stderr: string, line: string): void {
    expect(stderr).toContain(line);
    expect(stderr).not.toMatch(/at line \d+, column \d+/);
    expect(stderr).not.toContain("  - x");
  }

  it.each([
    [["policy", "test", "BAD"], `BAD:3:3: ${MESSAGE}`],
    [["proxy", "--config", "BAD"], `BAD:3:3: ${MESSAGE}`],
    [["proxy", "--intent", "BAD", "--upstream", "true"], `--intent: BAD:3:3: not YAML or JSON: ${MESSAGE}`],
    [["run", "--intent", "BAD", "--", "true"], `BAD:3:3: ${MESSAGE}`],
    // read as every config file is (the store's reader), so it words a YAML error as proxy --config does
    [["claim", "serve", "--config", "BAD"], `BAD:3:3: ${MESSAGE}`],
  ])("acp %j", async (argv, expected) => {
    const out = await runCli(
      argv.map((a) => (a === "BAD" ? bad : a)),
      { env, cwd: dir },
    );
    expect(out.code).toBe(4);
    expectClean(out.stderr, expected.replace("BAD", bad));
  });

  it("acp replay --session-settings", async () => {
    const out = await runCli(["replay", "--session-settings", "bad.yml", "--policy", "policy.yml", "trace.jsonl"], {
      env,
      cwd: dir,
    });
    expect(out.code).toBe(4);
    expectClean(out.stderr, `bad.yml:3:3: invalid session settings: not JSON or YAML: ${MESSAGE}`);
  });

  it("acp policy verify --intent", async () => {
    const out = await runCli(["policy", "verify", "--policy", "policy.yml", "--intent", "bad.yml"], { env, cwd: dir });
    expect(out.code).toBe(4);
    expectClean(out.stderr, `bad.yml:3:3: invalid intent: not JSON or YAML: ${MESSAGE}`);
  });
});
