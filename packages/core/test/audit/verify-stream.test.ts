import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  buildAuditEvent,
  canContinueAuditVerification,
  RECENT_AUDIT_HASHES,
  serializeAuditEvent,
  verifyAuditChain,
  verifyAuditStream,
  type AuditVerification,
  type VerifyAuditOptions,
} from "../../src/audit/index.js";
import { ChainBuilder, sampleChain, sampleInput, testKeys } from "./chain-fixture.js";
import { legacyVerifyAuditChain } from "./legacy/verify-chain.js";

const keys = testKeys();
const other = testKeys();

function* once(lines: readonly string[]): Generator<string> {
  yield* lines;
}

async function* slowly(lines: readonly string[]): AsyncGenerator<string> {
  for (const line of lines) {
    await Promise.resolve();
    yield line;
  }
}

/** The lines in arrays of `size` (the last one shorter), as a file's chunks or a table's pages come. */
async function* batched(lines: readonly string[], size: number): AsyncGenerator<string[]> {
  for (let i = 0; i < lines.length; i += size) {
    await Promise.resolve();
    yield lines.slice(i, i + size);
  }
}

/** A chain of `n` events with signed checkpoints every `every` (and one at the end when `n` > 0). */
function chainOf(n: number, every: number): { lines: string[]; hashes: string[]; checkpoints: string[] } {
  const chain = sampleChain(n, every, keys.privateKey);
  const lines = chain.lines();
  return {
    lines,
    hashes: chain.events.map((e) => e.event_hash),
    checkpoints: lines.filter((l) => l.includes('"event_type":"checkpoint"')),
  };
}

type Tamper =
  | { kind: "none" }
  | { kind: "delete" | "truncate" | "edit"; at: number; byte: number }
  | { kind: "duplicate" | "swap" | "move"; at: number; to: number }
  | { kind: "fork"; at: number; names: number; nested: boolean };

const tamper: fc.Arbitrary<Tamper> = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.record({
    kind: fc.constantFrom("delete" as const, "truncate" as const, "edit" as const),
    at: fc.nat(),
    byte: fc.nat(),
  }),
  fc.record({
    kind: fc.constantFrom("duplicate" as const, "swap" as const, "move" as const),
    at: fc.nat(),
    to: fc.nat(),
  }),
  fc.record({
    kind: fc.constant("fork" as const),
    at: fc.nat(),
    names: fc.integer({ min: -1, max: 1000 }),
    nested: fc.boolean(),
  }),
);

/** Applies a tampering to a copy of the lines. */
function apply(lines: readonly string[], hashes: readonly string[], t: Tamper): string[] {
  const out = [...lines];
  if (t.kind === "none" || out.length === 0) return out;
  const at = t.at % out.length;
  switch (t.kind) {
    case "delete":
      out.splice(at, 1);
      return out;
    case "truncate":
      return out.slice(0, at);
    case "edit": {
      const line = out[at] ?? "";
      const i = t.byte % line.length;
      out[at] = line.slice(0, i) + String.fromCharCode(((line.charCodeAt(i) + 1) % 126) + 1) + line.slice(i + 1);
      return out;
    }
    case "duplicate":
      out.splice(t.to % (out.length + 1), 0, out[at] ?? "");
      return out;
    case "swap": {
      const to = t.to % out.length;
      [out[at], out[to]] = [out[to] ?? "", out[at] ?? ""];
      return out;
    }
    case "move": {
      const [line] = out.splice(at, 1);
      out.splice(t.to % (out.length + 1), 0, line ?? "");
      return out;
    }
    case "fork": {
      // a well-formed line naming another line's hash (or, names = -1, no line's), maybe also a nested `event_hash`
      const named = t.names < 0 ? `sha256:${"ab".repeat(32)}` : (hashes[t.names % hashes.length] ?? null);
      const metadata = t.nested ? { event_hash: hashes[(t.names + 1) % hashes.length] ?? "" } : {};
      const forged = buildAuditEvent(
        { event_type: "tool_call_intercepted", tool: "forged", metadata },
        { id: "ae_forged", timestamp: "2026-01-15T13:00:00.000Z", previousEventHash: named },
      );
      out[at] = serializeAuditEvent(forged);
      return out;
    }
  }
}

describe("the streaming verifier, against the whole-log verifier it replaced (26 Nov 2026)", () => {
  it("gives the same result as the old verifier for every way of feeding it, on random chains and tamperings", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 2, max: 8 }),
        tamper,
        fc.constantFrom("none", "key", "wrong key"),
        fc.integer({ min: -1, max: 10 }),
        fc.nat(),
        fc.integer({ min: 1, max: 7 }),
        async (n, every, t, key, anchorAt, resumeAt, size) => {
          const chain = chainOf(n, every);
          const lines = apply(chain.lines, chain.hashes, t);
          const anchor =
            anchorAt < 0 || chain.checkpoints.length === 0
              ? undefined
              : chain.checkpoints[anchorAt % chain.checkpoints.length];
          const options: VerifyAuditOptions = {
            ...(key === "none" ? {} : { publicKey: key === "key" ? keys.publicHex : other.publicKey }),
            ...(anchor === undefined ? {} : { anchor }),
          };
          // the old verifier said nothing of the lines after a problem (`afterProblem`, 27 Nov 2026): compared
          // without it, and every way of feeding the lines must tell the same of them
          const whole = verifyAuditChain(lines, options);
          // nor of consent responses (`consentResponses`, 27 Nov 2026): these chains hold none
          const consentResponses =
            options.publicKey === undefined ? null : { checked: 0, unchecked: 0, notCheckable: [] };
          const expected = {
            ...legacyVerifyAuditChain(lines, options),
            afterProblem: whole.afterProblem,
            consentResponses,
          };
          const p0 = whole.problem;
          if (p0 !== null && p0.code !== "truncated_after_checkpoint") {
            // every line after the problem's is read and counted (none of these is too long to read); after
            // a problem of the anchor, found before any line, every line of the log
            expect(whole.afterProblem?.lines).toBe(p0.where === "anchor" ? lines.length : lines.length - p0.line);
            expect(whole.afterProblem?.complete).toBe(true);
          } else expect(whole.afterProblem).toBeNull();
          expect(whole).toEqual(expected);
          expect(verifyAuditChain(once(lines), options)).toEqual(expected);
          expect(await verifyAuditStream(lines, options)).toEqual(expected);
          expect(await verifyAuditStream(slowly(lines), { ...options, reread: () => slowly(lines) })).toEqual(expected);
          expect(await verifyAuditStream(slowly(lines), options)).toEqual(expected);
          const inBatches = { ...options, reread: () => batched(lines, size + 1) };
          expect(await verifyAuditStream(batched(lines, size), inBatches)).toEqual(expected);
          // continued from an intact prefix verified before: the same result as verifying it all
          const p = resumeAt % (lines.length + 1);
          const first = verifyAuditChain(lines.slice(0, p), key === "none" ? {} : options);
          if (first.ok && canContinueAuditVerification(first, options)) {
            const rest = lines.slice(p);
            expect(await verifyAuditStream(slowly(rest), { ...options, from: first, reread: () => lines })).toEqual(
              expected,
            );
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("names every problem code at the same line as before", () => {
    const chain = chainOf(12, 5);
    const seen = new Set<string>();
    const cases: [string[], VerifyAuditOptions][] = [
      [[...chain.lines.slice(0, 3), ...chain.lines.slice(4)], {}],
      [[...chain.lines.slice(0, 3), chain.lines[1] ?? "", ...chain.lines.slice(3)], {}],
      [[chain.lines[0] ?? "", "{not json"], {}],
      [[(chain.lines[0] ?? "").replace('{"agent"', '{"admin":true,"agent"')], {}],
      [[(chain.lines[0] ?? "").replace('"agent":', '"agent": ')], {}],
      [chain.lines.map((l, i) => (i === 2 ? l.replace('"send_email"', '"send_money"') : l)), {}],
      [chain.lines, { publicKey: other.publicHex }],
      [chain.lines.slice(0, 6), { anchor: chain.checkpoints.at(-1) ?? "" }],
      [chain.lines.slice(0, 4), { anchor: chain.lines[0] ?? "" }],
      [chain.lines, { anchor: chainOf(12, 4).checkpoints[0] ?? "" }],
    ];
    for (const [lines, options] of cases) {
      const expected = legacyVerifyAuditChain(lines, options);
      expect(expected.problem).not.toBeNull();
      expect({
        ...verifyAuditChain(once(lines), options),
        afterProblem: undefined,
        consentResponses: undefined,
      }).toEqual(expected);
      seen.add(expected.problem?.code ?? "");
    }
    expect(seen).toEqual(
      new Set([
        "broken_link",
        "reordered",
        "not_json",
        "schema_invalid",
        "not_canonical",
        "checkpoint_mismatch",
        "hash_mismatch",
        "bad_checkpoint_signature",
        "truncated_after_checkpoint",
      ]),
    );
  });

  it("tells a line naming a long-gone line from one naming no line only when it can read the log again", async () => {
    const chain = new ChainBuilder();
    for (let i = 0; i < RECENT_AUDIT_HASHES + 10; i++) chain.append(sampleInput(i));
    const lines = [...chain.lines(), chain.lines()[1] ?? ""]; // line 2 again at the end: it names line 1
    const reordered = { line: lines.length, code: "reordered" };
    expect(legacyVerifyAuditChain(lines).problem).toMatchObject(reordered);
    expect(verifyAuditChain(lines).problem).toMatchObject(reordered);
    expect((await verifyAuditStream(slowly(lines), { reread: () => lines })).problem).toMatchObject(reordered);
    // a generator cannot be read twice: line 1 is older than the hashes kept, still a failure at that line
    expect(verifyAuditChain(once(lines)).problem).toMatchObject({ line: lines.length, code: "broken_link" });
    // a recent one is still told apart
    const recent = [...chain.lines(), chain.lines().at(-5) ?? ""];
    expect(verifyAuditChain(once(recent)).problem).toMatchObject({ line: recent.length, code: "reordered" });
  });

  it("continues from an intact prefix, and refuses to continue past an anchor that is not the prefix's last checkpoint", async () => {
    const chain = chainOf(20, 5);
    const first = verifyAuditChain(chain.lines.slice(0, 12), { publicKey: keys.publicKey });
    expect(first).toMatchObject({ ok: true, count: 12, checkpoints: 2 });
    const all = verifyAuditChain(chain.lines, { publicKey: keys.publicKey });
    const continued = await verifyAuditStream(slowly(chain.lines.slice(12)), {
      publicKey: keys.publicKey,
      from: first,
      reread: () => chain.lines,
    });
    expect(continued).toEqual(all);
    // the anchor of line 6 lies within the prefix and is not its last checkpoint (line 12)
    const older = { anchor: chain.checkpoints[0] ?? "" };
    expect(canContinueAuditVerification(first, older)).toBe(false);
    expect((await verifyAuditStream([], { ...older, from: first })).problem).toMatchObject({
      line: 6,
      code: "checkpoint_mismatch",
    });
    expect(canContinueAuditVerification(first, { anchor: chain.checkpoints[1] ?? "" })).toBe(true);
    expect(canContinueAuditVerification(first, { anchor: chain.checkpoints.at(-1) ?? "" })).toBe(true);
  });

  it("still reads the log when the anchor itself is bad, and tells what it holds (it did not before 27 Nov 2026)", async () => {
    const chain = chainOf(7, 3);
    const result: AuditVerification = await verifyAuditStream(slowly(chain.lines), {
      anchor: "garbage",
      publicKey: keys.publicHex,
    });
    expect(result).toMatchObject({ ok: false, count: 0, problem: { where: "anchor", code: "not_json" } });
    expect(result.afterProblem).toMatchObject({
      lines: chain.lines.length,
      linked: chain.lines.length,
      checkpoints: chain.checkpoints.length,
      signedCheckpoints: chain.checkpoints.length,
      complete: true,
    });
  });
});
