import type { ServerScopes } from "./service-errors.js";
/**
 * What the decision service is built from and what it answers: its options, the service's interface and
 * the answers of `decide` (the implementation is `decision-service.ts`).
 */
import type { CallerBudgetOptions, ContractEnvelope, Decision, Pipeline } from "@acp/core";
import type { AuditSink, ConsentBroker, ConsentOutcome } from "@acp/proxy";
import type { FrontEnd, ServerMetrics } from "../metrics/metrics.js";
import type { ServerStores } from "../store/types.js";
import type { PreToolCheckEnvelope } from "./merge-envelope.js";

/** What the service is built from. */
export interface DecisionServiceOptions {
  readonly pipeline: Pipeline;
  /**
   * Judges arguments a person edited before the caller is told to run them: the standing rules, spending
   * no rate limit (the call was counted when it was asked). A refusal refuses the call. Default: `pipeline`.
   */
  readonly recheckEdits?: Pipeline;
  /**
   * The pipeline for a caller whose `server` is its own word (no `serverScopes` entry: the anonymous
   * agents' token, a named agent without servers, a loopback caller without a token), on the policy as
   * {@link anyServerPolicy} makes it and judged under every reading `anyServerPipelineOf` makes: a deny or
   * ask rule for a server holds whatever server the request names, or none. Required (ADR 0006): `pipeline`
   * itself judges every caller as named.
   */
  readonly anyServerPipeline: Pipeline;
  /** `recheckEdits` built so, for those callers. Required, as `anyServerPipeline`. */
  readonly anyServerRecheckEdits: Pipeline;
  readonly stores: ServerStores;
  readonly broker: ConsentBroker;
  readonly audit: AuditSink;
  readonly metrics: ServerMetrics;
  readonly clock: () => Date;
  /** Wait this long for a person when the decision names no timeout. Default 120 s. */
  readonly consentTimeoutMs?: number;
  /** At most this many consent requests wait at once; more are refused (429). Default 1000. */
  readonly maxPending?: number;
  /**
   * At most this many of them from one caller (`serve.pending_per_caller`): the agent a token names, or every
   * caller whose token names none together, so one caller flooding consent cannot hold up every other's;
   * past it the call is refused (`route: refuse`, reason `caller_pending_full`, audited). Default a quarter
   * of `maxPending`, at least 1.
   */
  readonly maxPendingPerCaller?: number;
  /**
   * When a decision's `policy_evaluated` event must be durable before the answer goes out. `queued`
   * (default): the event is in the chain's write queue (group commit, fsync within milliseconds); at most
   * {@link MAX_UNACKNOWLEDGED_AUDIT} such events are in flight, and after a failed write every later
   * decision refuses (`audit_unavailable`). `durable`: every answer waits for its fsync. Consent events
   * (requested, approved, denied…) are always durable before the call continues.
   */
  readonly decisionAudit?: "queued" | "durable";
  /** The servers each named agent may decide for (`serve.agent_servers`); an agent without an entry: any. */
  readonly serverScopes?: ServerScopes;
  /**
   * The agents that have a token of their own (`serve.agent_tokens`' names): a caller whose token names no
   * agent may not name one of them (403 `agent_mismatch`), so a named agent's audit events are its own.
   */
  readonly namedAgents?: ReadonlySet<string>;
  /**
   * Each caller's share of the policy work (`serve.caller_budget`, core's `createCallerBudget`): the agent
   * a token names, or all callers whose token names none together, is refused unjudged
   * (`caller_budget_exhausted`) once its decisions have spent its allowance, until it comes back. Default:
   * the default share; `false`: none (one caller may then hold the thread for every other).
   */
  readonly callerBudget?: CallerBudgetOptions | false;
}

/** Most decision events answered before their fsync at once; beyond it answers wait for the write. */
export const MAX_UNACKNOWLEDGED_AUDIT = 4096;

/** How a waited-for consent ended, as the agent sees it. */
export interface ConsentResult {
  readonly outcome: ConsentOutcome["kind"];
  readonly request_id: string | null;
  readonly reason?: string;
  readonly scope?: unknown;
  /** The arguments to run with when approved (modified ones when a person edited them). */
  readonly arguments?: Record<string, unknown>;
  /**
   * Approved with edited arguments that the policy refuses (a path under a deny rule…): the call is
   * refused (`route: refuse`) although a person approved; the rule and reasons that refuse the edit.
   */
  readonly edit_refused?: { readonly rule: string | null; readonly reasons: readonly string[] };
}

/** The answer of `decide`. */
export interface DecideAnswer {
  readonly decision_id: string;
  /** The final route: the pipeline's, or after a wait accept (approved) / refuse (anything else). */
  readonly route: Decision["route"];
  readonly decision: Decision;
  readonly consent?: ConsentResult;
}

/** The service. */
export interface DecisionService {
  /**
   * An Agent Action Contract v1 event through the pipeline; the envelope out. Never loosens the contract.
   * The event is a value just parsed from JSON (an HTTP or MCP body) that nothing changes afterwards: it
   * is checked in place when it is its own JSON form (`checkParsedToolPrecheck`), else copied first.
   */
  preToolCheck(
    event: unknown,
    frontEnd: FrontEnd,
    caller?: string,
  ): Promise<{
    valid: boolean;
    envelope: PreToolCheckEnvelope | ContractEnvelope;
    /**
     * When the answer is a refusal waiting lifts (`retryAtOf`: a spent rate limit or caller share, and the
     * contract itself does not refuse): ms since the epoch from which to ask again (`Retry-After`).
     */
    retryAtMs?: number;
  }>;
  /**
   * A full action request through the pipeline; with `wait`, an ask/defer waits for a person. `caller`: the
   * agent the caller's token names (then the request's agent, and its sessions are that agent's own).
   */
  decide(
    request: unknown,
    options: { wait: boolean; sessionId?: string; signal?: AbortSignal; caller?: string },
  ): Promise<DecideAnswer>;
  readonly options: DecisionServiceOptions;
  /** The write error that stopped decisions (queued audit mode), or null while the chain records. */
  auditFailure(): unknown;
  /**
   * For a shutdown: withdraws every call waiting for a person (each is answered `withdrawn` and its
   * `consent_withdrawn` recorded) and resolves once all are concluded; a later wait is withdrawn at once,
   * raising no request. Call it before the audit and the stores close. Resolves with how many calls were
   * withdrawn.
   */
  close(): Promise<number>;
}
