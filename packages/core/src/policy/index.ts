/**
 * The policy file (consent protocol §5.1): its model, parser and validator, and the small pieces the
 * evaluator and CLI reuse (rate limits, clock times, time zones, suggestions, limits).
 */
export * from "./types.js";
export { parsePolicy, assertPolicy, type ParsePolicyOptions } from "./parse-policy.js";
export { parseRateLimit, RATE_UNIT_MS } from "./rate-limit.js";
export { checkClockTime, isTimeZone, END_OF_DAY_MINUTES } from "./time-of-day.js";
export { deepFreeze } from "./deep-freeze.js";
export { findShadowedRules, ruleCovers, MAX_SHADOW_CHECK_RULES } from "./shadowed-rules.js";
export { findPrefixedToolNames } from "./prefixed-names.js";
export { findLookAlikePatterns } from "./look-alike-patterns.js";
export { findIneffectiveKeys } from "./ineffective-keys.js";
export { findQuotedPatterns } from "./quoted-patterns.js";
export { POLICY_ISSUES, POLICY_ISSUE_CODES, type PolicyIssueCode } from "./issue-codes.js";
export {
  MAX_POLICY_BYTES,
  MAX_POLICY_DEPTH,
  MAX_POLICY_VALUES,
  MAX_POLICY_RULES,
  MAX_CLASSIFY_ENTRIES,
  MAX_ARG_PATTERN_WEIGHT,
  HOME_ARG_WEIGHT,
  MAX_ALIAS_COUNT,
  MAX_ALIAS_EXPANSION,
  MAX_RULE_ID_LENGTH,
  MAX_TIMEOUT_SECONDS,
  MAX_RATE_LIMIT_COUNT,
} from "./limits.js";
export { POLICY_KEYS, DEFAULT_POLICY_ACTION } from "./read-policy.js";
export { RESERVED_RULE_ID, RULE_KEYS, RULE_ID_PATTERN, positionalRuleId } from "./read-rule.js";
export { MATCH_KEYS } from "./read-match.js";
export { CONDITION_KEYS, TIME_OF_DAY_KEYS, DEFAULT_TIMEZONE } from "./read-conditions.js";
export { CLASSIFY_KEYS } from "./read-classify.js";
