import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  approvedActionOf,
  canonicalJson,
  checkConsentProof,
  ed25519KeyPairFromSeed,
  sha256Ref,
  signConsentResponse,
  signingPayloadBytes,
  signingPayloadOf,
  type ConsentRequestV02,
  type ConsentResponseV02,
} from "../src/index.js";

const doc = readFileSync(fileURLToPath(new URL("../../../docs/reference/consent-proof.md", import.meta.url)), "utf8");
const example = doc.slice(doc.indexOf("## Worked example"));

/** The fenced blocks of the worked example, in order. */
function blocks(lang: string): string[] {
  return [...example.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => (m[1] ?? "").trimEnd());
}

describe("docs/reference/consent-proof.md worked example", () => {
  const seed = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
  const key = ed25519KeyPairFromSeed(seed);
  const bundleText = blocks("json").find((b) => b.includes('"consent_response"')) ?? "";
  const { request, response } = JSON.parse(bundleText) as { request: ConsentRequestV02; response: ConsentResponseV02 };
  const text = blocks("text");

  it("uses the RFC 8032 test-1 key and a response that verifies inside its window", () => {
    expect(key.publicKeyHex).toBe("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    const v = checkConsentProof(response, {
      request,
      trustedPublicKey: key.publicKeyHex,
      now: new Date("2026-01-15T12:01:00Z"),
    });
    expect(v.ok).toBe(true);
  });

  it("prints the exact action JCS, action hash, payload bytes and signature", () => {
    const action = approvedActionOf(request, null);
    const payload = signingPayloadBytes(signingPayloadOf(response, action));
    const payloadText = Buffer.from(payload).toString("utf8");
    expect(text).toContain(canonicalJson(action));
    expect(text).toContain(sha256Ref(canonicalJson(action)));
    expect(text).toContain(payloadText);
    expect(example).toContain(`these exact ${payload.length} bytes`);
    expect(response.proof.signed_payload_hash).toBe(sha256Ref(payload));
    const resigned = signConsentResponse(
      { request, decision: "approved", approver: response.approver, validForSeconds: 120 },
      key,
      { now: () => new Date(response.timestamp) },
    );
    expect(resigned).toEqual(response);
  });

  it("feeds openssl the same payload, key and signature", () => {
    const sh = blocks("sh").join("\n");
    const payloadText = Buffer.from(
      signingPayloadBytes(signingPayloadOf(response, approvedActionOf(request, null))),
    ).toString("utf8");
    expect(sh).toContain(`printf '%s' '${payloadText}' > payload.json`);
    expect(sh).toContain(`printf '%s' ${response.proof.signature} | xxd -r -p > signature.bin`);
    expect(sh).toContain(`302a300506032b6570032100 ${response.proof.public_key}`);
    expect(sh).toContain(`SHA2-256(payload.json)= ${response.proof.signed_payload_hash.slice(7)}`);
  });
});
