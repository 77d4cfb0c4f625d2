import { randomBytes } from "node:crypto";
import type { ConsentBroker } from "../gate/types.js";
import type { AsyncConsentGrantStore, ConsentGrantStore, PendingConsentStore } from "@acp/store";
import { MAX_SESSION_APPROVAL_MS, type Decision, type Reason, type Redactor } from "@acp/core";
import type {
  BrokerAsk,
  BrokerOutcome,
  ConsentAuditSink,
  SignConsentResponse,
  VerifyConsentResponse,
} from "./broker-types.js";
import { approvedArguments, BrokerGrants } from "./broker-grants.js";
import { arbitrateAnswer, lastLook, relayedChannel } from "./answer-sources.js";
import { answeredAtOf, answeredTooLate } from "./answer-time.js";
import { startProgress } from "./progress.js";
import { createConsentRedactor } from "./redact.js";
import { buildConsentRequest, type ConsentAgentInfo } from "./request.js";
import { buildUnsignedResponse, checkHumanAnswer } from "./response.js";
import { describeScope } from "./scope.js";
import { realTimers, type ConsentTimers } from "./timers.js";
import type {
  ApprovalScope,
  ChannelSettlement,
  ConsentChannel,
  ConsentRequestV02,
  ConsentResponseV02,
  HumanAnswer,
  SettledBy,
} from "./types.js";
import { rowStatusOf } from "./types.js";
import type { EditJudgement } from "../gate/edit-judgement.js";
import { refusalText } from "../gate/tool-error.js";
import { ABORT_ANSWERED, ABORT_EXPIRED, ABORT_WITHDRAWN, waitForFirstAnswer, type WaitResult } from "./wait.js";
import { checkAvailability } from "./availability.js";
import { consentActionFields, createConsentRecorder, type ConsentRecorder } from "./record.js";

/** What `createConsentBroker` needs. */
export interface ConsentBrokerOptions {
  /** Every request is delivered to each available channel at once; the first answer wins. */
  readonly channels: readonly ConsentChannel[];
  /** Signs the human's answer (Ed25519, §6). */
  readonly sign: SignConsentResponse;
  /** Verifies the signed answer before anything is approved. */
  readonly verify: VerifyConsentResponse;
  /** When given, every request is written to the pending-consent table (so `acp pending` lists it) and closed there. */
  readonly store?: PendingConsentStore;
  readonly clock: () => Date;
  /** Fresh random bytes (ids and nonces). Default: node:crypto. */
  readonly random?: (size: number) => Uint8Array;
  /**
   * Receives `consent_requested`, `consent_approved`, `consent_denied`, `consent_expired`, `consent_withdrawn`.
   * Only for a broker nothing else records for (`acp serve`): behind the proxy's gate (`gateToolCall`), which
   * records these events itself, leave it out, or each question is recorded twice.
   */
  readonly audit?: ConsentAuditSink;
  readonly timers?: ConsentTimers;
  /** The §4.1 `agent` fields for requests whose ask names no agent. */
  readonly agent?: ConsentAgentInfo;
  /** How long a `session` approval lasts at most. Default and ceiling 12 hours (longer does not verify). */
  readonly sessionApprovalMs?: number;
  /** How often a waiting caller hears "still waiting" through `onProgress`. Default 10 s; 0 turns it off. */
  readonly progressIntervalMs?: number;
  /** How long `isAvailable()` may take before a channel counts as unavailable. Default 2 s. */
  readonly availabilityTimeoutMs?: number;
  /** What hides secrets from the person asked (see `createConsentRedactor`); default: the default rules. */
  readonly redact?: Redactor;
  /**
   * Where time-window approvals (`--for 10m`) are kept for every proxy of the home (`state.db`), or for
   * every node of `acp serve` (its SQLite or PostgreSQL store), with `verifyGrant`; without both they last
   * as long as this broker.
   */
  readonly grants?: ConsentGrantStore | AsyncConsentGrantStore;
  /**
   * Keep `session` approvals in `grants` too, so every broker on the store honours them for calls of the
   * same session id (the nodes of `acp serve`, where a session is named by the caller, not by one
   * process). Default false: a session approval lasts as long as this broker.
   */
  readonly shareSessionGrants?: boolean;
  /**
   * Checks a stored window approval for this call before it is reused: the signature and the exact action,
   * not the nonce (its first use spent it). Anything but `true` and the row approves nothing.
   */
  readonly verifyGrant?: VerifyConsentResponse;
  /**
   * Most requests of one session (`ask.sessionId`) waiting for a person at once; beyond it a call is denied
   * at once, nobody asked (`consent_denied`, the reason names the limit), so one agent firing calls that ask
   * cannot bury the person in questions. Default: no limit (`acp serve` bounds its pending requests itself).
   */
  readonly maxWaitingPerSession?: number;
}

/** How many calls of one `acp proxy` session may wait for a person at once ({@link ConsentBrokerOptions.maxWaitingPerSession}). */
export const PROXY_MAX_WAITING_PER_SESSION = 32;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The broker: `ask` puts a request before a person and resolves with a verified outcome. Never rejects. */
export interface ConsentBrokerHandle extends ConsentBroker {
  ask(request: BrokerAsk): Promise<BrokerOutcome>;
  /** Closes every channel. */
  close(): Promise<void>;
}

interface OpenRequest {
  readonly ask: BrokerAsk;
  readonly request: ConsentRequestV02;
  readonly channels: readonly ConsentChannel[];
  /** The reasons as shown: they can quote argument values, so they pass the redactor too. */
  readonly reasons: readonly Reason[];
}

class ConsentBrokerImpl implements ConsentBrokerHandle {
  readonly #o: ConsentBrokerOptions;
  readonly #timers: ConsentTimers;
  readonly #random: (size: number) => Uint8Array;
  readonly #grants: BrokerGrants;
  readonly #record: ConsentRecorder;
  readonly #redact: Redactor;
  /** Requests waiting for a person, by session (only with `maxWaitingPerSession`). */
  readonly #waiting = new Map<string, number>();

  constructor(options: ConsentBrokerOptions) {
    this.#o = options;
    this.#redact = options.redact ?? createConsentRedactor();
    this.#timers = options.timers ?? realTimers;
    this.#random = options.random ?? ((size) => randomBytes(size));
    this.#record = createConsentRecorder(options.audit);
    this.#grants = new BrokerGrants(options, this.#redact, this.#record);
  }

  async ask(ask: BrokerAsk): Promise<BrokerOutcome> {
    try {
      return await this.#ask(ask);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "denied", reason: `consent failed: ${message}` };
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#o.channels.map(async (c) => c.close?.()));
  }

  async #ask(ask: BrokerAsk): Promise<BrokerOutcome> {
    if (ask.signal.aborted) return { kind: "withdrawn" };
    const reused = await this.#grants.reuse(ask);
    if (reused !== null) return reused;
    const max = this.#o.maxWaitingPerSession;
    if (max === undefined) return this.#askPerson(ask);
    const waiting = this.#waiting.get(ask.sessionId) ?? 0;
    if (waiting >= max) {
      const reason = `too many calls of this session are waiting for a person (${max}): answer or deny those first (\`acp pending\`)`;
      await this.#record.event("consent_denied", ask, this.#requestFor(ask), { reason });
      return { kind: "denied", reason };
    }
    this.#waiting.set(ask.sessionId, waiting + 1);
    try {
      return await this.#askPerson(ask);
    } finally {
      const left = (this.#waiting.get(ask.sessionId) ?? 1) - 1;
      if (left > 0) this.#waiting.set(ask.sessionId, left);
      else this.#waiting.delete(ask.sessionId);
    }
  }

  #requestFor(ask: BrokerAsk): ConsentRequestV02 {
    return buildConsentRequest(ask, {
      redact: this.#redact,
      now: this.#o.clock(),
      random: this.#random,
      ...(this.#o.agent !== undefined ? { agent: this.#o.agent } : {}),
    });
  }

  /** Puts one request before a person (through every available channel) and waits for the answer. */
  async #askPerson(ask: BrokerAsk): Promise<BrokerOutcome> {
    const request = this.#requestFor(ask);
    const channels = await checkAvailability(this.#o.channels, {
      timers: this.#timers,
      timeoutMs: this.#o.availabilityTimeoutMs ?? 2_000,
      ...(ask.onProgress !== undefined ? { onProgress: ask.onProgress } : {}),
    });
    // the call may have been cancelled (or its client gone) while the channels were checked: nothing to ask
    if (ask.signal.aborted) return { kind: "withdrawn" };
    if (channels.length === 0) {
      const reason = "no consent channel is available";
      await this.#record.event("consent_denied", ask, request, { reason });
      return { kind: "denied", reason };
    }
    const reasons = ask.decision.reasons.map((r) => ({ ...r, message: String(this.#redact(r.message)) }));
    const open: OpenRequest = { ask, request, channels, reasons };
    this.#o.store?.insert({
      id: request.id,
      nonce: request.nonce,
      sessionId: ask.sessionId,
      server: ask.server,
      tool: ask.tool,
      request,
      reasons,
      createdAtMs: Date.parse(request.timestamp),
      expiresAtMs: Date.parse(request.expires_at),
    });
    try {
      await ask.onRequested?.({ id: request.id, expiresAt: request.expires_at, request, reasons });
    } catch (error) {
      // no channel has the request yet (nor will it): only its row is closed, no channel hears of it
      this.#settleRow(open, "denied");
      const message = error instanceof Error ? error.message : String(error);
      return { kind: "denied", reason: `the audit trail could not record the consent request: ${message}` };
    }
    if (!(await this.#record.event("consent_requested", ask, request, { channels: channels.map((c) => c.name) }))) {
      await this.#settle(open, "denied");
      return { kind: "denied", reason: "the audit trail could not record the consent request" };
    }
    const result = await this.#wait(open);
    return this.#conclude(open, result);
  }

  async #wait(open: OpenRequest): Promise<WaitResult> {
    const { ask, request } = open;
    const control = new AbortController();
    const onWithdraw = (): void => control.abort(ABORT_WITHDRAWN);
    ask.signal.addEventListener("abort", onWithdraw, { once: true });
    // an abort before the listener was added would never fire it: the request would wait until it expired
    if (ask.signal.aborted) onWithdraw();
    const expiry = this.#timers.setTimeout(() => control.abort(ABORT_EXPIRED), ask.timeoutMs);
    const stopProgress = startProgress(
      ask.onProgress,
      {
        tool: ask.tool,
        requestId: request.id,
        expiresAt: request.expires_at,
        channels: open.channels.map((c) => c.name),
      },
      this.#timers,
      this.#o.progressIntervalMs ?? 10_000,
    );
    try {
      return await waitForFirstAnswer(
        open.channels,
        { request, reasons: open.reasons, sessionId: ask.sessionId },
        control,
      );
    } finally {
      stopProgress();
      this.#timers.clearTimeout(expiry);
      ask.signal.removeEventListener("abort", onWithdraw);
      if (!control.signal.aborted) control.abort(ABORT_ANSWERED);
    }
  }

  async #conclude(open: OpenRequest, result: WaitResult): Promise<BrokerOutcome> {
    const { request } = open;
    if (result.kind === "expired") {
      const late = await lastLook(open.channels, request);
      if (late !== undefined) return this.#take(open, late.answer, late.channel, late.atMs);
    }
    if (result.kind === "expired" || result.kind === "withdrawn") return this.#end(open, result.kind);
    if (result.kind === "failed") {
      const reason = `no consent channel could deliver the request: ${result.messages.join("; ")}`;
      return this.#deny(open, reason);
    }
    const reported = isRecord(result.answer) ? result.answer["answeredAtMs"] : undefined;
    return this.#take(open, result.answer, result.channel, reported, true);
  }

  /**
   * Uses an answer a channel reported: stamped when the person answered (see {@link answeredAtOf}), not used
   * when that was after the request expired, checked, arbitrated through the shared record (`arbitrate`)
   * when it is a fresh answer, then signed and verified.
   */
  async #take(
    open: OpenRequest,
    reported: unknown,
    channel: ConsentChannel,
    reportedAtMs: unknown,
    arbitrate = false,
  ): Promise<BrokerOutcome> {
    const { request } = open;
    const answeredAt = answeredAtOf(reportedAtMs, request, this.#o.clock());
    if (answeredTooLate(answeredAt, request)) return this.#end(open, "expired");
    const problem = checkHumanAnswer(reported, answeredAt);
    if (problem !== null) return this.#deny(open, `refused a malformed answer from ${channel.name}: ${problem}`);
    const answer = reported as HumanAnswer;
    if (!arbitrate) return this.#signAndVerify(open, answer, channel, answeredAt);
    const agreed = await arbitrateAnswer(open.channels, request, answer, channel, answeredAt.getTime());
    if (agreed.kind === "refused")
      return this.#deny(open, `the answer from ${channel.name} is not used: ${agreed.reason}`);
    if (agreed.kind === "taken") return this.#take(open, agreed.answer, agreed.channel, agreed.answer.answeredAtMs);
    return this.#signAndVerify(open, answer, channel, answeredAt);
  }

  /** Ends a request nobody's answer concludes: it expired (or the answer came too late), or was withdrawn. */
  async #end(open: OpenRequest, kind: "expired" | "withdrawn"): Promise<BrokerOutcome> {
    await this.#settle(open, kind);
    await this.#record.event(`consent_${kind}`, open.ask, open.request, {});
    return { kind };
  }

  /**
   * Signs the person's answer and verifies it, both as of `answeredAt` (when the person answered, which may be
   * a moment before the broker read the answer, even after the request expired): the response is timestamped
   * then, and a session approval lasts from then.
   */
  async #signAndVerify(
    open: OpenRequest,
    answer: HumanAnswer,
    channel: ConsentChannel,
    answeredAt: Date,
  ): Promise<BrokerOutcome> {
    const { ask, request } = open;
    const now = answeredAt;
    // the channel the person used: a relayed answer (another proxy's Telegram press, read here from the
    // pending table through the `cli` channel) names its own
    const via = relayedChannel(answer) ?? channel.name;
    const by: SettledBy = { approverId: answer.approverId, channel: via };
    const unsigned = buildUnsignedResponse(answer, request, {
      now,
      channel: via,
      sessionId: ask.sessionId,
      sessionMs: Math.min(this.#o.sessionApprovalMs ?? MAX_SESSION_APPROVAL_MS, MAX_SESSION_APPROVAL_MS),
    });
    let response: ConsentResponseV02;
    try {
      response = await this.#o.sign({ response: unsigned, request, arguments: ask.arguments });
    } catch (err) {
      // recorded and told to the channels as any denial: the chain gets the request's end
      return this.#deny(
        open,
        `the answer could not be signed, so it is not used: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const verified = await this.#verified(response, request, ask.arguments, now);
    if (verified !== true) {
      return this.#deny(
        open,
        verified === false
          ? "the consent response failed verification"
          : `the consent response could not be checked, so it is not used: ${verified}`,
      );
    }
    if (response.decision === "denied") {
      // the gate says "denied by a person: " in front of this
      // `cli:alice` via cli reads `alice` via cli
      const prefix = `${via}:`;
      const who = answer.approverId.startsWith(prefix) ? answer.approverId.slice(prefix.length) : answer.approverId;
      const named = `\`${who}\` via ${via}`;
      return this.#deny(open, answer.reason === undefined ? named : `${named}: ${answer.reason}`, response, by);
    }
    const args = approvedArguments(ask, response.modifications, this.#redact);
    const edit = await this.#judgeEdit(ask, args);
    const scope: ApprovalScope = answer.scope ?? "once";
    const fields = {
      decision: response.decision,
      scope: describeScope(scope),
      consent_response: response,
      ...consentActionFields(request, args),
    };
    if (!(await this.#record.event("consent_approved", ask, request, fields))) {
      return this.#deny(open, "the audit trail could not record the approval", response);
    }
    if (edit.kind === "refused") {
      // "refused by policy rule `x`: …": the reasons can quote the edited values, so they pass the redactor
      await this.#settle(open, "edit_refused", by, String(this.#redact(refusalText(edit.decision))));
    } else {
      await this.#settle(open, edit.kind === "asked" ? "edit_asked" : "approved", by);
      // an edit asked again is not approved yet: the new question's answer decides it
      if (scope !== "once" && edit.kind === "stands") {
        await this.#grants.remember(ask, { scope, arguments: args, request, response });
      }
    }
    return { kind: "approved", arguments: args, consentResponse: response, scope };
  }

  /**
   * The caller's judgement of an approval's edited arguments (`ConsentAsk.judgeEdited`), before any channel
   * hears how the request ended; arguments as asked stand. A judgement that fails refuses (the caller's own
   * judgement, which it takes again, refuses too).
   */
  async #judgeEdit(ask: BrokerAsk, args: Record<string, unknown>): Promise<EditJudgement> {
    if (args === ask.arguments || ask.judgeEdited === undefined) return { kind: "stands" };
    try {
      return await ask.judgeEdited(args);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { kind: "refused", decision: editJudgementFailed(ask, message) };
    }
  }

  /** True when the response verifies, false when it does not, the error's message when it could not be checked. */
  async #verified(
    response: ConsentResponseV02,
    request: ConsentRequestV02,
    args: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean | string> {
    if (response.request_id !== request.id || response.nonce !== request.nonce) return false;
    try {
      const verdict = await this.#o.verify({ response, request, arguments: args, now });
      return verdict === true || (typeof verdict === "object" && verdict.ok === true);
    } catch (err) {
      // not a bad answer: the check itself failed (the nonce store could not be read or written)
      const message = err instanceof Error ? err.message : String(err);
      return message.length > 200 ? `${message.slice(0, 200)}…` : message;
    }
  }

  async #deny(
    open: OpenRequest,
    reason: string,
    response?: ConsentResponseV02,
    by?: SettledBy,
  ): Promise<BrokerOutcome> {
    await this.#settle(open, "denied", by);
    const extra =
      response === undefined
        ? {}
        : {
            consent_response: response,
            ...consentActionFields(open.request, approvedArguments(open.ask, response.modifications, this.#redact)),
          };
    await this.#record.event("consent_denied", open.ask, open.request, { reason, ...extra });
    return response === undefined ? { kind: "denied", reason } : { kind: "denied", reason, consentResponse: response };
  }

  async #settle(open: OpenRequest, outcome: ChannelSettlement, by?: SettledBy, reason?: string): Promise<void> {
    this.#settleRow(open, outcome);
    await Promise.allSettled(open.channels.map(async (c) => c.settle?.(open.request, outcome, by, reason)));
  }

  #settleRow(open: OpenRequest, outcome: ChannelSettlement): void {
    try {
      this.#o.store?.settle(open.request.id, rowStatusOf(outcome), this.#o.clock().getTime());
    } catch {
      // The row is only a view for `acp pending`; the outcome stands whatever the table says.
    }
  }
}

/**
 * Creates the consent broker the proxy calls for every ask/defer decision. It builds a §4.1 consent request,
 * delivers it to the available channels (first answer wins), turns the answer into a signed §4.2 response,
 * verifies it, and resolves `approved` (with the arguments to forward), `denied`, `expired` or `withdrawn`.
 */
export function createConsentBroker(options: ConsentBrokerOptions): ConsentBrokerHandle {
  return new ConsentBrokerImpl(options);
}

/** The refusal of an edit whose judgement failed (fail closed). */
function editJudgementFailed(ask: BrokerAsk, message: string): Decision {
  return {
    ...ask.decision,
    route: "refuse",
    action: "deny",
    reasons: [
      { source: "pipeline", code: "decide_failed", message: `the edited arguments could not be judged: ${message}` },
    ],
    verdicts: [],
  };
}
