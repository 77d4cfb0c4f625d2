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

  it("a change to the VIP contacts expires every review: who counts as a VIP is part of what was reviewed", () => {
    const withVips = (vip_contacts: Record<string, string>) =>
      graphOf({ ...JSON.parse(JSON.stringify(graph.domains)), consent_decay: graph.consent_decay, vip_contacts });
    const reviewed = withVips({ boss: "+1 (555) 010-0001", kate: "Kate <kate@example.com>" });
    const record = reviewedAt(reviewed, NOW);
    const decayed = (g: typeof graph) => readEmail(record, NOW, g).effective_tier === "requires_approval";
    expect(decayed(reviewed)).toBe(false);
    // a contact added, a value changed, a look-alike swapped in (the Kelvin sign is not `k`): expired
    expect(decayed(withVips({ boss: "+1 (555) 010-0001", kate: "kate@example.com", eve: "eve@evil.test" }))).toBe(true);
    expect(decayed(withVips({ boss: "+1 (555) 010-0002", kate: "kate@example.com" }))).toBe(true);
    expect(decayed(withVips({ boss: "+1 (555) 010-0001", kate: "\u212Aate@example.com" }))).toBe(true);
    expect(decayed(withVips({ boss: "+1 (555) 010-0001" }))).toBe(true);
    const message = readEmail(record, NOW, withVips({ boss: "+15550100009" })).reasons.find(
      (r) => r.code === "consent_decayed",
    )?.message;
    expect(message).toContain("the VIP contacts changed since its last review");
    // the same VIPs written otherwise (order, names, spacing, case of ASCII letters, display names): still current
    expect(decayed(withVips({ "kate-w": "KATE@example.com", chief: " +15550100001 " }))).toBe(false);
  });

  it("a review recorded without the VIP contacts' hash (before ACP recorded it) does not count", () => {
    const record = reviewedAt(graph, NOW);
    const old = Object.fromEntries(
      Object.entries(record.domains).map(([name, r]) => [
        name,
        { reviewed_at: r.reviewed_at, domain_hash: r.domain_hash, graph_hash: r.graph_hash },
      ]),
    );
    const outcome = readEmail({ version: 1, domains: old });
    expect(outcome.effective_tier).toBe("requires_approval");
    expect(outcome.reasons.find((r) => r.code === "consent_decayed")?.message).toContain("VIP contacts");
  });

  it("any change to a domain's content expires its review: case, order, a modifier, the trust level", () => {
    const base = { trust_level: "high", autonomous: ["read", "search"], requires_approval: ["send"], blocked: [] };
    const reviewed = graphOf({ email: base, consent_decay: graph.consent_decay });
    const record = reviewedAt(reviewed, NOW);
    const decayed = (email: Record<string, unknown>) =>
      readEmail(record, NOW, graphOf({ email, consent_decay: graph.consent_decay })).effective_tier ===
      "requires_approval";
    expect(decayed(base)).toBe(false);
    expect(decayed({ ...base, requires_approval: ["Send"] })).toBe(true);
    expect(decayed({ ...base, autonomous: ["search", "read"] })).toBe(true);
    expect(decayed({ ...base, trusted_channel_required: ["send"] })).toBe(true);
    expect(decayed({ ...base, cooling_period_hours: 0 })).toBe(true);
    expect(decayed({ ...base, trust_level: "low" })).toBe(true);
    // key order and a missing (empty) list are the same content
    const { blocked: _blocked, ...noBlocked } = base;
    void _blocked;
    expect(
      decayed({ blocked: [], requires_approval: ["send"], autonomous: ["read", "search"], trust_level: "high" }),
    ).toBe(false);
    expect(decayed(noBlocked)).toBe(false);
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

  it("lengthening review_interval_days expires a review made under the shorter interval", () => {
    const withInterval = (review_interval_days: number) =>
      graphOf({
        ...JSON.parse(JSON.stringify(graph.domains)),
        consent_decay: { enabled: true, review_interval_days, decay_action: "downgrade_to_requires_approval" },
      });
    const reviewedUnder30 = reviewedAt(withInterval(30), new Date(NOW.getTime() - 40 * DAY));
    // 40 days ago under a 30-day interval: decayed, and a 90-day interval set since does not revive it
    const outcome = readEmail(reviewedUnder30, NOW, withInterval(90));
    expect(outcome.effective_tier).toBe("requires_approval");
    expect(outcome.reasons.find((r) => r.code === "consent_decayed")?.message).toContain(
      "was made under a 30-day interval, and the interval is now 90 days",
    );
    // a fresh review under 30 days is not carried over to another interval either way
    expect(readEmail(reviewedAt(withInterval(30), NOW), NOW, withInterval(10)).effective_tier).toBe(
      "requires_approval",
    );
    expect(readEmail(reviewedAt(withInterval(90), NOW), NOW, withInterval(90)).outcome).toBe("AUTONOMOUS");
  });

  it("a change to the graph mapping expires every review: which calls reach a domain is part of what was reviewed", () => {
    const mapping = [{ tool: "read_mail", domain: "email", action: "read" }];
    const reviewed = recordGraphReview(undefined, graph, [], NOW, { mapping });
    if (!reviewed.ok) throw new Error("review failed");
    const read = (reviewedMapping?: typeof mapping) =>
      checkConsentGraph(
        graph,
        { domain: "email", action: "read", confidence: 0.9 },
        { now: NOW, reviews: reviewed.value, ...(reviewedMapping !== undefined ? { reviewedMapping } : {}) },
      );
    expect(read(mapping).outcome).toBe("AUTONOMOUS");
    const changed = read([{ tool: "*", domain: "email", action: "read" }]);
    expect(changed.effective_tier).toBe("requires_approval");
    expect(changed.reasons.find((r) => r.code === "consent_decayed")?.message).toContain("graph mapping");
    // the mapping removed is a change too
    expect(read().effective_tier).toBe("requires_approval");
  });

  it("a review recorded before the settings were recorded counts for nothing", () => {
    const record = reviewedAt(graph, NOW);
    const { reviewed_at, domain_hash, graph_hash, vip_contacts_hash } = record.domains["email"]!;
    const old = { reviewed_at, domain_hash, graph_hash, ...(vip_contacts_hash ? { vip_contacts_hash } : {}) };
    const noMapping = readEmail({ version: 1, domains: { email: { ...old, review_interval_days: 30 } } });
    expect(noMapping.reasons.find((r) => r.code === "consent_decayed")?.message).toContain(
      "did not record the graph mapping",
    );
    const noInterval = readEmail({ version: 1, domains: { email: old } });
    expect(noInterval.reasons.find((r) => r.code === "consent_decayed")?.message).toContain("no review interval");
  });
});
