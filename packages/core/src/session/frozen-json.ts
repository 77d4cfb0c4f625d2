import { tryCanonicalJson, type JsonValue } from "../canonical-json/index.js";
import { fail, ok, type Result } from "../issues/index.js";

/** Freezes a value and everything reachable from it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

/**
 * A deep-frozen private copy of plain JSON: later changes to the caller's object cannot reach it, and
 * nobody can change the copy. Anything that is not plain I-JSON is an issue (`not_plain_json`).
 */
export function toFrozenJson(value: unknown, what: string): Result<JsonValue> {
  const canonical = tryCanonicalJson(value);
  if (!canonical.ok) {
    return fail(
      canonical.issues.map((i) => ({ code: "not_plain_json", path: i.path, message: `${what}: ${i.message}` })),
    );
  }
  return ok(deepFreeze(JSON.parse(canonical.value) as JsonValue));
}
