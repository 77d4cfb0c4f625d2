import { findLookAlike, findWholeScriptLookAlike, foldName, type ActionRequest } from "../request/index.js";
import type { Reason, SourceVerdict } from "./types.js";

/** Text with nothing but printable ASCII: no look-alike in it (the common case, answered first). */
const ASCII = /^[\x20-\x7e]*$/;
/** The letters of a name and their marks, in runs (`_`, `-`, `.`, digits between them are left out). */
const LETTERS = /[\p{L}\p{M}]+/gu;

function hex(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why `name` passes for another name, or undefined when it does not: a Latin name with a look-alike letter
 * inside ({@link findLookAlike}: `rеad_file` with a Cyrillic `е`), or a name whose letters are all of other
 * scripts and every one passes for a Latin letter (`ехес_сору`, all Cyrillic, reads as `exec_copy`;
 * `ΑΡΡΙΕ`). The name's letters are judged as one word ({@link findWholeScriptLookAlike} on them joined),
 * so a name with a letter that passes for no Latin one (`получить_погоду`, `получить_сор`: `л`, `ч`, `и`)
 * is a name of its own script and no disguise, nor is a name of one letter.
 */
function disguise(name: string): string | undefined {
  if (ASCII.test(name)) return undefined;
  const found = findLookAlike(name);
  if (found !== undefined) return `holds ${hex(found.char)}, which reads as \`${found.reads}\``;
  const whole = findWholeScriptLookAlike((name.match(LETTERS) ?? []).join(""));
  if (whole === undefined) return undefined;
  return `is written wholly in ${whole.script} letters that each pass for a Latin one`;
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
