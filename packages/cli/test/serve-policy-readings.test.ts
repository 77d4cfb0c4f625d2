import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRateLimiter, parseConsentGraph, parsePolicy, validateGraphMapping } from "@acp/core";
import type { DecisionInputs } from "../src/decision/load.js";
import { createServePipelines } from "../src/wiring/serve-policy.js";
import { tempRoot } from "./home-fixture.js";

/**
 * `acp serve` judges a caller whose `server` is only its word under every reading of it that the policy's
 * `classify:` and config.yml's `graph.mapping` tell apart, and the strictest answer stands (ADR 0006); the
 * pipelines for such callers (live, re-check) are built so, the ones for a caller held to servers as named.
 */

const POLICY = `version: "1"
default_action: ask
rules:
  - id: allow-known
    match: { tool: "{refund_order,void_invoice}" }
    action: allow
`;

const GRAPH = {
  payments: { trust_level: "high", autonomous: ["sandbox_refund"], requires_approval: ["refund"], blocked: [] },
};

const MAPPING = [
  { server: "payments", tool: "refund_order", domain: "payments", action: "refund" },
  { server: "sandbox", tool: "void_invoice", domain: "payments", action: "sandbox_refund" },
  { tool: "void_invoice", domain: "payments", action: "refund" },
];

const root = tempRoot("serve-policy-readings");
afterAll(() => root.cleanup());

function inputs(): DecisionInputs {
  const policyFile = join(root.dir, "policy.yml");
  writeFileSync(policyFile, POLICY);
  const policy = parsePolicy(POLICY, { file: policyFile });
  const graph = parseConsentGraph(JSON.stringify(GRAPH));
  const mapping = validateGraphMapping(MAPPING);
  if (!policy.ok || !graph.ok || !mapping.ok) throw new Error("fixture does not validate");
  return { policy: policy.value, policyFile, graph: graph.value, graphSettings: { mapping: mapping.value } };
}

describe("acp serve's pipelines for a caller whose server is only its word", () => {
  const pipelines = createServePipelines(inputs(), { log: () => undefined, audit: () => undefined });
  const limiter = createMemoryRateLimiter();
  const live = pipelines.pipeline(limiter);
  const anyServer = pipelines.anyServerPipeline(limiter);

  it("asks for a call another server's mapping entry places in the graph, where the server named gives accept", async () => {
    const request = { tool: "refund_order", server: "docs", arguments: {} };
    expect((await live.decide(request, new Date())).route).toBe("accept");
    const decided = await anyServer.decide(request, new Date());
    expect(decided.route).toBe("ask");
    expect(decided.reasons.map((r) => r.code)).toContain("server_unverified");
    expect(decided.policy_hash).toMatch(/^sha256:/);
    expect((await pipelines.anyServerRecheckPipeline.decide(request, new Date())).route).toBe("ask");
  });

  it("does not let the server named loosen the call with its own mapping entry", async () => {
    const request = { tool: "void_invoice", server: "sandbox", arguments: {} };
    expect((await live.decide(request, new Date())).route).toBe("accept");
    expect((await anyServer.decide(request, new Date())).route).toBe("ask");
    expect((await pipelines.anyServerRecheckPipeline.decide(request, new Date())).route).toBe("ask");
  });
});

describe("acp serve's rate limits for a caller whose server is only its word", () => {
  // `ping` is a limited read only on `lab`: naming `docs` must not call it without end
  const LIMITED = `version: "1"
default_action: deny
rules:
  - id: lab-reads
    match: { category: read }
    action: allow
    rate_limit: "2/hour"
  - id: pings
    match: { tool: ping }
    action: allow
classify:
  - tool: ping
    server: lab
    category: read
`;

  it("counts an allow rule's limit that only another reading meets, once per call", async () => {
    const policyFile = join(root.dir, "limited.yml");
    writeFileSync(policyFile, LIMITED);
    const policy = parsePolicy(LIMITED, { file: policyFile });
    if (!policy.ok) throw new Error("fixture does not validate");
    const pipelines = createServePipelines(
      { policy: policy.value, policyFile },
      { log: () => undefined, audit: () => undefined },
    );
    const anyServer = pipelines.anyServerPipeline(createMemoryRateLimiter());
    const routes: string[] = [];
    for (const server of ["lab", "docs", "docs"]) {
      routes.push((await anyServer.decide({ tool: "ping", server, arguments: {} }, new Date())).route);
    }
    expect(routes).toEqual(["accept", "accept", "refuse"]);
  });
});
