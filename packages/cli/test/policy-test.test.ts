import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function workspace(tests: string): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-policy-test-"));
  copyFileSync(join(root, "examples/policy-tour/policy.yml"), join(dir, "policy.yml"));
  writeFileSync(join(dir, "cases.test.yml"), tests);
  return dir;
}

describe("acp policy test", () => {
  it("passes the tour's decision cases, rate limit and time windows included", async () => {
    const out = await runCli(["policy", "test", "examples/policy-tour/policy.test.yml"], { cwd: root });
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(out.stdout).toBe("8 passed, 0 failed (8 cases in 1 file)\n");
  });

  it("reports each failing case with its file, line and name, and exits 3", async () => {
    const dir = workspace(`policy: policy.yml
cases:
  - name: passes
    request: { tool: read_file, arguments: {} }
    expect: { route: accept }
  - name: wrong route
    request: { tool: transfer_funds, arguments: {} }
    expect: { route: accept }
  - name: wrong rule
    request: { tool: read_file, arguments: {} }
    expect: { route: accept, rule: "policy:no-money" }
`);
    const out = await runCli(["policy", "test", dir]);
    expect(out.code).toBe(3);
    expect(out.stdout).toContain("1 passed, 2 failed");
    const lines = out.stderr.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /cases\.test\.yml:6: case `wrong route`: expected route `accept`, got route `refuse` by rule `policy:no-money`/,
    );
    expect(lines[1]).toMatch(
      /cases\.test\.yml:9: case `wrong rule`: expected route `accept` by rule `policy:no-money`, got route `accept` by rule `policy:reads`/,
    );
  });

  it("rejects unknown keys and bad routes in a test file with exit 4", async () => {
    const dir = workspace(`policy: policy.yml
cases:
  - name: typo
    reqest: { tool: read_file, arguments: {} }
    expect: { route: acept }
`);
    const out = await runCli(["policy", "test", join(dir, "cases.test.yml")]);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("unknown key `reqest`");
  });

  it("a request without `arguments` is a call of a tool with no arguments (`{}`, as the proxy takes such a call)", async () => {
    const dir = workspace(`policy: policy.yml
cases:
  - name: a read with no arguments
    request: { tool: read_file }
    expect: { route: accept, rule: "policy:reads" }
`);
    const out = await runCli(["policy", "test", dir]);
    expect(out.stderr).toBe("");
    expect(out.stdout).toContain("1 passed, 0 failed");
    expect(out.code).toBe(0);
  });

  it("`arguments` that are not a mapping make the file invalid, naming the case and the fix", async () => {
    const dir = workspace(`policy: policy.yml
cases:
  - name: listed arguments
    request: { tool: read_file, arguments: [/tmp/a] }
    expect: { route: accept }
`);
    const out = await runCli(["policy", "test", dir]);
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("case 1 (`listed arguments`): `request.arguments` must be a mapping");
    expect(out.stderr).toContain("arguments: {}");
  });

  it("prints every result as JSON with --json", async () => {
    const out = await runCli(["policy", "test", "--json", "examples/policy-tour"], { cwd: root });
    expect(out.code).toBe(0);
    const json = JSON.parse(out.stdout) as {
      passed: number;
      failed: number;
      results: { name: string; passed: boolean }[];
    };
    expect(json.failed).toBe(0);
    expect(json.results.length).toBe(json.passed);
  });

  it("exits 1 when the path does not exist", async () => {
    const out = await runCli(["policy", "test", "/nonexistent/tests"]);
    expect(out.code).toBe(1);
  });

  it("says on stderr that a directory holds no test files, and exits 4", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-policy-test-empty-"));
    writeFileSync(join(dir, "notes.yml"), "cases: []\n");
    const out = await runCli(["policy", "test", dir]);
    expect(out.code).toBe(4);
    expect(out.stderr).toBe(`acp: no *.test.yml (or *.test.yaml) files under \`${dir}\`\n`);
  });

  it("says on stderr that a test file has no cases, and exits 4", async () => {
    const dir = workspace("policy: policy.yml\ncases: []\n");
    const out = await runCli(["policy", "test", dir]);
    expect(out.code).toBe(4);
    expect(out.stderr).toBe(`acp: no test cases in \`${join(dir, "cases.test.yml")}\`\n`);
  });
});
