import {
  compileGlob,
  isGlobPattern,
  requiredGlobText,
  spendWork,
  type GlobMatcher,
  type GlobOptions,
} from "../glob/index.js";
import type { Result } from "../issues/index.js";
import type { LiteralSearch } from "./literal-search.js";

/**
 * The work units of one reading of `text` by a string operation (a search for one character, a split, a
 * short regular expression): one per 16 characters, about what such a scan costs next to one step of the
 * linear-time matcher. Counted against a decision's budget by each matcher that reads a value.
 */
export function readingCost(text: string): number {
  return 1 + (text.length >> 4);
}

/** A test of whether a value holds `literal`: through `search` when one is given, else a string search. */
function containsTest(literal: string, search: LiteralSearch | undefined): (value: string) => boolean {
  const id = search?.register(literal);
  if (search !== undefined && id !== undefined) return (value) => search.has(value, id);
  return (value) => {
    spendWork(1 + (value.length >> 1)); // a string search: up to a step a character on a hostile text
    return value.includes(literal);
  };
}

/** A run of characters that is literal anywhere in a picomatch glob, not starting with a dot. */
const PLAIN = /^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*$/;
/** A path of plain segments, optionally absolute: `/srv/data`, `docs`. */
const PLAIN_PATH = /^\/?[A-Za-z0-9_@-][A-Za-z0-9_.@-]*(?:\/[A-Za-z0-9_@-][A-Za-z0-9_.@-]*)*$/;

/** A line terminator, which picomatch's `.` (and the `(?=.)` before a leading star) does not match. */
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;

/** Whether `value` starts with a line terminator: a leading `*` of picomatch's must start on a character `.` matches. */
function startsWithLineTerminator(value: string): boolean {
  return value.length > 0 && LINE_TERMINATOR.test(value[0] as string);
}

/** Whether a path below a `/**` has no `.` or `..` segment (picomatch never lets `**` match those). */
function hasNoDotSegment(rest: string): boolean {
  for (const segment of rest.split("/")) if (segment === "." || segment === "..") return false;
  return true;
}

/**
 * Compiles a glob like {@link compileGlob}, with string-operation fast paths that give exactly picomatch's
 * answer for the shapes most rules use: `lit*` (starts with `lit`, no `/` after), `*lit` (ends with `lit`,
 * no `/`), `*lit*` (contains `lit`, no `/` but one at the end) and `dir/**` (`dir` itself or anything below it without `.`
 * or `..` segments), where `lit` and the segments of `dir` are letters, digits and `_ . @ -` not starting
 * with a dot. Thousands of distinct regular expressions, each run now and then, stay slow in V8
 * (measured ~2 µs per test at 10,000 patterns against ~0.1 µs for one hot pattern); these shapes avoid
 * them. Everything else, and every error, comes from compileGlob. A property test holds the two equal.
 */
export function compileRuleGlob(
  pattern: string,
  options: GlobOptions = {},
  search?: LiteralSearch,
): Result<GlobMatcher> {
  const compiled = compileGlob(pattern, options);
  if (!compiled.ok) return compiled;
  if (!isGlobPattern(pattern)) {
    const exact = compiled.value;
    return { ok: true, value: (value) => (spendWork(1), exact(value)) };
  }
  const base = withRequiredText(pattern, options, compiled, search);
  if (pattern.length < 2) return base;
  if (options.starCrossesSlash === true) return crossingFastPath(pattern, search) ?? base;
  if (pattern.endsWith("/**")) {
    const dir = pattern.slice(0, -3);
    if (!PLAIN_PATH.test(dir)) return base;
    const below = `${dir}/`;
    return {
      ok: true,
      value: (value) => {
        if (value === dir) return true;
        if (!value.startsWith(below)) return false;
        spendWork(2 * readingCost(value));
        return hasNoDotSegment(value.slice(below.length)) && !LINE_TERMINATOR.test(value.slice(below.length));
      },
    };
  }
  if (pattern.startsWith("*") && pattern.endsWith("*") && pattern.length > 2) {
    const middle = pattern.slice(1, -1);
    if (!PLAIN.test(middle)) return base;
    const contains = containsTest(middle, search);
    // picomatch lets a pattern ending in `*` match one trailing `/` here.
    const matches = (value: string): boolean => {
      if (!contains(value)) return false; // `middle` holds no `/`: the trailing one changes nothing
      spendWork(readingCost(value));
      const v = value.endsWith("/") ? value.slice(0, -1) : value;
      return !v.includes("/") && !startsWithLineTerminator(v);
    };
    return { ok: true, value: matches };
  }
  const body = pattern.slice(0, -1);
  if (pattern.endsWith("*") && PLAIN.test(body)) {
    return {
      ok: true,
      value: (value) => value.startsWith(body) && (spendWork(readingCost(value)), !value.includes("/", body.length)),
    };
  }
  const tail = pattern.slice(1);
  if (pattern.startsWith("*") && PLAIN.test(tail)) {
    return {
      ok: true,
      value: (value) =>
        value.endsWith(tail) &&
        (spendWork(readingCost(value)), !value.includes("/")) &&
        !startsWithLineTerminator(value),
    };
  }
  return base;
}

/**
 * The glob with a search for the longest literal text every match must hold (`-----BEGIN` in
 * `*-----BEGIN*PRIVATE KEY*`, `eval(` in `*eval\\(*`: {@link requiredGlobText}) before its matcher runs:
 * a search (through `search`, one pass for every literal of the policy) reads a long argument in a fraction
 * of what the linear-time matcher spends on it, and most arguments hold no such text.
 */
function withRequiredText(
  pattern: string,
  options: GlobOptions,
  compiled: Result<GlobMatcher> & { ok: true },
  search: LiteralSearch | undefined,
): Result<GlobMatcher> {
  const required = requiredGlobText(pattern, options);
  const matches = compiled.value;
  if (required.length < 2) return compiled;
  const contains = containsTest(required, search);
  return { ok: true, value: (value) => contains(value) && matches(value) };
}

/** Runs of letters, digits, spaces and `_ @ -` between single stars: `BEGIN*PRIVATE KEY` of `*BEGIN*PRIVATE KEY*`. */
const LITERALS_BETWEEN_STARS = /^[A-Za-z0-9 _@-]+(?:\*[A-Za-z0-9 _@-]+)*$/;

/**
 * `*a*b*` with `*` crossing `/`: the value holds `a`, then `b` after it (picomatch's `bash` expression
 * `^.*?a.*?b.*?\/?$`, run with `.` matching everything): each literal first searched for alone (through
 * `search`, one pass for the policy's literals), then in order, so a value that lacks one is decided without
 * reading it again, and one that holds them all is read once more, never by the linear-time matcher.
 */
function inOrder(literals: readonly string[], search: LiteralSearch | undefined): Result<GlobMatcher> {
  const tests = literals.map((literal) => containsTest(literal, search));
  return {
    ok: true,
    value: (value) => {
      for (const holds of tests) if (!holds(value)) return false;
      spendWork(1 + (value.length >> 1)); // string searches: up to a step a character on a hostile text
      let at = 0;
      for (const literal of literals) {
        const found = value.indexOf(literal, at);
        if (found < 0) return false;
        at = found + literal.length;
      }
      return true;
    },
  };
}

/** `/` then `.` or `..` as a whole segment: what picomatch's `bash` star after a literal will not match. */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/;

/**
 * The fast paths of {@link compileRuleGlob} when `*` crosses `/` (and line breaks): `*lit*` contains
 * `lit`, `*lit` ends with it, `lit*` starts with it and has no `.` or `..` segment after it — exactly
 * what picomatch's `bash` expression gives, run with `.` matching everything (a property test holds the
 * two equal). Undefined for any other shape.
 */
function crossingFastPath(pattern: string, search: LiteralSearch | undefined): Result<GlobMatcher> | undefined {
  if (pattern.startsWith("*") && pattern.endsWith("*") && pattern.length > 2) {
    const middle = pattern.slice(1, -1);
    if (PLAIN.test(middle)) return { ok: true, value: containsTest(middle, search) };
    return LITERALS_BETWEEN_STARS.test(middle) ? inOrder(middle.split("*"), search) : undefined;
  }
  const body = pattern.slice(0, -1);
  if (pattern.endsWith("*") && PLAIN.test(body)) {
    return {
      ok: true,
      value: (value) =>
        value.startsWith(body) && (spendWork(readingCost(value)), !DOT_SEGMENT.test(value.slice(body.length))),
    };
  }
  const tail = pattern.slice(1);
  if (pattern.startsWith("*") && PLAIN.test(tail)) return { ok: true, value: (value) => value.endsWith(tail) };
  return undefined;
}
