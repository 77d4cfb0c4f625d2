import { foldName } from "./fold-name.js";

/** A word written wholly in another script that reads as a Latin one (see {@link findWholeScriptLookAlike}). */
export interface WholeScriptLookAlike {
  /** The word (a run of letters: a host label, a name, the part of an address before its `@`). */
  readonly word: string;
  /** The script its letters are written in (`Cyrillic`, `Greek`, …; `several scripts` when they are mixed). */
  readonly script: string;
  /** What a person reads it as ({@link foldName}: `аррӏе` is `appie`, which passes for `apple`). */
  readonly reads: string;
}

/**
 * Scripts whose letters UTS #39 gives Latin look-alikes, by name (a letter of a script not named here is of
 * `another script`: still a look-alike, only not named).
 */
const SCRIPTS: readonly (readonly [string, RegExp])[] = [
  "Cyrillic",
  "Greek",
  "Armenian",
  "Cherokee",
  "Coptic",
  "Georgian",
  "Lisu",
  "Canadian_Aboriginal",
  "Tifinagh",
  "Vai",
  "Old_Italic",
  "Gothic",
  "Deseret",
  "Osage",
  "Warang_Citi",
  "Hebrew",
  "Arabic",
  "Nko",
  "Glagolitic",
].map((name) => [name.replace(/_/g, " "), new RegExp(`^\\p{Script=${name}}$`, "u")] as const);

/** Latin letters (ASCII, accented, full-width) and the common ones (mathematical styles): no other script's. */
const LATIN_OR_COMMON = /^[\p{Script=Latin}\p{Script=Common}]$/u;
/** A combining mark (an accent): read past. */
const MARK = /^\p{M}$/u;
/** A word: a run of letters and their marks. */
const WORD = /[\p{L}\p{M}]+/gu;
/** What a letter is read as when it passes for Latin letters: ASCII letters only. */
const LATIN_READING = /^[a-z]+$/;
/** Text with nothing but printable ASCII. */
const ASCII = /^[\x20-\x7e]*$/;
/** White space: text that has it is prose, whose words are looked at only where they join as a name does. */
const SPACE = /\s/u;
/** A word joined to the next as in an address, a host or a path (`a@b`, `b.com`, `x/y`, `http:`). */
const JOINED = /[\p{L}\p{N}\p{M}][@./:][\p{L}\p{N}]/u;

function scriptOf(char: string): string {
  for (const [name, pattern] of SCRIPTS) if (pattern.test(char)) return name;
  return "another script";
}

/** The word as a whole-script look-alike, or undefined when one of its letters reads as no Latin letter. */
function wholeScriptWord(word: string): WholeScriptLookAlike | undefined {
  const scripts = new Set<string>();
  let letters = 0;
  for (const char of word) {
    if (MARK.test(char)) continue;
    // a Latin letter makes it a Latin word (a look-alike inside one is `findLookAlike`'s)
    if (LATIN_OR_COMMON.test(char)) return undefined;
    // a letter that passes for none: a word of its own script (`Ирина`: `И` and `н` look like no Latin letter)
    if (!LATIN_READING.test(foldName(char))) return undefined;
    scripts.add(scriptOf(char));
    letters++;
  }
  if (letters < 2) return undefined;
  const script = scripts.size === 1 ? ([...scripts][0] as string) : "several scripts";
  return { word, script, reads: foldName(word) };
}

/**
 * The first word of `text` written wholly in scripts other than Latin whose every letter passes for a Latin
 * one — a whole-script confusable (UTS #39 §4): `аррӏе` in `ceo@аррӏе.сом`, every letter Cyrillic, reads as
 * `apple`; `ΑΡΡΙΕ` in Greek capitals too. {@link findLookAlike} finds a look-alike only inside a name that
 * also has Latin letters, so it misses these. A word with a letter that looks like no Latin one is a word of
 * its own script, no disguise (`Ирина`, `получить`); so are words of one letter. Text with white space is
 * prose: only its words joined as in an address, host or path (`@`, `.`, `/`, `:` between letters or digits)
 * are looked at, so a Russian sentence whose words happen to be all look-alikes (`на горе`) is not. For a
 * warning before a person approves: the policy's matching does not use it (ask and deny rules meet the
 * folded name already).
 */
export function findWholeScriptLookAlike(text: string): WholeScriptLookAlike | undefined {
  if (ASCII.test(text)) return undefined;
  const pieces = SPACE.test(text) ? text.split(/\s+/u).filter((piece) => JOINED.test(piece)) : [text];
  for (const piece of pieces) {
    for (const match of piece.normalize("NFC").matchAll(WORD)) {
      const found = wholeScriptWord(match[0]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
