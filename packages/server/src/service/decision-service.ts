/**
 * The decision service behind every front end (HTTP, MCP, console): one pipeline, one audit chain,
 * one consent broker, one set of metrics.
 */
import { randomBytes } from "node:crypto";
import {
  checkParsedToolPrecheck,
  sameCanonicalJson,
  type ActionRequest,
  type ContractEnvelope,
  type Decision,
  type Pipeline,
} from "@acp/core";
import type { AuditSink, ConsentBroker, ConsentOutcome } from "@acp/proxy";
import type { PendingLimit } from "@acp/store";
import type { FrontEnd, ServerMetrics } from "../metrics/metrics.js";
import type { ServerStores } from "../store/types.js";
import { HttpError } from "../http/error-body.js";
import { mergeDecision, type PreToolCheckEnvelope } from "./merge-envelope.js";
import { admitConsentRequest, pendingLimitFor } from "./pending-admission.js";

/** What the service is built from. */
export interface DecisionServiceOptions {
  readonly pipeline: Pipeline;
  /**
   * Judges arguments a person edited before the caller is told to run them: the standing rules, spending
   * no rate limit (the call was counted when it was asked). A refusal refuses the call. Default: `pipeline`.
   */
  readonly recheckEdits?: Pipeline;
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
   * At most this many of them from one named agent (a request naming no agent counts only toward
   * `maxPending`), so one agent flooding consent cannot hold up every other's. Default a quarter of
   * `maxPending`, at least 1.
   */
  readonly maxPendingPerAgent?: number;
  /**
   * When a decision's `policy_evaluated` event must be durable before the answer goes out. `queued`
   * (default): the event is in the chain's write queue (group commit, fsync within milliseconds); at most
   * {@link MAX_UNACKNOWLEDGED_AUDIT} such events are in flight, and after a failed write every later
   * decision refuses (`audit_unavailable`). `durable`: every answer waits for its fsync. Consent events
   * (requested, approved, denied…) are always durable before the call continues.
   */
  readonly decisionAudit?: "queued" | "durable";
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

/** Thrown when too many consent requests already wait. */
export class ConsentQueueFullError extends Error {
  constructor(max: number, agent?: string) {
    super(
      agent === undefined
        ? `too many consent requests are waiting (at most ${max}); try again later`
        : `agent \`${agent.length > 64 ? `${agent.slice(0, 64)}…` : agent}\` has ${max} consent requests waiting, ` +
            `the most one agent may (the others' requests are not held up by it); try again later`,
    );
    this.name = "ConsentQueueFullError";
  }
}

/** The refusal of a request the store found no room for. */
function queueFull(full: { readonly full: "total" | "agent"; readonly max: number }, limit: PendingLimit): Error {
  const agent = full.full === "agent" ? limit.perAgent?.agent : undefined;
  return new ConsentQueueFullError(full.max, agent);
}

/**
 * Thrown when a caller whose token names its agent (`serve.agent_tokens`) sends a request naming another
 * agent: the audit records who asked as the token says, never as the body claims.
 */
export class AgentMismatchError extends Error {
  constructor(caller: string, claimed: string) {
    super(
      `this token belongs to agent \`${caller}\`; the request names agent \`${claimed.slice(0, 100)}\` ` +
        "(leave the agent out, or name the token's own)",
    );
    this.name = "AgentMismatchError";
  }
}

/**
 * Thrown (400 `invalid_query`) when a caller whose token names no agent names a session with a `/`: sessions
 * `NAME/…` are those of the agent a token names, and only that token may use them.
 */
export class SessionNamespaceError extends HttpError {
  constructor() {
    super(
      400,
      "invalid_query",
      "querystring/session: a session with `/` is a named agent's (`NAME/…`, its token's own); with this token " +
        "name a session without `/`",
    );
    this.name = "SessionNamespaceError";
  }
}

/**
 * The agent a request is recorded under: the caller's when its token names one (the body may repeat it, not
 * name another: {@link AgentMismatchError}), else whatever the body says.
 */
function agentFor(claimed: unknown, caller: string | undefined): string | undefined {
  const named = typeof claimed === "string" && claimed !== "" ? claimed : undefined;
  if (caller === undefined) return named;
  if (named !== undefined && named !== caller) throw new AgentMismatchError(caller, named);
  return caller;
}

/** Thrown when the audit chain cannot record a decision: nothing is allowed unrecorded. */
export class AuditUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the audit trail could not record the decision: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "AuditUnavailableError";
  }
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
  ): Promise<{ valid: boolean; envelope: PreToolCheckEnvelope | ContractEnvelope }>;
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
   * raising no request. Call it before the audit and the stores close.
   */
  close(): Promise<void>;
}

/** 64 random bits per process, then a counter: unique across nodes and restarts, no entropy per call. */
const ID_PREFIX = randomBytes(8).toString("hex");
let idCounter = 0;

function newDecisionId(): string {
  idCounter = (idCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `dc_${ID_PREFIX}${idCounter.toString(16).padStart(16, "0")}`;
}

/** The refusal of an edit the pipeline could not judge (fail closed). */
export function unjudgedEdit(err: unknown): Decision {
  return {
    route: "refuse",
    action: "deny",
    rule: null,
    category: "system",
    risk_level: "high",
    reasons: [{ source: "pipeline", code: "decide_failed", message: `the edit could not be judged: ${String(err)}` }],
    verdicts: [],
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Creates the service. */
export function createDecisionService(options: DecisionServiceOptions): DecisionService {
  const { pipeline, metrics, clock } = options;
  const queued = (options.decisionAudit ?? "queued") === "queued";
  let unacknowledged = 0;
  let auditFailure: unknown = null;
  /** The pending attempt to make the chain writable again after a failure (stores that can: PostgreSQL). */
  let recovery: ReturnType<typeof setTimeout> | null = null;
  /** Calls of this node waiting for a person (counted from before their request is written). */
  let waiting = 0;
  /** Consent requests of each named agent counted in `waiting`. */
  const waitingByAgent = new Map<string, number>();
  /** The waiting calls' withdrawals and outcomes, for `close`. */
  const waits = new Map<AbortController, Promise<unknown>>();
  let closing = false;

  /**
   * A queued write failed: every later decision refuses. On a store that can recover (PostgreSQL: the failed
   * batch rolled back whole, the next one re-reads the head) decisions resume once the database answers;
   * on the audit.jsonl file, at the next start.
   */
  function failAudit(err: unknown): void {
    auditFailure ??= err;
    scheduleRecovery();
  }

  function scheduleRecovery(): void {
    const recover = options.stores.recoverAudit;
    if (recover === undefined || recovery !== null || closing || auditFailure === null) return;
    recovery = setTimeout(() => {
      void recover()
        .catch(() => false)
        .then((ok) => {
          recovery = null;
          if (ok) auditFailure = null;
          else scheduleRecovery();
        });
    }, 500);
    recovery.unref();
  }

  async function durable(write: Promise<void>): Promise<void> {
    try {
      await write;
    } catch (err) {
      throw new AuditUnavailableError(err);
    }
  }

  /**
   * The write whose acknowledgement is being counted, and how many decisions wait on it: appends of one
   * event-loop turn share one promise (the SQLite log's group), so a group costs one `.then`, not one
   * per decision.
   */
  let tracked: Promise<void> | undefined;
  let trackedCount = { n: 0 };

  /**
   * Queued mode: the write continues after the answer (nothing to wait for: undefined); a failure stops
   * every later decision. Durable mode, or too many writes in flight: the promise of the write.
   */
  function settleAudit(write: Promise<void>): Promise<void> | undefined {
    if (!queued || unacknowledged >= MAX_UNACKNOWLEDGED_AUDIT) return durable(write);
    unacknowledged++;
    if (write !== tracked) {
      tracked = write;
      const count = (trackedCount = { n: 0 });
      write.then(
        () => {
          unacknowledged -= count.n;
        },
        (err: unknown) => {
          unacknowledged -= count.n;
          failAudit(err);
        },
      );
    }
    trackedCount.n++;
    return undefined;
  }

  /** Appends the decision's `policy_evaluated` event; a promise only when the answer must wait for it. */
  function record(
    id: string,
    frontEnd: FrontEnd,
    request: Record<string, unknown>,
    decision: Decision,
  ): Promise<void> | undefined {
    if (auditFailure !== null) throw new AuditUnavailableError(auditFailure);
    // the database is known to be gone: refuse now rather than answer what the chain cannot record
    const lost = options.stores.unavailable?.() ?? null;
    if (lost !== null) throw new AuditUnavailableError(lost);
    let write: Promise<void>;
    try {
      write = Promise.resolve(
        options.audit.record("policy_evaluated", {
          request_id: id,
          agent: typeof request["agent"] === "string" ? request["agent"] : null,
          tool: typeof request["tool"] === "string" ? request["tool"] : null,
          category: decision.category,
          risk_level: decision.risk_level,
          decision: decision.route,
          policy_rule: decision.rule,
          front_end: frontEnd,
          reasons: decision.reasons.map((r) => `${r.source}:${r.code}`),
        }),
      );
    } catch (err) {
      throw new AuditUnavailableError(err);
    }
    return settleAudit(write);
  }

  /**
   * Arguments a person edited are judged again before the caller runs them: what the agent could not have
   * been allowed (a deny rule's path or recipient) is not allowed because an approver typed it. Only a
   * refusal counts (the person has answered the question an ask raises); it is recorded as a
   * `policy_evaluated` of the edited arguments. Null: nothing was edited, or the edit stands.
   */
  async function refusedEdit(
    id: string,
    request: ActionRequest,
    consent: ConsentResult,
  ): Promise<NonNullable<ConsentResult["edit_refused"]> | null> {
    if (consent.arguments === undefined || sameCanonicalJson(consent.arguments, request.arguments)) return null;
    const edited = { ...request, arguments: consent.arguments };
    let decision: Decision;
    try {
      decision = await (options.recheckEdits ?? pipeline).decide(edited, clock());
    } catch (err) {
      decision = unjudgedEdit(err);
    }
    if (decision.route !== "refuse") return null;
    const reasons = decision.reasons.map((r) => r.message);
    await options.audit.record("policy_evaluated", {
      request_id: id,
      consent_request_id: consent.request_id,
      edited_arguments: true,
      agent: typeof request.agent === "string" ? request.agent : null,
      tool: typeof request.tool === "string" ? request.tool : null,
      category: decision.category,
      risk_level: decision.risk_level,
      decision: decision.route,
      policy_rule: decision.rule,
      front_end: "decide",
      reasons: decision.reasons.map((r) => `${r.source}:${r.code}`),
    });
    return { rule: decision.rule, reasons };
  }

  /** The decision recorded (and counted) once the pipeline has it; `then` maps it to the answer. */
  function run<T>(frontEnd: FrontEnd, request: unknown, then: (id: string, decision: Decision) => T): Promise<T> {
    const id = newDecisionId();
    // not async functions: one promise for the pipeline's answer, none per layer
    return pipeline.decide(request, clock()).then((decision) => {
      const written = record(id, frontEnd, isObject(request) ? request : {}, decision);
      if (written === undefined) {
        metrics.countDecision(frontEnd, decision.route);
        return then(id, decision);
      }
      return written.then(() => {
        metrics.countDecision(frontEnd, decision.route);
        return then(id, decision);
      });
    });
  }

  async function waitForPerson(
    request: ActionRequest,
    decision: Decision,
    wait: { sessionId?: string; signal?: AbortSignal },
  ): Promise<ConsentResult> {
    const max = options.maxPending ?? 1000;
    const perAgent = options.maxPendingPerAgent ?? Math.max(1, Math.floor(max / 4));
    const agent = request.agent;
    const mine = agent === undefined ? 0 : (waitingByAgent.get(agent) ?? 0);
    // This node's own calls, counted before the first await: a burst arriving here is refused at once. The
    // limit itself is held by the store, which counts and writes the row in one atomic step once the
    // request is made (`admitConsentRequest`), whichever node the other requests came through.
    if (waiting >= max) throw new ConsentQueueFullError(max);
    if (agent !== undefined && mine >= perAgent) throw new ConsentQueueFullError(perAgent, agent);
    waiting++;
    if (agent !== undefined) waitingByAgent.set(agent, mine + 1);
    try {
      return await askPerson(request, decision, wait, pendingLimitFor(max, perAgent, agent));
    } finally {
      waiting--;
      if (agent !== undefined) {
        const left = (waitingByAgent.get(agent) ?? 1) - 1;
        if (left <= 0) waitingByAgent.delete(agent);
        else waitingByAgent.set(agent, left);
      }
    }
  }

  async function askPerson(
    request: ActionRequest,
    decision: Decision,
    wait: { sessionId?: string; signal?: AbortSignal },
    limit: PendingLimit,
  ): Promise<ConsentResult> {
    // withdrawn when the caller goes away, or when the service closes
    const control = new AbortController();
    const onAbort = (): void => control.abort();
    wait.signal?.addEventListener("abort", onAbort, { once: true });
    if (closing || wait.signal?.aborted === true) control.abort();
    const asked = askBroker(request, decision, { sessionId: wait.sessionId ?? "http", limit }, control.signal);
    waits.set(control, asked);
    try {
      return await asked;
    } finally {
      waits.delete(control);
      wait.signal?.removeEventListener("abort", onAbort);
    }
  }

  async function askBroker(
    request: ActionRequest,
    decision: Decision,
    admission: { readonly sessionId: string; readonly limit: PendingLimit },
    signal: AbortSignal,
  ): Promise<ConsentResult> {
    const started = clock().getTime();
    // the request's id as soon as it exists: an expired or withdrawn outcome has no response to take it from
    let raised: string | null = null;
    // why its row could not be written (the limit was full, the store failed): the broker then denies it
    // unasked, and the caller hears this instead
    const refusal: { error?: Error } = {};
    const outcome = await options.broker.ask({
      server: request.server ?? "http",
      tool: request.tool,
      arguments: { ...request.arguments },
      decision,
      sessionId: admission.sessionId,
      ...(request.agent !== undefined ? { agent: request.agent } : {}),
      timeoutMs: decision.timeout !== undefined ? decision.timeout * 1000 : (options.consentTimeoutMs ?? 120_000),
      signal,
      onRequested: async (requested) => {
        raised = requested.id;
        const error = await admitConsentRequest(options.stores, requested, admission.sessionId, admission.limit).then(
          (admitted) => (admitted.ok ? undefined : queueFull(admitted, admission.limit)),
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        );
        if (error === undefined) return;
        refusal.error = error;
        throw error;
      },
    });
    if (refusal.error !== undefined) throw refusal.error;
    metrics.observeConsent(outcome.kind, (clock().getTime() - started) / 1000);
    options.stores.changes.poke();
    const response = outcome.kind === "approved" || outcome.kind === "denied" ? outcome.consentResponse : undefined;
    const requestId =
      isObject(response) && typeof response["request_id"] === "string" ? response["request_id"] : raised;
    if (outcome.kind === "approved") {
      return { outcome: "approved", request_id: requestId, scope: outcome.scope, arguments: outcome.arguments };
    }
    if (outcome.kind === "denied") return { outcome: "denied", request_id: requestId, reason: outcome.reason };
    return { outcome: outcome.kind, request_id: requestId };
  }

  return {
    options,
    auditFailure: () => auditFailure,
    async close() {
      closing = true;
      if (recovery !== null) clearTimeout(recovery);
      recovery = null;
      for (const control of waits.keys()) control.abort();
      await Promise.allSettled(waits.values());
    },
    preToolCheck(event, frontEnd, caller) {
      let envelope: ContractEnvelope;
      try {
        envelope = checkParsedToolPrecheck(event);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      if (envelope.validation_errors.length > 0 || !isObject(event)) {
        metrics.countDecision(frontEnd, "refuse");
        return Promise.resolve({ valid: false, envelope });
      }
      // The envelope already holds the contract's verdict; the pipeline judges the rest (policy, graph),
      // and mergeDecision keeps the stricter of the two, so the event is checked once.
      let agent: string | undefined;
      try {
        agent = agentFor(event["agent_id"], caller);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      const request: Record<string, unknown> = {
        tool: event["tool_name"],
        arguments: event["proposed_arguments"],
        ...(agent !== undefined ? { agent } : {}),
      };
      return run(frontEnd, request, (id, decision) => ({
        valid: true,
        envelope: mergeDecision(envelope, decision, id),
      }));
    },
    async decide(body, wait) {
      // `NAME/…` is the session namespace of the agent a token names: a caller without such a token may not
      // name a session there (it would reuse that agent's "for this session" approvals)
      if (wait.caller === undefined && wait.sessionId?.includes("/") === true) throw new SessionNamespaceError();
      let input = body;
      if (wait.caller !== undefined && typeof body === "object" && body !== null && !Array.isArray(body)) {
        input = { ...body, agent: agentFor((body as Record<string, unknown>)["agent"], wait.caller) };
      }
      const { id, decision } = await run("decide", input, (id, decision) => ({ id, decision }));
      const waits = decision.route === "ask" || decision.route === "defer";
      if (!wait.wait || !waits) return { decision_id: id, route: decision.route, decision };
      // a call that names no session is a session of its own: an approval "for this session" then covers
      // no other caller's call (they were all session `http` before, on every node, for 12 hours)
      // a caller whose token names its agent has sessions of its own: another agent naming the same session
      // cannot reuse its "for this session" approvals
      const named = wait.sessionId ?? `http-${id}`;
      const sessionId = wait.caller !== undefined ? `${wait.caller}/${named}` : named;
      const consent = await waitForPerson(input as ActionRequest, decision, { ...wait, sessionId });
      if (consent.outcome !== "approved") return { decision_id: id, route: "refuse", decision, consent };
      const refused = await refusedEdit(id, input as ActionRequest, consent);
      if (refused === null) return { decision_id: id, route: "accept", decision, consent };
      return { decision_id: id, route: "refuse", decision, consent: { ...consent, edit_refused: refused } };
    },
  };
}
