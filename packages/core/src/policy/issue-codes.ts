/**
 * Every issue code the policy parser and validator emit. Each one is listed, with its meaning, in
 * `docs/reference/errors.md` under "Policy (parse and validate)".
 */
export const POLICY_ISSUE_CODES = [
  "policy_too_large",
  "policy_too_deep",
  "policy_parse_failed",
  "yaml_syntax_error",
  "multiple_documents",
  "empty_policy",
  "unknown_alias",
  "too_many_aliases",
  "duplicate_key",
  "unknown_key",
  "missing_key",
  "wrong_type",
  "unsupported_version",
  "unknown_action",
  "unknown_category",
  "unknown_risk_level",
  "invalid_rule_id",
  "duplicate_rule_id",
  "too_many_rules",
  "too_many_classify_entries",
  "invalid_glob",
  "invalid_arg_path",
  "invalid_timeout",
  "invalid_rate_limit",
  "invalid_time",
  "invalid_timezone",
  "missing_time_bound",
  "empty_time_window",
  "empty_classification",
] as const;

/** One of {@link POLICY_ISSUE_CODES}. */
export type PolicyIssueCode = (typeof POLICY_ISSUE_CODES)[number];
