import { compileRuleGlob } from "./fast-glob.js";
import type { ArgMatchValue } from "../policy/types.js";

/** A predicate over one scalar argument value. */
export type LeafTest = (leaf: unknown) => boolean;

/** One compiled `args:` entry. */
export interface CompiledArgMatch {
  /** The key as written (`to`, `options.recipient.domain`). */
  readonly key: string;
  readonly path: readonly string[];
  readonly test: LeafTest;
}

/** How deep arrays may nest inside the argument a rule looks at; deeper input is refused, never matched. */
export const MAX_ARRAY_NESTING = 32;

/**
 * Compiles the value side of an `args:` entry. A string is an exact value or a glob; it meets a string
 * argument directly and a finite number or boolean argument by its JSON text (`"22"` matches `22`,
 * `"tr*"` matches `true`), never null or an object. A number, boolean or null matches only the identical
 * JSON value (`22` does not match `"22"`). Returns an error message when the value cannot be compiled.
 */
export function compileLeafTest(expected: ArgMatchValue): LeafTest | string {
  if (typeof expected === "string") {
    const glob = compileRuleGlob(expected);
    if (!glob.ok) return glob.issues.map((i) => i.message).join("; ");
    const matches = glob.value;
    return (leaf) => {
      if (typeof leaf === "string") return matches(leaf);
      if (typeof leaf === "number") return Number.isFinite(leaf) && matches(String(leaf));
      if (typeof leaf === "boolean") return matches(leaf ? "true" : "false");
      return false;
    };
  }
  if (typeof expected === "number") {
    if (!Number.isFinite(expected)) return `non-finite number \`${String(expected)}\``;
    return (leaf) => leaf === expected;
  }
  if (typeof expected === "boolean" || expected === null) return (leaf) => leaf === expected;
  return `unsupported value of type ${typeof expected} (expected a string, number, boolean or null)`;
}

/** Splits a dotted key into its path; returns undefined when a segment is empty (`a..b`, `.a`). */
export function splitArgPath(key: string): readonly string[] | undefined {
  const path = key.split(".");
  return path.every((segment) => segment.length > 0) ? path : undefined;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function quantify(items: readonly unknown[], every: boolean, visit: (item: unknown) => boolean): boolean {
  if (items.length === 0) return false;
  if (every) {
    for (const item of items) if (!visit(item)) return false;
    return true;
  }
  for (const item of items) if (visit(item)) return true;
  return false;
}

function resolve(value: unknown, arg: CompiledArgMatch, depth: number, every: boolean, nesting: number): boolean {
  if (Array.isArray(value)) {
    if (nesting >= MAX_ARRAY_NESTING) {
      throw new RangeError(`argument \`${arg.key}\` nests arrays deeper than ${MAX_ARRAY_NESTING} levels`);
    }
    return quantify(value, every, (item) => resolve(item, arg, depth, every, nesting + 1));
  }
  if (depth === arg.path.length) return arg.test(value);
  const segment = arg.path[depth] as string;
  if (!isPlainRecord(value) || !Object.hasOwn(value, segment)) return false;
  return resolve(value[segment], arg, depth + 1, every, nesting);
}

/**
 * Whether the request arguments satisfy one `args:` entry. The dotted path walks own keys of nested
 * objects; a missing key never matches. Arrays met on the way or at the end are quantified, biased toward
 * security: with `every` (allow rules) each element must match, with `any` (ask and deny rules) one is
 * enough; an empty array never matches. Objects where a scalar is expected never match.
 */
export function matchArg(args: Readonly<Record<string, unknown>>, arg: CompiledArgMatch, every: boolean): boolean {
  return resolve(args, arg, 0, every, 0);
}
