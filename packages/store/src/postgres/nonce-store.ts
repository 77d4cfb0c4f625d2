import type { NonceStore } from "@acp/core";
import type { PostgresStore } from "./open-postgres-store.js";
import { assertStorableText, PostgresStoreError } from "./postgres-store-error.js";
import { SPENT_NONCE_PRUNE_BATCH, SPENT_NONCE_SWEEP_BATCH, spentNonceCutoff } from "../nonce/retention.js";

/** The PostgreSQL nonce store answers asynchronously. */
export interface PostgresNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): Promise<boolean>;
  /** Whether a nonce has been spent (on any node). */
  isSpent(nonce: string): Promise<boolean>;
  /**
   * Deletes (at most `limit`, default `SPENT_NONCE_SWEEP_BATCH`) nonces whose approvals ended, and that were
   * spent, more than `SPENT_NONCE_KEEP_MS` before `nowMs` and that no `pending_consent` row carries (`nonce/retention.ts`);
   * returns how many. Every spend does the same for up to `SPENT_NONCE_PRUNE_BATCH` first; `acp serve`'s
   * expiry sweep calls it every minute on every node. Sweepers on several nodes never wait for each other
   * (`FOR UPDATE SKIP LOCKED`): each nonce is deleted by one of them.
   */
  prune(nowMs: number, limit?: number): Promise<number>;
}

/** The oldest nonces past the cutoff that no consent row carries, that no other sweeper holds. */
const PRUNE = `DELETE FROM spent_nonces WHERE nonce IN (
  SELECT n.nonce FROM spent_nonces n
  WHERE n.expires_at_ms < $1 AND n.spent_at_ms < $1
    AND NOT EXISTS (SELECT 1 FROM pending_consent p WHERE p.nonce = n.nonce)
  ORDER BY n.expires_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/** Options of {@link createPostgresNonceStore}. */
export interface PostgresNonceStoreOptions {
  /** The clock recorded as `spent_at_ms` and that a spend prunes by (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A {@link NonceStore} shared by every node on the database: `spend` is one
 * `INSERT … ON CONFLICT DO NOTHING` on the nonce's primary key, so of any number of concurrent spends
 * of one nonce, on any nodes, exactly one returns true, and it is committed before it returns. Each spend
 * first prunes a few nonces nobody can use any more (see {@link PostgresNonceStore.prune}).
 */
export function createPostgresNonceStore(
  store: PostgresStore,
  options: PostgresNonceStoreOptions = {},
): PostgresNonceStore {
  const now = options.now ?? Date.now;
  const prune = async (nowMs: number, limit: number): Promise<number> =>
    (await store.query(PRUNE, [spentNonceCutoff(Math.floor(nowMs)), Math.max(1, Math.floor(limit))])).rowCount ?? 0;
  return {
    async spend(nonce, requestId, expiresAtMs) {
      assertStorableText(nonce, "nonce store: nonce");
      assertStorableText(requestId, "nonce store: request id");
      if (!Number.isFinite(expiresAtMs))
        throw new PostgresStoreError("postgres_input_invalid", "nonce store: invalid expiry");
      const nowMs = Math.floor(now());
      await prune(nowMs, SPENT_NONCE_PRUNE_BATCH);
      const result = await store.query(
        `INSERT INTO spent_nonces (nonce, request_id, expires_at_ms, spent_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (nonce) DO NOTHING`,
        [nonce, requestId, Math.floor(expiresAtMs), nowMs],
      );
      return result.rowCount === 1;
    },
    async isSpent(nonce) {
      if (typeof nonce !== "string" || nonce.includes("\u0000")) return false;
      return (await store.query("SELECT 1 FROM spent_nonces WHERE nonce = $1", [nonce])).rowCount === 1;
    },
    prune: (nowMs, limit = SPENT_NONCE_SWEEP_BATCH) => prune(nowMs, limit),
  };
}
