/** What a server may coerce a string argument to: a number (`"1_000"`) or a boolean (`"yes"`, `"on"`). */

/** Strings servers commonly read as `true` / `false` (pydantic's lax mode, form fields), compared lowercased and trimmed. */
const TRUE_WORDS = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off", "f", "n"]);

/** A number with `_` between digits (`1_000`, `-2_500.5`), as Python reads it. */
const DIGIT_GROUPS = /^[+-]?\d+(?:_\d+)*(?:\.\d+(?:_\d+)*)?$/;

/** The boolean a string pattern is one of the words for (`yes`, `On`, `n`), if it is. */
export function booleanWord(pattern: string): boolean | undefined {
  const word = pattern.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : undefined;
}

/**
 * Whether a leaf a server may coerce is `expected` once coerced: a string holding the same number (`"1000"`,
 * `" 1e3 "`, `"1_000"`), for a boolean one of the words servers read as it (`"true"`, `"Yes"`, `"on"`, `"1"`) or the
 * number 1 / 0. Used by `ask` and `deny` rules only, where matching more is the safe side.
 */
export function coercesTo(expected: number | boolean, leaf: unknown): boolean {
  if (typeof expected === "number") {
    if (typeof leaf !== "string" || leaf.trim() === "") return false;
    const text = leaf.trim();
    // Python's int() and float() (and so a Python server) read `1_000` as 1000 (PEP 515)
    return Number(text) === expected || (DIGIT_GROUPS.test(text) && Number(text.replace(/_/g, "")) === expected);
  }
  if (typeof leaf === "number") return leaf === (expected ? 1 : 0);
  return typeof leaf === "string" && (expected ? TRUE_WORDS : FALSE_WORDS).has(leaf.trim().toLowerCase());
}
