/**
 * Every issue code the policy parser and validator emit, with its meaning. The same rows are listed in
 * `docs/reference/errors.md` under "Policy (parse and validate)"; a test keeps the two in step.
 */
export const POLICY_ISSUES = [
  {
    code: "policy_too_large",
    meaning: "the policy is larger than 10 MiB (`MAX_POLICY_BYTES`); refused before parsing",
  },
  {
    code: "policy_too_deep",
    meaning: "YAML nesting deeper than 64 levels (`MAX_POLICY_DEPTH`); refused before composing",
  },
  {
    code: "too_many_values",
    meaning:
      "more than 1,000,000 YAML values (`MAX_POLICY_VALUES`: scalars, keys included, lists and mappings); refused before the syntax tree is built",
  },
  {
    code: "policy_parse_failed",
    meaning: "an unexpected failure while reading the policy (a bug; the policy is refused)",
  },
  {
    code: "yaml_syntax_error",
    meaning:
      "the text is not valid YAML, or uses an unsupported feature such as an unknown tag. An error about indentation or keys is placed at the line at fault (the yaml library may name the first comment line before it), and a key written without its `:` (`action allow`), or indented deeper than the `key: value` before it, is named after the message: ``(is a `:` missing after `action` on line 15?)``",
  },
  { code: "multiple_documents", meaning: "the file holds more than one YAML document (`---`)" },
  { code: "empty_policy", meaning: "the file holds no document, only comments or nothing" },
  { code: "unknown_alias", meaning: "an alias `*name` names no anchor `&name` defined before it" },
  { code: "too_many_aliases", meaning: "more than 10,000 alias references (`MAX_ALIAS_COUNT`)" },
  {
    code: "alias_expansion_too_large",
    meaning:
      "the aliases stand for more than 10,000 YAML values in all (`MAX_ALIAS_EXPANSION`; an alias counts each value of the node its anchor names): an alias bomb, refused before the policy is read",
  },
  {
    code: "recursive_alias",
    meaning: "an alias `*name` inside the node its own anchor `&name` names (`&r { match: *r }`)",
  },
  { code: "duplicate_key", meaning: "a key appears twice in one mapping" },
  { code: "unknown_key", meaning: "a key the format does not define (with a did-you-mean suggestion)" },
  {
    code: "missing_key",
    meaning: "a required key is missing: `version`, a rule's `action`, a classify entry's `tool`",
  },
  {
    code: "wrong_type",
    meaning: "a value of the wrong type (a list where a mapping belongs, a number for a string, …)",
  },
  { code: "unsupported_version", meaning: '`version` is not `"1"`' },
  { code: "unknown_action", meaning: "an action other than `allow`, `ask` or `deny` (with a suggestion)" },
  { code: "unknown_category", meaning: "a category other than those of the consent protocol §5.3 (with a suggestion)" },
  { code: "unknown_risk_level", meaning: "a risk level other than `low`, `medium`, `high` or `critical`" },
  {
    code: "invalid_rule_id",
    meaning:
      "a rule `id` that is not a slug of at most 128 characters, or is `default` (the default action's name in verdicts)",
  },
  {
    code: "duplicate_rule_id",
    meaning: "two rules share an id (also an explicit id equal to another rule's `rule-N`)",
  },
  { code: "too_many_rules", meaning: "more than 100,000 rules (`MAX_POLICY_RULES`)" },
  {
    code: "too_many_arg_patterns",
    meaning:
      "the rules' `args` values weigh more than 25,000 together (`MAX_ARG_PATTERN_WEIGHT`; a value holding `~`, `$` or `%` weighs 5, another 1): loading compiles each into several matchers",
  },
  { code: "too_many_classify_entries", meaning: "more than 100,000 `classify` entries (`MAX_CLASSIFY_ENTRIES`)" },
  {
    code: "invalid_glob",
    meaning:
      "a `tool`, `server` or `args` pattern that does not compile (unbalanced brackets, empty, groups nested deeper than 8 levels: `*(*(…))`, `{a,{b,…}}`), or a `tool` or `server` holding an invisible or control character or a space at either end",
  },
  { code: "invalid_arg_path", meaning: "an `args` key that is not a dotted path (`to..address`, `.to`)" },
  { code: "invalid_timeout", meaning: "a `timeout` that is not whole seconds from 1 to 604,800 (7 days)" },
  { code: "invalid_rate_limit", meaning: "a `rate_limit` that is not `N/second`, `N/minute`, `N/hour` or `N/day`" },
  { code: "invalid_time", meaning: "an `after` or `before` that is not `HH:MM` (24-hour; `before` may be `24:00`)" },
  { code: "invalid_timezone", meaning: "a `timezone` this runtime does not know as an IANA zone" },
  { code: "missing_time_bound", meaning: "a `time_of_day` with neither `after` nor `before`" },
  { code: "empty_time_window", meaning: "a `time_of_day` whose `after` equals its `before`" },
  { code: "empty_classification", meaning: "a `classify` entry that sets neither `category` nor `risk_level`" },
  { code: "invalid_encoding", meaning: "`acp policy validate`: the file is not valid UTF-8" },
  {
    code: "shadowed_rule",
    meaning:
      "`acp policy validate` warning, not an error (the policy loads): a rule that can never match, because an earlier rule matches every call it would (`findShadowedRules`)",
  },
  {
    code: "prefixed_tool_name",
    meaning:
      "`acp policy validate` warning: a `tool` written `server__tool`, as `acp proxy` may show it to the agent; rules see the tool's own name and `server` apart (`findPrefixedToolNames`)",
  },
  {
    code: "look_alike_pattern",
    meaning:
      "`acp policy validate` warning: a `tool` or `server` that passes for another name (a Latin name with a look-alike letter inside, `rеad_file` with a Cyrillic `е`, or a word wholly of another script's look-alikes, `ѕсоре` in Cyrillic): an `allow` rule or `classify:` entry so written never meets the name it shows (`findLookAlikePatterns`)",
  },
  {
    code: "ineffective_key",
    meaning:
      "`acp policy validate` warning: a key that does nothing for its rule's action, a `rate_limit` on a `deny` rule or a `timeout` or `level` on a rule that does not `ask` (`findIneffectiveKeys`)",
  },
  {
    code: "quoted_pattern",
    meaning:
      "`acp policy validate` warning: a `tool`, `server` or `args` glob written wholly in quotes (`'*.pem'`, `\"*.pem\"` inside the YAML string): a glob's quotes are text it meets, so it meets only a value written with them (`findQuotedPatterns`)",
  },
] as const;

/** The codes of {@link POLICY_ISSUES}. */
export const POLICY_ISSUE_CODES: readonly PolicyIssueCode[] = POLICY_ISSUES.map((issue) => issue.code);

/** One of {@link POLICY_ISSUE_CODES}. */
export type PolicyIssueCode = (typeof POLICY_ISSUES)[number]["code"];
