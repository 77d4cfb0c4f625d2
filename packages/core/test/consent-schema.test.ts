import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import { validateConsentRequest, validateConsentResponse } from "../src/index.js";
import { sampleRequest, sampleResponse } from "./proof-fixtures.js";

function schema(name: string): object {
  const path = fileURLToPath(new URL(`../../../spec/schemas/${name}`, import.meta.url));
  return JSON.parse(readFileSync(path, "utf8")) as object;
}

const ajv = new Ajv2020({ strict: true, allErrors: true });
const requestSchema = ajv.compile(schema("consent-request.schema.json"));
const responseSchema = ajv.compile(schema("consent-response.schema.json"));

describe("spec/schemas agree with the validators", () => {
  const req = sampleRequest();
  const res = sampleResponse(req);
  const modified = sampleResponse(req, { decision: "approved_with_modifications", modifications: { subject: "x" } });

  it("accept what the builders produce", () => {
    expect(requestSchema(req)).toBe(true);
    expect(responseSchema(res)).toBe(true);
    expect(responseSchema(modified)).toBe(true);
  });

  it("refuse the same malformed requests", () => {
    const cases: unknown[] = [
      { ...req, extra: 1 },
      { ...req, id: "xx_1" },
      { ...req, nonce: req.nonce.toUpperCase() },
      { ...req, timestamp: "2026-01-15 12:00" },
      { ...req, action: { ...req.action, risk_level: "extreme" } },
      { ...req, agent: { ...req.agent, extra: 1 } },
      { ...req, version: "0.1.0" },
    ];
    for (const [i, c] of cases.entries()) {
      expect([requestSchema(c), validateConsentRequest(c).ok], `case ${i}`).toEqual([false, false]);
    }
  });

  it("refuse the same malformed responses", () => {
    const cases: unknown[] = [
      { ...res, extra: 1 },
      { ...res, proof: { ...res.proof, extra: 1 } },
      { ...res, proof: { ...res.proof, signature: res.proof.signature.toUpperCase() } },
      { ...res, proof: { ...res.proof, public_key: res.proof.public_key.slice(1) } },
      {
        ...res,
        proof: { ...res.proof, signed_payload_hash: res.proof.signed_payload_hash.replace("sha256:", "SHA256:") },
      },
      { ...res, conditions: { ...res.conditions, single_use: false } },
      { ...res, modifications: { a: 1 } },
      { ...modified, modifications: null },
      { ...res, approver: { id: "a", channel: "sms" } },
    ];
    for (const [i, c] of cases.entries()) {
      expect([responseSchema(c), validateConsentResponse(c).ok], `case ${i}`).toEqual([false, false]);
    }
  });
});
