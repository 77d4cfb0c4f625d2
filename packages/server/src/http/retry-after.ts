/**
 * `Retry-After` (RFC 9110 §10.2.3, delay-seconds) on an answer that tells its caller to come back later:
 * a decision refused only until a rule's rate limit frees a slot or the caller's share of the policy work
 * comes back (`retryAtOf`), or a 429/503 whose cause passes by itself.
 */
import { retryAtOf, secondsUntil, type Decision } from "@acp/core";

/**
 * Whole seconds from `nowMs` until `atMs`, rounded up, at least 1 (a time in the past still says wait): as a
 * `rate_limited` refusal's "try again in N s" counts them (`secondsUntil`).
 */
export function retryAfterSeconds(atMs: number, nowMs: number): string {
  return String(secondsUntil(atMs, nowMs));
}

/**
 * The `Retry-After` value of an answer carrying `decision`, or undefined: only a refusal that waiting lifts
 * (every refusing source refused for a spent rate limit or a spent caller share) says when to come back.
 */
export function decisionRetryAfter(decision: Decision, now: Date): string | undefined {
  const at = retryAtOf(decision);
  return at === undefined ? undefined : retryAfterSeconds(at, now.getTime());
}
