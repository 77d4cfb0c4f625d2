import { CONSENT_GRANTS_TABLE } from "./grant-store.js";
import type { PostgresMigration } from "./migrations.js";
import { PROPOSAL_FIRST_SIGHT } from "./proposal-ledger.js";

/**
 * Advisory-lock classes (the first key of `pg_advisory_xact_lock(int, int)`), so ACP's locks never
 * collide with each other or with an application sharing the database.
 */
export const ADVISORY_LOCK = {
  migrations: 0x41435001,
  rateLimit: 0x41435002,
  audit: 0x41435003,
  pendingConsent: 0x41435004,
} as const;

/** Spent nonces: the nonce is the primary key, so spending one twice is impossible on any node. */
const NONCES = `
CREATE TABLE spent_nonces (
  nonce         TEXT   PRIMARY KEY,
  request_id    TEXT   NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  spent_at_ms   BIGINT NOT NULL
);
CREATE INDEX spent_nonces_expiry ON spent_nonces (expires_at_ms);`;

/**
 * The latest approval end whose nonce a prune deleted (one row): a spend of a nonce whose approval ended no
 * later is refused, so a clock that ran ahead and pruned too soon does not make an approval usable twice.
 */
const NONCES_FORGOTTEN = `
CREATE TABLE spent_nonces_forgotten (
  one           INTEGER PRIMARY KEY CHECK (one = 1),
  expires_at_ms BIGINT  NOT NULL
);`;

/** Rate-limit windows: one row per counted call (a sliding log), as in SQLite. */
const RATE_LIMIT_HITS = `
CREATE TABLE rate_limit_hits (
  key           TEXT   NOT NULL,
  at_ms         BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL
);
CREATE INDEX rate_limit_hits_key ON rate_limit_hits (key, at_ms);
CREATE INDEX rate_limit_hits_expiry ON rate_limit_hits (expires_at_ms);`;

/**
 * One counted call in one round trip: under a per-key advisory lock (held to the end of the caller's
 * transaction), drop the key's calls that left the window, count the rest, record this call when it
 * fits. Each statement of a volatile function takes a fresh snapshot, so the count sees every call the
 * previous lock holder committed: two nodes never both take the last slot.
 */
const RATE_LIMIT_CONSUME = `
CREATE FUNCTION acp_rate_limit_consume(p_key TEXT, p_limit BIGINT, p_window_ms BIGINT, p_now_ms BIGINT)
RETURNS TABLE (allowed BOOLEAN, counted BIGINT, oldest_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_n BIGINT;
  v_oldest BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(${ADVISORY_LOCK.rateLimit}, hashtext(p_key));
  DELETE FROM rate_limit_hits WHERE key = p_key AND at_ms <= p_now_ms - p_window_ms;
  SELECT count(*), min(h.at_ms) INTO v_n, v_oldest FROM rate_limit_hits h WHERE h.key = p_key;
  IF v_n < p_limit THEN
    INSERT INTO rate_limit_hits (key, at_ms, expires_at_ms) VALUES (p_key, p_now_ms, p_now_ms + p_window_ms);
    RETURN QUERY SELECT true, v_n + 1, LEAST(COALESCE(v_oldest, p_now_ms), p_now_ms);
  ELSE
    RETURN QUERY SELECT false, v_n, v_oldest;
  END IF;
END
$fn$;`;

/**
 * The consume function's names resolved where the store's tables are, whatever the caller's `search_path`: it
 * ran with the caller's, so a table or function earlier in it — a temporary table `rate_limit_hits` (`pg_temp`
 * is searched first for tables unless named), one in another schema — was used in place of the store's.
 * Pinned to `pg_catalog` (the built-ins it calls), the schema it was created in (its tables), then `pg_temp`
 * (last: never shadows). Any function a later migration creates pins its own the same way.
 */
const RATE_LIMIT_CONSUME_SEARCH_PATH = `
DO $do$
DECLARE
  v_schema TEXT;
BEGIN
  SELECT n.nspname INTO STRICT v_schema FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
   WHERE p.oid = 'acp_rate_limit_consume(text, bigint, bigint, bigint)'::pg_catalog.regprocedure;
  EXECUTE pg_catalog.format(
    'ALTER FUNCTION %I.acp_rate_limit_consume(TEXT, BIGINT, BIGINT, BIGINT) SET search_path = pg_catalog, %I, pg_temp',
    v_schema, v_schema);
END
$do$;`;

/** Pending consent requests: the same columns and statuses as SQLite's `pending_consent`. */
const PENDING_CONSENT = `
CREATE TABLE pending_consent (
  id            TEXT   PRIMARY KEY,
  nonce         TEXT   NOT NULL,
  session_id    TEXT,
  server        TEXT   NOT NULL,
  tool          TEXT   NOT NULL,
  request_json  TEXT   NOT NULL,
  reasons_json  TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  status        TEXT   NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'withdrawn')),
  answer_json   TEXT,
  decided_at_ms BIGINT
);
CREATE INDEX pending_consent_status ON pending_consent (status, expires_at_ms);`;

/**
 * The agent a pending request names (its `consent_request`'s `agent.id`), so the cap per agent is one
 * count over a column. Rows written before it have none: they count toward the total only.
 */
const PENDING_CONSENT_AGENT = `ALTER TABLE pending_consent ADD COLUMN agent TEXT;`;

/** The spent-nonce prune keeps a nonce while a consent row carries it: one index probe per candidate. */
const PENDING_CONSENT_NONCE = `CREATE INDEX pending_consent_nonce ON pending_consent (nonce);`;

/**
 * The audit chain: one row per line, \`seq\` 1, 2, 3… The line is the exact canonical JSON written to
 * \`audit.jsonl\`; \`seq\` and \`event_hash\` are unique, so even a writer that skipped the lock could not
 * fork the chain (its insert would fail).
 */
const AUDIT_EVENTS = `
CREATE TABLE acp_audit_events (
  seq                 BIGINT  PRIMARY KEY CHECK (seq > 0),
  event_hash          TEXT    NOT NULL UNIQUE,
  previous_event_hash TEXT,
  since_checkpoint    INTEGER NOT NULL,
  event_type          TEXT    NOT NULL,
  request_id          TEXT,
  timestamp           TEXT    NOT NULL,
  line                TEXT    NOT NULL
);
CREATE INDEX acp_audit_events_request ON acp_audit_events (request_id);`;

/** Sessions and authority tokens: tables reserved for the service (no API here yet). */
const SESSIONS_AND_TOKENS = `
CREATE TABLE acp_sessions (
  id            TEXT   PRIMARY KEY,
  data_json     TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT
);
CREATE TABLE authority_tokens (
  id            TEXT   PRIMARY KEY,
  token_json    TEXT   NOT NULL,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT,
  revoked_at_ms BIGINT
);`;

/** Every migration of the PostgreSQL store, in order. Never edited once shipped: add a new one. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { id: "nonce/001-spent-nonces", up: NONCES },
  { id: "rate-limit/001-hits", up: RATE_LIMIT_HITS },
  { id: "rate-limit/002-consume-function", up: RATE_LIMIT_CONSUME },
  { id: "pending/001-pending-consent", up: PENDING_CONSENT },
  { id: "audit/001-events", up: AUDIT_EVENTS },
  { id: "state/001-sessions-tokens", up: SESSIONS_AND_TOKENS },
  { id: "grants/001-consent-grants", up: CONSENT_GRANTS_TABLE },
  { id: "pending/002-agent", up: PENDING_CONSENT_AGENT },
  { id: "pending/003-nonce-index", up: PENDING_CONSENT_NONCE },
  { id: "nonce/002-forgotten-mark", up: NONCES_FORGOTTEN },
  { id: "rate-limit/003-consume-search-path", up: RATE_LIMIT_CONSUME_SEARCH_PATH },
  { id: "proposals/001-first-sight", up: PROPOSAL_FIRST_SIGHT },
];
