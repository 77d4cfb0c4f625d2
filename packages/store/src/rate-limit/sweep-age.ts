/**
 * How old a counted call must be before the limiters' periodic sweep may delete it. The sweep only collects
 * rows of keys nobody consumes any more; a key in use drops its own calls as they leave its window. A row's
 * `expires_at_ms` is the end of the window it was counted under, which a changed policy may have widened
 * (`2/minute` to `2/hour`): deleting by it would drop calls the new window still counts. So the sweep waits
 * until a call is older than the longest window a policy can name (a day, `N/day`) and than any window the
 * limiter was given.
 */
export const RATE_LIMIT_SWEEP_AGE_MS = 86_400_000;

/** The `at_ms` at or before which the sweep may delete rows, given the longest window seen so far. */
export function sweepCutoff(nowMs: number, longestWindowMs: number): number {
  return nowMs - Math.max(RATE_LIMIT_SWEEP_AGE_MS, longestWindowMs);
}
