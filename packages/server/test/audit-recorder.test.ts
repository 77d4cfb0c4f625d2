/** The service's audit sink: it hands the log `auditEventInput`'s event (the one `acp proxy` makes too). */
import { createAuditSink } from "@acp/server";
import { auditEventInput, sealAuditInput, type AuditEventInput } from "@acp/core";
import { describe, expect, it } from "vitest";
import fc from "fast-check";

/** What the sink hands its appender for one record call: the input, or that it refused. */
function recorded(eventType: string, fields: Record<string, unknown>): AuditEventInput | { refused: true } {
  let got: AuditEventInput | undefined;
  const sink = createAuditSink({
    append(input) {
      got = input;
      return Promise.resolve();
    },
  });
  Promise.resolve(sink.record(eventType, fields)).catch(() => undefined);
  return got ?? { refused: true };
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

const PLACEMENT = { id: "evt_1", timestamp: "2026-11-27T00:00:00.000Z", previousEventHash: null };

describe("the service's audit sink", () => {
  it("hands the log auditEventInput's event, which the chain can always seal, for any fields", () => {
    fc.assert(
      fc.property(fc.constantFrom("policy_evaluated", "consent_requested", "not_an_event"), fields, (type, f) => {
        const got = recorded(type, f);
        if (type === "not_an_event") {
          expect(got).toStrictEqual({ refused: true });
          return;
        }
        expect(got).toStrictEqual(auditEventInput(type, f));
        expect(() => sealAuditInput(got as AuditEventInput, PLACEMENT)).not.toThrow();
      }),
      { numRuns: 3000 },
    );
  });

  it("takes a decision's flat fields as they are, and copies metadata that is not plain", () => {
    const reasons = ["policy:public_read"];
    const flat = recorded("policy_evaluated", { tool: "t", reasons }) as AuditEventInput;
    expect(flat.metadata).toEqual({ reasons });
    expect((flat.metadata as { reasons: unknown }).reasons).toBe(reasons);
    const nested = { deep: { lone: "\ud800" } };
    const copied = recorded("policy_evaluated", { tool: "t\udc00", nested }) as AuditEventInput;
    expect(copied.tool).toBe("t\ufffd");
    expect(copied.metadata).toEqual({ nested: { deep: { lone: "\ufffd" } } });
  });

  it("records a `__proto__` key a caller sent as data (the recorder it replaced lost it)", () => {
    const fields = JSON.parse('{"tool":"t","arguments":{"__proto__":{"x":1},"lone":"\\ud800"}}') as Record<
      string,
      unknown
    >;
    const got = recorded("policy_evaluated", fields) as AuditEventInput;
    const args = (got.metadata as { arguments: object }).arguments;
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    expect(Object.keys(args)).toEqual(["__proto__", "lone"]);
    expect(JSON.stringify(args)).toBe('{"__proto__":{"x":1},"lone":"\ufffd"}');
  });
});
