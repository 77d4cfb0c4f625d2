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

/** Most rules one policy may hold. */
export const MAX_POLICY_RULES = 100_000;

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
