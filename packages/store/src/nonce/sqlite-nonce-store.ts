import type { Database } from "better-sqlite3";
import type { NonceStore } from "@acp/core";
import { applyMigrations, type StateDbMigration } from "../sqlite/index.js";

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
];

/** The SQLite store answers synchronously (better-sqlite3 is synchronous). */
export interface SqliteNonceStore extends NonceStore {
  spend(nonce: string, requestId: string, expiresAtMs: number): boolean;
  /** Whether a nonce has been spent. */
  isSpent(nonce: string): boolean;
  /**
   * Deletes nonces whose approvals expired before `nowMs` (expiry refuses them anyway); returns how many.
   * Nothing calls it yet. Whoever does must keep a nonce longer than its consent row (settled rows stay a
   * day after the request expired, `SETTLED_CONSENT_KEEP_MS`): `acp serve`'s expiry sweep and
   * `POST /v1/consent/{id}/complete` tell an answer a call used from one nobody used by its spent nonce, so
   * pruning earlier would have an answered request concluded (and recorded) a second time.
   */
  prune(nowMs: number): number;
}

/** Options of {@link createSqliteNonceStore}. */
export interface SqliteNonceStoreOptions {
  /** The clock recorded as `spent_at_ms` (default `Date.now`). */
  readonly now?: () => number;
}

/**
 * A durable {@link NonceStore} in the state database (`state.db`, opened with `openStateDb`): a spent
 * nonce is committed with `synchronous = FULL` before `spend` returns true, so a replay is refused also
 * after a crash or restart, and by every process sharing the file (the primary key makes the insert
 * atomic across connections). Applies its migration on creation.
 */
export function createSqliteNonceStore(db: Database, options: SqliteNonceStoreOptions = {}): SqliteNonceStore {
  applyMigrations(db, NONCE_MIGRATIONS);
  const now = options.now ?? Date.now;
  const insert = db.prepare<[string, string, number, number]>(
    "INSERT OR IGNORE INTO spent_nonces (nonce, request_id, expires_at_ms, spent_at_ms) VALUES (?, ?, ?, ?)",
  );
  const select = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM spent_nonces WHERE nonce = ?");
  const prune = db.prepare<[number]>("DELETE FROM spent_nonces WHERE expires_at_ms < ?");
  return {
    spend(nonce, requestId, expiresAtMs) {
      if (typeof nonce !== "string" || nonce.length === 0) throw new TypeError("nonce store: nonce must be a string");
      if (!Number.isFinite(expiresAtMs)) throw new RangeError("nonce store: invalid expiry");
      return insert.run(nonce, requestId, Math.floor(expiresAtMs), now()).changes === 1;
    },
    isSpent(nonce) {
      return select.get(nonce) !== undefined;
    },
    prune(nowMs) {
      return prune.run(Math.floor(nowMs)).changes;
    },
  };
}
