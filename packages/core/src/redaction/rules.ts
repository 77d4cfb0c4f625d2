/** What replaces a redacted value in the audit, logs and results. */
export const REDACTED = "[REDACTED]";

/**
 * Which values are hidden. `keys` are case-insensitive wildcard patterns over object key names (`*` any
 * run of characters, `?` one character; the whole name must match): the value under a matching key is
 * replaced whole. `values` are regular expressions searched in every string (and key name); each match
 * is replaced, the rest of the string kept.
 */
export interface RedactionRules {
  readonly keys: readonly string[];
  readonly values: readonly RegExp[];
}

/** Key-name patterns redacted by default (the union of what the audit, the vault and the consent channels hid). */
export const DEFAULT_REDACTED_KEYS: readonly string[] = [
  "*token*",
  "*password*",
  "*passwd*",
  "*passphrase*",
  "pass",
  "*secret*",
  "*authorization*",
  "*cookie*",
  "*api_key*",
  "*apikey*",
  "*api-key*",
  "*private_key*",
  "*privatekey*",
  "*private-key*",
];

/**
 * Value patterns redacted by default: bearer/basic credentials, the password of a URL's userinfo
 * (`postgres://acp:[REDACTED]@db/acp`: scheme, user and host stay readable), common API-key shapes, JWTs,
 * PEM private keys.
 */
export const DEFAULT_REDACTED_VALUES: readonly RegExp[] = [
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /(?<=\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#@]+(?=@)/g,
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** The default rules: {@link DEFAULT_REDACTED_KEYS} and {@link DEFAULT_REDACTED_VALUES}. */
export const DEFAULT_REDACTION: RedactionRules = { keys: DEFAULT_REDACTED_KEYS, values: DEFAULT_REDACTED_VALUES };

/** Rules that hide nothing by pattern (only known secret values, when a redactor is given some). */
export const NO_PATTERNS: RedactionRules = { keys: [], values: [] };

/** The defaults plus more patterns (duplicates dropped). */
export function extendRedaction(extra: RedactionRules, base: RedactionRules = DEFAULT_REDACTION): RedactionRules {
  const keys = [...new Set([...base.keys, ...extra.keys])];
  const seen = new Set(base.values.map((re) => `${re.source}/${re.flags}`));
  const values = [...base.values];
  for (const re of extra.values) {
    const id = `${re.source}/${re.flags}`;
    if (!seen.has(id)) values.push(re);
    seen.add(id);
  }
  return { keys, values };
}
