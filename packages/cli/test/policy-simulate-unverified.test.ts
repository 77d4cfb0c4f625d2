/**
 * `acp policy simulate --unverified-server` answers as `acp serve` answers a caller whose `server` is only
 * its word (ADR 0006): the same decision its live pipeline gives, where the default (the server as named,
 * as `acp proxy` knows it) may be looser.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRateLimiter, parsePolicy } from "@acp/core";
import { createServePipelines } from "../src/wiring/serve-policy.js";
import { tempRoot } from "./home-fixture.js";
import { runCli } from "./run.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - id: no-refunds
    match: { server: payments, tool: "refund_*" }
    action: deny
  - id: deny-financial
    match: { category: financial }
    action: deny
  - id: docs
    match: { server: docs }
    action: allow
classify:
  - tool: export_report
    server: payments
    category: financial
`;

const root = tempRoot("simulate-unverified");
afterAll(() => root.cleanup());
const policyFile = join(root.dir, "policy.yml");
writeFileSync(policyFile, POLICY);

type Printed = { route?: string; rule?: string | null; reasons?: { code: string }[] };

async function simulate(args: string[]): Promise<Printed> {
  const out = await runCli(["policy", "simulate", "--policy", policyFile, ...args], {
    cwd: root.dir,
    env: { ACP_HOME: join(root.dir, "home") },
  });
  expect([out.code, out.stderr]).toEqual([0, ""]);
  return JSON.parse(out.stdout) as Printed;
}

/** What `acp serve`'s live pipeline answers the agents' token for the same call. */
async function served(request: Record<string, unknown>): Promise<Printed> {
  const parsed = parsePolicy(POLICY, { file: policyFile });
  if (!parsed.ok) throw new Error("fixture does not validate");
  const pipelines = createServePipelines(
    { policy: parsed.value, policyFile },
    { log: () => undefined, audit: () => undefined },
  );
  const decision = await pipelines.anyServerPipeline(createMemoryRateLimiter()).decide(request, new Date());
  return { route: decision.route, rule: decision.rule, reasons: decision.reasons.map((r) => ({ code: r.code })) };
}

const codes = (printed: Printed): string[] => (printed.reasons ?? []).map((r) => r.code);

describe("acp policy simulate --unverified-server", () => {
  it("holds a deny rule for another server whatever --server names, as acp serve does", async () => {
    const args = ["--tool", "refund_order", "--server", "docs"];
    expect(await simulate(args)).toMatchObject({ route: "accept", rule: "policy:docs" });
    const unverified = await simulate([...args, "--unverified-server"]);
    expect(unverified).toMatchObject({ route: "refuse", rule: "policy:no-refunds" });
    const live = await served({ tool: "refund_order", server: "docs", arguments: {} });
    expect([unverified.route, unverified.rule, codes(unverified)]).toEqual([live.route, live.rule, codes(live)]);
  });

  it("judges every reading a classify: entry tells apart, the strictest standing (server_unverified)", async () => {
    const args = ["--tool", "export_report", "--server", "docs"];
    expect((await simulate(args)).route).toBe("accept");
    const unverified = await simulate([...args, "--unverified-server"]);
    expect(unverified).toMatchObject({ route: "refuse", rule: "policy:deny-financial" });
    expect(codes(unverified)).toContain("server_unverified");
    const live = await served({ tool: "export_report", server: "docs", arguments: {} });
    expect([unverified.route, unverified.rule, codes(unverified)]).toEqual([live.route, live.rule, codes(live)]);
  });

  it("judges a call that names no server on every reading too", async () => {
    const unverified = await simulate(["--tool", "refund_order", "--unverified-server"]);
    expect(unverified).toMatchObject({ route: "refuse", rule: "policy:no-refunds" });
    expect(await simulate(["--tool", "refund_order"])).toMatchObject({ route: "ask", rule: "policy:default" });
  });
});
