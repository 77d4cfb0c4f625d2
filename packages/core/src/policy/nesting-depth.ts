import type { CST } from "yaml";

/**
 * Nesting-depth guards. The YAML composer recurses once per nesting level, so a 10,000-deep document would
 * exhaust the call stack (and, near that limit, V8 can even abort the process). Two checks run before it:
 * a linear character scan that rejects obvious bombs cheaply, then an exact, iterative walk of the
 * concrete syntax tree.
 */

/** The character scan rejects at this estimate; far above any real policy (which nests about 6 deep). */
const SCAN_REJECT_AT = 1_000;

/**
 * A cheap estimate of nesting: open flow brackets (`[`, `{`) minus closed ones over the whole text, plus
 * compact block indicators (`- `, `? `) on the current line. It can overcount (brackets in comments or
 * plain scalars) but never reaches the threshold on a real policy. Returns the offset where the estimate
 * first exceeds the threshold, or `undefined`.
 */
export function scanForNestingBomb(text: string): number | undefined {
  let brackets = 0;
  let inline = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5b || c === 0x7b) brackets++;
    else if ((c === 0x5d || c === 0x7d) && brackets > 0) brackets--;
    else if (c === 0x0a) inline = 0;
    else if (c === 0x2d || c === 0x3f) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x20 || next === 0x0a || Number.isNaN(next)) inline++;
    }
    if (brackets + inline > SCAN_REJECT_AT) return i;
  }
  return undefined;
}

/**
 * The exact collection nesting depth of a CST document, walked iteratively (no recursion). Returns the
 * offset of the first collection nested deeper than `limit`, or `undefined`.
 */
export function findTooDeepToken(token: CST.Token, limit: number): number | undefined {
  const stack: [CST.Token, number][] = [[token, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() ?? [token, 0];
    if (current.type === "document") {
      if (current.value !== undefined) stack.push([current.value, depth]);
      continue;
    }
    if (current.type !== "block-map" && current.type !== "block-seq" && current.type !== "flow-collection") continue;
    const inner = depth + 1;
    if (inner > limit) return current.offset;
    for (const item of current.items) {
      if (item.key !== undefined && item.key !== null) stack.push([item.key, inner]);
      if (item.value !== undefined) stack.push([item.value, inner]);
    }
  }
  return undefined;
}
