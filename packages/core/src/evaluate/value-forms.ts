/**
 * The forms of a string argument value the rules read (lower case, respellings, an allow rule's readings,
 * NFKC), each made once a decision for every rule that reads it and charged once to the work budget.
 */
import { spendWork, workEpoch } from "../glob/index.js";
import { allowReadings, readingUnknown, readOtherwise } from "./allow-readings.js";
import { decodedText, type DecodedText } from "./decoded-text.js";
import { readingCost } from "./fast-glob.js";
import { MAX_DECODINGS, MAX_RESPELLED_LENGTH, respelledInFull, respellings } from "./normal-form.js";

/** Printable ASCII and line breaks, which NFKC leaves as they are. */
export const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/**
 * The ideographic full stop, which NFKC keeps (and makes of the half-width one) but IDNA (UTS #46), the WHATWG
 * URL parser and punycode's `toASCII` (nodemailer) read as the dot between a domain's labels.
 */
const IDEOGRAPHIC_FULL_STOP = /\u3002/g;

/**
 * Characters no reader sees, which UTS #46 (IDNA, the WHATWG URL parser) drops from a domain: format
 * characters (zero-width space and joiners, the soft hyphen, bidi controls, tags) and variation selectors
 * (`a@evil\u200b.com` is `a@evil.com` there). The session runtime reads text the same way (`visibleText`).
 */
const INVISIBLE = /[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu;

/** The forms of one string argument value, each made when first asked for. */
interface Forms {
  lower?: string;
  respelled?: readonly string[];
  /** The readings an allow rule's glob must meet too ({@link allowReadings}). */
  read?: readonly string[] | null;
  compat?: string | null;
  /** Whether its reading is not known ({@link readingUnknown}). */
  unknown?: boolean;
  /** For a value of several lines or over 4,096 characters, its decodings ({@link decodedText}). */
  decoded?: DecodedText;
}

/** Values whose forms one decision keeps (a request with more strings than this makes them again). */
const MAX_KEPT_FORMS = 1024;

/**
 * The forms of the string argument values read in this decision, each made once for every rule that reads
 * it (and charged once: twenty rules over one megabyte of `content` lower-case it once), and made again,
 * and charged again, in the next decision ({@link workEpoch}).
 */
const kept = { epoch: -1, forms: new Map<string, Forms>() };

function formsOf(leaf: string): Forms {
  const epoch = workEpoch();
  if (kept.epoch !== epoch) {
    kept.epoch = epoch;
    kept.forms.clear();
  }
  let forms = kept.forms.get(leaf);
  if (forms === undefined) {
    forms = {};
    if (kept.forms.size < MAX_KEPT_FORMS) kept.forms.set(leaf, forms);
  }
  return forms;
}

/** `leaf` in lower case. */
export function lowerOf(leaf: string): string {
  const f = formsOf(leaf);
  if (f.lower === undefined) {
    spendWork(readingCost(leaf));
    const lower = leaf.toLowerCase();
    f.lower = lower === leaf ? leaf : lower; // the same string: compared with it at once
  }
  return f.lower;
}

/**
 * The other spellings of a path, URL or address ({@link respellings}: its normal form, trimmed, decoded, IDNA);
 * of a value of several lines or over 4,096 characters, its normal form and its decodings ({@link decodedOf}).
 */
export function respellingsOf(leaf: string): readonly string[] {
  const f = formsOf(leaf);
  if (f.respelled === undefined) {
    spendWork(leaf.length >> 2); // a split and join, or a URL parse
    if (leaf.length <= MAX_RESPELLED_LENGTH) {
      spendWork(leaf.length >> 2); // trimmed, decoded, IDNA: a few more
      if (!PLAIN_ASCII.test(leaf)) spendWork(leaf.length >> 2); // and all that again for its NFKC form
      // decoded up to three times, and so is its NFKC form
      // (and each decoding in NFKC: as much again; and decoded again from there: as much again)
      if (leaf.includes("%")) spendWork((PLAIN_ASCII.test(leaf) ? 1 : 2) * 3 * MAX_DECODINGS * (leaf.length >> 2));
    }
    // a value of several lines or over 4,096 characters: its normal form, and its escapes decoded ({@link decodedOf})
    f.respelled = respelledInFull(leaf)
      ? respellings(leaf)
      : [...new Set([...respellings(leaf), ...decodedOf(leaf).spellings])];
    // and each spelling made (a `~` path is eight, a home's environment reference nine, a URL without a scheme two): written, normalised, kept
    for (const spelling of f.respelled) spendWork(readingCost(spelling));
  }
  return f.respelled;
}

/**
 * The readings of a value an allow rule's glob must also meet ({@link allowReadings}: its normal form,
 * decoded, `\` read as `/`), made once a decision. A value with nothing to read otherwise (no escape,
 * `\`, `.` segment, `//` or scheme) costs one scan.
 */
export function allowReadingsOf(leaf: string): readonly string[] | null {
  const f = formsOf(leaf);
  if (f.read === undefined) {
    spendWork(readingCost(leaf));
    if (!readOtherwise(leaf)) f.read = [];
    else {
      spendWork(leaf.length >> 1); // a split and join or a URL parse, trimmed, decoded: a few
      const bases = PLAIN_ASCII.test(leaf) ? 1 : 2; // the value, and its NFKC form
      if (bases === 2) spendWork(leaf.length >> 1); // the NFKC form, and all that again for it
      // each base decoded up to three times, and once more to see that it settles
      // (and each decoding in NFKC where that spells more structure, and decoded again from there: as much again)
      if (leaf.includes("%")) spendWork(bases * (3 * MAX_DECODINGS + 2) * (leaf.length >> 2));
      f.read = allowReadings(leaf);
      for (const reading of f.read ?? []) spendWork(readingCost(reading));
    }
  }
  return f.read;
}

/**
 * Whether an ask or deny rule reads `leaf` as a value whose reading is not known ({@link readingUnknown}:
 * three decodings leave it still decoding, `%2525252e`), made once a decision: a value of one line and at
 * most {@link MAX_RESPELLED_LENGTH} characters ({@link respelledInFull}) as a path or URL (a URL's query not
 * read), any other as a text, whole ({@link decodedOf}). A value without `%` costs one scan.
 */
export function unknownOf(leaf: string): boolean {
  const f = formsOf(leaf);
  if (f.unknown === undefined) {
    spendWork(readingCost(leaf));
    if (!leaf.includes("%")) f.unknown = false;
    else if (!respelledInFull(leaf)) f.unknown = decodedOf(leaf).unknown;
    else {
      // trimmed, and its NFKC form (a scan and a normalisation), each decoded up to three times and once more,
      // and so again from a decoding's NFKC form
      const bases = PLAIN_ASCII.test(leaf) ? 1 : 2;
      spendWork(bases * (2 * MAX_DECODINGS + 3) * (leaf.length >> 2));
      f.unknown = readingUnknown(leaf);
    }
  }
  return f.unknown;
}

/**
 * The decodings of a value of several lines or over 4,096 characters ({@link decodedText}: its escapes decoded
 * up to three times, its NFKC form where that spells more structure, `\` read as `/`; and whether three
 * decodings leave it still decoding), made once a decision and charged: a scan, and each pass it took (a
 * decoding, the check that one more changes nothing, an NFKC form) as a few scans.
 */
function decodedOf(leaf: string): DecodedText {
  const f = formsOf(leaf);
  if (f.decoded === undefined) {
    spendWork(readingCost(leaf));
    // at most some twenty passes, each linear in the value: charged as many as it took
    f.decoded = decodedText(leaf);
    spendWork(f.decoded.passes * (leaf.length >> 2));
  }
  return f.decoded;
}

/**
 * The NFKC form of a non-ASCII string as IDNA reads a domain (`a@ｅｖｉｌ.com` is `a@evil.com`, and so are
 * `a@evil。com`, its ideographic full stop a dot there, and `a@evil\u200b.com`, its invisible characters
 * dropped), or null when it is `leaf` itself.
 */
function compatOf(leaf: string): string | null {
  const f = formsOf(leaf);
  if (f.compat === undefined) {
    spendWork(readingCost(leaf));
    if (PLAIN_ASCII.test(leaf)) f.compat = null;
    else {
      spendWork(leaf.length >> 2);
      const nfkc = leaf.normalize("NFKC").replace(IDEOGRAPHIC_FULL_STOP, ".").replace(INVISIBLE, "");
      f.compat = nfkc === leaf ? null : nfkc;
    }
  }
  return f.compat;
}

/**
 * Whether the NFKC form of a non-ASCII string ({@link compatOf}) meets the crossing glob, as written or in
 * any case: what IDNA makes of a mail domain and many servers of full-width text.
 */
export function compatible(
  leaf: string,
  loose: (value: string) => boolean,
  inAnyCase: (value: string) => boolean,
): boolean {
  const nfkc = compatOf(leaf);
  return nfkc !== null && (loose(nfkc) || inAnyCase(nfkc));
}
