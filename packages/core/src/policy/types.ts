import type { Category, RiskLevel } from "../request/index.js";

/** The three actions a policy rule can take (consent protocol §5.4). */
export const POLICY_ACTIONS = ["allow", "ask", "deny"] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** Rate-limit units. */
export const RATE_UNITS = ["second", "minute", "hour", "day"] as const;
export type RateUnit = (typeof RATE_UNITS)[number];

/** A parsed `rate_limit: "20/minute"`. */
export interface RateLimit {
  readonly count: number;
  readonly unit: RateUnit;
  readonly windowMs: number;
  /** The text as written, for messages. */
  readonly text: string;
}

/** `conditions.time_of_day`: the rule applies only inside [after, before) local time; may cross midnight. */
export interface TimeOfDay {
  /** "HH:MM", 24-hour. */
  readonly after?: string;
  readonly before?: string;
  /** IANA time zone; default "UTC". */
  readonly timezone: string;
}

/** Argument match values: scalars compare exactly, strings may be globs. */
export type ArgMatchValue = string | number | boolean | null;

/** What a rule matches; every present criterion must hold. */
export interface RuleMatch {
  /** Exact tool name or glob (`send_*`, `*_email`, `*`). */
  readonly tool?: string;
  readonly category?: Category;
  /** Upstream MCP server name (exact or glob). */
  readonly server?: string;
  /** Argument key (dotted path for nested keys) → exact value or glob. */
  readonly args?: Readonly<Record<string, ArgMatchValue>>;
}

/** One rule, in file order. */
export interface PolicyRule {
  /** Its `id:` when given, else `rule-<position>` (1-based). */
  readonly id: string;
  /** 0-based position in the file. */
  readonly index: number;
  readonly description?: string;
  readonly match: RuleMatch;
  readonly action: PolicyAction;
  readonly level?: RiskLevel;
  /** Seconds before an `ask` auto-denies. */
  readonly timeout?: number;
  readonly rate_limit?: RateLimit;
  readonly conditions?: { readonly time_of_day?: TimeOfDay };
  /** Where the rule starts in the source (1-based), when parsed from text. */
  readonly line?: number;
}

/** A policy override of the built-in classification: tools matching `tool` get this category/risk. */
export interface ClassificationOverride {
  readonly tool: string;
  readonly server?: string;
  readonly category?: Category;
  readonly risk_level?: RiskLevel;
}

/** A validated policy document (consent protocol §5.1). */
export interface Policy {
  readonly version: "1";
  readonly default_action: PolicyAction;
  readonly rules: readonly PolicyRule[];
  /** Optional `classify:` section overriding the built-in table (§5.5). */
  readonly classify: readonly ClassificationOverride[];
}
