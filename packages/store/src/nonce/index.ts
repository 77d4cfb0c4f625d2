/** The durable spent-nonce store: consent approvals are single use, also across restarts. */
export {
  createSqliteNonceStore,
  NONCE_MIGRATIONS,
  type NonceSpend,
  type SqliteNonceStore,
  type SqliteNonceStoreOptions,
} from "./sqlite-nonce-store.js";
export {
  SPENT_NONCE_KEEP_MS,
  SPENT_NONCE_PRUNE_BATCH,
  SPENT_NONCE_SWEEP_BATCH,
  spentNonceCutoff,
} from "./retention.js";
export {
  ATTESTATION_NONCE_PREFIX,
  ATTESTATION_REQUEST_ID,
  attestationNonce,
  createNonceAttestationLedger,
} from "./attestation-ledger.js";
