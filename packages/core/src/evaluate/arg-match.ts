import { spendWork } from "../glob/index.js";
import { keysReadAs } from "./arg-keys.js";
import type { LeafTest } from "./leaf-test.js";

// the pieces a compiled `args:` entry is made of, named here too for the code and tests that import them from here
export { compileLeafTest, type LeafTest } from "./leaf-test.js";
export { patternTails } from "./leaving-paths.js";
export { addressesIn, isAddressPattern } from "./mail-addresses.js";
export { homePatterns, urlPatterns } from "./pattern-forms.js";

/** One compiled `args:` entry. */
export interface CompiledArgMatch {
  /** The key as written (`to`, `options.recipient.domain`). */
  readonly key: string;
  readonly path: readonly string[];
  readonly test: LeafTest;
}

/** How deep arrays may nest inside the argument a rule looks at; deeper input is refused, never matched. */
export const MAX_ARRAY_NESTING = 32;

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

/**
 * What a value is when it is not one JSON text can give (a request evaluated without the pipeline's check in
 * front): `undefined` for a JSON value. A deny rule's test missed such a value (`NaN`, an infinity, a `Date`)
 * and let the call through, so a rule that reads one refuses instead.
 */
function notJson(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : "a non-finite number";
    case "object": {
      if (value === null || Array.isArray(value)) return undefined;
      const proto: unknown = Object.getPrototypeOf(value);
      return proto === Object.prototype || proto === null ? undefined : "an object that is not a plain one";
    }
    default:
      return `a value of type ${typeof value}`;
  }
}

function resolve(value: unknown, arg: CompiledArgMatch, depth: number, every: boolean, nesting: number): boolean {
  spendWork(1); // every value visited counts against the decision's work budget
  const bad = notJson(value);
  if (bad !== undefined) throw new TypeError(`invalid request: argument \`${arg.key}\` holds ${bad}, not a JSON value`);
  if (Array.isArray(value)) {
    if (nesting >= MAX_ARRAY_NESTING) {
      throw new RangeError(`argument \`${arg.key}\` nests arrays deeper than ${MAX_ARRAY_NESTING} levels`);
    }
    return quantify(value, every, (item) => resolve(item, arg, depth, every, nesting + 1));
  }
  if (depth === arg.path.length) return arg.test(value);
  const segment = arg.path[depth] as string;
  if (!isPlainRecord(value)) return false;
  if (!every) {
    // an ask or deny rule: the key as written first, then every key a server may read as it (`Path`, `PATH`)
    if (Object.hasOwn(value, segment) && resolve(value[segment], arg, depth + 1, every, nesting)) return true;
    for (const key of keysReadAs(value, segment)) {
      if (key !== segment && resolve(value[key], arg, depth + 1, every, nesting)) return true;
    }
    return false;
  }
  // an allow rule: the key as written, and every key a server may read as it matches too (which one it reads
  // is not known: `{"path": "/tmp/x", "PATH": "/etc/passwd"}` is not allowed by `path: /tmp/**`)
  if (!Object.hasOwn(value, segment) || !resolve(value[segment], arg, depth + 1, every, nesting)) return false;
  for (const key of keysReadAs(value, segment)) {
    if (key !== segment && !resolve(value[key], arg, depth + 1, every, nesting)) return false;
  }
  return true;
}

/**
 * Whether the request arguments satisfy one `args:` entry. The dotted path walks own keys of nested
 * objects; a missing key never matches. Arrays met on the way or at the end are quantified, biased toward
 * security: with `every` (allow rules) each element must match, with `any` (ask and deny rules) one is
 * enough; an empty array never matches. Objects where a scalar is expected never match. Keys a server may
 * read as the one named ({@link keysReadAs}: `Path`, `PATH`, `ｐａｔｈ`, `filePath` for `file_path`) are
 * quantified the same way: any one of them for ask and deny rules, and for an allow rule the key as written
 * must be there and it and every such key must match. The keys of an object are indexed once a decision
 * (the work budget's epoch): call it inside a budget. A value on the path that JSON cannot hold (`NaN`, an
 * infinity, `undefined`, a bigint, a `Date`, an array's hole) throws a TypeError (the evaluator refuses).
 */
export function matchArg(args: Readonly<Record<string, unknown>>, arg: CompiledArgMatch, every: boolean): boolean {
  return resolve(args, arg, 0, every, 0);
}
