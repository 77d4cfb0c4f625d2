import { describe, expect, it } from "vitest";
import {
  createNonce,
  createRequestId,
  parseIsoTime,
  validateConsentRequest,
  validateConsentResponse,
} from "../src/index.js";
import { sampleRequest, sampleResponse } from "./proof-fixtures.js";

describe("consent requests (§4.1)", () => {
  it("builds ids `cr_…` and nonces `n_<uuid>` from the injected randomness and clock", () => {
    const req = sampleRequest();
    expect(req.id).toMatch(/^cr_[0-9a-f]{32}$/);
    expect(req.nonce).toMatch(/^n_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(req.timestamp).toBe("2026-01-15T12:00:00.000Z");
    expect(req.expires_at).toBe("2026-01-15T12:05:00.000Z");
    expect(createRequestId({ randomUUID: () => "ABCDEF00-0000-4000-8000-000000000001" })).toBe(
      "cr_abcdef00000040008000000000000001",
    );
    expect(createNonce({ randomUUID: () => "ABCDEF00-0000-4000-8000-000000000001" })).toBe(
      "n_abcdef00-0000-4000-8000-000000000001",
    );
  });

  it("accepts a built request and refuses unknown or missing fields", () => {
    const req = sampleRequest();
    expect(validateConsentRequest(req).ok).toBe(true);
    const extra = validateConsentRequest({ ...req, extra: 1 });
    expect(extra.ok).toBe(false);
    if (!extra.ok) expect(extra.issues[0]?.message).toBe("`extra`: unknown field");
    const missing: Record<string, unknown> = { ...req };
    delete missing["nonce"];
    expect(validateConsentRequest(missing).ok).toBe(false);
    expect(validateConsentRequest({ ...req, action: { ...req.action, risk_level: "extreme" } }).ok).toBe(false);
    expect(validateConsentRequest({ ...req, timestamp: "yesterday" }).ok).toBe(false);
    expect(validateConsentRequest({ ...req, nonce: req.nonce.toUpperCase() }).ok).toBe(false);
    expect(validateConsentRequest("not an object").ok).toBe(false);
  });
});

describe("times (RFC 3339 with a zone)", () => {
  it("refuse a date or time that does not exist, which Date.parse would roll over to another instant", () => {
    for (const t of [
      "2026-02-30T00:00:00Z", // Date.parse: 2 March
      "2026-02-29T00:00:00Z", // 2026 is no leap year
      "2026-04-31T12:00:00Z",
      "2026-01-15T24:00:00Z", // Date.parse: the next day
      "2026-00-10T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-01-00T00:00:00Z",
      "2026-01-15T12:60:00Z",
      "2026-01-15T12:00:00+24:00",
      "2026-01-15T12:00:00+05:60",
    ]) {
      expect(parseIsoTime(t), t).toBeUndefined();
      expect(validateConsentRequest({ ...sampleRequest(), expires_at: t }).ok, t).toBe(false);
    }
    expect(parseIsoTime("2028-02-29T23:59:59.999Z")).toBe(Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    expect(parseIsoTime("2000-02-29T00:00:00Z")).toBe(Date.UTC(2000, 1, 29));
    expect(parseIsoTime("1900-02-29T00:00:00Z")).toBeUndefined();
    expect(parseIsoTime("2026-01-15T12:00:00+23:59")).toBe(Date.UTC(2026, 0, 14, 12, 1));
    expect(parseIsoTime("2026-12-31T23:59:59-00:30")).toBe(Date.UTC(2027, 0, 1, 0, 29, 59));
  });
});

describe("strings that could not be signed or hashed", () => {
  it("refuse a lone surrogate in any string of a request or response, as an issue (it is no I-JSON, RFC 8785 §3.2.2.2)", () => {
    const req = sampleRequest();
    const requests: unknown[] = [
      { ...req, agent: { ...req.agent, id: "a\ud800" } },
      { ...req, action: { ...req.action, description: "\udc00" } },
      { ...req, action: { ...req.action, tool: "send\ud83d" } },
      { ...req, policy: { ...req.policy, rule_name: "r\udfff" } },
    ];
    for (const [i, r] of requests.entries()) {
      const v = validateConsentRequest(r);
      expect(v.ok, `request ${i}`).toBe(false);
      if (!v.ok) expect(v.issues[0]?.code).toBe("consent_request_malformed");
    }
    const res = sampleResponse(req);
    const session = { valid_until: res.conditions.valid_until, single_use: false, scope: "session" } as const;
    const responses: unknown[] = [
      { ...res, conditions: { ...session, session_id: "s\ud800" } },
      { ...res, approver: { ...res.approver, id: "\udc00alice" } },
    ];
    for (const [i, r] of responses.entries()) {
      const v = validateConsentResponse(r);
      expect(v.ok, `response ${i}`).toBe(false);
      if (!v.ok) expect(v.issues[0]?.code).toBe("proof_malformed");
    }
    // a well-formed pair of surrogates is one character, and fine
    expect(validateConsentRequest({ ...req, agent: { ...req.agent, name: "robot \ud83e\udd16" } }).ok).toBe(true);
  });
});

describe("consent responses (§4.2)", () => {
  it("accepts a signed response and refuses upper-case hex, wrong lengths and extra proof fields", () => {
    const res = sampleResponse(sampleRequest());
    expect(validateConsentResponse(res).ok).toBe(true);
    const cases: unknown[] = [
      { ...res, proof: { ...res.proof, signature: res.proof.signature.toUpperCase() } },
      { ...res, proof: { ...res.proof, public_key: res.proof.public_key.slice(2) } },
      { ...res, proof: { ...res.proof, signed_payload_hash: res.proof.signed_payload_hash.toUpperCase() } },
      { ...res, proof: { ...res.proof, algorithm: "ed25519" } },
      { ...res, proof: { ...res.proof, note: "x" } },
      { ...res, conditions: { ...res.conditions, single_use: false } },
      { ...res, decision: "maybe" },
      { ...res, decision: "approved_with_modifications" },
      { ...res, modifications: { to: "eve@example.com" } },
      { ...res, approver: { ...res.approver, channel: "carrier pigeon" } },
      { ...res, version: "0.1.0" },
    ];
    for (const [i, c] of cases.entries()) {
      const r = validateConsentResponse(c);
      expect(r.ok, `case ${i}`).toBe(false);
      if (!r.ok) expect(r.issues[0]?.code).toBe("proof_malformed");
    }
  });
});
