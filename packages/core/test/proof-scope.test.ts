import { describe, expect, it } from "vitest";
import { checkConsentProof, signResponseFor, type ConsentResponseV02 } from "../src/index.js";
import { T0, TEST_KEY, sampleRequest, sampleResponse } from "./proof-fixtures.js";

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

  it("refuses a single-use approval signed to outlive its request (§9.5: a once approval ends with its request)", () => {
    // the request expires at 12:05; every ACP signer caps a single-use approval there
    const options = { request, trustedPublicKey: TEST_KEY.publicKeyHex, now: at };
    for (const conditions of [
      { valid_until: "2026-01-15T13:00:00.000Z", single_use: true },
      { valid_until: "2026-01-15T12:05:00.001Z", single_use: true, scope: "once" },
    ] as const) {
      const result = checkConsentProof(signResponseFor(unsigned(conditions), action, TEST_KEY), options);
      expect(result.ok ? "ok" : result.reason).toBe("expired");
      if (!result.ok) expect(result.issues[0]?.path).toEqual(["conditions", "valid_until"]);
    }
    const atExpiry = { valid_until: request.expires_at, single_use: true } as const;
    expect(checkConsentProof(signResponseFor(unsigned(atExpiry), action, TEST_KEY), options).ok).toBe(true);
    // a session or window approval a person chose is meant to outlive the request
    expect(checkConsentProof(signResponseFor(unsigned(sessionConditions), action, TEST_KEY), options).ok).toBe(true);
    const window = { valid_until: "2026-01-16T12:00:00.000Z", single_use: false, scope: "window" } as const;
    expect(checkConsentProof(signResponseFor(unsigned(window), action, TEST_KEY), options).ok).toBe(true);
  });
});

describe("a response bound to the request it answers when the action comes from elsewhere (`answers`)", () => {
  // ACP's proxy shows parameters redacted in the request, so it verifies against the real action
  // (`expectedAction`); `answers` still binds the response to that request's id, nonce and expiry (§6.3 4, 5)
  const once = signResponseFor(
    unsigned({ valid_until: "2026-01-15T12:05:00.000Z", single_use: true }),
    action,
    TEST_KEY,
  );
  const options = { expectedAction: action, trustedPublicKey: TEST_KEY.publicKeyHex, now: at };
  const reason = (v: ReturnType<typeof checkConsentProof>): string => (v.ok ? "ok" : v.reason);

  it("accepts the response to that request", () => {
    expect(reason(checkConsentProof(once, { ...options, answers: request }))).toBe("ok");
  });

  it("refuses a response to another request, by id or by nonce", () => {
    const other = sampleRequest();
    expect(reason(checkConsentProof(once, { ...options, answers: other }))).toBe("nonce_mismatch");
    expect(reason(checkConsentProof(once, { ...options, answers: { ...request, nonce: other.nonce } }))).toBe(
      "nonce_mismatch",
    );
    expect(reason(checkConsentProof(once, { ...options, answers: { ...request, id: other.id } }))).toBe(
      "nonce_mismatch",
    );
  });

  it("refuses an answer given after the request expired, and a single-use approval outliving it", () => {
    const expired = { ...request, expires_at: "2026-01-15T12:00:05.000Z" }; // the answer came at 12:00:10
    expect(reason(checkConsentProof(once, { ...options, answers: expired }))).toBe("expired");
    const later = signResponseFor(
      unsigned({ valid_until: "2026-01-15T13:00:00.000Z", single_use: true }),
      action,
      TEST_KEY,
    );
    expect(reason(checkConsentProof(later, { ...options, answers: request }))).toBe("expired");
  });

  it("refuses, as malformed, an `answers` that is not an id, a nonce and an expiry", () => {
    for (const answers of [
      { ...request, nonce: "n_x" },
      { ...request, id: "nope" },
      { ...request, expires_at: "2026-02-30T00:00:00Z" },
      null,
    ]) {
      const v = checkConsentProof(once, { ...options, answers: answers as unknown as typeof request });
      expect(reason(v)).toBe("malformed");
    }
  });

  it("is the same check `request` makes when the request shows the real parameters", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const real = { server: "mail", tool: "send_email", parameters: req.action.parameters };
    const base = { trustedPublicKey: TEST_KEY.publicKeyHex, now: new Date(T0.getTime() + 20_000) };
    expect(reason(checkConsentProof(res, { ...base, request: req }))).toBe("ok");
    expect(reason(checkConsentProof(res, { ...base, expectedAction: real, answers: req }))).toBe("ok");
  });
});
