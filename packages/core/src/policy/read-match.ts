import { isMap, isSeq, type Node } from "yaml";
import { CATEGORIES, type Category } from "../request/index.js";
import {
  readMappingFields,
  report,
  reportType,
  scalarValue,
  type Field,
  type ReadContext,
  type Scope,
} from "./node-reader.js";
import { checkGlob, isNullField, readEnum, readGlob } from "./read-scalars.js";
import type { ArgMatchValue, RuleMatch } from "./types.js";
import { showInput } from "./show-input.js";

/** The keys of a rule's `match`. */
export const MATCH_KEYS = ["tool", "category", "server", "args"] as const;

const MATCH_SYNONYMS: Readonly<Record<string, string>> = {
  name: "tool",
  tool_name: "tool",
  tools: "tool",
  arguments: "args",
  params: "args",
  parameters: "args",
  servers: "server",
  categories: "category",
};

/** Shared by every reader of a category (`match.category`, `classify[].category`). */
export const CATEGORY_SHAPE = { values: CATEGORIES, code: "unknown_category", noun: "category" } as const;

const ARG_PATH = /^[^.]+(\.[^.]+)*$/;

function readArgValue(ctx: ReadContext, scope: Scope, field: Field): ArgMatchValue | undefined {
  const node = field.node;
  if (node !== null && isMap(node)) {
    const help = `match nested keys with a dotted path, like \`${showInput(field.name)}.address: "…"\``;
    reportType(ctx, scope, field, "a string, number, boolean or null", help);
    return undefined;
  }
  if (node !== null && isSeq(node)) {
    reportType(ctx, scope, field, "a string, number, boolean or null", "a list cannot be matched; use one glob");
    return undefined;
  }
  const value = scalarValue(node);
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string") return checkGlob(ctx, scope, field, value) ? value : undefined;
  reportType(ctx, scope, field, "a string, number, boolean or null");
  return undefined;
}

function readArgs(ctx: ReadContext, scope: Scope, field: Field): Record<string, ArgMatchValue> | undefined {
  if (isNullField(field)) return {};
  if (field.node === null || !isMap(field.node)) {
    reportType(ctx, scope, field, "a mapping of argument paths to values or globs", 'like `args: { path: "/tmp/*" }`');
    return undefined;
  }
  const args: [string, ArgMatchValue][] = [];
  let ok = true;
  const fields = readMappingFields(
    ctx,
    field.node,
    { ...scope, path: field.path },
    {
      name: "args",
      nameInMessages: true,
      known: undefined,
    },
  );
  for (const [key, arg] of fields) {
    if (!ARG_PATH.test(key)) {
      const message = `${scope.prefix}invalid argument path \`${showInput(key)}\` in \`args\``;
      report(
        ctx,
        arg.keyOffset,
        "invalid_arg_path",
        arg.path,
        message,
        "dotted paths like `to.address` have no empty parts",
      );
      ok = false;
      continue;
    }
    const value = readArgValue(ctx, scope, arg);
    if (value === undefined) ok = false;
    else args.push([key, value]);
  }
  return ok ? Object.fromEntries(args) : undefined;
}

/**
 * Reads a rule's `match`. A missing or empty `match` (also `match:` with nothing) matches every call.
 * Returns `undefined` when an issue was reported.
 */
export function readMatch(ctx: ReadContext, scope: Scope, field: Field | undefined): RuleMatch | undefined {
  if (field === undefined || isNullField(field)) return {};
  const node: Node | null = field.node;
  if (node === null || !isMap(node)) {
    reportType(ctx, scope, field, "a mapping of tool, category, server and args");
    return undefined;
  }
  const before = ctx.issues.length;
  const inner: Scope = { ...scope, path: field.path };
  const fields = readMappingFields(ctx, node, inner, {
    name: "match",
    nameInMessages: true,
    known: MATCH_KEYS,
    synonyms: MATCH_SYNONYMS,
  });
  const match: { tool?: string; category?: Category; server?: string; args?: Record<string, ArgMatchValue> } = {};
  const tool = fields.get("tool");
  const category = fields.get("category");
  const server = fields.get("server");
  const args = fields.get("args");
  if (tool !== undefined) {
    const value = readGlob(ctx, inner, tool);
    if (value !== undefined) match.tool = value;
  }
  if (category !== undefined) {
    const value = readEnum(ctx, inner, category, CATEGORY_SHAPE);
    if (value !== undefined) match.category = value;
  }
  if (server !== undefined) {
    const value = readGlob(ctx, inner, server);
    if (value !== undefined) match.server = value;
  }
  if (args !== undefined) {
    const value = readArgs(ctx, inner, args);
    if (value !== undefined) match.args = value;
  }
  return ctx.issues.length === before ? match : undefined;
}
