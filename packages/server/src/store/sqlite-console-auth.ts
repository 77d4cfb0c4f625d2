/** One-time sign-in links and console sessions in the SQLite state database (`state.db`). */
import { createHash, randomBytes } from "node:crypto";
import type { Database } from "better-sqlite3";
import type { ConsoleAuthStore, ConsoleSession } from "./types.js";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS console_links (
  token_hash    TEXT PRIMARY KEY,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  used_at_ms    INTEGER
);
CREATE TABLE IF NOT EXISTS console_sessions (
  id_hash       TEXT PRIMARY KEY,
  csrf_token    TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
)`;

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
}

/** Creates the console tables (idempotent) on a database opened with `openStateDb`. */
export function createSqliteConsoleAuthStore(db: Database): ConsoleAuthStore {
  db.exec(SCHEMA);
  const insertLink = db.prepare(
    "INSERT INTO console_links (token_hash, created_at_ms, expires_at_ms) VALUES (?, ?, ?)",
  );
  const spendLink = db.prepare(
    "UPDATE console_links SET used_at_ms = ? WHERE token_hash = ? AND used_at_ms IS NULL AND expires_at_ms > ?",
  );
  const purgeLinks = db.prepare("DELETE FROM console_links WHERE expires_at_ms < ?");
  const insertSession = db.prepare(
    "INSERT INTO console_sessions (id_hash, csrf_token, created_at_ms, expires_at_ms) VALUES (?, ?, ?, ?)",
  );
  const getSession = db.prepare<[string, number], SessionRow>(
    "SELECT csrf_token, expires_at_ms FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?",
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
    createLink: (nowMs, ttlMs) =>
      run(() => {
        purgeLinks.run(nowMs - 86_400_000);
        const token = createRandomToken();
        insertLink.run(hashToken(token), nowMs, nowMs + ttlMs);
        return token;
      }),
    redeemLink: (token, nowMs) =>
      run(() => {
        if (token.length === 0 || token.length > 256) return false;
        return spendLink.run(nowMs, hashToken(token), nowMs).changes === 1;
      }),
    createSession: (nowMs, ttlMs) =>
      run(() => {
        purgeSessions.run(nowMs);
        const id = createRandomToken();
        const session: ConsoleSession = { csrfToken: createRandomToken(), expiresAtMs: nowMs + ttlMs };
        insertSession.run(hashToken(id), session.csrfToken, nowMs, session.expiresAtMs);
        return { id, session };
      }),
    getSession: (id, nowMs) =>
      run(() => {
        if (id.length === 0 || id.length > 256) return null;
        const row = getSession.get(hashToken(id), nowMs);
        return row === undefined ? null : { csrfToken: row.csrf_token, expiresAtMs: row.expires_at_ms };
      }),
    deleteSession: (id) =>
      run(() => {
        deleteSession.run(hashToken(id));
      }),
  };
}
