import type { NonceStore } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";
import { assertStorableText, PostgresStoreError } from "./postgres-store-error.js";

/** The PostgreSQL nonce store answers asynchronously. */
export interface PostgresNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): Promise<boolean>;
  /** Whether a nonce has been spent (on any node). */
  isSpent(nonce: string): Promise<boolean>;
  /**
   * Deletes nonces whose approvals expired before `nowMs` (expiry refuses them anyway); returns how many.
   * Nothing calls it yet. Whoever does must keep a nonce longer than its consent row (settled rows stay a
   * day after the request expired, `SETTLED_CONSENT_KEEP_MS`): `acp serve`'s expiry sweep and
   * `POST /v1/consent/{id}/complete` tell an answer a call used from one nobody used by its spent nonce, so
   * pruning earlier would have an answered request concluded (and recorded) a second time.
   */
  prune(nowMs: number): Promise<number>;
}

/** Options of {@link createPostgresNonceStore}. */
export interface PostgresNonceStoreOptions {
  /** The clock recorded as `spent_at_ms` (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A {@link NonceStore} shared by every node on the database: `spend` is one
 * `INSERT … ON CONFLICT DO NOTHING` on the nonce's primary key, so of any number of concurrent spends
 * of one nonce, on any nodes, exactly one returns true, and it is committed before it returns.
 */
export function createPostgresNonceStore(
  store: PostgresStore,
  options: PostgresNonceStoreOptions = {},
): PostgresNonceStore {
  const now = options.now ?? Date.now;
  return {
    async spend(nonce, requestId, expiresAtMs) {
      assertStorableText(nonce, "nonce store: nonce");
      assertStorableText(requestId, "nonce store: request id");
      if (!Number.isFinite(expiresAtMs))
        throw new PostgresStoreError("postgres_input_invalid", "nonce store: invalid expiry");
      const result = await store.query(
        `INSERT INTO spent_nonces (nonce, request_id, expires_at_ms, spent_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (nonce) DO NOTHING`,
        [nonce, requestId, Math.floor(expiresAtMs), Math.floor(now())],
      );
      return result.rowCount === 1;
    },
    async isSpent(nonce) {
      if (typeof nonce !== "string" || nonce.includes("\u0000")) return false;
      return (await store.query("SELECT 1 FROM spent_nonces WHERE nonce = $1", [nonce])).rowCount === 1;
    },
    async prune(nowMs) {
      return (
        (await store.query("DELETE FROM spent_nonces WHERE expires_at_ms < $1", [Math.floor(nowMs)])).rowCount ?? 0
      );
    },
  };
}
