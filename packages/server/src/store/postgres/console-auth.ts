/** One-time sign-in links and console sessions on PostgreSQL: a link opened on one node signs in on any. */
import type { PostgresStore } from "@acp/store";
import { createRandomToken, hashToken, withApprover } from "../sqlite-console-auth.js";
import type { ConsoleAuthStore } from "../types.js";

/** Longest token looked up (a longer one is unknown without a query). */
const MAX_TOKEN = 256;

function lookupable(token: string): boolean {
  return token.length > 0 && token.length <= MAX_TOKEN;
}

/** The console's links and sessions in `acp_console_links` / `acp_console_sessions`. */
export function createPostgresConsoleAuthStore(store: PostgresStore): ConsoleAuthStore {
  return {
    async createLink(nowMs, ttlMs, approver) {
      await store.query("DELETE FROM acp_console_links WHERE expires_at_ms < $1", [nowMs - 86_400_000]);
      const token = createRandomToken();
      await store.query(
        "INSERT INTO acp_console_links (token_hash, created_at_ms, expires_at_ms, approver) VALUES ($1, $2, $3, $4)",
        [hashToken(token), nowMs, nowMs + ttlMs, approver ?? null],
      );
      return token;
    },
    async redeemLink(token, nowMs) {
      if (!lookupable(token)) return null;
      const spent = await store.query<{ approver: string | null }>(
        `UPDATE acp_console_links SET used_at_ms = $1
         WHERE token_hash = $2 AND used_at_ms IS NULL AND expires_at_ms > $1
         RETURNING approver`,
        [nowMs, hashToken(token)],
      );
      const row = spent.rows[0];
      return spent.rowCount === 1 && row !== undefined ? withApprover({}, row.approver) : null;
    },
    async createSession(nowMs, ttlMs, approver) {
      await store.query("DELETE FROM acp_console_sessions WHERE expires_at_ms < $1", [nowMs]);
      const id = createRandomToken();
      const session = withApprover({ csrfToken: createRandomToken(), expiresAtMs: nowMs + ttlMs }, approver);
      await store.query(
        `INSERT INTO acp_console_sessions (id_hash, csrf_token, created_at_ms, expires_at_ms, approver)
         VALUES ($1, $2, $3, $4, $5)`,
        [hashToken(id), session.csrfToken, nowMs, session.expiresAtMs, approver ?? null],
      );
      return { id, session };
    },
    async getSession(id, nowMs) {
      if (!lookupable(id)) return null;
      const found = await store.query<{ csrf_token: string; expires_at_ms: number; approver: string | null }>(
        `SELECT csrf_token, expires_at_ms, approver FROM acp_console_sessions
         WHERE id_hash = $1 AND expires_at_ms > $2`,
        [hashToken(id), nowMs],
      );
      const row = found.rows[0];
      return row === undefined
        ? null
        : withApprover({ csrfToken: row.csrf_token, expiresAtMs: row.expires_at_ms }, row.approver);
    },
    async deleteSession(id) {
      if (!lookupable(id)) return;
      await store.query("DELETE FROM acp_console_sessions WHERE id_hash = $1", [hashToken(id)]);
    },
  };
}
