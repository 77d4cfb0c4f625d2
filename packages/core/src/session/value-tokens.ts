/**
 * Identifier-like tokens in text — e-mail addresses, URLs and their hosts, IBANs, phone numbers, long account
 * numbers — each in one normal form, so the same value is recognised wherever it appears. Linear-time scans:
 * no pattern here backtracks over unbounded input.
 */
import { matchesOf } from "./each-match.js";

/** The kinds of pieces provenance tracks: identifier tokens, and `value` for a whole argument string. */
export const PIECE_KINDS = ["email", "url", "host", "iban", "phone", "account", "value"] as const;

/** One kind of tracked piece. */
export type PieceKind = (typeof PIECE_KINDS)[number];

/** One identifier found in text, in normal form (lowercase; IBANs upper case without spaces; phones digits). */
export interface ValueToken {
  readonly kind: Exclude<PieceKind, "value">;
  readonly value: string;
}

/** Most tokens taken from one text; the rest are still found by containment. */
export const MAX_TOKENS_PER_TEXT = 10_000;

const LOCAL = /[A-Za-z0-9._%+-]/;
const DOMAIN = /[\p{L}\p{N}.-]/u;
/** A character outside ASCII (an internationalised host has one). */
const NON_ASCII = /[^\p{ASCII}]/u;
/** A host name in ASCII form: labels, and a last label of letters or an IDNA one (`xn--p1ai`). */
const ASCII_HOST = /^(?:[a-z0-9-]+\.)+(?:[a-z]{2,}|xn--[a-z0-9-]{2,})$/;

/**
 * A domain in its ASCII form, lower case: an internationalised one as IDNA writes it (`аррӏе.example` is
 * `xn--80ak6aa92e.example`), so the two spellings of one host are one token; undefined when it is no domain.
 */
function asciiDomain(domain: string): string | undefined {
  let ascii = domain.toLowerCase();
  if (NON_ASCII.test(ascii)) {
    try {
      ascii = new URL(`http://${domain}`).hostname;
    } catch {
      return undefined;
    }
  }
  return ASCII_HOST.test(ascii) ? ascii : undefined;
}

/** Whether `text[at]` is an apostrophe with a letter or digit on both sides (`o'brien`). */
function innerQuote(text: string, at: number): boolean {
  return text[at] === "'" && /[A-Za-z0-9]/.test(text[at - 1] ?? "") && /[A-Za-z0-9]/.test(text[at + 1] ?? "");
}

function scanEmails(text: string, out: ValueToken[]): void {
  for (let at = text.indexOf("@"); at !== -1 && out.length < MAX_TOKENS_PER_TEXT; at = text.indexOf("@", at + 1)) {
    let start = at;
    // an apostrophe between letters is part of the address (`o'brien@…` is not `brien@…`); a quote is not
    while (start > 0 && at - start < 64 && (LOCAL.test(text[start - 1] as string) || innerQuote(text, start - 1)))
      start--;
    let end = at + 1;
    while (end < text.length && end - at < 254 && DOMAIN.test(text[end] as string)) end++;
    const local = text.slice(start, at).replace(/^[.']+/, "");
    const domain = asciiDomain(text.slice(at + 1, end).replace(/[.-]+$/, ""));
    if (local.length === 0 || domain === undefined) continue;
    out.push({ kind: "email", value: `${local.toLowerCase()}@${domain}` });
  }
}

/** A dotted-quad IPv4 address: a host as much as a name is (`http://203.0.113.9/collect`). */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** A bracketed IPv6 address (`http://[2001:db8::1]/x`). */
const IPV6 = /^\[[0-9a-f:.]{2,45}\]$/i;

/** A host whose last label is a number (decimal, `0x` hex): a browser reads the whole host as an IPv4 address. */
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:\d+|0x[0-9a-f]*)$/i;

/**
 * An IP host as a browser reads it, in one form: an IPv4 address written in hex, octal, decimal or with fewer
 * parts (`0x7f000001`, `2130706433`, `0177.0.0.1`, `127.1`) as its dotted quad, an IPv6 address compressed and
 * lower case (`[2001:DB8:0::1]` is `[2001:db8::1]`). Undefined when a browser would not load it (`1.2.3.4.5`).
 */
function canonicalIp(host: string): string | undefined {
  try {
    const canonical = new URL(`http://${host}/`).hostname;
    return IPV4.test(canonical) || IPV6.test(canonical) ? canonical : undefined;
  } catch {
    return undefined;
  }
}

/**
 * IPv6 prefixes whose last 32 bits are an IPv4 address a connection reaches: IPv4-mapped (`::ffff:`, what a
 * dual-stack socket connects to), IPv4-compatible (`::`), IPv4-translated (`::ffff:0:`) and NAT64's
 * well-known prefix (`64:ff9b::`).
 */
const EMBEDDING_PREFIXES = ["::ffff:", "::", "::ffff:0:", "64:ff9b::"] as const;

/** A compressed IPv6 host that is one of {@link EMBEDDING_PREFIXES} and two groups (`[::ffff:cb00:7109]`). */
const EMBEDDED_IPV4 = /^\[(?:::ffff:|::|::ffff:0:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/;

/**
 * The other hosts (in {@link urlHost}'s form) that reach the same IPv4 address as `host`: for a dotted quad
 * its IPv6 spellings (`203.0.113.9` is `[::ffff:cb00:7109]`, `[::cb00:7109]`, …), for such an IPv6 host the
 * dotted quad. Empty for any other host. For the untrusted side only: a host the text named however written.
 */
export function sameIpv4Hosts(host: string): string[] {
  if (IPV4.test(host)) {
    const out: string[] = [];
    for (const prefix of EMBEDDING_PREFIXES) {
      const v6 = canonicalIp(`[${prefix}${host}]`);
      if (v6 !== undefined && v6 !== host) out.push(v6);
    }
    return out;
  }
  const embedded = EMBEDDED_IPV4.exec(host);
  if (embedded === null) return [];
  const word = (parseInt(embedded[1] as string, 16) << 16) | parseInt(embedded[2] as string, 16);
  return [[24, 16, 8, 0].map((shift) => (word >>> shift) & 0xff).join(".")];
}

/**
 * The host of a URL-ish string, without scheme, credentials, port, path and a leading `www.`, in ASCII form.
 * Read as a browser reads it: a protocol-relative link (`//attacker.example/x`) has a host, a backslash ends
 * it as a slash does, percent-escapes in it are the characters they name (`%61ttacker.example`), a trailing
 * dot (`attacker.example.`) names the same host, and an IPv4 or bracketed IPv6 address is a host, in one form
 * however it is written (`http://0x7f000001/` and `http://2130706433/` are on `127.0.0.1`).
 */
export function urlHost(url: string): string | undefined {
  const rest = url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/^\/\//, "");
  const linked = rest.length !== url.length;
  let host = (rest.split(/[/?#\\]/, 1)[0] ?? "")
    .replace(/^.*@/, "")
    .replace(/:\d*$/, "")
    .replace(/\.$/, "")
    .replace(/^www\./i, "");
  if (host.includes("%")) host = host.replace(PERCENT_ASCII, (escape) => decodePercent(escape));
  if (IPV4.test(host)) return host;
  if (IPV6.test(host)) return canonicalIp(host) ?? host.toLowerCase();
  // a number alone is a host only in a link (`http://2130706433/`): as a whole value it is an amount or an id
  if (NUMERIC_LAST_LABEL.test(host) && (linked || host.includes("."))) return canonicalIp(host);
  return host === "" ? undefined : asciiDomain(host);
}

/** A URL with its host in ASCII form (see {@link asciiDomain}), lower case. */
function asciiUrl(url: string): string {
  const lower = url.toLowerCase();
  if (!NON_ASCII.test(lower)) return lower;
  const parts = /^((?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^/?#@]*@)?)([^/?#:]+)(.*)$/su.exec(lower);
  const host = parts === null ? undefined : asciiDomain(parts[2] as string);
  return parts === null || host === undefined ? lower : `${parts[1] ?? ""}${host}${parts[3] ?? ""}`;
}

const URL_PATTERN = /\b(?:https?:\/\/|ftp:\/\/|www\.)[^\s<>"'`]+/gi;

/** A link inside a link, plain or percent-encoded (`?to=https://…`, `?to=https%3A%2F%2F…`). */
const NESTED_LINK = /(?:https?|ftp)(?::|%3a)(?:\/\/|%2f%2f)/i;
/** Most links read inside one another. */
const MAX_NESTED_LINKS = 3;

function scanUrls(text: string, out: ValueToken[], depth = 0): void {
  for (const match of matchesOf(URL_PATTERN, text)) {
    if (out.length >= MAX_TOKENS_PER_TEXT) return;
    const url = asciiUrl(match[0].replace(/[.,;:!?)\]}]+$/, ""));
    out.push({ kind: "url", value: url });
    const host = urlHost(url);
    if (host !== undefined) out.push({ kind: "host", value: host });
    // the target of a redirect (`https://partner.example/r?to=https://attacker.example/c`) is a link too: it
    // is where what the link carries ends up
    const nested = depth < MAX_NESTED_LINKS ? match[0].slice(1).search(NESTED_LINK) : -1;
    if (nested !== -1) {
      const inner = match[0].slice(nested + 1).replace(PERCENT_ASCII, (escape) => decodePercent(escape));
      scanUrls(inner, out, depth + 1);
    }
  }
}

const IBAN_PATTERN = /\b[A-Za-z]{2}[0-9]{2}(?:[ .-]?[A-Za-z0-9]){11,30}\b/g;
/** The usual way to write an IBAN: capitals, digits, single spaces. */
const PLAIN_IBAN = /^[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9])+$/;
/** Fewest digits of an IBAN written another way (lower case, `-` or `.` between groups): most of one is digits. */
const MIN_IBAN_DIGITS = 10;
const PHONE_PATTERN = /(?:\+\d[\d ().-]{6,18}\d|\(\d{3}\) ?\d{3}[-. ]\d{4}|\b\d{3}[-. ]\d{3}[-. ]\d{4}\b)/g;
const ACCOUNT_PATTERN = /\b\d{8,34}\b/g;
/** A long number written in groups of three (`1,234,567,890`, `1 234 567 890`, `1.234.567.890`). */
const GROUPED_NUMBER = /\b\d{1,3}(?:[,.' ]\d{3}){2,10}\b/g;

/**
 * The IBAN a match spells, in normal form (capitals, no separators), or undefined. Trailing groups with no digit
 * are words after it (`DE89 3704 0044 0532 0130 00 now`), not part of it. `de89-3704-0044-0532-0130-00` is the
 * IBAN too; written other than in capitals and spaces it needs {@link MIN_IBAN_DIGITS} digits, which prose
 * (`at10 and then…`) does not have.
 */
function ibanOf(match: string): string | undefined {
  const groups = match.split(/[ .-]/);
  while (groups.length > 1 && !/[0-9]/.test(groups[groups.length - 1] as string)) groups.pop();
  const iban = groups.join("").toUpperCase();
  if (iban.length < 15 || iban.length > 34) return undefined;
  if (!PLAIN_IBAN.test(match) && (iban.match(/[0-9]/g)?.length ?? 0) < MIN_IBAN_DIGITS) return undefined;
  return iban;
}

function scanNumbers(text: string, out: ValueToken[]): void {
  for (const match of matchesOf(IBAN_PATTERN, text)) {
    if (out.length >= MAX_TOKENS_PER_TEXT) return;
    const iban = ibanOf(match[0]);
    if (iban !== undefined) out.push({ kind: "iban", value: iban });
  }
  for (const match of matchesOf(PHONE_PATTERN, text)) {
    const digits = match[0].replace(/[^\d]/g, "");
    if (digits.length >= 8 && digits.length <= 15 && out.length < MAX_TOKENS_PER_TEXT) {
      out.push({ kind: "phone", value: digits });
    }
  }
  for (const match of matchesOf(ACCOUNT_PATTERN, text)) {
    if (out.length >= MAX_TOKENS_PER_TEXT) return;
    out.push({ kind: "account", value: match[0] });
  }
  // the same account number with its digits grouped is the same number
  for (const match of matchesOf(GROUPED_NUMBER, text)) {
    const digits = match[0].replace(/[^\d]/g, "");
    if (digits.length < 8 || out.length >= MAX_TOKENS_PER_TEXT) continue;
    out.push({ kind: "account", value: digits });
  }
}

/** Every identifier token in the text, in normal form, at most {@link MAX_TOKENS_PER_TEXT}. */
export function extractValueTokens(text: string): ValueToken[] {
  const out: ValueToken[] = [];
  scanEmails(text, out);
  // an address percent-encoded (`mark%40evil.example`, in a link's query) is the address too
  if (PERCENT_AT.test(text))
    scanEmails(
      text.replace(PERCENT_ASCII, (escape) => decodePercent(escape)),
      out,
    );
  scanUrls(text, out);
  scanNumbers(text, out);
  return out;
}

const PERCENT_AT = /%40/i;
/** A percent-escape of a printable ASCII character (what an address is written with). */
const PERCENT_ASCII = /%(?:2[0-9a-f]|[3-6][0-9a-f]|7[0-9a-e])/gi;

function decodePercent(escape: string): string {
  return String.fromCharCode(parseInt(escape.slice(1), 16));
}

/**
 * Undoes the escapes a tool result carries when it was serialized as a quoted string (JSON, a Python
 * `repr`, YAML double quotes): a literal backslash-`n`, `r` or `t` becomes a space, `\\u0040` the character it
 * names, and an escaped quote or backslash the character itself. Without it an escaped line break glued to
 * `Before` hides the word, one glued to `emma@x.example` reads as the address `nemma@x.example`, and
 * `mark\\u0040evil.example` (Python's `json.dumps` writes every non-ASCII character so) is no address at all.
 * Applied to content as it enters a session, before tokens are taken and before the instruction scorer reads it.
 */
export function unescapeLiterals(text: string): string {
  // every escape starts with a backslash: most text has none, and needs none of the passes
  if (!text.includes("\\")) return text;
  return text
    .replace(/\\(?:[nrt]|u000[aAdD9])/g, " ")
    .replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(/\\(["'\\/])/g, "$1");
}

const CHARACTER_REFERENCE =
  /&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));|&(lt|gt|amp|quot|apos|nbsp|commat|period|sol|colon|plus|lowbar|num|percnt|quest|equals|excl);/g;
/** Named references a page may spell an address or a link with (`mark&commat;attacker&period;example`). */
const NAMED_REFERENCES: Readonly<Record<string, string>> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
  nbsp: " ",
  commat: "@",
  period: ".",
  sol: "/",
  colon: ":",
  plus: "+",
  lowbar: "_",
  num: "#",
  percnt: "%",
  quest: "?",
  equals: "=",
  excl: "!",
};

/** HTML character references (`&#64;`, `&#x40;`, `&amp;`) as the characters they name, as a browser shows them. */
export function decodeCharacterReferences(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(CHARACTER_REFERENCE, (whole, hex?: string, dec?: string, name?: string) => {
    if (name !== undefined) return NAMED_REFERENCES[name] ?? whole;
    const code = hex !== undefined ? parseInt(hex, 16) : parseInt(dec ?? "", 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** Characters no reader sees: format characters (zero-width, soft hyphen, bidi controls, tags) and variation selectors. */
const INVISIBLE = /[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu;

/**
 * Text as a reader sees it, for comparing values: compatibility forms folded (NFKC: `ｍａｒｋ＠ｅｖｉｌ．ｅｘａｍｐｌｅ`
 * is `mark@evil.example`) and invisible characters dropped (`evil\u00ad.example`, `ev\u200bil.example`). Applied
 * alike to what enters a session and to the arguments of a call, so a value copied either way still matches.
 */
export function visibleText(text: string): string {
  // NFKC leaves ASCII as it is, and no ASCII character is invisible here: most text needs neither pass
  if (ASCII_ONLY.test(text)) return text;
  return text.normalize("NFKC").replace(INVISIBLE, "");
}

// eslint-disable-next-line no-control-regex -- the whole ASCII range, control characters included
const ASCII_ONLY = /^[\u0000-\u007f]*$/;

/**
 * What provenance compares: the escapes of a serialized string undone ({@link unescapeLiterals}), HTML
 * character references decoded, and the text as a reader sees it ({@link visibleText}).
 */
export function comparableText(text: string): string {
  return visibleText(decodeCharacterReferences(unescapeLiterals(text)));
}

/** Text in the form containment is checked in: as a reader sees it, lower case, every run of white space one space. */
export function normalizeText(text: string): string {
  return visibleText(text).toLowerCase().replace(/\s+/g, " ");
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const code = ch.charCodeAt(0);
  // ASCII: the letters, the digits and `_` are its only letters, numbers and `_` (no regex run for most text)
  if (code < 0x80)
    return (
      (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x30 && code <= 0x39) ||
      code === 0x5f
    );
  return WORD_CHAR.test(ch);
}

/** 1 for the ASCII letters, digits and `_`, by code. */
const ASCII_WORD = Uint8Array.from({ length: 0x80 }, (_, code) => (isWordChar(String.fromCharCode(code)) ? 1 : 0));

/**
 * The distinct words of `text`: its maximal runs of letters, digits and `_`, as {@link containsDelimited} reads
 * them (one UTF-16 unit at a time). Every word of a piece is a whole word of any text that holds the piece on
 * word boundaries, so a text lacking one of them cannot hold it: what a word index of the session is built on.
 */
export function wordsOf(text: string): Set<string> {
  const out = new Set<string>();
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 0x20;
    // ASCII by its code (most text), anything else as isWordChar reads it
    const word = code < 0x80 ? ASCII_WORD[code] === 1 : isWordChar(text[i]);
    if (word) {
      if (start === -1) start = i;
    } else if (start !== -1) {
      out.add(text.slice(start, i));
      start = -1;
    }
  }
  return out;
}

/** Characters that join the parts of one identifier: an address, a host, a URL, a dashed number. */
const JOINERS = new Set([".", "-", "+", "@", "/", ":", "%", "~", "=", "&", "?", "#"]);

/** Longest label after a `.` still read as the end of a host (`au`, `uk`, `com`), not a new sentence. */
const MAX_TRAILING_LABEL = 3;

/** Whether an identifier goes on through `at`: a joiner there, and a letter or digit at `beyond`. */
function continuesIdentifier(text: string, at: number, beyond: number): boolean {
  return JOINERS.has(text[at] ?? "") && isWordChar(text[beyond]);
}

/**
 * Whether an identifier goes on past `end`. A `.` then a word is ambiguous: `jane@firm.com.au` goes on,
 * `www.our-company.com.They sent` ends a sentence with no space after it. The word after the dot continues the
 * identifier when it could be a host's last label (at most {@link MAX_TRAILING_LABEL} characters) or is itself
 * followed by more of an identifier.
 */
function continuesAfter(text: string, end: number): boolean {
  if (!continuesIdentifier(text, end, end + 1)) return false;
  if (text[end] !== ".") return true;
  let label = end + 1;
  while (isWordChar(text[label])) label++;
  return label - (end + 1) <= MAX_TRAILING_LABEL || continuesIdentifier(text, label, label + 1);
}

/**
 * Whether an identifier starts before `start`: a letter or digit, then a joiner (`bob.` of `bob.smith@…`,
 * `alice+`, `o'` of `o'bob@…`). A host's parent domain is not a part of another identifier: `www.` or `mail.` before
 * `example.com` names a host of that same domain's owner; nor is a scheme (`mailto:bob@…`).
 */
function continuesBefore(text: string, start: number, piece: string): boolean {
  // an apostrophe inside a local part (`o'bob@…`) makes another address; a quote before one (`'bob@…'`) does not
  if (piece.includes("@") && start >= 2 && text[start - 1] === "'" && isWordChar(text[start - 2])) return true;
  if (start < 2 || !continuesIdentifier(text, start - 1, start - 2)) return false;
  // a scheme or a label before a colon (`mailto:`, `email:`) names the same address
  if (text[start - 1] === ":") return false;
  return text[start - 1] !== "." || piece.includes("@");
}

const DIGIT = /\d/;

/**
 * Whether a number goes on across the single space at `space`, to the digit at `beyond`: digits written in
 * groups (`4111 1111 1111 1111`, `020 7946 0958`) are one number, so `4111 1111` is a part of it.
 */
function groupGoesOn(text: string, space: number, beyond: number, edge: string | undefined): boolean {
  return DIGIT.test(edge ?? "") && text[space] === " " && DIGIT.test(text[beyond] ?? "");
}

function occursDelimited(text: string, piece: string, whole: boolean): boolean {
  if (piece.length === 0) return false;
  const startsWord = isWordChar(piece[0]);
  const endsWord = isWordChar(piece[piece.length - 1]);
  for (let i = text.indexOf(piece); i !== -1; i = text.indexOf(piece, i + 1)) {
    const end = i + piece.length;
    if (startsWord && isWordChar(text[i - 1])) continue;
    if (endsWord && isWordChar(text[end])) continue;
    if (whole && startsWord && continuesBefore(text, i, piece)) continue;
    if (whole && endsWord && continuesAfter(text, end)) continue;
    if (whole && (groupGoesOn(text, i - 1, i - 2, piece[0]) || groupGoesOn(text, end, end + 1, piece.at(-1)))) continue;
    return true;
  }
  return false;
}

/**
 * Whether `piece` occurs in `text` on word boundaries: the characters around the occurrence are not letters,
 * digits or `_` (or the piece itself starts/ends with such a separator). `Fred` is not in `Frederick`.
 */
export function containsDelimited(text: string, piece: string): boolean {
  return occursDelimited(text, piece, false);
}

/**
 * Whether `piece` occurs in `text` whole: on word boundaries ({@link containsDelimited}) and not as a part of a
 * longer identifier, i.e. not joined to a letter or digit by one of `. - + @ / : % ~ = & ? #`, nor (a number)
 * to more digits by a single space: `4111 1111` is not in `4111 1111 1111 1111`.
 * `smith@partner.example` is not in `bob.smith@partner.example`, nor `jane@firm.com` in `jane@firm.com.au`,
 * nor `https://bank.example.co` in `https://bank.example.co.uk`; a sentence's final `.` still ends a word, also
 * with no space after it when a longer word follows (`www.our-company.com.They`).
 * What a trusted text vouches for is read this way: a part of an address the user typed is another address.
 */
export function containsWhole(text: string, piece: string): boolean {
  return occursDelimited(text, piece, true);
}
