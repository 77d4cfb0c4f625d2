/**
 * Signing and verifying the broker's consent responses with the service's Ed25519 key (§6.2): the
 * payload binds the action as approved (server, tool, the real arguments with modifications).
 */
import { sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import {
  signedPayloadHash,
  signingPayloadBytes,
  signingPayloadOf,
  type ApprovedAction,
  type ConsentResponseV02 as CoreResponse,
  type ConsentSigningPayloadV02,
  type NonceStore,
} from "@acp/core";
import type {
  ConsentRequestV02,
  SignConsentResponse,
  UnsignedConsentResponseV02,
  VerifyConsentResponse,
} from "@acp/proxy";

/** The key pair the service signs with. */
export interface ServiceKeyPair {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly publicKeyHex: string;
  /** The pair lives only as long as this process (a home without keys): it made no earlier signature. */
  readonly ephemeral?: boolean;
}

/**
 * The §6.2 payload, built by the core (`signingPayloadOf`): a reusable scope is signed too, so the response
 * verifies with `acp proof verify` and `acp audit verify` (`metadata.consent_action`) as the proxy's do.
 */
function payloadOf(
  response: UnsignedConsentResponseV02,
  request: ConsentRequestV02,
  args: Readonly<Record<string, unknown>>,
): ConsentSigningPayloadV02 {
  const parameters = response.modifications === null ? args : { ...args, ...response.modifications };
  const { server, tool } = request.action;
  return signingPayloadOf(response as unknown as Omit<CoreResponse, "proof">, {
    server,
    tool,
    parameters: parameters as ApprovedAction["parameters"],
  });
}

/**
 * The broker's `sign` and `verify` on one key pair. With `nonces`, a response that verifies spends its
 * nonce there (durably, on every node sharing the store): the same approval is accepted once only.
 */
export function createConsentProofs(
  keys: ServiceKeyPair,
  nonces?: NonceStore,
): {
  readonly sign: SignConsentResponse;
  readonly verify: VerifyConsentResponse;
} {
  return {
    sign: ({ response: given, request, arguments: args }) => {
      // a denial's reason is no field of the signed response (§4.2): the broker carries it beside the
      // response, and a response holding it would not verify with the public key alone (acp audit verify)
      const { reason: _reason, ...response } = given as typeof given & { reason?: unknown };
      void _reason;
      const bytes = signingPayloadBytes(payloadOf(response, request, args));
      const signature = edSign(null, bytes, keys.privateKey).toString("hex");
      return {
        ...response,
        proof: {
          algorithm: "Ed25519",
          public_key: keys.publicKeyHex,
          signature,
          signed_payload_hash: signedPayloadHash(bytes),
        },
      };
    },
    verify: async ({ response, request, arguments: args, now }) => {
      const { proof, ...unsigned } = response;
      if (proof.public_key !== keys.publicKeyHex) return false;
      const bytes = signingPayloadBytes(payloadOf(unsigned, request, args));
      if (proof.signed_payload_hash !== signedPayloadHash(bytes)) return false;
      if (!edVerify(null, bytes, keys.publicKey, Buffer.from(proof.signature, "hex"))) return false;
      const validUntil = Date.parse(response.conditions.valid_until);
      // bound to the request it answers (§6.3 4): its id as well as its nonce
      if (response.request_id !== request.id || response.nonce !== request.nonce) return false;
      if (!(validUntil > now.getTime())) return false;
      return nonces === undefined || (await nonces.spend(response.nonce, response.request_id, validUntil));
    },
  };
}
