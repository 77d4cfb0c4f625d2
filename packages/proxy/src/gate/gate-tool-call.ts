import {
  sameCanonicalJson,
  type ActionRequest,
  type Category,
  type Decision,
  type Reason,
  type ToolAnnotations,
} from "@acp/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { consentActionFieldsOf } from "../consent/record.js";
import type { ToolChange } from "../pinning/compare-pins.js";
import type { ToolPinning } from "../pinning/tool-pinning.js";
import type { ApprovalMemory } from "./approval-memory.js";
import {
  answeredBy,
  judgeEdit,
  judgeOnce,
  type AnsweredQuestions,
  type EditJudgement,
  type JudgeEdited,
} from "./edit-judgement.js";
import { editRefusalText, refusalText, toolError } from "./tool-error.js";
import { admitExecution } from "./admit-execution.js";
import type { AuditSink, ConsentBroker, ConsentOutcome, Decide, DecideContext, ExecutionAdmission } from "./types.js";

/** What the gate needs, built once per proxy. */
export interface GateDeps {
  readonly decide: Decide;
  readonly broker: ConsentBroker;
  readonly audit: AuditSink;
  readonly approvals: ApprovalMemory;
  readonly pinning?: ToolPinning;
  readonly now: () => Date;
  /** Consent wait when the decision names no timeout. */
  readonly consentTimeoutMs: number;
  /**
   * Judges the arguments a person edited before they are forwarded: the standing rules (policy, graph,
   * contract) without spending rate limits. A `refuse` refuses the edited call: a deny rule holds whatever
   * the edit; an `ask`/`defer` under a rule the person was not asked about puts the edited call to a person
   * as a new question (`judgeEdit`). Absent: `decide` judges them (with the session).
   */
  readonly recheckEdits?: Decide;
  /** Told of every gated call while it runs (the proxy waits for them before its audit log closes). */
  readonly track?: <T>(running: Promise<T>) => Promise<T>;
  /**
   * The session runtime, told of a call let through before it runs, so calls in flight together are counted
   * together; it may still refuse it (`admitExecution`). Absent: nothing is counted here.
   */
  readonly admit?: ExecutionAdmission;
}

/** The §7.4 fields of the events after a call was let through. */
export interface ForwardedAs {
  readonly category: string;
  readonly risk_level: string;
  readonly policy_rule: string | null;
  readonly request_id?: string;
}

/** One intercepted `tools/call`. */
export interface GatedCall {
  readonly callId: string;
  readonly server: string;
  /** The upstream tool name (not the prefixed one the agent saw). */
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly annotations?: ToolAnnotations;
  /** The category the caller states (explicit wins over policy, annotations and the built-in table). */
  readonly category?: Category;
  readonly sessionId: string;
  readonly agent?: string;
  /** The agent the session's own token names (`proxy.agent_tokens`), if it has one: never the client's own name. */
  readonly tokenAgent?: string;
  readonly signal: AbortSignal;
  /** Tells the waiting client something (a progress notification, when it asked for progress). */
  readonly onProgress?: (message: string) => void;
}

/**
 * The gate's verdict: forward these arguments, or answer with this tool error. `request` is the action
 * request as decided, with the arguments forwarded: what the session runtime records as executed. `decided`
 * is what the later events of the call carry (§7.4): the decision's category, risk level and rule, and the
 * consent request a person approved it under.
 */
export type GateVerdict =
  | {
      readonly kind: "forward";
      readonly arguments: Record<string, unknown>;
      readonly request: ActionRequest;
      readonly decided: ForwardedAs;
      /** The call's `seq` in the session runtime (`GateDeps.admit`), which its result names. */
      readonly call?: number;
    }
  | {
      readonly kind: "answer";
      readonly result: CallToolResult;
      /** Why the call stops here (the result's text says it to the agent). */
      readonly stop: GateStop;
      /** The decision the call was stopped under. */
      readonly decision: Decision;
    };

/**
 * Why the gate stopped a call: the pipeline refused it; a person said no (a signed `denied`); consent was
 * not given without anyone saying no (no channel, an answer that failed verification); nobody answered in
 * time; the call was cancelled; or the arguments a person edited are refused.
 */
export type GateStop = "refused" | "denied" | "not_given" | "expired" | "withdrawn" | "edit_refused";

/** What the decision is told about the call beyond its request. */
function contextOf(call: GatedCall): DecideContext {
  return call.tokenAgent !== undefined
    ? { sessionId: call.sessionId, tokenAgent: call.tokenAgent }
    : { sessionId: call.sessionId };
}

/**
 * Decides one call and, for ask/defer, waits for a person. Never throws: a failing `Decide` or broker
 * refuses, and every step is audited.
 */
export function gateToolCall(deps: GateDeps, call: GatedCall): Promise<GateVerdict> {
  const running = deps.admit === undefined ? gate(deps, call) : gate(deps, call).then((v) => admitted(deps, call, v));
  return deps.track !== undefined ? deps.track(running) : running;
}

/** A call let through, once the session runtime counted it (`GateDeps.admit`), or refused when it will not run. */
async function admitted(deps: GateDeps, call: GatedCall, verdict: GateVerdict): Promise<GateVerdict> {
  if (verdict.kind === "answer") return verdict;
  const fields = { ...baseOf(call), ...verdict.decided };
  const admission = await admitExecution(deps.admit, deps.audit, call.sessionId, verdict.request, fields);
  if (admission.kind === "refused") {
    return { kind: "answer", result: admission.result, stop: "refused", decision: admission.decision };
  }
  return admission.call === undefined ? verdict : { ...verdict, call: admission.call };
}

/** The fields every event of the call carries: every one names its agent (§7.4 `agent`), not only the first. */
function baseOf(call: GatedCall): Record<string, unknown> {
  return {
    call_id: call.callId,
    session_id: call.sessionId,
    server: call.server,
    tool: call.tool,
    ...(call.agent !== undefined ? { agent: call.agent } : {}),
  };
}

async function gate(deps: GateDeps, call: GatedCall): Promise<GateVerdict> {
  const base = baseOf(call);
  await record(deps.audit, "tool_call_intercepted", { ...base, arguments: call.arguments });
  const request = toActionRequest(call);
  const decision = holdChangedTool(deps, call, await decideSafely(deps.decide, request, contextOf(call)));
  await record(deps.audit, "policy_evaluated", {
    ...base,
    decision: decision.route,
    policy_rule: decision.rule,
    category: decision.category,
    risk_level: decision.risk_level,
    reasons: decision.reasons,
    ...policyVersionOf(decision),
  });
  const forwardedAs: ForwardedAs = {
    category: decision.category,
    risk_level: decision.risk_level,
    policy_rule: decision.rule,
  };
  if (decision.route === "accept") return { kind: "forward", arguments: call.arguments, request, decided: forwardedAs };
  if (decision.route === "refuse") {
    return { kind: "answer", result: toolError(refusalText(decision), decision), stop: "refused", decision };
  }
  const decided = { ...base, ...forwardedAs };
  const reused = await forwardRemembered(deps, call, request, decided, forwardedAs);
  if (reused !== undefined) return reused;
  return askPerson(deps, call, request, decision, decided, { answered: answeredBy(decision), asked: 1 });
}

/**
 * A remembered approval of this session (`session` or a time window) for exactly this call — same server,
 * tool and arguments, not a tool held for a changed definition — forwards it, recorded as reused; undefined
 * when there is none. The one match of a fresh call and of an edit asked again.
 */
async function forwardRemembered(
  deps: GateDeps,
  call: GatedCall,
  request: ActionRequest,
  decided: Record<string, unknown>,
  forwardedAs: ForwardedAs,
): Promise<GateVerdict | undefined> {
  const remembered = isHeldForChange(deps, call)
    ? undefined
    : deps.approvals.find(call.sessionId, call.server, call.tool, call.arguments, deps.now());
  if (remembered === undefined) return undefined;
  await record(deps.audit, "consent_approved", {
    ...decided,
    decision: "approved",
    scope: remembered.scope,
    reused: true,
    metadata: {
      consent_response: remembered.consentResponse,
      ...consentActionFieldsOf(call.server, call.tool, call.arguments),
    },
  });
  const decidedAs = { ...forwardedAs, ...requestIdOf(remembered.consentResponse) };
  return { kind: "forward", arguments: call.arguments, request, decided: decidedAs };
}

/** A response's `modifications` (`null` when it has none, or is not a response). */
function modificationsOf(response: unknown): unknown {
  const value = (response as { modifications?: unknown } | null)?.modifications;
  return value === undefined ? null : value;
}

/** The questions this call has put to a person so far, and what their answers covered. */
interface Asking {
  readonly answered: AnsweredQuestions;
  readonly asked: number;
}

async function askPerson(
  deps: GateDeps,
  call: GatedCall,
  request: ActionRequest,
  decision: Decision,
  base: Record<string, unknown>,
  asking: Asking,
): Promise<GateVerdict> {
  const timeoutMs =
    decision.timeout !== undefined && decision.timeout > 0 ? decision.timeout * 1000 : deps.consentTimeoutMs;
  const requested = { ...base, decision: decision.route, timeout_ms: timeoutMs, reasons: decision.reasons };
  // recorded when the broker has made the request (with its cr_ id, as `acp pending` shows it), or, for a
  // broker that never made one (no channel available), before its outcome
  let recorded = false;
  let requestId: string | undefined;
  const recordRequested = async (request?: { readonly id: string; readonly expiresAt: string }): Promise<void> => {
    if (recorded) return;
    recorded = true;
    requestId = request?.id;
    await record(deps.audit, "consent_requested", {
      ...requested,
      ...(request !== undefined ? { request_id: request.id, expires_at: request.expiresAt } : {}),
    });
  };
  // §7.4 `response_time_ms` of the answer (or of its absence): from asking to the outcome, on the injected clock
  const askedAt = deps.now().getTime();
  // the broker judges an edit before it tells the channels how the request ended; the outcome takes the same
  const judgeEdited = judgeOnce((edited) => judgeEditedArguments(deps, call, request, edited, asking));
  let outcome: ConsentOutcome;
  try {
    outcome = await deps.broker.ask({
      onRequested: recordRequested,
      judgeEdited,
      server: call.server,
      tool: call.tool,
      arguments: call.arguments,
      decision,
      sessionId: call.sessionId,
      ...(call.agent !== undefined ? { agent: call.agent } : {}),
      timeoutMs,
      signal: call.signal,
      ...(call.onProgress !== undefined ? { onProgress: call.onProgress } : {}),
    });
  } catch (err) {
    const reason = `the consent channel failed: ${err instanceof Error ? err.message : String(err)}`;
    outcome = call.signal.aborted ? { kind: "withdrawn" } : { kind: "denied", reason };
  }
  const responseTimeMs = Math.max(0, deps.now().getTime() - askedAt);
  // an approval the broker reused asked nobody: no request was made, so none is recorded (its
  // `consent_approved` says `reused`)
  if (!(outcome.kind === "approved" && outcome.reused === true)) await recordRequested();
  // every event of this request names it (an answer's own signed response names it too)
  const named = {
    ...base,
    ...(requestId !== undefined ? { request_id: requestId } : {}),
    response_time_ms: responseTimeMs,
  };
  return settleOutcome(deps, call, request, decision, outcome, named, timeoutMs, asking, judgeEdited);
}

async function settleOutcome(
  deps: GateDeps,
  call: GatedCall,
  request: ActionRequest,
  decision: Decision,
  outcome: ConsentOutcome,
  base: Record<string, unknown>,
  timeoutMs: number,
  asking: Asking,
  judgeEdited: JudgeEdited,
): Promise<GateVerdict> {
  switch (outcome.kind) {
    case "approved": {
      const modified = !sameCanonicalJson(outcome.arguments, call.arguments);
      await record(deps.audit, "consent_approved", {
        ...base,
        ...requestIdOf(outcome.consentResponse),
        decision: "approved",
        scope: outcome.scope,
        ...(outcome.reused === true ? { reused: true } : {}),
        modified,
        ...(modified ? { forwarded_arguments: outcome.arguments } : {}),
        metadata: {
          consent_response: outcome.consentResponse,
          ...consentActionFieldsOf(call.server, call.tool, outcome.arguments),
        },
      });
      if (isHeldForChange(deps, call)) await deps.pinning?.accept(call.server, call.tool);
      if (modified) {
        const edited = { ...request, arguments: outcome.arguments };
        const judged = await recordEditJudgement(deps, await judgeEdited(outcome.arguments), base);
        if (judged.kind === "answer") return judged;
        if (judged.kind === "ask") {
          // a new question: the edited arguments, under the rule (and with the reasons) they fall under
          const again = judged.decision;
          const editedAs: ForwardedAs = {
            category: again.category,
            risk_level: again.risk_level,
            policy_rule: again.rule,
          };
          const decided = { ...baseOf(call), ...editedAs };
          const editedCall = { ...call, arguments: outcome.arguments };
          // answered as a fresh call with the edited arguments would be: by this session's remembered approval
          const reused = await forwardRemembered(deps, editedCall, edited, decided, editedAs);
          if (reused !== undefined) return reused;
          const next = { answered: judged.answered, asked: asking.asked + 1 };
          return askPerson(deps, editedCall, edited, again, decided, next);
        }
      }
      if (outcome.scope !== "once") {
        const approval = { scope: outcome.scope, consentResponse: outcome.consentResponse };
        deps.approvals.remember(call.sessionId, call.server, call.tool, outcome.arguments, approval);
      }
      const forwarded = outcome.arguments === call.arguments ? request : { ...request, arguments: outcome.arguments };
      const decided: ForwardedAs = {
        category: decision.category,
        risk_level: decision.risk_level,
        policy_rule: decision.rule,
        ...(typeof base["request_id"] === "string" ? { request_id: base["request_id"] } : {}),
        ...requestIdOf(outcome.consentResponse),
      };
      return { kind: "forward", arguments: outcome.arguments, request: forwarded, decided };
    }
    case "denied": {
      await record(deps.audit, "consent_denied", {
        ...base,
        ...requestIdOf(outcome.consentResponse),
        decision: "denied",
        reason: outcome.reason,
        ...(outcome.consentResponse !== undefined
          ? {
              metadata: {
                consent_response: outcome.consentResponse,
                // a denial signs the call's own arguments (it carries no modifications)
                ...(modificationsOf(outcome.consentResponse) === null
                  ? consentActionFieldsOf(call.server, call.tool, call.arguments)
                  : {}),
              },
            }
          : {}),
      });
      // only a signed response that says `denied` is a person's no; the others (no channel, a response that
      // failed verification, a malformed answer, an approval the audit could not record) must not read as if
      // someone had said no
      const denied = saysDenied(outcome.consentResponse);
      return {
        kind: "answer",
        result: toolError(
          denied ? `denied by a person: ${outcome.reason}` : `consent not given: ${outcome.reason}`,
          decision,
        ),
        stop: denied ? "denied" : "not_given",
        decision,
      };
    }
    case "expired":
      await record(deps.audit, "consent_expired", { ...base, decision: "expired", timeout_ms: timeoutMs });
      return {
        kind: "answer",
        result: toolError(
          `consent request expired after ${Math.round(timeoutMs / 1000)} s without an answer: denied`,
          decision,
        ),
        stop: "expired",
        decision,
      };
    case "withdrawn":
      await record(deps.audit, "consent_withdrawn", { ...base, decision: "withdrawn" });
      return {
        kind: "answer",
        result: toolError("consent request withdrawn: the call was cancelled", decision),
        stop: "withdrawn",
        decision,
      };
  }
}

/**
 * Arguments a person edited are judged again before they go anywhere (`judgeEdit`): what the agent could
 * not have sent (a path under a deny rule, a recipient the policy refuses) is not sent because an approver
 * typed it, and what another `ask` rule holds back (a recipient it asks about, an amount past its
 * threshold) is not sent without its question: the edited call is asked again, with that rule's reasons.
 * An edit that stays under the rules the person answered stands (no endless re-asking). Unchanged
 * arguments stand.
 */
async function judgeEditedArguments(
  deps: GateDeps,
  call: GatedCall,
  request: ActionRequest,
  edited: Record<string, unknown>,
  asking: Asking,
): Promise<EditJudgement> {
  if (sameCanonicalJson(edited, request.arguments)) return { kind: "stands" };
  const editedRequest = { ...request, arguments: edited };
  const rechecked =
    deps.recheckEdits !== undefined
      ? await decideSafely(deps.recheckEdits, editedRequest)
      : await decideSafely(deps.decide, editedRequest, contextOf(call));
  return judgeEdit(rechecked, asking.answered, asking.asked);
}

/**
 * What the judgement of an edit means for the call: it stands, is asked again, or is refused (a tool error
 * the agent reads). A refusal or a new question is audited as a `policy_evaluated` of the edited arguments.
 */
async function recordEditJudgement(
  deps: GateDeps,
  judged: EditJudgement,
  base: Record<string, unknown>,
): Promise<
  | { readonly kind: "stands" }
  | { readonly kind: "ask"; readonly decision: Decision; readonly answered: AnsweredQuestions }
  | (GateVerdict & { readonly kind: "answer" })
> {
  if (judged.kind === "stands") return judged;
  const decision = judged.decision;
  // (the consent's response time belongs to the consent events, not to this decision)
  const { response_time_ms: _answerTime, ...named } = base;
  void _answerTime;
  await record(deps.audit, "policy_evaluated", {
    ...named,
    edited_arguments: true,
    decision: decision.route,
    policy_rule: decision.rule,
    category: decision.category,
    risk_level: decision.risk_level,
    reasons: decision.reasons,
    ...policyVersionOf(decision),
  });
  if (judged.kind === "asked") return { kind: "ask", decision, answered: judged.answered };
  return {
    kind: "answer",
    result: toolError(editRefusalText(decision), decision),
    stop: "edit_refused",
    decision,
  };
}

/** The action request the pipeline sees: the upstream tool name and server, never the prefixed name. */
export function toActionRequest(call: GatedCall): ActionRequest {
  return {
    tool: call.tool,
    server: call.server,
    ...(call.agent !== undefined ? { agent: call.agent } : {}),
    arguments: call.arguments,
    ...(call.annotations !== undefined ? { annotations: call.annotations } : {}),
    ...(call.category !== undefined ? { category: call.category } : {}),
  };
}

/** Calls `Decide`; a throw or a malformed answer becomes `refuse` (fail closed). */
export async function decideSafely(decide: Decide, request: ActionRequest, context?: DecideContext): Promise<Decision> {
  try {
    const decision = await (context === undefined ? decide(request) : decide(request, context));
    if (isDecisionLike(decision)) return decision;
    return failedDecision(request, "the decision function returned something that is not a decision");
  } catch (err) {
    return failedDecision(request, `the decision function failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function isDecisionLike(value: unknown): value is Decision {
  if (typeof value !== "object" || value === null) return false;
  const d = value as Partial<Decision>;
  return ["accept", "ask", "defer", "refuse"].includes(d.route as string) && Array.isArray(d.reasons);
}

function failedDecision(request: ActionRequest, message: string): Decision {
  return {
    route: "refuse",
    action: "deny",
    rule: null,
    category: request.category ?? "system",
    risk_level: request.risk_level ?? "high",
    reasons: [{ source: "pipeline", code: "decide_failed", message }],
    verdicts: [],
  };
}

function isHeldForChange(deps: GateDeps, call: GatedCall): boolean {
  return deps.pinning?.changeOf(call.server, call.tool) !== undefined;
}

/** A tool whose definition changed since it was pinned is held behind at least `ask`. */
/** The policy version a decision used, when its `Decide` names one (a reloading front end): audited with it. */
function policyVersionOf(decision: Decision): { policy_hash?: string } {
  return decision.policy_hash !== undefined ? { policy_hash: decision.policy_hash } : {};
}

function holdChangedTool(deps: GateDeps, call: GatedCall, decision: Decision): Decision {
  const change = deps.pinning?.changeOf(call.server, call.tool);
  // pins that could not be read or written: a changed definition cannot be told from the pinned one
  const unchecked = change === undefined ? deps.pinning?.uncheckedBecause(call.server) : undefined;
  if (change === undefined && unchecked === undefined) return decision;
  const reason: Reason =
    change !== undefined
      ? {
          source: "pipeline",
          code: "tool_definition_changed",
          message: `the definition of tool \`${call.tool}\` on \`${call.server}\` changed since it was first seen (${change.fields.join(", ")}); a person must accept it${describeChange(change)}`,
        }
      : {
          source: "pipeline",
          code: "tool_pins_unchecked",
          message: `the tool pins of \`${call.server}\` could not be checked (${unchecked ?? ""}), so a changed definition of \`${call.tool}\` could not be seen; a person must allow the call`,
        };
  if (decision.route === "accept")
    return { ...decision, route: "ask", action: "ask", reasons: [reason, ...decision.reasons] };
  return { ...decision, reasons: [...decision.reasons, reason] };
}

/** How much of each changed field the person asked is shown (the whole new definition is in the audit). */
const SHOWN_CHARS = 1_000;

/** The definition's key of a changed field's name (`input_schema` → `inputSchema`). */
const DEFINITION_KEY: Readonly<Record<string, string>> = { input_schema: "inputSchema", output_schema: "outputSchema" };

/**
 * What changed, for the person deciding, field by field: the new value and the pinned one (the agent is
 * served the pinned definition until a person accepts), each as JSON cut at {@link SHOWN_CHARS}
 * characters. A pin that kept no values (written before every field was pinned, or a definition over
 * 64 KiB) shows the description it kept and the input schema's hashes.
 */
function describeChange(change: ToolChange): string {
  const before = change.before.definition;
  const after = change.after.definition;
  const parts = change.fields.map((field) => {
    if (field === "name") return `name now ${shown(change.after.name)} (was ${shown(change.before.name)})`;
    if (field === "description") {
      return `description now ${shown(change.after.description)} (was ${shown(change.before.description)})`;
    }
    if (before !== undefined && after !== undefined) {
      const key = DEFINITION_KEY[field] ?? field;
      return `${field} now ${shown(after[key])} (was ${shown(before[key])})`;
    }
    if (field === "input_schema") {
      return `input schema now ${change.after.input_schema_hash} (was ${change.before.input_schema_hash})`;
    }
    return `${field} changed (the pin kept no values to compare: see the audit)`;
  });
  return parts.length > 0 ? `: ${parts.join("; ")}` : "";
}

/** A value as the person is shown it: JSON (a string quoted), cut at {@link SHOWN_CHARS}; `none` when absent. */
function shown(value: unknown): string {
  if (value === undefined || value === null) return "none";
  let text: string;
  try {
    text = JSON.stringify(value) ?? "none";
  } catch {
    text = "(not JSON)";
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

/** The §7.4 `request_id` (`cr_…`) of a signed consent response, when there is one. */
function requestIdOf(response: unknown): { request_id?: string } {
  const id = (response as { request_id?: unknown } | undefined)?.request_id;
  return typeof id === "string" ? { request_id: id } : {};
}

async function record(audit: AuditSink, eventType: string, fields: Record<string, unknown>): Promise<void> {
  await audit.record(eventType, fields);
}

/** Whether a consent response is a signed `denied` (a person said no). */
function saysDenied(response: unknown): boolean {
  return (
    typeof response === "object" && response !== null && (response as { decision?: unknown }).decision === "denied"
  );
}
