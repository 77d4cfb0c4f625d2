import type { Decision } from "@acp/core";

/** The JSON shape `acp policy simulate` and `acp policy test` print for a decision (stable; documented). */
export interface DecisionJson {
  readonly route: Decision["route"];
  readonly action: Decision["action"];
  readonly rule: string | null;
  readonly category: Decision["category"];
  readonly risk_level: Decision["risk_level"];
  readonly reasons: readonly { source: string; code: string; message: string; rule?: string }[];
  readonly sources: readonly { source: string; route: string; rule?: string }[];
  readonly timeout?: number;
  readonly level?: string;
}

/** Turns a decision into its documented JSON form. */
export function presentDecision(decision: Decision): DecisionJson {
  const json: DecisionJson = {
    route: decision.route,
    action: decision.action,
    rule: decision.rule,
    category: decision.category,
    risk_level: decision.risk_level,
    reasons: decision.reasons.map((r) => ({ ...r })),
    sources: decision.verdicts.map((v) =>
      v.rule === undefined ? { source: v.source, route: v.route } : { source: v.source, route: v.route, rule: v.rule },
    ),
  };
  if (decision.timeout !== undefined) Object.assign(json, { timeout: decision.timeout });
  if (decision.level !== undefined) Object.assign(json, { level: decision.level });
  return json;
}
