import type { PendingConsentStore } from "@acp/store";
import { realTimers, sleep, type ConsentTimers } from "../../timers.js";
import type {
  ArbiterVerdict,
  ChannelDelivery,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  HumanAnswer,
} from "../../types.js";
import { rowStatusOf } from "../../types.js";
import { answerGivenInTime, answerPendingConsent, arbitrationVerdict, readCliAnswer } from "./answer-record.js";

/** What the CLI channel needs. */
export interface CliChannelOptions {
  /** The pending-consent table of `$ACP_HOME/state.db` (the one `acp approve` writes). */
  readonly store: PendingConsentStore;
  readonly clock: () => Date;
  /** How often the table is read for an answer. Default 250 ms. */
  readonly pollIntervalMs?: number;
  readonly timers?: ConsentTimers;
  /**
   * Spends a request's nonce (the home's spent-nonce table): called when a request whose row holds a
   * person's answer ended denied or expired without that answer being used, so that a proxy starting later
   * does not take the answer for one its dead owner never read (`acp proxy`'s orphaned requests).
   */
  readonly spendNonce?: (nonce: string, requestId: string, expiresAtMs: number) => unknown;
}

function rowFor(request: ConsentRequestV02, delivery: ChannelDelivery, store: PendingConsentStore): void {
  if (store.peek(request.id) !== null) return;
  store.insert({
    id: request.id,
    nonce: request.nonce,
    sessionId: delivery.sessionId,
    server: request.action.server,
    tool: request.action.tool,
    request,
    reasons: delivery.reasons,
    createdAtMs: Date.parse(request.timestamp),
    expiresAtMs: Date.parse(request.expires_at),
  });
}

async function pollForAnswer(delivery: ChannelDelivery, options: CliChannelOptions): Promise<HumanAnswer> {
  const { request, signal } = delivery;
  const interval = options.pollIntervalMs ?? 250;
  for (;;) {
    // the status only: the request's JSON is read once, when the row says it holds an answer
    const peek = options.store.peek(request.id);
    const row = peek === null || (peek.answered && peek.status !== "pending") ? options.store.get(request.id) : peek;
    if (row === null) throw new Error(`consent request \`${request.id}\` vanished from the pending table`);
    if (row.nonce !== request.nonce) throw new Error(`consent request \`${request.id}\` has a foreign nonce`);
    if ((row.status === "approved" || row.status === "denied") && "answer" in row && row.answer !== null) {
      const answer = readCliAnswer(row.answer, request.nonce, options.clock());
      // when `acp approve` (or an arbitrated answer) recorded it, which may be a moment before this read
      if (answer !== null) return row.decidedAtMs === null ? answer : { ...answer, answeredAtMs: row.decidedAtMs };
      return { decision: "denied", reason: "refused a malformed answer in the pending table", approverId: "cli" };
    }
    await sleep(interval, signal, options.timers ?? realTimers);
  }
}

/**
 * The CLI channel: writes the request to the pending-consent table and waits until `acp approve ID` or
 * `acp deny ID` (any terminal, same `$ACP_HOME`) records an answer there. Available whenever the table is.
 */
export function createCliChannel(options: CliChannelOptions): ConsentChannel {
  return {
    name: "cli",
    isAvailable: () => true,
    deliver: async (delivery) => {
      rowFor(delivery.request, delivery, options.store);
      return pollForAnswer(delivery, options);
    },
    settle: (request: ConsentRequestV02, outcome: ChannelSettlement) => {
      if (options.store.settle(request.id, rowStatusOf(outcome), options.clock().getTime())) return;
      // the row holds an answer this call did not use (refused, or it ended first): used up all the same
      if ((outcome === "denied" || outcome === "expired") && options.spendNonce !== undefined) {
        const row = options.store.get(request.id);
        if (row !== null && row.answer !== null && row.nonce === request.nonce)
          options.spendNonce(request.nonce, request.id, Date.parse(request.expires_at));
      }
    },
    // an answer recorded after the last read and before the request expired still counts
    lastLook: (request: ConsentRequestV02) => answerGivenInTime(options.store.get(request.id), request),
    arbitrate: (request, answer, via, atMs) => arbitrate(options.store, request, answer, via, atMs),
  };
}

/**
 * An answer another channel of this proxy brought (the terminal, a press on this proxy's Telegram message, a
 * webhook callback), recorded in the row as `acp approve` would record it, in the one atomic step that lets
 * only the first answer in: when `acp approve` / `acp deny` (or another proxy's relayed press) got there
 * first, theirs is the answer; when the row can take none, none is used.
 */
function arbitrate(
  store: PendingConsentStore,
  request: ConsentRequestV02,
  answer: HumanAnswer,
  via: string,
  atMs: number,
): Promise<ArbiterVerdict> {
  const input = {
    id: request.id,
    decision: answer.decision === "denied" ? ("denied" as const) : ("approved" as const),
    approverId: answer.approverId,
    channel: via,
    ...(answer.scope !== undefined ? { scope: answer.scope } : {}),
    ...(answer.modifications !== undefined ? { modifications: answer.modifications } : {}),
    ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
  };
  const result = answerPendingConsent(store, input, new Date(atMs));
  return arbitrationVerdict(result, () => store.get(request.id), request, atMs);
}
