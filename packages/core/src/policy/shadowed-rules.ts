import {
  compileGlob,
  compileGlobOverReadings,
  isGlobPattern,
  type GlobMatcher,
  type ReadingText,
} from "../glob/index.js";
import type { Issue } from "../issues/index.js";
import { foldGlobPattern, foldName } from "../request/index.js";
import type { PolicyRule, TimeOfDay } from "./types.js";

/**
 * Whether every value `later` accepts for one criterion (tool or server) is accepted by `earlier`: no
 * criterion, the same text, or a glob that matches the later rule's exact name. Anything else (two
 * different globs) is not claimed, so a warning is never wrong.
 */
function coversName(earlier: string | undefined, later: string | undefined, globs: GlobCache, folded = false): boolean {
  if (earlier === undefined || earlier === later) return true;
  if (later === undefined || isGlobPattern(later) || !isGlobPattern(earlier)) return false;
  if (!globMatcher(earlier, globs)(later)) return false;
  // two ask or deny rules' tool patterns also meet folded names: the earlier folded pattern must meet every
  // name that folds as the later name does, read as the matcher reads it (lenient-name.ts: a `?` or `[…]`
  // also takes a reading unit), so `dat?` covers `datm`, whose fold `datrn` reads `rn` as `m`
  return !folded || foldedCovers(foldGlobPattern(earlier), foldName(later), globs);
}

/** A glob's `?` or `[…]`, which the matcher runs over a folded name's reading units. */
const ONE_CHARACTER = /[?[]/;

/**
 * The reading units every name whose fold is `fold` has (`foldNameReadings`): each `rn` read as `m`.
 * A name's own readings may hold more (a full-width `Ｍ` is also `M`), never less, and a glob run over more
 * readings meets at least what it meets over fewer: so a folded pattern that meets these meets every such name.
 */
function sharedReadings(fold: string): ReadingText {
  const units: { end: number; codes: number[] }[][] = [];
  for (let i = fold.indexOf("rn"); i >= 0; i = fold.indexOf("rn", i + 1)) units[i] = [{ end: i + 2, codes: [0x6d] }];
  return { text: fold, units, alternatives: [] };
}

/** Whether an ask or deny rule's folded pattern meets every name whose fold is `fold`, as the matcher reads it. */
function foldedCovers(foldedPattern: string, fold: string, globs: GlobCache): boolean {
  if (!ONE_CHARACTER.test(foldedPattern)) return globMatcher(foldedPattern, globs)(fold);
  const compiled = compileGlobOverReadings(foldedPattern);
  return compiled.ok && compiled.value(sharedReadings(fold));
}

function globMatcher(pattern: string, globs: GlobCache): GlobMatcher {
  let matcher = globs.get(pattern);
  if (matcher === undefined) {
    const glob = compileGlob(pattern);
    matcher = glob.ok ? glob.value : () => false;
    globs.set(pattern, matcher);
  }
  return matcher;
}

/** Compiled patterns by text, so each is compiled once per check. */
type GlobCache = Map<string, GlobMatcher>;

function sameWindow(a: TimeOfDay, b: TimeOfDay | undefined): boolean {
  return b !== undefined && a.after === b.after && a.before === b.before && a.timezone === b.timezone;
}

/**
 * Whether `earlier` matches every request `later` matches, so that `later` can never be the first match.
 * The earlier rule's arguments must each be one of the later rule's, written the same, and their time
 * windows the same. An earlier `allow` needs every element of an array argument to match and a later
 * `ask`/`deny` any one, and the later rule's patterns meet more spellings (a tool name in another case,
 * a path in another form), so an earlier `allow` with a `tool` or `args` never covers a later `ask` or
 * `deny` (a list with one bad element, or `Delete_Database`, passes the allow by and reaches the deny).
 */
export function ruleCovers(earlier: PolicyRule, later: PolicyRule, globs: GlobCache = new Map()): boolean {
  const a = earlier.match;
  const b = later.match;
  if (a.category !== undefined && a.category !== b.category) return false;
  const folded = earlier.action !== "allow" && later.action !== "allow";
  if (!coversName(a.tool, b.tool, globs, folded) || !coversName(a.server, b.server, globs, folded)) return false;
  // a later ask or deny rule also meets a tool or server name in lower case and folded, which an earlier
  // allow rule does not
  if (earlier.action === "allow" && later.action !== "allow" && (a.tool !== undefined || a.server !== undefined))
    return false;
  const window = earlier.conditions?.time_of_day;
  if (window !== undefined && !sameWindow(window, later.conditions?.time_of_day)) return false;
  const args = Object.entries(a.args ?? {});
  if (args.length === 0) return true;
  if (earlier.action === "allow" && later.action !== "allow") return false;
  const laterArgs = b.args ?? {};
  return args.every(([key, value]) => Object.hasOwn(laterArgs, key) && laterArgs[key] === value);
}

/** Rules compared pairwise at most; a larger policy is checked for its first this many rules. */
export const MAX_SHADOW_CHECK_RULES = 2_000;

/**
 * Finds rules that can never decide because an earlier rule matches every request they match (first
 * match wins): a narrow `deny` written after a broad `allow` is the classic policy mistake, and the call
 * it meant to refuse is allowed. One `shadowed_rule` issue per such rule, naming the first rule that
 * covers it; meant as a warning (the policy is valid and loads). Conservative: a rule is reported only
 * when the cover is certain ({@link ruleCovers}).
 */
export function findShadowedRules(rules: readonly PolicyRule[]): Issue[] {
  const issues: Issue[] = [];
  const globs: GlobCache = new Map();
  const checked = rules.slice(0, MAX_SHADOW_CHECK_RULES);
  for (let j = 1; j < checked.length; j++) {
    const later = checked[j] as PolicyRule;
    let cover: PolicyRule | undefined;
    for (let i = 0; i < j && cover === undefined; i++) {
      const earlier = checked[i] as PolicyRule;
      if (ruleCovers(earlier, later, globs)) cover = earlier;
    }
    if (cover === undefined) continue;
    const where = cover.line === undefined ? "" : ` (line ${cover.line})`;
    const same =
      cover.action === later.action
        ? ""
        : `, so it ${cover.action === "allow" ? "allows" : cover.action === "ask" ? "asks about" : "denies"} what this rule would ${later.action}`;
    issues.push({
      code: "shadowed_rule",
      path: ["rules", later.index],
      message: `rule \`${later.id}\` can never match: rule \`${cover.id}\`${where} comes first and matches every call it would${same}`,
      help: "the first matching rule decides: put the narrower rule before the broader one",
      ...(later.line !== undefined ? { line: later.line } : {}),
    });
  }
  return issues;
}
