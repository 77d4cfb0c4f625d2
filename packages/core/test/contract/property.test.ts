import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  CONTRACT_AUTHORIZATION_STATES,
  CONTRACT_RISK_DOMAINS,
  CONTRACT_TOOL_CATEGORIES,
  EVIDENCE_FRESHNESS_STATUSES,
  EVIDENCE_KINDS,
  EVIDENCE_REDACTION_STATUSES,
  EVIDENCE_TRUST_TIERS,
  CONTRACT_HARD_BLOCKERS,
  CONTRACT_INFO_REASONS,
  CONTRACT_ISSUE_CODES,
  CONTRACT_REQUIRED_FIELDS,
  checkToolPrecheck,
  shouldExecuteTool,
  validateContractEvent,
  type ContractEnvelope,
  type ContractEvent,
} from "../../src/contract/index.js";
import { findJsonErrorOffset } from "../../src/contract/json-error-offset.js";
import { ROUTES, routeStrictness } from "../../src/route/index.js";

/** Deliberately naive: may this event execute, from the document's rules alone? */
function mayExecute(event: ContractEvent): boolean {
  if (event.recommended_route !== "accept") return false;
  const usable = event.evidence_refs.some(
    (r) => typeof r === "string" || (r.freshness?.status !== "stale" && r.trust_tier !== "unverified"),
  );
  const sensitive = event.evidence_refs.some((r) => typeof r !== "string" && r.redaction_status === "sensitive");
  switch (event.tool_category) {
    case "public_read":
      return !sensitive;
    case "private_read":
      return ["authenticated", "validated", "confirmed"].includes(event.authorization_state) && usable;
    case "write":
      return event.authorization_state === "confirmed" && usable;
    case "unknown":
      return false;
  }
}

const oneOf = <T extends string>(values: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...values);

const structuredRef = fc.record(
  {
    source_id: fc.string({ minLength: 1, maxLength: 8 }),
    kind: oneOf(EVIDENCE_KINDS),
    trust_tier: oneOf(EVIDENCE_TRUST_TIERS),
    redaction_status: oneOf(EVIDENCE_REDACTION_STATUSES),
    freshness: fc.record({ status: oneOf(EVIDENCE_FRESHNESS_STATUSES) }),
    provenance: fc.string({ maxLength: 8 }),
  },
  { requiredKeys: ["source_id", "kind"] },
);

const validEvent = fc.record({
  tool_name: fc.string({ minLength: 1, maxLength: 12 }),
  tool_category: oneOf(CONTRACT_TOOL_CATEGORIES),
  authorization_state: oneOf(CONTRACT_AUTHORIZATION_STATES),
  evidence_refs: fc.array(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), structuredRef), { maxLength: 4 }),
  risk_domain: oneOf(CONTRACT_RISK_DOMAINS),
  proposed_arguments: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  recommended_route: oneOf(ROUTES),
});

/** Valid events with one field knocked off, mistyped or replaced by an unknown word. */
const nearlyValid = fc
  .tuple(
    validEvent,
    fc.constantFrom(...CONTRACT_REQUIRED_FIELDS, "schema_version", "extra_field"),
    fc.jsonValue({ maxDepth: 1 }),
    fc.boolean(),
  )
  .map(([event, field, value, drop]) => {
    const copy: Record<string, unknown> = { ...event };
    if (drop) delete copy[field];
    else copy[field] = value;
    return copy;
  });

const REASON_CODES = new Set<string>([...CONTRACT_HARD_BLOCKERS, ...CONTRACT_INFO_REASONS]);

/** Every code in an envelope is one the docs list (errors-doc.test.ts checks the docs list them all). */
function expectKnownCodes(envelope: ContractEnvelope): void {
  for (const issue of envelope.validation_errors) expect(CONTRACT_ISSUE_CODES).toContain(issue.code);
  for (const blocker of envelope.hard_blockers) expect(CONTRACT_HARD_BLOCKERS).toContain(blocker);
  for (const reason of envelope.architecture_decision.reasons) expect(REASON_CODES.has(reason.code)).toBe(true);
}

describe("checkToolPrecheck properties", () => {
  it("never throws and never accepts an invalid event or one the document's rules would not execute", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.anything(), validEvent, nearlyValid), (input) => {
        const envelope = checkToolPrecheck(input);
        const valid = validateContractEvent(input);
        const executes = shouldExecuteTool(envelope);
        expectKnownCodes(envelope);
        if (!valid.ok) {
          expect(envelope.recommended_action).toBe("refuse");
          expect(executes).toBe(false);
          return;
        }
        expect(executes).toBe(mayExecute(valid.value));
        expect(envelope.recommended_action === "accept").toBe(executes);
      }),
      { numRuns: 2000 },
    );
  });

  it("is never looser than the runtime's route, and pass holds exactly when there is no blocker", () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const envelope = checkToolPrecheck(event);
        const route = envelope.architecture_decision.route;
        expect(routeStrictness(route)).toBeGreaterThanOrEqual(routeStrictness(event.recommended_route));
        expect(routeStrictness(route)).toBeGreaterThanOrEqual(
          routeStrictness(envelope.architecture_decision.inferred_route),
        );
        expect(envelope.gate_decision === "pass").toBe(envelope.hard_blockers.length === 0);
        expect(envelope.aix.hard_blockers).toEqual(envelope.hard_blockers);
      }),
      { numRuns: 1000 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), validEvent), (input) => {
        expect(checkToolPrecheck(input)).toEqual(checkToolPrecheck(input));
      }),
      { numRuns: 300 },
    );
  });
});

describe("findJsonErrorOffset", () => {
  it("finds no error in valid JSON and an error exactly where JSON.parse fails", () => {
    const text = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v, null, 1)),
      fc.string({ maxLength: 20 }),
      fc.jsonValue().chain((v) => {
        const s = JSON.stringify(v);
        return fc.nat({ max: s.length }).map((cut) => s.slice(0, cut) + s.slice(cut + 1));
      }),
    );
    fc.assert(
      fc.property(text, (s) => {
        let parses = true;
        try {
          JSON.parse(s);
        } catch {
          parses = false;
        }
        expect(findJsonErrorOffset(s) === -1).toBe(parses);
      }),
      { numRuns: 3000 },
    );
  });
});
