import { compileClassificationOverrides, type CompiledOverrides } from "../classify/classify-action.js";
import type { GlobMatcher } from "../glob/index.js";
import { compileRuleGlob } from "./fast-glob.js";
import { ValidationError, type Issue, type Result } from "../issues/index.js";
import type { Reason } from "../pipeline/types.js";
import { POLICY_ACTIONS, type Policy, type PolicyRule } from "../policy/types.js";
import { RESERVED_RULE_ID, RESERVED_RULE_ID_MESSAGE } from "../policy/read-rule.js";
import { CATEGORIES, findUnreadableName, type Category } from "../request/index.js";
import { splitArgPath, type CompiledArgMatch } from "./arg-match.js";
import { compileLeafTest } from "./leaf-test.js";
import { buildRuleIndex, type RuleIndex } from "./rule-index.js";
import { widenName, type LenientName } from "./lenient-name.js";
import { LiteralSearch } from "./literal-search.js";
import { compileTimeWindow, type CompiledTimeWindow } from "./time-of-day.js";

/** One rule with every pattern compiled. */
export interface CompiledRule {
  readonly rule: PolicyRule;
  readonly tool: GlobMatcher | undefined;
  /** An ask or deny rule's folded tool pattern, when it differs from the pattern ({@link widenName}). */
  readonly foldedTool?: string;
  /** An ask or deny rule's folded server pattern, when it differs from the pattern. */
  readonly foldedServer?: string;
  readonly server: GlobMatcher | undefined;
  readonly category: Category | undefined;
  readonly args: readonly CompiledArgMatch[];
  /** Arrays in arguments: every element must match (allow rules) or any one (ask and deny rules). */
  readonly every: boolean;
  readonly window: CompiledTimeWindow | undefined;
  /** The `rule_matched` reason, built once. */
  readonly reasons: readonly Reason[];
}

/** A policy ready for evaluation: patterns compiled, rules indexed. Build once per policy load. */
export interface CompiledPolicy {
  readonly policy: Policy;
  readonly rules: readonly CompiledRule[];
  readonly index: RuleIndex;
  readonly overrides: CompiledOverrides;
  /** The `default_action` reason, built once. */
  readonly defaultReasons: readonly Reason[];
}

type Path = (string | number)[];

/** `kind` is `{ code: "…" }` so every code appears as a literal the errors-doc test can find. */
function issue(kind: { code: string }, path: Path, message: string, rule?: PolicyRule): Issue {
  const code = kind.code;
  const where = rule === undefined ? "" : `while reading rule \`${rule.id}\`: `;
  return { code, path, message: `${where}${message}`, ...(rule?.line !== undefined ? { line: rule.line } : {}) };
}

function glob(pattern: unknown, path: Path, rule: PolicyRule, issues: Issue[]): GlobMatcher | undefined {
  if (pattern === undefined) return undefined;
  if (typeof pattern !== "string") {
    issues.push(issue({ code: "invalid_glob" }, path, `\`${path.at(-1)}\` must be a string`, rule));
    return () => false;
  }
  const unreadable = findUnreadableName(pattern);
  if (unreadable !== undefined) {
    issues.push(issue({ code: "invalid_glob" }, path, `\`${path.at(-1)}\`: a name never holds ${unreadable}`, rule));
    return () => false;
  }
  const result = compileRuleGlob(pattern);
  if (result.ok) return result.value;
  for (const i of result.issues) issues.push(issue({ code: "invalid_glob" }, path, i.message, rule));
  return () => false;
}

function compileArgs(rule: PolicyRule, base: Path, issues: Issue[], search: LiteralSearch): CompiledArgMatch[] {
  const args = rule.match.args;
  if (args === undefined) return [];
  const out: CompiledArgMatch[] = [];
  for (const [key, expected] of Object.entries(args)) {
    const path = splitArgPath(key);
    if (path === undefined) {
      issues.push(issue({ code: "invalid_arg_path" }, [...base, key], `invalid argument path \`${key}\``, rule));
      continue;
    }
    const test = compileLeafTest(expected, rule.action !== "allow", search);
    if (typeof test === "string") {
      issues.push(issue({ code: "invalid_arg_value" }, [...base, key], `argument \`${key}\`: ${test}`, rule));
      continue;
    }
    out.push({ key, path, test });
  }
  return out;
}

function compileWindow(rule: PolicyRule, base: Path, issues: Issue[]): CompiledTimeWindow | undefined {
  const window = rule.conditions?.time_of_day;
  if (window === undefined) return undefined;
  const compiled = compileTimeWindow(window);
  if (typeof compiled !== "string") return compiled;
  const kind = compiled.startsWith("unknown time zone") ? { code: "invalid_timezone" } : { code: "invalid_time" };
  issues.push(issue(kind, [...base, "conditions", "time_of_day"], compiled, rule));
  return undefined;
}

function checkRule(rule: PolicyRule, position: number, base: Path, issues: Issue[]): void {
  if (rule.id === RESERVED_RULE_ID) {
    issues.push(issue({ code: "invalid_rule_id" }, [...base, "id"], RESERVED_RULE_ID_MESSAGE));
  }
  if (!(POLICY_ACTIONS as readonly string[]).includes(rule.action)) {
    const message = `unknown action \`${String(rule.action)}\` (expected allow, ask or deny)`;
    issues.push(issue({ code: "unknown_action" }, [...base, "action"], message, rule));
  }
  if (rule.index !== position) {
    const message = `rule index ${rule.index} does not match its position ${position}`;
    issues.push(issue({ code: "invalid_rule_index" }, [...base, "index"], message, rule));
  }
  const limit = rule.rate_limit;
  if (limit !== undefined && !(Number.isSafeInteger(limit.count) && limit.count > 0 && limit.windowMs > 0)) {
    issues.push(
      issue({ code: "invalid_rate_limit" }, [...base, "rate_limit"], `invalid rate limit \`${limit.text}\``, rule),
    );
  }
  const category = rule.match.category;
  if (category !== undefined && !(CATEGORIES as readonly string[]).includes(category)) {
    issues.push(
      issue({ code: "unknown_category" }, [...base, "match", "category"], `unknown category \`${category}\``, rule),
    );
  }
}

/** An ask or deny rule's tool or server matcher widened by {@link widenName}; an allow rule's as it is. */
function lenientName(rule: PolicyRule, pattern: unknown, matcher: GlobMatcher | undefined): LenientName | undefined {
  if (matcher === undefined || rule.action === "allow" || typeof pattern !== "string") return undefined;
  return widenName(pattern, matcher);
}

function compileRule(rule: PolicyRule, position: number, issues: Issue[], search: LiteralSearch): CompiledRule {
  const base: Path = ["rules", position];
  checkRule(rule, position, base, issues);
  const tool = glob(rule.match.tool, [...base, "match", "tool"], rule, issues);
  const lenient = lenientName(rule, rule.match.tool, tool);
  const server = glob(rule.match.server, [...base, "match", "server"], rule, issues);
  const lenientServer = lenientName(rule, rule.match.server, server);
  return {
    rule,
    tool: lenient?.matcher ?? tool,
    ...(lenient?.folded !== undefined ? { foldedTool: lenient.folded } : {}),
    server: lenientServer?.matcher ?? server,
    ...(lenientServer?.folded !== undefined ? { foldedServer: lenientServer.folded } : {}),
    category: rule.match.category,
    args: compileArgs(rule, [...base, "match", "args"], issues, search),
    every: rule.action === "allow",
    window: compileWindow(rule, base, issues),
    reasons: Object.freeze([
      Object.freeze({
        source: "policy" as const,
        code: "rule_matched",
        message: `rule \`${rule.id}\` matched: ${rule.action}`,
        rule: rule.id,
      }),
    ]),
  };
}

/**
 * Compiles a policy without throwing: every glob, argument path and value, time window and rate limit,
 * then the rule index. Returns issues (codes in docs/reference/errors.md) for anything that cannot be
 * compiled, so a policy built in code gets the same checks as one parsed from YAML.
 */
export function tryCompilePolicy(policy: Policy): Result<CompiledPolicy> {
  const issues: Issue[] = [];
  if (!(POLICY_ACTIONS as readonly string[]).includes(policy.default_action)) {
    const message = `unknown default action \`${String(policy.default_action)}\` (expected allow, ask or deny)`;
    issues.push(issue({ code: "unknown_action" }, ["default_action"], message));
  }
  const seen = new Set<string>();
  // the literal text of every rule's argument globs, searched for in a long value once for them all
  const search = new LiteralSearch();
  const rules = policy.rules.map((rule, position) => {
    if (seen.has(rule.id)) {
      issues.push(
        issue({ code: "duplicate_rule_id" }, ["rules", position, "id"], `duplicate rule id \`${rule.id}\``, rule),
      );
    }
    seen.add(rule.id);
    return compileRule(rule, position, issues, search);
  });
  let overrides: CompiledOverrides = { entries: [] };
  try {
    overrides = compileClassificationOverrides(policy.classify);
  } catch (err) {
    issues.push(issue({ code: "invalid_glob" }, ["classify"], err instanceof Error ? err.message : String(err)));
  }
  if (issues.length > 0) return { ok: false, issues };
  const index = buildRuleIndex(
    rules.map((c, i) => ({
      index: i,
      tool: c.rule.match.tool,
      foldedTool: c.foldedTool,
      toolMatcher: c.tool,
      server: c.rule.match.server,
      foldedServer: c.foldedServer,
      serverMatcher: c.server,
      category: c.category,
      unconditional: c.args.length === 0 && c.window === undefined,
    })),
  );
  const message = `no rule matched: default action \`${policy.default_action}\``;
  const defaultReasons = Object.freeze([Object.freeze({ source: "policy" as const, code: "default_action", message })]);
  return { ok: true, value: { policy, rules, index, overrides, defaultReasons } };
}

/**
 * Compiles a policy: precompiles its globs and builds the rule index. Throws a ValidationError carrying
 * the issues of {@link tryCompilePolicy} when the policy cannot be compiled.
 */
export function compilePolicy(policy: Policy): CompiledPolicy {
  const result = tryCompilePolicy(policy);
  if (!result.ok) throw new ValidationError("invalid policy", result.issues);
  return result.value;
}
