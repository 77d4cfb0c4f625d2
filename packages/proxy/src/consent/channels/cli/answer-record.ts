import type { DecideResult, PendingConsentRow, PendingConsentStore } from "@acp/store";
import { checkHumanAnswer } from "../../response.js";
import type { ApprovalScope, ArbiterVerdict, ConsentRequestV02, HumanAnswer } from "../../types.js";

/** What `acp approve` / `acp deny` record in the pending-consent table. */
export interface CliAnswerRecord {
  readonly decision: "approved" | "denied";
  readonly scope?: ApprovalScope;
  readonly modifications?: Record<string, unknown>;
  readonly reason?: string;
  readonly approver: string;
  /** The nonce of the request answered: an answer copied onto another row is refused. */
  readonly nonce: string;
  /**
   * The channel the person answered through when it is not the command line: a Telegram press or webhook
   * callback another proxy received and recorded here (`HumanAnswer.channel`). Absent: `cli`.
   */
  readonly channel?: string;
}

/** What a person answers from the command line. */
export interface CliAnswerInput {
  readonly id: string;
  readonly decision: "approved" | "denied";
  readonly scope?: ApprovalScope;
  readonly modifications?: Record<string, unknown>;
  readonly reason?: string;
  readonly approverId: string;
  /** The channel the person answered through, when another channel relays the answer here. */
  readonly channel?: string;
}

/**
 * Records a command-line answer, once and atomically. Fails (changing nothing) when the id is unknown, the
 * request expired or it was already decided.
 */
export function answerPendingConsent(store: PendingConsentStore, input: CliAnswerInput, now: Date): DecideResult {
  const row = store.get(input.id);
  if (row === null) return { ok: false, code: "consent_request_unknown" };
  const record: CliAnswerRecord = {
    decision: input.decision,
    approver: input.approverId,
    nonce: row.nonce,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    ...(input.modifications !== undefined ? { modifications: input.modifications } : {}),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.channel !== undefined ? { channel: input.channel } : {}),
  };
  return store.decide(input.id, input.decision, record, now.getTime());
}

/**
 * Reads a recorded answer back as a `HumanAnswer`; null when it is malformed or bound to another nonce
 * (the channel then refuses it).
 */
export function readCliAnswer(record: unknown, nonce: string, now: Date): HumanAnswer | null {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return null;
  const r = record as Partial<Record<keyof CliAnswerRecord, unknown>>;
  if (r.nonce !== nonce || typeof r.approver !== "string") return null;
  const modified = r.decision === "approved" && r.modifications !== undefined;
  const answer = {
    decision: modified ? "approved_with_modifications" : r.decision,
    approverId: r.approver,
    ...(r.scope !== undefined ? { scope: r.scope } : {}),
    ...(r.modifications !== undefined ? { modifications: r.modifications } : {}),
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
    ...(typeof r.channel === "string" ? { channel: r.channel } : {}),
  };
  if (r.decision !== "approved" && r.decision !== "denied") return null;
  return checkHumanAnswer(answer, now) === null ? (answer as HumanAnswer) : null;
}

/**
 * The answer `row` holds for `request` if a person gave it no later than the request's expiry, with when
 * (for `ConsentChannel.lastLook`: recorded between two reads of the table, or before the waiting call was
 * woken); undefined otherwise.
 */
export function answerGivenInTime(
  row: PendingConsentRow | null,
  request: ConsentRequestV02,
): { readonly answer: HumanAnswer; readonly atMs: number } | undefined {
  if (row === null || row.nonce !== request.nonce || row.answer === null || row.decidedAtMs === null) return undefined;
  if (row.status !== "approved" && row.status !== "denied") return undefined;
  if (row.decidedAtMs > Date.parse(request.expires_at)) return undefined;
  const answer = readCliAnswer(row.answer, request.nonce, new Date(row.decidedAtMs));
  return answer === null ? undefined : { answer, atMs: row.decidedAtMs };
}

/**
 * What arbitrating another channel's answer through the pending table ends in (`ConsentChannel.arbitrate`),
 * given what the table said to recording it (`result`) and a way to read the request's row as it now is
 * (read only when the table took no answer): `recorded` (also when there is no row: nobody can answer
 * through it either), `taken` (an answer of this request got there first: that answer wins), or `refused`
 * (the request ended there). One rule for the proxy's table (SQLite) and `acp serve`'s (SQLite or PostgreSQL).
 */
export async function arbitrationVerdict(
  result: DecideResult,
  readRow: () => PendingConsentRow | null | Promise<PendingConsentRow | null>,
  request: ConsentRequestV02,
  atMs: number,
): Promise<ArbiterVerdict> {
  if (result.ok || result.code === "consent_request_unknown") return { kind: "recorded" };
  const row = await readRow();
  if (result.code === "consent_request_already_decided" && row !== null && row.nonce === request.nonce) {
    const held = row.answer === null ? null : readCliAnswer(row.answer, request.nonce, new Date(atMs));
    const at = row.decidedAtMs;
    if (held !== null) return { kind: "taken", answer: at === null ? held : { ...held, answeredAtMs: at } };
  }
  const why =
    result.code === "consent_request_expired" ? "it expired there" : `it is ${result.status ?? "ended"} there`;
  return { kind: "refused", reason: `the pending table took no answer for the request: ${why}` };
}
