/**
 * When a refusal that only time lifts is lifted: a rule's spent `rate_limit` (`rate_limited`), a caller's
 * spent share of the policy work (`caller_budget_exhausted`), a consent-graph proposal's cooling period
 * (`cooling_period`). Kept beside the verdict rather than in it,
 * as policy work is (`policy-work.ts`): the verdict's wire form stays as it was, and a front end can tell
 * its caller when to come back (`Retry-After` in `acp serve`).
 */
import type { SourceVerdict } from "../pipeline/types.js";

/**
 * Whole seconds from `nowMs` until `atMs`, rounded up, at least 1 (a time past, or none, still says wait): the
 * "try again in N s" of a refusal's message and the `Retry-After` of its answer, counted one way.
 */
export function secondsUntil(atMs: number, nowMs: number): number {
  const ms = atMs - nowMs;
  return Number.isFinite(ms) ? Math.max(1, Math.ceil(ms / 1000)) : 1;
}

/** The time (ms since the epoch) from which each such verdict's refusal may be lifted. */
const lifted = new WeakMap<object, number>();

/** Keeps, for `verdict`, the time (ms since the epoch) its refusal may be lifted (a non-finite time: none). */
export function noteRetryAt<T extends SourceVerdict>(verdict: T, atMs: number): T {
  if (Number.isFinite(atMs)) lifted.set(verdict, atMs);
  return verdict;
}

/**
 * When a refused decision may be answered otherwise by waiting: the latest time kept for its refusing
 * verdicts ({@link noteRetryAt}), when every one of them has one. Undefined when the decision is not a
 * refusal, or when a verdict refuses for good (a deny rule, a blocked graph action, the contract): waiting would not
 * change the answer, so no time is told.
 */
export function retryAtOf(decision: {
  readonly route: string;
  readonly verdicts: readonly SourceVerdict[];
}): number | undefined {
  if (decision.route !== "refuse") return undefined;
  let latest: number | undefined;
  for (const verdict of decision.verdicts) {
    if (verdict.route !== "refuse") continue;
    const at = lifted.get(verdict);
    if (at === undefined) return undefined;
    latest = latest === undefined ? at : Math.max(latest, at);
  }
  return latest;
}
