/** Consent requests as the API and the console show them, and a person's answer recorded once. */
import {
  checkHumanAnswer,
  parseApprovalDuration,
  type ApprovalScope,
  type CliAnswerRecord,
  type HumanAnswer,
} from "@acp/proxy/consent";
import { describeOwner, isOrphaned, type AsyncPendingConsentStore, type PendingConsentRow } from "@acp/store";
import { HttpError } from "../http/error-body.js";
import { requirePrintableField } from "../http/printable-body.js";
import { checkModifications } from "./modifications-check.js";

/** One consent request on the wire (parameters already redacted when it was raised). */
export interface ConsentView {
  readonly id: string;
  readonly status: string;
  readonly server: string;
  readonly tool: string;
  readonly session_id: string | null;
  readonly created_at: string;
  readonly expires_at: string;
  readonly decided_at: string | null;
  /** The §4.1 consent request, parameters redacted. */
  readonly request: unknown;
  /** Why the pipeline asked: `{source, code, message, rule?}`. */
  readonly reasons: unknown;
  /** The recorded answer (decision, scope, reason, approver), when a person answered here. */
  readonly answer: unknown;
}

function answerView(answer: unknown): unknown {
  if (typeof answer !== "object" || answer === null) return null;
  return Object.fromEntries(Object.entries(answer as Record<string, unknown>).filter(([key]) => key !== "nonce"));
}

/** The wire view of a row (the answer's nonce left out). */
export function viewConsent(row: PendingConsentRow): ConsentView {
  return {
    id: row.id,
    status: row.status,
    server: row.server,
    tool: row.tool,
    session_id: row.sessionId,
    created_at: new Date(row.createdAtMs).toISOString(),
    expires_at: new Date(row.expiresAtMs).toISOString(),
    decided_at: row.decidedAtMs === null ? null : new Date(row.decidedAtMs).toISOString(),
    request: row.request,
    reasons: row.reasons,
    answer: answerView(row.answer),
  };
}

/** A person's answer as the API and the console take it. */
export interface ConsentAnswerInput {
  readonly decision: "approved" | "denied" | "approved_with_modifications";
  readonly scope?: "once" | "session" | { readonly until: string } | { readonly for: string };
  readonly modifications?: Record<string, unknown>;
  readonly reason?: string;
  readonly nonce?: string;
}

function scopeOf(raw: ConsentAnswerInput["scope"], now: Date): ApprovalScope | undefined {
  if (raw === undefined || typeof raw === "string") return raw;
  if ("until" in raw) return { until: raw.until };
  const ms = parseApprovalDuration(raw.for);
  if (ms === null) throw new HttpError(400, "invalid_body", `body/scope: invalid duration \`${raw.for}\` (at most 7d)`);
  return { until: new Date(now.getTime() + ms).toISOString() };
}

/**
 * Records an answer, once across every node (the waiting call picks it up from the pending table), in the
 * record `acp approve` writes (with `channel` when the person answered in the console: the signed response
 * then says `approver.channel: "console"`). 404 unknown id,
 * 409 already decided or a nonce that is not the request's, 410 expired, 400 for modifications the pipeline
 * would refuse as arguments (`unsafe_integer` for a number beyond ±2^53−1).
 */
export async function answerConsent(
  store: AsyncPendingConsentStore,
  id: string,
  input: ConsentAnswerInput,
  approverId: string,
  now: Date,
  /** The channel the person answered through when it is not the command line (`console`): `approver.channel`. */
  channel?: "console",
): Promise<ConsentView> {
  // signed into the consent response, told to the agent and shown in audit tails: printable only, as approver_id
  requirePrintableField("reason", input.reason, "it is signed into the consent response and shown to the agent");
  const row = await store.get(id);
  if (row === null) throw new HttpError(404, "consent_request_unknown", `no consent request \`${id}\``);
  if (isOrphaned(row)) {
    const who = row.owner === null ? "" : ` (${describeOwner(row.owner)})`;
    throw new HttpError(
      410,
      "consent_request_orphaned",
      `consent request \`${id}\` cannot be answered: the acp proxy that asked${who} is no longer running, so nobody waits for the answer; nothing was recorded`,
    );
  }
  if (input.nonce !== undefined && input.nonce !== row.nonce) {
    throw new HttpError(409, "consent_nonce_mismatch", `the nonce does not belong to consent request \`${id}\``);
  }
  const modified = input.decision === "approved_with_modifications";
  if (modified !== (input.modifications !== undefined)) {
    throw new HttpError(
      400,
      "invalid_body",
      "body: `modifications` go with `approved_with_modifications` and only with it",
    );
  }
  // edited arguments are what the caller runs: ones the pipeline would refuse as arguments (a number JSON
  // parsing may have rounded, nesting past 64) are refused here, nothing recorded, the request still waiting
  const badEdit = input.modifications === undefined ? null : checkModifications(input.modifications);
  if (badEdit !== null) throw badEdit;
  const scope = scopeOf(input.scope, now);
  const decision = input.decision === "denied" ? "denied" : "approved";
  // The waiting call reads the answer with the same check and denies one that fails it: refuse it here,
  // so the person hears why and nothing is recorded (a window that already ended, or longer than 7 days).
  const problem = checkHumanAnswer(
    {
      decision: input.decision,
      approverId,
      ...(scope !== undefined && input.decision !== "denied" ? { scope } : {}),
      ...(modified ? { modifications: input.modifications } : {}),
      ...(input.reason !== undefined ? { reason: input.reason } : {}),
    },
    now,
  );
  if (problem !== null) throw new HttpError(400, "invalid_body", `body: ${problem}`);
  const record: CliAnswerRecord = {
    decision,
    approver: approverId,
    nonce: row.nonce,
    ...(scope !== undefined && input.decision !== "denied" ? { scope } : {}),
    ...(modified && input.modifications !== undefined ? { modifications: input.modifications } : {}),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(channel !== undefined ? { channel } : {}),
  };
  const result = await store.decide(id, decision, record, now.getTime());
  if (result.ok) return viewConsent(result.row);
  if (result.code === "consent_request_unknown") throw new HttpError(404, result.code, `no consent request \`${id}\``);
  // expired whether the clock or the waiting call settled it first: 410, as the reference says
  if (result.code === "consent_request_expired" || result.status === "expired") {
    throw new HttpError(410, "consent_request_expired", `consent request \`${id}\` has expired; the call was denied`);
  }
  throw new HttpError(409, result.code, `consent request \`${id}\` was already ${result.status ?? "decided"}`);
}

/**
 * Records an answer a consent channel received for a request it does not hold — a Telegram press or a webhook
 * callback that reached this node for a request another node (on the same PostgreSQL) raised, or one this
 * node raised before it restarted — in the pending table, where the waiting node reads it, as the API would
 * record it, keeping the channel it came by. False (nothing recorded) when the request is unknown, no longer
 * pending, its waiting proxy is gone, `nonce` is another request's, or the answer is one the waiting call
 * would refuse (or modifications `answerConsent` refuses).
 */
export async function recordForwardedAnswer(
  store: AsyncPendingConsentStore,
  id: string,
  answer: HumanAnswer,
  nonce: string | undefined,
  now: Date,
): Promise<boolean> {
  const row = await store.get(id);
  if (row === null || row.status !== "pending" || isOrphaned(row)) return false;
  if (nonce !== undefined && nonce !== row.nonce) return false;
  if (checkHumanAnswer(answer, now) !== null) return false;
  if (answer.modifications !== undefined && checkModifications(answer.modifications) !== null) return false;
  const decision = answer.decision === "denied" ? "denied" : "approved";
  const record: CliAnswerRecord = {
    decision,
    approver: answer.approverId,
    nonce: row.nonce,
    ...(answer.scope !== undefined && decision === "approved" ? { scope: answer.scope } : {}),
    ...(answer.modifications !== undefined && decision === "approved" ? { modifications: answer.modifications } : {}),
    ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
    ...(answer.channel !== undefined ? { channel: answer.channel } : {}),
  };
  return (await store.decide(id, decision, record, now.getTime())).ok;
}
