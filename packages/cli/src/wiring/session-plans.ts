/**
 * `acp_submit_plan` in the proxy's session runtime: a plan is checked against the intent, against the tools
 * the upstreams really offer, and against what is already approved or waiting; one that only narrows the
 * intent is approved by rule (`plan-narrows-intent`), any other is put before a person. Nothing runs here.
 */
import { compileIntent, compilePlan, formatIssue, type Session } from "@acp/core";
import { PLAN_NARROWS_RULE, judgePlanNarrowing } from "./session-plan-rule.js";

/** Where the runtime leaves the rule's approval for the escalation handler to find (one plan hash). */
export interface PlanRuleSlot {
  planRule?: { readonly planHash: string; readonly reason: string };
}

/** What the agent is told. */
export interface PlanOutcome {
  readonly approved: boolean;
  readonly text: string;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const refused = (why: string): PlanOutcome => ({ approved: false, text: `the plan was refused: ${why}; nothing ran` });

/** The first step naming a tool no upstream offers (when the proxy says which tools exist). */
function unknownTool(plan: unknown, tools: readonly string[] | undefined): string | undefined {
  if (tools === undefined || typeof plan !== "object" || plan === null) return undefined;
  const steps = (plan as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) return undefined;
  const known = new Set(tools);
  for (const [i, step] of steps.entries()) {
    const action = (step as { action?: unknown } | null)?.action;
    if (typeof action === "string" && !known.has(action))
      return `step ${i + 1} names \`${action.slice(0, 200)}\`, which no upstream server offers`;
  }
  return undefined;
}

function restart(session: Session): void {
  try {
    if (session.state === "plan_submitted") session.rejectPlan("not approved by a person");
    if ((session.state as string) === "intent_set") session.start();
  } catch {
    /* an intent update moved the session meanwhile: it is already where it should be */
  }
}

/**
 * Handles one submitted plan: the intent first (a plan outside it is refused with every problem), then the
 * upstream tools, then duplicates (the plan in force, a plan waiting for a person); then the plan is
 * submitted and confirmed — by rule when it only narrows the intent, else by a person.
 */
export async function submitPlan(
  session: Session,
  slot: PlanRuleSlot,
  plan: unknown,
  tools: readonly string[] | undefined,
): Promise<PlanOutcome> {
  const intent = session.intent === null ? undefined : compileIntent(session.intent);
  if (intent === undefined || !intent.ok) return refused("the session has no valid intent");
  const compiled = compilePlan(plan, intent.value);
  if (!compiled.ok)
    return {
      approved: false,
      text: `the plan does not fit the intent: ${compiled.issues.map((i) => formatIssue(i)).join("; ")}`,
    };
  const missing = unknownTool(plan, tools);
  if (missing !== undefined) return refused(missing);
  if (session.planHash === compiled.value.hash)
    return refused(`this plan is already approved (${compiled.value.hash})`);
  if (session.state === "plan_submitted") return refused("another plan is already waiting for a person");
  try {
    session.submitPlan(plan);
  } catch (err) {
    return refused(message(err));
  }
  const verdict = judgePlanNarrowing(compiled.value.plan, intent.value, session.provenance);
  if (verdict.narrows) slot.planRule = { planHash: compiled.value.hash, reason: verdict.reason };
  try {
    await session.confirmPlan();
  } catch (err) {
    restart(session);
    return { approved: false, text: `the plan was not approved: ${message(err)}` };
  } finally {
    delete slot.planRule;
  }
  try {
    session.start();
  } catch (err) {
    return { approved: false, text: `the plan was approved but cannot run: ${message(err)}` };
  }
  const by = verdict.narrows
    ? `by rule \`${PLAN_NARROWS_RULE}\`: ${verdict.reason}`
    : `by a person (it does not only narrow the intent: ${verdict.reason})`;
  return { approved: true, text: `the plan was approved ${by}; only its steps run from now on` };
}
