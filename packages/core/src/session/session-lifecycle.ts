/**
 * The session's lifecycle operations: set and update the intent, submit, approve and reject plans, start,
 * suspend, resume, complete and terminate. Each checks its transition first, validates, then applies.
 */
import type { JsonValue } from "../canonical-json/index.js";
import type { Confirmation } from "./escalation.js";
import { quoteValue } from "./errors.js";
import type { QuestionDraft } from "./confirmations.js";
import { compileIntent, type CompiledIntent, type Intent } from "./intent.js";
import { compilePlan, type Plan } from "./plan.js";
import { replaceIntentEntries } from "./session-records.js";
import { chargeStoreBudget } from "./store-budget.js";
import type { SessionCore } from "./session-core.js";

/** The intent's goal and trusted values as the session's `user_input` entries, charged to its store. */
function intentEntries(core: SessionCore, compiled: CompiledIntent): void {
  const v = compiled.intent.version;
  const values: [string, string][] = [[`intent@v${v}.goal`, compiled.intent.goal]];
  for (const [name, list] of Object.entries(compiled.intent.trusted_values))
    for (const value of list) values.push([`intent@v${v}.trusted_values.${name}`, value]);
  replaceIntentEntries(core, values);
}

/** Sets the first intent (from the integrator's code, which speaks for the user). */
export function setIntent(core: SessionCore, value: unknown): Intent {
  const to = core.target("set_intent");
  const compiled = compileIntent(value);
  if (!compiled.ok) core.fail("invalid_intent", "invalid intent", compiled.issues);
  core.intent = compiled.value;
  intentEntries(core, compiled.value);
  core.emit("intent_set", `intent version ${compiled.value.intent.version} set: ${compiled.value.hash}`);
  core.moveTo(to, "intent set");
  return compiled.value.intent;
}

/** Compiles a proposed intent update: the next version (stamped when absent, checked when given). */
export function compileIntentUpdate(core: SessionCore, value: unknown): CompiledIntent {
  core.target("update_intent");
  const current = core.intent;
  if (current === null)
    return core.fail("illegal_transition", "cannot update intent: no intent is set", [], "illegal_transition");
  const next = current.intent.version + 1;
  const record =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  if (record?.["version"] !== undefined && record["version"] !== next) {
    core.fail(
      "intent_version_conflict",
      `intent update carries version ${quoteValue(record["version"])}, expected ${next}`,
    );
  }
  const compiled = compileIntent(record === undefined ? value : { ...record, version: next });
  if (!compiled.ok) return core.fail("invalid_intent", "invalid intent update", compiled.issues);
  return compiled.value;
}

/** The question for an intent update. */
export function intentUpdateDraft(core: SessionCore, next: CompiledIntent): QuestionDraft {
  const i = next.intent;
  const from = core.intent?.intent.version ?? 0;
  const forbid =
    i.forbidden_actions.length > 0 ? `; forbid ${i.forbidden_actions.map((a) => `\`${a}\``).join(", ")}` : "";
  return {
    kind: "intent_update",
    text: `change the task to \`${i.goal.slice(0, 120)}\` (version ${i.version}): allow ${i.allowed_actions.map((a) => `\`${a}\``).join(", ") || "nothing"}${forbid}`,
    subject: { kind: "intent_update", tenant: core.deps.tenant, session: core.deps.id, from, intent_hash: next.hash },
    details: { from_version: from, intent: i as unknown as JsonValue },
  };
}

/** Applies a confirmed intent update: new version, old plan invalid, every token revoked, back to `intent_set`. */
export function updateIntent(core: SessionCore, value: unknown, confirmation: Confirmation): Intent {
  const next = compileIntentUpdate(core, value);
  const to = core.target("update_intent");
  const spent = core.desk.spend(confirmation, "intent_update", intentUpdateDraft(core, next).subject);
  if (!spent.ok) core.fail(spent.code, `cannot update intent: ${spent.message}`, [], "confirmation_refused");
  core.intent = next;
  intentEntries(core, next);
  core.plan = null;
  core.proposedPlan = null;
  core.emit("intent_updated", `intent version ${next.intent.version}: ${next.hash}`);
  core.emit("plan_invalidated", "the plan was made for an earlier intent version");
  core.revokeTokens("the intent was updated");
  core.moveTo(to, "intent updated");
  return next.intent;
}

/** Submits a plan (first plan, a resubmission, or a change during execution that needs a new approval). */
export function submitPlan(core: SessionCore, value: unknown): Plan {
  const to = core.target("submit_plan");
  if (core.intent === null)
    return core.fail("illegal_transition", "cannot submit a plan: no intent is set", [], "illegal_transition");
  const compiled = compilePlan(value, core.intent);
  if (!compiled.ok) core.fail("invalid_plan", "invalid plan", compiled.issues);
  const changing = core.plan !== null;
  core.proposedPlan = compiled.value;
  if (changing) {
    core.plan = null;
    core.emit("plan_invalidated", "a changed plan awaits approval");
    core.revokeTokens("the plan changed");
  }
  core.emit("plan_submitted", `plan of ${compiled.value.plan.steps.length} steps: ${compiled.value.hash}`);
  core.moveTo(to, changing ? "plan change submitted" : "plan submitted");
  return compiled.value.plan;
}

/** The question for approving the submitted plan. */
export function planApprovalDraft(core: SessionCore): QuestionDraft {
  const plan = core.proposedPlan;
  if (plan === null || core.intent === null)
    return core.fail("illegal_transition", "cannot approve a plan: none is submitted", [], "illegal_transition");
  const steps = plan.plan.steps.map((s, i) => `${i + 1}. \`${s.action}\``).join(", ");
  return {
    kind: "plan_approval",
    text: `approve the plan for \`${core.intent.intent.goal.slice(0, 120)}\`: ${steps}`,
    subject: {
      kind: "plan_approval",
      tenant: core.deps.tenant,
      session: core.deps.id,
      intent_version: core.intent.intent.version,
      plan_hash: plan.hash,
    },
    details: { plan: plan.plan as unknown as JsonValue, plan_hash: plan.hash },
  };
}

/** Approves the submitted plan with a confirmation for exactly that plan. */
export function approvePlan(core: SessionCore, confirmation: Confirmation): Plan {
  const to = core.target("approve_plan");
  const draft = planApprovalDraft(core);
  const spent = core.desk.spend(confirmation, "plan_approval", draft.subject);
  if (!spent.ok) core.fail(spent.code, `cannot approve the plan: ${spent.message}`, [], "confirmation_refused");
  const plan = core.proposedPlan;
  if (plan === null)
    return core.fail("illegal_transition", "cannot approve a plan: none is submitted", [], "illegal_transition");
  core.plan = plan;
  core.proposedPlan = null;
  core.emit("plan_approved", `plan approved: ${plan.hash}`);
  core.moveTo(to, "plan approved");
  return plan.plan;
}

/** Rejects the submitted plan; the session returns to `intent_set`. */
export function rejectPlan(core: SessionCore, why: string): void {
  const to = core.target("reject_plan");
  core.proposedPlan = null;
  core.emit("plan_rejected", `plan rejected: ${why}`);
  core.moveTo(to, "plan rejected");
}

/** Starts execution: from an approved plan, or from the intent alone when plans are optional. */
export function start(core: SessionCore): void {
  const to = core.target("start");
  if (core.state === "intent_set" && core.settings.settings.require_plan) {
    core.fail("plan_required", "cannot start: this session requires an approved plan", [], "illegal_transition");
  }
  core.moveTo(to, core.plan === null ? "executing by intent alone" : "executing the approved plan");
}

/** Suspends execution (the kill switch, or a person); tokens are revoked. */
export function suspend(core: SessionCore, why: string): void {
  const to = core.target("suspend");
  core.suspensions++;
  core.revokeTokens("the session was suspended");
  core.moveTo(to, why);
  core.emit("suspended", `suspended: ${why}`, "session_suspended");
}

/** The question for resuming a suspended session. */
export function resumeDraft(core: SessionCore): QuestionDraft {
  return {
    kind: "resume",
    text: `the session \`${core.deps.id}\` was suspended (${core.executed} calls so far); resume it?`,
    subject: { kind: "resume", tenant: core.deps.tenant, session: core.deps.id, suspension: core.suspensions },
    details: { calls: core.executed, suspension: core.suspensions },
  };
}

/** Resumes a suspended session with a confirmation for this suspension. */
export function resume(core: SessionCore, confirmation: Confirmation): void {
  const to = core.target("resume");
  const spent = core.desk.spend(confirmation, "resume", resumeDraft(core).subject);
  if (!spent.ok) core.fail(spent.code, `cannot resume: ${spent.message}`, [], "confirmation_refused");
  // the kill switch counts only the calls after a resume
  core.counts.consequentialAt = [];
  core.counts.callsAt = [];
  core.moveTo(to, "resumed by a person");
  core.emit("resumed", `resumed by \`${confirmation.by}\``);
}

/** Completes or terminates the session; every token is revoked. */
export function finish(core: SessionCore, operation: "complete" | "terminate", why: string): void {
  const to = core.target(operation);
  core.revokeTokens(operation === "complete" ? "the session completed" : "the session was terminated");
  core.moveTo(to, why);
  core.emit(operation === "complete" ? "completed" : "terminated", why);
  // an ended session judges nothing more: its share of the process's provenance room is given back
  const shared = core.deps.storeBudget;
  if (shared !== undefined) chargeStoreBudget(shared, -core.storeChars);
  core.storeChars = 0;
}
