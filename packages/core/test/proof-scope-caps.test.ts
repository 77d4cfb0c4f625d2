import { describe, expect, it } from "vitest";
import {
  MAX_SESSION_APPROVAL_MS,
  MAX_WINDOW_APPROVAL_MS,
  checkConsentProof,
  createMemoryNonceStore,
  signResponseFor,
  verifyConsentProof,
  type ConsentResponseV02,
} from "../src/index.js";
import { T0, TEST_KEY, sampleRequest } from "./proof-fixtures.js";

const request = sampleRequest();
const action = {
  server: "mail",
  tool: "send_email",
  parameters: { to: "bob@example.com", subject: "hi", body: "see you at 5" },
};
const answeredAt = T0.getTime() + 10_000;
const at = new Date(answeredAt + 1_000);

function signed(scope: "session" | "window", lastsMs: number): ConsentResponseV02 {
  const conditions: ConsentResponseV02["conditions"] =
    scope === "session"
      ? {
          valid_until: new Date(answeredAt + lastsMs).toISOString(),
          single_use: false,
          scope,
          session_id: "s-1",
        }
      : { valid_until: new Date(answeredAt + lastsMs).toISOString(), single_use: false, scope };
  const unsigned: Omit<ConsentResponseV02, "proof"> = {
    type: "consent_response",
    version: "0.2.0",
    request_id: request.id,
    timestamp: new Date(answeredAt).toISOString(),
    decision: "approved",
    approver: { id: "alice", channel: "cli" },
    modifications: null,
    conditions,
    nonce: request.nonce,
  };
  return signResponseFor(unsigned, action, TEST_KEY);
}

const options = { request, trustedPublicKey: TEST_KEY.publicKeyHex, now: at } as const;

describe("the length of a reusable approval, checked when it is verified (§9.5)", () => {
  it("caps a session approval at 12 hours and a window at 7 days", () => {
    expect(MAX_SESSION_APPROVAL_MS).toBe(12 * 3_600_000);
    expect(MAX_WINDOW_APPROVAL_MS).toBe(7 * 86_400_000);
  });

  it("accepts a session approval of exactly 12 hours and a window of exactly 7 days", () => {
    expect(checkConsentProof(signed("session", MAX_SESSION_APPROVAL_MS), options).ok).toBe(true);
    expect(checkConsentProof(signed("window", MAX_WINDOW_APPROVAL_MS), options).ok).toBe(true);
  });

  it("refuses a session approval signed to last longer than 12 hours, though the signature holds", () => {
    const result = checkConsentProof(signed("session", MAX_SESSION_APPROVAL_MS + 1_000), options);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe("scope_too_long");
    expect(result.issues[0]).toMatchObject({ code: "proof_scope_too_long", path: ["conditions", "valid_until"] });
    expect(result.issues[0]?.message).toMatch(/session approval lasts at most 12 hours/);
  });

  it("refuses a window signed to last longer than 7 days, with the expected action alone too", () => {
    const long = signed("window", 30 * 86_400_000);
    const result = checkConsentProof(long, {
      expectedAction: action,
      trustedPublicKey: TEST_KEY.publicKeyHex,
      now: at,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe("scope_too_long");
      expect(result.issues[0]?.message).toMatch(/window lasts at most 7 days/);
    }
  });

  it("spends no nonce for a proof refused as too long, so the refusal is the same the second time", async () => {
    const nonceStore = createMemoryNonceStore();
    const long = signed("session", 24 * 3_600_000);
    const first = await verifyConsentProof(long, { ...options, nonceStore });
    const second = await verifyConsentProof(long, { ...options, nonceStore });
    expect(first.ok ? null : first.reason).toBe("scope_too_long");
    expect(second.ok ? null : second.reason).toBe("scope_too_long");
    expect(nonceStore.spend(request.nonce, request.id, answeredAt + 60_000)).toBe(true);
  });
});
