/** The service's own tables on PostgreSQL, applied after the store's migrations (same `acp_migrations` ledger). */
import type { PostgresMigration } from "@acp/store";

/** Console sign-in links and sessions, shared by every node (tokens stored as SHA-256 hashes). */
const CONSOLE_AUTH = `
CREATE TABLE acp_console_links (
  token_hash    TEXT   PRIMARY KEY,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  used_at_ms    BIGINT
);
CREATE TABLE acp_console_sessions (
  id_hash       TEXT   PRIMARY KEY,
  csrf_token    TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
CREATE INDEX acp_console_sessions_expiry ON acp_console_sessions (expires_at_ms);`;

/** A sign-in link names the person it signs in, and the session keeps the name (NULL: unnamed). */
const CONSOLE_APPROVER = `
ALTER TABLE acp_console_links ADD COLUMN approver TEXT;
ALTER TABLE acp_console_sessions ADD COLUMN approver TEXT;`;

/** Every migration of the service's PostgreSQL tables, in order. Never edited once shipped: add a new one. */
export const SERVER_POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { id: "server/001-console-auth", up: CONSOLE_AUTH },
  { id: "server/002-console-approver", up: CONSOLE_APPROVER },
];
