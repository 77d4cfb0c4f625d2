/**
 * The cap on waiting consent requests that `insertWithinLimit` holds. Each store counts and inserts in
 * one atomic step (SQLite: an immediate transaction; PostgreSQL: a transaction under an advisory lock),
 * so requests racing in from several processes or nodes cannot pass the count together.
 */

/** At most how many consent requests may be pending (and unexpired) at once: in all, and for one agent. */
export interface PendingLimit {
  /** At most this many pending requests in all. */
  readonly max: number;
  /** At most `max` of them naming `agent` (the consent request's `agent.id`); absent: no cap per agent. */
  readonly perAgent?: { readonly agent: string; readonly max: number };
}

/**
 * What `insertWithinLimit` did: inserted the request, or wrote nothing because this cap was full, or
 * (`busy`) wrote nothing because the requests arriving at once kept it from counting in time (PostgreSQL:
 * the wait for the limit's lock, or for a pooled connection, is bounded); asking again later may succeed.
 */
export type PendingInsertResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly full: "total" | "agent"; readonly max: number }
  | { readonly ok: false; readonly full: "busy" };

/** The pending requests a new one would join: all of them, and those naming the limit's agent. */
export interface PendingCount {
  readonly total: number;
  readonly agent: number;
}

/** The agent a consent request names (§4.1 `agent.id`), or null. */
export function requestAgent(request: unknown): string | null {
  if (typeof request !== "object" || request === null) return null;
  const agent = (request as { agent?: unknown }).agent;
  if (typeof agent !== "object" || agent === null) return null;
  const id = (agent as { id?: unknown }).id;
  return typeof id === "string" ? id : null;
}

/** Whether one more request fits beside those counted: the total cap is checked first. */
export function checkPendingLimit(limit: PendingLimit, count: PendingCount): PendingInsertResult {
  if (count.total >= limit.max) return { ok: false, full: "total", max: limit.max };
  const perAgent = limit.perAgent;
  if (perAgent !== undefined && count.agent >= perAgent.max) return { ok: false, full: "agent", max: perAgent.max };
  return { ok: true };
}

/** Throws unless both caps are whole numbers (0 refuses every request). */
export function assertPendingLimit(limit: PendingLimit): void {
  const caps = [limit.max, ...(limit.perAgent !== undefined ? [limit.perAgent.max] : [])];
  for (const cap of caps) {
    if (!Number.isSafeInteger(cap) || cap < 0) {
      throw new RangeError(`pending consent: a limit must be a whole number, not \`${String(cap)}\``);
    }
  }
  if (limit.perAgent !== undefined && typeof limit.perAgent.agent !== "string") {
    throw new TypeError("pending consent: the agent of a limit must be a string");
  }
}
