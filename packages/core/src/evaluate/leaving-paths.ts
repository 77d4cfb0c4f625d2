/**
 * Relative paths that leave their directory (`../../etc/passwd`): where the tool runs is not known, so an
 * `ask` or `deny` rule's path pattern meets such a path when what follows its `..` segments matches one
 * of the pattern's ends.
 */
import { isGlobPattern, spendWork, workEpoch, type GlobMatcher } from "../glob/index.js";
import { compileRuleGlob, readingCost } from "./fast-glob.js";
import { closes } from "./pattern-forms.js";
import { lowerOf } from "./value-forms.js";

/** A segment naming something: not empty, `.` or `..`, and no glob. */
function isPlainSegment(segment: string): boolean {
  return segment !== "" && segment !== "." && segment !== ".." && !isGlobPattern(segment);
}

/**
 * The ends of the paths a pattern matches, as globs in lower case: the pattern from each of its segments on,
 * where what follows holds a plain name (`/etc/passwd` → `etc/passwd`, `passwd`; `/home/alice/.ssh/**` →
 * `home/alice/.ssh/**`, `alice/.ssh/**`, `.ssh/**`; never `**` alone). Empty for a
 * pattern with `\` or a bracket or brace holding `/`, whose segments are not its text between `/`.
 */
export function patternTails(pattern: string): string[] {
  const segments = pattern.toLowerCase().split("/");
  if (segments.length < 2 || !segments.every(closes)) return [];
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const tail = segments.slice(i);
    if (tail[0] !== "" && tail.some(isPlainSegment)) out.push(tail.join("/"));
  }
  return out;
}

/** The `..` segments a relative path starts with. */
const LEADING_DOT_DOTS = /^(?:\.\.\/)+/;

/**
 * For an ask or deny rule's path pattern: a test of whether a relative path that leaves its directory
 * (`../../etc/passwd`, in a spelling: `..\..\etc\passwd`, `a/../../etc/passwd`) may be a path the
 * pattern matches. Where the tool runs is not known, so such a path may be any path ending in what
 * follows its `..` segments: it is met when that, in lower case, matches one of the pattern's ends
 * ({@link patternTails}; `/home/alice/.ssh/**` meets `../alice/.ssh/id_rsa`, `/etc/passwd` meets
 * `../../etc/passwd`). Undefined for a pattern without such ends; the ends are compiled when first needed.
 */
export function leavingTest(pattern: string): ((value: string) => boolean) | undefined {
  const tails = patternTails(pattern);
  if (tails.length === 0) return undefined;
  // compiling the ends reads each (a pattern of many segments has many, and long): a unit a character, charged
  // once in each decision that needs them, whether or not an earlier one compiled them, so a decision's work
  // does not depend on the ones before it
  const compileCost = tails.reduce((units, tail) => units + tail.length, 0);
  let globs: GlobMatcher[] | undefined;
  let charged = -1;
  return (value) => {
    if (!value.startsWith("../")) return false;
    const rest = value.slice((LEADING_DOT_DOTS.exec(value)?.[0] ?? "").length);
    if (rest === "") return false;
    spendWork(readingCost(value));
    if (charged !== workEpoch()) {
      charged = workEpoch();
      spendWork(compileCost);
    }
    globs ??= tails.flatMap((tail) => {
      // compiled after the policy's literal search was built: each reads the (short) rest itself
      const glob = compileRuleGlob(tail, { starCrossesSlash: true });
      return glob.ok ? [glob.value] : [];
    });
    const lower = lowerOf(rest);
    return globs.some((glob) => glob(lower));
  };
}
