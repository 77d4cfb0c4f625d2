/**
 * Completing a consent request whose waiting call is gone (its node was killed or restarted, or the
 * client lost its connection): `POST /v1/consent/{id}/complete` on ANY node waits for the answer in the
 * shared table, turns it into a signed, verified consent response and records it in the audit chain,
 * as the waiting call would have. Verification spends the request's nonce in the shared nonce store, so
 * a request completes once across every node: the original waiting call, or one completion.
 */
import {
  MAX_SESSION_APPROVAL_MS,
  MAX_WINDOW_APPROVAL_MS,
  type ActionRequest,
  type Decision,
  type RiskLevel,
} from "@acp/core";
import {
  askedLevel,
  consentActionFields,
  judgeEdit,
  readCliAnswer,
  refusalText,
  type AuditSink,
  type ConsentRequestV02,
  type ConsentResponseV02,
  type HumanAnswer,
  type SignConsentResponse,
  type UnsignedConsentResponseV02,
  type VerifyConsentResponse,
} from "@acp/proxy";
import type { PendingConsentRow } from "@acp/store";
import { HttpError } from "../http/error-body.js";
import { unjudgedEdit } from "./decision-service.js";
import type { ServerStores } from "../store/types.js";

/** How a completed request ended. */
export interface CompletedConsent {
  readonly outcome: "approved" | "denied" | "expired" | "withdrawn";
  readonly request_id: string;
  readonly reason?: string;
  /** The arguments as recorded in the request (secrets stay redacted), with a person's edits applied. */
  readonly arguments?: Record<string, unknown>;
  readonly consent_response?: ConsentResponseV02;
  /** A person approved with edits the policy refuses: `outcome` is then `denied`; the rule and reasons. */
  readonly edit_refused?: { readonly rule: string | null; readonly reasons: readonly string[] };
  /**
   * A person approved with edits that fall under an ask rule nobody was asked about (or ask at a stronger
   * level): nothing runs (`outcome` is `denied`, so a caller that runs only `approved` stays closed), and the
   * question is the caller's to raise — decide again with `arguments` (`POST /v1/decide?wait=true`). The
   * rule, the level it asks at and its reasons (the first saying why it is asked again).
   */
  readonly ask_again?: { readonly rule: string | null; readonly level: string; readonly reasons: readonly string[] };
}

/** What completion needs. */
export interface ConsentCompletionDeps {
  readonly stores: Pick<ServerStores, "pending" | "answers" | "changes" | "nonces">;
  readonly sign: SignConsentResponse;
  readonly verify: VerifyConsentResponse;
  readonly audit: AuditSink;
  readonly clock: () => Date;
  /** Judges arguments a person edited (the standing rules, no rate limit spent); absent: not judged. */
  readonly recheck?: (request: ActionRequest) => Promise<Decision>;
}

/**
 * When the approval ends, counted from when the person answered (`answeredAt`), as the proxy's broker does:
 * a session lasts core's cap, `MAX_SESSION_APPROVAL_MS`; a window ends when the person said. A window longer
 * than core's `MAX_WINDOW_APPROVAL_MS` after the answer never reaches here: `readCliAnswer` refuses it as of
 * `answeredAt` (not as of the completion, which is later), so no proof is signed that verifiers refuse.
 */
function validUntil(answer: HumanAnswer, request: ConsentRequestV02, answeredAt: Date): string {
  const scope = answer.scope ?? "once";
  if (scope === "once" || answer.decision === "denied") return request.expires_at;
  if (scope === "session") return new Date(answeredAt.getTime() + MAX_SESSION_APPROVAL_MS).toISOString();
  return new Date(Date.parse(scope.until)).toISOString();
}

/** The channel the person answered through: the one the record names (`console`), else the table's `cli`. */
function channelOf(answer: HumanAnswer): string {
  return typeof answer.channel === "string" && /^[a-z][a-z0-9_-]{0,31}$/.test(answer.channel) ? answer.channel : "cli";
}

/**
 * The response to sign, timestamped when the person answered (`answeredAt`, the row's `decided_at`), not when
 * it is completed: the proxy's broker does the same for an answer read after its request expired, and a
 * response timestamped after its request's `expires_at` does not verify against the request (§6.3 5).
 */
function unsignedFor(answer: HumanAnswer, row: PendingConsentRow, answeredAt: Date): UnsignedConsentResponseV02 {
  const request = row.request as ConsentRequestV02;
  const denied = answer.decision === "denied";
  const modified = !denied && answer.modifications !== undefined;
  const scope = denied ? "once" : (answer.scope ?? "once");
  return {
    type: "consent_response",
    version: "0.2.0",
    request_id: request.id,
    timestamp: answeredAt.toISOString(),
    decision: denied ? "denied" : modified ? "approved_with_modifications" : "approved",
    approver: { id: answer.approverId, channel: channelOf(answer) },
    modifications: modified ? { ...answer.modifications } : null,
    conditions: {
      valid_until: validUntil(answer, request, answeredAt),
      single_use: scope === "once",
      scope: typeof scope === "string" ? scope : "window",
      ...(scope === "session" && row.sessionId !== null ? { session_id: row.sessionId } : {}),
    },
    nonce: request.nonce,
    // a denial's reason is not a field of the signed response (§4.2): it goes beside it, in the event's
    // metadata and the answer (a response carrying it does not verify with the public key, as the audit checks)
  };
}

async function waitForAnswer(deps: ConsentCompletionDeps, row: PendingConsentRow, signal: AbortSignal) {
  if (row.status !== "pending") return row;
  const expiry = new AbortController();
  const timer = setTimeout(() => expiry.abort(), Math.max(0, row.expiresAtMs - deps.clock().getTime()));
  const both = AbortSignal.any([signal, expiry.signal]);
  try {
    return await deps.stores.answers.wait(row.id, both);
  } catch (err) {
    if (!expiry.signal.aborted) throw err;
    // this completion concludes the request (no waiting call is left to): it records the end, as that call
    // would have; a request another node or the sweep concluded first was recorded there
    if (await deps.stores.pending.settle(row.id, "expired", deps.clock().getTime())) {
      await record(deps, row, "consent_expired", {});
    }
    deps.stores.changes.poke();
    return (await deps.stores.pending.get(row.id)) ?? row;
  } finally {
    clearTimeout(timer);
  }
}

async function record(deps: ConsentCompletionDeps, row: PendingConsentRow, type: string, fields: object) {
  const request = row.request as ConsentRequestV02;
  await deps.audit.record(type, {
    request_id: request.id,
    agent: request.agent.id,
    server: row.server,
    tool: row.tool,
    session_id: row.sessionId,
    category: request.action.category,
    risk_level: request.action.risk_level,
    decision: type.replace(/^consent_/, ""),
    policy_rule: request.policy.rule_id,
    metadata: { ...fields, completed_after_restart: true },
  });
}

/** A denial as the waiting call words it (the broker): `alice` via cli: not today; `alice` via console. */
function deniedReason(answer: HumanAnswer): string {
  const via = channelOf(answer);
  const who = answer.approverId.startsWith(`${via}:`) ? answer.approverId.slice(via.length + 1) : answer.approverId;
  return `\`${who}\` via ${via}${answer.reason === undefined ? "" : `: ${answer.reason}`}`;
}

function alreadyCompleted(id: string): HttpError {
  return new HttpError(
    409,
    "consent_already_completed",
    `consent request \`${id}\` was already completed (its nonce is spent)`,
  );
}

/**
 * The person answered in time, but the answer ended (a request's approval lasts until the request expires)
 * before anyone completed it: nothing can run. Spending the nonce makes this conclusion once across nodes,
 * as a completion's verification would; the one that spends it records how the request ended.
 */
async function concludeEnded(
  deps: ConsentCompletionDeps,
  row: PendingConsentRow,
  answer: HumanAnswer,
  validUntil: string,
): Promise<CompletedConsent> {
  if (!(await deps.stores.nonces.spend(row.nonce, row.id, Date.parse(validUntil)))) throw alreadyCompleted(row.id);
  if (answer.decision === "denied") {
    const reason = deniedReason(answer);
    await record(deps, row, "consent_denied", { reason });
    return { outcome: "denied", request_id: row.id, reason };
  }
  await record(deps, row, "consent_expired", { answered: "approved" });
  const who = answer.approverId;
  return {
    outcome: "expired",
    request_id: row.id,
    reason: `approved by \`${who}\`, but the approval ended at ${validUntil} before the request was completed`,
  };
}

/**
 * The table holds an answer recorded after its request expired (or with no time): the table refuses such an
 * answer, so the row was written around it (another writer of the database, a clock set back). It is not
 * used: the request ended unanswered. Spending the nonce makes this conclusion once across nodes; the one
 * that spends it records the request's `consent_expired`.
 */
async function concludeLate(
  deps: ConsentCompletionDeps,
  row: PendingConsentRow,
  request: ConsentRequestV02,
): Promise<CompletedConsent> {
  if (!(await deps.stores.nonces.spend(row.nonce, row.id, Date.parse(request.expires_at)))) {
    throw alreadyCompleted(row.id);
  }
  const at = row.decidedAtMs === null ? "at no recorded time" : `at ${new Date(row.decidedAtMs).toISOString()}`;
  await record(deps, row, "consent_expired", { answer_refused: "recorded after the request expired" });
  return {
    outcome: "expired",
    request_id: row.id,
    reason: `the answer was recorded ${at}, after the request expired at ${request.expires_at}: not used`,
  };
}

/** What a completion says, and records, of an answer it refuses as malformed. */
export const MALFORMED_ANSWER_REASON = "refused a malformed answer";

/**
 * The table holds an answer that is none (another nonce, no approver, an unknown decision, a window past the
 * cap as of when it was given, …): it is refused, and the request ends denied. Its nonce is spent, held for as
 * long as any answer given in time could approve (the request's expiry plus the longest approval), so the end
 * is concluded once across nodes and no answer written later into the row — a "fixed" one — is taken under
 * the same nonce (409 `consent_already_completed`); the completion that spends it records `consent_denied`.
 */
async function concludeMalformed(deps: ConsentCompletionDeps, row: PendingConsentRow): Promise<CompletedConsent> {
  const heldUntilMs = row.expiresAtMs + Math.max(MAX_SESSION_APPROVAL_MS, MAX_WINDOW_APPROVAL_MS);
  if (!(await deps.stores.nonces.spend(row.nonce, row.id, heldUntilMs))) throw alreadyCompleted(row.id);
  await record(deps, row, "consent_denied", { reason: MALFORMED_ANSWER_REASON, answer_refused: "malformed" });
  return { outcome: "denied", request_id: row.id, reason: MALFORMED_ANSWER_REASON };
}

/** Waits for request `id` to be answered (bounded by its expiry and `signal`) and completes it once. */
export async function completeConsent(
  deps: ConsentCompletionDeps,
  id: string,
  signal: AbortSignal,
): Promise<CompletedConsent> {
  const found = await deps.stores.pending.get(id);
  if (found === null) throw new HttpError(404, "consent_request_unknown", `no consent request \`${id}\``);
  const row = await waitForAnswer(deps, found, signal);
  if (row.status === "expired" || row.status === "withdrawn" || row.status === "pending") {
    return { outcome: row.status === "pending" ? "expired" : row.status, request_id: id };
  }
  const request = row.request as ConsentRequestV02;
  const now = deps.clock();
  // the answer counts as given when the table recorded it, which must be by the request's expiry (§6.3 5)
  const answeredMs = row.decidedAtMs ?? Number.NaN;
  const inTime = answeredMs <= Date.parse(request.expires_at);
  // checked as of the answer: a window is at most MAX_WINDOW_APPROVAL_MS after it (the signed `timestamp`)
  const answer = readCliAnswer(row.answer, row.nonce, inTime ? new Date(answeredMs) : now);
  if (answer === null) return concludeMalformed(deps, row);
  if (!inTime) return concludeLate(deps, row, request);
  const answeredAt = new Date(answeredMs);
  const args = { ...request.action.parameters };
  // what the signature's action_hash is over, and that hash, as the proxy's gate and the broker record them:
  // checkable from the event with the public key alone, the signature still when a value is cut to fit the line
  const actionOf = (parameters: Record<string, unknown>) => consentActionFields(request, parameters);
  const unsigned = unsignedFor(answer, row, answeredAt);
  // a response that ended cannot verify: that is not a spent nonce, and the request still needs its end recorded
  if (!(Date.parse(unsigned.conditions.valid_until) > now.getTime())) {
    return concludeEnded(deps, row, answer, unsigned.conditions.valid_until);
  }
  const response = await deps.sign({ response: unsigned, request, arguments: args });
  const verdict = await deps.verify({ response, request, arguments: args, now });
  if (verdict !== true && (typeof verdict !== "object" || !verdict.ok)) throw alreadyCompleted(id);
  if (response.decision === "denied") {
    const reason = deniedReason(answer);
    await record(deps, row, "consent_denied", { reason, consent_response: response, ...actionOf(args) });
    return { outcome: "denied", request_id: id, reason, consent_response: response };
  }
  const edited = response.modifications === null ? args : { ...args, ...response.modifications };
  await record(deps, row, "consent_approved", {
    decision: response.decision,
    consent_response: response,
    ...actionOf(edited),
  });
  if (response.modifications !== null && deps.recheck !== undefined) {
    // as the waiting call would have (`judgeEdit`): an edit the policy refuses is not run because a person
    // typed it, nor one under an ask rule the person was not asked about (or at a stronger level). With no
    // call waiting, the completion cannot put that question itself (nothing would deliver it to the channels
    // and hold it until answered; a request it raised would be concluded by whoever read the answer first):
    // it says `ask_again`, with the rule, for the caller to decide again with the edited arguments
    const rechecked = await deps
      .recheck({
        tool: request.action.tool,
        server: request.action.server,
        arguments: edited,
        category: request.action.category,
        risk_level: request.action.risk_level,
      } as ActionRequest)
      .catch(unjudgedEdit);
    const answered = {
      rules: [request.policy.rule_id === "default" ? null : request.policy.rule_id],
      level: request.policy.required_level as RiskLevel,
    };
    const judged = judgeEdit(rechecked, answered);
    if (judged.kind !== "stands") {
      const decision = judged.decision;
      const reason =
        judged.kind === "refused"
          ? `approved with edits, but the edited arguments are ${refusalText(decision)}`
          : `approved with edits, but ${judged.why}: not run (ask_again: decide again with the edited arguments to ask it)`;
      await record(deps, row, "policy_evaluated", {
        edited_arguments: true,
        decision: decision.route,
        policy_rule: decision.rule,
        reasons: decision.reasons.map((r) => `${r.source}:${r.code}`),
        ...(decision.policy_hash !== undefined ? { policy_hash: decision.policy_hash } : {}),
      });
      const reasons = decision.reasons.map((r) => r.message);
      return {
        outcome: "denied",
        request_id: id,
        reason,
        arguments: edited,
        consent_response: response,
        ...(judged.kind === "refused"
          ? { edit_refused: { rule: decision.rule, reasons } }
          : { ask_again: { rule: decision.rule, level: askedLevel(decision), reasons } }),
      };
    }
  }
  return { outcome: "approved", request_id: id, arguments: edited, consent_response: response };
}
