/**
 * What counts as an explicit before/after diff (`require_diff`): text in diff form only, so a bulleted
 * description (`- make the agent friendlier`) is not taken for one.
 */

/** A unified diff's hunk header: `@@ -1,2 +1,3 @@` (the counts optional, a section name after it allowed). */
const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;
/** Lines a diff tool writes around the changes: file headers, hunk separators, the no-newline marker. */
const HEADER_LINE = /^(?:diff |index |--- |\+\+\+ |@@|\\ )/;

/**
 * Whether `diff` is an explicit diff: every line that is not blank is a diff line (`+` added, `-` removed,
 * ` ` unchanged) or a diff header (`diff `, `index `, `--- `, `+++ `, `@@`, `\ No newline…`), and the changes
 * show a before and an after: at least one removed line and one added line, or, for a change that only adds
 * or only removes, a well-formed hunk header (`@@ -3,0 +4,2 @@`). A line of prose anywhere, or lines that only
 * add or only remove without a hunk header (bullets: `- one\n- two`), is no diff.
 */
export function isExplicitDiff(diff: unknown): boolean {
  if (typeof diff !== "string") return false;
  let added = false;
  let removed = false;
  let hunk = false;
  for (const raw of diff.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim().length === 0) continue;
    if (HEADER_LINE.test(line)) {
      if (HUNK_HEADER.test(line)) hunk = true;
      continue;
    }
    const marker = line[0];
    if (marker === "+") added = true;
    else if (marker === "-") removed = true;
    else if (marker !== " ") return false;
  }
  return (added && removed) || (hunk && (added || removed));
}
