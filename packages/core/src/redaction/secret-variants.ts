import { Buffer } from "node:buffer";

/**
 * The spellings a known secret takes when a server echoes it back: an upstream that puts an injected
 * API key into a URL (`?key=ab%2Bcd%3D`), into JSON text (`"pa\"ss"`, `"caf\u00e9"` from Python's
 * `json.dumps`), into a `Basic` header it dumps in an error (`base64(user:secret)`), or into a hex dump
 * returns the secret without a single verbatim occurrence; so does one that changes the line breaks of a key of several
 * lines. These are what the redactor hides besides the secret itself.
 */
export interface SecretSpellings {
  /** The secrets themselves, non-empty, each once (with the other line breaks of one of several lines). */
  readonly raw: readonly string[];
  /** The secrets and their JSON-escaped, base64 and hex spellings, non-empty, deduplicated, longest first. */
  readonly strings: readonly string[];
  /** One pattern per secret: it with any of its characters percent-encoded, and its letters in either case. */
  readonly percentEncoded: readonly RegExp[];
  /**
   * The secrets that have letters, in lower case: a string that holds one of these in lower case may hold
   * the secret in other case (an upstream that upper-cases what it echoes), which `percentEncoded` finds.
   */
  readonly folded: readonly string[];
}

/**
 * Shortest base64 run hidden: a shorter one (of a short secret) is too likely to occur by chance in
 * other base64 text.
 */
const MIN_BASE64_RUN = 8;

const unicodeEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * A JSON string's body as JSON.stringify writes it; with every non-ASCII code unit as `\uXXXX` (Python,
 * Java); with `<`, `>` and `&` as `\u003c`, `\u003e`, `\u0026` besides (Go's `encoding/json`, which
 * escapes them for HTML); and with `/` as `\/` (PHP's `json_encode`).
 */
function jsonSpellings(secret: string): string[] {
  const standard = JSON.stringify(secret).slice(1, -1);
  const ascii = standard.replace(/[^\x20-\x7e]/g, unicodeEscape);
  const html = standard.replace(/[<>&\u2028\u2029]/g, unicodeEscape);
  return [standard, ascii, html, ascii.replace(/[<>&]/g, unicodeEscape), standard.replace(/\//g, "\\/")];
}

/**
 * The hex of the secret's UTF-8 bytes, in lower and upper case (a server that dumps a header or a buffer
 * as hex); none for a secret of fewer than 4 bytes (its 8 digits are too likely in other hex text).
 */
function hexSpellings(secret: string): string[] {
  const hex = Buffer.from(secret, "utf8").toString("hex");
  return hex.length < MIN_BASE64_RUN ? [] : [hex, hex.toUpperCase()];
}

/**
 * The part of the base64 of `secret` that does not depend on the bytes around it, for each of the three
 * offsets it can start at within a 3-byte group (so `Basic base64("user:" + secret)` is found too), in the
 * standard and the URL-safe alphabets.
 */
function base64Spellings(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const total = offset + bytes.length;
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const start = [0, 2, 3][offset] as number;
    const end = 4 * Math.floor(total / 3) + (total % 3);
    const run = encoded.slice(start, end);
    if (run.length >= MIN_BASE64_RUN) out.push(run, run.replace(/\+/g, "-").replace(/\//g, "_"));
  }
  return out;
}

function hexClass(digit: string): string {
  return /[A-F]/.test(digit) ? `[${digit}${digit.toLowerCase()}]` : digit;
}

/**
 * A pattern matching `secret` with any of its characters percent-encoded (hex in either case, a space
 * also as `+`) and its letters in either case: each character is itself or its UTF-8 bytes as `%XX`.
 * Linear: the alternatives of one
 * character start with different characters (`%` itself is taken only encoded, a raw `%` being no
 * percent-encoding), so an attempt fails or goes on after one look at each character.
 */
function percentPattern(secret: string): RegExp {
  let source = "";
  for (const char of secret) {
    const encoded = [...Buffer.from(char, "utf8")]
      .map((byte) => {
        const hex = byte.toString(16).toUpperCase().padStart(2, "0");
        return `%${hexClass(hex[0] as string)}${hexClass(hex[1] as string)}`;
      })
      .join("");
    const plain = char.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
    const options = char === "%" ? [encoded] : char === " " ? [plain, encoded, "\\+"] : [plain, encoded];
    source += `(?:${options.join("|")})`;
  }
  return new RegExp(source, "gi");
}

/**
 * A secret of several lines (a PEM key in the vault) as written and with its line breaks as LF and as
 * CRLF: a server on another system, or a library that normalises text, returns it with the other ones.
 */
export function lineEndings(secret: string): string[] {
  if (!/[\r\n]/.test(secret)) return [secret];
  const lf = secret.replace(/\r\n?/g, "\n");
  return [secret, lf, lf.replace(/\n/g, "\r\n")];
}

/** Every spelling of every known secret (see {@link SecretSpellings}); empty secrets are ignored. */
export function spellSecrets(secrets: readonly string[]): SecretSpellings {
  const strings = new Set<string>();
  const percentEncoded: RegExp[] = [];
  const folded = new Set<string>();
  const raw: string[] = [];
  for (const secret of new Set(secrets.flatMap(lineEndings))) {
    if (secret.length === 0) continue;
    raw.push(secret);
    strings.add(secret);
    for (const spelling of [...jsonSpellings(secret), ...base64Spellings(secret), ...hexSpellings(secret)]) {
      strings.add(spelling);
    }
    percentEncoded.push(percentPattern(secret));
    if (secret.toLowerCase() !== secret.toUpperCase()) folded.add(secret.toLowerCase());
  }
  return { strings: [...strings].sort((a, b) => b.length - a.length), percentEncoded, folded: [...folded], raw };
}
