import { afterAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STARTER_POLICY } from "@acp/store";
import { runCli } from "./run.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const POLICY = "examples/policy-tour/policy.yml";
const GRAPH = "spec/examples/consent-graph.json";

async function simulate(args: string[]): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const out = await runCli(["policy", "simulate", "--policy", POLICY, ...args], { cwd: root });
  return {
    code: out.code,
    json: out.code === 0 ? (JSON.parse(out.stdout) as Record<string, unknown>) : {},
    stderr: out.stderr,
  };
}

describe("acp policy simulate", () => {
  it("prints the route, action, deciding rule, category, risk and reasons", async () => {
    const out = await simulate([
      "--tool",
      "send_email",
      "--server",
      "mail",
      "--args",
      '{"to":"mark@attacker.example"}',
    ]);
    expect(out.code).toBe(0);
    expect(out.json).toMatchObject({
      route: "ask",
      action: "ask",
      rule: "policy:mail-elsewhere",
      category: "communication",
      risk_level: "high",
      timeout: 300,
      level: "high",
    });
    expect(Array.isArray(out.json["reasons"])).toBe(true);
  });

  it("decides time-of-day rules at the time given by --at", async () => {
    const day = await simulate(["--tool", "deploy_site", "--at", "2026-03-02T09:00:00Z"]);
    const night = await simulate(["--tool", "deploy_site", "--at", "2026-03-02T22:30:00Z"]);
    expect(day.json["rule"]).toBe("policy:deploys-in-office-hours");
    expect(night.json).toMatchObject({ route: "refuse", rule: "policy:no-deploys-after-hours" });
  });

  it("lets an explicit category override the built-in classification", async () => {
    const out = await simulate(["--tool", "read_balance", "--category", "financial"]);
    expect(out.json).toMatchObject({ route: "refuse", rule: "policy:no-money", category: "financial" });
  });

  it("adds the consent graph's verdict when a graph places the call", async () => {
    const out = await simulate([
      "--tool",
      "read_file",
      "--graph",
      GRAPH,
      "--domain",
      "self_modification",
      "--action",
      "modify_soul_md",
      "--confidence",
      "0.99",
    ]);
    expect(out.json["route"]).toBe("refuse");
    expect(String(out.json["rule"])).toMatch(/^graph:/);
  });

  it("rejects malformed --args, --at, --category and --confidence with exit 4 and changes nothing", async () => {
    for (const bad of [
      ["--tool", "x", "--args", "{nope"],
      ["--tool", "x", "--at", "yesterday"],
      ["--tool", "x", "--category", "reed"],
      ["--tool", "x", "--graph", GRAPH, "--domain", "email", "--action", "send", "--confidence", "1.5"],
    ]) {
      const out = await simulate(bad);
      expect(out.code).toBe(4);
      expect(out.stderr).toMatch(/^acp: --(args|at|category|confidence)/);
    }
  });

  it("rejects --args that are JSON but not an object with exit 4, as it rejects malformed JSON", async () => {
    for (const args of ["[1,2]", '"to=bob"', "null", "3"]) {
      const out = await simulate(["--tool", "x", "--args", args]);
      expect(out.code).toBe(4);
      expect(out.stderr).toMatch(/^acp: --args: expected a JSON object/);
    }
  });

  it("exits 1 with a hint when there is no policy", async () => {
    const out = await runCli(["policy", "simulate", "--tool", "x"], { env: { ACP_HOME: "/nonexistent/acp-home" } });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("acp init");
  });

  it("exits 4 listing every problem of an invalid policy", async () => {
    const out = await runCli(
      ["policy", "simulate", "--tool", "x", "--policy", "examples/policy-tour/broken-policy.yml"],
      { cwd: root },
    );
    expect(out.code).toBe(4);
    expect(out.stderr).toMatch(/broken-policy\.yml:\d+:\d+: /);
  });

  it("accepts --json as a no-op: the output is JSON either way", async () => {
    const plain = await simulate(["--tool", "read_balance"]);
    const json = await simulate(["--tool", "read_balance", "--json"]);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe("");
    expect(json.json).toEqual(plain.json);
  });
});

describe("acp policy simulate --annotations", () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-simulate-starter-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const starter = join(dir, "policy.yml");
  writeFileSync(starter, STARTER_POLICY);
  const run = (args: string[]) => runCli(["policy", "simulate", "--policy", starter, ...args], { cwd: root });

  it("classifies with the tool's MCP annotations: server-filesystem's edit_file asks under the starter policy", async () => {
    const out = await run(["--tool", "edit_file", "--annotations", '{"readOnlyHint":false,"destructiveHint":true}']);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      route: "ask",
      rule: "policy:ask-writes",
      category: "write",
      risk_level: "high",
    });
    const shell = await run(["--tool", "exec_command", "--annotations", '{"readOnlyHint":true}']);
    expect(JSON.parse(shell.stdout)).toMatchObject({ route: "refuse", rule: "policy:refuse-system" });
  });

  it("refuses annotations that are not an object of hints (exit 4)", async () => {
    for (const bad of ['{"destructiveHint":"yes"}', "[1]", '{"dangerous":true}', "{bad"]) {
      const out = await run(["--tool", "edit_file", "--annotations", bad]);
      expect(out.code).toBe(4);
      expect(out.stderr).toContain("--annotations");
      expect(out.stdout).toBe("");
    }
  });
});
