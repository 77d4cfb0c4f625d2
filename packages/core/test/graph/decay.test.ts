import { describe, expect, it } from "vitest";
import { checkConsentGraph, recordGraphReview, type GraphReviewRecord } from "../../src/index.js";
import { NOW, exampleGraph, graphOf, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const DAY = 24 * 60 * 60 * 1000;

function readEmail(reviews: GraphReviewRecord | undefined, now = NOW, g = graph) {
  return checkConsentGraph(
    g,
    { domain: "email", action: "read", confidence: 0.9 },
    { now, ...(reviews ? { reviews } : {}) },
  );
}

describe("consent decay", () => {
  it("a graph never reviewed has decayed: autonomous behaves as requires approval", () => {
    const outcome = readEmail(undefined);
    expect(outcome).toMatchObject({ outcome: "VISIBLE", tier: "autonomous", effective_tier: "requires_approval" });
    expect(outcome.reasons.map((r) => r.code)).toContain("consent_decayed");
    const low = checkConsentGraph(graph, { domain: "email", action: "read", confidence: 0.1 }, { now: NOW });
    expect(low.outcome).toBe("FORCED");
  });

  it("a review within the interval keeps the autonomous tier", () => {
    expect(readEmail(reviewedAt(graph, new Date(NOW.getTime() - 29 * DAY))).outcome).toBe("AUTONOMOUS");
    expect(readEmail(reviewedAt(graph, new Date(NOW.getTime() - 30 * DAY))).outcome).toBe("AUTONOMOUS");
  });

  it("a review older than the interval has decayed", () => {
    const outcome = readEmail(reviewedAt(graph, new Date(NOW.getTime() - 30 * DAY - 1)));
    expect(outcome.effective_tier).toBe("requires_approval");
    expect(outcome.reasons.find((r) => r.code === "consent_decayed")?.message).toContain("more than 30 days ago");
  });

  it("a review of other domains does not count for this one", () => {
    const only = recordGraphReview(undefined, graph, ["imessage"], NOW);
    expect(only.ok && readEmail(only.value).effective_tier).toBe("requires_approval");
  });

  it("a review of different content does not count", () => {
    const changed = graphOf({
      ...JSON.parse(JSON.stringify(graph.domains)),
      consent_decay: graph.consent_decay,
      email: { autonomous: ["read", "send"], requires_approval: [], blocked: [] },
    });
    expect(readEmail(reviewedAt(graph, NOW), NOW, changed).reasons.map((r) => r.code)).toContain("consent_decayed");
  });

  it("a review dated in the future does not count", () => {
    expect(readEmail(reviewedAt(graph, new Date(NOW.getTime() + DAY))).effective_tier).toBe("requires_approval");
  });

  it("decay never loosens requires_approval or blocked", () => {
    const ctx = { now: NOW };
    expect(checkConsentGraph(graph, { domain: "email", action: "send", confidence: 0.1 }, ctx).outcome).toBe("FORCED");
    expect(checkConsentGraph(graph, { domain: "email", action: "delete_vip", confidence: 1 }, ctx).outcome).toBe(
      "BLOCKED",
    );
  });

  it("does nothing when disabled or absent", () => {
    const off = graphOf({
      email: { autonomous: ["read"], requires_approval: [], blocked: [] },
      consent_decay: { enabled: false, review_interval_days: 30 },
    });
    expect(readEmail(undefined, NOW, off).outcome).toBe("AUTONOMOUS");
    const none = graphOf({ email: { autonomous: ["read"], requires_approval: [], blocked: [] } });
    expect(readEmail(undefined, NOW, none).outcome).toBe("AUTONOMOUS");
  });

  it("the re-approve hint names the graph file it was given, quoted when it must be", () => {
    const hint = (graphFile?: string) =>
      checkConsentGraph(
        graph,
        { domain: "email", action: "read", confidence: 0.9 },
        { now: NOW, ...(graphFile !== undefined ? { graphFile } : {}) },
      ).reasons.find((r) => r.code === "consent_decayed")?.message;
    expect(hint()).toContain("(run `acp graph review email` to re-approve)");
    expect(hint("team/graph.json")).toContain("(run `acp graph review email --graph team/graph.json` to re-approve)");
    expect(hint("my graph's.json")).toContain(
      `(run \`acp graph review email --graph 'my graph'\\''s.json'\` to re-approve)`,
    );
  });
});
