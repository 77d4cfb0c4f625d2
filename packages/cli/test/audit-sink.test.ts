import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createHomeAuditSink, toAuditInput } from "../src/wiring/audit-sink.js";

/** The metadata as toAuditInput built it before it skipped the JSON round trip for plain JSON. */
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

describe("toAuditInput", () => {
  it("gives the metadata a JSON round trip gives, with or without the round trip", () => {
    fc.assert(
      fc.property(fields, (f) => {
        let expected: unknown;
        try {
          expected = roundTripped(f);
        } catch (err) {
          expect(() => toAuditInput("tool_call_intercepted", f)).toThrow((err as Error).message);
          return;
        }
        const got = toAuditInput("tool_call_intercepted", f).metadata;
        expect(got).toStrictEqual(expected);
        expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps plain JSON as it is, and copies what is not (dates, undefined inside)", () => {
    const args = { to: ["a@b.example"], n: 3 };
    expect(toAuditInput("tool_call_intercepted", { call_id: "c1", arguments: args }).metadata).toStrictEqual({
      call_id: "c1",
      arguments: args,
    });
    const at = new Date("2026-01-01T00:00:00Z");
    expect(
      toAuditInput("tool_call_intercepted", { arguments: { at, gone: undefined, list: [undefined] } }).metadata,
    ).toStrictEqual({ arguments: { at: "2026-01-01T00:00:00.000Z", list: [null] } });
  });

  it("refuses cyclic metadata as before (the JSON round trip throws)", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    expect(() => toAuditInput("tool_call_intercepted", { arguments: cyclic })).toThrow(/circular/i);
  });
});

describe("the home audit sink's durability", () => {
  const homes: string[] = [];
  afterAll(() => {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  const types = (home: string): string[] =>
    readFileSync(join(home, "audit.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { event_type: string }).event_type);

  it("an event a call waits on is on disk when record resolves, with the accept events before it", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-sink-"));
    homes.push(home);
    const sink = createHomeAuditSink({ home, clock: () => new Date(), signer: () => Promise.resolve(undefined) });
    const base = { call_id: "c1", session_id: "s1", server: "srv", tool: "echo" };
    await sink.record("tool_call_intercepted", { ...base, arguments: {} });
    await sink.record("policy_evaluated", { ...base, decision: "accept" });
    await sink.record("tool_call_forwarded", { ...base, arguments: {} });
    await sink.record("tool_call_completed", { ...base, is_error: false });
    await sink.record("policy_evaluated", { ...base, call_id: "c2", decision: "refuse" });
    expect(types(home)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "tool_call_forwarded",
      "tool_call_completed",
      "policy_evaluated",
    ]);
    await sink.record("consent_approved", { ...base, call_id: "c3", decision: "approved" });
    expect(types(home).at(-1)).toBe("consent_approved");
    // a person's intent update and a changed tool definition are awaited too (not batched like accept events)
    await sink.record("intent_updated", { session_id: "s1", update_seq: 1 });
    expect(types(home).at(-1)).toBe("intent_updated");
    await sink.record("tool_definition_changed", { server: "srv", tool: "echo" });
    expect(types(home).at(-1)).toBe("tool_definition_changed");
    await sink.record("tool_call_intercepted", { ...base, call_id: "c4", arguments: {} });
    await sink.close();
    expect(types(home).at(-1)).toBe("tool_call_intercepted");
  });

  it("stages accept events after the caller's turn, in order; an event that cannot be made refuses its call at once", async () => {
    const home = mkdtempSync(join(tmpdir(), "acp-sink-"));
    homes.push(home);
    const sink = createHomeAuditSink({ home, clock: () => new Date(), signer: () => Promise.resolve(undefined) });
    const base = { call_id: "c1", session_id: "s1", server: "srv", tool: "echo" };
    await sink.record("tool_call_intercepted", { ...base, arguments: {} }); // opens the log
    await expect(sink.record("no_such_event", base)).rejects.toThrow("unknown audit event type `no_such_event`");
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    // made into an event on the call's path: metadata that is not JSON refuses this call, not a later one
    await expect(sink.record("tool_call_forwarded", { ...base, arguments: cyclic })).rejects.toThrow(/circular/i);
    await sink.record("policy_evaluated", { ...base, decision: "accept" });
    await sink.record("tool_call_completed", { ...base, is_error: false });
    // not yet in the writer's queue on the caller's turn; a durable event appends them first, in order
    await sink.record("consent_approved", { ...base, decision: "approved" });
    expect(types(home)).toEqual([
      "tool_call_intercepted",
      "policy_evaluated",
      "tool_call_completed",
      "consent_approved",
    ]);
    await sink.close();
  });
});
