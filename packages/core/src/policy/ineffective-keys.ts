import type { Issue } from "../issues/index.js";
import type { PolicyRule } from "./types.js";

/**
 * Finds rule keys that do nothing for the rule's action: a `rate_limit` on a `deny` rule (a deny rule
 * refuses every call and counts none — an author who meant "refuse past N a minute" wrote the opposite of
 * an `allow` rule with that limit), a `timeout` or `level` on a rule that does not `ask`. One
 * `ineffective_key` issue each, meant as a warning.
 */
export function findIneffectiveKeys(rules: readonly PolicyRule[]): Issue[] {
  const issues: Issue[] = [];
  const warn = (rule: PolicyRule, key: string, message: string, help: string): void => {
    issues.push({
      code: "ineffective_key",
      path: ["rules", rule.index, key],
      message: `rule \`${rule.id}\`: ${message}`,
      help,
      ...(rule.line !== undefined ? { line: rule.line } : {}),
    });
  };
  for (const rule of rules) {
    if (rule.action === "deny" && rule.rate_limit !== undefined) {
      warn(
        rule,
        "rate_limit",
        `\`rate_limit\` does nothing on a \`deny\` rule: every call it matches is refused, none counted`,
        `to let \`${rule.rate_limit.text}\` through and refuse the rest, write \`action: allow\` (or \`ask\`) with the limit`,
      );
    }
    if (rule.action !== "ask") {
      for (const key of ["timeout", "level"] as const) {
        if (rule[key] === undefined) continue;
        warn(
          rule,
          key,
          `\`${key}\` does nothing on an \`${rule.action}\` rule`,
          `\`${key}\` applies to \`ask\` rules only`,
        );
      }
    }
  }
  return issues;
}
