import { describe, expect, it } from "vitest";
import { checkConsentGraph, type GraphCheckTarget, type GraphContext } from "../../src/index.js";
import { NOW, exampleGraph, graphOf, reviewedAt } from "./example-graph.js";

const graph = exampleGraph();
const reviewed: GraphContext = { now: NOW, reviews: reviewedAt(graph, NOW) };

function check(target: GraphCheckTarget, context: GraphContext = reviewed) {
  return checkConsentGraph(graph, target, context);
}

describe("checkConsentGraph: the document's worked examples", () => {
  it("imessage send_vip 0.9 is VISIBLE: proceed and notify", () => {
    const outcome = check({ domain: "imessage", action: "send_vip", confidence: 0.9 });
    expect(outcome.outcome).toBe("VISIBLE");
    expect(outcome.tier).toBe("requires_approval");
    expect(outcome.reasons[0]?.code).toBe("visible_notify");
  });

  it("self_modification modify_soul_md 0.99 is BLOCKED", () => {
    const outcome = check({ domain: "self_modification", action: "modify_soul_md", confidence: 0.99 });
    expect(outcome).toMatchObject({ outcome: "BLOCKED", tier: "blocked" });
    expect(outcome.reasons[0]?.code).toBe("blocked_action");
  });
});

describe("checkConsentGraph: tiers", () => {
  it("an autonomous action of a reviewed domain is AUTONOMOUS", () => {
    expect(check({ domain: "email", action: "read" })).toMatchObject({ outcome: "AUTONOMOUS", tier: "autonomous" });
  });

  it("requires_approval is VISIBLE at the threshold and FORCED just below it", () => {
    expect(check({ domain: "email", action: "send", confidence: 0.85 }).outcome).toBe("VISIBLE");
    expect(check({ domain: "email", action: "send", confidence: 0.8499 }).outcome).toBe("FORCED");
  });

  it("requires_approval without a confidence is FORCED", () => {
    const outcome = check({ domain: "calendar", action: "create_event" });
    expect(outcome.outcome).toBe("FORCED");
    expect(outcome.reasons[0]?.code).toBe("approval_required");
  });

  it("the threshold is configurable", () => {
    expect(check({ domain: "email", action: "send", confidence: 0.9 }, { ...reviewed, threshold: 0.95 }).outcome).toBe(
      "FORCED",
    );
    expect(check({ domain: "email", action: "send", confidence: 0.6 }, { ...reviewed, threshold: 0.5 }).outcome).toBe(
      "VISIBLE",
    );
  });

  it("a blocked action is BLOCKED whatever the confidence", () => {
    expect(check({ domain: "home_automation", action: "unlock_doors", confidence: 1 }).outcome).toBe("BLOCKED");
  });

  it("an action in several tiers takes the strictest", () => {
    const g = graphOf({ d: { autonomous: ["x", "y"], requires_approval: ["y"], blocked: ["x"] } });
    const ctx = { now: NOW };
    expect(checkConsentGraph(g, { domain: "d", action: "x" }, ctx).outcome).toBe("BLOCKED");
    expect(checkConsentGraph(g, { domain: "d", action: "y", confidence: 0.1 }, ctx).outcome).toBe("FORCED");
  });

  it("reports the domain's trust level", () => {
    expect(check({ domain: "imessage", action: "read" }).trust_level).toBe("low");
  });
});

describe("checkConsentGraph: fail closed", () => {
  it("an action in no list is BLOCKED as unclassified, with a suggestion", () => {
    const outcome = check({ domain: "email", action: "sned", confidence: 1 });
    expect(outcome).toMatchObject({ outcome: "BLOCKED", tier: null });
    expect(outcome.reasons[0]?.code).toBe("unclassified_action");
    expect(outcome.reasons[0]?.message).toContain("did you mean `send`");
  });

  it("an unknown domain is BLOCKED as unclassified", () => {
    const outcome = check({ domain: "bank", action: "read", confidence: 1 });
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons[0]?.code).toBe("unclassified_domain");
  });

  it("an inherited property name is not a domain or an action", () => {
    expect(check({ domain: "constructor", action: "read" }).outcome).toBe("BLOCKED");
    expect(check({ domain: "email", action: "toString" }).outcome).toBe("BLOCKED");
  });

  it.each([Number.NaN, -0.1, 1.01, Infinity, "0.9" as unknown as number])(
    "confidence %s is BLOCKED as invalid",
    (confidence) => {
      const outcome = check({ domain: "email", action: "read", confidence });
      expect(outcome.outcome).toBe("BLOCKED");
      expect(outcome.reasons[0]?.code).toBe("invalid_confidence");
    },
  );

  it("a malformed target, threshold, clock or graph is BLOCKED", () => {
    const cases: [unknown, unknown, unknown][] = [
      [graph, { domain: "", action: "read" }, reviewed],
      [graph, { domain: "email" }, reviewed],
      [graph, null, reviewed],
      [graph, { domain: "email", action: "send", confidence: 1 }, { ...reviewed, threshold: 2 }],
      [graph, { domain: "email", action: "read" }, { now: new Date(Number.NaN) }],
      [graph, { domain: "email", action: "read" }, undefined],
      [{}, { domain: "email", action: "read" }, reviewed],
      [null, { domain: "email", action: "read" }, reviewed],
    ];
    for (const [g, t, c] of cases) {
      const outcome = checkConsentGraph(g as never, t as never, c as never);
      expect(outcome.outcome).toBe("BLOCKED");
      expect(outcome.reasons[0]?.code).toBe("invalid_input");
    }
  });

  it("a malformed clock skew, review record or key set is BLOCKED, not read as a wider window", () => {
    // a review dated a day ahead keeps no autonomy under any skew that is a number of seconds ≥ 0
    const ahead = reviewedAt(graph, new Date(NOW.getTime() + 24 * 60 * 60 * 1000));
    const target = { domain: "email", action: "read", confidence: 1 };
    const contexts: unknown[] = [
      { now: NOW, reviews: ahead, clockSkewSeconds: Number.NaN },
      { now: NOW, reviews: ahead, clockSkewSeconds: Infinity },
      { now: NOW, reviews: ahead, clockSkewSeconds: -1 },
      { now: NOW, reviews: ahead, clockSkewSeconds: "300" },
      { now: NOW, reviews: "reviewed" },
      { now: NOW, reviews: { version: 1, domains: null } },
      { now: NOW, reviews: reviewedAt(graph, NOW), trustedChannelKeys: "s3cret" },
      { now: NOW, reviews: reviewedAt(graph, NOW), trustedChannelKeys: ["s3cret"] },
    ];
    for (const context of contexts) {
      const outcome = checkConsentGraph(graph, target, context as never);
      expect(outcome.outcome).toBe("BLOCKED");
      expect(outcome.reasons[0]?.code).toBe("invalid_input");
    }
    // the well-formed ones still decide
    expect(checkConsentGraph(graph, target, { ...reviewed, clockSkewSeconds: 0 }).outcome).toBe("AUTONOMOUS");
    expect(checkConsentGraph(graph, target, { ...reviewed, trustedChannelKeys: {} }).outcome).toBe("AUTONOMOUS");
  });

  it("an error inside the check is BLOCKED, never allowed", () => {
    const hostile = {
      domains: {
        email: {
          get blocked(): string[] {
            throw new Error("boom");
          },
        },
      },
      vip_contacts: {},
    };
    const outcome = checkConsentGraph(hostile as never, { domain: "email", action: "read" }, reviewed);
    expect(outcome.outcome).toBe("BLOCKED");
    expect(outcome.reasons[0]?.code).toBe("graph_error");
  });
});
