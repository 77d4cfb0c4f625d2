import { describe, expect, it } from "vitest";
import {
  hashConsentGraph,
  hashGraphDomain,
  hashGraphMapping,
  hashVipContacts,
  parseGraphReviewRecord,
  recordGraphReview,
} from "../../src/index.js";
import { NOW, exampleGraph } from "./example-graph.js";

const graph = exampleGraph();

describe("review record", () => {
  it("records every domain with the time and the content hashes", () => {
    const result = recordGraphReview(undefined, graph, [], NOW);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.value.domains)).toEqual(Object.keys(graph.domains));
    expect(result.value.domains["email"]).toEqual({
      reviewed_at: "2026-01-15T12:00:00.000Z",
      domain_hash: hashGraphDomain(graph.domains["email"]!),
      graph_hash: hashConsentGraph(graph),
      vip_contacts_hash: hashVipContacts(graph.vip_contacts),
      review_interval_days: 30,
      mapping_hash: hashGraphMapping(undefined),
    });
    expect(hashConsentGraph(graph)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("records named domains only and keeps earlier reviews", () => {
    const first = recordGraphReview(undefined, graph, ["email"], new Date("2026-01-01T00:00:00Z"));
    const second = first.ok ? recordGraphReview(first.value, graph, ["cron"], NOW) : first;
    expect(second.ok && Object.keys(second.value.domains).sort()).toEqual(["cron", "email"]);
    expect(second.ok && second.value.domains["email"]?.reviewed_at).toBe("2026-01-01T00:00:00.000Z");
  });

  it("refuses an unknown domain with a suggestion and records nothing", () => {
    const result = recordGraphReview(undefined, graph, ["emial"], NOW);
    expect(result.ok ? [] : result.issues).toEqual([
      expect.objectContaining({ code: "unknown_domain", help: "did you mean `email`" }),
    ]);
  });

  it("round-trips through JSON and rejects a malformed record", () => {
    const result = recordGraphReview(undefined, graph, [], NOW);
    const parsed = result.ok ? parseGraphReviewRecord(JSON.stringify(result.value)) : result;
    expect(parsed.ok && parsed.value).toEqual(result.ok && result.value);
    for (const bad of [
      "{",
      "[]",
      '{"version": 2, "domains": {}}',
      '{"version": 1, "domains": {"email": {"reviewed_at": "x"}}}',
      '{"version": 1}',
      '{"version": 1, "domains": {"email": {"reviewed_at": "2026-01-15T12:00:00Z", "domain_hash": "sha256:' +
        "0".repeat(64) +
        '", "graph_hash": "sha256:' +
        "0".repeat(64) +
        '", "vip_contacts_hash": "md5:x"}}}',
    ]) {
      expect(parseGraphReviewRecord(bad).ok).toBe(false);
    }
  });

  it("the hash ignores key order and counts a missing list as empty", () => {
    const a = recordGraphReview(undefined, graph, ["cron"], NOW);
    expect(a.ok).toBe(true);
    expect(
      hashGraphDomain({
        blocked: [],
        requires_approval: ["create", "delete"],
        autonomous: ["list", "run_existing", "update_schedule"],
        trust_level: "high",
      }),
    ).toBe(hashGraphDomain(graph.domains["cron"]!));
  });

  it("reads a record written before the VIP contacts' hash was recorded (such a review then counts for nothing)", () => {
    const text = JSON.stringify({
      version: 1,
      domains: {
        email: {
          reviewed_at: "2026-01-15T12:00:00Z",
          domain_hash: `sha256:${"0".repeat(64)}`,
          graph_hash: `sha256:${"1".repeat(64)}`,
        },
      },
    });
    const parsed = parseGraphReviewRecord(text);
    expect(parsed.ok && parsed.value.domains["email"]?.vip_contacts_hash).toBeUndefined();
  });

  it("the VIP contacts' hash is of the normalised values: order, names and spelling of one address do not change it", () => {
    expect(hashVipContacts({ a: "+1 (555) 010-0001", b: "Kate <KATE@example.com>" })).toBe(
      hashVipContacts({ kate: "kate@example.com", boss: "+15550100001" }),
    );
    expect(hashVipContacts({ a: "kate@example.com" })).not.toBe(hashVipContacts({ a: "\u212Aate@example.com" }));
    expect(hashVipContacts({ a: "kate@example.com" })).not.toBe(hashVipContacts({ a: "kate@example.com", b: "x@y" }));
    expect(hashVipContacts({})).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("records the settings a review was made under, and reads them back", () => {
    const mapping = [{ tool: "send_email", domain: "email", action: "send" }];
    const result = recordGraphReview(undefined, graph, ["email"], NOW, { mapping });
    const email = result.ok ? result.value.domains["email"] : undefined;
    expect(email?.mapping_hash).toBe(hashGraphMapping(mapping));
    expect(email?.mapping_hash).not.toBe(hashGraphMapping([]));
    expect(hashGraphMapping([])).toBe(hashGraphMapping(undefined));
    const parsed = parseGraphReviewRecord(JSON.stringify(result.ok ? result.value : null));
    expect(parsed.ok && parsed.value.domains["email"]).toEqual(email);
    const bad = JSON.stringify({
      version: 1,
      domains: { email: { ...email, review_interval_days: "30" } },
    });
    expect(parseGraphReviewRecord(bad).ok).toBe(false);
    const badHash = JSON.stringify({ version: 1, domains: { email: { ...email, mapping_hash: "md5:x" } } });
    expect(parseGraphReviewRecord(badHash).ok).toBe(false);
  });
});
