import {
  classifyDerivedWithCompiled,
  classifyWithCompiled,
  higherRisk,
  type Classification,
  type ClassificationSource,
} from "../classify/classify-action.js";
import type { Reason } from "../pipeline/types.js";
import type { PolicyAction, PolicyRule } from "../policy/types.js";
import type { ActionRequest, Category, RiskLevel } from "../request/index.js";
import { routeStrictness } from "../route/index.js";
import { matchArg } from "./arg-match.js";
import type { CompiledPolicy, CompiledRule } from "./compile-policy.js";
import { isInWindow } from "./time-of-day.js";
import { findFirstMatch } from "./rule-index.js";
import { withWorkBudget } from "../glob/index.js";

/**
 * The most work units one policy evaluation may spend ({@link withWorkBudget}): 2^23, about 8.4 million,
 * some half a second to two seconds of the linear-time matcher's worst work on a hostile argument. The
 * literal text of every glob (`PRIVATE KEY` of `*BEGIN*PRIVATE KEY*`) is found in a 1,000,000-character
 * argument in one pass for all rules (`LiteralSearch`), so twenty such rules spend about 0.5 million units
 * on it, as one does; a glob without literal text (`*a*a*b`) may need all of the budget on such an argument.
 */
export const DECISION_WORK_BUDGET = 2 ** 23;

/** The rule a request falls under (or the default), with its classification. */
export interface PolicyMatch {
  /** The first rule in file order whose every criterion holds; null when the default action applies. */
  readonly rule: PolicyRule | null;
  /** The rule's id, or `"default"`. */
  readonly ruleId: string;
  readonly action: PolicyAction;
  readonly category: Category;
  readonly risk_level: RiskLevel;
  readonly classification_source: ClassificationSource;
  readonly reasons: readonly Reason[];
  /**
   * Set only when the request's own category made the decision stricter: the rule its derived
   * classification matched, whose rate limit is checked too (before `rule`'s), as it would be without
   * the caller's category.
   */
  readonly derivedRule?: PolicyRule;
}

/** Whether one compiled rule matches; `category` is the request's classified category. */
export function ruleMatches(compiled: CompiledRule, request: ActionRequest, category: Category, now: Date): boolean {
  if (compiled.tool !== undefined && !compiled.tool(request.tool)) return false;
  if (compiled.server !== undefined && (request.server === undefined || !compiled.server(request.server))) {
    return false;
  }
  if (compiled.category !== undefined && compiled.category !== category) return false;
  return dynamicMatches(compiled, request, now);
}

/** The argument and time-of-day criteria of a rule (the index has already checked tool, server, category). */
function dynamicMatches(compiled: CompiledRule, request: ActionRequest, now: Date): boolean {
  for (const arg of compiled.args) if (!matchArg(request.arguments, arg, compiled.every)) return false;
  const window = compiled.window;
  if (window !== undefined && !isInWindow(window.localMinutes(now), window.after, window.before)) return false;
  return true;
}

function assertRequestShape(request: ActionRequest, now: Date): void {
  if (typeof request !== "object" || request === null) throw new TypeError("invalid request: not an object");
  if (typeof request.tool !== "string") throw new TypeError("invalid request: `tool` must be a string");
  if (request.server !== undefined && typeof request.server !== "string") {
    throw new TypeError("invalid request: `server` must be a string");
  }
  const args: unknown = request.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new TypeError("invalid request: `arguments` must be an object");
  }
  if (!(now instanceof Date) || !Number.isFinite(now.getTime())) {
    throw new RangeError("invalid clock: `now` is not a valid date");
  }
}

/**
 * Finds the policy rule for a request: the first rule in file order whose every criterion holds (tool,
 * server, classified category, arguments, time of day), or the policy's default action. Synchronous and
 * pure: the clock is `now`. Uses the index of {@link CompiledPolicy}; the answer is always the one a linear
 * scan would give. Throws a TypeError/RangeError on a malformed request or clock (the evaluator refuses),
 * an argument value a rule reads that is not JSON among them ({@link matchArg}). Any string is matched as a
 * name here; {@link evaluatePolicy} refuses the names the pipeline refuses.
 *
 * A request's own `category` / `risk_level` come from the caller, which may make a decision stricter,
 * never looser: when they differ from the derived classification (the policy's `classify:`, annotations,
 * the built-in table) the rule is found under both, and the stricter action wins (`deny > ask > allow`;
 * the same action: the derived classification's rule). The reported risk is the higher of the two. A
 * reason says when the caller's classification decided, or was not used.
 *
 * The work is bounded: {@link DECISION_WORK_BUDGET} units (argument values visited, characters read by
 * the rules' tests, steps of the linear-time matcher); past it a {@link WorkBudgetExceededError} is
 * thrown (the evaluator refuses with `decision_budget_exceeded`).
 */
export function matchPolicy(compiled: CompiledPolicy, request: ActionRequest, now: Date): PolicyMatch {
  assertRequestShape(request, now);
  return withWorkBudget(DECISION_WORK_BUDGET, () => {
    if (request.category === undefined && request.risk_level === undefined) {
      return matchUnder(compiled, request, classifyWithCompiled(request, compiled.overrides), now);
    }
    return matchClaimed(compiled, request, now);
  });
}

/** The first matching rule (or the default) for a request classified as `classification`. */
function matchUnder(
  compiled: CompiledPolicy,
  request: ActionRequest,
  classification: Classification,
  now: Date,
): PolicyMatch {
  const category = classification.category;
  const rules = compiled.rules;
  const position = findFirstMatch(compiled.index, request.tool, category, request.server, (i) =>
    dynamicMatches(rules[i] as CompiledRule, request, now),
  );
  const hit = position < 0 ? undefined : rules[position];
  if (hit === undefined) {
    return {
      rule: null,
      ruleId: "default",
      action: compiled.policy.default_action,
      category,
      risk_level: classification.risk_level,
      classification_source: classification.source,
      reasons: compiled.defaultReasons,
    };
  }
  return {
    rule: hit.rule,
    ruleId: hit.rule.id,
    action: hit.rule.action,
    category,
    risk_level: classification.risk_level,
    classification_source: classification.source,
    reasons: hit.reasons,
  };
}

const SOURCE_WORDS: Readonly<Record<ClassificationSource, string>> = {
  explicit: "the request's own fields",
  policy: "the policy's `classify:`",
  annotations: "the tool's annotations",
  builtin: "the built-in table",
  default: "the default for unknown tools",
};

function actionRank(action: PolicyAction): number {
  return routeStrictness(action === "allow" ? "accept" : action === "ask" ? "ask" : "refuse");
}

function outcome(m: PolicyMatch): string {
  return m.rule === null ? `the default action (${m.action})` : `rule \`${m.ruleId}\` (${m.action})`;
}

/** A request with its own category or risk level: judged under the claimed and the derived classification. */
function matchClaimed(compiled: CompiledPolicy, request: ActionRequest, now: Date): PolicyMatch {
  const claimed = classifyWithCompiled(request, compiled.overrides); // throws on an unknown category or risk
  const derived = classifyDerivedWithCompiled(request, compiled.overrides);
  const risk = higherRisk(derived.risk_level, claimed.risk_level);
  const riskRaised = risk !== derived.risk_level;
  const fromDerived = matchUnder(compiled, request, derived, now);
  const fromClaimed = claimed.category === derived.category ? fromDerived : matchUnder(compiled, request, claimed, now);
  const claimedDecides = actionRank(fromClaimed.action) > actionRank(fromDerived.action);
  const extra: Reason[] = [];
  if (claimedDecides) {
    extra.push({
      source: "policy",
      code: "caller_category_stricter",
      message:
        `the request's own category \`${claimed.category}\` is stricter here than \`${derived.category}\` ` +
        `(${SOURCE_WORDS[derived.source]}, ${outcome(fromDerived)}), so it decided: ${outcome(fromClaimed)}`,
      ...(fromClaimed.rule !== null ? { rule: fromClaimed.ruleId } : {}),
    });
  } else if (fromClaimed.ruleId !== fromDerived.ruleId) {
    extra.push({
      source: "policy",
      code: "caller_category_not_used",
      message:
        `the request's own category \`${claimed.category}\` would give ${outcome(fromClaimed)}; a caller's ` +
        `category may make a decision stricter, never looser, so \`${derived.category}\` ` +
        `(${SOURCE_WORDS[derived.source]}) decided: ${outcome(fromDerived)}`,
      ...(fromDerived.rule !== null ? { rule: fromDerived.ruleId } : {}),
    });
  }
  if (request.risk_level !== undefined && claimed.risk_level !== risk) {
    extra.push({
      source: "policy",
      code: "caller_risk_not_used",
      message:
        `the request's own risk level \`${claimed.risk_level}\` is lower than \`${risk}\` ` +
        `(${SOURCE_WORDS[derived.source]}); a caller's risk level may raise the risk, never lower it`,
    });
  }
  const decided = claimedDecides ? fromClaimed : fromDerived;
  return {
    ...decided,
    risk_level: risk,
    classification_source: claimedDecides || riskRaised ? "explicit" : derived.source,
    reasons: extra.length === 0 ? decided.reasons : [...decided.reasons, ...extra],
    ...(claimedDecides && fromDerived.rule !== null ? { derivedRule: fromDerived.rule } : {}),
  };
}
