import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AUDIT_EVENT_TYPES,
  AuditLineStager,
  createAuditEvent,
  createAuditEventBody,
  createStagedAuditLines,
  sealAuditEvent,
  sealStagedLine,
  serializeAuditEvent,
  unsealStagedLine,
  type AuditEventInput,
  type AuditMetadata,
} from "../../src/audit/index.js";

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
const field = fc.option(weirdString, { nil: null });
const weirdInput: fc.Arbitrary<AuditEventInput> = fc.record({
  event_type: fc.constantFrom(...AUDIT_EVENT_TYPES),
  request_id: field,
  agent: field,
  tool: field,
  category: field,
  risk_level: field,
  decision: field,
  response_time_ms: fc.option(fc.double(), { nil: null }),
  policy_rule: field,
  metadata: fc.dictionary(weirdString, weirdValue, { maxKeys: 4 }) as fc.Arbitrary<AuditMetadata>,
});
const hashRef = fc.option(fc.stringMatching(/^[0-9a-f]{64}$/).map((hex) => `sha256:${hex}`));

/** The reference: the line `serializeAuditEvent` writes for the sealed body, or `null` when it refuses. */
function reference(input: AuditEventInput, id: string, timestamp: string, previous: string | null) {
  try {
    const event = sealAuditEvent(createAuditEventBody(input, { id, timestamp, previousEventHash: previous }));
    return { line: `${serializeAuditEvent(event)}\n`, hash: event.event_hash };
  } catch {
    return null;
  }
}

describe("staged audit lines (the writer's batch path)", () => {
  it("seal to the bytes and hash of the reference canonical line, refusing exactly what it refuses", () => {
    // a tiny arena, so lines also land in fresh arenas
    const stager = new AuditLineStager(256);
    fc.assert(
      fc.property(weirdInput, weirdString, hashRef, (input, id, previous) => {
        const expected = reference(input, id, "2026-01-15T12:00:00.000Z", previous);
        const lines = createStagedAuditLines();
        let staged = true;
        try {
          stager.stage(input, id, "2026-01-15T12:00:00.000Z", lines);
        } catch {
          staged = false;
        }
        expect(staged).toBe(expected !== null);
        if (expected === null) {
          expect(lines.offsets).toHaveLength(0);
          return;
        }
        const hash = sealStagedLine(lines, 0, previous);
        const [start, , , end] = lines.offsets;
        expect(hash).toBe(expected.hash);
        // the event the writer resolves with is the one the line holds
        const placement = { id, timestamp: "2026-01-15T12:00:00.000Z", previousEventHash: previous };
        expect(createAuditEvent(input, placement, hash)).toEqual(
          sealAuditEvent(createAuditEventBody(input, placement)),
        );
        expect((lines.buffers[0] as Buffer).toString("utf8", start, end)).toBe(expected.line);
      }),
      { numRuns: 2000 },
    );
  });

  it("chain lines staged one after another, each sealed to the hash of the one before", () => {
    fc.assert(
      fc.property(fc.array(weirdInput, { minLength: 1, maxLength: 6 }), (inputs) => {
        const stager = new AuditLineStager(512);
        const lines = createStagedAuditLines();
        const expected: string[] = [];
        let previous: string | null = null;
        for (const [i, input] of inputs.entries()) {
          const want = reference(input, `ae_${i}`, "2026-01-15T12:00:00.000Z", previous);
          if (want === null) continue;
          stager.stage(input, `ae_${i}`, "2026-01-15T12:00:00.000Z", lines);
          expected.push(want.line);
          previous = want.hash;
        }
        let head: string | null = null;
        for (let k = 0; k < expected.length; k++) head = sealStagedLine(lines, k, head);
        expect(head).toBe(previous);
        const written = expected.map((_, k) =>
          (lines.buffers[k] as Buffer).toString("utf8", lines.offsets[4 * k], lines.offsets[4 * k + 3]),
        );
        expect(written).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("seal long strings, escapes and events larger than the arena to the reference bytes", () => {
    // past the unit-by-unit copy (64 code units): plain ASCII written natively, anything else escaped
    const longString = fc.oneof(
      fc.string({ minLength: 60, maxLength: 400 }),
      fc.string({ unit: "binary", minLength: 60, maxLength: 400 }),
      fc.stringMatching(/^[ -~]{60,300}$/),
    );
    const longInput = fc.record({
      event_type: fc.constantFrom(...AUDIT_EVENT_TYPES),
      request_id: fc.option(longString, { nil: null }),
      agent: field,
      tool: fc.option(longString, { nil: null }),
      policy_rule: fc.option(longString, { nil: null }),
      metadata: fc.dictionary(longString, fc.oneof(longString, weirdValue), {
        maxKeys: 6,
      }) as fc.Arbitrary<AuditMetadata>,
    });
    fc.assert(
      fc.property(longInput, longString, hashRef, fc.constantFrom(128, 700, 4096), (input, id, previous, arena) => {
        const stager = new AuditLineStager(arena);
        const expected = reference(input, id, "2026-01-15T12:00:00.000Z", previous);
        const lines = createStagedAuditLines();
        // an earlier line fills part of the arena, so this one may not fit after it
        stager.stage({ event_type: "policy_evaluated" }, "ae_0", "2026-01-15T12:00:00.000Z", lines);
        let staged = true;
        try {
          stager.stage(input, id, "2026-01-15T12:00:00.000Z", lines);
        } catch {
          staged = false;
        }
        expect(staged).toBe(expected !== null);
        if (expected === null) {
          expect(lines.offsets).toHaveLength(4);
          return;
        }
        expect(sealStagedLine(lines, 1, previous)).toBe(expected.hash);
        expect((lines.buffers[1] as Buffer).toString("utf8", lines.offsets[4], lines.offsets[7])).toBe(expected.line);
      }),
      { numRuns: 500 },
    );
  });

  it("leave the arena as it was when an event is refused midway", () => {
    const stager = new AuditLineStager(8192);
    const lines = createStagedAuditLines();
    stager.stage({ event_type: "policy_evaluated", tool: "a" }, "ae_1", "2026-01-15T12:00:00.000Z", lines);
    const bad = { event_type: "policy_evaluated", metadata: { a: "x".repeat(300), b: Number.NaN } } as const;
    expect(() => stager.stage(bad, "ae_2", "2026-01-15T12:00:00.000Z", lines)).toThrow(/not finite/);
    stager.stage({ event_type: "policy_evaluated", tool: "b" }, "ae_3", "2026-01-15T12:00:00.000Z", lines);
    expect(lines.offsets).toHaveLength(8);
    // the line after the refusal begins where the one before it ended
    expect(lines.offsets[4]).toBe(lines.offsets[3]);
    const first = sealStagedLine(lines, 0, null);
    sealStagedLine(lines, 1, first);
    const text = (lines.buffers[1] as Buffer).toString("utf8", lines.offsets[4], lines.offsets[7]);
    expect(text).toContain('"id":"ae_3"');
    expect(text).not.toContain("xxx");
  });

  it("write an id from a source of id bytes as the same line the id as a string gives", () => {
    fc.assert(
      fc.property(weirdInput, fc.stringMatching(/^[0-9a-z_-]{1,40}$/), hashRef, (input, id, previous) => {
        const expected = reference(input, id, "2026-01-15T12:00:00.000Z", previous);
        fc.pre(expected !== null);
        const lines = createStagedAuditLines();
        const source = {
          length: id.length,
          writeNext: (into: Uint8Array, at: number) => void Buffer.from(id).copy(into, at),
        };
        new AuditLineStager(300).stage(input, source, "2026-01-15T12:00:00.000Z", lines);
        expect(sealStagedLine(lines, 0, previous)).toBe(expected?.hash);
        const [start, , , end] = lines.offsets;
        expect((lines.buffers[0] as Buffer).toString("utf8", start, end)).toBe(expected?.line);
      }),
      { numRuns: 300 },
    );
  });

  it("unseal to the staged line, which then seals to another previous hash as if sealed once", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(weirdInput, hashRef, hashRef), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(256, 700, 8192),
        (steps, arena) => {
          const stager = new AuditLineStager(arena);
          const lines = createStagedAuditLines();
          const expected: string[] = [];
          const finals: (string | null)[] = [];
          for (const [i, [input, , second]] of steps.entries()) {
            const want = reference(input, `ae_${i}`, "2026-01-15T12:00:00.000Z", second);
            if (want === null) continue;
            stager.stage(input, `ae_${i}`, "2026-01-15T12:00:00.000Z", lines);
            expected.push(want.line);
            finals.push(second);
          }
          // seal all to the first previous hashes (chained where it is the line before), unseal all, seal again
          let head: string | null = steps[0]?.[1] ?? null;
          for (let k = 0; k < expected.length; k++) head = sealStagedLine(lines, k, k % 2 === 0 ? head : null);
          for (let k = 0; k < expected.length; k++) unsealStagedLine(lines, k);
          const written = expected.map((_, k) => {
            sealStagedLine(lines, k, finals[k] ?? null);
            return (lines.buffers[k] as Buffer).toString("utf8", lines.offsets[4 * k], lines.offsets[4 * k + 3]);
          });
          expect(written).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("refuses a previous hash that is not a sha256 reference", () => {
    const lines = createStagedAuditLines();
    new AuditLineStager().stage({ event_type: "policy_evaluated" }, "ae_1", "2026-01-15T12:00:00.000Z", lines);
    expect(() => sealStagedLine(lines, 0, "sha256:abc")).toThrow(/not a sha256 reference/);
  });
});
