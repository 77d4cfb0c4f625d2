import {
  createConsentRequest,
  ed25519KeyPairFromSeed,
  signConsentResponse,
  type ConsentAnswer,
  type ConsentRequestV02,
  type ConsentResponseV02,
} from "../src/index.js";

/** A fixed test key: seed bytes 0x00..0x1f. Never use it for anything real. */
export const TEST_SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
export const TEST_KEY = ed25519KeyPairFromSeed(TEST_SEED);
/** Another key, for `wrong_key`. */
export const OTHER_KEY = ed25519KeyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => 255 - i));

export const T0 = new Date("2026-01-15T12:00:00.000Z");

let counter = 0;
/** Deterministic UUIDs for tests. */
export function nextUuid(): string {
  counter++;
  const hex = counter.toString(16).padStart(12, "0");
  return `00000000-0000-4000-8000-${hex}`;
}

/** A consent request to send an email, asked at T0, 300 s to answer. */
export function sampleRequest(): ConsentRequestV02 {
  return createConsentRequest(
    {
      agent: { id: "agent-1", name: "mail assistant", command: "node agent.js" },
      action: {
        tool: "send_email",
        server: "mail",
        category: "communication",
        risk_level: "high",
        parameters: { to: "bob@example.com", subject: "hi", body: "see you at 5" },
        description: "send an email to bob@example.com",
      },
      policy: { rule_id: "r1", rule_name: "ask-before-send", required_level: "high" },
      timeoutSeconds: 300,
    },
    { now: () => T0, randomUUID: nextUuid },
  );
}

/** Signs an approval of `request` 10 s after T0, valid 60 s. */
export function sampleResponse(
  request: ConsentRequestV02,
  overrides: Partial<Omit<ConsentAnswer, "request">> = {},
  key = TEST_KEY,
): ConsentResponseV02 {
  return signConsentResponse(
    {
      request,
      decision: "approved",
      approver: { id: "alice", channel: "terminal" },
      validForSeconds: 60,
      ...overrides,
    },
    key,
    { now: () => new Date(T0.getTime() + 10_000) },
  );
}
