import type { Redactor } from "./redactor.js";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Puts secrets back into arguments a person edited after seeing them redacted: wherever the edit still
 * reads exactly what was shown for the original at the same path (the whole placeholder, or a string
 * with some parts redacted), the original value is used. A person never sees a secret, and editing the
 * other arguments does not wipe it. `redact` must be the redactor that produced what was shown.
 */
export function restoreRedacted(
  original: unknown,
  edited: unknown,
  redact: Redactor,
  placeholder: string,
  depth = 0,
): unknown {
  if (depth > 128 || original === undefined) return edited;
  if (typeof edited === "string") {
    if (edited === placeholder) return original;
    return typeof original === "string" && original !== edited && redact(original) === edited ? original : edited;
  }
  if (Array.isArray(edited) && Array.isArray(original)) {
    return edited.map((item, i) => restoreRedacted(original[i], item, redact, placeholder, depth + 1));
  }
  if (isPlainObject(edited) && isPlainObject(original)) {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(edited)) {
      const value = restoreRedacted(
        Object.hasOwn(original, key) ? original[key] : undefined,
        inner,
        redact,
        placeholder,
        depth + 1,
      );
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return edited;
}
