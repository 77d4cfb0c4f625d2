import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  GRAPH_ISSUE_CODES,
  GRAPH_OUTCOMES,
  GRAPH_REASON_CODES,
  checkConsentGraph,
  createMemoryProposalLedger,
  lintConsentGraph,
  parseConsentGraph,
  type ConsentGraph,
  type GraphOutcomeKind,
  type GraphTier,
} from "../../src/index.js";
import { NOW, exampleGraph, reviewedAt } from "./example-graph.js";

const REASONS = new Set(GRAPH_REASON_CODES.map((c) => c.code));
const ISSUES = new Set(GRAPH_ISSUE_CODES.map((c) => c.code));
const rank = (o: GraphOutcomeKind): number => GRAPH_OUTCOMES.indexOf(o);

/** The most permissive outcome a declared tier allows (a deliberately naive reference). */
function loosestFor(tier: GraphTier | null): GraphOutcomeKind {
  if (tier === "autonomous") return "AUTONOMOUS";
  if (tier === "requires_approval") return "VISIBLE";
  return "BLOCKED";
}

function naiveTier(graph: ConsentGraph, domain: string, action: string): GraphTier | null {
  if (!Object.hasOwn(graph.domains, domain)) return null;
  const d = graph.domains[domain]!;
  if (d.blocked.includes(action)) return "blocked";
  if (d.requires_approval.includes(action)) return "requires_approval";
  return d.autonomous.includes(action) ? "autonomous" : null;
}

const name = fc.constantFrom("read", "send", "send_vip", "delete", "x", "constructor", "__proto__", "", "toString");
const domainName = fc.constantFrom("email", "imessage", "d", "constructor", "", "x");
const list = fc.uniqueArray(name, { maxLength: 4 });
const rawDomain = fc.record(
  {
    autonomous: list,
    requires_approval: list,
    blocked: list,
    trusted_channel_required: list,
    require_diff: fc.boolean(),
    cooling_period_hours: fc.nat(5),
  },
  { requiredKeys: [] },
);
const rawGraph = fc.record({
  domains: fc.dictionary(
    domainName.filter((d) => d !== "" && d !== "constructor"),
    rawDomain,
    { maxKeys: 3 },
  ),
  decay: fc.boolean(),
});
const confidence = fc.oneof(fc.double(), fc.constantFrom(0, 0.85, 1, undefined, Number.NaN, -1, 2));

describe("consent graph properties", () => {
  it("no input yields an outcome more permissive than the graph's tier", () => {
    fc.assert(
      fc.property(rawGraph, domainName, name, confidence, fc.boolean(), (raw, domain, action, conf, reviewed) => {
        const parsed = parseConsentGraph(
          JSON.stringify({
            ...raw.domains,
            ...(raw.decay ? { consent_decay: { enabled: true, review_interval_days: 1 } } : {}),
          }),
        );
        if (!parsed.ok) return;
        const graph = parsed.value;
        const context = { now: NOW, ...(reviewed ? { reviews: reviewedAt(graph, NOW) } : {}) };
        const target = { domain, action, ...(conf !== undefined ? { confidence: conf } : {}) };
        const outcome = checkConsentGraph(graph, target, context);
        const tier = naiveTier(graph, domain, action);
        const invalid =
          outcome.reasons[0]?.code === "invalid_confidence" || outcome.reasons[0]?.code === "invalid_input";
        if (!invalid) expect(outcome.tier).toBe(tier);
        expect(rank(outcome.outcome)).toBeGreaterThanOrEqual(rank(loosestFor(tier)));
        if (conf !== undefined && !(conf >= 0 && conf <= 1)) expect(outcome.outcome).toBe("BLOCKED");
        if (tier === "requires_approval") expect(outcome.outcome).not.toBe("AUTONOMOUS");
        for (const reason of outcome.reasons) expect(REASONS.has(reason.code)).toBe(true);
        if (graph.domains[domain]?.trusted_channel_required?.includes(action) === true)
          expect(outcome.outcome).toBe("BLOCKED");
      }),
      { numRuns: 500 },
    );
  });

  it("arbitrary domain and action strings against the example graph never loosen the tier", () => {
    const graph = exampleGraph();
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), domainName),
        fc.oneof(fc.string(), name),
        confidence,
        (domain, action, conf) => {
          const outcome = checkConsentGraph(
            graph,
            { domain, action, ...(conf !== undefined ? { confidence: conf } : {}) },
            { now: NOW },
          );
          expect(rank(outcome.outcome)).toBeGreaterThanOrEqual(rank(loosestFor(naiveTier(graph, domain, action))));
          expect(outcome.outcome).not.toBe("AUTONOMOUS");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("parse and lint never throw, whatever the text", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        (text) => {
          const result = parseConsentGraph(text);
          expect(typeof result.ok).toBe("boolean");
          for (const issue of [...(result.ok ? [] : result.issues), ...lintConsentGraph(text)]) {
            expect(ISSUES.has(issue.code)).toBe(true);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("no proposed_at lets a proposal past its cooling period before ACP has seen it for that long", () => {
    const graph = exampleGraph();
    const HOUR = 60 * 60 * 1000;
    const ledger = createMemoryProposalLedger();
    fc.assert(
      fc.property(
        fc.integer({ min: -10_000 * HOUR, max: 10_000 * HOUR }),
        fc.nat(3 * HOUR),
        fc.boolean(),
        (offset, later, withLedger) => {
          const proposed_at = new Date(NOW.getTime() + offset).toISOString();
          const target = {
            domain: "self_modification",
            action: "update_lessons_md",
            confidence: 1,
            proposal: { diff: "- a\n+ b", undo: "put a back", proposed_at },
          };
          const context = { now: NOW, reviews: reviewedAt(graph, NOW), ...(withLedger ? { proposals: ledger } : {}) };
          // ACP sees it now (a fresh ledger entry per proposal time would be the same: the key has no time)
          const first = checkConsentGraph(graph, target, context);
          expect(first.outcome === "FORCED" || first.outcome === "BLOCKED").toBe(true);
          const then = checkConsentGraph(graph, target, { ...context, now: new Date(NOW.getTime() + later) });
          const seen = withLedger ? NOW.getTime() : NOW.getTime() + later;
          if (then.outcome === "VISIBLE") expect(NOW.getTime() + later - seen).toBeGreaterThanOrEqual(2 * HOUR);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("parse agrees with JSON.parse on what is JSON", () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        let json = true;
        try {
          JSON.parse(text);
        } catch {
          json = false;
        }
        const result = parseConsentGraph(text);
        if (!json) expect(result.ok).toBe(false);
        if (!result.ok && result.issues[0]?.code === "json_syntax") expect(json).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});
