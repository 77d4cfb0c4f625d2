/** One-time sign-in links and console sessions on PostgreSQL: a link opened on one node signs in on any. */
import type { PostgresStore } from "@acp/store";
import { createRandomToken, hashToken } from "../sqlite-console-auth.js";
import type { ConsoleAuthStore, ConsoleSession } from "../types.js";

/** Longest token looked up (a longer one is unknown without a query). */
const MAX_TOKEN = 256;

function lookupable(token: string): boolean {
  return token.length > 0 && token.length <= MAX_TOKEN;
}

/** The console's links and sessions in `acp_console_links` / `acp_console_sessions`. */
export function createPostgresConsoleAuthStore(store: PostgresStore): ConsoleAuthStore {
  return {
    async createLink(nowMs, ttlMs) {
      await store.query("DELETE FROM acp_console_links WHERE expires_at_ms < $1", [nowMs - 86_400_000]);
      const token = createRandomToken();
      await store.query(
        "INSERT INTO acp_console_links (token_hash, created_at_ms, expires_at_ms) VALUES ($1, $2, $3)",
        [hashToken(token), nowMs, nowMs + ttlMs],
      );
      return token;
    },
    async redeemLink(token, nowMs) {
      if (!lookupable(token)) return false;
      const spent = await store.query(
        `UPDATE acp_console_links SET used_at_ms = $1
         WHERE token_hash = $2 AND used_at_ms IS NULL AND expires_at_ms > $1`,
        [nowMs, hashToken(token)],
      );
      return spent.rowCount === 1;
    },
    async createSession(nowMs, ttlMs) {
      await store.query("DELETE FROM acp_console_sessions WHERE expires_at_ms < $1", [nowMs]);
      const id = createRandomToken();
      const session: ConsoleSession = { csrfToken: createRandomToken(), expiresAtMs: nowMs + ttlMs };
      await store.query(
        "INSERT INTO acp_console_sessions (id_hash, csrf_token, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, $4)",
        [hashToken(id), session.csrfToken, nowMs, session.expiresAtMs],
      );
      return { id, session };
    },
    async getSession(id, nowMs) {
      if (!lookupable(id)) return null;
      const found = await store.query<{ csrf_token: string; expires_at_ms: number }>(
        "SELECT csrf_token, expires_at_ms FROM acp_console_sessions WHERE id_hash = $1 AND expires_at_ms > $2",
        [hashToken(id), nowMs],
      );
      const row = found.rows[0];
      return row === undefined ? null : { csrfToken: row.csrf_token, expiresAtMs: row.expires_at_ms };
    },
    async deleteSession(id) {
      if (!lookupable(id)) return;
      await store.query("DELETE FROM acp_console_sessions WHERE id_hash = $1", [hashToken(id)]);
    },
  };
}
