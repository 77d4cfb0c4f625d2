/**
 * Signing and verifying the broker's consent responses with the service's Ed25519 key (§6.2): the
 * payload binds the action as approved (server, tool, the real arguments with modifications).
 */
import { sign as edSign, type KeyObject } from "node:crypto";
import {
  createMemoryNonceStore,
  signedPayloadHash,
  signingPayloadBytes,
  signingPayloadOf,
  verifyConsentProof,
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
  return signingPayloadOf(response as unknown as Omit<CoreResponse, "proof">, approvedAction(response, request, args));
}

/** The action as approved: the request's server and tool, the real arguments with the person's modifications. */
function approvedAction(
  response: Pick<UnsignedConsentResponseV02, "modifications">,
  request: ConsentRequestV02,
  args: Readonly<Record<string, unknown>>,
): ApprovedAction {
  const parameters = response.modifications === null ? args : { ...args, ...response.modifications };
  const { server, tool } = request.action;
  return { server, tool, parameters: parameters as ApprovedAction["parameters"] };
}

/**
 * `nonces` as the core's verifier spends in, keeping a failure of the store: the core refuses such a proof
 * (`replayed`); the service rethrows it, so the broker says the answer could not be checked and a completion
 * fails as the store did, rather than saying the nonce was spent.
 */
function spendingIn(nonces: NonceStore): { readonly store: NonceStore; readonly failure: () => Error | undefined } {
  let failed: Error | undefined;
  const store: NonceStore = {
    spend: async (nonce, requestId, expiresAtMs) => {
      try {
        return await nonces.spend(nonce, requestId, expiresAtMs);
      } catch (error) {
        failed = error instanceof Error ? error : new Error("the nonce store failed", { cause: error });
        throw error;
      }
    },
    ...(nonces.forgottenThrough !== undefined ? { forgottenThrough: () => nonces.forgottenThrough?.() } : {}),
  };
  return { store, failure: () => failed };
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
    // the proxy's verifier (core's verifyConsentProof), bound as acp proxy binds it (§6.3 4, 5): the request's
    // parameters may show redacted, so the approved action is the real arguments with the modifications, and
    // `answers` binds the response to the request's id and nonce, an answer given by its `expires_at`, and a
    // single-use approval ending with it. A response that verifies spends its nonce (none kept without `nonces`)
    verify: async ({ response, request, arguments: args, now }) => {
      const spending = spendingIn(nonces ?? createMemoryNonceStore());
      const verdict = await verifyConsentProof(response, {
        expectedAction: approvedAction(response, request, args),
        answers: request,
        trustedPublicKey: keys.publicKeyHex,
        now,
        nonceStore: spending.store,
      });
      const failure = spending.failure();
      if (!verdict.ok && failure !== undefined) throw failure;
      return verdict.ok;
    },
  };
}
