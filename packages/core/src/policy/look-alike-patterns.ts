import type { Issue } from "../issues/index.js";
import { findLookAlike, findWholeScriptLookAlike, foldName } from "../request/index.js";
import type { Policy } from "./types.js";

function hex(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Finds `tool` and `server` patterns that pass for another name (a Latin name with a look-alike letter
 * inside, typically pasted: `rеad_file` with a Cyrillic `е`; or a word written wholly in letters of another
 * script that pass for Latin ones, `ѕсоре`: {@link findWholeScriptLookAlike}): an `allow` rule or `classify:` entry so
 * written never meets the tool it shows (it is another name), and every call to that tool is asked.
 * One `look_alike_pattern` issue each, meant as a warning (an ask or deny rule meets the name it passes
 * for anyway, and a server may really be named so).
 */
export function findLookAlikePatterns(policy: Policy): Issue[] {
  const issues: Issue[] = [];
  const check = (pattern: string | undefined, path: (string | number)[], where: string, line?: number): void => {
    if (pattern === undefined) return;
    const found = findLookAlike(pattern);
    // a word wholly of look-alikes of another script (`ѕсоре`, all Cyrillic): no Latin letter to hide in
    const word = found === undefined ? findWholeScriptLookAlike(pattern) : undefined;
    if (found === undefined && word === undefined) return;
    const key = path.at(-1) as string;
    const why =
      found !== undefined
        ? `holds ${hex(found.char)}, which reads as \`${found.reads}\``
        : `is written in ${word?.script ?? ""} letters where \`${word?.word ?? ""}\` reads as \`${word?.reads ?? ""}\``;
    issues.push({
      code: "look_alike_pattern",
      path,
      message:
        `${where}\`${key}\` \`${pattern}\` ${why}: ` +
        `it looks like \`${foldName(pattern)}\` but no call to that name meets it as written`,
      help: `write it in ASCII: \`${key}: ${foldName(pattern)}\` (if that is the name meant)`,
      ...(line !== undefined ? { line } : {}),
    });
  };
  for (const rule of policy.rules) {
    const base = ["rules", rule.index, "match"];
    check(rule.match.tool, [...base, "tool"], `rule \`${rule.id}\`: `, rule.line);
    check(rule.match.server, [...base, "server"], `rule \`${rule.id}\`: `, rule.line);
  }
  policy.classify.forEach((entry, i) => {
    check(entry.tool, ["classify", i, "tool"], `classify entry ${i + 1}: `);
    check(entry.server, ["classify", i, "server"], `classify entry ${i + 1}: `);
  });
  return issues;
}
