import type { Issue } from "../issues/index.js";
import { isGlobPattern } from "../glob/index.js";
import { showInput } from "./show-input.js";
import type { Policy, PolicyRule } from "./types.js";

/**
 * The glob inside `pattern` when the whole of it stands in one pair of quotes (`'*.pem'`, `"*.pem"`), as
 * a pattern copied from a shell command or quoted twice in YAML (`v: "'*.pem'"`) does; undefined for any
 * other, and for a home reference in double quotes (`"$HOME/projects/**"`), which means the quotes.
 */
function quotedGlob(pattern: string): string | undefined {
  const quote = pattern[0];
  if ((quote !== '"' && quote !== "'") || pattern.length < 3 || !pattern.endsWith(quote)) return undefined;
  const inner = pattern.slice(1, -1);
  if (inner.includes(quote) || !isGlobPattern(inner)) return undefined;
  if (quote === '"' && /^[$%]/.test(inner)) return undefined;
  return inner;
}

/**
 * Finds patterns (a rule's `tool`, `server` and `args` values) written wholly in quotes (`'*.pem'`): a quote
 * in a glob is a character of the text it meets, so such a pattern meets only a value written with the
 * quotes (`'key.pem'`), never `key.pem` — a `deny` rule so written misses what its author meant. One
 * `quoted_pattern` issue each, meant as a warning.
 */
export function findQuotedPatterns(policy: Policy): Issue[] {
  const issues: Issue[] = [];
  const check = (rule: PolicyRule, path: readonly (string | number)[], name: string, pattern: unknown): void => {
    if (typeof pattern !== "string") return;
    const inner = quotedGlob(pattern);
    if (inner === undefined) return;
    issues.push({
      code: "quoted_pattern",
      path: ["rules", rule.index, ...path],
      message: `rule \`${rule.id}\`: \`${name}\` pattern \`${showInput(pattern)}\` is wholly in quotes, and a glob's quotes are text it meets: it meets only a value written with them`,
      help: `to meet the value without them, write \`${showInput(inner)}\` (in YAML, \`"${showInput(inner)}"\` holds no quote)`,
      ...(rule.line !== undefined ? { line: rule.line } : {}),
    });
  };
  for (const rule of policy.rules) {
    check(rule, ["match", "tool"], "tool", rule.match.tool);
    check(rule, ["match", "server"], "server", rule.match.server);
    for (const [key, value] of Object.entries(rule.match.args ?? {})) check(rule, ["match", "args", key], key, value);
  }
  return issues;
}
