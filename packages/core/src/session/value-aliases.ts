/**
 * Aliases: the spellings a reader takes for the same destination as an identifier untrusted text gave, though
 * the characters differ — a look-alike letter (`mаrk@…` with Cyrillic `а`) or an accent, a `+tag` on an address
 * (`mark+x@attacker.example` reaches `mark@attacker.example`), dots in a Gmail address (`m.ark@gmail.com`), a number written with spaces, dashes or a
 * country code (`020 7946 0958`, `+44 20 7946 0958`), a host under a domain the text named
 * (`exfil.attacker.example` under `attacker.example`), an identifier inside a Base64 or percent-encoded run.
 * Used only on the untrusted side (a piece no entry holds as written, but an untrusted one holds as an alias, is
 * tainted): a fold there can only ask more. Trust never follows an alias: a look-alike of the user's address is
 * another address.
 */
import { decodeEmbeddedText } from "./encoded-text.js";
import { latinSkeleton } from "./instruction-detector.js";
import { numberAliases, numbersOf } from "./number-aliases.js";
import {
  comparableText,
  extractValueTokens,
  sameIpv4Hosts,
  urlHost,
  type PieceKind,
  type ValueToken,
} from "./value-tokens.js";

/** Most alias forms kept for one text (past it, an identifier is matched as written only). */
export const MAX_ALIASES_PER_TEXT = 10_000;

/** `[dot]`, `(dot)`, ` dot `: a dot spelt out (`attacker [dot] example`). White space is bounded: no backtracking. */
const SPELLED_DOT = /\s{0,3}[[({<]\s{0,3}dot\s{0,3}[\])}>]\s{0,3}|\s{1,3}dot\s{1,3}(?=\p{L})/giu;
/** `[at]`, `(at)`, or ` at ` before a host (`mark at attacker.example`, once the dots are read). */
const SPELLED_AT = /\s{0,3}[[({<]\s{0,3}at\s{0,3}[\])}>]\s{0,3}|\s{1,3}at\s{1,3}(?=[\p{L}\p{N}-]+\.\p{L})/giu;

/**
 * The text with an address spelt out as people write one to keep it from harvesters read as the address
 * (`mark [at] attacker [dot] example`, `mark at attacker dot example`), or undefined when nothing is spelt out.
 */
function spelledOut(text: string): string | undefined {
  if (!/\b(?:at|dot)\b/i.test(text)) return undefined;
  const dotted = text.replace(SPELLED_DOT, ".");
  const out = dotted.replace(SPELLED_AT, "@");
  return out === text ? undefined : out;
}

/** What untrusted text gives as aliases of its identifiers. */
export interface TextAliases {
  /** `email:`, `url:`, `host:`, `iban:` forms that differ from the text's own tokens, and `domain:` of each host. */
  readonly forms: ReadonlySet<string>;
  /** Every number of 8 to 34 digits not kept among `runs`, as its digits, each between spaces (`numberAliases`). */
  readonly digits: string;
  /**
   * Every run of groups of digits that may hold a number glued to others (`4111.1111.1111.1111.200`, its groups
   * joined by `.`: `numberAliases`), each between spaces.
   */
  readonly runs: string;
  /** Characters they hold: counted in the session's store as its text is ({@link textAliases}' `room`). */
  readonly chars: number;
  /** Whether some were not kept for want of the session's room (the entry then counts as cut). */
  readonly cut: boolean;
}

/** An address without its `+tag` (`mark+x@a.example` is delivered to `mark@a.example`). */
function untagged(email: string): string {
  const at = email.lastIndexOf("@");
  const plus = email.indexOf("+", 1);
  return plus === -1 || plus > at ? email : `${email.slice(0, plus)}${email.slice(at)}`;
}

/**
 * Providers that deliver an address whatever dots its local part has, by the domain their addresses are
 * delivered at: Gmail (`a.l.i.c.e@gmail.com` is `alice@gmail.com`) and its other name `googlemail.com`.
 * Only providers that say so of every address: others (Outlook, Yahoo, iCloud, a company's own domain, a
 * Google Workspace domain) deliver `a.lice@` and `alice@` to two mailboxes.
 */
const DOTLESS_PROVIDERS: ReadonlyMap<string, string> = new Map([
  ["gmail.com", "gmail.com"],
  ["googlemail.com", "gmail.com"],
]);

/** The mailbox a provider of {@link DOTLESS_PROVIDERS} delivers an (untagged) address to; else undefined. */
function providerMailbox(email: string): string | undefined {
  const at = email.lastIndexOf("@");
  const domain = DOTLESS_PROVIDERS.get(email.slice(at + 1));
  return domain === undefined ? undefined : `${email.slice(0, at).replace(/\./g, "")}@${domain}`;
}

function formsOf(token: ValueToken, out: Set<string>): void {
  if (token.kind === "email") {
    const address = untagged(token.value);
    out.add(`email:${address}`);
    const mailbox = providerMailbox(address);
    if (mailbox !== undefined) out.add(`email:${mailbox}`);
    out.add(`domain:${token.value.slice(token.value.lastIndexOf("@") + 1)}`);
  } else if (token.kind === "host") {
    out.add(`host:${token.value}`);
    out.add(`domain:${token.value}`);
  } else if (token.kind === "url" || token.kind === "iban") {
    out.add(`${token.kind}:${token.value}`);
  }
}

/**
 * The aliases of untrusted text (already {@link comparableText}): its identifiers read with look-alikes folded
 * and what its Base64 and percent-encoded runs decode to, and its numbers as digits. `tokens` are the text's own
 * tokens (`kind:value`), which need no second copy. At most `room` characters are kept (forms and numbers
 * past it are dropped and `cut` is set: the session then marks its provenance incomplete). Linear in the text.
 */
export function textAliases(
  text: string,
  tokens: ReadonlySet<string>,
  room: number = Number.POSITIVE_INFINITY,
): TextAliases {
  const forms = new Set<string>();
  // what is kept, counted as the session's store counts it: each form, and each number with its space
  let chars = 0;
  let cut = false;
  const fits = (length: number): boolean => {
    if (chars + length > room) {
      cut = true;
      return false;
    }
    chars += length;
    return true;
  };
  const decoded = decodeEmbeddedText(text);
  const readings = decoded === "" ? [text] : [text, comparableText(decoded)];
  const spelled = spelledOut(text);
  if (spelled !== undefined) readings.push(spelled);
  // sets: a result repeating one number (or one run) keeps it once
  const numbers = new Set<string>();
  const runs = new Set<string>();
  for (const reading of readings) {
    const skeleton = latinSkeleton(reading);
    for (const token of extractValueTokens(skeleton)) {
      if (forms.size >= MAX_ALIASES_PER_TEXT) break;
      const found = new Set<string>();
      formsOf(token, found);
      for (const form of found) if (!tokens.has(form) && !forms.has(form) && fits(form.length)) forms.add(form);
    }
    // one by one: a result of a million numbers would overflow the stack as spread arguments
    const read = numberAliases(skeleton);
    for (const number of read.numbers)
      if (!numbers.has(number) && fits(number.length + (numbers.size === 0 ? 2 : 1))) numbers.add(number);
    for (const run of read.runs) if (!runs.has(run) && fits(run.length + (runs.size === 0 ? 2 : 1))) runs.add(run);
  }
  const spaced = (set: ReadonlySet<string>): string => (set.size === 0 ? "" : ` ${[...set].join(" ")} `);
  return { forms, digits: spaced(numbers), runs: spaced(runs), chars, cut };
}

/** What a piece of a call is looked up as among the aliases of untrusted text. */
export interface PieceAliases {
  /** Forms looked up in an entry's tokens and alias forms. */
  readonly forms: readonly string[];
  /** Domains above the piece's host (`attacker.example` for `exfil.attacker.example`), as `domain:` forms. */
  readonly parents: readonly string[];
  /** The piece's digits, when it is a number (8 to 34 digits, however grouped). */
  readonly digits: string | undefined;
}

/** The domains above `host` that are names of their own (two labels at least). */
function parentsOf(host: string): string[] {
  const labels = host.split(".");
  const out: string[] = [];
  for (let i = 1; i <= labels.length - 2; i++) out.push(`domain:${labels.slice(i).join(".")}`);
  return out;
}

/** Kinds of token a piece of each kind is looked up as (a link's host is a piece of its own). */
const ALIASED_AS: Readonly<Record<PieceKind, readonly string[]>> = {
  email: ["email"],
  host: ["host"],
  url: ["url"],
  iban: ["iban"],
  phone: [],
  account: [],
  // a whole value that is an address or an IBAN; a link in a whole value is judged as a built link
  value: ["email", "iban"],
};

/**
 * The aliases of one piece (in normal form) of a call's arguments: the piece read with look-alikes folded and
 * a `+tag` off, as the same kind of identifier; the domains above its host; its digits when it is a number.
 * Linear in the piece.
 */
export function pieceAliases(kind: PieceKind, piece: string): PieceAliases {
  const forms = new Set<string>();
  const hosts = new Set<string>();
  const link = kind === "value" && /[/?#]/.test(piece);
  const skeleton = latinSkeleton(piece);
  for (const token of link ? [] : extractValueTokens(skeleton)) {
    if (!ALIASED_AS[kind].includes(token.kind)) continue;
    formsOf(token, forms);
    if (token.kind === "email") hosts.add(token.value.slice(token.value.lastIndexOf("@") + 1));
  }
  // a host, or a whole value that is one (`exfil.attacker.example`, as a built link's host is judged)
  if ((kind === "host" || kind === "value") && !link && !/[\s@]/.test(piece)) {
    const host = urlHost(skeleton);
    if (host !== undefined) {
      forms.add(`host:${host}`);
      hosts.add(host);
      // an IPv4 address and its IPv6 spellings (`[::ffff:cb00:7109]`) reach one machine
      for (const same of sameIpv4Hosts(host)) forms.add(`host:${same}`);
    }
  }
  const parents = [...hosts].flatMap(parentsOf);
  const numbers = /^[+(]?\d[\d(). /-]*\d$/.test(piece) ? numbersOf(piece) : [];
  return {
    forms: [...forms].filter((f) => !f.startsWith("domain:")),
    parents,
    digits: numbers.length === 1 ? numbers[0] : undefined,
  };
}

/** Most parent domains of a piece asked of an earlier session's memory (`attacker.example`, `x.attacker.co.uk`). */
const MAX_RECALLED_PARENTS = 2;

/**
 * The identities (`kind:value`) an earlier session's memory is asked for besides the piece itself: its alias
 * forms, and as hosts the last {@link MAX_RECALLED_PARENTS} domains above its host (two and three labels). A
 * memory keeps identities, not text, so numbers grouped otherwise are not among them.
 */
export function recallForms(aliases: PieceAliases): string[] {
  const parents = aliases.parents
    .map((p) => p.slice("domain:".length))
    .filter((p) => p.split(".").length <= MAX_RECALLED_PARENTS + 1)
    .map((p) => `host:${p}`);
  return [...aliases.forms, ...parents];
}

/**
 * The alias forms of untrusted text an earlier session's memory keeps (`domain:` forms are not identities).
 */
export function rememberedForms(aliases: TextAliases): string[] {
  return [...aliases.forms].filter((f) => !f.startsWith("domain:"));
}
