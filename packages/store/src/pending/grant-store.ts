import type { Database, Statement } from "better-sqlite3";

/**
 * Approvals for a time window (`acp approve ID --for 10m`), kept in `state.db` so that every proxy of the
 * home honours them until they end — a stdio client starts a new `acp proxy` each time it launches, and
 * the window would otherwise end with the process that asked. A row is what the broker needs to reuse the
 * approval: the consent request, the signed response and the approved arguments (as JSON), under the key
 * of the call it covers (server, tool and the hash of the arguments). The broker verifies the signed
 * response against the home's public key, the call and the request beside it (its id and nonce) before it
 * reuses a row, so a row written or changed by hand approves nothing.
 */
export interface ConsentGrantStore {
  /** Keeps a grant for the call `key` until `untilMs` (and drops the grants that ended by `nowMs`). */
  add(key: string, untilMs: number, grant: unknown, nowMs: number): void;
  /** The grants for `key` that have not ended at `nowMs`, the latest ending first (unreadable rows skipped). */
  find(key: string, nowMs: number): unknown[];
  /** Deletes the grants that ended before `nowMs`; returns how many. */
  deleteEnded(nowMs: number): number;
}

const CREATE = `CREATE TABLE IF NOT EXISTS consent_grants (
  key TEXT NOT NULL,
  until_ms INTEGER NOT NULL,
  grant_json TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
)`;
const INDEX = "CREATE INDEX IF NOT EXISTS consent_grants_key ON consent_grants (key, until_ms)";

/** The most grants kept for one call (the latest ones): a bound on what a flood of approvals can store. */
const MAX_PER_KEY = 16;

/** The time-window grants of `state.db` (creates the table when missing). */
export function createConsentGrantStore(db: Database): ConsentGrantStore {
  if (!db.memory) db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.exec(CREATE);
  db.exec(INDEX);
  const insert = db.prepare(
    "INSERT INTO consent_grants (key, until_ms, grant_json, created_at_ms) VALUES (?, ?, ?, ?)",
  );
  const trim = db.prepare(
    `DELETE FROM consent_grants WHERE key = ? AND rowid NOT IN
       (SELECT rowid FROM consent_grants WHERE key = ? ORDER BY until_ms DESC LIMIT ${MAX_PER_KEY})`,
  );
  const select: Statement<[string, number], { grant_json: string }> = db.prepare(
    "SELECT grant_json FROM consent_grants WHERE key = ? AND until_ms > ? ORDER BY until_ms DESC",
  );
  const remove = db.prepare("DELETE FROM consent_grants WHERE until_ms <= ?");
  const add = db.transaction((key: string, untilMs: number, json: string, nowMs: number) => {
    remove.run(nowMs); // ended grants go as new ones come: the table stays as small as what is still open
    insert.run(key, untilMs, json, nowMs);
    trim.run(key, key);
  });
  return {
    add(key, untilMs, grant, nowMs) {
      add.immediate(key, untilMs, JSON.stringify(grant), nowMs);
    },
    find(key, nowMs) {
      const out: unknown[] = [];
      for (const row of select.all(key, nowMs)) {
        try {
          out.push(JSON.parse(row.grant_json) as unknown);
        } catch {
          // an unreadable row approves nothing
        }
      }
      return out;
    },
    deleteEnded(nowMs) {
      return remove.run(nowMs).changes;
    },
  };
}
