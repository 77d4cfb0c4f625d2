/** Ed25519 consent proofs (§6): the signing payload, signing, and verification that cannot be replayed. */
export {
  ed25519KeyPairFromSeed,
  generateEd25519Seed,
  publicKeyFromHex,
  publicKeyToHex,
  publicKeyHexToPem,
  ED25519_KEY_BYTES,
  type Ed25519KeyPair,
} from "./keys.js";
export {
  actionHash,
  approvedActionOf,
  signingPayloadOf,
  signingPayloadBytes,
  signedPayloadHash,
  type ConsentSigningPayloadV02,
} from "./payload.js";
export { signConsentResponse, signResponseFor, type ConsentAnswer } from "./sign.js";
export {
  checkConsentProof,
  checkConsentSignature,
  verifyConsentProof,
  type ConsentRequestBinding,
  type ConsentSignatureCheck,
  PROOF_FAILURE_REASONS,
  type ProofFailureReason,
  type ProofVerification,
  type VerifiedConsent,
  type VerifyProofOptions,
} from "./verify.js";
export { MAX_SESSION_APPROVAL_MS, MAX_WINDOW_APPROVAL_MS } from "./approval-caps.js";
export { createMemoryNonceStore, MEMORY_NONCE_LIMIT, type NonceStore, type MemoryNonceStore } from "./nonce-store.js";
