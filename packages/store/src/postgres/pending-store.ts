import {
  PENDING_STATUSES,
  type DecideResult,
  type NewPendingConsent,
  type PendingConsentRow,
  type PendingStatus,
} from "../pending/index.js";
import type { AsyncPendingConsentStore } from "./async-pending-store.js";
import type { PostgresStore } from "./open-postgres-store.js";
import { assertStorableText, PostgresStoreError } from "./postgres-store-error.js";
import { ADVISORY_LOCK } from "./schema.js";
import { SETTLED_CONSENT_PURGE_BATCH, settledConsentCutoff } from "../pending/retention.js";
import { toPendingConsentRow, type PendingConsentRawRow } from "../pending/pending-row.js";
import { assertPageQuery, fitPage, lastOf, pageStart, type SizedPendingRow } from "../pending/pending-page.js";
import {
  assertPendingLimit,
  checkPendingLimit,
  requestAgent,
  type PendingInsertResult,
  type PendingLimit,
} from "../pending/pending-limit.js";

/** The channel every change of a pending consent row is announced on; the payload is the request id. */
export const CONSENT_CHANNEL = "acp_consent";

const COLUMNS = `id, nonce, session_id, server, tool, request_json, reasons_json, created_at_ms, expires_at_ms,
  status, answer_json, decided_at_ms`;

function invalid(message: string): PostgresStoreError {
  return new PostgresStoreError("postgres_input_invalid", `pending consent: ${message}`);
}

function assertTime(value: unknown, what: string): asserts value is number {
  if (!Number.isSafeInteger(value)) throw invalid(`${what} must be an integer number of milliseconds`);
}

/** An id PostgreSQL could never have stored is simply unknown. */
function isLookupable(id: unknown): id is string {
  return typeof id === "string" && !id.includes("\u0000");
}

/** Longest id accepted: its notification payload (at most 4 bytes a character) stays under PostgreSQL's 8000 bytes. */
export const MAX_CONSENT_ID_LENGTH = 1024;

function assertNew(request: NewPendingConsent): void {
  assertStorableText(request.id, "pending consent: id");
  if (request.id.length > MAX_CONSENT_ID_LENGTH) throw invalid(`id is longer than ${MAX_CONSENT_ID_LENGTH} characters`);
  assertStorableText(request.nonce, "pending consent: nonce");
  assertStorableText(request.server, "pending consent: server");
  assertStorableText(request.tool, "pending consent: tool");
  if (request.sessionId !== undefined) assertStorableText(request.sessionId, "pending consent: session id");
  assertTime(request.createdAtMs, "created time");
  assertTime(request.expiresAtMs, "expiry");
}

function jsonText(value: unknown, what: string): string {
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw invalid(`${what} is not JSON`);
  return text;
}

/** An agent as the `agent` column holds it: PostgreSQL text cannot hold NUL, so it is replaced (both sides alike). */
function storableAgent(agent: string | null): string | null {
  return agent === null ? null : agent.replaceAll("\u0000", "\uFFFD");
}

/**
 * Writes a row and, in the same statement, drops rows settled a day after their request ended
 * (`retention.ts`: `$11` is the cutoff), a batch at a time: the table stays bounded whatever the rate.
 */
const INSERT = `WITH ended AS (
  DELETE FROM pending_consent WHERE id IN (SELECT id FROM pending_consent
    WHERE status IN ('approved', 'denied', 'expired', 'withdrawn') AND expires_at_ms < $11
    LIMIT ${SETTLED_CONSENT_PURGE_BATCH})
)
INSERT INTO pending_consent (id, nonce, session_id, server, tool, request_json, reasons_json, created_at_ms,
  expires_at_ms, agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

/** The statement's values for a new row (checked: {@link assertNew}). */
function insertValues(request: NewPendingConsent): unknown[] {
  assertNew(request);
  return [
    request.id,
    request.nonce,
    request.sessionId ?? null,
    request.server,
    request.tool,
    jsonText(request.request, "request"),
    jsonText(request.reasons, "reasons"),
    request.createdAtMs,
    request.expiresAtMs,
    storableAgent(requestAgent(request.request)),
    settledConsentCutoff(request.createdAtMs),
  ];
}

/** A clash of ids (23505) as the store's own error; anything else as it came. */
function duplicateOr(err: unknown, id: string): Error {
  if ((err as { code?: unknown }).code !== "23505") return err instanceof Error ? err : new Error(String(err));
  return new PostgresStoreError("postgres_consent_duplicate", `pending consent: id \`${id}\` exists`, { cause: err });
}

/** How long a limited insert waits for the limit's lock by default (ms): far beyond a turn, well within a statement. */
export const DEFAULT_PENDING_LOCK_TIMEOUT_MS = 5000;

/** Options of {@link createPostgresPendingConsentStore}. */
export interface PostgresPendingStoreOptions {
  /**
   * How long `insertWithinLimit` waits for the limit's lock (ms, default {@link DEFAULT_PENDING_LOCK_TIMEOUT_MS});
   * past it the insert writes nothing and answers `busy`.
   */
  readonly lockTimeoutMs?: number;
}

/** The lock statement's failure when PostgreSQL gave up waiting: `lock_timeout` (55P03) or `statement_timeout` (57014). */
const isLockWaitOver = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "55P03" || code === "57014";
};

/**
 * pg-pool's error when no pooled connection came free within its connection timeout (the pool's other
 * connections all busy: a burst); it has no code, so its text is what tells it.
 */
const isPoolWaitOver = (err: unknown): boolean =>
  err instanceof Error && err.message === "timeout exceeded when trying to connect";

/**
 * Counts and inserts under one transaction-scoped advisory lock (`ADVISORY_LOCK.pendingConsent`), so the
 * limited inserts of every node take turns; the count runs after the lock is held, and under READ COMMITTED
 * it sees every row the previous holder committed. The wait for the lock is bounded (`SET LOCAL
 * lock_timeout`), and so is the pool's wait for a connection: during a burst an insert that cannot take its
 * turn in time writes nothing and answers `busy` (it never holds a connection until the statement timeout).
 */
async function insertLimited(
  store: PostgresStore,
  request: NewPendingConsent,
  limit: PendingLimit,
  lockTimeoutMs: number,
): Promise<PendingInsertResult> {
  assertPendingLimit(limit);
  const values = insertValues(request);
  const agent = limit.perAgent !== undefined ? storableAgent(limit.perAgent.agent) : null;
  let waitedForLock = false;
  try {
    return await store.transaction(async (client) => {
      waitedForLock = true;
      // one round trip (simple protocol: the values are this module's integers, no parameters)
      await client.query(
        `SET LOCAL lock_timeout = ${lockTimeoutMs}; SELECT pg_advisory_xact_lock(${ADVISORY_LOCK.pendingConsent}, 0)`,
      );
      waitedForLock = false;
      // a caller's rows are those of its session namespace (`sessionCaller`): `NAME/…`, or (null) no `/` at all
      const counted = await client.query<{ total: number; agent: number; caller: number }>(
        `SELECT count(*)::int AS total, (count(*) FILTER (WHERE agent = $2))::int AS agent,
           (count(*) FILTER (WHERE $3::boolean AND CASE WHEN $4::text IS NULL
              THEN strpos(coalesce(session_id, ''), '/') = 0
              ELSE left(session_id, length($4) + 1) = $4 || '/' END))::int AS caller
         FROM pending_consent WHERE status = 'pending' AND expires_at_ms > $1`,
        [request.createdAtMs, agent, limit.perCaller !== undefined, limit.perCaller?.caller ?? null],
      );
      const verdict = checkPendingLimit(limit, counted.rows[0] ?? { total: 0, agent: 0, caller: 0 });
      if (verdict.ok) await client.query(INSERT, values);
      return verdict;
    });
  } catch (err) {
    if ((waitedForLock && isLockWaitOver(err)) || isPoolWaitOver(err)) return { ok: false, full: "busy" };
    throw duplicateOr(err, request.id);
  }
}

async function explainRefusal(store: PostgresStore, id: string): Promise<DecideResult> {
  const found = await store.query<{ status: PendingStatus }>("SELECT status FROM pending_consent WHERE id = $1", [id]);
  const status = found.rows[0]?.status;
  if (status === undefined) return { ok: false, code: "consent_request_unknown" };
  if (status === "pending") return { ok: false, code: "consent_request_expired", status };
  return { ok: false, code: "consent_request_already_decided", status };
}

/**
 * The pending-consent store on PostgreSQL, shared by every node: the same columns and semantics as the
 * SQLite store. `insertWithinLimit` counts and inserts under an advisory lock, so the cap holds for every
 * node together. `decide` is one `UPDATE … WHERE status = 'pending' … RETURNING` (of two nodes answering
 * at once exactly one wins) and, in the same statement, `NOTIFY acp_consent, '<id>'`, delivered when it
 * commits; `settle` notifies too. Watch with {@link watchConsentDecisions}.
 */
export function createPostgresPendingConsentStore(
  store: PostgresStore,
  options: PostgresPendingStoreOptions = {},
): AsyncPendingConsentStore {
  const given = options.lockTimeoutMs ?? DEFAULT_PENDING_LOCK_TIMEOUT_MS;
  const lockTimeoutMs = Number.isFinite(given) ? Math.max(1, Math.floor(given)) : DEFAULT_PENDING_LOCK_TIMEOUT_MS;
  const get = async (id: string): Promise<PendingConsentRow | null> => {
    if (!isLookupable(id)) return null;
    const raw = (await store.query<PendingConsentRawRow>(`SELECT ${COLUMNS} FROM pending_consent WHERE id = $1`, [id]))
      .rows[0];
    return raw === undefined ? null : toPendingConsentRow(raw);
  };
  return {
    async insert(request) {
      const values = insertValues(request);
      try {
        await store.query(INSERT, values);
      } catch (err) {
        throw duplicateOr(err, request.id);
      }
    },
    insertWithinLimit: (request, limit) => insertLimited(store, request, limit, lockTimeoutMs),
    get,
    async peek(id) {
      if (!isLookupable(id)) return null;
      const raw = (
        await store.query<Pick<PendingConsentRawRow, "nonce" | "status" | "decided_at_ms"> & { answered: boolean }>(
          `SELECT nonce, status, decided_at_ms, answer_json IS NOT NULL AS answered FROM pending_consent WHERE id = $1`,
          [id],
        )
      ).rows[0];
      if (raw === undefined) return null;
      return { nonce: raw.nonce, status: raw.status, answered: raw.answered, decidedAtMs: raw.decided_at_ms };
    },
    async listPending(nowMs) {
      assertTime(nowMs, "now");
      const rows = await store.query<PendingConsentRawRow>(
        `SELECT ${COLUMNS} FROM pending_consent WHERE status = 'pending' AND expires_at_ms > $1
         ORDER BY created_at_ms, id`,
        [nowMs],
      );
      return rows.rows.map(toPendingConsentRow);
    },
    async listPendingIds(nowMs) {
      assertTime(nowMs, "now");
      const rows = await store.query<{ id: string }>(
        `SELECT id FROM pending_consent WHERE status = 'pending' AND expires_at_ms > $1 ORDER BY created_at_ms, id`,
        [nowMs],
      );
      return rows.rows.map((row) => ({ id: row.id, owner: null }));
    },
    async listPendingPage(nowMs, query) {
      assertTime(nowMs, "now");
      assertPageQuery(query);
      const start = pageStart(query.after);
      // an id PostgreSQL could not hold sorts where its stored form would; a NUL cannot be sent
      const afterId = start.id.replaceAll("\u0000", "\uFFFD");
      const sized = (
        await store.query<{ id: string; created_at_ms: string | number; bytes: string | number }>(
          `SELECT id, created_at_ms, octet_length(request_json) + octet_length(reasons_json) AS bytes
           FROM pending_consent WHERE status = 'pending' AND expires_at_ms > $1
             AND (created_at_ms > $2 OR (created_at_ms = $2 AND id > $3))
           ORDER BY created_at_ms, id LIMIT $4`,
          [nowMs, start.createdAtMs, afterId, query.limit + 1],
        )
      ).rows.map((r): SizedPendingRow => ({ id: r.id, createdAtMs: Number(r.created_at_ms), bytes: Number(r.bytes) }));
      const { take, more } = fitPage(sized, query);
      const ids = sized.slice(0, take).map((row) => row.id);
      const rows =
        take === 0
          ? []
          : (
              await store.query<PendingConsentRawRow>(
                `SELECT ${COLUMNS} FROM pending_consent WHERE id = ANY($1::text[])
                   AND status = 'pending' AND expires_at_ms > $2
                 ORDER BY created_at_ms, id`,
                [ids, nowMs],
              )
            ).rows.map(toPendingConsentRow);
      return { rows, last: lastOf(sized, take), more };
    },
    async decide(id, status, answer, nowMs) {
      if (status !== "approved" && status !== "denied") throw invalid(`unknown answer \`${String(status)}\``);
      assertTime(nowMs, "now");
      if (!isLookupable(id)) return { ok: false, code: "consent_request_unknown" };
      const decided = await store.query<PendingConsentRawRow>(
        `WITH d AS (
           UPDATE pending_consent SET status = $2, answer_json = $3, decided_at_ms = $4
           WHERE id = $1 AND status = 'pending' AND expires_at_ms > $4
           RETURNING ${COLUMNS}
         )
         SELECT d.*, pg_notify('${CONSENT_CHANNEL}', d.id)::text AS notified FROM d`,
        [id, status, JSON.stringify(answer) ?? null, nowMs],
      );
      const raw = decided.rows[0];
      return raw !== undefined ? { ok: true, row: toPendingConsentRow(raw) } : explainRefusal(store, id);
    },
    async settle(id, status, nowMs) {
      if ((status as PendingStatus) === "pending" || !PENDING_STATUSES.includes(status)) {
        throw invalid(`cannot settle as \`${String(status)}\``);
      }
      assertTime(nowMs, "now");
      if (!isLookupable(id)) return false;
      const settled = await store.query(
        `WITH s AS (
           UPDATE pending_consent SET status = $2, decided_at_ms = $3 WHERE id = $1 AND status = 'pending' RETURNING id
         )
         SELECT pg_notify('${CONSENT_CHANNEL}', s.id)::text FROM s`,
        [id, status, nowMs],
      );
      return settled.rowCount === 1;
    },
    async deleteSettledBefore(beforeMs) {
      assertTime(beforeMs, "time");
      const deleted = await store.query(
        "DELETE FROM pending_consent WHERE status <> 'pending' AND created_at_ms < $1",
        [beforeMs],
      );
      return deleted.rowCount ?? 0;
    },
  };
}
