import { isMap, type Node } from "yaml";
import type { Category, RiskLevel } from "../request/index.js";
import {
  describeNode,
  offsetOf,
  readMappingFields,
  report,
  type NodePath,
  type ReadContext,
  type Scope,
} from "./node-reader.js";
import { CATEGORY_SHAPE } from "./read-match.js";
import { RISK_LEVEL_SHAPE } from "./read-rule.js";
import { readEnum, readGlob } from "./read-scalars.js";
import type { ClassificationOverride } from "./types.js";

/** The keys of one `classify:` entry. */
export const CLASSIFY_KEYS = ["tool", "server", "category", "risk_level"] as const;

const CLASSIFY_SYNONYMS: Readonly<Record<string, string>> = {
  level: "risk_level",
  risk: "risk_level",
  name: "tool",
  tools: "tool",
};

/**
 * Reads entry `index` of the top-level `classify:` list: `tool` (exact or glob, required), optional
 * `server` glob, and `category` and/or `risk_level` (at least one). Problems become issues in `ctx`.
 */
export function readClassification(
  ctx: ReadContext,
  node: Node | null,
  index: number,
  path: NodePath,
): ClassificationOverride | undefined {
  const scope: Scope = { path, prefix: `while reading classify entry ${index + 1}: ` };
  const start = offsetOf(node);
  if (node === null || !isMap(node)) {
    const message = `${scope.prefix}an entry must be a mapping with \`tool\` and \`category\` or \`risk_level\`, got ${describeNode(node)}`;
    report(ctx, start, "wrong_type", path, message);
    return undefined;
  }
  const fields = readMappingFields(ctx, node, scope, {
    name: "classify",
    nameInMessages: false,
    known: CLASSIFY_KEYS,
    synonyms: CLASSIFY_SYNONYMS,
  });
  const toolField = fields.get("tool");
  const serverField = fields.get("server");
  const categoryField = fields.get("category");
  const riskField = fields.get("risk_level");
  const tool = toolField !== undefined ? readGlob(ctx, scope, toolField) : undefined;
  const server = serverField !== undefined ? readGlob(ctx, scope, serverField) : undefined;
  const category: Category | undefined =
    categoryField !== undefined ? readEnum(ctx, scope, categoryField, CATEGORY_SHAPE) : undefined;
  const risk: RiskLevel | undefined =
    riskField !== undefined ? readEnum(ctx, scope, riskField, RISK_LEVEL_SHAPE) : undefined;
  if (toolField === undefined) {
    report(ctx, start, "missing_key", [...path, "tool"], `${scope.prefix}missing \`tool\``, 'like `tool: "send_*"`');
  }
  if (categoryField === undefined && riskField === undefined) {
    const message = `${scope.prefix}sets neither \`category\` nor \`risk_level\``;
    report(ctx, start, "empty_classification", path, message, "add one or both, or remove the entry");
  }
  if (tool === undefined) return undefined;
  return {
    tool,
    ...(server !== undefined ? { server } : {}),
    ...(category !== undefined ? { category } : {}),
    ...(risk !== undefined ? { risk_level: risk } : {}),
  };
}
