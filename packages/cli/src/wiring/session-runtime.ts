import { randomBytes } from "node:crypto";
import {
  canonicalSha256Ref,
  createSharedStoreBudget,
  MAX_STORE_CHARS,
  createSession,
  isFinalSessionState,
  isSessionError,
  sessionSource,
  type ActionRequest,
  type ClassificationOverride,
  type Confirmation,
  type DecisionSource,
  type EscalationHandler,
  type EscalationQuestion,
  type ProvenanceMemory,
  type Reason,
  type Session,
  type SessionEvent,
  type SessionEventType,
  type SharedStoreBudget,
  type SourceVerdict,
} from "@acp/core";
import type { CallObserver, ConsentBroker, PlanHook } from "@acp/proxy";
// the gate's own entry: a value from it loads neither the MCP SDK nor the proxy's servers
import { ExecutionRefused } from "@acp/proxy/gate";
import { OPEN_INTENT } from "../replay/session-runtime.js";
import type { VerifiedIntentUpdate } from "./intent-update.js";
import type { IntentSync } from "./session-intent-sync.js";
import { PLAN_NARROWS_RULE } from "./session-plan-rule.js";
import { createAgentSuspensions, resumedFirst, type ResumeSlot } from "./session-resume.js";
import { submitPlan, type PlanRuleSlot } from "./session-plans.js";

/** Options of the proxy's session runtime. */
export interface ProxySessionRuntimeOptions {
  /** The intent every downstream session runs under (from `--intent`); absent: every action, provenance judged. */
  readonly intent?: unknown;
  /** Upstream servers whose results are trusted (config `trusted: true`); every other result is untrusted. */
  readonly trustedServers: readonly string[];
  readonly classify: readonly ClassificationOverride[];
  /**
   * Session settings from the `session:` block of the config file in use (`checkSessionBlock`, already validated):
   * provenance, reads, transitions, kill switch, …; `trusted_servers` adds to the above, and its `classify`
   * entries come before the policy's (the first matching override wins).
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  readonly now: () => Date;
  /** The consent broker the session's questions (plan approval) go to; bound once the proxy has one. */
  readonly broker?: () => ConsentBroker | undefined;
  /** Live sessions in the home and the person's signed intent updates (`acp intent set`); absent: none. */
  readonly intentSync?: IntentSync | undefined;
  /**
   * Provenance text all the sessions of this process keep together, characters; default
   * {@link PROCESS_STORE_CHARS}. (Each session also keeps at most `MAX_STORE_CHARS` of its own.)
   */
  readonly storeBudgetChars?: number;
  /** What earlier sessions of the home read in untrusted content (`createHomeProvenanceMemory`); absent: none. */
  readonly memory?: ProvenanceMemory | undefined;
  /**
   * How long a question the session puts to a person (a plan, resuming a suspended session) waits for an answer
   * (`defaults.timeout_seconds`); default {@link DEFAULT_QUESTION_TIMEOUT_MS}.
   */
  readonly consentTimeoutMs?: number;
  /**
   * Appends an audit event (the home's audit log): the runtime's own events a person must be able to find
   * afterwards ({@link AUDITED_SESSION_EVENTS}) are written as `session_event`. Absent: they stay in the session.
   */
  readonly record?: (eventType: string, fields: Record<string, unknown>) => Promise<void> | void;
  /** Where a session event that could not be audited is said (stderr). */
  readonly log?: (line: string) => void;
}

/**
 * The session runtime's events that reach the audit log as `session_event`: what changes how the session
 * judges from then on (text read like instructions, provenance no longer complete, suspended by the kill
 * switch, resumed), a call it refused as it was about to run, and its errors. Not every result recorded, nor
 * the calls it counted: those are the proxy's own events already.
 */
export const AUDITED_SESSION_EVENTS: ReadonlySet<SessionEventType> = new Set<SessionEventType>([
  "instructions_detected",
  "provenance_incomplete",
  "suspended",
  "resumed",
  "execution_refused",
  "illegal_transition",
  "error",
]);

/** The session events of {@link AUDITED_SESSION_EVENTS} appended to the audit log; `undefined` without one. */
function auditedEvents(
  options: ProxySessionRuntimeOptions,
  sessionId: string,
): ((event: SessionEvent) => void) | undefined {
  const record = options.record;
  if (record === undefined) return undefined;
  const failed = (err: unknown): void =>
    options.log?.(
      `a session event could not be written to the audit log: ${err instanceof Error ? err.message : String(err)}`,
    );
  return (event) => {
    if (!AUDITED_SESSION_EVENTS.has(event.type)) return;
    try {
      Promise.resolve(
        record("session_event", {
          session_id: sessionId,
          session_event: event.type,
          seq: event.seq,
          state: event.state,
          intent_version: event.intent_version,
          plan_hash: event.plan_hash,
          ...(event.code !== undefined ? { code: event.code } : {}),
          message: event.message,
        }),
      ).catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}

/** How long a session's question to a person waits when no consent timeout is configured: 120 s. */
export const DEFAULT_QUESTION_TIMEOUT_MS = 120_000;

/**
 * Provenance text the sessions of one `acp proxy` keep together: twice what one session may keep, so a
 * stdio proxy (one session) is bound by the session's own limit only, and an HTTP proxy serving many
 * agents by this. Past it a session keeps no more content to trace values to, and its consequential
 * calls ask (fail safe); a session that ends gives its share back.
 */
export const PROCESS_STORE_CHARS = 2 * MAX_STORE_CHARS;

/**
 * The share of the process's provenance room the sessions of one agent with a token of its own
 * (`proxy.agent_tokens`) keep together: a quarter, as for `proxy.max_sessions`, so one agent reading a lot
 * cannot make every other agent's consequential calls ask. Sessions without a token of their own (a shared
 * token, stdio) are bound by the process's room only: the proxy cannot tell their agents apart.
 */
export const AGENT_STORE_SHARE = 4;

/** One session runtime per downstream MCP session, as a pipeline source and as the proxy's call observer. */
export interface ProxySessionRuntime {
  /** `tokenAgent`: the agent the session's own token names, if it has one (its provenance share). */
  sourceFor(sessionId: string, tokenAgent?: string): DecisionSource;
  readonly observer: CallObserver;
  /** `acp_submit_plan`: validate against the intent, approve by rule when it only narrows, else ask a person. */
  readonly plans: PlanHook;
  /** Records what the person typed in a session (`user_input` provenance: trusted, as the user's own words). */
  recordUserInput(sessionId: string, text: string): void;
  /** The core session of a downstream session, if it has one (inspection, tests). */
  sessionOf(sessionId: string): Session | undefined;
}

/** Per-session answers the runtime gives itself: a verified signed update, the narrowing rule. */
interface SessionSlots extends PlanRuleSlot {
  signedUpdate?: VerifiedIntentUpdate;
  resume: ResumeSlot;
  /** Aborted when the agent disconnects: a question still put to a person for this session is withdrawn. */
  readonly closing: AbortController;
}

function answer(question: EscalationQuestion, by: string, at: string, note?: string): Confirmation {
  return {
    question_id: question.id,
    subject_hash: question.subject_hash,
    approved: true,
    by,
    at,
    ...(note !== undefined ? { note } : {}),
  };
}

/**
 * The session's escalation handler. An intent update is confirmed only by the person's signed update being
 * applied right now (`acp intent set`, verified with the home key): that signature IS the person's answer, and
 * nothing the agent can send reaches this path. A plan that only narrows the intent is approved by rule; every
 * other question goes to a person through the proxy's consent channels, signed like any answer.
 */
function escalationFor(
  sessionId: string,
  slots: SessionSlots,
  broker: (() => ConsentBroker | undefined) | undefined,
  now: () => Date,
  timeoutMs: number,
): EscalationHandler {
  return {
    async confirm(question) {
      const at = now().toISOString();
      if (question.kind === "intent_update") {
        const signed = slots.signedUpdate;
        const proposed = (question.details as { intent?: unknown } | null)?.intent;
        if (signed === undefined || canonicalSha256Ref(proposed ?? null) !== signed.compiled.hash) return null;
        return answer(question, signed.payload.by, at, "signed intent update (acp intent set)");
      }
      const plan = (question.details as { plan_hash?: unknown } | null)?.plan_hash;
      if (question.kind === "plan_approval" && slots.planRule !== undefined && plan === slots.planRule.planHash)
        return answer(question, `rule:${PLAN_NARROWS_RULE}`, at, slots.planRule.reason);
      const b = broker?.();
      if (b === undefined) return null;
      const resume = question.kind === "resume";
      const outcome = await b.ask({
        server: "acp",
        tool: resume ? "acp_resume_session" : "acp_submit_plan",
        arguments: { question: question.text, proposal: question.details },
        decision: {
          route: "ask",
          action: "ask",
          rule: `session:${question.kind}`,
          category: "system",
          risk_level: "high",
          reasons: [{ source: "session", code: question.kind, message: question.text }],
          verdicts: [],
        },
        sessionId,
        timeoutMs,
        signal: slots.closing.signal,
      });
      if (resume) slots.resume.lastOutcome = outcome.kind;
      return outcome.kind === "approved" ? answer(question, "consent", at) : null;
    },
  };
}

/** Applies a verified signed update through the core's intent-update path; executing resumes under it. */
async function applySigned(session: Session, slots: SessionSlots, update: VerifiedIntentUpdate): Promise<void> {
  slots.signedUpdate = update;
  try {
    await session.confirmIntentUpdate(update.payload.intent);
  } finally {
    delete slots.signedUpdate;
  }
  // applied: executing resumes under the new version; if it cannot, every call is refused (never allowed)
  try {
    session.start();
  } catch {
    /* the session stays in `intent_set` and refuses every call until a plan is approved */
  }
}

/**
 * The session's "nothing to object" reason (`session_ok`, "within the intent and the approved plan") says
 * only what is there: dropped when the session runs the open stand-in intent (no `--intent`, no `acp intent
 * set` yet) and no plan — it would claim an intent and a plan nobody set — and naming the one that is set.
 */
export function withHonestOk(verdict: SourceVerdict, session: Session, openHash: string | null): SourceVerdict {
  if (!verdict.reasons.some((r) => r.code === "session_ok")) return verdict;
  const intent = session.intentHash !== null && session.intentHash !== openHash;
  const plan = session.plan !== null;
  const message =
    intent && plan
      ? "within the intent and the approved plan"
      : intent
        ? "within the intent"
        : "within the approved plan";
  const reasons = verdict.reasons.flatMap((r) =>
    r.code !== "session_ok" ? [r] : intent || plan ? [{ ...r, message }] : [],
  );
  return { ...verdict, reasons };
}

/**
 * A call the gate let through, counted by the session before it runs (`recordExecution`): its `seq`, which
 * its result names. When the session no longer lets it run — a call in flight beside it spent a budget,
 * tripped the kill switch, or the session was suspended while a person decided — it throws
 * {@link ExecutionRefused} with the session's own reasons, and the call is refused instead of forwarded.
 */
function countedExecution(session: Session, request: ActionRequest): number {
  try {
    return session.recordExecution(request).seq;
  } catch (err) {
    if (!isSessionError(err, "execution_not_permitted")) throw err;
    const verdict = session.evaluate(request);
    const reasons: readonly Reason[] =
      verdict.route === "refuse" && verdict.reasons.length > 0
        ? verdict.reasons
        : [{ source: "session", code: "execution_not_permitted", message: err.message }];
    throw new ExecutionRefused(reasons);
  }
}

/**
 * The session runtime of `@acp/core` behind `acp proxy`: every downstream session gets its own runtime
 * session (intent set, started), tool results enter it labelled by server trust, executed calls enter its
 * history, and it judges every call as the pipeline's `session` source — so text an agent read can never
 * become authority ("text from `calendar.read_events` wants to send email to …"). Before each call it picks up
 * the person's signed intent update, if one was queued.
 */
export function createProxySessionRuntime(options: ProxySessionRuntimeOptions): ProxySessionRuntime {
  const sessions = new Map<string, { session: Session; slots: SessionSlots }>();
  const given = options.settings ?? {};
  const listOf = (key: string): unknown[] => (Array.isArray(given[key]) ? (given[key] as unknown[]) : []);
  const settings = {
    ...given,
    require_plan: false,
    trusted_servers: [...options.trustedServers, ...listOf("trusted_servers")],
    // the first matching override wins: the session block's own entries before the policy's
    classify: [...listOf("classify"), ...options.classify],
  };
  const sync = options.intentSync;
  const storeBudget = createSharedStoreBudget(options.storeBudgetChars ?? PROCESS_STORE_CHARS);
  const agentBudgets = new Map<string, SharedStoreBudget>();
  const budgetOf = (tokenAgent: string | undefined): SharedStoreBudget => {
    if (tokenAgent === undefined) return storeBudget;
    let share = agentBudgets.get(tokenAgent);
    if (share === undefined) {
      share = createSharedStoreBudget(Math.floor(storeBudget.max / AGENT_STORE_SHARE), {
        parent: storeBudget,
        holders: `the sessions of agent \`${tokenAgent}\``,
      });
      agentBudgets.set(tokenAgent, share);
    }
    return share;
  };
  // the hash of the open stand-in intent, once a session runs it: that session has no intent of a person's
  let openHash: string | null = null;
  const agentSuspensions = createAgentSuspensions();
  const entryFor = (id: string, agent?: string, tokenAgent?: string): { session: Session; slots: SessionSlots } => {
    let entry = sessions.get(id);
    if (entry === undefined) {
      const slots: SessionSlots = { resume: {}, closing: new AbortController() };
      const audited = auditedEvents(options, id);
      const session = createSession({
        now: options.now,
        random: (n) => randomBytes(n),
        authorityKey: randomBytes(32),
        settings,
        escalation: escalationFor(
          id,
          slots,
          options.broker,
          options.now,
          options.consentTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS,
        ),
        storeBudget: budgetOf(tokenAgent),
        ...(options.memory !== undefined ? { memory: options.memory } : {}),
        ...(audited !== undefined || tokenAgent !== undefined
          ? {
              onEvent: (event: SessionEvent) => {
                audited?.(event);
                if (tokenAgent !== undefined) agentSuspensions.observe(tokenAgent, event, slots.resume);
              },
            }
          : {}),
      });
      session.setIntent(options.intent ?? OPEN_INTENT);
      if (options.intent === undefined) openHash = session.intentHash;
      session.start();
      if (tokenAgent !== undefined) agentSuspensions.hold(tokenAgent, session, slots.resume);
      entry = { session, slots };
      sessions.set(id, entry);
      sync?.register(id, session, agent);
    }
    return entry;
  };
  /**
   * The session, once the person's queued intent updates are applied (synchronously when there are none) and,
   * when the kill switch suspended it, once a person was asked to resume it (`resumedFirst`).
   */
  const current = (id: string, agent?: string, tokenAgent?: string): Session | Promise<Session> => {
    const { session, slots } = entryFor(id, agent, tokenAgent);
    const pending = sync?.pickUp(id, session, (s, update) => applySigned(s, slots, update));
    const resumed = (): Session | Promise<Session> => resumedFirst(session, slots.resume, options.log);
    return pending === undefined ? resumed() : pending.then(resumed);
  };
  return {
    sourceFor: (id, tokenAgent) => ({
      name: "session",
      // a throw here is the source's error, which the pipeline turns into a refusal
      evaluate: (request: ActionRequest, now) => {
        const session = current(id, request.agent, tokenAgent);
        const judge = (s: Session): SourceVerdict | null | Promise<SourceVerdict | null> => {
          const verdict = sessionSource(s).evaluate(request, now);
          const honest = (v: SourceVerdict | null): SourceVerdict | null =>
            v === null ? v : withHonestOk(v, s, openHash);
          return verdict instanceof Promise ? verdict.then(honest) : honest(verdict);
        };
        return session instanceof Promise ? session.then(judge) : judge(session);
      },
    }),
    observer: {
      executed: (id, request) => countedExecution(entryFor(id).session, request),
      result: (id, server, tool, text, given) =>
        void entryFor(id).session.recordToolResult(server, tool, text, {
          ...(given?.trusted === true ? { trusted: true } : {}),
          ...(given?.error === true ? { error: true } : {}),
          ...(given?.hiddenTextRemoved === true ? { hiddenTextRemoved: true } : {}),
          ...(given?.call !== undefined ? { call: given.call } : {}),
        }),
      unreadable: (id, server, tool, why) => entryFor(id).session.recordUnreadableResult(server, tool, why),
      closed: (id) => {
        // a question still put to a person for it (a plan, resuming it) is withdrawn
        sessions.get(id)?.slots.closing.abort();
        const session = sessions.get(id)?.session;
        // every token is revoked; a session that already ended stays as it is
        if (session !== undefined && !isFinalSessionState(session.state)) session.terminate("the agent disconnected");
        sessions.delete(id);
        sync?.closed(id);
      },
    },
    plans: {
      submit: async (id, plan, _signal, context) =>
        submitPlan(await current(id, context?.agent, context?.tokenAgent), entryFor(id).slots, plan, context?.tools),
    },
    recordUserInput: (id, text) => void entryFor(id).session.recordUserInput(text),
    sessionOf: (id) => sessions.get(id)?.session,
  };
}
