import { classifyWithCompiled, type ClassificationSource } from "../classify/classify-action.js";
import type { Reason } from "../pipeline/types.js";
import type { PolicyAction, PolicyRule } from "../policy/types.js";
import type { ActionRequest, Category, RiskLevel } from "../request/index.js";
import { matchArg } from "./arg-match.js";
import type { CompiledPolicy, CompiledRule } from "./compile-policy.js";
import { isInWindow } from "./time-of-day.js";
import { findFirstMatch } from "./rule-index.js";

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
 * scan would give. Throws a TypeError/RangeError on a malformed request or clock (the evaluator refuses).
 */
export function matchPolicy(compiled: CompiledPolicy, request: ActionRequest, now: Date): PolicyMatch {
  assertRequestShape(request, now);
  const classification = classifyWithCompiled(request, compiled.overrides);
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
