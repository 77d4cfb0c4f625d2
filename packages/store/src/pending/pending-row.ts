import type { PendingConsentRow } from "./pending-store.js";
import type { PendingStatus } from "./schema.js";
import type { PendingOwner } from "./owner.js";

/** A `pending_consent` row as both SQLite and PostgreSQL return it (snake_case columns). */
export interface PendingConsentRawRow {
  id: string;
  nonce: string;
  session_id: string | null;
  server: string;
  tool: string;
  request_json: string;
  reasons_json: string;
  created_at_ms: number;
  expires_at_ms: number;
  status: PendingStatus;
  answer_json: string | null;
  decided_at_ms: number | null;
  /** The owner columns (SQLite); absent from stores that do not record owners. */
  owner_pid?: number | null;
  owner_host?: string | null;
  owner_start?: string | null;
}

/** The process a row names as waiting for its answer (SQLite's owner columns), or null. */
export function ownerOf(
  raw: Pick<PendingConsentRawRow, "owner_pid" | "owner_host" | "owner_start">,
): PendingOwner | null {
  if (typeof raw.owner_pid !== "number" || typeof raw.owner_host !== "string") return null;
  return { pid: raw.owner_pid, host: raw.owner_host, start: raw.owner_start ?? null };
}

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The row as the stores hand it out: JSON columns parsed (an unreadable one is null). */
export function toPendingConsentRow(raw: PendingConsentRawRow): PendingConsentRow {
  return {
    id: raw.id,
    nonce: raw.nonce,
    sessionId: raw.session_id,
    server: raw.server,
    tool: raw.tool,
    request: parseJson(raw.request_json),
    reasons: parseJson(raw.reasons_json),
    createdAtMs: raw.created_at_ms,
    expiresAtMs: raw.expires_at_ms,
    status: raw.status,
    answer: parseJson(raw.answer_json),
    decidedAtMs: raw.decided_at_ms,
    owner: ownerOf(raw),
  };
}
