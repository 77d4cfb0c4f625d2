/** Builds `Policy` objects directly for tests (no YAML parser needed). */
import type { Policy, PolicyAction, PolicyRule, RateLimit, RuleMatch, TimeOfDay } from "../../src/policy/types.js";
import type { ClassificationOverride } from "../../src/policy/types.js";

export interface RuleSpec {
  readonly id?: string;
  readonly match?: RuleMatch;
  readonly action: PolicyAction;
  readonly level?: PolicyRule["level"];
  readonly timeout?: number;
  readonly rate_limit?: RateLimit;
  readonly time_of_day?: TimeOfDay;
}

const UNIT_MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/** `"20/minute"` as the parser would produce it. */
export function rateLimit(text: `${number}/${keyof typeof UNIT_MS}`): RateLimit {
  const [count, unit] = text.split("/") as [string, keyof typeof UNIT_MS];
  return { count: Number(count), unit, windowMs: UNIT_MS[unit], text };
}

export function buildPolicy(
  specs: readonly RuleSpec[],
  default_action: PolicyAction = "ask",
  classify: readonly ClassificationOverride[] = [],
): Policy {
  const rules = specs.map((spec, index): PolicyRule => ({
    id: spec.id ?? `rule-${index + 1}`,
    index,
    match: spec.match ?? {},
    action: spec.action,
    ...(spec.level !== undefined ? { level: spec.level } : {}),
    ...(spec.timeout !== undefined ? { timeout: spec.timeout } : {}),
    ...(spec.rate_limit !== undefined ? { rate_limit: spec.rate_limit } : {}),
    ...(spec.time_of_day !== undefined ? { conditions: { time_of_day: spec.time_of_day } } : {}),
  }));
  return { version: "1", default_action, rules, classify };
}
