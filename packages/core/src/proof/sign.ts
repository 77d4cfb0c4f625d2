import { sign as edSign } from "node:crypto";
import {
  CONSENT_PROTOCOL_VERSION,
  type ApprovedAction,
  type ConsentApproverV02,
  type ConsentDecisionV02,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type JsonObject,
} from "../consent/index.js";
import type { Ed25519KeyPair } from "./keys.js";
import { approvedActionOf, signedPayloadHash, signingPayloadBytes, signingPayloadOf } from "./payload.js";

/** A human's answer to a consent request, before it is signed. */
export interface ConsentAnswer {
  readonly request: ConsentRequestV02;
  readonly decision: ConsentDecisionV02;
  readonly approver: ConsentApproverV02;
  /** Parameter overrides; required for `approved_with_modifications`, otherwise omitted or null. */
  readonly modifications?: JsonObject | null;
  /** How long the approval may be used, in seconds from now; capped by the request's `expires_at`. */
  readonly validForSeconds: number;
}

/**
 * Signs an answer into a §4.2 consent response: builds the §6.2 payload bound to the approved action,
 * signs the UTF-8 bytes of its JCS form with Ed25519 and attaches the proof. The clock is injected.
 */
export function signConsentResponse(
  answer: ConsentAnswer,
  signer: Pick<Ed25519KeyPair, "privateKey" | "publicKeyHex">,
  deps: { readonly now: () => Date },
): ConsentResponseV02 {
  const { privateKey } = signer;
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") {
    throw new TypeError("signing needs an ed25519 private key");
  }
  const modifications = answer.modifications ?? null;
  if ((answer.decision === "approved_with_modifications") !== (modifications !== null)) {
    throw new RangeError("modifications are given exactly when the decision is `approved_with_modifications`");
  }
  const now = deps.now().getTime();
  const requestExpiry = Date.parse(answer.request.expires_at);
  const validUntil = Math.min(
    now + answer.validForSeconds * 1000,
    Number.isFinite(requestExpiry) ? requestExpiry : now,
  );
  const unsigned: Omit<ConsentResponseV02, "proof"> = {
    type: "consent_response",
    version: CONSENT_PROTOCOL_VERSION,
    request_id: answer.request.id,
    timestamp: new Date(now).toISOString(),
    decision: answer.decision,
    approver: { ...answer.approver },
    modifications,
    conditions: { valid_until: new Date(validUntil).toISOString(), single_use: true },
    nonce: answer.request.nonce,
  };
  return signResponseFor(unsigned, approvedActionOf(answer.request, modifications), signer);
}

/**
 * Signs an already-built response (§4.2 without `proof`) bound to `action`, the exact action as approved
 * (modifications applied). For front ends that build the response themselves, e.g. with an approval scope
 * or with parameters the request only showed redacted.
 */
export function signResponseFor(
  unsigned: Omit<ConsentResponseV02, "proof">,
  action: ApprovedAction,
  signer: Pick<Ed25519KeyPair, "privateKey" | "publicKeyHex">,
): ConsentResponseV02 {
  const { privateKey } = signer;
  if (privateKey.type !== "private" || privateKey.asymmetricKeyType !== "ed25519") {
    throw new TypeError("signing needs an ed25519 private key");
  }
  const bytes = signingPayloadBytes(signingPayloadOf(unsigned, action));
  const signature = edSign(null, bytes, privateKey);
  return {
    ...unsigned,
    proof: {
      algorithm: "Ed25519",
      public_key: signer.publicKeyHex,
      signature: signature.toString("hex"),
      signed_payload_hash: signedPayloadHash(bytes),
    },
  };
}
