import { compileGlob, isGlobPattern, type GlobMatcher, type GlobOptions } from "../glob/index.js";
import type { Result } from "../issues/index.js";

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
export function compileRuleGlob(pattern: string, options: GlobOptions = {}): Result<GlobMatcher> {
  const compiled = compileGlob(pattern, options);
  if (!compiled.ok || pattern.length < 2) return compiled;
  const base = withRequiredText(pattern, compiled);
  if (options.starCrossesSlash === true) return crossingFastPath(pattern) ?? base;
  if (pattern.endsWith("/**")) {
    const dir = pattern.slice(0, -3);
    if (!PLAIN_PATH.test(dir)) return base;
    const below = `${dir}/`;
    return {
      ok: true,
      value: (value) =>
        value === dir ||
        (value.startsWith(below) &&
          hasNoDotSegment(value.slice(below.length)) &&
          !LINE_TERMINATOR.test(value.slice(below.length))),
    };
  }
  if (pattern.startsWith("*") && pattern.endsWith("*") && pattern.length > 2) {
    const middle = pattern.slice(1, -1);
    if (!PLAIN.test(middle)) return base;
    // picomatch lets a pattern ending in `*` match one trailing `/` here.
    const matches = (value: string): boolean => {
      const v = value.endsWith("/") ? value.slice(0, -1) : value;
      return v.includes(middle) && !v.includes("/") && !startsWithLineTerminator(v);
    };
    return { ok: true, value: matches };
  }
  const body = pattern.slice(0, -1);
  if (pattern.endsWith("*") && PLAIN.test(body)) {
    return { ok: true, value: (value) => value.startsWith(body) && !value.includes("/", body.length) };
  }
  const tail = pattern.slice(1);
  if (pattern.startsWith("*") && PLAIN.test(tail)) {
    return {
      ok: true,
      value: (value) => value.endsWith(tail) && !value.includes("/") && !startsWithLineTerminator(value),
    };
  }
  return base;
}

/** A glob of literal runs, `*` and `?` only: no class, brace, extglob, escape or negation. */
const SIMPLE_GLOB = /^[^!\\[\]{}()]*$/;
/** The runs of a simple glob's text that are literal wherever they stand, 3 characters at least. */
const LITERAL_RUN = /[A-Za-z0-9 _-]{3,}/g;

/**
 * The glob with a search for the longest literal run every match must hold (`-----BEGIN` in
 * `*-----BEGIN*PRIVATE KEY*`) before its matcher runs: a string search reads a long argument in a
 * fraction of what the linear-time matcher spends on it, and most arguments hold no such text. Only
 * globs without classes, braces, extglobs, escapes or negation, whose literal runs are literal text.
 */
function withRequiredText(pattern: string, compiled: Result<GlobMatcher> & { ok: true }): Result<GlobMatcher> {
  if (!SIMPLE_GLOB.test(pattern) || !isGlobPattern(pattern)) return compiled;
  let longest = "";
  for (const run of pattern.match(LITERAL_RUN) ?? []) if (run.length > longest.length) longest = run;
  if (longest === "") return compiled;
  const matches = compiled.value;
  return { ok: true, value: (value) => value.includes(longest) && matches(value) };
}

/** `/` then `.` or `..` as a whole segment: what picomatch's `bash` star after a literal will not match. */
const DOT_SEGMENT = /\/\.{1,2}(?:\/|$)/;

/**
 * The fast paths of {@link compileRuleGlob} when `*` crosses `/` (and line breaks): `*lit*` contains
 * `lit`, `*lit` ends with it, `lit*` starts with it and has no `.` or `..` segment after it — exactly
 * what picomatch's `bash` expression gives, run with `.` matching everything (a property test holds the
 * two equal). Undefined for any other shape.
 */
function crossingFastPath(pattern: string): Result<GlobMatcher> | undefined {
  if (pattern.startsWith("*") && pattern.endsWith("*") && pattern.length > 2) {
    const middle = pattern.slice(1, -1);
    return PLAIN.test(middle) ? { ok: true, value: (value) => value.includes(middle) } : undefined;
  }
  const body = pattern.slice(0, -1);
  if (pattern.endsWith("*") && PLAIN.test(body)) {
    return {
      ok: true,
      value: (value) => value.startsWith(body) && !DOT_SEGMENT.test(value.slice(body.length)),
    };
  }
  const tail = pattern.slice(1);
  if (pattern.startsWith("*") && PLAIN.test(tail)) return { ok: true, value: (value) => value.endsWith(tail) };
  return undefined;
}
