import type { Database } from "better-sqlite3";
import { applyMigrations, type StateDbMigration } from "../sqlite/migrations.js";

/** The statuses a pending consent row moves through; only `pending` may change. */
export const PENDING_STATUSES = ["pending", "approved", "denied", "expired", "withdrawn"] as const;
export type PendingStatus = (typeof PENDING_STATUSES)[number];

const CREATE_TABLE = `
CREATE TABLE IF NOT EXISTS pending_consent (
  id            TEXT PRIMARY KEY,
  nonce         TEXT NOT NULL,
  session_id    TEXT,
  server        TEXT NOT NULL,
  tool          TEXT NOT NULL,
  request_json  TEXT NOT NULL,
  reasons_json  TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  status        TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'withdrawn')),
  answer_json   TEXT,
  decided_at_ms INTEGER
)`;

const CREATE_INDEX = `CREATE INDEX IF NOT EXISTS pending_consent_status ON pending_consent (status, expires_at_ms)`;

/**
 * The process that wrote a row and waits for its answer (`owner.ts`): a row whose owner is gone has nobody
 * to read its answer. Added to tables of older `state.db` files; their existing rows have no owner. Then an
 * index on the nonce (the spent-nonce prune asks whether a row still carries one).
 */
const PENDING_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "pending-consent/001-owner",
    up: (db) => {
      const columns = new Set(
        db
          .prepare<[], { name: string }>("PRAGMA table_info(pending_consent)")
          .all()
          .map((c) => c.name),
      );
      for (const [name, type] of [
        ["owner_pid", "INTEGER"],
        ["owner_host", "TEXT"],
        ["owner_start", "TEXT"],
      ] as const) {
        if (!columns.has(name)) db.exec(`ALTER TABLE pending_consent ADD COLUMN ${name} ${type}`);
      }
    },
  },
  {
    // the spent-nonce prune keeps a nonce while a row carries it: one index probe per candidate
    id: "pending-consent/002-nonce-index",
    up: "CREATE INDEX IF NOT EXISTS pending_consent_nonce ON pending_consent (nonce)",
  },
];

/**
 * Creates the `pending_consent` table (idempotent), adds the columns later versions need (`acp_migrations`) and puts the database in WAL mode, so the proxy
 * waiting on a request and `acp approve` in another terminal can use the file at the same time.
 */
export function ensurePendingConsentSchema(db: Database): void {
  if (!db.memory) db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(CREATE_TABLE);
  db.exec(CREATE_INDEX);
  applyMigrations(db, PENDING_MIGRATIONS);
}
