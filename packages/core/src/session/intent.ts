import { canonicalSha256Ref } from "../canonical-json/index.js";
import { fail, ok, ValidationError, type Issue, type Result } from "../issues/index.js";
import { compileActionPatterns, type ActionPatterns } from "./action-name.js";
import { deepFreeze, toFrozenJson } from "./frozen-json.js";
import { INTENT_JSON_SCHEMA } from "./intent-schema.js";
import { checkAgainstSchema } from "./schema-check.js";

/** Call budgets of one intent version. Absent means unlimited. */
export interface IntentBudgets {
  readonly max_calls?: number;
  readonly max_consequential_calls?: number;
  /** Action glob → most calls of matching actions. */
  readonly per_action?: Readonly<Record<string, number>>;
}

/** A validated, deep-frozen intent (`spec/schemas/intent.schema.json`) with every default filled in. */
export interface Intent {
  readonly version: number;
  readonly goal: string;
  readonly allowed_actions: readonly string[];
  readonly forbidden_actions: readonly string[];
  readonly confirm_actions: readonly string[];
  readonly trusted_values: Readonly<Record<string, readonly string[]>>;
  readonly budgets: IntentBudgets;
}

/** An intent with its action globs compiled and its hash. */
export interface CompiledIntent {
  readonly intent: Intent;
  /** `sha256:` of the RFC 8785 form of the intent. */
  readonly hash: string;
  readonly allowed: ActionPatterns;
  readonly forbidden: ActionPatterns;
  readonly confirm: ActionPatterns;
  /** Budget globs in the order written. */
  readonly perAction: readonly { readonly pattern: ActionPatterns; readonly cap: number }[];
}

function compileAll(intent: Intent, issues: Issue[]): Omit<CompiledIntent, "intent" | "hash"> | undefined {
  const allowed = compileActionPatterns(intent.allowed_actions, ["allowed_actions"]);
  const forbidden = compileActionPatterns(intent.forbidden_actions, ["forbidden_actions"]);
  const confirm = compileActionPatterns(intent.confirm_actions, ["confirm_actions"]);
  const perAction: { pattern: ActionPatterns; cap: number }[] = [];
  for (const [glob, cap] of Object.entries(intent.budgets.per_action ?? {})) {
    const pattern = compileActionPatterns([glob], ["budgets", "per_action"]);
    if (pattern.ok) perAction.push({ pattern: pattern.value, cap });
    else issues.push(...pattern.issues);
  }
  for (const r of [allowed, forbidden, confirm]) if (!r.ok) issues.push(...r.issues);
  if (!allowed.ok || !forbidden.ok || !confirm.ok || issues.length > 0) return undefined;
  return { allowed: allowed.value, forbidden: forbidden.value, confirm: confirm.value, perAction };
}

/**
 * Validates an (untrusted) intent: JSON Schema, then every action glob compiles. Returns a deep-frozen private
 * copy with defaults filled in (`version` 1, empty lists, no budgets), its globs compiled and its hash.
 */
export function compileIntent(value: unknown): Result<CompiledIntent> {
  const json = toFrozenJson(value, "intent");
  if (!json.ok) return json;
  const schemaIssues = checkAgainstSchema(INTENT_JSON_SCHEMA, json.value, "intent_schema_violation", "intent");
  if (schemaIssues.length > 0) return fail(schemaIssues);
  const raw = json.value as unknown as Partial<Intent> & Pick<Intent, "goal" | "allowed_actions">;
  const intent: Intent = deepFreeze({
    version: raw.version ?? 1,
    goal: raw.goal,
    allowed_actions: raw.allowed_actions,
    forbidden_actions: raw.forbidden_actions ?? [],
    confirm_actions: raw.confirm_actions ?? [],
    trusted_values: raw.trusted_values ?? {},
    budgets: raw.budgets ?? {},
  });
  const issues: Issue[] = [];
  const compiled = compileAll(intent, issues);
  if (compiled === undefined) return fail(issues);
  return ok(Object.freeze({ intent, hash: canonicalSha256Ref(intent), ...compiled }));
}

/** Validates an intent; the non-throwing entry point. */
export function validateIntent(value: unknown): Result<Intent> {
  const compiled = compileIntent(value);
  return compiled.ok ? ok(compiled.value.intent) : compiled;
}

/** Like {@link validateIntent} but throws a {@link ValidationError} listing the issues. */
export function assertIntent(value: unknown): Intent {
  const result = validateIntent(value);
  if (!result.ok) throw new ValidationError("invalid intent", result.issues);
  return result.value;
}
