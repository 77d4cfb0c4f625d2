/**
 * Numbers as aliases: the same account, card or phone number however it is grouped (`020 7946 0958`,
 * `020-7946-0958`, `02079460958`), with a country code on one side only (`+44 20 7946 0958`), and glued by
 * spaces to other digits (an amount, a count, a reference) into one run (`4111 1111 1111 1111 200 EUR`).
 * Untrusted side only, as every alias is.
 */
import { matchesOf } from "./each-match.js";

/** Fewest and most digits of a number matched however it is grouped (as the `account` token: 8 or more). */
export const MIN_DIGITS = 8;
export const MAX_DIGITS = 34;
/** Most leading digits a country code adds to a number (`+44`, `+1`, `+353`). */
const MAX_COUNTRY_DIGITS = 3;

/** Digits with what people group them by between: spaces, dashes, dots, slashes, parentheses, a leading `+`. */
const DIGIT_RUN = /[+(]?\d(?:[\d(). /-]*\d)?/g;

/** The digits of each number in `text` (of {@link MIN_DIGITS} to {@link MAX_DIGITS} digits). */
export function numbersOf(text: string): string[] {
  const out: string[] = [];
  if (!/\d/.test(text)) return out;
  for (const match of matchesOf(DIGIT_RUN, text)) {
    // a run shorter than the fewest digits holds fewer (most runs: a day, an amount)
    if (match[0].length < MIN_DIGITS) continue;
    const digits = match[0].replace(/\D/g, "");
    if (digits.length >= MIN_DIGITS && digits.length <= MAX_DIGITS) out.push(digits);
  }
  return out;
}

/** What {@link numberAliases} reads in a text: its whole numbers, and its runs of groups. */
export interface TextNumbers {
  /** The digits of each number of {@link MIN_DIGITS} to {@link MAX_DIGITS} digits written in one group or two. */
  readonly numbers: string[];
  /**
   * Each run of several groups holding more than {@link MIN_DIGITS} digits, its groups joined by `.`
   * (`4111.1111.1111.1111.200`): any whole groups of it may be a number glued to the others.
   */
  readonly runs: string[];
}

/**
 * The numbers of `text` as {@link holdsNumber} reads them. A number written in groups and glued by a space to
 * other digits reads as one run (`4111 1111 1111 1111 200`, `ref 1000 2000 4111 1111 1111 1111`): a run of
 * groups is kept with its groups marked, whatever its length and however many groups it has, so a number
 * made of any whole groups of it is found (never a part of a group). Linear in the text.
 */
export function numberAliases(text: string): TextNumbers {
  const numbers: string[] = [];
  const runs: string[] = [];
  if (!/\d/.test(text)) return { numbers, runs };
  for (const match of matchesOf(DIGIT_RUN, text)) {
    // a run shorter than the fewest digits holds fewer: neither a number nor a run of groups
    if (match[0].length < MIN_DIGITS) continue;
    const groups = match[0].split(/\D+/).filter((g) => g !== "");
    const digits = groups.join("");
    if (groups.length > 1 && digits.length > MIN_DIGITS) runs.push(groups.join("."));
    else if (digits.length >= MIN_DIGITS && digits.length <= MAX_DIGITS) numbers.push(digits);
  }
  return { numbers, runs };
}

/**
 * Whether whole groups of a run of `runs` (each between spaces, its groups joined by `.`) spell `target`: an
 * occurrence of its digits starting at a group's start and ending at a group's end; with `coded`, one whose
 * groups start one to three digits before it (a country code glued to the number). One pass (KMP), linear in
 * `runs` whatever the text and the target: no occurrence is read twice.
 */
function heldInRuns(runs: string, target: string, coded: boolean): boolean {
  const m = target.length;
  const fail = new Int32Array(m);
  for (let i = 1, k = 0; i < m; i++) {
    while (k > 0 && target.charCodeAt(i) !== target.charCodeAt(k)) k = fail[k - 1] as number;
    if (target.charCodeAt(i) === target.charCodeAt(k)) k++;
    fail[i] = k;
  }
  // whether each of the last digits read starts a group (a ring over as many digits as a match looks back)
  const span = m + MAX_COUNTRY_DIGITS;
  const starts = new Uint8Array(span);
  let matched = 0;
  let digits = 0;
  let groupStart = true;
  for (let i = 0; i < runs.length; i++) {
    const c = runs.charCodeAt(i);
    if (c === SPACE || c === DOT) {
      if (c === SPACE) {
        matched = 0;
        digits = 0;
      }
      groupStart = true;
      continue;
    }
    starts[digits % span] = groupStart ? 1 : 0;
    groupStart = false;
    while (matched > 0 && target.charCodeAt(matched) !== c) matched = fail[matched - 1] as number;
    if (target.charCodeAt(matched) === c) matched++;
    if (matched === m) {
      const next = runs.charCodeAt(i + 1);
      const from = digits - m + 1;
      if (next === SPACE || next === DOT) {
        if (!coded && starts[from % span] === 1) return true;
        for (let k = 1; coded && k <= MAX_COUNTRY_DIGITS && from - k >= 0; k++)
          if (starts[(from - k) % span] === 1) return true;
      }
      matched = fail[m - 1] as number;
    }
    digits++;
  }
  return false;
}

const SPACE = 0x20;
const DOT = 0x2e;

/**
 * Whether a text's numbers hold the number `piece` (its digits): `digits` are its whole numbers, each between
 * spaces, and `runs` its runs of groups ({@link TextNumbers.runs}), each between spaces. A number holds it as
 * written, or with a country code of one to three digits on one side only (`+44 20 7946 0958` and
 * `020 7946 0958`, the national `0` standing for the code); a run holds it when whole groups of it do so.
 * Scans `digits` and `runs` at most {@link NUMBER_SCANS} times each.
 */
export function holdsNumber(digits: string, runs: string, piece: string): boolean {
  if (!/^\d+$/.test(piece)) return false;
  // the spellings of the piece the text may hold: as written, and without the call's country code
  const spellings = [piece];
  for (let k = 1; k <= MAX_COUNTRY_DIGITS; k++) {
    const national = piece.slice(k);
    if (national.length < MIN_DIGITS) break;
    spellings.push(national, `0${national}`);
  }
  if (digits !== "" && spellings.some((s) => digits.includes(` ${s} `))) return true;
  // the text has the country code, the call not
  const national = piece.startsWith("0") ? piece.slice(1) : piece;
  const coded = national.length >= MIN_DIGITS;
  if (digits !== "" && coded) {
    for (let at = digits.indexOf(`${national} `); at !== -1; at = digits.indexOf(`${national} `, at + 1)) {
      const start = digits.lastIndexOf(" ", at - 1);
      const code = at - start - 1;
      if (code >= 1 && code <= MAX_COUNTRY_DIGITS) return true;
    }
  }
  if (runs === "") return false;
  return spellings.some((s) => heldInRuns(runs, s, false)) || (coded && heldInRuns(runs, national, true));
}

/** Scans of a text's numbers, and of its runs, that one {@link holdsNumber} makes at most. */
export const NUMBER_SCANS = 2 * MAX_COUNTRY_DIGITS + 2;

/**
 * Work units of one character of runs read by one scan: a step of the matcher here, not of a native search
 * (as a character of `digits` is), and about four times as long.
 */
export const RUN_CHAR_UNITS = 4;
