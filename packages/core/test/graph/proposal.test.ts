import { describe, expect, it } from "vitest";
import { checkConsentGraph, isExplicitDiff, type GraphProposal } from "../../src/index.js";
import { NOW, exampleGraph, ledgerThatSaw, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const context = { now: NOW, reviews: reviewedAt(graph, NOW) };
const good: GraphProposal = {
  diff: "- old rule\n+ new rule",
  undo: "restore the old line",
  proposed_at: "2026-01-15T09:30:00Z",
};

/** Checks a proposal that ACP first saw at its own `proposed_at` (see proposal-ledger.test.ts for other times). */
function check(proposal: GraphProposal | undefined, confidence = 0.95) {
  const target = { domain: "self_modification", action: "update_lessons_md", ...(proposal ? { proposal } : {}) };
  return checkConsentGraph(graph, { ...target, confidence }, { ...context, proposals: ledgerThatSaw(target) });
}

describe("self-modification proposals", () => {
  it("a complete proposal past its cooling period follows the tier", () => {
    expect(check(good).outcome).toBe("VISIBLE");
    expect(check(good, 0.5).outcome).toBe("FORCED");
    expect(check(good).reasons.map((r) => r.code)).toContain("cooling_period_elapsed");
  });

  it("refuses a proposal without a diff, or with prose instead of a diff", () => {
    const { diff: _diff, ...noDiff } = good;
    void _diff;
    expect(check(noDiff).reasons[0]?.code).toBe("diff_required");
    expect(check({ ...good, diff: "make the agent friendlier" }).outcome).toBe("BLOCKED");
    expect(check(undefined).reasons[0]?.code).toBe("diff_required");
  });

  it("refuses a proposal without an undo path", () => {
    const outcome = check({ ...good, undo: "   " });
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons[0]?.code).toBe("undo_required");
  });

  it("defers a proposal inside its cooling period until it becomes eligible", () => {
    const outcome = check({ ...good, proposed_at: "2026-01-15T11:00:00Z" });
    expect(outcome).toMatchObject({ outcome: "FORCED", deferred_until: "2026-01-15T13:00:00.000Z" });
    expect(outcome.reasons[0]?.code).toBe("cooling_period");
  });

  it("becomes eligible exactly when the cooling period ends", () => {
    expect(check({ ...good, proposed_at: "2026-01-15T10:00:00Z" }).outcome).toBe("VISIBLE");
    expect(check({ ...good, proposed_at: "2026-01-15T10:00:00.001Z" }).outcome).toBe("FORCED");
  });

  it("refuses a proposal with no or an invalid proposal time", () => {
    expect(check({ ...good, proposed_at: "" }).reasons[0]?.code).toBe("proposed_at_required");
    expect(check({ ...good, proposed_at: "last tuesday" }).outcome).toBe("BLOCKED");
  });

  it("leaves domains without the constraints alone", () => {
    const outcome = checkConsentGraph(graph, { domain: "email", action: "send", confidence: 0.9 }, context);
    expect(outcome.outcome).toBe("VISIBLE");
  });

  it("recognises an explicit diff", () => {
    expect(isExplicitDiff("--- a\n+++ b\n@@\n-x\n+y")).toBe(true);
    expect(isExplicitDiff("just prose")).toBe(false);
    expect(isExplicitDiff("+")).toBe(false);
    expect(isExplicitDiff(undefined)).toBe(false);
  });
});
