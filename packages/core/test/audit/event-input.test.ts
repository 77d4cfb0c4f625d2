import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  auditEventInput,
  canonicalJson,
  MAX_CANONICAL_DEPTH,
  MAX_METADATA_DEPTH,
  sealAuditInput,
  sha256Ref,
} from "../../src/index.js";

/** The metadata as auditEventInput built it before it skipped the JSON round trip for plain JSON. */
function roundTripped(fields: Record<string, unknown>): unknown {
  const top = ["request_id", "agent", "tool", "category", "risk_level", "decision", "response_time_ms", "policy_rule"];
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (top.includes(key) || key === "metadata" || value === undefined) continue;
    metadata[key] = value;
  }
  const extra = fields["metadata"];
  if (typeof extra === "object" && extra !== null) Object.assign(metadata, extra);
  return JSON.parse(JSON.stringify(metadata)) as unknown;
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

// JSON values, and the values a JSON round trip changes: undefined, holes, -0, NaN, dates, class instances
const odd = fc.constantFrom<unknown>(
  undefined,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  new Date("2026-01-01T00:00:00Z"),
  new Point(1, 2),
  [1, , 3], // eslint-disable-line no-sparse-arrays
  { toJSON: () => "custom" },
  { [Symbol("s")]: 1, a: 1 },
  Object.create(null) as unknown,
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    odd,
    fc.array(tie("tree"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "arguments", "reasons", "__proto__", "metadata"), tie("tree"), {
      maxKeys: 3,
    }),
  ),
}));
const fields = fc.dictionary(
  fc.constantFrom("call_id", "session_id", "arguments", "reasons", "agent", "tool", "metadata", "decision", "x"),
  tree,
  { maxKeys: 6 },
);

describe("auditEventInput: a front end's record(eventType, fields) as an event input", () => {
  it("gives the metadata a JSON round trip gives, with or without the round trip", () => {
    fc.assert(
      fc.property(fields, (f) => {
        let expected: unknown;
        try {
          expected = roundTripped(f);
        } catch (err) {
          expect(() => auditEventInput("tool_call_intercepted", f)).toThrow((err as Error).message);
          return;
        }
        const got = auditEventInput("tool_call_intercepted", f).metadata;
        expect(got).toStrictEqual(expected);
        expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps plain JSON as it is, and copies what is not (dates, undefined inside)", () => {
    const args = { to: ["a@b.example"], n: 3 };
    expect(auditEventInput("tool_call_intercepted", { call_id: "c1", arguments: args }).metadata).toStrictEqual({
      call_id: "c1",
      arguments: args,
    });
    const at = new Date("2026-01-01T00:00:00Z");
    expect(
      auditEventInput("tool_call_intercepted", { arguments: { at, gone: undefined, list: [undefined] } }).metadata,
    ).toStrictEqual({ arguments: { at: "2026-01-01T00:00:00.000Z", list: [null] } });
  });

  it("refuses cyclic metadata as before (the JSON round trip throws)", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(() => auditEventInput("tool_call_intercepted", { arguments: cyclic })).toThrow(/circular/i);
  });

  it("keeps plain JSON arguments as they are (no copy)", () => {
    const args = { to: ["a@b.example"], n: 3, nested: { deep: [{ x: "y" }] } };
    const input = auditEventInput("tool_call_intercepted", { call_id: "c1", arguments: args });
    expect((input.metadata as { arguments: unknown }).arguments).toBe(args);
  });

  // an agent chooses its arguments: none of them may make an event the chain refuses (which stopped the
  // proxy's audit log, and with it every later call)
  const PLACEMENT = { id: "evt_1", timestamp: "2026-11-27T00:00:00.000Z", previousEventHash: null };

  it("records a lone surrogate (valid JSON text, refused by the chain) as U+FFFD, in values, keys and own fields", () => {
    const input = auditEventInput("tool_call_intercepted", {
      tool: "ech\udc00o",
      agent: "\ud800bot",
      arguments: { message: "bad \ud800 x", ["k\udfff"]: ["\ud83d"], fine: "\ud83d\ude00" },
    });
    expect(input.tool).toBe("ech\ufffdo");
    expect(input.agent).toBe("\ufffdbot");
    expect((input.metadata as { arguments: unknown }).arguments).toStrictEqual({
      message: "bad \ufffd x",
      ["k\ufffd"]: ["\ufffd"],
      fine: "\ud83d\ude00",
    });
    expect(() => sealAuditInput(input, PLACEMENT)).not.toThrow();
  });

  it("cuts nesting deeper than MAX_METADATA_DEPTH into a placeholder with the cut part's length and digest", () => {
    expect(MAX_METADATA_DEPTH).toBeLessThan(MAX_CANONICAL_DEPTH - 2);
    const deep = JSON.parse(`${"[".repeat(200)}"x"${"]".repeat(200)}`) as unknown;
    const input = auditEventInput("tool_call_intercepted", { arguments: { message: "hi", deep } });
    const args = (input.metadata as { arguments: { message: string; deep: unknown } }).arguments;
    expect(args.message).toBe("hi");
    // metadata is depth 0, arguments 1, deep 2: the array at depth MAX_METADATA_DEPTH is the first one cut
    let at: unknown = args.deep;
    let inner: unknown = deep;
    for (let depth = 2; depth < MAX_METADATA_DEPTH; depth++) {
      expect(Array.isArray(at)).toBe(true);
      at = (at as unknown[])[0];
      inner = (inner as unknown[])[0];
    }
    const cut = JSON.stringify(inner);
    expect(at).toBe(
      `[omitted from the audit: nested deeper than ${MAX_METADATA_DEPTH} levels, ${cut.length} characters, ${sha256Ref(cut)}]`,
    );
    expect(() => canonicalJson(sealAuditInput(input, PLACEMENT).event)).not.toThrow();
  });

  it("records arguments nested far deeper than JSON.stringify reaches, without a digest", () => {
    const deep = JSON.parse(`${"[".repeat(200_000)}${"]".repeat(200_000)}`) as unknown;
    const input = auditEventInput("tool_call_intercepted", { arguments: { deep } });
    expect(JSON.stringify(input.metadata)).toMatch(/omitted from the audit: nested deeper than 64 levels/);
    expect(() => sealAuditInput(input, PLACEMENT)).not.toThrow();
  });

  it("builds the metadata object defining every field would, `__proto__` and Object.prototype's names among them", () => {
    // the plain computation: every field not an own field of the event defined on a fresh object, in order
    const defined = (f: Record<string, unknown>): Record<string, unknown> => {
      const top = ["request_id", "agent", "tool", "category", "risk_level", "decision", "response_time_ms"];
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(f)) {
        if (top.includes(key) || key === "policy_rule" || key === "metadata" || f[key] === undefined) continue;
        Object.defineProperty(out, key, { value: f[key], enumerable: true, writable: true, configurable: true });
      }
      return out;
    };
    // JSON as parsed (no -0): metadata taken as it is, not copied
    const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
    const names = fc.constantFrom("call_id", "__proto__", "toString", "constructor", "hasOwnProperty", "tool", "x");
    fc.assert(
      fc.property(fc.dictionary(names, json, { maxKeys: 7 }), (f) => {
        const got = auditEventInput("tool_call_intercepted", f).metadata as Record<string, unknown>;
        const want = defined(f);
        expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
        expect(Reflect.ownKeys(got)).toStrictEqual(Reflect.ownKeys(want));
        // (as entries: a `constructor` key would stand for the descriptor map's own constructor in a comparison)
        const described = (o: object): unknown => Object.entries(Object.getOwnPropertyDescriptors(o));
        expect(described(got)).toStrictEqual(described(want));
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses an unknown event type", () => {
    expect(() => auditEventInput("tool_call_teleported", {})).toThrow(/unknown audit event type/);
  });
});
