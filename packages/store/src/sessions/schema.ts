import type { StateDbMigration } from "../sqlite/index.js";

/** The statuses of a live-session row: `live` until the proxy closes the session. */
export const LIVE_SESSION_STATUSES = ["live", "closed"] as const;
/** One live-session status. */
export type LiveSessionStatus = (typeof LIVE_SESSION_STATUSES)[number];

/** The statuses an intent update moves through; only `pending` may change. */
export const INTENT_UPDATE_STATUSES = ["pending", "applied", "rejected", "superseded"] as const;
/** One intent-update status. */
export type IntentUpdateStatus = (typeof INTENT_UPDATE_STATUSES)[number];

/**
 * The live sessions of every proxy that shares a home (`live_sessions`), and the signed intent updates a
 * person queued for them (`session_intent_updates`). `update_seq` is the per-session counter the proxy
 * reads before each call: when it moved, an update is waiting.
 */
export const LIVE_SESSION_MIGRATIONS: readonly StateDbMigration[] = [
  {
    id: "sessions/001-live-sessions",
    up: `CREATE TABLE live_sessions (
           id             TEXT    PRIMARY KEY,
           pid            INTEGER NOT NULL,
           agent          TEXT,
           started_at_ms  INTEGER NOT NULL,
           ended_at_ms    INTEGER,
           status         TEXT    NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'closed')),
           intent_version INTEGER NOT NULL,
           intent_hash    TEXT    NOT NULL,
           update_seq     INTEGER NOT NULL DEFAULT 0
         ) STRICT;
         CREATE INDEX live_sessions_status ON live_sessions (status, started_at_ms);
         CREATE TABLE session_intent_updates (
           session_id     TEXT    NOT NULL REFERENCES live_sessions (id),
           seq            INTEGER NOT NULL,
           payload_json   TEXT    NOT NULL,
           signature      TEXT    NOT NULL,
           created_at_ms  INTEGER NOT NULL,
           status         TEXT    NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'applied', 'rejected', 'superseded')),
           outcome        TEXT,
           settled_at_ms  INTEGER,
           PRIMARY KEY (session_id, seq)
         ) STRICT;`,
  },
  {
    // the retention of `register` finds the sessions that ended long enough ago (`retention.ts`)
    id: "sessions/002-ended-index",
    up: "CREATE INDEX live_sessions_ended ON live_sessions (status, ended_at_ms)",
  },
  {
    // the machine and start time of the proxy that runs a session (`pending/owner.ts`), so a session whose
    // proxy died without closing it (killed by its client) can be told and closed; older rows have none
    id: "sessions/003-owner",
    up: `ALTER TABLE live_sessions ADD COLUMN owner_host TEXT;
         ALTER TABLE live_sessions ADD COLUMN owner_start TEXT;`,
  },
];
