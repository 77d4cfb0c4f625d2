import picomatch from "picomatch";
import type { Result } from "../issues/index.js";
import { groupDepth, MAX_GLOB_NESTING } from "./group-depth.js";
import { requiredText } from "./linear-pattern.js";
import { compileLinearRegex, compileReadingRegex, type ReadingText } from "./linear-regex.js";
import { Parser } from "./regex-parse.js";

export {
  WorkBudgetExceededError,
  isWorkBudgetOpen,
  measureWork,
  spendWork,
  withWorkBudget,
  workEpoch,
} from "./work-budget.js";

/** A compiled glob: a predicate over strings. */
export type GlobMatcher = (value: string) => boolean;

/** Whether a pattern has glob syntax (`*`, `?`, `[…]`, `{…}`); otherwise it matches exactly. */
export function isGlobPattern(pattern: string): boolean {
  return /[*?[\]{}]/.test(pattern);
}

/** How a Windows path is written in a glob, `/` between its segments (`\\` escapes the next character there). */
const WINDOWS_HINT = "`C:/Users/alice/**`: `\\` escapes the next character in a glob";

/** Longest pattern we compile; longer patterns are refused as absurd. */
export const MAX_GLOB_LENGTH = 1024;

/** Options of {@link compileGlob}. */
export interface GlobOptions {
  /**
   * A `*` matches any run of characters, `/` and line breaks included: picomatch's `bash` reading, run
   * with `.` matching everything. For the `ask` and `deny` rules of a policy, whose
   * `command: "*rm -rf*"` is meant to meet `cd /tmp && rm -rf x` too.
   */
  readonly starCrossesSlash?: boolean;
}

export { MAX_GLOB_NESTING } from "./group-depth.js";

/**
 * The expression picomatch compiles a glob into; throws on a glob it cannot read, and on one whose groups
 * nest deeper than {@link MAX_GLOB_NESTING} (before picomatch reads it: its time grows faster than the depth).
 */
function globRegex(pattern: string, cross: boolean): RegExp {
  if (groupDepth(pattern) > MAX_GLOB_NESTING) {
    throw new Error(`groups (\`(…)\`, \`{…}\`) nest deeper than ${MAX_GLOB_NESTING} levels`);
  }
  // posix: `[!a]` negates as in every shell (without it picomatch reads a class of `!` and `a`)
  const options = { dot: true, strictBrackets: true, nobrace: false, posix: true, bash: cross };
  return picomatch.makeRe(literalQuotes(pattern), options);
}

/**
 * `pattern` with each `"` not already escaped written `\"`: a double quote in a glob is a character of the
 * text it meets, as in an exact pattern. picomatch reads `"…"` as quoting, and drops or keeps each quote
 * depending on what stands around it: `*"safe"*` met every value (an `allow` rule so written allowed
 * `rm -rf /`), `*curl * -d "*"*` needed a literal `*` and missed `curl x -d "secret"`, `"*.pem"` met only
 * the text `*.pem`.
 */
function literalQuotes(pattern: string): string {
  if (!pattern.includes('"')) return pattern;
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "\\") {
      out += pattern.slice(i, i + 2);
      i++;
    } else out += c === '"' ? '\\"' : c;
  }
  return out;
}

/**
 * The longest run of literal text every value a glob matches holds (`BEGIN` of `*BEGIN*PRIVATE KEY*`,
 * `eval(` of `*eval\(*`, none of `*a*b` or `{ab,cd}*`), read from the expression it compiles into, so
 * a search for it can decide most values before the matcher runs; "" when there is none or the glob does
 * not compile. An exact name is its own.
 */
export function requiredGlobText(pattern: string, options: GlobOptions = {}): string {
  if (!isGlobPattern(pattern)) return pattern;
  try {
    const cross = options.starCrossesSlash === true;
    const re = globRegex(pattern, cross);
    if (re.flags !== "") return "";
    return requiredText(new Parser(re.source, cross).parse());
  } catch {
    return "";
  }
}

/**
 * Compiles a glob with picomatch semantics: `*` matches any run of characters except `/`, `**` crosses
 * `/`, `?` one character, `[abc]` a class (`[!abc]` and `[^abc]` its complement), `{a,b}` alternatives;
 * dotfiles match; case-sensitive.
 * Unbalanced brackets, over-long patterns and groups nested deeper than {@link MAX_GLOB_NESTING} are
 * errors, never a pattern that matches everything.
 *
 * The expression picomatch compiles is run by {@link compileLinearRegex}, not by V8's backtracking engine:
 * the answer is the same, and the time is linear in the length of the value, whatever the pattern (V8 took
 * minutes for `*a*a*a*b` against a few hundred characters, and for `*@*.corp.com` against a megabyte).
 * With `starCrossesSlash` a `*` matches any run of characters ({@link GlobOptions}).
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): Result<GlobMatcher> {
  if (pattern.length === 0) {
    return { ok: false, issues: [{ code: "invalid_glob", path: [], message: "empty pattern" }] };
  }
  if (pattern.length > MAX_GLOB_LENGTH) {
    return {
      ok: false,
      issues: [{ code: "invalid_glob", path: [], message: `pattern longer than ${MAX_GLOB_LENGTH} characters` }],
    };
  }
  if (!isGlobPattern(pattern)) return { ok: true, value: (value) => value === pattern };
  try {
    const cross = options.starCrossesSlash === true;
    const re = globRegex(pattern, cross);
    const linear = compileLinearRegex(re.source, cross ? `${re.flags}s` : re.flags);
    return { ok: true, value: (value) => linear.test(value) };
  } catch (err) {
    const reason = err instanceof Error ? err.message.toLowerCase().replace(/\.$/, "") : "unparsable";
    // a Windows path written with `\` (`C:\Users\alice\**`): in a glob `\` escapes the next character
    const windows = pattern.includes("\\")
      ? `; write \`/\` between a path's segments, on Windows too (${WINDOWS_HINT})`
      : "";
    return {
      ok: false,
      issues: [{ code: "invalid_glob", path: [], message: `invalid glob \`${pattern}\`: ${reason}${windows}` }],
    };
  }
}
/**
 * Compiles a glob like {@link compileGlob}, run over a text with reading units ({@link ReadingText}): its
 * `?` and `[…]` also take a whole unit a person reads as one character (`?ove` meets `rnove`, the fold of
 * `ｍove`). The answer is the glob's on the text, or on any reading of it that takes units whole.
 */
export function compileGlobOverReadings(
  pattern: string,
  options: GlobOptions = {},
): Result<(readings: ReadingText) => boolean> {
  const compiled = compileGlob(pattern, options);
  if (!compiled.ok) return compiled;
  if (!isGlobPattern(pattern)) return { ok: true, value: (r) => r.text === pattern };
  const cross = options.starCrossesSlash === true;
  const re = globRegex(pattern, cross);
  return { ok: true, value: compileReadingRegex(re.source, cross ? `${re.flags}s` : re.flags) };
}

export type { ReadingText, ReadingUnit } from "./linear-regex.js";
export { compileLinearPattern, type LinearPattern } from "./linear-pattern.js";
export { UnsupportedRegexError } from "./regex-parse.js";
