/**
 * Concludes consent requests nobody will: a node killed while its call waited leaves the request pending
 * in PostgreSQL (or `acp serve` killed, in `state.db`), and if no one completes it
 * (`POST /v1/consent/{id}/complete`) the chain would hold its `consent_requested` and nothing after. Every
 * node looks, at start and then every minute, for requests that expired more than a minute ago (a live node
 * settles its own at expiry), settles each as expired — `settle` changes a pending row once across all
 * nodes, so one node wins — and the winner records `consent_expired` with `unattended: true`. A request a
 * person answered after its node died, and that nobody completed, is concluded the same way: its nonce is
 * spent (once across nodes, and no later completion takes the approval) and the winner records the answer —
 * `consent_expired` with `answered: approved`, or `consent_denied` — with `unattended: true`. Then it prunes
 * a batch of spent nonces nobody can use any more (`pruneSpentNonces`).
 */
import type { AuditSink, ConsentRequestV02 } from "@acp/proxy";
import type { PendingConsentRow } from "@acp/store";
import type { ServerStores } from "../store/types.js";

/** A live node settles its own request when it expires; the sweep leaves it this long to do so. */
export const SWEEP_GRACE_MS = 60_000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 100;

/** The fields of the event that concludes a request (a malformed row gives nulls), `unattended: true`. */
function eventFields(
  id: string,
  row: PendingConsentRow | null,
  decision: string,
  metadata: Record<string, unknown>,
): Record<string, unknown> {
  const request = row?.request as ConsentRequestV02 | undefined;
  return {
    request_id: id,
    agent: request?.agent?.id ?? null,
    server: row?.server ?? null,
    tool: row?.tool ?? null,
    session_id: row?.sessionId ?? null,
    category: request?.action?.category ?? null,
    risk_level: request?.action?.risk_level ?? null,
    decision,
    policy_rule: request?.policy?.rule_id ?? null,
    metadata: { unattended: true, ...metadata },
  };
}

/** The running sweep. */
export interface ExpirySweep {
  /** Runs one sweep now; resolves with the ids it concluded. */
  sweep(): Promise<string[]>;
  /** Stops the timer; resolves once a sweep in progress has ended. */
  stop(): Promise<void>;
}

/** Starts the sweep when the stores can list expired requests (PostgreSQL, SQLite); a no-op otherwise. */
export function startExpirySweep(deps: {
  readonly stores: ServerStores;
  readonly audit: AuditSink;
  readonly clock: () => Date;
  readonly log?: (line: string) => void;
}): ExpirySweep {
  const list = deps.stores.expiredPendingIds;
  let running: Promise<string[]> | null = null;
  let stopped = false;

  async function conclude(id: string): Promise<boolean> {
    const now = deps.clock().getTime();
    if (!(await deps.stores.pending.settle(id, "expired", now))) return false; // another node, or an answer
    const row = await deps.stores.pending.get(id);
    await deps.audit.record("consent_expired", eventFields(id, row, "expired", {}));
    deps.stores.changes.poke();
    return true;
  }

  /** An answer nobody used: the node that spends its nonce records it; a spent nonce means it was used. */
  async function concludeAnswered(id: string): Promise<boolean> {
    const row = await deps.stores.pending.get(id);
    if (row === null || (row.status !== "approved" && row.status !== "denied")) return false;
    if (!(await deps.stores.nonces.spend(row.nonce, id, row.expiresAtMs))) return false;
    const answer = (typeof row.answer === "object" && row.answer !== null ? row.answer : {}) as Record<string, unknown>;
    const said = {
      answered: row.status,
      approver: typeof answer["approver"] === "string" ? answer["approver"] : null,
      ...(row.status === "denied" && typeof answer["reason"] === "string" ? { reason: answer["reason"] } : {}),
    };
    const type = row.status === "denied" ? "consent_denied" : "consent_expired";
    await deps.audit.record(type, eventFields(id, row, row.status === "denied" ? "denied" : "expired", said));
    return true;
  }

  async function once(): Promise<string[]> {
    if (list === undefined || stopped) return [];
    const done: string[] = [];
    const before = deps.clock().getTime() - SWEEP_GRACE_MS;
    for (const id of await list(before, SWEEP_BATCH)) if (await conclude(id)) done.push(id);
    for (const id of (await deps.stores.expiredAnsweredIds?.(before, SWEEP_BATCH)) ?? []) {
      if (await concludeAnswered(id)) done.push(id);
    }
    if (done.length > 0) deps.log?.(`concluded ${done.length} consent request(s) whose waiting call was lost`);
    // a failed prune loses nothing: the next sweep (or spend) prunes what this one left
    await deps.stores.pruneSpentNonces?.(deps.clock().getTime()).catch(() => 0);
    return done;
  }

  const sweep = (): Promise<string[]> => {
    running ??= once()
      .catch(() => []) // the database is away: the next sweep tries again
      .finally(() => {
        running = null;
      });
    return running;
  };

  let timer: ReturnType<typeof setInterval> | null = null;
  if (list !== undefined) {
    void sweep();
    timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
    timer.unref();
  }
  return {
    sweep,
    async stop() {
      stopped = true;
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
