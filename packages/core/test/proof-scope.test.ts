import { describe, expect, it } from "vitest";
import { checkConsentProof, signResponseFor, type ConsentResponseV02 } from "../src/index.js";
import { T0, TEST_KEY, sampleRequest } from "./proof-fixtures.js";

const request = sampleRequest();
const action = {
  server: "mail",
  tool: "send_email",
  parameters: { to: "bob@example.com", subject: "hi", body: "see you at 5" },
};
const at = new Date(T0.getTime() + 10_000);

function unsigned(conditions: ConsentResponseV02["conditions"]): Omit<ConsentResponseV02, "proof"> {
  return {
    type: "consent_response",
    version: "0.2.0",
    request_id: request.id,
    timestamp: at.toISOString(),
    decision: "approved",
    approver: { id: "alice", channel: "cli" },
    modifications: null,
    conditions,
    nonce: request.nonce,
  };
}

describe("approval scopes in the proof (ACP extension of §4.2)", () => {
  const sessionConditions = {
    valid_until: "2026-01-15T18:00:00.000Z",
    single_use: false,
    scope: "session",
    session_id: "s-1",
  } as const;

  it("verifies a session-scoped approval with the scope signed", () => {
    const signed = signResponseFor(unsigned(sessionConditions), action, TEST_KEY);
    const result = checkConsentProof(signed, {
      expectedAction: action,
      trustedPublicKey: TEST_KEY.publicKeyHex,
      now: at,
    });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.payload).toMatchObject({ scope: "session", session_id: "s-1" });
  });

  it("refuses a single-use approval rewritten into a session scope", () => {
    const once = signResponseFor(
      unsigned({ valid_until: "2026-01-15T12:05:00.000Z", single_use: true }),
      action,
      TEST_KEY,
    );
    const widened = { ...once, conditions: { ...sessionConditions, valid_until: once.conditions.valid_until } };
    const result = checkConsentProof(widened, {
      expectedAction: action,
      trustedPublicKey: TEST_KEY.publicKeyHex,
      now: at,
    });
    expect(result.ok).toBe(false);
  });

  it("refuses a session approval moved to another session", () => {
    const signed = signResponseFor(unsigned(sessionConditions), action, TEST_KEY);
    const moved = { ...signed, conditions: { ...signed.conditions, session_id: "s-2" } };
    const result = checkConsentProof(moved, {
      expectedAction: action,
      trustedPublicKey: TEST_KEY.publicKeyHex,
      now: at,
    });
    expect(result.ok).toBe(false);
  });

  it("refuses scopes that contradict single_use", () => {
    for (const conditions of [
      { valid_until: "2026-01-15T12:05:00.000Z", single_use: false },
      { valid_until: "2026-01-15T12:05:00.000Z", single_use: true, scope: "window" },
      { valid_until: "2026-01-15T12:05:00.000Z", single_use: false, scope: "session" },
      { valid_until: "2026-01-15T12:05:00.000Z", single_use: true, scope: "once", session_id: "s-1" },
    ]) {
      const signed = signResponseFor(unsigned(conditions as ConsentResponseV02["conditions"]), action, TEST_KEY);
      const result = checkConsentProof(signed, {
        expectedAction: action,
        trustedPublicKey: TEST_KEY.publicKeyHex,
        now: at,
      });
      expect(result.ok ? "ok" : result.reason).toBe("malformed");
    }
  });
});
