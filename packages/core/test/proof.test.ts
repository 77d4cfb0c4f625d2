import { verify as edVerify } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  actionHash,
  approvedActionOf,
  checkConsentProof,
  checkConsentSignature,
  createMemoryNonceStore,
  signingPayloadBytes,
  signingPayloadOf,
  verifyConsentProof,
  type ConsentResponseV02,
  type ProofVerification,
} from "../src/index.js";
import { OTHER_KEY, T0, TEST_KEY, sampleRequest, sampleResponse } from "./proof-fixtures.js";

const LATER = new Date(T0.getTime() + 20_000);
const opts = { trustedPublicKey: TEST_KEY.publicKeyHex, now: LATER };

function reasonOf(v: ProofVerification): string {
  return v.ok ? "ok" : v.reason;
}

describe("consent proofs (§6)", () => {
  it("signs the JCS payload of §6.2 and verifies against the request", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const payload = signingPayloadOf(res, approvedActionOf(req, null));
    expect(Object.keys(payload)).toEqual([
      "action_hash",
      "decision",
      "modifications_hash",
      "nonce",
      "request_id",
      "timestamp",
      "valid_until",
    ]);
    expect(payload.action_hash).toBe(
      actionHash({ server: "mail", tool: "send_email", parameters: req.action.parameters }),
    );
    const bytes = signingPayloadBytes(payload);
    expect(edVerify(null, bytes, TEST_KEY.publicKey, Buffer.from(res.proof.signature, "hex"))).toBe(true);
    const v = checkConsentProof(res, { ...opts, request: req });
    expect(reasonOf(v)).toBe("ok");
    if (v.ok) expect(v.value.approved).toBe(true);
  });

  it("refuses a proof signed by another key, or verified against another key", () => {
    const req = sampleRequest();
    expect(reasonOf(checkConsentProof(sampleResponse(req, {}, OTHER_KEY), { ...opts, request: req }))).toBe(
      "wrong_key",
    );
    const res = sampleResponse(req);
    const forged = { ...res, proof: { ...res.proof, public_key: OTHER_KEY.publicKeyHex } };
    expect(
      reasonOf(checkConsentProof(forged, { ...opts, trustedPublicKey: OTHER_KEY.publicKeyHex, request: req })),
    ).toBe("bad_signature");
  });

  it("refuses a changed decision, time or nonce as a payload mismatch", () => {
    const req = sampleRequest();
    const res = sampleResponse(req, { decision: "denied" });
    const flipped = { ...res, decision: "approved" };
    expect(reasonOf(checkConsentProof(flipped, { ...opts, request: req }))).toBe("payload_mismatch");
    const later = { ...res, conditions: { ...res.conditions, valid_until: "2030-01-01T00:00:00.000Z" } };
    expect(reasonOf(checkConsentProof(later, { ...opts, request: req }))).toBe("payload_mismatch");
  });

  it("refuses a hash that matches but a signature that does not", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const sig = res.proof.signature;
    const bad = { ...res, proof: { ...res.proof, signature: (sig[0] === "0" ? "1" : "0") + sig.slice(1) } };
    expect(reasonOf(checkConsentProof(bad, { ...opts, request: req }))).toBe("bad_signature");
  });

  it("refuses a response to another request (nonce and id are bound)", () => {
    const req = sampleRequest();
    const other = sampleRequest();
    const res = sampleResponse(other);
    const sameAction = { ...req, nonce: other.nonce };
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req }))).toBe("nonce_mismatch");
    expect(reasonOf(checkConsentProof(res, { ...opts, request: { ...other, nonce: req.nonce } }))).toBe(
      "nonce_mismatch",
    );
    expect(reasonOf(checkConsentProof(res, { ...opts, request: sameAction }))).toBe("nonce_mismatch");
  });

  it("binds the approval to the exact server, tool and parameters", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const approved = approvedActionOf(req, null);
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req, expectedAction: approved }))).toBe("ok");
    const calls = [
      { ...approved, server: "other" },
      { ...approved, tool: "send_emails" },
      { ...approved, parameters: { ...approved.parameters, to: "eve@example.com" } },
      { ...approved, parameters: { ...approved.parameters, bcc: "eve@example.com" } },
    ];
    for (const call of calls) {
      expect(reasonOf(checkConsentProof(res, { ...opts, request: req, expectedAction: call }))).toBe("action_mismatch");
      expect(reasonOf(checkConsentProof(res, { ...opts, expectedAction: call }))).toBe("payload_mismatch");
    }
    expect(reasonOf(checkConsentProof(res, { ...opts, expectedAction: approved }))).toBe("ok");
    const tampered = {
      ...req,
      action: { ...req.action, parameters: { ...req.action.parameters, to: "eve@example.com" } },
    };
    expect(reasonOf(checkConsentProof(res, { ...opts, request: tampered }))).toBe("payload_mismatch");
  });

  it("binds approvals with modifications to the modified parameters", () => {
    const req = sampleRequest();
    const mods = { subject: "hello" };
    const res = sampleResponse(req, { decision: "approved_with_modifications", modifications: mods });
    const approved = { server: "mail", tool: "send_email", parameters: { ...req.action.parameters, subject: "hello" } };
    const v = checkConsentProof(res, { ...opts, request: req, expectedAction: approved });
    expect(reasonOf(v)).toBe("ok");
    if (v.ok) expect(v.value.action).toEqual(approved);
    const original = approvedActionOf(req, null);
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req, expectedAction: original }))).toBe(
      "action_mismatch",
    );
    const swapped = { ...res, modifications: { subject: "other" } };
    expect(reasonOf(checkConsentProof(swapped, { ...opts, request: req }))).toBe("payload_mismatch");
  });

  it("enforces expiry with the injected clock", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const validUntil = Date.parse(res.conditions.valid_until);
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req, now: validUntil - 1 }))).toBe("ok");
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req, now: validUntil }))).toBe("expired");
    expect(reasonOf(checkConsentProof(res, { ...opts, request: req, now: new Date("2027-01-01T00:00:00Z") }))).toBe(
      "expired",
    );
  });

  it("refuses, as malformed, a clock that is not a time (an invalid Date or NaN never passes expiry)", async () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    // a clock that is no time cannot say the approval is still valid: refused before anything else
    const clocks: unknown[] = [
      Number.NaN,
      new Date("not a time"),
      Number.NEGATIVE_INFINITY,
      Infinity,
      "2026-01-15",
      null,
    ];
    for (const now of clocks) {
      const checked = checkConsentProof(res, { ...opts, request: req, now: now as Date });
      expect(reasonOf(checked), String(now)).toBe("malformed");
      if (!checked.ok) expect(checked.issues[0]?.code).toBe("proof_malformed");
      const nonceStore = createMemoryNonceStore();
      expect(reasonOf(await verifyConsentProof(res, { ...opts, request: req, nonceStore, now: now as Date }))).toBe(
        "malformed",
      );
      expect(nonceStore.size).toBe(0);
    }
  });

  it("caps validity at the request's expiry", () => {
    const req = sampleRequest();
    const res = sampleResponse(req, { validForSeconds: 86_400 });
    expect(res.conditions.valid_until).toBe(req.expires_at);
  });

  it("refuses malformed input without throwing", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const bad: unknown[] = [null, 42, "x", [], { ...res, extra: true }, { ...res, proof: null }];
    for (const b of bad) expect(reasonOf(checkConsentProof(b, { ...opts, request: req }))).toBe("malformed");
    expect(reasonOf(checkConsentProof(res, { ...opts }))).toBe("malformed");
    expect(reasonOf(checkConsentProof(res, { ...opts, trustedPublicKey: "ABC" }))).toBe("malformed");
    expect(reasonOf(checkConsentProof(res, { ...opts, request: { ...req, id: "nope" } }))).toBe("malformed");
  });

  it("refuses, without throwing, a response whose signed session id holds a lone surrogate", () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const session = { valid_until: res.conditions.valid_until, single_use: false, scope: "session" } as const;
    const bad = { ...res, conditions: { ...session, session_id: "s\ud800" } };
    expect(reasonOf(checkConsentProof(bad, { ...opts, request: req }))).toBe("malformed");
    const check = checkConsentSignature(bad, `sha256:${"0".repeat(64)}`, TEST_KEY.publicKeyHex);
    expect(check.ok ? "ok" : check.reason).toBe("malformed");
  });

  it("accepts an approval once and refuses the replay", async () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const nonceStore = createMemoryNonceStore();
    expect(reasonOf(await verifyConsentProof(res, { ...opts, request: req, nonceStore }))).toBe("ok");
    expect(reasonOf(await verifyConsentProof(res, { ...opts, request: req, nonceStore }))).toBe("replayed");
    expect(reasonOf(await verifyConsentProof(structuredClone(res), { ...opts, request: req, nonceStore }))).toBe(
      "replayed",
    );
  });

  it("spends nothing for a proof that fails another check", async () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const nonceStore = createMemoryNonceStore();
    const expired = await verifyConsentProof(res, {
      ...opts,
      request: req,
      nonceStore,
      now: new Date("2030-01-01T00:00:00Z"),
    });
    expect(reasonOf(expired)).toBe("expired");
    expect(nonceStore.size).toBe(0);
    expect(reasonOf(await verifyConsentProof(res, { ...opts, request: req, nonceStore }))).toBe("ok");
  });

  it("accepts only a spend the store answers `true` (a store answering anything else spent nothing)", async () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    // e.g. a store handing back its driver's result ({ changes: 0 }: nothing inserted) instead of a boolean
    for (const answer of [{ changes: 0 }, 1, "true", undefined, null]) {
      const store = { spend: (): boolean => answer as unknown as boolean };
      const v = await verifyConsentProof(res, { ...opts, request: req, nonceStore: store });
      expect(reasonOf(v), JSON.stringify(answer)).toBe("replayed");
    }
    const honest = { spend: (): Promise<boolean> => Promise.resolve(true) };
    expect(reasonOf(await verifyConsentProof(res, { ...opts, request: req, nonceStore: honest }))).toBe("ok");
  });

  it("refuses when the nonce store fails (fail closed)", async () => {
    const req = sampleRequest();
    const res = sampleResponse(req);
    const broken = {
      spend: (): Promise<boolean> => Promise.reject(new Error("disk full")),
    };
    const v = await verifyConsentProof(res, { ...opts, request: req, nonceStore: broken });
    expect(v.ok).toBe(false);
  });
});

function signedFixture(): { req: ReturnType<typeof sampleRequest>; res: ConsentResponseV02; text: string } {
  const req = sampleRequest();
  const res = sampleResponse(req, { decision: "approved_with_modifications", modifications: { subject: "x" } });
  return { req, res, text: JSON.stringify(res) };
}

describe("tamper evidence (property)", () => {
  const { req, res, text } = signedFixture();
  const bytes = Buffer.from(text, "utf8");
  // §6.2 does not sign `approver` (who answered, through which channel); a change there is not detectable
  // by the signature. Every other byte of the response is covered.
  const approverStart = text.indexOf('"approver":');
  const approverEnd = text.indexOf("}", approverStart) + 1;

  it("fails verification for any single-byte change to a signed response outside `approver`", () => {
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.integer({ min: 1, max: 255 }), (pos, delta) => {
        fc.pre(pos < approverStart || pos >= approverEnd);
        const mutated = Buffer.from(bytes);
        mutated[pos] = ((mutated[pos] ?? 0) + delta) % 256;
        let parsed: unknown;
        try {
          parsed = JSON.parse(mutated.toString("utf8"));
        } catch {
          return; // not JSON any more: nothing to accept
        }
        expect(checkConsentProof(parsed, { ...opts, request: req }).ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("fails signature verification for any single-byte change to the payload bytes", () => {
    const payload = signingPayloadBytes(signingPayloadOf(res, approvedActionOf(req, res.modifications)));
    const sig = Buffer.from(res.proof.signature, "hex");
    expect(edVerify(null, payload, TEST_KEY.publicKey, sig)).toBe(true);
    fc.assert(
      fc.property(fc.nat(payload.length - 1), fc.integer({ min: 1, max: 255 }), (pos, delta) => {
        const mutated = Buffer.from(payload);
        mutated[pos] = ((mutated[pos] ?? 0) + delta) % 256;
        expect(edVerify(null, mutated, TEST_KEY.publicKey, sig)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});
