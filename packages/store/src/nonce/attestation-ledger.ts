/**
 * The trusted-channel attestations already used, kept in the spent-nonce table (`spent_nonces`, SQLite
 * `state.db` or PostgreSQL): an attestation is single use as an approval is, so it is spent as a nonce is.
 * Every process and node on the same state spends from one table, and the table's primary key lets exactly
 * one of any number of concurrent uses of one attestation through. An attestation is kept as long as the
 * nonce store keeps any nonce past its end (a day after its expiry, `SPENT_NONCE_KEEP_MS`), and pruned with
 * the nonces (`prune`, and a few on every spend): longer than `createMemoryAttestationLedger` keeps it, which
 * only refuses what the clock-skew window refuses anyway.
 */
import { createHash } from "node:crypto";
import type { AttestationLedger, NonceStore } from "@acp/core";

/** How an attestation's nonce begins: no consent nonce (`n_` and a UUID) does. */
export const ATTESTATION_NONCE_PREFIX = "attestation:sha256:";

/** The `request_id` recorded beside an attestation's nonce (an attestation belongs to no consent request). */
export const ATTESTATION_REQUEST_ID = "trusted-channel";

/**
 * The nonce an attestation key (`attestationKey`: key id and HMAC) is spent as: the prefix and the SHA-256 of
 * the key in hex, so a key id of any length or bytes (a NUL, which PostgreSQL text refuses) fits the table.
 */
export function attestationNonce(key: string): string {
  return `${ATTESTATION_NONCE_PREFIX}${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

/**
 * An {@link AttestationLedger} on a spent-nonce store: `use` spends the attestation's nonce until `expiresAt`
 * and is true only for the spend that recorded it. It answers as the store does (synchronously on SQLite,
 * asynchronously on PostgreSQL); a store that throws or rejects makes the graph refuse the attestation.
 */
export function createNonceAttestationLedger(nonces: NonceStore): AttestationLedger {
  return {
    use(key, expiresAt) {
      const expiresAtMs = expiresAt.getTime();
      if (!Number.isFinite(expiresAtMs)) throw new RangeError("attestation ledger: invalid expiry");
      return nonces.spend(attestationNonce(key), ATTESTATION_REQUEST_ID, expiresAtMs);
    },
  };
}
