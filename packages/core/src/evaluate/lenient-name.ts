import { compileGlobOverReadings, isGlobPattern, type GlobMatcher, type ReadingText } from "../glob/index.js";
import { foldGlobPattern, foldName, foldNameReadings } from "../request/index.js";
import { compileRuleGlob } from "./fast-glob.js";

/** An ask or deny rule's tool pattern: its matcher, and its folded pattern when that differs from it. */
export interface LenientName {
  readonly matcher: GlobMatcher;
  /** The pattern folded ({@link foldGlobPattern}), when it is not the pattern itself (the rule index files it under both). */
  readonly folded: string | undefined;
}

/**
 * The last name folded and its fold: a request's tool name is met by every candidate rule's matcher in
 * turn, and is folded once for them all.
 */
let lastName = "";
let lastFold = "";
let readingsOf = "";
let lastReadings: ReadingText = foldNameReadings("");

function foldOnce(name: string): string {
  if (name !== lastName) {
    lastFold = foldName(name);
    lastName = name;
  }
  return lastFold;
}

function readingsOnce(name: string): ReadingText {
  if (name !== readingsOf) {
    lastReadings = foldNameReadings(name);
    readingsOf = name;
  }
  return lastReadings;
}

/** A glob's `?` or `[…]`, which takes one character: of the folded name, a whole reading unit too. */
const ONE_CHARACTER = /[?[]/;

/**
 * Widens an ask or deny rule's tool pattern, which fails towards caution, to the names a person reads as
 * the one it names: the pattern meets the name as it is, in lower case (`delete_database` meets
 * `Delete_Database`), and its folded form meets the folded name ({@link foldName}: NFKC/NFD spellings,
 * full-width letters, accents, and look-alikes from other scripts, so `dеlete_database` with a Cyrillic
 * `е` is refused too). A `?` or `[…]` of the folded pattern takes whole what a person reads as one
 * character of the name, though its fold has several ({@link foldNameReadings}: `?ove_file` meets
 * `ｍove_file`, folded `rnove_file`). An allow rule's pattern stays exact. A folded pattern that does not
 * compile (none is known) leaves the name and its lower case.
 */
export function widenName(pattern: string, matcher: GlobMatcher): LenientName {
  const foldedPattern = foldGlobPattern(pattern);
  /** The test of the name's fold (or of its readings), given the name. */
  let folded: GlobMatcher | undefined = (name) => matcher(foldOnce(name));
  if (!isGlobPattern(pattern))
    folded = (name) => foldOnce(name) === foldedPattern; // an exact name, compared exactly
  else if (ONE_CHARACTER.test(foldedPattern)) {
    // `?ove_file` meets `ｍove_file`, whose fold `rnove_file` has two characters where a person reads one
    const compiled = compileGlobOverReadings(foldedPattern);
    folded = compiled.ok ? (name) => compiled.value(readingsOnce(name)) : undefined;
  } else if (foldedPattern !== pattern) {
    const compiled = compileRuleGlob(foldedPattern);
    folded = compiled.ok ? (name) => compiled.value(foldOnce(name)) : undefined;
  }
  return {
    folded: foldedPattern !== pattern && folded !== undefined ? foldedPattern : undefined,
    matcher: (name) => {
      if (matcher(name)) return true;
      const lower = name.toLowerCase();
      if (lower !== name && matcher(lower)) return true;
      return folded !== undefined && folded(name);
    },
  };
}
