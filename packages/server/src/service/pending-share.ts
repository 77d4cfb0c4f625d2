/**
 * Each caller's share of the waiting consent requests (`serve.pending_per_caller`): the agent a token names
 * (`serve.agent_tokens`), or every caller whose token names none, together (the anonymous agents' token, or
 * loopback without a token: the agent such a body names is only its word, and naming another would make a
 * new share). A caller whose share is full is refused, not queued: the others' requests still reach a person.
 */
import type { Decision } from "@acp/core";

/** The reason code of a call refused because its caller's share of the waiting requests is full. */
export const CALLER_PENDING_FULL = "caller_pending_full";

/** The share of each caller when none is configured: a quarter of the waiting requests, at least 1. */
export function defaultPendingPerCaller(max: number): number {
  return Math.max(1, Math.floor(max / 4));
}

/** Who a refusal names: the agent of a named token, or the callers without one. */
function callerWords(caller: string | undefined): string {
  if (caller === undefined) return "the callers whose token names no agent (they share one share)";
  return `agent \`${caller.length > 64 ? `${caller.slice(0, 64)}…` : caller}\``;
}

/**
 * Thrown inside the decision service when the caller's share is full (counted on this node, or by the store
 * for every node): {@link refuseForPendingShare} turns it into the caller's refusal.
 */
export class CallerPendingFullError extends Error {
  readonly max: number;
  readonly caller: string | undefined;
  constructor(max: number, caller: string | undefined) {
    super(
      `${callerWords(caller)} has ${max} consent requests waiting, the most one caller may ` +
        "(serve.pending_per_caller; the other callers' requests are not held up by it): this one is refused " +
        "without asking a person; try again once a person has answered some",
    );
    this.name = "CallerPendingFullError";
    this.max = max;
    this.caller = caller;
  }
}

/**
 * The refusal of a call the pipeline routed to a person while its caller's share was full: `route: refuse`,
 * the reason `caller_pending_full` (source `pipeline`) first, the pipeline's reasons kept after it.
 */
export function refuseForPendingShare(asked: Decision, full: CallerPendingFullError): Decision {
  return {
    route: "refuse",
    action: "deny",
    rule: asked.rule,
    category: asked.category,
    risk_level: asked.risk_level,
    reasons: [{ source: "pipeline", code: CALLER_PENDING_FULL, message: full.message }, ...asked.reasons],
    verdicts: asked.verdicts,
    ...(asked.policy_hash !== undefined ? { policy_hash: asked.policy_hash } : {}),
  };
}
