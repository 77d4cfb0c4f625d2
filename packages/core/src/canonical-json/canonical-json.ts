import canonicalizeModule from "canonicalize";
import { fail, ok, type Issue, type Result, ValidationError } from "../issues/index.js";

// The package is CommonJS (`module.exports = serialize`) but its typings declare an ES default export;
// under NodeNext the default import is `module.exports` itself, the function.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** A JSON value as RFC 8785 accepts it: no `undefined`, functions, symbols, bigints, NaN or Infinity. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Deepest nesting we canonicalize; deeper input is refused rather than risking the stack. */
export const MAX_CANONICAL_DEPTH = 128;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function issue(path: readonly (string | number)[], message: string): Issue {
  return { code: "not_canonical_json", path, message };
}

function checkString(value: string, path: readonly (string | number)[]): Issue | undefined {
  return LONE_SURROGATE.test(value) ? issue(path, "string holds a lone surrogate (not valid I-JSON)") : undefined;
}

/** Walks a value and returns the first reason it is not plain I-JSON, or undefined when it is. */
function findNonJson(value: unknown, path: (string | number)[], depth: number): Issue | undefined {
  if (depth > MAX_CANONICAL_DEPTH) return issue(path, `nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (value === null || typeof value === "boolean") return undefined;
  if (typeof value === "string") return checkString(value, path);
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : issue(path, `number \`${String(value)}\` is not finite`);
  }
  if (typeof value !== "object") return issue(path, `a ${typeof value} is not a JSON value`);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNonJson(value[i], [...path, i], depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return issue(path, "only plain objects are JSON objects");
  for (const [key, child] of Object.entries(value)) {
    const badKey = checkString(key, [...path, key]);
    if (badKey !== undefined) return badKey;
    const found = findNonJson(child, [...path, key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The RFC 8785 (JCS) canonical form of a JSON value: keys sorted by UTF-16 code units, no whitespace,
 * ECMAScript number formatting. Anything that is not plain I-JSON (undefined, functions, bigints,
 * non-finite numbers, class instances, lone surrogates, nesting deeper than 128) is an issue, never
 * silently dropped or coerced.
 */
export function tryCanonicalJson(value: unknown): Result<string> {
  const found = findNonJson(value, [], 0);
  if (found !== undefined) return fail([found]);
  const text = canonicalize(value);
  if (text === undefined) return fail([issue([], "value has no JSON form")]);
  return ok(text);
}

/** Whether two values have the same canonical JSON (false when either has none): equal as JSON, key order aside. */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  const x = tryCanonicalJson(a);
  const y = tryCanonicalJson(b);
  return x.ok && y.ok && x.value === y.value;
}

/** Like {@link tryCanonicalJson} but throws a {@link ValidationError} on input that is not plain JSON. */
export function canonicalJson(value: unknown): string {
  const result = tryCanonicalJson(value);
  if (!result.ok) throw new ValidationError("cannot canonicalize", result.issues);
  return result.value;
}

/** The UTF-8 bytes of the canonical form; what gets hashed and signed. */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}
