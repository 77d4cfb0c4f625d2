/** What to redact besides known secret values: keys whose values are hidden, and value shapes. */
export interface RedactionPatterns {
  /** A value under a key matching one of these is replaced whole. */
  readonly keys: readonly RegExp[];
  /** Any substring matching one of these (global flag not needed) is replaced. */
  readonly values: readonly RegExp[];
}

/** What replaces a redacted value. */
export const REDACTED = "[REDACTED]";

/** Default patterns: keys named like passwords, tokens, secrets, API keys; common token shapes. */
export const DEFAULT_REDACTION_PATTERNS: RedactionPatterns = {
  keys: [
    /passw(or)?d|passphrase|^pass$/i,
    /token$/i,
    /secret$/i,
    /api[_-]?key$/i,
    /^authorization$/i,
    /private[_-]?key$/i,
    /^cookie$/i,
  ],
  values: [
    /\bgh[pousr]_[A-Za-z0-9]{36,}\b/,
    /\bsk-[A-Za-z0-9_-]{20,}\b/,
    /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/,
    /\bAKIA[0-9A-Z]{16}\b/,
    /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b/,
    /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/,
  ],
};

function globalOf(re: RegExp): RegExp {
  return re.flags.includes("g") ? re : new RegExp(re.source, `${re.flags}g`);
}

function redactString(text: string, secrets: readonly string[], values: readonly RegExp[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const re of values) out = out.replace(globalOf(re), REDACTED);
  return out;
}

/**
 * Returns a deep copy of a value with every occurrence of a known secret value, every value under a
 * key matching `patterns.keys`, and every substring matching `patterns.values` replaced by
 * `[REDACTED]`. Never mutates its input. Empty secrets are ignored; longer secrets are replaced first.
 */
export function redactSecrets(
  value: unknown,
  secrets: Iterable<string>,
  patterns: RedactionPatterns = DEFAULT_REDACTION_PATTERNS,
): unknown {
  const known = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  const seen = new WeakSet<object>();
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return redactString(v, known, patterns.values);
    if (v === null || typeof v !== "object") return v;
    if (seen.has(v)) return REDACTED;
    seen.add(v);
    if (Array.isArray(v)) return v.map(walk);
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) {
      const key = redactString(k, known, []);
      const redacted = patterns.keys.some((re) => re.test(k)) ? REDACTED : walk(child);
      Object.defineProperty(out, key, { value: redacted, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  return walk(value);
}
