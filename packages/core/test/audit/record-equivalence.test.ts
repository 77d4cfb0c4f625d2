import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AUDIT_EVENT_TYPES,
  AuditLineStager,
  createStagedAuditLines,
  redactAuditInput,
  sealStagedLine,
  unsealStagedLine,
  type AuditEventInput,
  type AuditMetadata,
  type StagedAuditLines,
} from "../../src/audit/index.js";
import type { AuditIdBytes } from "../../src/audit/audit-bytes.js";
import { createRedactor, DEFAULT_REDACTION } from "../../src/redaction/index.js";
import * as legacyLine from "./legacy/audit-line.js";
import { redactAuditInput as legacyRedactAuditInput } from "./legacy/redact-input.js";

// The audit writer's per-event path (redact, canonical JSON staged as bytes, sealed and hashed) was made
// cheaper on 26 Nov 2026. Nothing written may change: this holds the current code to the code as it was
// (`./legacy/`, a copy of commit 37746fa) on generated events, byte for byte and hash for hash, refusing
// exactly what it refused, including across chains of events that share or alternate field values (the
// pieces the stager remembers between events) and across arena boundaries.

// strings of every kind: plain ASCII, escapes, any UTF-16 (lone surrogates included), graphemes, and large
const anyString = fc.oneof(
  { arbitrary: fc.string(), weight: 3 },
  { arbitrary: fc.string({ unit: "binary" }), weight: 2 },
  { arbitrary: fc.string({ unit: "grapheme" }), weight: 2 },
  { arbitrary: fc.string({ unit: "binary-ascii" }), weight: 1 },
  { arbitrary: fc.constantFrom("\ud800", "a\udc00b", "\udbff\udfff", "é", "\u2028", "\u007f", '"\\/'), weight: 1 },
  { arbitrary: fc.string({ minLength: 60, maxLength: 3000 }), weight: 1 },
  { arbitrary: fc.string({ unit: "binary", minLength: 60, maxLength: 3000 }), weight: 1 },
  { arbitrary: fc.stringMatching(/^[ -~]{60,2000}$/), weight: 1 },
);
/** A few values that repeat from event to event, so the stager's remembered pieces are hit and replaced. */
const repeated = fc.constantFrom("bench-agent", "search_docs", "accept", "low", "ask-before-send", "", "é\u2028", null);
const field = fc.oneof(
  { arbitrary: repeated, weight: 3 },
  { arbitrary: fc.option(anyString, { nil: null }), weight: 2 },
);
const number = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE));
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    anyString,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(anyString, tie("value"), { maxKeys: 4 }),
  ),
})).value;
/** Nested deeper than the canonicalizer takes (128), or close to it. */
const deep = fc.integer({ min: 120, max: 135 }).map((n) => {
  let v: unknown = "leaf";
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? { k: v } : [v];
  return v;
});
const metadata = fc.oneof(
  { arbitrary: fc.dictionary(anyString, jsonValue, { maxKeys: 5 }), weight: 6 },
  { arbitrary: fc.record({ front_end: repeated, reasons: fc.array(repeated, { maxLength: 3 }) }), weight: 2 },
  { arbitrary: deep.map((d) => ({ deep: d })), weight: 1 },
  // a value that is not JSON (refused) or an object of another class
  { arbitrary: fc.constantFrom({ x: Number.NaN }, { x: undefined }, { x: new Date(0) }, { x: 1n }), weight: 1 },
) as fc.Arbitrary<AuditMetadata>;
const input: fc.Arbitrary<AuditEventInput> = fc.record(
  {
    event_type: fc.constantFrom(...AUDIT_EVENT_TYPES),
    request_id: field,
    agent: field,
    tool: field,
    category: field,
    risk_level: field,
    decision: field,
    response_time_ms: fc.oneof(fc.constant(null), fc.constantFrom(0, 1, 3), number),
    policy_rule: field,
    metadata,
  },
  { requiredKeys: ["event_type"] },
);
const timestamp = fc.oneof(
  fc.constantFrom("2026-01-15T12:00:00.000Z", "2026-01-15T12:00:00.001Z"),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);
const previous = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}`));

/**
 * Ids as bytes, the id of line `n` when `n` is set: the stager takes an id per attempt, and a line that
 * does not fit what is left of the arena is staged again in a new one (where each implementation finds
 * a line does not fit depends on the order it writes pieces in, and the writer's ids are random), so
 * the id is tied to the line, not to the attempt.
 */
function idSource(): AuditIdBytes & { n: number } {
  return {
    n: 0,
    length: 39,
    writeNext(into: Uint8Array, at: number): void {
      const text = `ae_${this.n.toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
      for (let i = 0; i < 39; i++) into[at + i] = text.charCodeAt(i);
    },
  };
}

interface Implementation {
  stage(input: AuditEventInput, id: string | AuditIdBytes, timestamp: string, into: StagedAuditLines): void;
  seal(lines: StagedAuditLines, k: number, previous: string | null): string;
  unseal(lines: StagedAuditLines, k: number): void;
}
const current = (arena: number): Implementation => {
  const stager = new AuditLineStager(arena);
  return {
    stage: (i, id, t, into) => stager.stage(i, id, t, into),
    seal: sealStagedLine,
    unseal: unsealStagedLine,
  };
};
const legacy = (arena: number): Implementation => {
  const stager = new legacyLine.AuditLineStager(arena);
  return {
    stage: (i, id, t, into) => stager.stage(i, id, t, into),
    seal: legacyLine.sealStagedLine,
    unseal: legacyLine.unsealStagedLine,
  };
};

const lineOf = (lines: StagedAuditLines, k: number): string =>
  (lines.buffers[k] as Buffer).toString("latin1", lines.offsets[4 * k], lines.offsets[4 * k + 3]);

/** Stages and seals the events in a chain; what each event gave: its line (latin1: the exact bytes) and hash, or the refusal. */
function record(
  impl: Implementation,
  events: readonly { input: AuditEventInput; timestamp: string }[],
  ids: "strings" | "bytes",
  first: string | null,
): { lines: string[]; hashes: string[]; refused: string[] } {
  const lines = createStagedAuditLines();
  const source = idSource();
  const refused: string[] = [];
  let n = 0;
  for (const [i, { input: event, timestamp: time }] of events.entries()) {
    source.n = i;
    try {
      impl.stage(event, ids === "strings" ? `ae_${i}` : source, time, lines);
      n++;
    } catch (err) {
      refused.push(`${i}: ${(err as Error).message}`);
    }
  }
  const hashes: string[] = [];
  let head = first;
  for (let k = 0; k < n; k++) hashes.push((head = impl.seal(lines, k, head)));
  return { lines: Array.from({ length: n }, (_, k) => lineOf(lines, k)), hashes, refused };
}

describe("the audit record path, against the code it replaced (26 Nov 2026)", () => {
  it("stages and seals the same bytes and hashes, refusing the same events, over chains of generated events", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ input, timestamp }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom<"strings" | "bytes">("strings", "bytes"),
        fc.constantFrom(256, 1024, 4 * 1024 * 1024),
        previous,
        (events, ids, arena, first) => {
          const want = record(legacy(arena), events, ids, first);
          const got = record(current(arena), events, ids, first);
          expect(got.refused).toEqual(want.refused);
          expect(got.hashes).toEqual(want.hashes);
          expect(got.lines).toEqual(want.lines);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("stays equal over a long run of events that alternate a few shapes (the remembered pieces replaced)", () => {
    // one pair of stagers for the whole run: what each remembered from earlier events stays in play
    const shapes = fc.record({
      event_type: fc.constantFrom("tool_call_intercepted", "policy_evaluated", "tool_call_forwarded"),
      agent: repeated,
      tool: fc.oneof(repeated, fc.string({ maxLength: 6 })),
      category: repeated,
      decision: repeated,
      risk_level: repeated,
      policy_rule: fc.oneof(repeated, fc.constantFrom("r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10")),
      response_time_ms: fc.constantFrom(null, 0, 1, 2, 3, -0, 0.5),
      request_id: fc.string({ maxLength: 12 }),
      metadata: fc.constantFrom({}, { server: "everything" }, { reasons: ["policy:default"] }),
    }) as fc.Arbitrary<AuditEventInput>;
    const events = fc.sample(fc.record({ input: shapes, timestamp }), { numRuns: 5000, seed: 26112026 });
    const want = record(legacy(64 * 1024), events, "bytes", null);
    const got = record(current(64 * 1024), events, "bytes", null);
    expect(got.refused).toEqual(want.refused);
    expect(got.lines.length).toBe(events.length);
    expect(got.hashes).toEqual(want.hashes);
    expect(got.lines).toEqual(want.lines);
  });

  it("unseals and seals again to the same bytes", () => {
    fc.assert(
      fc.property(fc.array(input, { minLength: 1, maxLength: 6 }), previous, previous, (inputs, a, b) => {
        const run = (impl: Implementation): string[] => {
          const lines = createStagedAuditLines();
          let n = 0;
          for (const event of inputs) {
            try {
              impl.stage(event, `ae_${n}`, "2026-01-15T12:00:00.000Z", lines);
              n++;
            } catch {
              // refused alike (the test above)
            }
          }
          let head = a;
          for (let k = 0; k < n; k++) head = impl.seal(lines, k, head);
          for (let k = 0; k < n; k++) impl.unseal(lines, k);
          head = b;
          for (let k = 0; k < n; k++) head = impl.seal(lines, k, head);
          return Array.from({ length: n }, (_, k) => lineOf(lines, k));
        };
        expect(run(current(512))).toEqual(run(legacy(512)));
      }),
      { numRuns: 300 },
    );
  });

  it("redacts every input to the same result, returning the input itself when nothing matched", () => {
    const secret = "hunter2-the-vault-value";
    const secretish = fc.oneof(
      anyString,
      fc.constantFrom(
        secret,
        `x${secret}y`,
        "Bearer abcdefghijklmnop",
        "sk-abcdefghijklmnopqrstuvwxyz",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAABCDEFGHIJKLMNOP",
      ),
    );
    const redactable = fc.record(
      {
        event_type: fc.constantFrom(...AUDIT_EVENT_TYPES),
        request_id: fc.oneof(fc.option(secretish, { nil: null }), fc.constant(undefined)),
        agent: fc.option(secretish, { nil: null }),
        // not strings at run time (a JavaScript caller): left as they are
        tool: fc.oneof(fc.option(secretish, { nil: null }), fc.integer(), fc.constant(undefined)),
        category: fc.option(secretish, { nil: null }),
        risk_level: fc.option(secretish, { nil: null }),
        decision: fc.option(secretish, { nil: null }),
        response_time_ms: fc.option(fc.integer(), { nil: null }),
        policy_rule: fc.option(secretish, { nil: null }),
        metadata: fc.dictionary(
          fc.oneof(secretish, fc.constantFrom("password", "api_key", "token", "note")),
          fc.oneof(secretish, jsonValue),
          { maxKeys: 4 },
        ),
      },
      { requiredKeys: ["event_type"] },
    ) as fc.Arbitrary<AuditEventInput>;
    const secrets = [secret];
    const redactors = [
      createRedactor(DEFAULT_REDACTION, { secrets: () => secrets }),
      createRedactor({ keys: [], values: [] }, { secrets: () => secrets }),
      // a depth limit under which the redactor replaces an array of fields whole
      createRedactor(DEFAULT_REDACTION, { secrets: () => secrets, maxDepth: -1 }),
    ];
    fc.assert(
      fc.property(redactable, fc.constantFrom(0, 1, 2), (event, r) => {
        const redact = redactors[r] as (typeof redactors)[number];
        const want = legacyRedactAuditInput(event, redact);
        const got = redactAuditInput(event, redact);
        expect(got).toEqual(want);
        expect(Object.keys(got)).toEqual(Object.keys(want));
        expect(got === event).toBe(want === event);
      }),
      { numRuns: 3000 },
    );
  });
});
