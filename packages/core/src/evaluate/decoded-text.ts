/**
 * What an `ask` or `deny` rule reads of a value the other spellings are not made for (several lines, or over
 * 4,096 characters: a file's content, a script, a long command): its escapes decoded, as a tool that decodes
 * what it is sent reads it, so `%2e%2e%2f` after a line break or inside a 5,000-character value is `../`
 * to a deny rule for `*../*`, as it is in a short value.
 */
import { compatDecodings, decodings, settles, structuralCompat } from "./normal-form.js";

const ESCAPE = /%[0-9A-Fa-f]{2}/;
const NON_ASCII = /[\u0080-\uffff]/;

/** The readings of a text the spellings past its normal form are not made for, and whether it is known. */
export interface DecodedText {
  /**
   * Each reading differing from the text: its NFKC form where that spells more structure ({@link
   * structuralCompat}: `．．／` is `../`), its escapes decoded (`%2f` too) once and again up to three times
   * ({@link decodings}), each decoding in NFKC where that spells more structure, and decoded again from there
   * within the three decodings ({@link compatDecodings}: `%EF%BC%85%32%65` is `％2e`, `%2e`, then `.`); and
   * each with `\` read as `/`. Neither trimmed nor in normal form, nor split at a query: a text, compared
   * whole, as the text itself is.
   */
  readonly spellings: readonly string[];
  /**
   * Whether three decodings leave the text (or its NFKC form) still decoding ({@link settles}): its reading is
   * not known, and every ask or deny rule's string glob meets it, as for a short value; the whole text is
   * read, a query too (a text is no URL).
   */
  readonly unknown: boolean;
  /** The passes over the text its readings took: each decoding, each check that one more changes nothing, each NFKC form. */
  readonly passes: number;
}

/** The readings of a text of several lines or over 4,096 characters ({@link DecodedText}). */
export function decodedText(text: string): DecodedText {
  const out = new Set<string>();
  let unknown = false;
  const ascii = !NON_ASCII.test(text);
  const compat = ascii ? undefined : structuralCompat(text);
  let passes = ascii ? 0 : 1;
  for (const base of compat === undefined ? [text] : [text, compat]) {
    out.add(base);
    if (!ESCAPE.test(base)) continue;
    const decoded = decodings(base);
    passes += decoded.length + 1; // and the check that one more changes nothing, or the scan that found no escape
    let normalises = false;
    for (const form of decoded) {
      out.add(form);
      const nfkc = structuralCompat(form);
      if (!ascii || NON_ASCII.test(form)) passes++;
      if (nfkc !== undefined) out.add(nfkc);
      normalises ||= nfkc !== undefined;
    }
    unknown ||= !settles(base, decoded);
    if (normalises) {
      const chain = compatDecodings(base, structuralCompat);
      passes += chain.forms.length + 1;
      for (const form of chain.forms) out.add(form);
      unknown ||= !chain.settled;
    }
  }
  for (const form of [...out]) if (form.includes("\\")) out.add(form.replaceAll("\\", "/"));
  out.delete(text);
  return { spellings: [...out], unknown, passes };
}
