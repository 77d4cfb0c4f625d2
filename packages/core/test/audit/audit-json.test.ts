import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { canonicalJson } from "../../src/canonical-json/index.js";
import { fastCanonicalJson } from "../../src/audit/audit-json.js";
import {
  AUDIT_EVENT_TYPES,
  createAuditEventBody,
  sealAuditEvent,
  sealAuditInput,
  sealAuditLine,
  serializeAuditEvent,
  type AuditMetadata,
} from "../../src/audit/index.js";

function outcome(f: () => string): { ok: true; text: string } | { ok: false } {
  try {
    return { ok: true, text: f() };
  } catch {
    return { ok: false };
  }
}

const weirdString = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), fc.string());
const weirdValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    weirdString,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(weirdString, tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("the audit writer's fast canonical JSON", () => {
  it("equals canonicalJson on any value, refusing exactly what it refuses", () => {
    fc.assert(
      fc.property(weirdValue, (value) => {
        expect(outcome(() => fastCanonicalJson(value))).toEqual(outcome(() => canonicalJson(value)));
      }),
      { numRuns: 2000 },
    );
  });

  it("seals a line equal to the canonical JSON of the sealed event, for any fields and metadata", () => {
    fc.assert(
      fc.property(
        weirdValue,
        fc.option(weirdString),
        fc.constantFrom(...AUDIT_EVENT_TYPES),
        fc.option(fc.double()),
        (meta, agent, type, time) => {
          const input = { event_type: type, agent, response_time_ms: time, metadata: { value: meta } as AuditMetadata };
          const placement = { id: "ae_p", timestamp: "2026-01-15T12:00:00Z", previousEventHash: null };
          const body = createAuditEventBody(input, placement);
          const fast = outcome(() => sealAuditLine(body).line);
          const plain = outcome(() => serializeAuditEvent(sealAuditEvent(body)));
          const oneStep = outcome(() => sealAuditInput(input, placement).line);
          expect(fast).toEqual(plain);
          expect(oneStep).toEqual(plain);
          if (oneStep.ok) expect(sealAuditInput(input, placement).event).toEqual(sealAuditEvent(body));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("refuses undefined, functions, class instances and absurd nesting", () => {
    expect(() => fastCanonicalJson({ a: undefined })).toThrow();
    expect(() => fastCanonicalJson(() => 1)).toThrow();
    expect(() => fastCanonicalJson(new Date(0))).toThrow();
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(() => fastCanonicalJson(deep)).toThrow(/deeper/);
  });
});
