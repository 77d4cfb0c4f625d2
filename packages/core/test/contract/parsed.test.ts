import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  checkParsedToolPrecheck,
  checkToolPrecheck,
  validateContractEvent,
  validateParsedContractEvent,
} from "../../src/contract/index.js";
import { DOC, GOOD_REF } from "./fixtures.js";

const EVENTS = Object.values(DOC);
const FIELDS = [...Object.keys(DOC.publicRead), "schema_version", "request_id", "agent_id", "extra_field"];

/** JSON text of events: valid, nearly valid (a field dropped or replaced), or any JSON at all. */
const eventText = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .tuple(fc.constantFrom(...EVENTS), fc.constantFrom(...FIELDS), fc.jsonValue({ maxDepth: 2 }), fc.boolean())
    .map(([event, field, value, drop]) => {
      const copy: Record<string, unknown> = { ...event };
      if (drop) delete copy[field];
      else copy[field] = value;
      return JSON.stringify(copy);
    }),
  fc
    .tuple(
      fc.constantFrom(...EVENTS),
      fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.constant(GOOD_REF), fc.jsonValue({ maxDepth: 1 })), {
        maxLength: 3,
      }),
    )
    .map(([event, refs]) => JSON.stringify({ ...event, evidence_refs: refs })),
  // numbers whose JSON form differs from what JSON.parse gives (-0 → 0, 1e999 → Infinity → null)
  fc
    .tuple(fc.constantFrom(...EVENTS), fc.constantFrom("-0", "1e999", "-1e999", "0", "-0.0", "1e-999"))
    .map(([event, number]) =>
      JSON.stringify({ ...event, proposed_arguments: { n: 1 } }).replace('"n":1', `"n":${number}`),
    ),
  fc
    .constantFrom("-0", "1e999")
    .map((n) => JSON.stringify(DOC.publicRead).replace('"tool_name"', `"x":${n},"tool_name"`)),
);

/** Two separate parses of the same text, so neither path can see the other's objects. */
function twice(text: string): [unknown, unknown] {
  return [JSON.parse(text) as unknown, JSON.parse(text) as unknown];
}

describe("validating a parsed event in place", () => {
  it("gives the same result and envelope as the JSON snapshot for any parsed JSON text", () => {
    fc.assert(
      fc.property(eventText, (text) => {
        const [a, b] = twice(text);
        expect(validateParsedContractEvent(a)).toStrictEqual(validateContractEvent(b));
        const [c, d] = twice(text);
        expect(checkParsedToolPrecheck(c)).toStrictEqual(checkToolPrecheck(d));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps a plain parsed event as it is and takes the snapshot for -0 and overflowing numbers", () => {
    const plain = JSON.parse(JSON.stringify(DOC.publicRead)) as unknown;
    const kept = validateParsedContractEvent(plain);
    expect(kept.ok && kept.value).toBe(plain);
    for (const number of ["-0", "1e999"]) {
      const text = JSON.stringify({ ...DOC.publicRead, proposed_arguments: { n: 1 } }).replace(
        '"n":1',
        `"n":${number}`,
      );
      const parsed = JSON.parse(text) as unknown;
      const result = validateParsedContractEvent(parsed);
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.value).not.toBe(parsed);
      expect(Object.is(result.value.proposed_arguments["n"], number === "-0" ? 0 : null)).toBe(true);
      expect(checkParsedToolPrecheck(JSON.parse(text))).toStrictEqual(checkToolPrecheck(JSON.parse(text)));
    }
  });

  it("takes the snapshot for deep nesting: the same verdict at the depth bound and beyond JSON.stringify's", () => {
    for (const depth of [62, 63, 64, 65, 200, 200_000]) {
      const nested = `${"[".repeat(depth)}${"]".repeat(depth)}`;
      const text = JSON.stringify({ ...DOC.publicRead, proposed_arguments: { n: 0 } }).replace(
        '"n":0',
        `"n":${nested}`,
      );
      const [a, b] = twice(text);
      expect(checkParsedToolPrecheck(a)).toStrictEqual(checkToolPrecheck(b));
    }
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const text = JSON.stringify({ ...DOC.publicRead, proposed_arguments: { n: 0 } }).replace('"n":0', `"n":${deep}`);
    const result = validateParsedContractEvent(JSON.parse(text));
    expect(!result.ok && result.issues[0]?.code).toBe("contract_not_json");
  });

  it("treats values that are not parsed JSON as the snapshot does", () => {
    const values: unknown[] = [
      undefined,
      null,
      42,
      "event",
      [DOC.publicRead],
      { ...DOC.publicRead, proposed_arguments: { when: new Date(0) } },
      { ...DOC.publicRead, proposed_arguments: { skip: undefined, f: () => 1 } },
      Object.assign(Object.create({ inherited: 1 }) as object, DOC.publicRead),
      { ...DOC.publicRead, proposed_arguments: { n: 1n } },
    ];
    for (const value of values) {
      expect(validateParsedContractEvent(value)).toStrictEqual(validateContractEvent(value));
      expect(checkParsedToolPrecheck(value)).toStrictEqual(checkToolPrecheck(value));
    }
  });
});
