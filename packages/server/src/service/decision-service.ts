/**
 * The decision service behind every front end (HTTP, MCP, console): one pipeline, one audit chain,
 * one consent broker, one set of metrics.
 */
import { randomBytes } from "node:crypto";
import {
  checkParsedToolPrecheck,
  createCallerBudget,
  decideWithin,
  retryAtOf,
  sameCanonicalJson,
  type ActionRequest,
  type ContractEnvelope,
  type Decision,
} from "@acp/core";
import {
  answeredBy,
  judgeEdit,
  judgeOnce,
  type AnsweredQuestions,
  type EditJudgement,
  type JudgeEdited,
} from "@acp/proxy";
import type { PendingLimit } from "@acp/store";
import type { FrontEnd } from "../metrics/metrics.js";
import { mergeDecision } from "./merge-envelope.js";
import { admitConsentRequest, pendingLimitFor } from "./pending-admission.js";
import { CallerPendingFullError, defaultPendingPerCaller, refuseForPendingShare } from "./pending-share.js";
import {
  agentFor,
  AgentMismatchError,
  AuditUnavailableError,
  checkServerScope,
  ConsentQueueFullError,
  queueFull,
  ServerNotAllowedError,
  SessionNamespaceError,
} from "./service-errors.js";
import {
  MAX_UNACKNOWLEDGED_AUDIT,
  type ConsentResult,
  type DecideAnswer,
  type DecisionService,
  type DecisionServiceOptions,
} from "./service-types.js";

export {
  AgentMismatchError,
  AuditUnavailableError,
  ConsentQueueFullError,
  ServerNotAllowedError,
  SessionNamespaceError,
};
export {
  MAX_UNACKNOWLEDGED_AUDIT,
  type ConsentResult,
  type DecideAnswer,
  type DecisionService,
  type DecisionServiceOptions,
};

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
  /** Each caller's share of the policy work (`serve.caller_budget`): one caller cannot hold the thread. */
  const callerBudget = options.callerBudget === false ? null : createCallerBudget(options.callerBudget);
  let unacknowledged = 0;
  let auditFailure: unknown = null;
  /** The pending attempt to make the chain writable again after a failure (stores that can: PostgreSQL). */
  let recovery: ReturnType<typeof setTimeout> | null = null;
  /** Calls of this node waiting for a person (counted from before their request is written). */
  let waiting = 0;
  /** Consent requests of each caller counted in `waiting` (the callers whose token names no agent: ""). */
  const waitingByCaller = new Map<string, number>();
  /** The waiting calls' withdrawals and outcomes, for `close`. */
  const waits = new Map<AbortController, Promise<unknown>>();
  let closing = false;
  /** Whether the store makes a failed audit chain writable again by itself (`AuditUnavailableError.recovers`). */
  const recovers = options.stores.recoverAudit !== undefined;

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
      throw new AuditUnavailableError(err, recovers);
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
    if (auditFailure !== null) throw new AuditUnavailableError(auditFailure, recovers);
    // the database is known to be gone: refuse now rather than answer what the chain cannot record
    const lost = options.stores.unavailable?.() ?? null;
    if (lost !== null) throw new AuditUnavailableError(lost, recovers);
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
          // the policy version the decision used, when the pipeline names one (`acp serve` reloads its file)
          ...(decision.policy_hash !== undefined ? { policy_hash: decision.policy_hash } : {}),
        }),
      );
    } catch (err) {
      throw new AuditUnavailableError(err, recovers);
    }
    return settleAudit(write);
  }

  /**
   * Arguments a person edited are judged again before the caller runs them, by the proxy's rule
   * (`judgeEdit`): what the agent could not have been allowed (a deny rule's path or recipient) is not
   * allowed because an approver typed it (`refused`), and an edit under an ask rule the person was not
   * asked about (or at a stronger level) is a new question (`asked`). `stands`: nothing was edited, or the
   * edit stands. Judged once per question (`judgeOnce`): the broker asks before it tells the channels.
   */
  async function judgeEditedArguments(
    request: ActionRequest,
    edited: Record<string, unknown>,
    caller: string | undefined,
    answered: AnsweredQuestions,
    asked: number,
  ): Promise<EditJudgement> {
    if (sameCanonicalJson(edited, request.arguments)) return { kind: "stands" };
    const recheck = options.recheckEdits ?? pipeline;
    const judge = serverChecked(caller) ? recheck : options.anyServerRecheckEdits;
    let rechecked: Decision;
    try {
      rechecked = await judge.decide({ ...request, arguments: edited }, clock());
    } catch (err) {
      rechecked = unjudgedEdit(err);
    }
    return judgeEdit(rechecked, answered, asked);
  }

  /** Records the judgement of an edit that does not stand as a `policy_evaluated` of the edited arguments. */
  async function recordEditJudgement(
    id: string,
    request: ActionRequest,
    consent: ConsentResult,
    judged: EditJudgement,
  ): Promise<EditJudgement> {
    if (judged.kind === "stands") return judged;
    const decision = judged.decision;
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
      ...(decision.policy_hash !== undefined ? { policy_hash: decision.policy_hash } : {}),
    });
    return judged;
  }

  /**
   * Whether the caller's `server` is checked: only a named agent held to servers (`serverScopes`) names one
   * the policy may trust. Every other caller is judged on the any-server policy (see `anyServerPipeline`).
   */
  function serverChecked(caller: string | undefined): boolean {
    return caller !== undefined && options.serverScopes?.has(caller) === true;
  }

  /** The decision recorded (and counted) once the pipeline has it; `then` maps it to the answer. */
  function run<T>(
    frontEnd: FrontEnd,
    request: unknown,
    caller: string | undefined,
    then: (id: string, decision: Decision) => T,
  ): Promise<T> {
    const id = newDecisionId();
    const judge = serverChecked(caller) ? pipeline : options.anyServerPipeline;
    // not async functions: one promise for the pipeline's answer, none per layer
    return decideWithin(callerBudget, caller, clock, () => judge.decide(request, clock())).then((decision) => {
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
    wait: { sessionId?: string; signal?: AbortSignal; caller?: string; judgeEdited?: JudgeEdited },
  ): Promise<ConsentResult> {
    const max = options.maxPending ?? 1000;
    const perCaller = options.maxPendingPerCaller ?? defaultPendingPerCaller(max);
    const key = wait.caller ?? "";
    const mine = waitingByCaller.get(key) ?? 0;
    // This node's own calls, counted before the first await: a burst arriving here is refused at once. The
    // limit itself is held by the store, which counts and writes the row in one atomic step once the
    // request is made (`admitConsentRequest`), whichever node the other requests came through.
    if (waiting >= max) throw new ConsentQueueFullError(max);
    if (mine >= perCaller) throw new CallerPendingFullError(perCaller, wait.caller);
    waiting++;
    waitingByCaller.set(key, mine + 1);
    try {
      return await askPerson(request, decision, wait, pendingLimitFor(max, perCaller, wait.caller));
    } finally {
      waiting--;
      const left = (waitingByCaller.get(key) ?? 1) - 1;
      if (left <= 0) waitingByCaller.delete(key);
      else waitingByCaller.set(key, left);
    }
  }

  /**
   * A call whose caller's share of the waiting requests is full: refused without asking a person, the
   * refusal recorded as a `policy_evaluated` of the same decision id (reason `pipeline:caller_pending_full`).
   */
  async function refuseForShare(
    id: string,
    request: ActionRequest,
    asked: Decision,
    full: CallerPendingFullError,
  ): Promise<DecideAnswer> {
    const refused = refuseForPendingShare(asked, full);
    let write: Promise<void>;
    try {
      write = Promise.resolve(
        options.audit.record("policy_evaluated", {
          request_id: id,
          agent: typeof request.agent === "string" ? request.agent : null,
          tool: typeof request.tool === "string" ? request.tool : null,
          category: refused.category,
          risk_level: refused.risk_level,
          decision: refused.route,
          policy_rule: refused.rule,
          front_end: "decide",
          reasons: refused.reasons.map((r) => `${r.source}:${r.code}`),
          ...(refused.policy_hash !== undefined ? { policy_hash: refused.policy_hash } : {}),
        }),
      );
    } catch (err) {
      throw new AuditUnavailableError(err, recovers);
    }
    await durable(write);
    metrics.countDecision("decide", "refuse");
    return { decision_id: id, route: "refuse", decision: refused };
  }

  async function askPerson(
    request: ActionRequest,
    decision: Decision,
    wait: { sessionId?: string; signal?: AbortSignal; judgeEdited?: JudgeEdited },
    limit: PendingLimit,
  ): Promise<ConsentResult> {
    // withdrawn when the caller goes away, or when the service closes
    const control = new AbortController();
    const onAbort = (): void => control.abort();
    wait.signal?.addEventListener("abort", onAbort, { once: true });
    if (closing || wait.signal?.aborted === true) control.abort();
    const admission = { sessionId: wait.sessionId ?? "http", limit };
    const asked = askBroker(request, decision, admission, control.signal, wait.judgeEdited);
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
    judgeEdited?: JudgeEdited,
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
      ...(judgeEdited !== undefined ? { judgeEdited } : {}),
      onRequested: async (requested) => {
        raised = requested.id;
        const error = await admitConsentRequest(options.stores, requested, admission.sessionId, admission.limit).then(
          (admitted) => (admitted.ok ? undefined : queueFull(admitted, admission.limit)),
          // the store could not write it (the database went away mid-write, a full disk): the service's answer
          // to a decision its state cannot record (503), not an internal error
          (err: unknown) => new AuditUnavailableError(err, recovers),
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
      const withdrawn = waits.size;
      for (const control of waits.keys()) control.abort();
      await Promise.allSettled(waits.values());
      return withdrawn;
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
        agent = agentFor(event["agent_id"], caller, options.namedAgents);
        checkServerScope(options.serverScopes, caller, undefined); // a contract event names no server
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      const request: Record<string, unknown> = {
        tool: event["tool_name"],
        arguments: event["proposed_arguments"],
        ...(agent !== undefined ? { agent } : {}),
      };
      return run(frontEnd, request, caller, (id, decision) => {
        // the contract's own refusal (or hard blocker) does not pass with time: then no time to come back is told
        const contractFails = envelope.architecture_decision.route === "refuse" || envelope.hard_blockers.length > 0;
        const retryAtMs = contractFails ? undefined : retryAtOf(decision);
        return {
          valid: true,
          envelope: mergeDecision(envelope, decision, id),
          ...(retryAtMs !== undefined ? { retryAtMs } : {}),
        };
      });
    },
    async decide(body, wait) {
      // `NAME/…` is the session namespace of the agent a token names: a caller without such a token may not
      // name a session there (it would reuse that agent's "for this session" approvals)
      if (wait.caller === undefined && wait.sessionId?.includes("/") === true) throw new SessionNamespaceError();
      let input = body;
      if (isObject(body)) {
        // with a token that names no agent, the body may not name one that has a token (agentFor throws)
        const agent = agentFor(body["agent"], wait.caller, options.namedAgents);
        if (wait.caller !== undefined) {
          input = { ...body, agent };
          checkServerScope(options.serverScopes, wait.caller, body["server"]);
        }
      }
      const { id, decision } = await run("decide", input, wait.caller, (id, decision) => ({ id, decision }));
      const waits = decision.route === "ask" || decision.route === "defer";
      if (!wait.wait || !waits) return { decision_id: id, route: decision.route, decision };
      // a call that names no session is a session of its own: an approval "for this session" then covers
      // no other caller's call (they were all session `http` before, on every node, for 12 hours)
      // a caller whose token names its agent has sessions of its own: another agent naming the same session
      // cannot reuse its "for this session" approvals
      const named = wait.sessionId ?? `http-${id}`;
      const sessionId = wait.caller !== undefined ? `${wait.caller}/${named}` : named;
      let request = input as ActionRequest;
      let asked = decision;
      let asking = { answered: answeredBy(decision), asked: 1 };
      for (;;) {
        let consent: ConsentResult;
        // judged once: by the broker before the channels hear how the request ended, taken here after
        const question = { request, answered: asking.answered, asked: asking.asked };
        const judgeEdited = judgeOnce((edited) =>
          judgeEditedArguments(question.request, edited, wait.caller, question.answered, question.asked),
        );
        try {
          consent = await waitForPerson(request, asked, { ...wait, sessionId, judgeEdited });
        } catch (err) {
          if (err instanceof CallerPendingFullError) return refuseForShare(id, request, asked, err);
          throw err;
        }
        if (consent.outcome !== "approved") return { decision_id: id, route: "refuse", decision: asked, consent };
        const judged =
          consent.arguments === undefined
            ? ({ kind: "stands" } as const)
            : await recordEditJudgement(id, request, consent, await judgeEdited(consent.arguments));
        if (judged.kind === "stands") return { decision_id: id, route: "accept", decision: asked, consent };
        if (judged.kind === "refused") {
          const editRefused = { rule: judged.decision.rule, reasons: judged.decision.reasons.map((r) => r.message) };
          return {
            decision_id: id,
            route: "refuse",
            decision: asked,
            consent: { ...consent, edit_refused: editRefused },
          };
        }
        // a new question about the edited arguments, under the rule they fall under; `decision` in the
        // answer is then the question the final consent answered
        request = { ...request, arguments: consent.arguments ?? request.arguments };
        asked = judged.decision;
        asking = { answered: judged.answered, asked: asking.asked + 1 };
      }
    },
  };
}
