/**
 * The matches of a global pattern, in order, as `text.matchAll(pattern)` gives them, without what
 * `matchAll` costs per call (a copy of the pattern through its species constructor and an iterator): the
 * detector and the token scans run a score of patterns over every tool result, most of them matching
 * nothing. The pattern's `lastIndex` is used and left at 0; the matches are collected before the caller
 * sees any, so a caller may use the same pattern again.
 */
export function matchesOf(pattern: RegExp, text: string): RegExpExecArray[] {
  if (!pattern.global) throw new TypeError(`matchesOf needs a global pattern: ${String(pattern)}`);
  const out: RegExpExecArray[] = [];
  pattern.lastIndex = 0;
  try {
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      out.push(match);
      // an empty match does not move lastIndex: step over one code point, as matchAll does
      if (match[0].length === 0) pattern.lastIndex = advance(text, pattern.lastIndex, pattern.unicode);
    }
  } finally {
    pattern.lastIndex = 0;
  }
  return out;
}

function advance(text: string, index: number, unicode: boolean): number {
  if (!unicode || index + 1 >= text.length) return index + 1;
  const code = text.charCodeAt(index);
  if (code < 0xd800 || code > 0xdbff) return index + 1;
  const next = text.charCodeAt(index + 1);
  return next >= 0xdc00 && next <= 0xdfff ? index + 2 : index + 1;
}
