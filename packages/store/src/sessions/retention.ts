/**
 * How long a closed session's row outlives it. Every downstream session of every `acp proxy` registers a row
 * (and each intent update a person queues for it one more), so closed sessions cannot stay for ever: each
 * `register` first deletes up to {@link CLOSED_SESSION_PURGE_BATCH} sessions closed more than
 * {@link CLOSED_SESSION_KEEP_MS} before the new one started, with their intent updates, in the same
 * transaction. A session still `live` is never dropped this way; but one whose proxy is gone (killed by its
 * client, so it never closed it: `ownerState` of `pending/owner.ts`, on this machine only) is first closed,
 * as of the new session's start, and goes a day later. The audit chain is the lasting record.
 */

/** A closed session (and its intent updates) is kept this long after it ended (one day). */
export const CLOSED_SESSION_KEEP_MS = 86_400_000;

/** At most this many closed sessions are deleted per `register` (a register adds one: the table catches up). */
export const CLOSED_SESSION_PURGE_BATCH = 100;
