/**
 * The consent channel of the service: the pending-consent table (SQLite `state.db` or PostgreSQL). A
 * request is written there; a person answers through the API, the console or `acp approve` (on any node);
 * the answer reaches the waiting call through {@link ConsentAnswers} (LISTEN/NOTIFY on PostgreSQL).
 */
import type { Reason } from "@acp/core";
import {
  answerGivenInTime,
  arbitrationVerdict,
  readCliAnswer,
  rowStatusOf,
  type ArbiterVerdict,
  type ChannelDelivery,
  type CliAnswerRecord,
  type ConsentChannel,
  type ConsentRequestV02,
  type HumanAnswer,
} from "@acp/proxy";
import type { NewPendingConsent } from "@acp/store";
import type { ServerStores } from "../store/types.js";

/** What the table channel needs. */
export interface TableChannelOptions {
  readonly stores: Pick<ServerStores, "pending" | "answers" | "changes" | "nonces">;
  readonly clock: () => Date;
}

/** The pending row of a consent request as the table keeps it. */
export function toPendingRow(
  request: ConsentRequestV02,
  reasons: readonly Reason[],
  sessionId: string,
): NewPendingConsent {
  return {
    id: request.id,
    nonce: request.nonce,
    sessionId,
    server: request.action.server,
    tool: request.action.tool,
    request,
    reasons,
    createdAtMs: Date.parse(request.timestamp),
    expiresAtMs: Date.parse(request.expires_at),
  };
}

/** Writes the row, unless the service already wrote it within the pending limit (`onRequested`). */
async function rowFor(delivery: ChannelDelivery, options: TableChannelOptions): Promise<void> {
  const { request } = delivery;
  if ((await options.stores.pending.get(request.id)) !== null) return;
  await options.stores.pending.insert(toPendingRow(request, delivery.reasons, delivery.sessionId));
  options.stores.changes.poke();
}

async function answerOf(delivery: ChannelDelivery, options: TableChannelOptions): Promise<HumanAnswer> {
  const { request } = delivery;
  const row = await options.stores.answers.wait(request.id, delivery.signal);
  if (row.nonce !== request.nonce) throw new Error(`consent request \`${request.id}\` has a foreign nonce`);
  if ((row.status === "approved" || row.status === "denied") && row.answer !== null) {
    const answer = readCliAnswer(row.answer, request.nonce, options.clock());
    // when the person gave it (the row's decided_at), which may be a moment before this read (the next poll, a
    // late NOTIFY): the broker stamps the response then, trusted between the request's creation and the read
    if (answer !== null) return row.decidedAtMs === null ? answer : { ...answer, answeredAtMs: row.decidedAtMs };
    return { decision: "denied", reason: "refused a malformed answer in the pending table", approverId: "cli" };
  }
  throw new Error(`consent request \`${request.id}\` was ${row.status} without an answer`);
}

/** Creates the channel (named `cli`, as `acp approve` answers the same table). */
export function createTableChannel(options: TableChannelOptions): ConsentChannel {
  return {
    name: "cli",
    isAvailable: () => true,
    deliver: async (delivery) => {
      await rowFor(delivery, options);
      return answerOf(delivery, options);
    },
    // an answer recorded in time whose wake-up had not reached this call when its time ran out still counts
    lastLook: async (request) => answerGivenInTime(await options.stores.pending.get(request.id), request),
    // a Telegram press or a webhook callback is recorded here before it is used: an answer through the API,
    // the console or acp approve recorded first wins over it, one recorded after it is refused
    arbitrate: (request, answer, via, atMs) => arbitrate(options, request, answer, via, atMs),
    settle: async (request, outcome) => {
      if (await options.stores.pending.settle(request.id, rowStatusOf(outcome), options.clock().getTime())) {
        options.stores.changes.poke();
        return;
      }
      // The row holds a person's answer, but this call ended otherwise (its expiry came first, or it refused
      // the answer) and recorded that end: the answer is used up. Its nonce is spent so that neither a
      // completion nor the expiry sweep takes it or records another end. (An approval spent it already; a
      // withdrawn call's answer is left for `POST /v1/consent/{id}/complete`.)
      if (outcome === "expired" || outcome === "denied") {
        const { nonces } = options.stores;
        // a store that fails here fails the call's other writes too: the call has ended, nothing runs
        await Promise.resolve()
          .then(() => nonces.spend(request.nonce, request.id, Date.parse(request.expires_at)))
          .catch(() => false);
      }
    },
  };
}

async function arbitrate(
  options: TableChannelOptions,
  request: ConsentRequestV02,
  answer: HumanAnswer,
  via: string,
  atMs: number,
): Promise<ArbiterVerdict> {
  const decision = answer.decision === "denied" ? "denied" : "approved";
  const record: CliAnswerRecord = {
    decision,
    approver: answer.approverId,
    nonce: request.nonce,
    channel: via,
    ...(answer.scope !== undefined ? { scope: answer.scope } : {}),
    ...(answer.modifications !== undefined ? { modifications: answer.modifications } : {}),
    ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
  };
  const result = await options.stores.pending.decide(request.id, decision, record, atMs);
  if (result.ok) options.stores.changes.poke();
  return arbitrationVerdict(result, () => options.stores.pending.get(request.id), request, atMs);
}
