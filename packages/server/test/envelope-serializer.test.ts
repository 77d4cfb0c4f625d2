import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  CONTRACT_AUTHORIZATION_STATES,
  CONTRACT_RISK_DOMAINS,
  CONTRACT_SCHEMA_VERSION,
  CONTRACT_TOOL_CATEGORIES,
  EVIDENCE_FRESHNESS_STATUSES,
  EVIDENCE_KINDS,
  EVIDENCE_REDACTION_STATUSES,
  EVIDENCE_TRUST_TIERS,
  ROUTES,
  checkToolPrecheck,
  type Decision,
  type Reason,
  type Route,
} from "@acp/core";
import { serializeAnswer } from "../src/http/routes/pre-tool-check.js";
import { mergeDecision } from "../src/service/merge-envelope.js";

// any text: quotes, backslashes, control characters, lone surrogates, long strings
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('a"b', "a\\b", "\n", "\u0000", "\ud800", "\udc00x", "é", "🙂", "x".repeat(50) + '"'),
);

const ref = fc.oneof(
  text.filter((s) => s.length > 0),
  fc.record(
    {
      source_id: text.filter((s) => s.length > 0),
      kind: fc.constantFrom(...EVIDENCE_KINDS),
      trust_tier: fc.constantFrom(...EVIDENCE_TRUST_TIERS),
      redaction_status: fc.constantFrom(...EVIDENCE_REDACTION_STATUSES),
      freshness: fc.record({ status: fc.constantFrom(...EVIDENCE_FRESHNESS_STATUSES) }),
    },
    { requiredKeys: ["source_id", "kind"] },
  ),
);

const event = fc.record(
  {
    schema_version: fc.constant(CONTRACT_SCHEMA_VERSION),
    request_id: text,
    agent_id: text,
    tool_name: text.filter((s) => s.length > 0),
    tool_category: fc.constantFrom(...CONTRACT_TOOL_CATEGORIES),
    authorization_state: fc.constantFrom(...CONTRACT_AUTHORIZATION_STATES),
    evidence_refs: fc.array(ref, { maxLength: 3 }),
    risk_domain: fc.constantFrom(...CONTRACT_RISK_DOMAINS),
    proposed_arguments: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    recommended_route: fc.constantFrom(...ROUTES),
  },
  {
    requiredKeys: [
      "tool_name",
      "tool_category",
      "authorization_state",
      "evidence_refs",
      "risk_domain",
      "proposed_arguments",
      "recommended_route",
    ],
  },
);

const reason: fc.Arbitrary<Reason> = fc.oneof(
  fc.record({
    source: fc.constantFrom<Reason["source"]>("policy", "graph", "contract", "session", "pipeline"),
    code: text,
    message: text,
  }),
  fc.record({
    source: fc.constantFrom<Reason["source"]>("policy", "graph", "session"),
    code: text,
    message: text,
    rule: text,
  }),
);

const decision: fc.Arbitrary<Decision> = fc.record({
  route: fc.constantFrom<Route>(...ROUTES),
  action: fc.constantFrom<Decision["action"]>("allow", "ask", "deny"),
  rule: fc.option(text, { nil: null }),
  category: fc.constant<Decision["category"]>("read"),
  risk_level: fc.constant<Decision["risk_level"]>("low"),
  reasons: fc.array(reason, { maxLength: 4 }),
  verdicts: fc.constant([]),
});

describe("the /pre-tool-check answer's serializer", () => {
  it("writes exactly what JSON.stringify writes for every merged envelope (property)", () => {
    let valid = 0;
    fc.assert(
      fc.property(event, decision, text, (e, d, id) => {
        const envelope = checkToolPrecheck(e);
        valid += envelope.validation_errors.length === 0 ? 1 : 0;
        const merged = mergeDecision(envelope, d, id);
        expect(serializeAnswer(merged)).toBe(JSON.stringify(merged));
        expect(serializeAnswer(envelope)).toBe(JSON.stringify(envelope));
      }),
      { numRuns: 2000 },
    );
    // many generated events are valid, so the audit record and evidence counts are exercised (an event
    // with a lone surrogate in any string is not: contract_not_canonical)
    expect(valid).toBeGreaterThan(500);
  });

  it("writes invalid events' envelopes (null audit fields, validation errors) as JSON.stringify does", () => {
    for (const input of [{}, { tool_name: 1 }, "x", null, { tool_name: "t", tool_category: "nope" }]) {
      const envelope = checkToolPrecheck(input);
      expect(envelope.validation_errors.length).toBeGreaterThan(0);
      expect(serializeAnswer(envelope)).toBe(JSON.stringify(envelope));
    }
  });
});
