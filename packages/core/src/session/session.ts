/**
 * A session: the runtime that turns a user's intent and an approved plan into the only authority an agent has.
 * The model proposes; the session disposes. Pure: the clock, randomness and the signing key are handed in.
 */
import type { SourceVerdict } from "../pipeline/index.js";
import { compileActionPatterns } from "./action-name.js";
import { MIN_AUTHORITY_KEY_BYTES, type AuthorityToken } from "./authority-token.js";
import { ConfirmationDesk, type QuestionDraft } from "./confirmations.js";
import { SessionError } from "./errors.js";
import { DECLINING_ESCALATION_HANDLER, type Confirmation, type EscalationHandler } from "./escalation.js";
import { judgeRequest, type ExecutedCall, type SessionJudgment } from "./evaluate-session.js";
import type { SessionEvent } from "./events.js";
import type { Intent } from "./intent.js";
import type { Plan } from "./plan.js";
import type { ProvenanceEntry } from "./provenance.js";
import type { SharedStoreBudget } from "./store-budget.js";
import { SessionCore } from "./session-core.js";
import {
  actionDraft,
  authorize,
  issueToken,
  readRequest,
  type AuthorizeResult,
  type IssueTokenOptions,
} from "./session-gate.js";
import * as life from "./session-lifecycle.js";
import * as executions from "./session-executions.js";
import * as records from "./session-records.js";
import { parseSessionSettings } from "./session-settings.js";
import type { SessionState } from "./state-machine.js";
import { compileTransitionRules } from "./transitions.js";
import type { ProvenanceMemory } from "./provenance-memory.js";

/** What a question to the escalation handler is about, as the caller proposes it. */
export type ConfirmationProposal =
  | { readonly kind: "intent_update"; readonly intent: unknown }
  | { readonly kind: "plan_approval" }
  | { readonly kind: "resume" }
  | { readonly kind: "action"; readonly request: unknown };

/** How to create a session. */
export interface SessionOptions {
  /** The tenant the session and its tokens belong to (default `default`). */
  readonly tenant?: string;
  /** The session id (default: 16 random bytes as hex). */
  readonly id?: string;
  /** The clock. */
  readonly now: () => Date;
  /** Random bytes (`crypto.randomBytes` in production, a seeded source in tests). */
  readonly random: (size: number) => Uint8Array;
  /** The HMAC key authority tokens are signed with (at least 32 bytes). */
  readonly authorityKey: Uint8Array;
  /** Who answers questions; without one every question is declined. */
  readonly escalation?: EscalationHandler;
  /** Settings as read from YAML/JSON (see `parseSessionSettings`); defaults when absent. */
  readonly settings?: unknown;
  /** Called with every event after it is appended to `events`; a throw is `event_sink_failed`. */
  readonly onEvent?: (event: SessionEvent) => void;
  /**
   * Room for provenance text shared with the other sessions of the process (`createSharedStoreBudget`):
   * an HTTP proxy serving many agents bounds what all of them keep together. Without it, only the
   * session's own limit holds.
   */
  readonly storeBudget?: SharedStoreBudget;
  /**
   * What the agent's earlier sessions read in untrusted content (`ProvenanceMemory`): an identifier this
   * session never saw is tainted while the memory knows it, and this session's untrusted identifiers go into
   * it. Without it (or with `provenance.remember_hours: 0`), provenance lives in this session only.
   */
  readonly memory?: ProvenanceMemory;
}

/** One session. Every method that changes state checks its transition and records an event. */
export interface Session {
  readonly id: string;
  readonly tenant: string;
  readonly state: SessionState;
  /** The intent in force (deep-frozen), or null. */
  readonly intent: Intent | null;
  readonly intentHash: string | null;
  /** The approved plan in force (deep-frozen), or null. */
  readonly plan: Plan | null;
  readonly planHash: string | null;
  /** A submitted plan awaiting approval, or null. */
  readonly proposedPlan: Plan | null;
  /**
   * The recent event log (a copy): at least the last `MAX_KEPT_EVENTS` (10,000) events, in order; `seq`
   * counts every event. `onEvent` sees each one as it happens (give it the audit for the whole record).
   */
  readonly events: readonly SessionEvent[];
  /** Calls recorded as executed (a copy). */
  readonly history: readonly ExecutedCall[];
  /** Every labelled text that entered the session (a copy). */
  readonly provenance: readonly ProvenanceEntry[];
  setIntent(intent: unknown): Intent;
  /** Puts a question to the escalation handler; the answer is the only thing intent, plan and resume accept. */
  requestConfirmation(proposal: ConfirmationProposal): Promise<Confirmation | null>;
  updateIntent(intent: unknown, confirmation: Confirmation): Intent;
  /** Asks the handler about an intent update and applies it when approved (throws `confirmation_denied`). */
  confirmIntentUpdate(intent: unknown): Promise<Intent>;
  submitPlan(plan: unknown): Plan;
  approvePlan(confirmation: Confirmation): Plan;
  /** Asks the handler to approve the submitted plan and applies the approval. */
  confirmPlan(): Promise<Plan>;
  rejectPlan(why?: string): void;
  start(): void;
  suspend(why?: string): void;
  resume(confirmation: Confirmation): void;
  /** Asks the handler to resume a suspended session and resumes it when approved. */
  confirmResume(): Promise<void>;
  complete(why?: string): void;
  terminate(why?: string): void;
  /** The session's full judgment of a request (pure; changes nothing). Throws `invalid_record` on a malformed request. */
  judge(request: unknown): SessionJudgment;
  /** The judgment as a pipeline verdict (source `session`); a malformed request is a refusal. */
  evaluate(request: unknown): SourceVerdict;
  issueToken(request: unknown, options?: IssueTokenOptions): AuthorityToken;
  /**
   * The enforcement gate: lets the call run only with a valid token, and counts it then (budgets, transition
   * rules, kill switch), so calls authorized side by side are each judged with the others counted.
   */
  authorize(token: unknown, request: unknown): AuthorizeResult;
  /**
   * Records a call as executed and, when given, its result, and returns the call. For a call `authorize` let
   * through (counted then), it records the result only. A front end that tells the session a call ran before it
   * runs (so calls in flight together are counted together) records the result apart with `recordToolResult`'s
   * `call` option set to the returned call's `seq`.
   */
  recordExecution(request: unknown, result?: unknown): ExecutedCall;
  recordToolResult(
    server: string,
    tool: string,
    content: unknown,
    options?: records.ToolResultOptions,
  ): ProvenanceEntry;
  recordUserInput(text: string): ProvenanceEntry;
  recordSystemValue(source: string, text: string): ProvenanceEntry;
  /**
   * A tool's result reached the agent but could not be recorded (`why`): the session's provenance is marked
   * incomplete (`provenance_incomplete`), so from then on every consequential call also asks. Fail safe:
   * content nobody could trace must not let a value it carried pass as the agent's own.
   */
  recordUnreadableResult(server: string, tool: string, why: string): void;
}

function checkOptions(options: SessionOptions): void {
  const bad = (message: string): never => {
    throw new SessionError("invalid_session_config", message);
  };
  if (typeof options !== "object" || options === null) bad("session options must be an object");
  if (typeof options.now !== "function") bad("session options need a clock (`now`)");
  if (typeof options.random !== "function") bad("session options need a random source (`random`)");
  if (!(options.authorityKey instanceof Uint8Array) || options.authorityKey.length < MIN_AUTHORITY_KEY_BYTES) {
    bad(`the authority key must be at least ${MIN_AUTHORITY_KEY_BYTES} bytes`);
  }
  for (const [key, value] of [
    ["tenant", options.tenant],
    ["id", options.id],
  ] as const) {
    if (value !== undefined && (typeof value !== "string" || !/^[A-Za-z0-9._:-]{1,128}$/.test(value))) {
      bad(`\`${key}\` must be 1 to 128 characters of letters, digits, \`.\`, \`_\`, \`:\` or \`-\``);
    }
  }
}

function buildCore(options: SessionOptions): SessionCore {
  checkOptions(options);
  const parsed = parseSessionSettings(options.settings);
  if (!parsed.ok) throw new SessionError("invalid_session_config", "invalid session settings", parsed.issues);
  const trusted = compileActionPatterns(parsed.value.trusted_servers, ["trusted_servers"]);
  if (!trusted.ok) throw new SessionError("invalid_session_config", "invalid session settings", trusted.issues);
  const settings = {
    settings: parsed.value,
    transitions: compileTransitionRules(parsed.value.transitions),
    trustedServers: trusted.value,
  };
  const tenant = options.tenant ?? "default";
  const random = options.random;
  const id = options.id ?? Buffer.from(random(16)).toString("hex");
  const desk = new ConfirmationDesk(options.escalation ?? DECLINING_ESCALATION_HANDLER, { tenant, session: id });
  const key = Uint8Array.from(options.authorityKey);
  return new SessionCore(
    {
      tenant,
      id,
      now: options.now,
      random,
      authorityKey: key,
      onEvent: options.onEvent,
      storeBudget: options.storeBudget,
      memory: options.memory,
    },
    settings,
    desk,
  );
}

function draftFor(core: SessionCore, proposal: ConfirmationProposal): QuestionDraft {
  switch (proposal.kind) {
    case "intent_update":
      return life.intentUpdateDraft(core, life.compileIntentUpdate(core, proposal.intent));
    case "plan_approval":
      core.target("approve_plan");
      return life.planApprovalDraft(core);
    case "resume":
      core.target("resume");
      return life.resumeDraft(core);
    case "action": {
      const request = readRequest(core, proposal.request);
      return actionDraft(core, request, judgeRequest(core.view(), request));
    }
    default:
      return core.fail("invalid_record", "unknown confirmation proposal");
  }
}

async function requestConfirmation(core: SessionCore, proposal: ConfirmationProposal): Promise<Confirmation | null> {
  const draft = draftFor(core, proposal);
  const question = core.desk.question(draft, core.randomId(), core.now().toISOString());
  core.emit("confirmation_asked", `asked (${question.kind} ${question.id}): ${question.text}`);
  const { answer, problem } = await core.desk.ask(question);
  if (problem !== undefined) core.emit("confirmation_refused", problem, "confirmation_invalid");
  else
    core.emit(
      "confirmation_answered",
      answer === null ? "no answer (declined)" : `${answer.approved ? "approved" : "declined"} by \`${answer.by}\``,
    );
  return answer;
}

async function confirmed(core: SessionCore, proposal: ConfirmationProposal, what: string): Promise<Confirmation> {
  const answer = await requestConfirmation(core, proposal);
  if (answer === null) return core.fail("confirmation_denied", `${what}: nobody approved`, [], "confirmation_refused");
  return answer;
}

function verdictOf(core: SessionCore, value: unknown): SourceVerdict {
  let judgment: SessionJudgment;
  try {
    const request = readRequest(core, value);
    judgment = judgeRequest(core.view(), request);
    // recording the call as executed reuses it while nothing in the session changed in between
    core.remember(request, judgment);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { source: "session", route: "refuse", reasons: [{ source: "session", code: "invalid_record", message }] };
  }
  const rule = judgment.reasons.find((r) => r.rule !== undefined)?.rule;
  const base = { source: "session" as const, route: judgment.route, reasons: judgment.reasons };
  return rule === undefined ? base : { ...base, rule };
}

/** Creates a session in state `created`. Throws `invalid_session_config` on bad options or settings. */
export function createSession(options: SessionOptions): Session {
  const core = buildCore(options);
  core.emit("session_created", `session created for tenant \`${core.deps.tenant}\``);
  return {
    id: core.deps.id,
    tenant: core.deps.tenant,
    get state() {
      return core.state;
    },
    get intent() {
      return core.intent?.intent ?? null;
    },
    get intentHash() {
      return core.intent?.hash ?? null;
    },
    get plan() {
      return core.plan?.plan ?? null;
    },
    get planHash() {
      return core.plan?.hash ?? null;
    },
    get proposedPlan() {
      return core.proposedPlan?.plan ?? null;
    },
    get events() {
      return [...core.events];
    },
    get history() {
      return [...core.history];
    },
    get provenance() {
      return [...core.entries];
    },
    setIntent: (intent) => life.setIntent(core, intent),
    requestConfirmation: (proposal) => requestConfirmation(core, proposal),
    updateIntent: (intent, confirmation) => life.updateIntent(core, intent, confirmation),
    confirmIntentUpdate: async (intent) =>
      life.updateIntent(core, intent, await confirmed(core, { kind: "intent_update", intent }, "intent update")),
    submitPlan: (plan) => life.submitPlan(core, plan),
    approvePlan: (confirmation) => life.approvePlan(core, confirmation),
    confirmPlan: async () => life.approvePlan(core, await confirmed(core, { kind: "plan_approval" }, "plan approval")),
    rejectPlan: (why = "rejected") => life.rejectPlan(core, why),
    start: () => life.start(core),
    suspend: (why = "suspended by a person") => life.suspend(core, why),
    resume: (confirmation) => life.resume(core, confirmation),
    confirmResume: async () => life.resume(core, await confirmed(core, { kind: "resume" }, "resume")),
    complete: (why = "completed") => life.finish(core, "complete", why),
    terminate: (why = "terminated") => life.finish(core, "terminate", why),
    judge: (request) => judgeRequest(core.view(), readRequest(core, request)),
    evaluate: (request) => verdictOf(core, request),
    issueToken: (request, opts = {}) => issueToken(core, request, opts),
    authorize: (token, request) =>
      authorize(core, token, request, (call, judgment) => executions.recordAuthorized(core, call, judgment)),
    recordExecution: (...args: [unknown, unknown?]) =>
      executions.recordExecution(core, args[0], args[1], args.length > 1),
    recordToolResult: (server, tool, content, opts = {}) => records.recordToolResult(core, server, tool, content, opts),
    recordUserInput: (text) => records.recordUserInput(core, text),
    recordSystemValue: (source, text) => records.recordSystemValue(core, source, text),
    recordUnreadableResult: (server, tool, why) => records.recordUnreadableResult(core, server, tool, why),
  };
}
