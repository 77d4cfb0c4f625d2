/**
 * The other forms of an `ask` or `deny` rule's pattern a value is also tried on: its NFKC and IDNA forms,
 * the homes a `~` pattern may mean (and a home pattern with the stand-in user), the URLs a host pattern
 * names, and a pattern without its leading `./`.
 */
import { compileRuleGlob } from "./fast-glob.js";
import type { LiteralSearch } from "./literal-search.js";
import { homeReferenceAsTilde, homesWithinPattern } from "./home-references.js";
import { asciiDomains, ROOT_HOMES, SOME_USER, USER_HOME_ROOTS } from "./normal-form.js";
import { lowerOf, PLAIN_ASCII } from "./value-forms.js";

/**
 * For a pattern not in ASCII: a test of a value (as written and in lower case) against the pattern's NFKC
 * form and the form with its domain names as IDNA writes them ({@link asciiDomains}), each in lower case,
 * `*` crossing `/`; undefined when neither differs from the pattern.
 */
export function patternForms(
  expected: string,
  search: LiteralSearch | undefined,
): ((value: string) => boolean) | undefined {
  if (PLAIN_ASCII.test(expected)) return undefined;
  const nfkc = expected.normalize("NFKC");
  const forms = new Set([nfkc, asciiDomains(expected), asciiDomains(nfkc)].map((form) => form.toLowerCase()));
  forms.delete(expected.toLowerCase());
  return formsTest([...forms], search);
}

/** Whether a glob's brackets, braces and parentheses close within `text` (a segment of it, so no `/` inside them). */
export function closes(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === "[" || char === "{" || char === "(") depth++;
    else if (char === "]" || char === "}" || char === ")") depth--;
    if (depth < 0) return false;
  }
  return depth === 0 && !text.includes("\\");
}

/**
 * The homes a path pattern written with `~` (`~/.ssh/**`, `~alice/.ssh/**`) may mean: `/home/` any user
 * (`*`) `/.ssh/**` and so in each home root, and root's homes (`/root/.ssh/**`) for `~`, `~root` and a
 * user's glob meeting `root` (`~*`);
 * `/home/alice/.ssh/**`, … for `~alice`. A pattern starting with a home's environment reference
 * (`$HOME/.ssh/**`, `%USERPROFILE%/.ssh/**`: {@link homeReferenceAsTilde}) is read as `~` first. With
 * `lower`, the roots in lower case (for a pattern and a value in lower case); empty for another pattern.
 */
export function tildeHomes(pattern: string, lower: boolean): string[] {
  const text = homeReferenceAsTilde(pattern) ?? pattern;
  const tilde = /^~([^/\\]*)(?=\/|$)/.exec(text);
  if (tilde === null) return [];
  const out: string[] = [];
  const name = tilde[1] as string;
  const rest = text.slice(tilde[0].length);
  if (closes(name)) {
    for (const root of USER_HOME_ROOTS)
      out.push(`${lower ? root.toLowerCase() : root}/${name === "" ? "*" : name}${rest}`);
  }
  if (name === "" || name === "root" || namesRoot(name)) for (const home of ROOT_HOMES) out.push(`${home}${rest}`);
  return out;
}

/** Whether the user of a `~name` pattern is a glob meeting `root` (`~*`, `~r*`): root's homes are among its homes. */
function namesRoot(name: string): boolean {
  if (!closes(name)) return false;
  const glob = compileRuleGlob(name, {});
  return glob.ok && glob.value("root");
}

/**
 * The forms of a path pattern that meet the paths a value starting with `~` (or a home's environment
 * reference) expands to (`homePaths`): a pattern naming a user's home (`/home/alice/.ssh/**`) also with
 * the stand-in user `~` for the user (`/home/~/.ssh/**`), since the home of `~` is not known; and a
 * pattern written with `~` or a home's environment reference (`~/.ssh/**`, `$HOME/.ssh/**`) also as
 * every home it may mean ({@link tildeHomes}), and so one written with it after its first character
 * (`*~/.ssh/*`, `cat $HOME/.ssh/*`: `homesWithinPattern`).
 * In lower case, for a value in lower case.
 */
export function homePatterns(pattern: string): string[] {
  const out: string[] = [];
  const lower = pattern.toLowerCase();
  for (const root of USER_HOME_ROOTS) {
    const prefix = `${root.toLowerCase()}/`;
    if (!lower.startsWith(prefix)) continue;
    const after = lower.slice(prefix.length);
    const end = after.indexOf("/");
    const user = end < 0 ? after : after.slice(0, end);
    if (user !== "" && closes(user)) out.push(`${prefix}${SOME_USER}${end < 0 ? "" : after.slice(end)}`);
  }
  const within = withStandInUsers(lower);
  if (within !== undefined) out.push(within);
  out.push(...tildeHomes(lower, true));
  // and a home after the pattern's first character (`*~/.ssh/*`, `**/$HOME/.aws/**`) as every home it may mean
  const roots = USER_HOME_ROOTS.map((root) => root.toLowerCase());
  out.push(...homesWithinPattern(lower, roots, ROOT_HOMES, namesRoot));
  return out;
}

/**
 * A pattern (in lower case) naming a user's home after its first character (`cat /home/alice/.ssh/*`,
 * `--key=c:/users/alice/**`) with the stand-in user `~` for each such user, which meets the homes a value with a
 * home inside it is read as (`cat /home/~/.ssh/id_rsa` of `cat $HOME/.ssh/id_rsa`: `homesWithin`);
 * undefined when it names none.
 */
function withStandInUsers(lower: string): string | undefined {
  const roots = USER_HOME_ROOTS.map((root) => `${root.toLowerCase()}/`);
  let out = lower;
  for (const prefix of roots) {
    let at = out.indexOf(prefix, 1);
    while (at > 0) {
      const start = at + prefix.length;
      const end = out.indexOf("/", start);
      const user = end < 0 ? out.slice(start) : out.slice(start, end);
      if (user !== "" && user !== SOME_USER && closes(user))
        out = out.slice(0, start) + SOME_USER + out.slice(start + user.length);
      at = out.indexOf(prefix, start);
    }
  }
  return out === lower ? undefined : out;
}

/** A pattern's first segment when it is a host: a dot, a port or `localhost` (`evil.example`, `*.evil.example:8080`). */
const HOST_PATTERN = /^([^\s@/?#\\:]+)(:\d+)?(?=[/?#]|$)/;

/**
 * The forms of a pattern written without a scheme whose first segment is a host (`evil.example/**`,
 * `//evil.example/x`, `evil.example`): the `https://` and `http://` URLs it names, and for a host alone also
 * every URL on it (`https://evil.example/**`), as a client reads the value `evil.example/x`. In lower case.
 */
export function urlPatterns(pattern: string): string[] {
  const lower = pattern.toLowerCase();
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(lower) || /\s/.test(lower)) return [];
  const body = lower.startsWith("//") ? lower.slice(2) : lower;
  const first = HOST_PATTERN.exec(body);
  if (first === null) return [];
  const host = first[1] as string;
  if (host.startsWith(".") || !closes(host)) return []; // `./x`, `../x`: a relative path
  if (!host.includes(".") && first[2] === undefined && host !== "localhost") return [];
  const alone = first[0].length === body.length;
  return ["https://", "http://"].flatMap((scheme) =>
    alone ? [scheme + body, `${scheme}${body}/**`] : [scheme + body],
  );
}

/** A test of a value (in lower case) against a pattern's other `forms`, `*` crossing `/`; undefined when it has none. */
export function formsTest(
  forms: readonly string[],
  search: LiteralSearch | undefined,
): ((value: string) => boolean) | undefined {
  const globs: ((value: string) => boolean)[] = [];
  for (const form of forms) {
    const glob = compileRuleGlob(form, { starCrossesSlash: true }, search);
    if (glob.ok) globs.push(glob.value);
  }
  if (globs.length === 0) return undefined;
  return (value) => {
    const lower = lowerOf(value);
    return globs.some((glob) => glob(lower));
  };
}

/**
 * `text` without the `./` it starts with, however many (`././data/x` is `data/x`), each only where a name
 * follows (`.//etc/passwd` is the relative `./etc/passwd`, not `/etc/passwd`: it is kept as it is).
 */
export function withoutDotSlash(text: string): string {
  let at = 0;
  while (text.startsWith("./", at) && text[at + 2] !== "/") at += 2;
  return at === 0 ? text : text.slice(at);
}
