export { MAX_ARRAY_NESTING, type CompiledArgMatch } from "./arg-match.js";
export { compilePolicy, tryCompilePolicy, type CompiledPolicy, type CompiledRule } from "./compile-policy.js";
export {
  evaluatePolicy,
  rateLimitKey,
  POLICY_ACTION_ROUTES,
  type EvaluatePolicyOptions,
  type PolicyVerdict,
} from "./evaluate-policy.js";
export { keepPolicyWork, policyWorkOf, type PolicyWork } from "./policy-work.js";
export { noteRetryAt, retryAtOf, secondsUntil } from "./retry-after.js";
export {
  createCallerBudget,
  decideWithin,
  DEFAULT_CALLER_BUDGET_MAX_CALLERS,
  DEFAULT_CALLER_BUDGET_UNITS,
  DEFAULT_CALLER_BUDGET_WINDOW_MS,
  EXHAUSTED_CHARGE,
  type CallerBudget,
  type CallerBudgetOptions,
} from "./caller-budget.js";
export { DECISION_WORK_BUDGET, matchPolicy, ruleMatches, type PolicyMatch } from "./match-policy.js";
export {
  createMemoryRateLimiter,
  type MemoryRateLimiter,
  type MemoryRateLimiterOptions,
  type RateLimitOutcome,
  type RateLimiter,
} from "./rate-limiter.js";
export type { CachedCandidates, RuleIndex, TrieNode } from "./rule-index.js";
export { localMinuteOfDay, type CompiledTimeWindow } from "./time-of-day.js";
