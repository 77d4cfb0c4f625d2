import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AuditLineStager,
  MAX_AUDIT_LINE_LENGTH,
  createStagedAuditLines,
  fitAuditInput,
  omittedString,
  parseAuditLine,
  sealStagedLine,
  type AuditEventInput,
} from "../../src/audit/index.js";

const sha = (s: string): string => createHash("sha256").update(s).digest("hex");

/** Stages and seals one event; the line as the verifier reads it, and the input the stager used. */
function lineOf(input: AuditEventInput): { line: string; staged: AuditEventInput } {
  const stager = new AuditLineStager(64 * 1024);
  const lines = createStagedAuditLines();
  const staged = stager.stage(input, "ae_00000000-0000-4000-8000-000000000000", "2026-11-26T08:00:00.000Z", lines);
  sealStagedLine(lines, 0, null);
  const buffer = lines.buffers[0] as Buffer;
  return { line: buffer.toString("utf8", lines.offsets[0], (lines.offsets[3] as number) - 1), staged };
}

describe("fitAuditInput: events too long for the verifier", () => {
  it("leaves an event that fits exactly as it is (the same object from the stager)", () => {
    const input: AuditEventInput = {
      event_type: "policy_evaluated",
      metadata: { arguments: { a: "x".repeat(900_000) } },
    };
    expect(lineOf(input).staged).toBe(input);
  });

  it("replaces the longest strings first, only as many as it takes, keeping keys such as __proto__", () => {
    const metadata = JSON.parse(
      `{"arguments":{"__proto__":"${"p".repeat(600_000)}","b":"${"b".repeat(500_000)}","c":"${"c".repeat(2000)}"}}`,
    ) as Record<string, never>;
    const { line, staged } = lineOf({ event_type: "policy_evaluated", metadata });
    expect(line.length).toBeLessThanOrEqual(MAX_AUDIT_LINE_LENGTH);
    expect(parseAuditLine(line).ok).toBe(true);
    const args = (staged.metadata as { arguments: Record<string, string> }).arguments;
    expect(Object.getOwnPropertyNames(args)).toEqual(["__proto__", "b", "c"]);
    expect(args["__proto__"]).toBe(`[omitted from the audit: 600000 characters, sha256:${sha("p".repeat(600_000))}]`);
    expect(args["b"]).toBe("b".repeat(500_000));
    expect(args["c"]).toBe("c".repeat(2000));
  });

  it("any oversized event becomes a line the verifier reads, with short values kept", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0, max: 400_000 })), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.string({ maxLength: 40 }),
        (fields, tool) => {
          const args: Record<string, string> = {};
          for (const [key, length] of fields) args[`k${key}`] = "z".repeat(length);
          const { line, staged } = lineOf({ event_type: "tool_call_intercepted", tool, metadata: { arguments: args } });
          expect(line.length).toBeLessThanOrEqual(MAX_AUDIT_LINE_LENGTH);
          expect(parseAuditLine(line).ok).toBe(true);
          expect(staged.tool).toBe(tool);
          const kept = (staged.metadata as { arguments: Record<string, string> }).arguments;
          for (const [key, value] of Object.entries(args)) {
            if (value.length < 1024) expect(kept[key]).toBe(value);
            else expect([value, omittedString(value)]).toContain(kept[key]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("without long strings to give way, metadata becomes its size and digest; an over-long own field too", () => {
    const numbers = Array.from({ length: 300_000 }, (_, i) => i);
    const fitted = fitAuditInput({ event_type: "policy_evaluated", agent: "a".repeat(5000), metadata: { numbers } });
    const whole = JSON.stringify({ numbers });
    expect(fitted.metadata).toEqual({ audit_omitted: { characters: whole.length, sha256: `sha256:${sha(whole)}` } });
    expect(fitted.agent).toBe(omittedString("a".repeat(5000)));
  });
});
