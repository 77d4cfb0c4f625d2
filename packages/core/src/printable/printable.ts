/**
 * What is never shown as itself: control characters (C0 including newline and tab, DEL, C1), format characters
 * (the bidirectional controls, zero-width spaces and joiners, the word joiner, soft hyphen, BOM, tag characters),
 * every other default-ignorable code point (Hangul fillers, variation selectors), the line and paragraph
 * separators (a line break in Telegram), the spaces other than U+0020 (no-break, em, ideographic, …) and lone
 * surrogates. Each is shown as `\uXXXX` escapes (a character beyond U+FFFF as its two UTF-16 halves, so a
 * printable JSON text stays valid JSON). Tool names come from upstream servers, arguments and reasons from the
 * agent: raw, an escape sequence could erase or redraw what a person is asked to approve, a right-to-left
 * override reorder an address, and an invisible character make two different values (or names) look the same.
 */
const UNPRINTABLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;

/** The characters of {@link UNPRINTABLE} a person must be warned of in text that may hold line breaks and tabs. */
const HIDDEN_IN_TEXT =
  /[^\P{Cc}\t\n\r]|[\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;

/** {@link UNPRINTABLE}, one match at a time (no `g`: `test` keeps no state). */
const HIDDEN = new RegExp(UNPRINTABLE.source, "u");

const escapeUnits = (c: string): string =>
  Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");

/** `text` with every character of {@link UNPRINTABLE} shown as `\uXXXX` escapes. */
export function printable(text: unknown): string {
  return String(text).replace(UNPRINTABLE, escapeUnits);
}

/**
 * Whether `text` holds a character {@link printable} shows escaped, other than a line break or tab when
 * `layout` is true (a message body's own): what the prompt warns of, so an escape is read rather than skimmed.
 */
export function hasHiddenCharacters(text: unknown, layout = false): boolean {
  return (layout ? HIDDEN_IN_TEXT : HIDDEN).test(String(text));
}

/**
 * A JSON text (as `JSON.stringify` writes it, indented or not) for a terminal: each of its lines through
 * {@link printable}. `JSON.stringify` escapes only U+0000–U+001F inside strings, so C1 controls (U+009B
 * opens a CSI), bidi overrides and invisible characters from the data would reach the terminal raw; shown
 * as `\uXXXX` escapes the text is still valid JSON of the same value. The line breaks of the layout stay
 * (inside a string a line break is already `\n`).
 */
export function printableJsonText(json: string): string {
  return json.split("\n").map(printable).join("\n");
}
