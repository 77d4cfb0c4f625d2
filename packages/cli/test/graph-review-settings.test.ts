import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./run.js";

interface StatusRow {
  domain: string;
  decayed: boolean;
  changed_since_review: boolean;
  why?: string;
}

const EXAMPLE = fileURLToPath(new URL("../../../spec/examples/consent-graph.json", import.meta.url));
const MAPPING = "graph:\n  mapping:\n    - tool: read_mail\n      domain: email\n      action: read\n";
let home: string;
let env: Record<string, string>;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "acp-graph-review-settings-"));
  env = { HOME: home, ACP_HOME: home };
  copyFileSync(EXAMPLE, join(home, "consent-graph.json"));
  writeFileSync(join(home, "policy.yml"), 'version: "1"\ndefault_action: allow\n');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function setInterval(days: number): void {
  const file = join(home, "consent-graph.json");
  const graph = JSON.parse(readFileSync(file, "utf8")) as { consent_decay: { review_interval_days: number } };
  graph.consent_decay.review_interval_days = days;
  writeFileSync(file, JSON.stringify(graph));
}

async function emailStatus(now?: Date): Promise<StatusRow | undefined> {
  const out = await runCli(["graph", "review", "--status", "--json"], { env, ...(now ? { now } : {}) });
  return (JSON.parse(out.stdout) as { domains: StatusRow[] }).domains.find((d) => d.domain === "email");
}

describe("a review is bound to the settings it was made under", () => {
  it("lengthening review_interval_days does not stretch a review made under the shorter one", async () => {
    expect((await runCli(["graph", "review"], { env })).code).toBe(0); // 2026-01-15, 30 days
    const day40 = new Date("2026-02-24T12:00:00Z");
    expect((await runCli(["graph", "check", "email", "read"], { env, now: day40 })).code).toBe(3);
    setInterval(90);
    const check = await runCli(["graph", "check", "email", "read"], { env, now: day40 });
    expect(check.code).toBe(3);
    expect(check.stdout).toContain("was made under a 30-day interval, and the interval is now 90 days");
    expect(await emailStatus(day40)).toMatchObject({ decayed: true, changed_since_review: true });
    // reviewed again under 90 days: it holds for 90
    expect((await runCli(["graph", "review"], { env, now: day40 })).code).toBe(0);
    const later = new Date("2026-05-01T12:00:00Z");
    expect((await runCli(["graph", "check", "email", "read"], { env, now: later })).code).toBe(0);
  });

  it("a graph.mapping set or changed after the review expires it: graph check, --status and the pipeline", async () => {
    expect((await runCli(["graph", "review"], { env })).code).toBe(0);
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(0);
    writeFileSync(join(home, "config.yml"), MAPPING);
    const check = await runCli(["graph", "check", "email", "read"], { env });
    expect(check.code).toBe(3);
    expect(check.stdout).toContain("the graph mapping (graph.mapping) changed since its last review");
    expect(await emailStatus()).toMatchObject({ decayed: true, changed_since_review: true });
    const simulate = () => runCli(["policy", "simulate", "--tool", "read_mail"], { env });
    expect(JSON.parse((await simulate()).stdout)).toMatchObject({ route: "ask", rule: "graph:email.read" });
    // reviewed under this mapping: current everywhere
    expect((await runCli(["graph", "review"], { env })).code).toBe(0);
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(0);
    expect(await emailStatus()).toMatchObject({ decayed: false, changed_since_review: false });
    const accepted = JSON.parse((await simulate()).stdout) as { route: string; reasons: { code: string }[] };
    expect(accepted.route).toBe("accept");
    expect(accepted.reasons.map((r) => r.code)).toContain("autonomous_action");
    // another entry, or the same entries in another order, is another mapping
    writeFileSync(join(home, "config.yml"), `${MAPPING}    - tool: "*"\n      domain: email\n      action: read\n`);
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(3);
  });

  it("--config names the config whose mapping the review is bound to", async () => {
    writeFileSync(join(home, "team.yml"), MAPPING);
    expect((await runCli(["graph", "review", "--config", "team.yml"], { env, cwd: home })).code).toBe(0);
    expect((await runCli(["graph", "check", "email", "read", "--config", "team.yml"], { env, cwd: home })).code).toBe(
      0,
    );
    // the home's config.yml has no mapping: the review was not made under it
    expect((await runCli(["graph", "check", "email", "read"], { env })).code).toBe(3);
    expect((await runCli(["graph", "review", "--config", "missing.yml"], { env, cwd: home })).code).toBe(1);
  });

  it("a caller's own word on its server (acp serve, --unverified-server) is judged against the review of the configured mapping", async () => {
    const mapping = `${MAPPING}    - server: mail\n      tool: "*"\n      domain: email\n      action: read\n`;
    writeFileSync(join(home, "config.yml"), mapping);
    expect((await runCli(["graph", "review"], { env })).code).toBe(0);
    const out = await runCli(["policy", "simulate", "--tool", "read_mail", "--server", "mail", "--unverified-server"], {
      env,
    });
    const printed = JSON.parse(out.stdout) as { route: string; reasons: { code: string }[] };
    // each reading sees part of the mapping; the review is of the whole, and holds for every reading
    expect(printed.reasons.map((r) => r.code)).not.toContain("consent_decayed");
    expect(printed.route).toBe("accept");
  });
});
