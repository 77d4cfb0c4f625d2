import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_REDACTION, type Decision } from "@acp/core";
import { buildConsentRequest, createConsentRedactor } from "../../src/consent/index.js";
import { canary, filler, plantIn, secretKeyName, secretShapedValue } from "../../../core/test/redaction/planted.js";

const decision = {
  route: "ask",
  reasons: [],
  category: "write",
  risk_level: "medium",
  rule: null,
} as unknown as Decision;

/** The §4.1 request a channel would show, as the JSON it would send. */
function shown(args: Record<string, unknown>, secrets: readonly string[] = []): string {
  const request = buildConsentRequest(
    { server: "s", tool: "t", arguments: args, decision, timeoutMs: 1000 },
    {
      now: new Date("2026-01-15T00:00:00.000Z"),
      random: (n) => new Uint8Array(n),
      redact: createConsentRedactor(DEFAULT_REDACTION, () => secrets),
    },
  );
  return JSON.stringify(request);
}

describe("a planted secret never reaches a consent channel (property)", () => {
  it("under a secret-looking key name", () => {
    fc.assert(
      fc.property(fc.jsonValue(), secretKeyName, canary, (doc, key, secret) => {
        expect(shown(plantIn(doc, key, secret))).not.toContain(secret);
      }),
    );
  });

  it("as a token, JWT, bearer credential or private key inside any text", () => {
    fc.assert(
      fc.property(fc.jsonValue(), secretShapedValue, filler, (doc, shaped, before) => {
        const out = shown(plantIn(doc, "note", `${before} ${shaped.text} end`));
        expect(out).not.toContain(JSON.stringify(shaped.secret).slice(1, -1));
      }),
    );
  });

  it("as a known vault value anywhere in the arguments", () => {
    fc.assert(
      fc.property(fc.jsonValue(), canary, (doc, secret) => {
        expect(shown({ ...plantIn(doc, "note", `x${secret}y`), [secret]: [secret] }, [secret])).not.toContain(secret);
      }),
    );
  });
});
