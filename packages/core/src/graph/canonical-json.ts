/**
 * RFC 8785 (JCS) canonical JSON through the `canonicalize` package, typed. The package is CommonJS and
 * its type declaration claims an ES default export; this resolves the function either way.
 */
import canonicalizeImport from "canonicalize";

type Canonicalize = (value: unknown) => string | undefined;

const canonicalizeFn: Canonicalize = canonicalizeImport.default ?? canonicalizeImport;

/** The canonical JSON text of a value; throws when the value has none (NaN, Infinity, undefined, cycles). */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeFn(value);
  if (text === undefined) throw new Error("value has no canonical JSON form");
  return text;
}
