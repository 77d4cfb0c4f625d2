import type { Database } from "better-sqlite3";
import type { NonceStore } from "@acp/core";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";
import { ensurePendingConsentSchema } from "../pending/schema.js";
import { SPENT_NONCE_PRUNE_BATCH, SPENT_NONCE_SWEEP_BATCH, spentNonceCutoff } from "./retention.js";

/** The spent-nonce table: a nonce is its primary key, so spending one twice is impossible. */
export const NONCE_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "nonce/001-spent-nonces",
    up: `CREATE TABLE spent_nonces (
           nonce         TEXT    PRIMARY KEY,
           request_id    TEXT    NOT NULL,
           expires_at_ms INTEGER NOT NULL,
           spent_at_ms   INTEGER NOT NULL
         ) STRICT;
         CREATE INDEX spent_nonces_expiry ON spent_nonces (expires_at_ms);`,
  },
  {
    id: "nonce/002-forgotten-mark",
    up: `CREATE TABLE spent_nonces_forgotten (
           one           INTEGER PRIMARY KEY CHECK (one = 1),
           expires_at_ms INTEGER NOT NULL
         ) STRICT;`,
  },
];

/** One nonce to spend (`SqliteNonceStore.spendEach`). */
export interface NonceSpend {
  readonly nonce: string;
  readonly requestId: string;
  readonly expiresAtMs: number;
}

/** The SQLite store answers synchronously (better-sqlite3 is synchronous). */
export interface SqliteNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean;
  /**
   * Spends each nonce as `spend` would, all in one immediate transaction (one commit, one sync to disk, however
   * many): whether each was spent by this call, in order. Nothing at all is written for an empty list.
   */
  spendEach(spends: readonly NonceSpend[]): boolean[];
  /** Whether a nonce has been spent. */
  isSpent(nonce: string): boolean;
  /**
   * Deletes (at most `limit`, default `SPENT_NONCE_SWEEP_BATCH`) nonces whose approvals ended, and
   * that were spent, more than `SPENT_NONCE_KEEP_MS` before `nowMs` and that no `pending_consent` row carries (`retention.ts`);
   * returns how many. Every spend does the same for up to `SPENT_NONCE_PRUNE_BATCH` first; `acp serve`'s
   * expiry sweep calls it every minute. In the same transaction it raises the mark
   * ({@link SqliteNonceStore.forgottenThrough}) to the latest approval end it deleted.
   */
  prune(nowMs: number, limit?: number): number;
  /** The latest approval end whose nonce a prune deleted (`spent_nonces_forgotten`), if any. */
  forgottenThrough(): number | undefined;
}

/**
 * The oldest nonces past the cutoff that no consent row carries: the expiry index finds them, the
 * `pending_consent_nonce` index answers the row check.
 */
const PRUNE = `DELETE FROM spent_nonces WHERE nonce IN (
  SELECT n.nonce FROM spent_nonces n
  WHERE n.expires_at_ms < ? AND n.spent_at_ms < ?
    AND NOT EXISTS (SELECT 1 FROM pending_consent p WHERE p.nonce = n.nonce)
  ORDER BY n.expires_at_ms LIMIT ?)
  RETURNING expires_at_ms`;

/** Raises the mark: what a prune deleted can never be spent again. */
const RAISE_MARK = `INSERT INTO spent_nonces_forgotten (one, expires_at_ms) VALUES (1, ?)
  ON CONFLICT (one) DO UPDATE SET expires_at_ms = max(expires_at_ms, excluded.expires_at_ms)`;

/** Options of {@link createSqliteNonceStore}. */
export interface SqliteNonceStoreOptions {
  /** The clock recorded as `spent_at_ms` and that a spend prunes by (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A durable {@link NonceStore} in the state database (`state.db`, opened with `openStateDb`): a spent
 * nonce is committed with `synchronous = FULL` before `spend` returns true, so a replay is refused also
 * after a crash or restart, and by every process sharing the file (the primary key makes the insert
 * atomic across connections). Each spend first prunes a few nonces nobody can use any more (see
 * {@link SqliteNonceStore.prune}), in the same transaction, so the table holds about a day of approvals.
 *
 * The prune goes by the clock, which can be wrong: a clock a few days ahead prunes the nonces of approvals
 * that are valid again once it is set right. So the prune keeps a mark, the latest approval end it
 * deleted, and `spend` refuses (returns false) any nonce whose approval ended no later than the mark,
 * spent or not; a verifier reads the mark through `forgottenThrough` and says `proof_expired`. Applies
 * its migrations (and the pending-consent table's, which the prune reads) on creation.
 */
export function createSqliteNonceStore(db: Database, options: SqliteNonceStoreOptions = {}): SqliteNonceStore {
  ensurePendingConsentSchema(db);
  applyMigrations(db, NONCE_MIGRATIONS);
  const now = options.now ?? Date.now;
  const insert = db.prepare<[string, string, number, number]>(
    "INSERT OR IGNORE INTO spent_nonces (nonce, request_id, expires_at_ms, spent_at_ms) VALUES (?, ?, ?, ?)",
  );
  const select = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM spent_nonces WHERE nonce = ?");
  const deleteOld = db.prepare<[number, number, number], { expires_at_ms: number }>(PRUNE);
  const raiseMark = db.prepare<[number]>(RAISE_MARK);
  const readMark = db.prepare<[], { expires_at_ms: number }>(
    "SELECT expires_at_ms FROM spent_nonces_forgotten WHERE one = 1",
  );
  // deleting and raising the mark in one transaction: no reader sees a nonce gone and the mark not raised
  const prune = db.transaction((nowMs: number, limit: number): number => {
    const cutoff = spentNonceCutoff(Math.floor(nowMs));
    const gone = deleteOld.all(cutoff, cutoff, Math.max(1, Math.floor(limit)));
    if (gone.length > 0)
      raiseMark.run(gone.reduce((m, r) => Math.max(m, r.expires_at_ms), gone[0]?.expires_at_ms ?? 0));
    return gone.length;
  });
  const spendAll = db.transaction((spends: readonly NonceSpend[]): boolean[] => {
    const nowMs = Math.floor(now());
    prune(nowMs, SPENT_NONCE_PRUNE_BATCH);
    const mark = readMark.get()?.expires_at_ms;
    return spends.map(({ nonce, requestId, expiresAtMs }) => {
      const expires = Math.floor(expiresAtMs);
      if (mark !== undefined && expires <= mark) return false;
      return insert.run(nonce, requestId, expires, nowMs).changes === 1;
    });
  });
  const check = ({ nonce, expiresAtMs }: NonceSpend): void => {
    if (typeof nonce !== "string" || nonce.length === 0) throw new TypeError("nonce store: nonce must be a string");
    if (!Number.isFinite(expiresAtMs)) throw new RangeError("nonce store: invalid expiry");
  };
  return {
    spend(nonce, requestId, expiresAtMs) {
      check({ nonce, requestId, expiresAtMs });
      return spendAll.immediate([{ nonce, requestId, expiresAtMs }])[0] === true;
    },
    spendEach(spends) {
      spends.forEach(check);
      return spends.length === 0 ? [] : spendAll.immediate(spends);
    },
    isSpent(nonce) {
      return select.get(nonce) !== undefined;
    },
    prune: (nowMs, limit = SPENT_NONCE_SWEEP_BATCH) => prune.immediate(nowMs, limit),
    forgottenThrough: () => readMark.get()?.expires_at_ms,
  };
}
