/** One-time sign-in links and console sessions in the SQLite state database (`state.db`). */
import { createHash, randomBytes } from "node:crypto";
import type { Database } from "better-sqlite3";
import type { ConsoleAuthStore } from "./types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS console_links (
  token_hash    TEXT PRIMARY KEY,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  used_at_ms    INTEGER,
  approver      TEXT
);
CREATE TABLE IF NOT EXISTS console_sessions (
  id_hash       TEXT PRIMARY KEY,
  csrf_token    TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  approver      TEXT
)`;

/** A `state.db` made before links named their approver gets the column (NULL: unnamed). */
function addApproverColumns(db: Database): void {
  for (const table of ["console_links", "console_sessions"]) {
    const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${table}')`).all();
    if (columns.some((c) => c.name === "approver")) continue;
    try {
      db.exec(`ALTER TABLE ${table} ADD COLUMN approver TEXT`);
    } catch (err) {
      // another process (acp serve, acp console-link) added it between the look and the change
      if (!/duplicate column/i.test(err instanceof Error ? err.message : String(err))) throw err;
    }
  }
}

/** Hex SHA-256 (exported for the PostgreSQL store): what is stored instead of a token, so a copy of `state.db` opens no session. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** A fresh unguessable token: 32 random bytes, base64url. */
export function createRandomToken(): string {
  return randomBytes(32).toString("base64url");
}

interface SessionRow {
  csrf_token: string;
  expires_at_ms: number;
  approver: string | null;
}

/** `value` with `approver` when the row names one (a NULL column: unnamed). */
export function withApprover<T extends object>(
  value: T,
  approver: string | null | undefined,
): T & { approver?: string } {
  return approver === null || approver === undefined ? value : { ...value, approver };
}

/** Creates the console tables (idempotent) on a database opened with `openStateDb`. */
export function createSqliteConsoleAuthStore(db: Database): ConsoleAuthStore {
  db.exec(SCHEMA);
  addApproverColumns(db);
  const insertLink = db.prepare(
    "INSERT INTO console_links (token_hash, created_at_ms, expires_at_ms, approver) VALUES (?, ?, ?, ?)",
  );
  const spendLink = db.prepare<[number, string, number], { approver: string | null }>(
    `UPDATE console_links SET used_at_ms = ? WHERE token_hash = ? AND used_at_ms IS NULL AND expires_at_ms > ?
     RETURNING approver`,
  );
  const purgeLinks = db.prepare("DELETE FROM console_links WHERE expires_at_ms < ?");
  const insertSession = db.prepare(
    "INSERT INTO console_sessions (id_hash, csrf_token, created_at_ms, expires_at_ms, approver) VALUES (?, ?, ?, ?, ?)",
  );
  const getSession = db.prepare<[string, number], SessionRow>(
    "SELECT csrf_token, expires_at_ms, approver FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?",
  );
  const deleteSession = db.prepare("DELETE FROM console_sessions WHERE id_hash = ?");
  const purgeSessions = db.prepare("DELETE FROM console_sessions WHERE expires_at_ms < ?");
  const run = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  };
  return {
    createLink: (nowMs, ttlMs, approver) =>
      run(() => {
        purgeLinks.run(nowMs - 86_400_000);
        const token = createRandomToken();
        insertLink.run(hashToken(token), nowMs, nowMs + ttlMs, approver ?? null);
        return token;
      }),
    redeemLink: (token, nowMs) =>
      run(() => {
        if (token.length === 0 || token.length > 256) return null;
        const spent = spendLink.get(nowMs, hashToken(token), nowMs);
        return spent === undefined ? null : withApprover({}, spent.approver);
      }),
    createSession: (nowMs, ttlMs, approver) =>
      run(() => {
        purgeSessions.run(nowMs);
        const id = createRandomToken();
        const session = withApprover({ csrfToken: createRandomToken(), expiresAtMs: nowMs + ttlMs }, approver ?? null);
        insertSession.run(hashToken(id), session.csrfToken, nowMs, session.expiresAtMs, approver ?? null);
        return { id, session };
      }),
    getSession: (id, nowMs) =>
      run(() => {
        if (id.length === 0 || id.length > 256) return null;
        const row = getSession.get(hashToken(id), nowMs);
        return row === undefined
          ? null
          : withApprover({ csrfToken: row.csrf_token, expiresAtMs: row.expires_at_ms }, row.approver);
      }),
    deleteSession: (id) =>
      run(() => {
        deleteSession.run(hashToken(id));
      }),
  };
}
