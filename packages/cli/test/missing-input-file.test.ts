import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./run.js";

// one home for every case: it holds a valid policy and no consent graph, and the files below
const home = mkdtempSync(join(tmpdir(), "acp-missing-input-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { HOME: home, ACP_HOME: home };
writeFileSync(join(home, "policy.yml"), 'version: "1"\nrules: []\n');
writeFileSync(join(home, "bad-policy.yml"), 'version: "1"\nrules:\n  - action: alow\n');
writeFileSync(join(home, "bad-graph.json"), "{");

describe("a file the person names that is not there: exit 1 in acp policy … and acp graph … alike", () => {
  it.each([
    ["policy validate", ["policy", "validate", "nope.yml"]],
    ["policy simulate --policy", ["policy", "simulate", "--tool", "t", "--policy", "nope.yml"]],
    ["policy simulate --graph", ["policy", "simulate", "--tool", "t", "--graph", "nope.json"]],
    ["policy test", ["policy", "test", "nope.test.yml"]],
    ["graph check --graph", ["graph", "check", "email", "read", "--graph", "nope.json"]],
    ["graph lint", ["graph", "lint", "nope.json"]],
    ["graph review --graph", ["graph", "review", "--graph", "nope.json"]],
    ["replay (the trace)", ["replay", "--policy", "policy.yml", "nope.jsonl"]],
    ["replay --policy", ["replay", "--policy", "nope.yml", "nope.jsonl"]],
  ])("acp %s exits 1 saying it the one way: cannot read … `FILE`: no such file", async (_name, argv) => {
    const out = await runCli(argv, { env, cwd: home });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^acp: cannot read [a-z ]+`[^`]*nope\.(yml|json|jsonl|test\.yml)`: no such file/);
  });

  it("the missing graph's hint works without the repository: the command it gives writes a graph that lints", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-missing-graph-"));
    try {
      const dirEnv = { HOME: dir, ACP_HOME: dir };
      const out = await runCli(["graph", "lint"], { env: dirEnv, cwd: dir });
      expect(out.code).toBe(1);
      const command = /`(echo .*?)`, or/.exec(out.stderr)?.[1];
      expect(command).toBeDefined();
      execFileSync("sh", ["-c", command ?? "false"], { cwd: dir });
      expect(await runCli(["graph", "lint"], { env: dirEnv, cwd: dir })).toMatchObject({ code: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the home's default graph missing is exit 1 too, saying how to create it", async () => {
    for (const argv of [
      ["graph", "check", "email", "read"],
      ["graph", "lint"],
      ["graph", "review"],
    ]) {
      const out = await runCli(argv, { env, cwd: home });
      expect(out.code).toBe(1);
      expect(out.stderr).toContain(`cannot read consent graph \`${join(home, "consent-graph.json")}\`: no such file`);
    }
  });

  it("the home's default policy or test file missing is said the one way too, with what to do (exit 1)", async () => {
    const empty = mkdtempSync(join(tmpdir(), "acp-missing-policy-"));
    try {
      const emptyEnv = { HOME: empty, ACP_HOME: empty };
      const simulate = await runCli(["policy", "simulate", "--tool", "t"], { env: emptyEnv, cwd: empty });
      expect(simulate.code).toBe(1);
      expect(simulate.stderr).toBe(
        `acp: cannot read policy \`${join(empty, "policy.yml")}\`: no such file (run \`acp init\` to create one, or pass --policy FILE)\n`,
      );
      const validate = await runCli(["policy", "validate"], { env: emptyEnv, cwd: empty });
      expect(validate.stderr).toMatch(/^acp: cannot read policy `[^`]*policy\.yml`: no such file \(run `acp init`/);
      const test = await runCli(["policy", "test"], { env: emptyEnv, cwd: empty });
      expect(test.code).toBe(1);
      expect(test.stderr).toMatch(/^acp: cannot read test file `[^`]*policy\.test\.yml`: no such file \(/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("a file that is there and does not parse is invalid input (exit 4) in both families", async () => {
    const runs = [
      ["policy", "validate", "bad-policy.yml"],
      ["policy", "simulate", "--tool", "t", "--policy", "bad-policy.yml"],
      ["policy", "simulate", "--tool", "t", "--graph", "bad-graph.json"],
      ["graph", "check", "email", "read", "--graph", "bad-graph.json"],
      ["graph", "lint", "bad-graph.json"],
      ["graph", "review", "--graph", "bad-graph.json"],
    ];
    for (const argv of runs) expect((await runCli(argv, { env, cwd: home })).code, argv.join(" ")).toBe(4);
  });
});
