import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_POLICY_BYTES } from "@acp/core";
import { STARTER_POLICY } from "@acp/store";
import { runCli } from "./run.js";

const VALID = `version: "1"
default_action: ask
rules:
  - id: read-anything
    match: { tool: "read_*" }
    action: allow
  - match: { tool: "send_*", args: { to.address: "*@corp.com" } }
    action: ask
    rate_limit: 20/minute
`;

const SHADOWED = `version: "1"
rules:
  - id: reads
    match: { category: read }
    action: allow
  - id: no-etc
    match: { category: read, args: { path: "/etc/**" } }
    action: deny
`;

const INVALID = `version: "1"
rules:
  - id: send-mail
    match: { tool: "send_*" }
    action: alow
    acton: deny
`;

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "acp-policy-validate-"));
  writeFileSync(join(dir, "valid.yml"), VALID);
  writeFileSync(join(dir, "invalid.yml"), INVALID);
  writeFileSync(join(dir, "shadowed.yml"), SHADOWED);
  writeFileSync(join(dir, "one.yml"), 'version: "1"\nrules:\n  - action: deny\n');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("acp policy validate", () => {
  it("says a valid policy is valid, with its rule count, and exits 0", async () => {
    const out = await runCli(["policy", "validate", "valid.yml"], { cwd: dir });
    expect(out).toEqual({ code: 0, stdout: "valid.yml: valid (2 rules)\n", stderr: "" });
    const one = await runCli(["policy", "validate", "one.yml"], { cwd: dir });
    expect(one.stdout).toBe("one.yml: valid (1 rule)\n");
  });

  it("prints one FILE:LINE:COL line per problem on stderr and exits 4", async () => {
    const out = await runCli(["policy", "validate", "invalid.yml"], { cwd: dir });
    expect(out.code).toBe(4);
    expect(out.stdout).toBe("");
    expect(out.stderr).toBe(
      "invalid.yml:5:13: while reading rule `send-mail`: unknown action `alow` (expected allow, ask or deny) (did you mean `allow`)\n" +
        "invalid.yml:6:5: while reading rule `send-mail`: unknown key `acton` (did you mean `action`)\n",
    );
  });

  it("prints {file, valid, rules, issues} with --json", async () => {
    const good = await runCli(["policy", "validate", "valid.yml", "--json"], { cwd: dir });
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toEqual({ file: "valid.yml", valid: true, rules: 2, issues: [], warnings: [] });
    const bad = await runCli(["policy", "validate", "invalid.yml", "--json"], { cwd: dir });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toBe("");
    const report = JSON.parse(bad.stdout) as {
      valid: boolean;
      rules: unknown;
      issues: { code: string; line: number }[];
    };
    expect(report.valid).toBe(false);
    expect(report.rules).toBeNull();
    expect(report.issues.map((i) => [i.code, i.line])).toEqual([
      ["unknown_action", 5],
      ["unknown_key", 6],
    ]);
  });

  it("warns about a rule an earlier rule shadows, at FILE:LINE:COL, and still exits 0", async () => {
    const out = await runCli(["policy", "validate", "shadowed.yml"], { cwd: dir });
    expect(out).toEqual({
      code: 0,
      stdout: "shadowed.yml: valid (2 rules)\n",
      stderr:
        "shadowed.yml:6:5: warning: rule `no-etc` can never match: rule `reads` (line 3) comes first and matches " +
        "every call it would, so it allows what this rule would deny (the first matching rule decides: put the " +
        "narrower rule before the broader one)\n",
    });
    const json = await runCli(["policy", "validate", "shadowed.yml", "--json"], { cwd: dir });
    const report = JSON.parse(json.stdout) as { valid: boolean; warnings: { code: string; line: number }[] };
    expect(json.code).toBe(0);
    expect(report.valid).toBe(true);
    expect(report.warnings.map((w) => [w.code, w.line])).toEqual([["shadowed_rule", 6]]);
  });

  it("warns about a tool written as the proxy shows it (server__tool), which no rule sees", async () => {
    writeFileSync(
      join(dir, "prefixed.yml"),
      'version: "1"\nrules:\n  - id: no-delete\n    match: { tool: github__delete_repo }\n    action: deny\n',
    );
    const out = await runCli(["policy", "validate", "prefixed.yml"], { cwd: dir });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe(
      "prefixed.yml:3:5: warning: rule `no-delete`: `tool` `github__delete_repo` looks like the name `acp proxy` " +
        "shows an agent (server__tool); rules see the tool's own name and its server apart " +
        "(write `tool: delete_repo` with `server: github`)\n",
    );
  });

  it("warns about a deny rule's rate limit, which counts nothing", async () => {
    writeFileSync(
      join(dir, "deny-limit.yml"),
      'version: "1"\nrules:\n  - id: cap\n    match: { tool: send_email }\n    action: deny\n    rate_limit: "10/hour"\n',
    );
    const out = await runCli(["policy", "validate", "deny-limit.yml", "--json"], { cwd: dir });
    expect(out.code).toBe(0);
    const report = JSON.parse(out.stdout) as { warnings: { code: string; line: number; column: number }[] };
    expect(report.warnings.map((w) => [w.code, w.line, w.column])).toEqual([["ineffective_key", 3, 5]]);
  });

  it("warns about a glob written wholly in quotes, whose quotes are text it meets", async () => {
    writeFileSync(
      join(dir, "quoted.yml"),
      `version: "1"\nrules:\n  - id: no-keys\n    match: { args: { path: "'*.pem'" } }\n    action: deny\n`,
    );
    const out = await runCli(["policy", "validate", "quoted.yml"], { cwd: dir });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe(
      "quoted.yml:3:5: warning: rule `no-keys`: `path` pattern `'*.pem'` is wholly in quotes, and a glob's quotes " +
        'are text it meets: it meets only a value written with them (to meet the value without them, write `*.pem` (in YAML, `"*.pem"` holds no quote))\n',
    );
  });

  it("reads $ACP_HOME/policy.yml when no file is named", async () => {
    const home = join(dir, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "policy.yml"), VALID);
    const out = await runCli(["policy", "validate"], { env: { ACP_HOME: home } });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`${join(home, "policy.yml")}: valid (2 rules)\n`);
  });

  it("reads standard input for `-`", async () => {
    const out = await runCli(["policy", "validate", "-"], { stdin: INVALID });
    expect(out.code).toBe(4);
    expect(out.stderr.split("\n")[0]).toMatch(/^<stdin>:5:13: /);
  });

  it("exits 1 with a clear message when the file is missing or not a file", async () => {
    const missing = await runCli(["policy", "validate", "nope.yml"], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("acp: cannot read policy `nope.yml`: no such file\n");
    const home = await runCli(["policy", "validate"], { env: { ACP_HOME: join(dir, "empty-home") } });
    expect(home.code).toBe(1);
    expect(home.stderr).toContain("(run `acp init` to create one, or pass FILE)");
    const directory = await runCli(["policy", "validate", "."], { cwd: dir });
    expect(directory).toEqual({ code: 1, stdout: "", stderr: "acp: cannot read policy `.`: not a file\n" });
  });

  it("refuses an oversized file without reading it", async () => {
    const big = join(dir, "big.yml");
    writeFileSync(big, "");
    truncateSync(big, 50 * 1024 * 1024);
    const out = await runCli(["policy", "validate", big]);
    expect(out.code).toBe(4);
    expect(out.stderr).toBe(
      `${big}:1:1: policy is ${50 * 1024 * 1024} bytes, larger than ${MAX_POLICY_BYTES} bytes (10 MiB)\n`,
    );
  });

  it("refuses a file that is not UTF-8", async () => {
    writeFileSync(join(dir, "latin1.yml"), Buffer.from([0x76, 0x3a, 0x20, 0xe9, 0x0a]));
    const out = await runCli(["policy", "validate", "latin1.yml", "--json"], { cwd: dir });
    expect(out.code).toBe(4);
    expect((JSON.parse(out.stdout) as { issues: { code: string }[] }).issues[0]?.code).toBe("invalid_encoding");
  });

  it("teaches in --help, with examples", async () => {
    const out = await runCli(["policy", "validate", "--help"]);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("Usage: acp policy validate [options] [file]");
    expect(out.stdout).toContain("acp policy validate ~/.acp/policy.yml");
    expect(out.stdout).toContain("--json");
  });
});

describe("acp policy validate on the files ACP writes", () => {
  it("finds the starter policy of `acp init` valid", async () => {
    const home = join(dir, "init-home");
    writeFileSync(join(dir, "starter.yml"), STARTER_POLICY);
    const out = await runCli(["policy", "validate", "starter.yml"], { cwd: dir, env: { ACP_HOME: home } });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^starter\.yml: valid \([0-9]+ rules\)\n$/);
  });
});
