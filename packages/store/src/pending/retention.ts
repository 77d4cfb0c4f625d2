/**
 * How long a consent request's row outlives it. An agent can raise requests as fast as it can withdraw
 * them (each one a row holding its redacted arguments), so settled rows cannot stay for ever: each insert
 * (on SQLite and PostgreSQL) first deletes rows settled (`approved`, `denied`, `expired`, `withdrawn`)
 * whose request expired more than {@link SETTLED_CONSENT_KEEP_MS} before the new request was made, at
 * most {@link SETTLED_CONSENT_PURGE_BATCH} of them, so the table holds about a day of requests whatever
 * the rate. A row still `pending` is never dropped this way: it is concluded first (the expiry sweep,
 * `settleOrphaned`), so the audit chain says how it ended. The audit chain is the lasting record.
 */

/** A settled row is kept this long after its request expired (one day). */
export const SETTLED_CONSENT_KEEP_MS = 86_400_000;

/** At most this many old rows are deleted per insert (an insert adds one: the table catches up). */
export const SETTLED_CONSENT_PURGE_BATCH = 100;

/** The expiry before which settled rows may go, for a request made at `createdAtMs`. */
export function settledConsentCutoff(createdAtMs: number): number {
  return createdAtMs - SETTLED_CONSENT_KEEP_MS;
}
