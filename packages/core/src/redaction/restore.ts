import type { Redactor } from "./redactor.js";

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Puts secrets back into arguments a person edited after seeing them redacted: wherever the edit still
 * reads exactly what was shown for the original at the same path (the whole placeholder, or a string
 * with some parts redacted), the original value is used. A person never sees a secret, and editing the
 * other arguments does not wipe it. `redact` must be the redactor that produced what was shown; it is
 * run once over the whole original, so a string is compared with what was shown for it in its place
 * (under a secret-named key a string with spaces or shell metacharacters is shown with its runs
 * hidden, which the same string elsewhere is not).
 */
export function restoreRedacted(
  original: unknown,
  edited: unknown,
  redact: Redactor,
  placeholder: string,
  depth = 0,
): unknown {
  return restoreAt(original, redact(original), edited, placeholder, depth);
}

function restoreAt(original: unknown, shown: unknown, edited: unknown, placeholder: string, depth: number): unknown {
  if (depth > 128 || original === undefined) return edited;
  if (typeof edited === "string") {
    if (edited === placeholder) return original;
    return typeof original === "string" && original !== edited && shown === edited ? original : edited;
  }
  if (Array.isArray(edited) && Array.isArray(original)) {
    const shownList = Array.isArray(shown) ? (shown as unknown[]) : [];
    return edited.map((item, i) => restoreAt(original[i], shownList[i], item, placeholder, depth + 1));
  }
  if (isPlainObject(edited) && isPlainObject(original)) {
    const shownRecord = isPlainObject(shown) ? shown : {};
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(edited)) {
      const value = restoreAt(
        Object.hasOwn(original, key) ? original[key] : undefined,
        Object.hasOwn(shownRecord, key) ? shownRecord[key] : undefined,
        inner,
        placeholder,
        depth + 1,
      );
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return edited;
}
