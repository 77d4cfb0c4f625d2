import { canonicalSha256Ref, tryCanonicalJson, type JsonValue } from "../canonical-json/index.js";
import {
  compileGlob,
  isGlobPattern,
  spendWork,
  WorkBudgetExceededError,
  withWorkBudget,
  type GlobMatcher,
} from "../glob/index.js";
import { fail, ok, type Issue, type Result } from "../issues/index.js";
import { deepFreeze, toFrozenJson } from "./frozen-json.js";
import type { CompiledIntent } from "./intent.js";
import { PLAN_JSON_SCHEMA } from "./plan-schema.js";
import { checkAgainstSchema } from "./schema-check.js";
import { extractValueTokens } from "./value-tokens.js";

/** A constraint on one argument of a plan step. */
export type ArgumentConstraint =
  | { readonly exact: JsonValue }
  | { readonly glob: string }
  | { readonly one_of: readonly JsonValue[] }
  | { readonly from_trusted: string };

/** One step of a plan: one concrete action and constraints on its top-level arguments. */
export interface PlanStep {
  readonly action: string;
  readonly description?: string;
  readonly constraints?: Readonly<Record<string, ArgumentConstraint>>;
}

/** A validated, deep-frozen plan (`spec/schemas/plan.schema.json`). */
export interface Plan {
  readonly intent_version: number;
  readonly steps: readonly PlanStep[];
}

type ArgCheck = (value: unknown) => boolean;

/** A plan fitted to one intent version, with its constraints compiled and its hash. */
export interface CompiledPlan {
  readonly plan: Plan;
  /** `sha256:` of the RFC 8785 form of the plan (it names its intent version, so the hash does too). */
  readonly hash: string;
  readonly checks: readonly (readonly (readonly [string, ArgCheck])[])[];
}

/** Applies a whole-value check; an array argument that fails as a whole must pass element by element. */
function eachOrWhole(check: (value: unknown) => boolean): ArgCheck {
  return (value) => check(value) || (Array.isArray(value) && value.length > 0 && value.every((v) => check(v)));
}

function normalizeTrusted(value: string): string {
  return value.trim().toLowerCase();
}

/**
 * Whether every address and link written in the string matches the glob as well: `*@corp.example` matches the
 * whole of `mark@attacker.example, team@corp.example`, but a mail service reads two recipients there.
 */
function everyAddressMatches(value: string, matcher: GlobMatcher): boolean {
  const tokens = extractValueTokens(value).filter((t) => t.kind === "email" || t.kind === "url");
  return tokens.every((t) => matcher(t.value));
}

/**
 * The canonical JSON of an argument value, its length charged to the decision's work budget (a plan's steps
 * each compare the call's arguments: a large value read once per step is counted once per step); undefined
 * for a value that is not plain JSON (it equals no constraint).
 */
function canonicalOf(value: unknown): string | undefined {
  const text = tryCanonicalJson(value);
  if (!text.ok) return undefined;
  spendWork(1 + text.value.length);
  return text.value;
}

/** The canonical forms of `values` (a constraint's, written by the plan: computed once). */
function canonicalSet(values: readonly JsonValue[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const v of values) {
    const text = tryCanonicalJson(v);
    if (text.ok) out.add(text.value);
  }
  return out;
}

/** A string glob check: the string read whole and for its addresses, charged to the work budget. */
function globCheck(matcher: GlobMatcher, tokenMatcher: GlobMatcher): (value: unknown) => boolean {
  return (v) => {
    if (typeof v !== "string") return false;
    spendWork(1 + v.length);
    return matcher(v) && everyAddressMatches(v, tokenMatcher);
  };
}

function compileConstraint(c: ArgumentConstraint, intent: CompiledIntent, path: (string | number)[]): Result<ArgCheck> {
  if ("exact" in c || "one_of" in c) {
    const allowed = canonicalSet("exact" in c ? [c.exact] : c.one_of);
    return ok(
      eachOrWhole((v) => {
        const text = canonicalOf(v);
        return text !== undefined && allowed.has(text);
      }),
    );
  }
  if ("glob" in c) {
    const compiled = compileGlob(c.glob);
    if (!compiled.ok) {
      const reason = compiled.issues.map((i) => i.message).join("; ");
      return fail([{ code: "invalid_constraint", path, message: `plan at \`${path.join(".")}\`: ${reason}` }]);
    }
    const matcher: GlobMatcher = compiled.value;
    // addresses are compared in lower case (their normal form), so the glob is too
    const lower = compileGlob(c.glob.toLowerCase());
    const tokenMatcher: GlobMatcher = lower.ok ? lower.value : () => false;
    return ok(eachOrWhole(globCheck(matcher, tokenMatcher)));
  }
  const list = intent.intent.trusted_values[c.from_trusted];
  if (list === undefined) {
    const known = Object.keys(intent.intent.trusted_values).join(", ") || "none";
    return fail([
      {
        code: "unknown_trusted_list",
        path,
        message: `plan at \`${path.join(".")}\`: the intent has no trusted list \`${c.from_trusted}\` (it has: ${known})`,
      },
    ]);
  }
  const allowed = new Set(list.map(normalizeTrusted));
  return ok(
    eachOrWhole((v) => {
      if (typeof v !== "string") return false;
      spendWork(1 + v.length);
      return allowed.has(normalizeTrusted(v));
    }),
  );
}

function checkStep(step: PlanStep, i: number, intent: CompiledIntent, issues: Issue[]): [string, ArgCheck][] {
  const at = `plan at \`steps.${i}.action\``;
  if (isGlobPattern(step.action)) {
    issues.push({
      code: "plan_step_pattern",
      path: ["steps", i, "action"],
      message: `${at}: \`${step.action}\` is a glob; a step names one concrete action`,
    });
  } else if (intent.forbidden.match([step.action]) !== undefined) {
    issues.push({
      code: "plan_step_forbidden",
      path: ["steps", i, "action"],
      message: `${at}: \`${step.action}\` is forbidden by the intent (\`${intent.forbidden.match([step.action])}\`)`,
    });
  } else if (intent.allowed.match([step.action]) === undefined) {
    issues.push({
      code: "plan_step_not_allowed",
      path: ["steps", i, "action"],
      message: `${at}: \`${step.action}\` is not among the intent's allowed actions`,
    });
  }
  const checks: [string, ArgCheck][] = [];
  for (const [arg, constraint] of Object.entries(step.constraints ?? {})) {
    const compiled = compileConstraint(constraint, intent, ["steps", i, "constraints", arg]);
    if (compiled.ok) checks.push([arg, compiled.value]);
    else issues.push(...compiled.issues);
  }
  return checks;
}

/**
 * Validates an (untrusted) plan against the JSON Schema and against the intent: every step names one concrete
 * action that the intent allows and does not forbid; every `from_trusted` names one of the intent's lists;
 * `intent_version`, when given, is the intent's. Returns a deep-frozen private copy and its hash.
 */
export function compilePlan(value: unknown, intent: CompiledIntent): Result<CompiledPlan> {
  const json = toFrozenJson(value, "plan");
  if (!json.ok) return json;
  const schemaIssues = checkAgainstSchema(PLAN_JSON_SCHEMA, json.value, "plan_schema_violation", "plan");
  if (schemaIssues.length > 0) return fail(schemaIssues);
  const raw = json.value as unknown as { intent_version?: number; steps: readonly PlanStep[] };
  const issues: Issue[] = [];
  if (raw.intent_version !== undefined && raw.intent_version !== intent.intent.version) {
    issues.push({
      code: "plan_intent_mismatch",
      path: ["intent_version"],
      message: `plan: made for intent version ${raw.intent_version}, but the intent is at version ${intent.intent.version}`,
    });
  }
  const checks = raw.steps.map((step, i) => checkStep(step, i, intent, issues));
  if (issues.length > 0) return fail(issues);
  const plan: Plan = deepFreeze({ intent_version: intent.intent.version, steps: raw.steps });
  return ok(Object.freeze({ plan, hash: canonicalSha256Ref(plan), checks: Object.freeze(checks) }));
}

/** How a request fits a plan: the first step it satisfies, or why none does. */
export type PlanFit =
  | { readonly ok: true; readonly step: number }
  | { readonly ok: false; readonly reason: "not_in_plan" }
  | { readonly ok: false; readonly reason: "plan_constraint_failed"; readonly step: number; readonly argument: string };

/** Finds the first step whose action is one of `names` and whose constraints the arguments satisfy. */
export function fitPlan(
  plan: CompiledPlan,
  names: readonly string[],
  args: Readonly<Record<string, unknown>>,
): PlanFit {
  let failed: PlanFit | undefined;
  for (let i = 0; i < plan.plan.steps.length; i++) {
    const step = plan.plan.steps[i] as PlanStep;
    if (!names.includes(step.action)) continue;
    const checks = plan.checks[i] ?? [];
    const bad = checks.find(([arg, check]) => !Object.hasOwn(args, arg) || !check(args[arg]));
    if (bad === undefined) return { ok: true, step: i };
    failed ??= { ok: false, reason: "plan_constraint_failed", step: i, argument: bad[0] };
  }
  return failed ?? { ok: false, reason: "not_in_plan" };
}

/** Whether the request fits step `index` exactly (for authority tokens bound to a step). */
export function fitsPlanStep(
  plan: CompiledPlan,
  index: number,
  names: readonly string[],
  args: Readonly<Record<string, unknown>>,
): boolean {
  const step = plan.plan.steps[index];
  if (step === undefined || !names.includes(step.action)) return false;
  const checks = plan.checks[index] ?? [];
  try {
    // bounded as fitting the whole plan is (`PLAN_WORK_BUDGET`): what cannot be checked does not fit
    return withWorkBudget(STEP_WORK_BUDGET, () =>
      checks.every(([arg, check]) => Object.hasOwn(args, arg) && check(args[arg])),
    );
  } catch (err) {
    if (err instanceof WorkBudgetExceededError) return false;
    throw err;
  }
}

/** Work units checking a call against one step may spend (as a whole plan's fitting: 2^23). */
const STEP_WORK_BUDGET = 2 ** 23;
