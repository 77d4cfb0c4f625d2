/**
 * Characters a name of a tool, server or agent never holds: controls, format characters (zero-width
 * spaces and joiners, bidirectional overrides and isolates, the soft hyphen, the byte-order mark, the
 * invisible Unicode tags), line and paragraph separators, spaces other than U+0020, variation
 * selectors, the combining grapheme joiner, the Hangul fillers, the blank Braille pattern (U+2800), the
 * Khmer inherent vowels (U+17B4, U+17B5) and the musical null notehead (U+1D159). Each is invisible or changes how
 * the text around it is shown, so `send_email` with one of them inside reads as `send_email` to a
 * person (on a consent prompt, in the audit, in a policy file) while a rule written `send_email` does
 * not match it, nor does a rule written with one match the name a tool really has.
 */
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0\u2800\u{1d159}]/u;

/** Invisible combining marks (written apart: in a character class they would join the character before). */
function isInvisibleMark(code: number): boolean {
  return (
    code === 0x034f ||
    code === 0x17b4 ||
    code === 0x17b5 ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xe0100 && code <= 0xe01ef)
  );
}

/** Printable ASCII without a space at either end: the common case, decided by one test. */
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

function hex(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why `name` is not a name a person can read as it is: the first invisible or control character it holds
 * (as `U+200B`), or a space at either end. Undefined when it has neither.
 */
export function findUnreadableName(name: string): string | undefined {
  if (PLAIN.test(name)) return undefined;
  const found = INVISIBLE.exec(name);
  if (found !== null) return `an invisible or control character (${hex(found[0].codePointAt(0) as number)})`;
  for (const char of name) {
    const code = char.codePointAt(0) as number;
    if (isInvisibleMark(code)) return `an invisible or control character (${hex(code)})`;
  }
  if (name.startsWith(" ") || name.endsWith(" ")) return "a space at its start or end";
  return undefined;
}
