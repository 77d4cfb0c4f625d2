/**
 * The seams of the proxy: how a `tools/call` is decided (`Decide`), how a person is asked (`ConsentBroker`)
 * and where every step is recorded (`AuditSink`). The integrator plugs the real pipeline, broker and audit
 * chain in; tests plug in small scripted ones.
 */
import type { ActionRequest, Decision, Reason } from "@acp/core";
import type { ConsentRequestV02 } from "../consent/types.js";
import type { JudgeEdited } from "./edit-judgement.js";
import type { UpstreamCredentials, UpstreamSpec } from "../upstream/upstream-spec.js";

/** Decides one action request. Never throws; errors come back as a `refuse` decision. */
/**
 * What the proxy knows about the call beyond the request: the downstream session it came from and, when the
 * session authenticated with a token of its own (`proxy.agent_tokens`), the agent that token names.
 */
export interface DecideContext {
  readonly sessionId: string;
  readonly tokenAgent?: string;
}

export type Decide = (request: ActionRequest, context?: DecideContext) => Promise<Decision>;

/**
 * Tells the session runtime a call is about to run: the gate let it through (a person approved it, when one
 * was asked) and nothing has been forwarded yet. Returns the call's `seq` in the session (what its result
 * names: {@link CallObserver.result}'s `call`), or nothing when the runtime keeps none. Throws when the session
 * will not let it run (`ExecutionRefused` with the session's reasons; any other error refuses too).
 */
export type ExecutionAdmission = (sessionId: string, request: ActionRequest) => number | undefined;

/** How a result is told to the session runtime ({@link CallObserver.result}). */
export interface ResultOptions {
  readonly trusted?: boolean;
  readonly error?: boolean;
  readonly hiddenTextRemoved?: boolean;
  readonly call?: number;
}

/**
 * Sees what actually ran, per downstream session, so a session runtime can keep provenance and history:
 * `executed` once a call is let through and before it is forwarded (so calls in flight together are counted
 * together; it throws to refuse the call: {@link ExecutionAdmission}), `result` with what the upstream
 * returned (naming the call `executed` returned), `closed` at disconnect.
 * `unreadable` when a result went to the agent but could not be told whole (`result` threw, or the result
 * could not be read): the runtime must then judge as if it held anything (fail safe).
 */
export interface CallObserver {
  executed(sessionId: string, request: ActionRequest): number | undefined;
  /**
   * `trusted`: the caller vouches for this result (an in-process tool marked trusted): not untrusted content.
   * `error`: the result is the call's error (`isError`, or a JSON-RPC error relayed): what the server says of
   * the call, untrusted even from a server configured as trusted.
   * `hiddenTextRemoved`: tag characters or bidi controls were taken out of `text` before the agent read it
   * (`acp/hidden_text_removed`): an injection attempt, which the runtime counts as instruction-like content.
   * `call`: the `seq` `executed` returned for the call this is the result of, so results that come back out of
   * order are each read with their own call's note.
   */
  result(sessionId: string, server: string, tool: string, text: string, options?: ResultOptions): void;
  unreadable?(sessionId: string, server: string, tool: string, why: string): void;
  closed?(sessionId: string): void;
}

/** What the proxy hands the broker for an ask/defer decision. */
export interface ConsentAsk {
  readonly server: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  /** The decision that asked: route, rule, category, risk_level, reasons, timeout, level. */
  readonly decision: Decision;
  readonly sessionId: string;
  readonly agent?: string;
  /** From `decision.timeout` (seconds) or the configured default (120 s). */
  readonly timeoutMs: number;
  /** Aborted when the client cancels or disconnects: the broker withdraws the request. */
  readonly signal: AbortSignal;
  /** Tells the waiting client something (sent as an MCP progress notification when it asked for progress). */
  readonly onProgress?: (message: string) => void;
  /**
   * Called once the consent request exists (its `cr_…` id, as `acp pending` lists it) and before any channel
   * has it, so before anyone can answer it; the proxy audits `consent_requested` with that id here, `acp serve`
   * writes its row within the pending limit. A throw denies the request.
   */
  readonly onRequested?: (request: RequestedConsent) => Promise<void> | void;
  /**
   * Judges the arguments of an approval with modifications before any channel is told how the request ended
   * (`judgeEdit`'s rule, made once: see `judgeOnce`): an edit the recheck refuses is told to the channels as
   * `edit_refused` with the refusal, an edit put to a person again as `edit_asked`, and neither is remembered
   * for a session or a time window. Absent: every approval is told as `approved`.
   */
  readonly judgeEdited?: JudgeEdited;
}

/** The consent request `ConsentAsk.onRequested` is told about. */
export interface RequestedConsent {
  readonly id: string;
  readonly expiresAt: string;
  /** The §4.1 request as the person will see it (secrets redacted); the broker always gives it. */
  readonly request?: ConsentRequestV02;
  /** The decision's reasons as the person will see them (redacted); given with `request`. */
  readonly reasons?: readonly Reason[];
}

/** How a consent request ended. */
export type ConsentOutcome =
  | {
      readonly kind: "approved";
      /** The arguments to forward: the modified ones when approved with modifications. */
      readonly arguments: Record<string, unknown>;
      /** The signed consent response, kept in the audit event. */
      readonly consentResponse: unknown;
      readonly scope: "once" | "session" | { readonly until: string };
      /**
       * True when no person was asked: the broker reused an approval of wider scope it holds (a stored
       * `--for` window another proxy of the home recorded). No request was made, so none is audited.
       */
      readonly reused?: boolean;
    }
  | { readonly kind: "denied"; readonly reason: string; readonly consentResponse?: unknown }
  | { readonly kind: "expired" }
  | { readonly kind: "withdrawn" };

/** Puts a consent request before a person and waits for the answer. */
export interface ConsentBroker {
  ask(request: ConsentAsk): Promise<ConsentOutcome>;
}

/** Receives every step of a call (`tool_call_intercepted`, `policy_evaluated`, …). */
export interface AuditSink {
  record(eventType: string, fields: Record<string, unknown>): void | Promise<void>;
}

/**
 * Puts credentials into a call the decision accepted (never before), and names the secret values so
 * nothing returned to the agent or logged can carry them.
 */
export interface CredentialHook {
  inject(
    server: string,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ readonly arguments: Record<string, unknown>; readonly injected: readonly string[] }>;
  /** Every secret value that may have been injected (for redaction of results and logs). */
  secretValues(): readonly string[];
  /** Credentials for an upstream's transport (HTTP headers, or a spawned server's environment), at connect. */
  upstream?(spec: UpstreamSpec): Promise<UpstreamCredentials | undefined>;
}

/**
 * The agent's way to propose a plan: the proxy adds a tool `acp_submit_plan`; the plan is validated
 * against the session's intent and put before a person. Untrusted content can never approve it.
 */
export interface PlanHook {
  submit(
    sessionId: string,
    plan: unknown,
    signal: AbortSignal,
    /**
     * What the proxy knows: `tools`, every `server.tool` its connected upstreams offer; `agent`, the agent's
     * client name (from `initialize`), as a tool call's request carries it; `tokenAgent`, as in {@link DecideContext}.
     */
    context?: { readonly tools?: readonly string[]; readonly agent?: string; readonly tokenAgent?: string },
  ): Promise<{ readonly approved: boolean; readonly text: string }>;
}
