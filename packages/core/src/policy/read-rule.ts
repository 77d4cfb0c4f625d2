import { isMap, type Node } from "yaml";
import { RISK_LEVELS, type RiskLevel } from "../request/index.js";
import { MAX_RULE_ID_LENGTH, MAX_TIMEOUT_SECONDS } from "./limits.js";
import {
  describeNode,
  offsetOf,
  readMappingFields,
  report,
  reportType,
  resolveNode,
  scalarValue,
  type Field,
  type NodePath,
  type ReadContext,
  type Scope,
} from "./node-reader.js";
import { parseRateLimit } from "./rate-limit.js";
import { readConditions } from "./read-conditions.js";
import { readMatch } from "./read-match.js";
import { readEnum, readString } from "./read-scalars.js";
import { positionAt } from "./source-position.js";
import {
  POLICY_ACTIONS,
  type PolicyAction,
  type PolicyRule,
  type RateLimit,
  type RuleMatch,
  type TimeOfDay,
} from "./types.js";
import { showInput } from "./show-input.js";

/** The keys of one rule. */
export const RULE_KEYS = [
  "id",
  "description",
  "match",
  "action",
  "level",
  "timeout",
  "rate_limit",
  "conditions",
] as const;

const RULE_SYNONYMS: Readonly<Record<string, string>> = {
  name: "id",
  risk: "level",
  risk_level: "level",
  decision: "action",
  route: "action",
  when: "conditions",
  condition: "conditions",
  ratelimit: "rate_limit",
  limit: "rate_limit",
  desc: "description",
};

/** Words people write for an action, mapped to the action they mean (suggestions only). */
export const ACTION_SYNONYMS: Readonly<Record<string, string>> = {
  accept: "allow",
  permit: "allow",
  approve: "ask",
  confirm: "ask",
  prompt: "ask",
  refuse: "deny",
  reject: "deny",
  block: "deny",
  forbid: "deny",
};

/** Shared by every reader of an action (`rules[].action`, `default_action`). */
export const ACTION_SHAPE = {
  values: POLICY_ACTIONS,
  code: "unknown_action",
  noun: "action",
  synonyms: ACTION_SYNONYMS,
} as const;

/** Shared by every reader of a risk level (`rules[].level`, `classify[].risk_level`). */
export const RISK_LEVEL_SHAPE = {
  values: RISK_LEVELS,
  code: "unknown_risk_level",
  noun: "risk level",
  synonyms: { med: "medium", mid: "medium", crit: "critical", hi: "high", lo: "low" },
} as const;

/** A rule id is a slug: lowercase letters, digits, `-` and `_`, starting with a letter or digit. */
export const RULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

/**
 * The id no rule may have: a verdict names the default action `default` (`policy:default` in a decision and
 * the audit), and a rule of that name could not be told from it.
 */
export const RESERVED_RULE_ID = "default";

/** Why {@link RESERVED_RULE_ID} is refused. */
export const RESERVED_RULE_ID_MESSAGE = "rule id `default` is reserved: verdicts name the default action `default`";

/** The id a rule gets from its 0-based position when it has no `id:`. */
export function positionalRuleId(index: number): string {
  return `rule-${index + 1}`;
}

/** A rule as read, before ids are checked for uniqueness across the policy. */
export interface ReadRule {
  readonly rule: PolicyRule;
  /** Offset of the `id` value when the id was written (for duplicate reports). */
  readonly idOffset?: number;
  readonly explicitId: boolean;
}

/** The rule's `id:` when it is a valid slug (looked up before the rest, so messages can name the rule). */
function peekId(ctx: ReadContext, node: Node): string | undefined {
  if (!isMap(node)) return undefined;
  const pair = node.items.find((item) => scalarValue(resolveNode(ctx, item.key as Node) ?? null) === "id");
  const value = scalarValue(resolveNode(ctx, (pair?.value as Node | null | undefined) ?? null) ?? null);
  return typeof value === "string" &&
    value !== RESERVED_RULE_ID &&
    RULE_ID_PATTERN.test(value) &&
    value.length <= MAX_RULE_ID_LENGTH
    ? value
    : undefined;
}

function readId(ctx: ReadContext, scope: Scope, field: Field): string | undefined {
  const value = scalarValue(field.node);
  if (typeof value === "number") {
    reportType(ctx, scope, field, "a string", `quote it: \`id: "${String(value)}"\``);
    return undefined;
  }
  const id = readString(ctx, scope, field);
  if (id === undefined) return undefined;
  if (id === RESERVED_RULE_ID) {
    const message = `${scope.prefix}${RESERVED_RULE_ID_MESSAGE}`;
    report(
      ctx,
      field.offset,
      "invalid_rule_id",
      field.path,
      message,
      "name the rule for what it matches, like `mail-rest`",
    );
    return undefined;
  }
  if (RULE_ID_PATTERN.test(id) && id.length <= MAX_RULE_ID_LENGTH) return id;
  const shown = showInput(id);
  const help = `ids are slugs of at most ${MAX_RULE_ID_LENGTH} lowercase letters, digits, \`-\` and \`_\`, like \`send-mail\``;
  report(ctx, field.offset, "invalid_rule_id", field.path, `${scope.prefix}invalid rule id \`${shown}\``, help);
  return undefined;
}

function readTimeout(ctx: ReadContext, scope: Scope, field: Field): number | undefined {
  const value = scalarValue(field.node);
  if (typeof value !== "number") {
    reportType(ctx, scope, field, "a number of seconds", "like `timeout: 300`");
    return undefined;
  }
  if (Number.isInteger(value) && value >= 1 && value <= MAX_TIMEOUT_SECONDS) return value;
  const message = `${scope.prefix}invalid timeout \`${String(value)}\` (expected whole seconds from 1 to ${MAX_TIMEOUT_SECONDS})`;
  report(ctx, field.offset, "invalid_timeout", field.path, message);
  return undefined;
}

function readRateLimit(ctx: ReadContext, scope: Scope, field: Field): RateLimit | undefined {
  const value = scalarValue(field.node);
  const text = typeof value === "number" ? undefined : readString(ctx, scope, field, 'like `rate_limit: "20/minute"`');
  if (typeof value === "number")
    reportType(ctx, scope, field, "a string `N/unit`", `like \`rate_limit: "${value}/minute"\``);
  if (text === undefined) return undefined;
  const parsed = parseRateLimit(text);
  if (parsed.ok) return parsed.value;
  for (const issue of parsed.issues) {
    report(ctx, field.offset, "invalid_rate_limit", field.path, `${scope.prefix}${issue.message}`, issue.help);
  }
  return undefined;
}

/** Mutable while it is assembled; frozen with the whole policy. */
interface RuleDraft {
  id: string;
  index: number;
  description?: string;
  match: RuleMatch;
  action: PolicyAction;
  level?: RiskLevel;
  timeout?: number;
  rate_limit?: RateLimit;
  conditions?: { readonly time_of_day?: TimeOfDay };
  line?: number;
}

/**
 * Reads the rule at `index` of `rules`. Every problem becomes an issue in `ctx`; the rule returned is only
 * meaningful when none were reported.
 */
export function readRule(ctx: ReadContext, node: Node | null, index: number, path: NodePath): ReadRule {
  const given = node !== null ? peekId(ctx, node) : undefined;
  const id = given ?? positionalRuleId(index);
  const scope: Scope = { path, prefix: `while reading rule \`${id}\`: ` };
  const start = offsetOf(node);
  const draft: RuleDraft = { id, index, match: {}, action: "deny", line: positionAt(ctx.lines, start).line };
  if (node === null || !isMap(node)) {
    const message = `${scope.prefix}a rule must be a mapping with \`match\` and \`action\`, got ${describeNode(node)}`;
    report(ctx, start, "wrong_type", path, message);
    return { rule: draft, explicitId: false };
  }
  const fields = readMappingFields(ctx, node, scope, {
    name: "rule",
    nameInMessages: false,
    known: RULE_KEYS,
    synonyms: RULE_SYNONYMS,
  });
  const idField = fields.get("id");
  if (idField !== undefined) readId(ctx, scope, idField);
  const description = fields.get("description");
  if (description !== undefined) {
    const text = readString(ctx, scope, description);
    if (text !== undefined) draft.description = text;
  }
  draft.match = readMatch(ctx, scope, fields.get("match")) ?? {};
  const action = fields.get("action");
  if (action === undefined) {
    const help = "add `action: allow`, `action: ask` or `action: deny`";
    report(ctx, start, "missing_key", [...path, "action"], `${scope.prefix}missing \`action\``, help);
  } else draft.action = readEnum(ctx, scope, action, ACTION_SHAPE) ?? "deny";
  readOptionalFields(ctx, scope, fields, draft);
  return {
    rule: draft,
    explicitId: given !== undefined,
    ...(idField !== undefined ? { idOffset: idField.offset } : {}),
  };
}

function readOptionalFields(ctx: ReadContext, scope: Scope, fields: Map<string, Field>, draft: RuleDraft): void {
  const level = fields.get("level");
  if (level !== undefined) {
    const value = readEnum(ctx, scope, level, RISK_LEVEL_SHAPE);
    if (value !== undefined) draft.level = value;
  }
  const timeout = fields.get("timeout");
  if (timeout !== undefined) {
    const value = readTimeout(ctx, scope, timeout);
    if (value !== undefined) draft.timeout = value;
  }
  const rateLimit = fields.get("rate_limit");
  if (rateLimit !== undefined) {
    const value = readRateLimit(ctx, scope, rateLimit);
    if (value !== undefined) draft.rate_limit = value;
  }
  const conditions = fields.get("conditions");
  if (conditions !== undefined) {
    const value = readConditions(ctx, scope, conditions);
    if (value !== undefined) draft.conditions = value;
  }
}
