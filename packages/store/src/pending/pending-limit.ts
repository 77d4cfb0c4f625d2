/**
 * The cap on waiting consent requests that `insertWithinLimit` holds. Each store counts and inserts in
 * one atomic step (SQLite: an immediate transaction; PostgreSQL: a transaction under an advisory lock),
 * so requests racing in from several processes or nodes cannot pass the count together.
 */

/**
 * At most how many consent requests may be pending (and unexpired) at once: in all, for one agent, and for
 * one caller.
 */
export interface PendingLimit {
  /** At most this many pending requests in all. */
  readonly max: number;
  /** At most `max` of them naming `agent` (the consent request's `agent.id`); absent: no cap per agent. */
  readonly perAgent?: { readonly agent: string; readonly max: number };
  /**
   * At most `max` of them raised by `caller` ({@link sessionCaller}): a named caller's are those whose session
   * is `CALLER/…`; `null` stands for the callers without a name, whose sessions hold no `/` (rows a process
   * owns, an `acp proxy`'s, are not theirs). Absent: no cap per caller.
   */
  readonly perCaller?: { readonly caller: string | null; readonly max: number };
}

/**
 * What `insertWithinLimit` did: inserted the request, or wrote nothing because this cap was full, or
 * (`busy`) wrote nothing because the requests arriving at once kept it from counting in time (PostgreSQL:
 * the wait for the limit's lock, or for a pooled connection, is bounded); asking again later may succeed.
 */
export type PendingInsertResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly full: "total" | "agent" | "caller"; readonly max: number }
  | { readonly ok: false; readonly full: "busy" };

/** The pending requests a new one would join: all of them, those naming the limit's agent, its caller's. */
export interface PendingCount {
  readonly total: number;
  readonly agent: number;
  /** Those of the limit's caller (0 without `perCaller`). */
  readonly caller?: number;
}

/**
 * The caller a pending row's session names: `NAME` for `NAME/…` (the sessions of a token that names its agent),
 * null for a session without `/` or none (the callers whose token names none).
 */
export function sessionCaller(sessionId: string | null): string | null {
  const slash = sessionId?.indexOf("/") ?? -1;
  return sessionId === null || slash < 0 ? null : sessionId.slice(0, slash);
}

/** The agent a consent request names (§4.1 `agent.id`), or null. */
export function requestAgent(request: unknown): string | null {
  if (typeof request !== "object" || request === null) return null;
  const agent = (request as { agent?: unknown }).agent;
  if (typeof agent !== "object" || agent === null) return null;
  const id = (agent as { id?: unknown }).id;
  return typeof id === "string" ? id : null;
}

/** Whether one more request fits beside those counted: the total cap is checked first, then the caller's. */
export function checkPendingLimit(limit: PendingLimit, count: PendingCount): PendingInsertResult {
  if (count.total >= limit.max) return { ok: false, full: "total", max: limit.max };
  const perCaller = limit.perCaller;
  if (perCaller !== undefined && (count.caller ?? 0) >= perCaller.max) {
    return { ok: false, full: "caller", max: perCaller.max };
  }
  const perAgent = limit.perAgent;
  if (perAgent !== undefined && count.agent >= perAgent.max) return { ok: false, full: "agent", max: perAgent.max };
  return { ok: true };
}

/** Throws unless every cap is a whole number (0 refuses every request). */
export function assertPendingLimit(limit: PendingLimit): void {
  const caps = [
    limit.max,
    ...(limit.perAgent !== undefined ? [limit.perAgent.max] : []),
    ...(limit.perCaller !== undefined ? [limit.perCaller.max] : []),
  ];
  for (const cap of caps) {
    if (!Number.isSafeInteger(cap) || cap < 0) {
      throw new RangeError(`pending consent: a limit must be a whole number, not \`${String(cap)}\``);
    }
  }
  if (limit.perAgent !== undefined && typeof limit.perAgent.agent !== "string") {
    throw new TypeError("pending consent: the agent of a limit must be a string");
  }
  const caller = limit.perCaller?.caller;
  if (limit.perCaller !== undefined && caller !== null && (typeof caller !== "string" || caller === "")) {
    throw new TypeError("pending consent: the caller of a limit must be a name or null");
  }
}
