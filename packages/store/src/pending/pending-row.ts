import type { PendingConsentRow } from "./pending-store.js";
import type { PendingStatus } from "./schema.js";

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
  };
}
