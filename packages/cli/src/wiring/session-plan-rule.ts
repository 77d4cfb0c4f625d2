/**
 * When a plan needs no person: it only narrows the intent. Every step is already inside the intent's allowed
 * actions (the core refuses any other plan); on top, no step is one the intent asks a person before, and every
 * argument constraint keeps a value to what the person named — one of the intent's trusted values, or text the
 * person wrote (the goal, user input). A glob, or a value nobody named, could widen what a person expects, so
 * such a plan still goes to a person. Deterministic; the agent's words never count as the person's.
 */
import {
  containsWhole,
  normalizeText,
  type ArgumentConstraint,
  type CompiledIntent,
  type JsonValue,
  type Plan,
  type ProvenanceEntry,
} from "@acp/core";

/** The rule's verdict on a plan, with the reason a person (and the audit) reads. */
export interface PlanRuleVerdict {
  readonly narrows: boolean;
  readonly reason: string;
}

/** The rule's name, as it appears in answers and in the audit (`approved by rule \`plan-narrows-intent\``). */
export const PLAN_NARROWS_RULE = "plan-narrows-intent";

function leaves(value: JsonValue, out: (string | number | boolean | null)[]): void {
  if (Array.isArray(value)) for (const v of value as readonly JsonValue[]) leaves(v, out);
  else if (value !== null && typeof value === "object")
    for (const v of Object.values(value as Record<string, JsonValue>)) leaves(v, out);
  else out.push(value);
}

function namedByPerson(
  value: string | number | boolean | null,
  trusted: ReadonlySet<string>,
  texts: readonly string[],
): boolean {
  if (value === null || typeof value === "boolean") return true;
  const text = normalizeText(String(value)).trim();
  if (text.length === 0) return true;
  return trusted.has(text) || texts.some((t) => containsWhole(t, text));
}

function constraintWidens(
  c: ArgumentConstraint,
  trusted: ReadonlySet<string>,
  texts: readonly string[],
): string | undefined {
  if ("from_trusted" in c) return undefined;
  if ("glob" in c) return `the glob \`${c.glob}\` admits values nobody named`;
  const values: (string | number | boolean | null)[] = [];
  if ("exact" in c) leaves(c.exact, values);
  else for (const v of c.one_of) leaves(v, values);
  const stranger = values.find((v) => !namedByPerson(v, trusted, texts));
  return stranger === undefined ? undefined : `\`${String(stranger).slice(0, 80)}\` is not a value you named`;
}

/**
 * Whether `plan` only narrows `intent`. `userEntries` is the session's provenance; only `user_input` entries
 * (the intent's goal and trusted values, what the person typed) count as named by the person.
 */
export function judgePlanNarrowing(
  plan: Plan,
  intent: CompiledIntent,
  userEntries: readonly ProvenanceEntry[],
): PlanRuleVerdict {
  const trusted = new Set(
    Object.values(intent.intent.trusted_values)
      .flat()
      .map((v) => normalizeText(v).trim()),
  );
  const texts = userEntries.filter((e) => e.label === "user_input").map((e) => e.text);
  for (const [i, step] of plan.steps.entries()) {
    const confirm = intent.confirm.match([step.action]);
    if (confirm !== undefined)
      return {
        narrows: false,
        reason: `step ${i + 1} \`${step.action}\` needs a person per the intent (\`${confirm}\`)`,
      };
    for (const [arg, constraint] of Object.entries(step.constraints ?? {})) {
      const why = constraintWidens(constraint, trusted, texts);
      if (why !== undefined)
        return { narrows: false, reason: `step ${i + 1} \`${step.action}\` argument \`${arg}\`: ${why}` };
    }
  }
  return {
    narrows: true,
    reason: `every step is inside the intent, none needs a person per the intent, and every constraint keeps to values you named`,
  };
}
