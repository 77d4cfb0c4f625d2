import { describe, expect, it } from "vitest";
import {
  evaluateConsentGraph,
  createTrustedChannelAttestation,
  validateGraphMapping,
  createPipeline,
  graphSource,
  retryAtOf,
  type ActionRequest,
} from "../../src/index.js";
import { NOW, exampleGraph, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const context = { now: NOW, reviews: reviewedAt(graph, NOW), trustedChannelKeys: { k: "secret-key" } };
const mappingResult = validateGraphMapping([
  {
    tool: "send_imessage",
    domain: "imessage",
    action: "send_unknown",
    refine: [{ recipient_vip: ["to"], action: "send_vip" }],
  },
]);
const mapping = mappingResult.ok ? mappingResult.value : [];

function explicit(domain: string, action: string, confidence?: number): ActionRequest {
  return {
    tool: "precheck",
    arguments: {},
    graph: { domain, action, ...(confidence !== undefined ? { confidence } : {}) },
  };
}

describe("evaluateConsentGraph", () => {
  it("maps outcomes to routes with reasons from the graph", () => {
    expect(evaluateConsentGraph(graph, explicit("email", "read"), context)).toMatchObject({
      source: "graph",
      route: "accept",
      rule: "email.read",
    });
    const visible = evaluateConsentGraph(graph, explicit("imessage", "send_vip", 0.9), context);
    expect(visible?.route).toBe("accept");
    expect(visible?.reasons[0]).toMatchObject({ source: "graph", code: "visible_notify" });
    expect(evaluateConsentGraph(graph, explicit("imessage", "send_vip", 0.5), context)?.route).toBe("ask");
    expect(evaluateConsentGraph(graph, explicit("home_automation", "unlock_doors", 1), context)?.route).toBe("refuse");
    expect(evaluateConsentGraph(graph, explicit("nowhere", "x", 1), context)?.route).toBe("refuse");
  });

  it("refuses a proposal in its cooling period until it is eligible: no approval makes it take effect sooner", async () => {
    const request: ActionRequest = {
      tool: "precheck",
      arguments: {},
      graph: {
        domain: "self_modification",
        action: "update_lessons_md",
        confidence: 1,
        proposal: { diff: "-w\n+x", undo: "y", proposed_at: "2026-01-15T11:59:00Z" },
      },
    };
    const verdict = evaluateConsentGraph(graph, request, context);
    expect(verdict?.route).toBe("refuse");
    expect(verdict?.reasons[0]?.code).toBe("cooling_period");
    // the refusal lifts when the period ends (acp serve's Retry-After)
    const eligible = Date.parse("2026-01-15T14:00:00Z");
    expect(verdict && retryAtOf({ route: "refuse", verdicts: [verdict] })).toBe(eligible);
    // through the pipeline: refused (not put before a person), and eligible afterwards
    const pipeline = createPipeline([graphSource({ graph, context: { reviews: context.reviews } })]);
    const first = await pipeline.decide(request, NOW);
    expect(first.route).toBe("refuse");
    expect(retryAtOf(first)).toBe(eligible);
    expect((await pipeline.decide(request, new Date(eligible - 1))).route).toBe("refuse");
    expect((await pipeline.decide(request, new Date(eligible))).route).toBe("accept");
    expect(
      (await pipeline.decide({ ...request, graph: { ...request.graph!, confidence: 0.1 } }, new Date(eligible))).route,
    ).toBe("ask");
  });

  it("says nothing about a call the mapping does not cover", () => {
    expect(evaluateConsentGraph(graph, { tool: "ls", arguments: {} }, context, mapping)).toBeNull();
    expect(evaluateConsentGraph(graph, { tool: "ls", arguments: {} }, context)).toBeNull();
  });

  it("judges mapped calls with the VIP refinement", () => {
    const vip = { tool: "send_imessage", arguments: { to: "+1XXXXXXXXXX" } };
    expect(evaluateConsentGraph(graph, vip, context, mapping)?.route).toBe("ask");
    const stranger = { tool: "send_imessage", arguments: { to: "+19999999999" } };
    expect(evaluateConsentGraph(graph, stranger, context, mapping)?.route).toBe("refuse");
  });

  it("an explicit target cannot escape a stricter mapping of the same call", () => {
    const sneaky: ActionRequest = {
      tool: "send_imessage",
      arguments: { to: "+19999999999" },
      graph: { domain: "email", action: "read" },
    };
    const verdict = evaluateConsentGraph(graph, sneaky, context, mapping);
    expect(verdict?.route).toBe("refuse");
    expect(verdict?.reasons.map((r) => r.code)).toEqual(["blocked_action", "autonomous_action"]);
  });

  it("binds the tool call into the trusted-channel attestation", () => {
    const args = { text: "hi" };
    const base = { domain: "self_modification", action: "prune_stale_memory" };
    const attestation = createTrustedChannelAttestation({
      ...base,
      call: { tool: "prune", arguments: args },
      keyId: "k",
      secret: "secret-key",
      timestamp: NOW,
    });
    const ok = evaluateConsentGraph(
      graph,
      { tool: "prune", arguments: args, graph: { ...base, attestation } },
      context,
    );
    expect(ok?.route).toBe("accept");
    const other = evaluateConsentGraph(
      graph,
      { tool: "prune", arguments: { text: "rm -rf" }, graph: { ...base, attestation } },
      context,
    );
    expect(other?.route).toBe("refuse");
  });

  it("an error is a refusal, never an allow", () => {
    const hostile = {
      tool: "x",
      get arguments(): never {
        throw new Error("boom");
      },
      graph: { domain: "email", action: "read" },
    };
    expect(evaluateConsentGraph(graph, hostile as never, context)).toMatchObject({ route: "refuse" });
    const badMapping = [{ tool: "[", domain: "email", action: "read" }];
    expect(evaluateConsentGraph(graph, { tool: "x", arguments: {} }, context, badMapping)?.route).toBe("refuse");
  });
});
