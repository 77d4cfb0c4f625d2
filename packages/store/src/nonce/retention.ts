/**
 * How long a spent nonce is remembered. A nonce makes a consent response single use, and every verifier
 * refuses a response once its `valid_until` has passed (`proof_expired` in `verifyConsentProof`; the
 * service's `verify` likewise), so the nonce only has to outlive that. A spend records `valid_until` (or the
 * request's expiry) as `expires_at_ms`; the nonce is kept until both that and its spend lie more than
 * {@link SPENT_NONCE_KEEP_MS} in the past. The day is the margin for clocks that disagree (a node `s` behind
 * still accepts a response `s` after it ended; nodes are assumed milliseconds apart).
 *
 * Time is not the only bound: the service also reads the nonce of a consent row it still holds (the expiry
 * sweep and `POST /v1/consent/{id}/complete` tell an answer a call used from one nobody used by it, and a
 * completion signs a fresh response from the row). So a nonce is pruned only once no `pending_consent` row
 * carries it (settled rows go a day after their request ended, `SETTLED_CONSENT_KEEP_MS`). Time-window
 * grants (`--for 10m`, session scope) do not depend on it: the broker re-verifies a grant's signed response
 * against the grant's own end without spending its nonce.
 */

/** A spent nonce is kept this long after the approval it made single use ended, and after its spend (one day). */
export const SPENT_NONCE_KEEP_MS = 86_400_000;

/** At most this many nonces are pruned per spend (a spend adds one: the table catches up). */
export const SPENT_NONCE_PRUNE_BATCH = 100;

/** At most this many nonces are pruned by one sweep (`prune` without a limit; `acp serve` sweeps every minute). */
export const SPENT_NONCE_SWEEP_BATCH = 1000;

/** The `expires_at_ms` before which a nonce no consent row carries may be pruned at `nowMs`. */
export function spentNonceCutoff(nowMs: number): number {
  return nowMs - SPENT_NONCE_KEEP_MS;
}
