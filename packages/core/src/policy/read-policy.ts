import { isMap, isSeq, type Document, type Node } from "yaml";
import { HOME_ARG_WEIGHT, MAX_ARG_PATTERN_WEIGHT, MAX_CLASSIFY_ENTRIES, MAX_POLICY_RULES } from "./limits.js";
import {
  describeNode,
  offsetOf,
  readMappingFields,
  report,
  reportType,
  resolveNode,
  scalarValue,
  type Field,
  type ReadContext,
  type Scope,
} from "./node-reader.js";
import { readClassification } from "./read-classify.js";
import { ACTION_SHAPE, readRule, type ReadRule } from "./read-rule.js";
import { isNullField, readEnum } from "./read-scalars.js";
import { positionAt } from "./source-position.js";
import type { ClassificationOverride, Policy, PolicyAction, PolicyRule } from "./types.js";

/** The top-level keys of a policy file. */
export const POLICY_KEYS = ["version", "default_action", "rules", "classify"] as const;

/** The action when no rule matches and the file names none: `ask`, the safe choice. */
export const DEFAULT_POLICY_ACTION: PolicyAction = "ask";

const TOP: Scope = { path: [], prefix: "" };

function readVersion(ctx: ReadContext, field: Field | undefined, mapStart: number): void {
  if (field === undefined) {
    report(ctx, mapStart, "missing_key", ["version"], "missing `version`", 'start the file with `version: "1"`');
    return;
  }
  const value = scalarValue(field.node);
  if (value === "1" || value === 1) return;
  if (value === undefined) {
    reportType(ctx, TOP, field, '`"1"`');
    return;
  }
  const shown = describeNode(field.node);
  report(
    ctx,
    field.offset,
    "unsupported_version",
    field.path,
    `unsupported policy version: got ${shown} (expected \`"1"\`)`,
  );
}

/** The items of a list-valued top-level key (`rules`, `classify`); `null` means empty. */
function listItems(
  ctx: ReadContext,
  field: Field | undefined,
  max: number,
  code: "too_many_rules" | "too_many_classify_entries",
): readonly (Node | null)[] {
  if (field === undefined || isNullField(field)) return [];
  if (field.node === null || !isSeq(field.node)) {
    reportType(ctx, TOP, field, "a list", `each item starts with \`- \`; write \`${field.name}: []\` for none`);
    return [];
  }
  const items = field.node.items as (Node | null)[];
  if (items.length > max) {
    report(
      ctx,
      field.offset,
      code,
      field.path,
      `\`${field.name}\` holds ${items.length} entries, more than the limit of ${max}`,
    );
    return [];
  }
  return items;
}

function checkUniqueIds(ctx: ReadContext, rules: readonly ReadRule[]): void {
  const byId = new Map<string, ReadRule[]>();
  for (const read of rules) byId.set(read.rule.id, [...(byId.get(read.rule.id) ?? []), read]);
  for (const [id, group] of byId) {
    if (group.length < 2) continue;
    const positional = group.find((read) => !read.explicitId);
    const first = group[0];
    for (const read of group) {
      if (!read.explicitId || read.idOffset === undefined) continue;
      if (positional !== undefined) {
        const message = `rule id \`${id}\` is also the id of the unnamed rule ${positional.rule.index + 1}`;
        const help = "rules without `id` are named `rule-<position>`; choose another id";
        report(ctx, read.idOffset, "duplicate_rule_id", ["rules", read.rule.index, "id"], message, help);
      } else if (read !== first && first !== undefined) {
        const line = first.idOffset !== undefined ? positionAt(ctx.lines, first.idOffset).line : first.rule.line;
        const message = `duplicate rule id \`${id}\` (first used by rule ${first.rule.index + 1} at line ${line ?? 1})`;
        report(
          ctx,
          read.idOffset,
          "duplicate_rule_id",
          ["rules", read.rule.index, "id"],
          message,
          "rule ids must be unique",
        );
      }
    }
  }
}

/**
 * Refuses rules whose `args` values weigh more than {@link MAX_ARG_PATTERN_WEIGHT} together (a value holding
 * `~`, `$` or `%` counting {@link HOME_ARG_WEIGHT}): loading compiles each into several matchers, and a file
 * under the size limit could hold enough to run the process out of memory.
 */
function checkArgWeight(ctx: ReadContext, field: Field | undefined, rules: readonly ReadRule[]): void {
  let weight = 0;
  let count = 0;
  for (const read of rules) {
    for (const value of Object.values(read.rule.match.args ?? {})) {
      count++;
      weight += typeof value === "string" && /[~$%]/.test(value) ? HOME_ARG_WEIGHT : 1;
    }
  }
  if (weight <= MAX_ARG_PATTERN_WEIGHT || field === undefined) return;
  const message = `the rules' ${count} \`args\` values weigh ${weight}, more than the limit of ${MAX_ARG_PATTERN_WEIGHT} (a value with \`~\`, \`$\` or \`%\` weighs ${HOME_ARG_WEIGHT}, another 1)`;
  report(
    ctx,
    field.offset,
    "too_many_arg_patterns",
    field.path,
    message,
    "split the policy, or match with fewer patterns",
  );
}

/**
 * Reads a composed YAML document into a {@link Policy}. Every problem is recorded in `ctx.issues`; the
 * returned policy is meaningful only when none were.
 */
export function readPolicyDocument(ctx: ReadContext, doc: Document.Parsed | undefined): Policy | undefined {
  const root = resolveNode(ctx, doc?.contents ?? null);
  if (root === undefined) return undefined;
  if (root === null || scalarValue(root) === null) {
    const help = 'start with `version: "1"`, then `default_action` and `rules`';
    report(ctx, offsetOf(root), "empty_policy", [], "the policy is empty", help);
    return undefined;
  }
  if (!isMap(root)) {
    report(
      ctx,
      offsetOf(root),
      "wrong_type",
      [],
      `a policy must be a mapping with \`version\`, \`default_action\` and \`rules\`, got ${describeNode(root)}`,
    );
    return undefined;
  }
  const fields = readMappingFields(ctx, root, TOP, {
    name: "policy",
    nameInMessages: false,
    known: POLICY_KEYS,
    synonyms: { rule: "rules", default: "default_action" },
  });
  readVersion(ctx, fields.get("version"), offsetOf(root));
  const actionField = fields.get("default_action");
  const defaultAction =
    actionField !== undefined ? readEnum(ctx, TOP, actionField, ACTION_SHAPE) : DEFAULT_POLICY_ACTION;
  const rules: ReadRule[] = [];
  listItems(ctx, fields.get("rules"), MAX_POLICY_RULES, "too_many_rules").forEach((item, index) => {
    const node = resolveNode(ctx, item);
    if (node !== undefined) rules.push(readRule(ctx, node, index, ["rules", index]));
  });
  checkUniqueIds(ctx, rules);
  checkArgWeight(ctx, fields.get("rules"), rules);
  const classify: ClassificationOverride[] = [];
  listItems(ctx, fields.get("classify"), MAX_CLASSIFY_ENTRIES, "too_many_classify_entries").forEach((item, index) => {
    const node = resolveNode(ctx, item);
    const entry = node !== undefined ? readClassification(ctx, node, index, ["classify", index]) : undefined;
    if (entry !== undefined) classify.push(entry);
  });
  const ruleList: PolicyRule[] = rules.map((read) => read.rule);
  return { version: "1", default_action: defaultAction ?? DEFAULT_POLICY_ACTION, rules: ruleList, classify };
}
