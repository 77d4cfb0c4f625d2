import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const EXAMPLE = fileURLToPath(new URL("../../../spec/examples/consent-graph.json", import.meta.url));
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-lint-"));
  env = { HOME: home, ACP_HOME: home };
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("acp graph lint", () => {
  it("the example graph is clean, exit 0", async () => {
    const out = await runCli(["graph", "lint", EXAMPLE], { env });
    expect(out).toMatchObject({ code: 0, stdout: `${EXAMPLE}: ok\n` });
  });

  it("prints FILE:LINE:COL lines and exits 4", async () => {
    const file = join(home, "g.json");
    writeFileSync(file, '{\n"email": {\n"autonomous": ["read", "send"],\n"requires_approval": ["send"]\n}}');
    const out = await runCli(["graph", "lint", "g.json"], { env, cwd: home });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain("g.json:2:1: domain `email` has no `blocked` list");
    expect(out.stderr).toContain("g.json:4:23: `email.send` is in both `autonomous` and `requires_approval`");
  });

  it("--json prints the issues and exits 4", async () => {
    const file = join(home, "g.json");
    writeFileSync(file, "{");
    const out = await runCli(["graph", "lint", file, "--json"], { env });
    expect(out.code).toBe(4);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: false, issues: [{ code: "json_syntax", line: 1 }] });
  });

  it("--json says its verdict as `valid`, as acp policy validate --json does (and keeps `ok` for old scripts)", async () => {
    const clean = await runCli(["graph", "lint", EXAMPLE, "--json"], { env });
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toEqual({ file: EXAMPLE, valid: true, ok: true, issues: [] });
    const file = join(home, "g.json");
    writeFileSync(file, "{");
    const bad = await runCli(["graph", "lint", file, "--json"], { env });
    expect(bad.code).toBe(4);
    expect(JSON.parse(bad.stdout)).toMatchObject({ valid: false, ok: false });
  });

  it("lints the default graph and says when it is missing", async () => {
    const missing = await runCli(["graph", "lint"], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read consent graph");
    // lint takes the file as an argument: it has no --graph option to point at
    expect(missing.stderr).toContain("or name one: `acp graph lint FILE`");
    expect(missing.stderr).not.toContain("--graph");
    writeFileSync(
      join(home, "consent-graph.json"),
      '{"cron": {"autonomous": ["list"], "requires_approval": [], "blocked": []}}',
    );
    expect((await runCli(["graph", "lint"], { env })).code).toBe(0);
  });
});
