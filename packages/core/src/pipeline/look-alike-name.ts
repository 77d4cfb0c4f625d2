import { findLookAlike, findWholeScriptLookAlike, foldName, type ActionRequest } from "../request/index.js";
import type { Reason, SourceVerdict } from "./types.js";

/** Text with nothing but printable ASCII: no look-alike in it (the common case, answered first). */
const ASCII = /^[\x20-\x7e]*$/;
/** The letters of a name and their marks, in runs (`_`, `-`, `.`, digits between them are left out). */
const LETTERS = /[\p{L}\p{M}]+/gu;
/** An ASCII letter. */
const ASCII_LETTER = /[A-Za-z]/;
/** What a name of ASCII letters, digits and `_`, `-`, `.` is made of. */
const ASCII_NAME = /^[A-Za-z0-9_.-]+$/;
/** A character drawn as a letter: a letter (`ｒ`, `𝐫`, `ᴅ`) or a symbol (`ⓡ`), not a digit (`１` reads `l`). */
const DRAWN_LETTER = /^[\p{L}\p{So}]$/u;
/** Combining marks only (accents). */
const MARKS = /^\p{M}+$/u;
/** Letters of Latin alphabets no decomposition takes apart (as `findLookAlike` keeps them): no disguise. */
const LATIN_ALPHABET = new Set([..."øØæÆœŒłŁđĐħĦıŧŦ"]);

/** A letter of a Latin alphabet: accented (`é`, by canonical decomposition: not a full-width `ｅ`) or `ø`. */
function latinAlphabetLetter(char: string): boolean {
  if (LATIN_ALPHABET.has(char)) return true;
  const decomposed = char.normalize("NFD");
  return decomposed.length > 1 && ASCII_LETTER.test(decomposed.charAt(0)) && MARKS.test(decomposed.slice(1));
}

/**
 * The first character of a name without ASCII letters that is drawn as Latin ones (full-width
 * `ｒｅａｄ_ｆｉｌｅ`, mathematical `𝐫𝐞𝐚𝐝`, small capitals `ᴅᴇʟᴇᴛᴇ`, circled `ⓡⓔⓐⓓ`), when the whole name reads as an
 * ASCII name with two such letters or more; undefined for a name written in a Latin alphabet (`été`, `søk`).
 */
function styledLatin(name: string): string | undefined {
  if (ASCII_LETTER.test(name) || !ASCII_NAME.test(foldName(name))) return undefined;
  let first: string | undefined;
  let letters = 0;
  for (const char of name.normalize("NFC")) {
    if ((char.codePointAt(0) as number) < 0x80) continue;
    if (latinAlphabetLetter(char)) return undefined;
    if (DRAWN_LETTER.test(char) && ASCII_LETTER.test(foldName(char))) letters++;
    first ??= char;
  }
  return letters >= 2 ? first : undefined;
}

function hex(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why `name` passes for another name, or undefined when it does not: a Latin name with a look-alike letter
 * inside ({@link findLookAlike}: `rеad_file` with a Cyrillic `е`); a name whose letters are all of other
 * scripts and every one passes for a Latin letter (`ехес_сору`, all Cyrillic, reads as `exec_copy`;
 * `ΑΡΡΙΕ`), its letters judged as one word ({@link findWholeScriptLookAlike} on them joined); or a name
 * drawn wholly in Latin look-alikes ({@link styledLatin}: `ｒｅａｄ_ｆｉｌｅ`). A name with a letter that passes
 * for no Latin one (`получить_погоду`, `получить_сор`: `л`, `ч`, `и`) is a name of its own script and no
 * disguise, nor is a name of one letter or one written in a Latin alphabet (`été`, `søk_filer`).
 */
function disguise(name: string): string | undefined {
  if (ASCII.test(name)) return undefined;
  const found = findLookAlike(name);
  if (found !== undefined) return `holds ${hex(found.char)}, which reads as \`${found.reads}\``;
  const whole = findWholeScriptLookAlike((name.match(LETTERS) ?? []).join(""));
  if (whole !== undefined) return `is written wholly in ${whole.script} letters that each pass for a Latin one`;
  const styled = styledLatin(name);
  if (styled === undefined) return undefined;
  return `is written wholly in characters drawn as Latin ones (${hex(styled)} reads as \`${foldName(styled)}\`)`;
}

/**
 * A tool or server name that passes for another ({@link disguise}) is put before a person, with the
 * reason, whatever the rules say: an `allow` rule never meets it (it is another name), but the default or
 * a broad rule may, and a consent prompt shows the name it passes for. A `deny` rule for the name it
 * passes for refuses it (ask and deny rules meet the folded name).
 */
export function lookAlikeVerdict(request: ActionRequest): SourceVerdict | null {
  const reasons: Reason[] = [];
  for (const [what, name] of [
    ["tool", request.tool],
    ["server", request.server],
  ] as const) {
    if (name === undefined) continue;
    const why = disguise(name);
    if (why === undefined) continue;
    reasons.push({
      source: "pipeline",
      code: "look_alike_name",
      message:
        `the ${what} name \`${name}\` ${why}: it looks like \`${foldName(name)}\` but is another name, ` +
        `so a person is asked`,
    });
  }
  return reasons.length === 0 ? null : { source: "pipeline", route: "ask", reasons };
}
