/**
 * How deep a glob's groups nest: extglobs and parentheses (`*(…)`, `@(a|b)`, `(…)`) and braces (`{a,b}`),
 * outside a class (`[(]`) and not escaped (`\(`). picomatch and the linear matcher's compiler take time
 * that grows faster than the length with the depth: `*(` 300 deep, 900 characters, took half a second to
 * compile, and a 10 MiB policy holds ten thousand such patterns.
 */

/** Deepest nesting of groups accepted in one glob; a real pattern nests two or three deep. */
export const MAX_GLOB_NESTING = 8;

/** The deepest nesting of groups in `pattern`, counted in one pass. */
export function groupDepth(pattern: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (c === "[") {
      // a class: to its `]` (one right after `[`, `[!` or `[^` is a member), or a literal `[` when none closes it
      let j = i + 1;
      if (pattern[j] === "!" || pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      if (j < pattern.length) i = j;
    } else if (c === "(" || c === "{") {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if ((c === ")" || c === "}") && depth > 0) depth--;
  }
  return deepest;
}
