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
import { toPendingConsentRow, type PendingConsentRawRow } from "../pending/pending-row.js";

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

async function explainRefusal(store: PostgresStore, id: string): Promise<DecideResult> {
  const found = await store.query<{ status: PendingStatus }>("SELECT status FROM pending_consent WHERE id = $1", [id]);
  const status = found.rows[0]?.status;
  if (status === undefined) return { ok: false, code: "consent_request_unknown" };
  if (status === "pending") return { ok: false, code: "consent_request_expired", status };
  return { ok: false, code: "consent_request_already_decided", status };
}

/**
 * The pending-consent store on PostgreSQL, shared by every node: the same columns and semantics as the
 * SQLite store. `decide` is one `UPDATE … WHERE status = 'pending' … RETURNING` (of two nodes answering
 * at once exactly one wins) and, in the same statement, `NOTIFY acp_consent, '<id>'`, delivered when it
 * commits; `settle` notifies too. Watch with {@link watchConsentDecisions}.
 */
export function createPostgresPendingConsentStore(store: PostgresStore): AsyncPendingConsentStore {
  const get = async (id: string): Promise<PendingConsentRow | null> => {
    if (!isLookupable(id)) return null;
    const raw = (await store.query<PendingConsentRawRow>(`SELECT ${COLUMNS} FROM pending_consent WHERE id = $1`, [id]))
      .rows[0];
    return raw === undefined ? null : toPendingConsentRow(raw);
  };
  return {
    async insert(request) {
      assertNew(request);
      const values = [
        request.id,
        request.nonce,
        request.sessionId ?? null,
        request.server,
        request.tool,
        jsonText(request.request, "request"),
        jsonText(request.reasons, "reasons"),
        request.createdAtMs,
        request.expiresAtMs,
      ];
      try {
        await store.query(
          `INSERT INTO pending_consent (id, nonce, session_id, server, tool, request_json, reasons_json, created_at_ms,
             expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          values,
        );
      } catch (err) {
        if ((err as { code?: unknown }).code !== "23505") throw err;
        throw new PostgresStoreError("postgres_consent_duplicate", `pending consent: id \`${request.id}\` exists`, {
          cause: err,
        });
      }
    },
    get,
    async listPending(nowMs) {
      assertTime(nowMs, "now");
      const rows = await store.query<PendingConsentRawRow>(
        `SELECT ${COLUMNS} FROM pending_consent WHERE status = 'pending' AND expires_at_ms > $1
         ORDER BY created_at_ms, id`,
        [nowMs],
      );
      return rows.rows.map(toPendingConsentRow);
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
