/**
 * A consent request's way into the pending table: its row is written within the limit on waiting requests
 * when the broker has made it, before any channel has it. The store counts and inserts in one atomic step
 * (SQLite: an immediate transaction; PostgreSQL: under an advisory lock), so the limit holds for every
 * node on the database together, not for each node alone.
 */
import type { RequestedConsent } from "@acp/proxy";
import type { PendingInsertResult, PendingLimit } from "@acp/store";
import type { ServerStores } from "../store/types.js";
import { toPendingRow } from "./table-channel.js";

/**
 * The limit a request is held to: `max` in all and `perCaller` for its caller, the agent a token names or
 * (undefined) every caller whose token names none, whose sessions are those without `/` (`sessionCaller`).
 */
export function pendingLimitFor(max: number, perCaller: number, caller: string | undefined): PendingLimit {
  return { max, perCaller: { caller: caller ?? null, max: perCaller } };
}

/**
 * Writes the row of the request the broker has just made (`ConsentAsk.onRequested`) unless `limit` is
 * full, and tells the change feed when it did. The table channel then finds the row and does not write it.
 */
export async function admitConsentRequest(
  stores: Pick<ServerStores, "pending" | "changes">,
  requested: RequestedConsent,
  sessionId: string,
  limit: PendingLimit,
): Promise<PendingInsertResult> {
  if (requested.request === undefined) {
    throw new Error(`consent request \`${requested.id}\` was made without its content`);
  }
  const row = toPendingRow(requested.request, requested.reasons ?? [], sessionId);
  const result = await stores.pending.insertWithinLimit(row, limit);
  if (result.ok) stores.changes.poke();
  return result;
}
