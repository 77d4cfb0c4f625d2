import type { Database } from "better-sqlite3";
import { createPendingConsentStore, createSqliteNonceStore, describeOwner, type PendingConsentRow } from "@acp/store";
import type { AuditSink } from "@acp/proxy";

/** Why a row of a process that died was settled: the text of its `consent_withdrawn` event. */
export function orphanedReason(row: PendingConsentRow): string {
  const who = row.owner === null ? "the process" : `the acp proxy that asked (${describeOwner(row.owner)})`;
  return `${who} stopped before an answer came: nobody was waiting for it any more`;
}

/** Why an answered row of a process that died before reading the answer was concluded. */
export function unreadAnswerReason(row: PendingConsentRow): string {
  const answer = row.answer as { approver?: unknown } | null;
  const by = typeof answer?.approver === "string" ? ` by \`${answer.approver.slice(0, 100)}\`` : "";
  const who = row.owner === null ? "the process" : `the acp proxy that asked (${describeOwner(row.owner)})`;
  return `${row.status}${by}, but ${who} stopped before it read the answer: nothing ran`;
}

/**
 * Settles the consent requests of `state.db` whose proxy died while they waited (killed, crashed: it could
 * not withdraw them itself) as `withdrawn`, and audits each as `consent_withdrawn` — the event of a request
 * whose caller went away — with the request's id and why. A request a person answered whose proxy died
 * before reading the answer (its nonce never spent) is concluded the same way, its nonce spent so that it is
 * concluded once. Run by a starting `acp proxy`; the call each one held ended with the process. Never
 * throws: a failure is logged, and the rows stay for the next start.
 */
export async function settleOrphanedConsent(options: {
  readonly db: Database | null;
  readonly audit: AuditSink;
  readonly now: () => Date;
  readonly log: (line: string) => void;
}): Promise<number> {
  if (options.db === null) return 0;
  const db = options.db;
  let rows: { row: PendingConsentRow; reason: string; answered: boolean }[];
  try {
    const store = createPendingConsentStore(db);
    const pending = store.settleOrphaned(options.now().getTime());
    const nonces = createSqliteNonceStore(db);
    // a spend that succeeds: no process ever checked this answer, so nothing ran on it. Only the rows whose
    // nonce is unspent are read, and they are spent in one transaction: a start redoes nothing earlier ones did
    const answered = store.answeredOrphans();
    const spent = nonces.spendEach(
      answered.map((row) => ({ nonce: row.nonce, requestId: row.id, expiresAtMs: row.expiresAtMs })),
    );
    const unread = answered.filter((_, i) => spent[i] === true);
    rows = [
      ...pending.map((row) => ({ row, reason: orphanedReason(row), answered: false })),
      ...unread.map((row) => ({ row, reason: unreadAnswerReason(row), answered: true })),
    ];
  } catch (err) {
    options.log(`cannot settle the consent requests of stopped proxies: ${messageOf(err)}`);
    return 0;
  }
  for (const { row, reason, answered } of rows) {
    try {
      await options.audit.record("consent_withdrawn", {
        request_id: row.id,
        session_id: row.sessionId,
        server: row.server,
        tool: row.tool,
        decision: "withdrawn",
        reason,
        orphaned: true,
        ...(answered ? { answer_unread: row.status } : {}),
        ...(row.owner !== null ? { owner_pid: row.owner.pid, owner_host: row.owner.host } : {}),
      });
    } catch (err) {
      options.log(`cannot audit the withdrawal of \`${row.id}\`: ${messageOf(err)}`);
    }
  }
  if (rows.length > 0) {
    options.log(
      `${rows.length} consent request${rows.length === 1 ? "" : "s"} of a stopped proxy withdrawn: ${rows.map((r) => r.row.id).join(", ")}`,
    );
  }
  return rows.length;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
