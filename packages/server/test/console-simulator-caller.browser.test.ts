/**
 * The console's policy simulator in Chromium answers as `/v1/decide` answers a caller whose `server` is only
 * its word (ADR 0006), says so on the page, and shows beside it what an agent held to the server named gets
 * when that differs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compilePolicy,
  contractSource,
  createMemoryRateLimiter,
  createPipeline,
  parsePolicy,
  policySource,
  type Pipeline,
  type Policy,
} from "@acp/core";
import { anyServerPipelineOf } from "@acp/server";
import { CHROMIUM, FLAGS, ensureChromium, signedIn, type ConsoleBrowser } from "./console-browser.js";
import { openTestServerAt, testKeys } from "./harness.js";

const POLICY = `version: "1"
default_action: ask
rules:
  - id: deny-payment-refunds
    match: { server: payments, tool: "refund_*" }
    action: deny
  - id: allow-docs
    match: { server: docs }
    action: allow
`;

function policy(): Policy {
  const result = parsePolicy(POLICY, { file: "policy.yml" });
  if (!result.ok) throw new Error(result.issues.map((i) => i.message).join("; "));
  return result.value;
}

function pipelineOn(p: Policy): Pipeline {
  const sources = [policySource(compilePolicy(p), { rateLimiter: createMemoryRateLimiter() }), contractSource()];
  return createPipeline(sources, { classify: p.classify });
}

const ui = { problems: [] as string[], contexts: [] } as unknown as ConsoleBrowser;
const home = mkdtempSync(join(tmpdir(), "acp-console-simulator-caller-"));
beforeAll(async () => {
  ensureChromium();
  const keys = testKeys();
  const { node, url } = await openTestServerAt(home, {
    pipeline: pipelineOn(policy()),
    simulationPipeline: pipelineOn(policy()),
    anyServerPipeline: anyServerPipelineOf(policy(), undefined, (r) => pipelineOn(r.policy)),
    anyServerRecheckPipeline: anyServerPipelineOf(policy(), undefined, (r) => pipelineOn(r.policy)),
    keys,
  });
  ui.s = { ...node, url, home, keys, close: () => node.close() };
  ui.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}, 600_000);
afterAll(async () => {
  for (const c of ui.contexts.splice(0)) await c.close();
  await ui.browser?.close();
  await ui.s?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("the policy simulator for a caller whose server is only its word", () => {
  it("shows the route /v1/decide gives the agents' token, and an agent held to the server named beside it", async () => {
    const { page } = await signedIn(ui);
    await page.goto(`${ui.s.url}/console/simulate`);
    await expect(page.locator("main").innerText()).resolves.toContain("only its word");
    await page.locator("#sim-request").fill(JSON.stringify({ tool: "refund_order", server: "docs", arguments: {} }));
    await page.getByRole("button", { name: "Simulate" }).click();
    const result = page.locator('[data-role="sim-result"]');
    await result.locator("h2", { hasText: "Route: refuse" }).waitFor();
    await expect(result.innerText()).resolves.toContain("Deciding rule: policy:deny-payment-refunds");
    await expect(page.locator('[data-role="sim-held"]').innerText()).resolves.toBe(
      "An agent held to servers (serve.agent_servers) that may name this server: route accept, rule policy:allow-docs.",
    );
    // the same route for both: nothing said beside it
    await page.locator("#sim-request").fill(JSON.stringify({ tool: "read_file", server: "docs", arguments: {} }));
    await page.getByRole("button", { name: "Simulate" }).click();
    await result.locator("h2", { hasText: "Route: accept" }).waitFor();
    await expect(page.locator('[data-role="sim-held"]').count()).resolves.toBe(0);
    expect(ui.problems).toEqual([]);
  });
});
