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
   * expiry sweep calls it every minute on every node. Sweepers on several nodes never wait for each other's
   * rows (`FOR UPDATE SKIP LOCKED`): each nonce is deleted by one of them. The same statement raises the
   * mark ({@link PostgresNonceStore.forgottenThrough}) to the latest approval end it deleted.
   */
  prune(nowMs: number, limit?: number): Promise<number>;
  /** The latest approval end whose nonce a prune deleted (`spent_nonces_forgotten`), if any. */
  forgottenThrough(): Promise<number | undefined>;
}

/**
 * The oldest nonces past the cutoff that no consent row carries, that no other sweeper holds; with them,
 * in the same statement (one transaction), the mark is raised to the latest approval end deleted.
 */
const PRUNE = `WITH gone AS (
  DELETE FROM spent_nonces WHERE nonce IN (
    SELECT n.nonce FROM spent_nonces n
    WHERE n.expires_at_ms < $1 AND n.spent_at_ms < $1
      AND NOT EXISTS (SELECT 1 FROM pending_consent p WHERE p.nonce = n.nonce)
    ORDER BY n.expires_at_ms LIMIT $2 FOR UPDATE SKIP LOCKED)
  RETURNING expires_at_ms),
mark AS (
  INSERT INTO spent_nonces_forgotten (one, expires_at_ms)
  SELECT 1, max(expires_at_ms) FROM gone HAVING count(*) > 0
  ON CONFLICT (one) DO UPDATE
    SET expires_at_ms = GREATEST(spent_nonces_forgotten.expires_at_ms, excluded.expires_at_ms))
SELECT count(*)::int AS n FROM gone`;

const READ_MARK = "SELECT expires_at_ms::text AS at FROM spent_nonces_forgotten WHERE one = 1";

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
 *
 * A node whose clock runs ahead prunes nonces of approvals that are valid again on the others (or on it,
 * once its clock is set right), so after inserting, a spend reads the mark the prunes keep and refuses
 * (false) a nonce whose approval ended no later. Reading it after the insert closes the race with a prune
 * deleting that very nonce: the insert waits for such a prune to commit, so the read sees its mark.
 */
export function createPostgresNonceStore(
  store: PostgresStore,
  options: PostgresNonceStoreOptions = {},
): PostgresNonceStore {
  const now = options.now ?? Date.now;
  const prune = async (nowMs: number, limit: number): Promise<number> =>
    (await store.query<{ n: number }>(PRUNE, [spentNonceCutoff(Math.floor(nowMs)), Math.max(1, Math.floor(limit))]))
      .rows[0]?.n ?? 0;
  const forgottenThrough = async (): Promise<number | undefined> => {
    const at = (await store.query<{ at: string }>(READ_MARK)).rows[0]?.at;
    return at === undefined ? undefined : Number(at);
  };
  return {
    async spend(nonce, requestId, expiresAtMs) {
      assertStorableText(nonce, "nonce store: nonce");
      assertStorableText(requestId, "nonce store: request id");
      if (!Number.isFinite(expiresAtMs))
        throw new PostgresStoreError("postgres_input_invalid", "nonce store: invalid expiry");
      const nowMs = Math.floor(now());
      await prune(nowMs, SPENT_NONCE_PRUNE_BATCH);
      const expires = Math.floor(expiresAtMs);
      const result = await store.query(
        `INSERT INTO spent_nonces (nonce, request_id, expires_at_ms, spent_at_ms) VALUES ($1, $2, $3, $4)
         ON CONFLICT (nonce) DO NOTHING`,
        [nonce, requestId, expires, nowMs],
      );
      if (result.rowCount !== 1) return false;
      const mark = await forgottenThrough();
      return mark === undefined || expires > mark;
    },
    async isSpent(nonce) {
      if (typeof nonce !== "string" || nonce.includes("\u0000")) return false;
      return (await store.query("SELECT 1 FROM spent_nonces WHERE nonce = $1", [nonce])).rowCount === 1;
    },
    prune: (nowMs, limit = SPENT_NONCE_SWEEP_BATCH) => prune(nowMs, limit),
    forgottenThrough,
  };
}
