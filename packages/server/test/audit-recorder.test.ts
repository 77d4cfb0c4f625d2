/** The service's audit sink: the events it hands the log, against the recorder it replaced (26 Nov 2026). */
import { createAuditSink } from "@acp/server";
import type { AuditEventInput } from "@acp/core";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createAuditSink as legacySink } from "./legacy/audit-recorder.js";

/** What a sink hands its appender for one record call: the input, or the error it refused with. */
function recorded(make: typeof createAuditSink, eventType: string, fields: Record<string, unknown>): unknown {
  let got: AuditEventInput | undefined;
  const sink = make({
    append(input) {
      got = input;
      return Promise.resolve();
    },
  });
  // a refused event is a rejected promise (the error is the same text either way)
  Promise.resolve(sink.record(eventType, fields)).catch(() => undefined);
  return got === undefined ? { refused: true } : got;
}

const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("\ud800", "a\udc00", "__proto__", "metadata", "tool", "é"),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyString,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(anyString, tie("value"), { maxKeys: 3 }),
  ),
})).value;
const fields = fc.oneof(
  // the decision service's policy_evaluated fields
  fc.record({
    request_id: anyString,
    agent: fc.option(anyString, { nil: null }),
    tool: fc.option(anyString, { nil: null }),
    category: anyString,
    risk_level: anyString,
    decision: fc.constantFrom("accept", "ask", "defer", "refuse"),
    policy_rule: fc.option(anyString, { nil: null }),
    front_end: fc.constantFrom("pre_tool_check", "mcp", "v1"),
    reasons: fc.array(anyString, { maxLength: 3 }),
  }),
  // anything: other keys, nested values, a metadata field, keys such as __proto__ (as JSON.parse makes them)
  fc.dictionary(anyString, json, { maxKeys: 6 }),
  fc
    .tuple(fc.dictionary(anyString, json, { maxKeys: 4 }), fc.dictionary(anyString, json, { maxKeys: 3 }))
    .map(([a, metadata]) => ({ ...a, metadata })),
  fc
    .jsonValue()
    .map((v) => JSON.parse(`{"__proto__":${JSON.stringify(v)},"tool":"t","extra":[${JSON.stringify(v)}]}`) as object),
) as fc.Arbitrary<Record<string, unknown>>;

describe("the service's audit sink", () => {
  it("hands the log the same event as the recorder it replaced, for any fields", () => {
    fc.assert(
      fc.property(fc.constantFrom("policy_evaluated", "consent_requested", "not_an_event"), fields, (type, f) => {
        const want = recorded(legacySink, type, f);
        const got = recorded(createAuditSink, type, f);
        expect(got).toStrictEqual(want);
        // the same keys in the same order (the canonical JSON sorts them, but the object is what is redacted)
        if (typeof want === "object" && want !== null && "metadata" in want) {
          const m = (got as AuditEventInput).metadata ?? {};
          expect(Object.keys(m)).toEqual(Object.keys((want as AuditEventInput).metadata ?? {}));
          expect(Object.getPrototypeOf(m)).toStrictEqual(Object.getPrototypeOf((want as AuditEventInput).metadata));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("takes a decision's flat fields as they are, and copies metadata that is not plain", () => {
    const reasons = ["policy:public_read"];
    const flat = recorded(createAuditSink, "policy_evaluated", { tool: "t", reasons }) as AuditEventInput;
    expect(flat.metadata).toEqual({ reasons });
    expect((flat.metadata as { reasons: unknown }).reasons).toBe(reasons);
    const nested = { deep: { lone: "\ud800" } };
    const copied = recorded(createAuditSink, "policy_evaluated", { tool: "t", nested }) as AuditEventInput;
    expect(copied.metadata).toEqual({ nested: { deep: { lone: "\ufffd" } } });
  });
});
