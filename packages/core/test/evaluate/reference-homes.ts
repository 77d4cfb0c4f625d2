/**
 * The reference evaluator's reading of homes (evaluation.md, policy.md "Homes written with `~`"), written
 * naively and apart from the real evaluator: where homes are, a home's environment reference read as `~`,
 * a `~` value as each home it may be, a `~` pattern as each home it may mean.
 */
import { posix } from "node:path";
import { compileGlob, isGlobPattern } from "../../src/glob/index.js";

/** Where homes are, a user's name after them (evaluation.md), and root's homes. */
export const USER_HOMES = ["/home", "/Users", "/var/home", "/usr/home", "/export/home", "C:/Users"];
export const ROOT_HOMES = ["/root", "/var/root"];

/** Whether a glob's brackets and braces close within `text`, which holds no `\`. */
export function closes(text: string): boolean {
  let depth = 0;
  for (const c of text) {
    depth += "[{(".includes(c) ? 1 : "]})".includes(c) ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth === 0 && !text.includes("\\");
}

/**
 * A value starting with a home's environment reference (`$HOME`, `${HOME}`, `$USERPROFILE`, `%USERPROFILE%`,
 * `%HOME%`, `%HOMEDRIVE%%HOMEPATH%`, `%HOMEPATH%`, `$env:USERPROFILE`, `${env:HOME}`, …, any case; or one
 * of them in double quotes) and then `/` or nothing, with `~` for the reference; else null.
 */
export function envHome(text: string): string | null {
  const names = ["home", "userprofile"];
  const references = [
    ...names.flatMap((n) => [`$${n}`, `\${${n}}`, `$env:${n}`, `\${env:${n}}`, `%${n}%`]),
    ...["", "$env:homedrive", "${env:homedrive}"].flatMap((d) => [`${d}$env:homepath`, `${d}\${env:homepath}`]),
    "%homepath%",
    "%homedrive%%homepath%",
  ];
  for (const reference of references) {
    // as written, or in double quotes a shell expands (`"$HOME"/x`, `"$HOME/x"`: the quotes dropped), not
    // in single quotes, which no shell expands, nor `"~"`
    let form = text;
    const close = text.indexOf('"', 1);
    if (text.toLowerCase().startsWith(`"${reference}`) && (close < 0 || close > reference.length)) {
      form = close < 0 ? text.slice(1) : text.slice(1, close) + text.slice(close + 1);
    }
    const rest = form.slice(reference.length);
    if (form.toLowerCase().startsWith(reference) && (rest === "" || rest.startsWith("/"))) return `~${rest}`;
  }
  return null;
}

/** A path starting with `~` (any user's home) or `~name` (name's) as each home it may be. */
export function homes(text: string): string[] {
  const tilde = /^~([^/\\]*)(?=\/|$)/.exec(text);
  if (tilde === null) return [];
  const name = tilde[1] ?? "";
  const rest = text.slice(tilde[0].length);
  const out = USER_HOMES.map((root) => posix.normalize(`${root}/${name === "" ? "~" : name}${rest}`));
  if (name === "" || name === "root") for (const home of ROOT_HOMES) out.push(posix.normalize(`${home}${rest}`));
  return out;
}

/**
 * A pattern written with `~` or `~name`, or with a home's environment reference read as `~`, as each home
 * it may mean (`/home/*` for `~`, `/home/name` for `~name`, in each root; root's homes for `~` and `~root`),
 * the roots in lower case with `lower`; empty for another pattern.
 */
export function tildePatternHomes(pattern: string, lower: boolean): string[] {
  const home = envHome(pattern) ?? pattern;
  const tilde = /^~([^/\\]*)(?=\/|$)/.exec(home);
  if (tilde === null) return [];
  const out: string[] = [];
  const name = tilde[1] ?? "";
  const rest = home.slice(tilde[0].length);
  if (closes(name)) {
    for (const root of USER_HOMES) out.push(`${lower ? root.toLowerCase() : root}/${name === "" ? "*" : name}${rest}`);
  }
  // root's homes for `~`, `~root` and a user's glob meeting `root` (`~*`)
  const glob = closes(name) ? compileGlob(name) : undefined;
  const meetsRoot = glob?.ok === true && glob.value("root");
  if (name === "" || name === "root" || meetsRoot) for (const root of ROOT_HOMES) out.push(`${root}${rest}`);
  return out;
}

/** The references {@link envHome} knows, in lower case. */
function referenceNames(): string[] {
  const names = ["home", "userprofile"];
  return [
    ...names.flatMap((n) => [`$${n}`, `\${${n}}`, `$env:${n}`, `\${env:${n}}`, `%${n}%`]),
    ...["", "$env:homedrive", "${env:homedrive}"].flatMap((d) => [`${d}$env:homepath`, `${d}\${env:homepath}`]),
    "%homepath%",
    "%homedrive%%homepath%",
  ];
}

/** What starts a word inside a value (evaluation.md): white space, `=`, `:`, a quote, `(`, `,`, `;`, `|`, `&`, `<`, `>`, a backquote. */
const startsWord = (c: string | undefined): boolean => c !== undefined && (/\s/.test(c) || "=:\"'(,;|&<>`".includes(c));
/** What may follow a home inside a value: `/`, `\`, white space, the end. */
const endsHome = (c: string | undefined): boolean => c === undefined || c === "/" || c === "\\" || /\s/.test(c);

/**
 * An ask or deny rule's readings of a value with a home inside it, after a word's start and not at its first
 * character: each home reference (bare, or wholly in double quotes) as `~`, then each `~` or `~name` so
 * placed as the home it may be, one root at a time (root's homes for `~` and `~root` only). Naively, a
 * character at a time.
 */
export function homesWithin(text: string): string[] {
  const lower = text.toLowerCase();
  const references = referenceNames().sort((a, b) => b.length - a.length);
  let tilde = "";
  for (let i = 0; i < text.length;) {
    let taken = 0;
    if (i > 0 && startsWord(text[i - 1])) {
      for (const r of references) {
        for (const written of [`"${r}"`, r]) {
          if (lower.startsWith(written, i) && endsHome(text[i + written.length])) taken ||= written.length;
        }
      }
    }
    tilde += taken > 0 ? "~" : text[i];
    i += taken > 0 ? taken : 1;
  }
  // each `~` or `~name` starting a word, as a home
  const words: { at: number; name: string }[] = [];
  for (let i = 1; i < tilde.length; i++) {
    if (tilde[i] !== "~" || !startsWord(tilde[i - 1])) continue;
    const name = /^[\w.-]*/.exec(tilde.slice(i + 1))?.[0] ?? "";
    if (endsHome(tilde[i + 1 + name.length])) words.push({ at: i, name });
  }
  if (words.length === 0) return [];
  const placed = (home: (name: string) => string | null): string => {
    let out = "";
    let from = 0;
    for (const { at, name } of words) {
      const h = home(name);
      out += tilde.slice(from, at) + (h ?? `~${name}`);
      from = at + 1 + name.length;
    }
    return out + tilde.slice(from);
  };
  return [
    tilde,
    ...USER_HOMES.map((root) => placed((name) => `${root}/${name === "" ? "~" : name}`)),
    ...ROOT_HOMES.map((root) => placed((name) => (name === "" || name === "root" ? root : null))),
  ];
}

/** What starts a home inside a pattern: what starts a word in a value, a `/`, and a glob's `*`, `?`, `]`, `}`, `)`. */
const startsPatternWord = (c: string | undefined): boolean =>
  startsWord(c) || (c !== undefined && "/*?]})".includes(c));

/**
 * An ask or deny rule's pattern (in lower case) with a home inside it, after its first character
 * (`*~/.ssh/*`, `**` `/$HOME/.aws/**`, `cat ~/.ssh/*`): each home reference (bare, or wholly in double quotes)
 * as `~`, then each `~` or `~name` (`name` may be a glob) so placed as every home it may mean, one root at a
 * time (`/home/*` for `~`; root's homes for `~`, `~root` and a glob meeting `root`), a `/` before it being
 * the root's own. Naively, a character at a time.
 */
export function patternHomesWithin(lower: string): string[] {
  const references = referenceNames().sort((a, b) => b.length - a.length);
  let tilde = "";
  for (let i = 0; i < lower.length;) {
    let taken = 0;
    if (i > 0 && startsPatternWord(lower[i - 1])) {
      for (const r of references) {
        for (const written of [`"${r}"`, r]) {
          if (lower.startsWith(written, i) && endsHome(lower[i + written.length])) taken ||= written.length;
        }
      }
    }
    tilde += taken > 0 ? "~" : lower[i];
    i += taken > 0 ? taken : 1;
  }
  const words: { at: number; name: string }[] = [];
  for (let i = 1; i < tilde.length; i++) {
    if (tilde[i] !== "~" || !startsPatternWord(tilde[i - 1])) continue;
    const name = /^[\w.*?-]*/.exec(tilde.slice(i + 1))?.[0] ?? "";
    if (endsHome(tilde[i + 1 + name.length])) words.push({ at: i, name });
  }
  if (words.length === 0) return [];
  const placed = (home: (name: string) => string | null): string => {
    let out = "";
    let from = 0;
    for (const { at, name } of words) {
      const h = home(name);
      const rooted = h !== null && tilde[at - 1] === "/" && h.startsWith("/") ? h.slice(1) : h;
      out += tilde.slice(from, at) + (rooted ?? `~${name}`);
      from = at + 1 + name.length;
    }
    return out + tilde.slice(from);
  };
  const meetsRoot = (name: string): boolean => {
    const glob = closes(name) ? compileGlob(name) : undefined;
    return name === "" || name === "root" || (glob?.ok === true && glob.value("root"));
  };
  return [
    ...USER_HOMES.map((root) => placed((name) => `${root.toLowerCase()}/${name === "" ? "*" : name}`)),
    ...ROOT_HOMES.map((root) => placed((name) => (meetsRoot(name) ? root : null))),
  ];
}

/** A pattern in lower case naming a user's home after its first character, with `~` for each such user (`*` then `/home/~/x`). */
export function standInUsers(lower: string): string {
  let out = lower;
  for (const root of USER_HOMES.map((r) => `${r.toLowerCase()}/`)) {
    const parts = out.split(root);
    // the first part is what comes before the first root; each later part starts with a user
    out = parts
      .map((part, i) => {
        if (i === 0 || (i === 1 && parts[0] === "")) return part;
        const [user = "", ...rest] = part.split("/");
        return user !== "" && closes(user) ? ["~", ...rest].join("/") : part;
      })
      .join(root);
  }
  return out;
}

/**
 * A glob starting with a home's environment reference in double quotes (`"$HOME"/x/**`, `"$HOME/x/**"`) with
 * its opening quote and the next one written `\"`, so it meets the text written so; any other pattern as it is.
 */
export function quotedHomeGlob(pattern: string): string {
  if (!isGlobPattern(pattern) || !pattern.startsWith('"')) return pattern;
  if (envHome(pattern.replaceAll("\\", "/")) === null) return pattern;
  const close = pattern.indexOf('"', 1);
  return close < 0 ? `\\${pattern}` : `\\${pattern.slice(0, close)}\\${pattern.slice(close)}`;
}
