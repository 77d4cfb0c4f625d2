import { describe, expect, it } from "vitest";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

function homeWith(config: string): string {
  const home = mkdtempSync(join(tmpdir(), "acp-graph-config-"));
  copyFileSync(join(root, "spec/examples/consent-graph.json"), join(home, "consent-graph.json"));
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
  writeFileSync(join(home, "config.yml"), config);
  return home;
}

const MAPPING = `graph:
  mapping:
    - tool: send_email
      domain: email
      action: send
      refine:
        - recipient_not_vip: [to]
          action: send_to_unknown
`;

async function simulate(
  home: string,
  args: Record<string, unknown>,
): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const out = await runCli(["policy", "simulate", "--tool", "send_email", "--args", JSON.stringify(args)], {
    env: { ACP_HOME: home },
  });
  return {
    code: out.code,
    json: out.code === 0 ? (JSON.parse(out.stdout) as Record<string, unknown>) : {},
    stderr: out.stderr,
  };
}

describe("the consent-graph mapping from config.yml", () => {
  it("places a tool call in the graph: mail to someone outside vip_contacts is blocked", async () => {
    const out = await simulate(homeWith(MAPPING), { to: "mark@attacker.example" });
    expect(out.code).toBe(0);
    expect(out.json["route"]).toBe("refuse");
    expect(out.json["rule"]).toBe("graph:email.send_to_unknown");
  });

  it("leaves calls the mapping does not cover to the other sources", async () => {
    const home = homeWith(MAPPING);
    const out = await runCli(["policy", "simulate", "--tool", "read_file"], { env: { ACP_HOME: home } });
    expect(JSON.parse(out.stdout)).toMatchObject({ route: "accept", rule: "policy:default" });
  });

  it("refuses to run with an invalid mapping, naming the file (exit 4)", async () => {
    const home = homeWith("graph:\n  mapping:\n    - tool: send_email\n      domian: email\n      action: send\n");
    const out = await simulate(home, { to: "a@b.c" });
    expect(out.code).toBe(4);
    expect(out.stderr).toContain(join(home, "config.yml"));
    expect(out.stderr).toContain("domian");
  });

  it("refuses an unknown key or a threshold outside 0..1", async () => {
    expect((await simulate(homeWith("graph:\n  mappings: []\n"), {})).code).toBe(4);
    expect((await simulate(homeWith("graph:\n  threshold: 2\n"), {})).code).toBe(4);
  });
});

describe("--config FILE on acp policy simulate and acp policy test", () => {
  it("simulate takes graph: from FILE instead of the home's config.yml", async () => {
    const home = homeWith("");
    const file = join(home, "team.yml");
    writeFileSync(file, MAPPING);
    const args = ["policy", "simulate", "--tool", "send_email", "--args", '{"to":"mark@attacker.example"}'];
    const fromHome = await runCli(args, { env: { ACP_HOME: home } });
    expect(JSON.parse(fromHome.stdout)).toMatchObject({ route: "accept", rule: "policy:default" });
    const fromFile = await runCli([...args, "--config", file], { env: { ACP_HOME: home } });
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ route: "refuse", rule: "graph:email.send_to_unknown" });
  });

  it("simulate stops at a missing or invalid FILE, naming it (exit 1 / exit 4 at LINE:COL)", async () => {
    const home = homeWith(MAPPING);
    const missing = await runCli(["policy", "simulate", "--tool", "x", "--config", join(home, "nope.yml")], {
      env: { ACP_HOME: home },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("nope.yml");
    const bad = join(home, "bad.yml");
    writeFileSync(bad, "graph:\n  threshold: 7\n");
    const invalid = await runCli(["policy", "simulate", "--tool", "x", "--config", bad], { env: { ACP_HOME: home } });
    expect(invalid.code).toBe(4);
    expect(invalid.stderr).toContain(`${bad}:2:`);
    expect(invalid.stdout).toBe("");
  });

  it("test judges a file's graph with FILE's mapping only when --config is given", async () => {
    const home = homeWith("");
    const file = join(home, "team.yml");
    writeFileSync(file, MAPPING);
    const cases = join(home, "mail.test.yml");
    writeFileSync(
      cases,
      [
        "policy: policy.yml",
        "graph: consent-graph.json",
        "cases:",
        "  - name: mail to a stranger is blocked by the graph",
        "    request: { tool: send_email, arguments: { to: mark@attacker.example } }",
        '    expect: { route: refuse, rule: "graph:email.send_to_unknown" }',
        "",
      ].join("\n"),
    );
    const without = await runCli(["policy", "test", cases], { env: { ACP_HOME: home } });
    expect(without.code).toBe(3);
    const withConfig = await runCli(["policy", "test", cases, "--config", file, "--json"], { env: { ACP_HOME: home } });
    expect(withConfig.code).toBe(0);
    expect(JSON.parse(withConfig.stdout)).toMatchObject({ passed: 1, failed: 0 });
  });
});
