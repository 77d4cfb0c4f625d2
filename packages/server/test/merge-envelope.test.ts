import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ROUTES,
  checkToolPrecheck,
  strictestRoute,
  type ContractEnvelope,
  type Decision,
  type Reason,
  type Route,
} from "@acp/core";
import { CONTRACT_ENVELOPE_FIELDS, mergeDecision } from "../src/service/merge-envelope.js";

/** The merge as a spread of the envelope (what mergeDecision did before it listed the fields). */
function reference(envelope: ContractEnvelope, decision: Decision, decisionId: string): unknown {
  const architecture = envelope.architecture_decision;
  const route = strictestRoute(architecture.route, decision.route);
  const extra = decision.reasons
    .filter((r) => r.source !== "contract")
    .map((r) => ({ code: r.code, message: r.message }));
  const blockers = [...envelope.hard_blockers];
  if (decision.route === "refuse" && architecture.route !== "refuse" && !blockers.includes("policy_refused")) {
    blockers.push("policy_refused");
  }
  const pass = route === "accept" && blockers.length === 0 && envelope.validation_errors.length === 0;
  return {
    ...envelope,
    gate_decision: pass ? "pass" : "fail",
    recommended_action: pass ? "accept" : strictestRoute(route, "ask"),
    hard_blockers: blockers,
    architecture_decision: { ...architecture, route, reasons: [...architecture.reasons, ...extra] },
    aix: { hard_blockers: [...blockers] },
    decision: { decision_id: decisionId, route: decision.route, rule: decision.rule, reasons: decision.reasons },
  };
}

const EVENTS = [
  {
    tool_name: "search_docs",
    tool_category: "public_read",
    authorization_state: "none",
    evidence_refs: [],
    risk_domain: "research",
    proposed_arguments: { query: "Agent Action Contract v1" },
    recommended_route: "accept",
  },
  {
    tool_name: "send_email",
    tool_category: "write",
    authorization_state: "user_claimed",
    evidence_refs: ["draft_id:123"],
    risk_domain: "customer_support",
    proposed_arguments: { to: "customer@example.com" },
    recommended_route: "accept",
  },
  { tool_name: "x" },
  "not an event",
];

const reason: fc.Arbitrary<Reason> = fc.record({
  source: fc.constantFrom<Reason["source"]>("policy", "graph", "contract", "session", "pipeline"),
  code: fc.string({ maxLength: 8 }),
  message: fc.string({ maxLength: 12 }),
});

const decision: fc.Arbitrary<Decision> = fc.record({
  route: fc.constantFrom<Route>(...ROUTES),
  action: fc.constantFrom<Decision["action"]>("allow", "ask", "deny"),
  rule: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
  category: fc.constant<Decision["category"]>("read"),
  risk_level: fc.constant<Decision["risk_level"]>("low"),
  reasons: fc.array(reason, { maxLength: 4 }),
  verdicts: fc.constant([]),
});

describe("mergeDecision", () => {
  it("lists every field of the contract envelope, in the envelope's order", () => {
    for (const event of EVENTS) expect(Object.keys(checkToolPrecheck(event))).toEqual(CONTRACT_ENVELOPE_FIELDS);
  });

  it("gives what a spread of the envelope gives, key order included (property)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EVENTS), decision, fc.string({ maxLength: 10 }), (event, d, id) => {
        const envelope = checkToolPrecheck(event);
        const merged = mergeDecision(envelope, d, id);
        const expected = reference(envelope, d, id);
        expect(merged).toStrictEqual(expected);
        expect(JSON.stringify(merged)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 500 },
    );
  });
});
