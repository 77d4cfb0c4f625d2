/**
 * Hard limits on policy files. Input past a limit is refused with an issue before (or instead of) being
 * read further, so an absurd file costs bounded time and memory and never crashes the parser.
 */

/** Largest policy accepted, in UTF-8 bytes (10 MiB); larger text is refused before any YAML parsing. */
export const MAX_POLICY_BYTES = 10 * 1024 * 1024;

/**
 * Deepest YAML nesting accepted (collections inside collections). A real policy needs about 6; the limit
 * keeps the recursive YAML composer far from the call-stack limit.
 */
export const MAX_POLICY_DEPTH = 64;

/**
 * Most YAML values one policy may hold (scalars, keys included, and collections), counted from the lexer
 * before any syntax tree is built: the yaml library takes some 400 bytes a value, and a 10 MiB file of
 * `[1,1,…]` ran the process out of memory. 100,000 rules of ten values each fit.
 */
export const MAX_POLICY_VALUES = 1_000_000;

/** Most rules one policy may hold. */
export const MAX_POLICY_RULES = 100_000;

/**
 * Most weight of the `args` values all rules hold together: one each, and five for a string holding `~`,
 * `$` or `%`, which an `ask` or `deny` rule also compiles as every home it may mean (about 55 KB and 2 ms
 * each, against 2 to 10 KB for another). Each value is compiled into several matchers when the policy is
 * loaded: 100,000 rules of `path: "~/xN/**"` (7 MB of YAML) ran `acp proxy` out of memory.
 */
export const MAX_ARG_PATTERN_WEIGHT = 25_000;

/** What one `args` value weighs against {@link MAX_ARG_PATTERN_WEIGHT}. */
export const HOME_ARG_WEIGHT = 5;

/** Most entries the `classify:` section may hold. */
export const MAX_CLASSIFY_ENTRIES = 100_000;

/** Most alias references (`*name`) one policy may use. */
export const MAX_ALIAS_COUNT = 10_000;

/**
 * Most YAML values one policy's aliases may stand for, summed over every alias (an alias counts each value of
 * the node its anchor names): the reader reads that node again at each alias, so this bounds what aliases
 * add to the reading (an "alias bomb").
 */
export const MAX_ALIAS_EXPANSION = 10_000;

/** Longest rule id (ids are slugs: lowercase letters, digits, `-` and `_`). */
export const MAX_RULE_ID_LENGTH = 128;

/** Largest `timeout`, in seconds (7 days). */
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 60 * 60;

/** Largest count in a `rate_limit` (`N/unit`). */
export const MAX_RATE_LIMIT_COUNT = 1_000_000_000;
