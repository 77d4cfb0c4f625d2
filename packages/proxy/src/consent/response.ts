import { hasHiddenCharacters, parseIsoTime } from "@acp/core";
import { MAX_APPROVAL_WINDOW_MS, isApprovalScope } from "./scope.js";
import type { ApprovalScope, ConsentRequestV02, HumanAnswer, UnsignedConsentResponseV02 } from "./types.js";

const DECISIONS = new Set(["approved", "denied", "approved_with_modifications"]);
const MAX_REASON = 500;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks a channel's answer before anything is signed; returns a message when it is malformed. A malformed
 * answer denies (fail closed), it never approves.
 */
export function checkHumanAnswer(answer: unknown, now: Date): string | null {
  if (!isPlainObject(answer)) return "the answer is not an object";
  const { decision, modifications, scope, reason, approverId } = answer;
  if (typeof decision !== "string" || !DECISIONS.has(decision)) return "unknown decision";
  if (typeof approverId !== "string" || approverId === "") return "the answer names no approver";
  if (reason !== undefined && (typeof reason !== "string" || reason.length > MAX_REASON)) return "malformed reason";
  // signed into the consent response and told to the agent: what every front end refuses, refused here too
  if (reason !== undefined && hasHiddenCharacters(reason)) {
    return "the reason holds a control, invisible or bidirectional character: use printable characters";
  }
  if (decision === "approved_with_modifications" && !isPlainObject(modifications)) {
    return "approved_with_modifications needs an object of modified arguments";
  }
  if (modifications !== undefined && !isPlainObject(modifications)) return "modifications must be an object";
  if (scope !== undefined) {
    if (!isApprovalScope(scope)) return "malformed approval scope";
    if (typeof scope === "object") {
      const until = parseIsoTime(scope.until) ?? Number.NEGATIVE_INFINITY;
      if (until <= now.getTime()) return "the approval window has already ended";
      if (until - now.getTime() > MAX_APPROVAL_WINDOW_MS) return "the approval window is longer than seven days";
    }
  }
  return null;
}

/** The time an approval with this scope stays valid until. */
export function validUntilOf(scope: ApprovalScope, request: ConsentRequestV02, now: Date, sessionMs: number): string {
  if (scope === "once") return request.expires_at;
  if (scope === "session") return new Date(now.getTime() + sessionMs).toISOString();
  return new Date(Date.parse(scope.until)).toISOString();
}

/** Turns a checked answer into the unsigned §4.2 response, scope recorded in `conditions`. */
export function buildUnsignedResponse(
  answer: HumanAnswer,
  request: ConsentRequestV02,
  context: { readonly now: Date; readonly channel: string; readonly sessionId: string; readonly sessionMs: number },
): UnsignedConsentResponseV02 {
  const denied = answer.decision === "denied";
  const modified = !denied && answer.modifications !== undefined;
  const scope: ApprovalScope = denied ? "once" : (answer.scope ?? "once");
  const scopeName = typeof scope === "string" ? scope : "window";
  return {
    type: "consent_response",
    version: "0.2.0",
    request_id: request.id,
    timestamp: context.now.toISOString(),
    decision: denied ? "denied" : modified ? "approved_with_modifications" : "approved",
    approver: { id: answer.approverId, channel: context.channel },
    modifications: modified ? { ...answer.modifications } : null,
    conditions: {
      valid_until: validUntilOf(scope, request, context.now, context.sessionMs),
      single_use: scope === "once",
      scope: scopeName,
      ...(scope === "session" ? { session_id: context.sessionId } : {}),
    },
    nonce: request.nonce,
    ...(denied && answer.reason !== undefined ? { reason: answer.reason } : {}),
  };
}
