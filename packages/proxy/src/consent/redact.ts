/** What every channel shows instead of a secret value. */
export const REDACTED = "[redacted]";

const SECRET_KEY = /token|password|passwd|secret|authorization|api[_-]?key|private[_-]?key|cookie/i;

/** Whether an argument name looks like it holds a secret (`*token*`, `*password*`, `*secret*`, `authorization`, `api_key`, …). */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function redactValue(value: unknown, depth: number): unknown {
  if (depth > 64) return REDACTED;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = isSecretKey(key) ? REDACTED : redactValue(inner, depth + 1);
  }
  return out;
}

/** A copy of the arguments with every value under a secret-looking key (at any depth) replaced by `[redacted]`. */
export function redactArguments(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return redactValue(args, 0) as Record<string, unknown>;
}

/**
 * Puts secrets back into arguments a person edited: wherever the edit still says `[redacted]` and the original
 * had a value at the same path, the original value is used. A person never sees a secret, and editing the
 * other arguments does not wipe it.
 */
export function restoreRedacted(original: unknown, edited: unknown, depth = 0): unknown {
  if (depth > 64) return edited;
  if (edited === REDACTED && original !== undefined) return original;
  if (Array.isArray(edited) && Array.isArray(original)) {
    return edited.map((item, i) => restoreRedacted(original[i], item, depth + 1));
  }
  if (isPlainObject(edited) && isPlainObject(original)) {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(edited)) out[key] = restoreRedacted(original[key], inner, depth + 1);
    return out;
  }
  return edited;
}
