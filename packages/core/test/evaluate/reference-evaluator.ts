/**
 * A deliberately naive reference evaluator: a linear scan over the rules, globs compiled by their text alone,
 * argument paths walked with plain recursion, the local time read with a fresh Intl formatter. Written
 * straight from docs/reference/evaluation.md; the real evaluator is tested against it.
 */
import { posix } from "node:path";
import { compileGlob, isGlobPattern } from "../../src/glob/index.js";
import { classifyAction } from "../../src/classify/index.js";
import type { ArgMatchValue, Policy, PolicyRule, TimeOfDay } from "../../src/policy/types.js";
import { foldGlobPattern, foldName, type ActionRequest } from "../../src/request/index.js";
import { addressesIn, isAddressPattern } from "../../src/evaluate/arg-match.js";
import {
  closes,
  envHome,
  homes,
  homesWithin,
  patternHomesWithin,
  quotedHomeGlob,
  standInUsers,
  tildePatternHomes,
  USER_HOMES,
} from "./reference-homes.js";

/** Each glob compiled once by its text (the only thing kept between uses: a glob's meaning is its text). */
const COMPILED = new Map<string, ReturnType<typeof compileGlob>>();

function compiledGlob(pattern: string, options: { starCrossesSlash?: boolean } = {}): ReturnType<typeof compileGlob> {
  const key = `${options.starCrossesSlash === true ? "x" : "-"}${pattern}`;
  let r = COMPILED.get(key);
  if (r === undefined) {
    r = compileGlob(pattern, options);
    if (COMPILED.size < 10_000) COMPILED.set(key, r);
  }
  return r;
}

function globMatches(pattern: string, value: string, starCrossesSlash = false): boolean {
  const r = compiledGlob(pattern, { starCrossesSlash });
  if (!r.ok) throw new Error("bad glob in reference");
  return r.value(value);
}

/** In an ask or deny rule, what a server may coerce to a number or boolean counts as it (evaluation.md). */
function coerced(expected: number | boolean, actual: unknown): boolean {
  if (typeof actual === "string") {
    const text = actual.trim().toLowerCase();
    // Python reads `1_000` as 1000 (PEP 515)
    const grouped = /^[+-]?\d+(_\d+)*(\.\d+(_\d+)*)?$/.test(text) ? text.replace(/_/g, "") : text;
    if (typeof expected === "number") return text !== "" && (Number(text) === expected || Number(grouped) === expected);
    const words = expected ? ["true", "1", "yes", "on", "t", "y"] : ["false", "0", "no", "off", "f", "n"];
    return words.includes(text);
  }
  return typeof expected === "boolean" && typeof actual === "number" && actual === (expected ? 1 : 0);
}

/**
 * What an ask or deny rule's glob is also tried on: an http(s)/ws(s)/ftp URL as the WHATWG parser reads
 * it (no user info, no trailing dot in the host, its path as POSIX normalises it with unreserved escapes
 * decoded), else the path (or a URL's path) as POSIX normalises it.
 */
function normalised(text: string): string {
  try {
    const url = new URL(text);
    if (["http:", "https:", "ws:", "wss:", "ftp:"].includes(url.protocol)) {
      const path = posix
        .normalize(url.pathname)
        .replace(/%([0-9A-Fa-f]{2})/g, (e, h: string) =>
          /[A-Za-z0-9._~-]/.test(String.fromCharCode(parseInt(h, 16))) ? String.fromCharCode(parseInt(h, 16)) : e,
        );
      const host = url.hostname.replace(/\.$/, "");
      return `${url.protocol}//${host}${url.port ? `:${url.port}` : ""}${path}${url.search}${url.hash}`;
    }
  } catch {
    // not a URL: a path
  }
  const start = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(text)?.[0] ?? "";
  const rest = text.slice(start.length);
  return rest === "" ? text : start + posix.normalize(rest);
}

/** Each domain name with a label not in ASCII as the WHATWG URL parser writes its host (punycode). */
function idna(text: string): string {
  return text.replace(/[\p{L}\p{M}\p{N}_-]+(?:\.[\p{L}\p{M}\p{N}_-]+)+/gu, (name) => {
    if (!/[\u0080-\uffff]/.test(name)) return name;
    try {
      return new URL(`http://${name}/`).hostname;
    } catch {
      return name;
    }
  });
}

/** `%XX` of an unreserved character decoded. */
function decodeUnreserved(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (e, h: string) =>
    /[A-Za-z0-9._~-]/.test(String.fromCharCode(parseInt(h, 16))) ? String.fromCharCode(parseInt(h, 16)) : e,
  );
}

/** Every run of escapes decoded as UTF-8 (a run that is not kept). */
function decodeAll(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/** `text` decoded once, twice and three times (a chain of readers each decoding once), each that differs. */
function decodedAgain(text: string): string[] {
  const out: string[] = [];
  let form = text;
  for (let i = 0; i < 3; i++) {
    const next = decodeAll(form);
    if (next === form) break;
    out.push(next);
    form = next;
  }
  return out;
}

/** Each path segment without its parameters (`;` up to the next `/`, `\`, `?` or `#`), as Tomcat reads it. */
function unparameterised(text: string): string {
  return text.replace(/;[^/\\?#]*/g, "");
}

/** NFKC, where it holds more of `./\%;:?#@` or more escapes than the text (`．．／` is `../`, `%２ｅ` is `%2e`); else the text. */
function structural(text: string): string {
  const count = (t: string): number => (t.match(/[./\\%;:?#@]/g) ?? []).length;
  const escapes = (t: string): number => (t.match(/%[0-9A-Fa-f]{2}/g) ?? []).length;
  const nfkc = text.normalize("NFKC");
  return count(nfkc) > count(text) || escapes(nfkc) > escapes(text) ? nfkc : text;
}

/**
 * `text` as a chain of readers that each decode and then read the result in `compat` (NFKC) reads it: up to
 * three decodings, each made of the form before in `compat`; each form, and whether a fourth decoding of
 * the last would change nothing.
 */
function normalisedChain(text: string, compat: (form: string) => string): { forms: string[]; settled: boolean } {
  const forms: string[] = [];
  let form = text;
  let steps = 0;
  for (; steps < 3 && /%[0-9A-Fa-f]{2}/.test(form); steps++) {
    const next = decodeAll(form);
    if (next === form) break;
    form = compat(next);
    forms.push(next, form);
  }
  return { forms, settled: steps < 3 || decodeAll(form) === form };
}

/** A pattern or value without the `./` it starts with, however many, each followed by a name, not `/`. */
function undot(text: string): string {
  return text.replace(/^(?:\.\/(?!\/))+/, "");
}

/** A pattern with `/` for the `\` of a Windows path (a literal `\`, written `\\` in a glob). */
function slashedForm(pattern: string): string {
  return isGlobPattern(pattern) ? pattern.split("\\\\").join("/") : pattern.split("\\").join("/");
}

/** A URL written without its scheme (`//evil.com/x`, `evil.com/x`, `localhost:3000`), as https and http. */
function withScheme(text: string): string[] {
  if (/\s/.test(text) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return [];
  let rest = text;
  if (text.startsWith("//")) {
    if (text.startsWith("///")) return [];
    rest = text.slice(2);
  } else {
    const first = /^(?:[^\s@/?#\\]+@)?([^\s@/?#\\:.][^\s@/?#\\:]*)(:\d+)?(?:[/?#]|$)/u.exec(text);
    const host = first?.[1] ?? "";
    if (first === null || (!host.includes(".") && first[2] === undefined && host.toLowerCase() !== "localhost")) {
      return [];
    }
  }
  return [normalised(`https://${rest}`), normalised(`http://${rest}`)];
}

/**
 * A path pattern naming a user's home with `~` for the user (`/home/~/.ssh/**`), a pattern written with
 * `~` as every home it may mean, and a pattern naming a host without a scheme as URLs; in lower case.
 */
function homePatterns(pattern: string): string[] {
  const lower = pattern.toLowerCase();
  const out: string[] = [];
  for (const root of USER_HOMES) {
    const prefix = `${root.toLowerCase()}/`;
    if (!lower.startsWith(prefix)) continue;
    const [user = "", ...more] = lower.slice(prefix.length).split("/");
    if (user !== "" && closes(user)) out.push([`${prefix}~`, ...more].join("/"));
  }
  // a pattern naming a user's home after its first character, with `~` for the user
  out.push(standInUsers(lower));
  // a pattern written with `~`, or with a home's environment reference read as `~`
  out.push(...tildePatternHomes(lower, true));
  // and one with a home after its first character (`*~/.ssh/*`), as every home it may mean
  out.push(...patternHomesWithin(lower));
  // a pattern without a scheme whose first segment is a host: the https and http URLs it names, and for a
  // host alone every URL on it
  if (!/^[a-z][a-z0-9+.-]*:\/\//.test(lower) && !/\s/.test(lower)) {
    const body = lower.startsWith("//") ? lower.slice(2) : lower;
    const first = /^([^\s@/?#\\:]+)(:\d+)?(?=[/?#]|$)/.exec(body);
    const host = first?.[1] ?? "";
    const named = host.includes(".") || first?.[2] !== undefined || host === "localhost";
    if (first !== null && named && !host.startsWith(".") && closes(host)) {
      for (const scheme of ["https://", "http://"]) {
        out.push(scheme + body);
        if (first[0] === body) out.push(`${scheme}${body}/**`);
      }
    }
  }
  return out.filter((form) => compiledGlob(form, { starCrossesSlash: true }).ok);
}

/** A value of one line (white space at its ends aside) and at most 4,096 characters: a path, a URL, an address. */
function readInFull(text: string): boolean {
  // eslint-disable-next-line no-control-regex -- the C0 controls the WHATWG URL parser strips
  const trimmed = text.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
  return text.length <= 4096 && !/[\n\r\u2028\u2029]/.test(trimmed);
}

/**
 * Every spelling an ask or deny rule's glob is tried on: the value and its normal form; for a value of one
 * line of at most 4,096 characters also the value trimmed of ASCII white space and controls, its normal
 * form, a path with unreserved escapes decoded and POSIX-normalised, a `file:` URL's path, each without a
 * trailing `/`, and each with its domain names in ASCII; for any other value its decodings.
 */
function spellings(text: string): string[] {
  const out = [text, normalised(text)];
  // eslint-disable-next-line no-control-regex -- the C0 controls the WHATWG URL parser strips
  const trimmed = text.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
  if (text.length <= 4096 && !/[\n\r\u2028\u2029]/.test(trimmed)) {
    // the value trimmed, and in NFKC (`．．／` is `../`)
    for (const base of [trimmed, trimmed.normalize("NFKC")]) {
      out.push(base, normalised(base));
      if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(base) && /%[0-9A-Fa-f]{2}/.test(base)) {
        out.push(posix.normalize(decodeUnreserved(base)));
      }
      // every escape decoded (runs as UTF-8, a run that is not kept), then again up to three times
      // each decoding also in NFKC (`%EF%BC%8E` is `．`, then `.`)
      for (const decoded of decodedAgain(base)) out.push(normalised(decoded), normalised(decoded.normalize("NFKC")));
      // and decoded again from each decoding's NFKC form (`%EF%BC%85%32%65` is `％2e`, `%2e`, then `.`)
      out.push(...normalisedChain(base, (form) => form.normalize("NFKC")).forms.map(normalised));
      if (/^file:/i.test(base)) {
        try {
          out.push(posix.normalize(decodeUnreserved(new URL(base).pathname)));
        } catch {
          // no path
        }
      }
    }
    // `\` read as `/` (a device path `//?/C:/x` as `C:/x`, `//?/UNC/s/x` as `//s/x`), a path without its
    // segments' parameters, a URL without its scheme as https and http, a `~` path as the homes it may mean
    for (const form of [...out]) {
      if (!form.includes("\\")) continue;
      const slashed = form.replaceAll("\\", "/");
      out.push(normalised(slashed));
      const device = /^(?:\/\/[?.]\/|\/\?\?\/)(UNC\/)?/i.exec(slashed);
      const named = device === null ? "" : (device[1] === undefined ? "" : "//") + slashed.slice(device[0].length);
      if (device !== null) out.push(named, normalised(named));
    }
    for (const form of [...out]) if (form.includes(";")) out.push(normalised(unparameterised(form)));
    for (const form of [...out]) out.push(...withScheme(form));
    for (const form of [...out]) out.push(envHome(form) ?? form);
    // a home inside the value after a word's start (`cat $HOME/.ssh/id_rsa`): as `~`, then as each home
    for (const form of [...out]) out.push(...homesWithin(form));
    for (const form of [...out]) out.push(...homes(form));
    for (const form of [...out]) if (form.length > 1 && form.endsWith("/")) out.push(form.slice(0, -1));
    if (/[\u0080-\uffff]/.test(trimmed)) for (const form of [...out]) out.push(idna(form));
  } else {
    // a value of several lines or over 4,096 characters: as a text, whole, in NFKC where that spells more
    // structure, its escapes decoded up to three times (and from a decoding's NFKC form), `\` read as `/`
    for (const base of [text, structural(text)]) {
      out.push(base);
      for (const decoded of decodedAgain(base)) out.push(decoded, structural(decoded));
      out.push(...normalisedChain(base, structural).forms);
    }
    for (const form of [...out]) if (form.includes("\\")) out.push(form.replaceAll("\\", "/"));
  }
  return out;
}

/**
 * Whether a value of several lines or over 4,096 characters, read whole as a text (no query cut off), or its
 * NFKC form where that spells more structure, is still decoding after three decodings: its reading not known.
 */
function textUnknown(text: string): boolean {
  for (const base of [text, structural(text)]) {
    const last = decodedAgain(base)[2];
    if (last !== undefined && decodeAll(last) !== last) return true;
    if (!normalisedChain(base, structural).settled) return true;
  }
  return false;
}

/**
 * What an allow rule's glob must also meet (evaluation.md): the value's normal form, and that of it trimmed,
 * in NFKC where that spells more structure, with its unreserved escapes decoded and with every escape
 * decoded once to three times (a URL's path, before `?` or `#`), each also without its path segments'
 * parameters, each also with `\` read as `/` (a URL's path only); null when three decodings do not settle it.
 */
function allowReadings(text: string): string[] | null {
  const cut = (form: string): [string, string] => {
    const end = /^[A-Za-z][A-Za-z0-9+.-]+:/.test(form) ? form.search(/[?#]/) : -1; // `C:` is a Windows drive
    return end < 0 ? [form, ""] : [form.slice(0, end), form.slice(end)];
  };
  // eslint-disable-next-line no-control-regex -- the C0 controls the WHATWG URL parser strips
  const trimmed = text.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
  const forms = [text];
  // the value trimmed, and in NFKC where that spells more structure; each decoded up to three times
  for (const base of [trimmed, structural(trimmed)]) {
    const [path, query] = cut(base);
    forms.push(base, decodeUnreserved(path) + query);
    const decoded = decodedAgain(path);
    forms.push(...decoded.map((d) => d + query), ...decoded.map((d) => structural(d) + query));
    // still decoding after three: no reading known, never allowed
    const last = decoded[2];
    if (last !== undefined && decodeAll(last) !== last) return null;
    // and decoded again from each decoding's NFKC form where that spells more structure, within three decodings
    const chain = normalisedChain(path, structural);
    if (!chain.settled) return null;
    forms.push(...chain.forms.map((d) => d + query));
  }
  // each without its path segments' parameters too: a path or URL, or a value with a `..;` or `.;` segment
  for (const form of [...forms]) {
    const [p, q] = cut(form);
    if (/^(?:[/\\.~]|[A-Za-z]:|[A-Za-z][A-Za-z0-9+.-]+:)|(?:^|[/\\])\.\.?;/.test(form))
      forms.push(unparameterised(p) + q);
  }
  const out: string[] = [];
  for (const form of forms) {
    out.push(normalised(form));
    const [p, q] = cut(form);
    out.push(normalised(p.replaceAll("\\", "/") + q));
  }
  // a value starting with `~`, `~name` or a home's environment reference: each home it may be
  for (const form of [...out, text]) out.push(...homes(envHome(form) ?? form));
  return out;
}

/**
 * Whether an allow rule's glob meets a reading, or it without a trailing `/`; or the pattern with `/` for
 * the `\` of a Windows path (a literal `\`: `\\` in a glob) does.
 */
function allowAgrees(pattern: string, reading: string): boolean {
  const meets = (m: (v: string) => boolean): boolean =>
    m(reading) || (reading.length > 1 && reading.endsWith("/") && m(reading.slice(0, -1)));
  const slashed = slashedForm(pattern);
  // a pattern starting with `~`, `~name` or a home's environment reference: as each home it may mean
  const homeForms = tildePatternHomes(slashed, false);
  return (
    meets((v) => allowMeets(pattern, v)) ||
    (slashed !== pattern && compiledGlob(slashed).ok && meets((v) => globMatches(slashed, v))) ||
    homeForms.some((form) => compiledGlob(form).ok && meets((v) => globMatches(form, v)))
  );
}

/**
 * Whether an allow rule's glob meets a value as written (a glob starting with a home reference in double
 * quotes with its quotes kept): a pattern starting with `./` also when both without their leading `./` do.
 */
function allowMeets(pattern: string, value: string): boolean {
  // a glob starting with a home reference in double quotes keeps its quotes (`"$HOME"/x/**` meets `"$HOME"/x/y`)
  const written = compiledGlob(quotedHomeGlob(pattern)).ok ? quotedHomeGlob(pattern) : pattern;
  if (globMatches(written, value)) return true;
  const bare = undot(pattern);
  return bare !== pattern && bare !== "" && compiledGlob(bare).ok && globMatches(bare, undot(value));
}

/**
 * Whether a relative path that leaves its directory (`../../etc/passwd`) may be one a pattern names: what
 * follows its `..` segments, in lower case, matches the pattern (in lower case, `*` crossing `/`) from one
 * of its segments on, where what follows holds a plain name (evaluation.md). Not for a pattern with `\` or
 * a bracket or brace holding `/`.
 */
function leaves(pattern: string, form: string): boolean {
  const dotDots = /^(?:\.\.\/)+/.exec(form);
  if (dotDots === null || form.length === dotDots[0].length) return false;
  const rest = form.slice(dotDots[0].length).toLowerCase();
  const segments = pattern.toLowerCase().split("/");
  if (segments.length < 2 || !segments.every(closes)) return false;
  const plain = (s: string): boolean => s !== "" && s !== "." && s !== ".." && !isGlobPattern(s);
  for (let i = 0; i < segments.length; i++) {
    const tail = segments.slice(i);
    if (tail[0] === "" || !tail.some(plain)) continue;
    if (compiledGlob(tail.join("/"), { starCrossesSlash: true }).ok && globMatches(tail.join("/"), rest, true)) {
      return true;
    }
  }
  return false;
}

/** NFKC, the ideographic full stop as a dot, invisible characters dropped: as IDNA reads a domain. */
function compatibleForm(text: string): string {
  return text
    .normalize("NFKC")
    .replaceAll("\u3002", ".")
    .replace(/[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu, "");
}

function scalarMatches(expected: ArgMatchValue, actual: unknown, lenient: boolean): boolean {
  if (typeof expected === "string") {
    if (typeof actual === "string") {
      if (!lenient) {
        // an allow rule: the value, and every address written in it when the pattern names an address, and
        // every reading a tool may take of it (decoded, `\` as `/`, in normal form)
        return (
          allowMeets(expected, actual) &&
          (!isAddressPattern(expected) || addressesIn(actual).every((a) => allowMeets(expected, a))) &&
          (allowReadings(actual) ?? [null]).every((r) => r !== null && allowAgrees(expected, r))
        );
      }
      if (allowMeets(expected, actual)) return true;
      // ask and deny rules: `*` also crosses `/`, and the value's other spellings count too
      const lower = expected.toLowerCase();
      // a pattern not in ASCII also in NFKC and with its domains as IDNA writes them, in lower case
      const forms = /^[\t\n\r\x20-\x7e]*$/.test(expected)
        ? []
        : [expected.normalize("NFKC"), idna(expected), idna(expected.normalize("NFKC"))]
            .map((form) => form.toLowerCase())
            .filter((form) => form !== lower);
      // and a pattern with `\` for a Windows path with `/`, and one starting with `./` without it
      const home = [
        ...homePatterns(expected),
        ...[slashedForm(expected), undot(expected), quotedHomeGlob(expected)]
          .filter((form) => form !== expected && form !== "")
          .map((form) => form.toLowerCase())
          .filter((form) => compiledGlob(form, { starCrossesSlash: true }).ok),
      ];
      const spelled = (form: string): boolean =>
        home.some((f) => globMatches(f, form.toLowerCase(), true)) ||
        allowMeets(expected, form) ||
        globMatches(expected, form, true) ||
        // in any case: both in lower case
        globMatches(lower, form.toLowerCase(), true) ||
        forms.some((f) => globMatches(f, form.toLowerCase(), true));
      return (
        spellings(actual).some(spelled) ||
        // a relative path leaving its directory, as any path ending in what follows its `..` segments
        spellings(actual).some((form) => leaves(slashedForm(expected), form)) ||
        // in NFKC form (full-width letters, as IDNA reads a domain; its ideographic full stop is a dot)
        globMatches(expected, compatibleForm(actual), true) ||
        globMatches(lower, compatibleForm(actual).toLowerCase(), true) ||
        forms.some((f) => globMatches(f, compatibleForm(actual).toLowerCase(), true)) ||
        // a pattern for an address: each address written in the value (`Boss <a@evil.com>`, a list)
        (isAddressPattern(expected) && addressesIn(actual).some((a) => scalarMatches(expected, a, true))) ||
        // a value whose reading is not known (three decodings leave it still decoding: no allow rule meets it)
        // may be any path once read: of one line and at most 4,096 characters as a path or URL, else as a text
        (readInFull(actual) ? allowReadings(actual) === null : textUnknown(actual))
      );
    }
    if (typeof actual === "number" && Number.isFinite(actual)) return globMatches(expected, String(actual));
    if (typeof actual === "boolean") {
      if (globMatches(expected, String(actual))) return true;
      // ask and deny rules: `yes` (YAML 1.1's true, a string in 1.2) also means the boolean
      const words = actual ? ["true", "1", "yes", "on", "t", "y"] : ["false", "0", "no", "off", "f", "n"];
      return lenient && words.includes(expected.trim().toLowerCase());
    }
    return false;
  }
  if (actual === expected) return true;
  return lenient && expected !== null && coerced(expected, actual);
}

/** A key folded as a name is, without `_` or `-`: what a server may read as the key (evaluation.md). */
function keyFold(key: string): string {
  return foldName(key).replaceAll("_", "").replaceAll("-", "");
}

/**
 * All the values a dotted path reaches, arrays flattened, under the key as written and every key that folds
 * as it does; `missing` when some branch lacks the key as written.
 */
function collect(value: unknown, path: string[], out: { values: unknown[]; missing: boolean }): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.missing = true;
    for (const item of value) collect(item, path, out);
    return;
  }
  if (path.length === 0) {
    out.values.push(value);
    return;
  }
  const [head = "", ...rest] = path;
  if (typeof value !== "object" || value === null) {
    out.missing = true;
    return;
  }
  if (!Object.prototype.hasOwnProperty.call(value, head)) out.missing = true;
  for (const key of Object.keys(value)) {
    if (key === head || keyFold(key) === keyFold(head)) collect((value as Record<string, unknown>)[key], rest, out);
  }
}

function argMatches(args: Record<string, unknown>, key: string, expected: ArgMatchValue, all: boolean): boolean {
  const out = { values: [] as unknown[], missing: false };
  collect(args, key.split("."), out);
  if (all) return !out.missing && out.values.length > 0 && out.values.every((v) => scalarMatches(expected, v, false));
  return out.values.some((v) => scalarMatches(expected, v, true));
}

function minutesOf(text: string): number {
  const [h, m] = text.split(":");
  return Number(h) * 60 + Number(m);
}

function inTimeWindow(window: TimeOfDay, now: Date): boolean {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone: window.timezone,
    hour: "numeric",
    minute: "numeric",
    hourCycle: "h23",
  }).formatToParts(now);
  const hour = Number(parts.find((p) => p.type === "hour")?.value);
  const minute = Number(parts.find((p) => p.type === "minute")?.value);
  const t = hour * 60 + minute;
  const after = window.after === undefined ? 0 : minutesOf(window.after);
  const before = window.before === undefined ? 24 * 60 : minutesOf(window.before);
  if (after < before) return t >= after && t < before;
  if (after > before) return t >= after || t < before;
  return false;
}

/** A tool or server name; an ask or deny rule's pattern also meets it in lower case, and folded the folded name. */
function nameMatches(pattern: string, name: string, lenient: boolean): boolean {
  if (globMatches(pattern, name)) return true;
  if (!lenient) return false;
  if (globMatches(pattern, name.toLowerCase())) return true;
  const folded = foldGlobPattern(pattern);
  if (!isGlobPattern(pattern)) return folded === foldName(name);
  // a glob's `?` and classes take each `rn` of the folded name as the one letter `m` a person reads in it
  return rnReadings(foldName(name)).some((reading) => globMatches(folded, reading));
}

/** `text` with each choice of its `rn`s read as `m` (`datrn` is also `datm`): every subset, naively. */
function rnReadings(text: string): string[] {
  const at = text.indexOf("rn");
  if (at < 0) return [text];
  const rest = rnReadings(text.slice(at + 2));
  return rest.flatMap((tail) => [text.slice(0, at) + "rn" + tail, text.slice(0, at) + "m" + tail]);
}

function ruleMatches(rule: PolicyRule, request: ActionRequest, category: string, now: Date): boolean {
  const m = rule.match;
  const lenient = rule.action !== "allow";
  if (m.tool !== undefined && !nameMatches(m.tool, request.tool, lenient)) return false;
  if (m.server !== undefined) {
    if (request.server === undefined) return false;
    if (!nameMatches(m.server, request.server, lenient)) return false;
  }
  if (m.category !== undefined && m.category !== category) return false;
  if (m.args !== undefined) {
    for (const key of Object.keys(m.args)) {
      if (!argMatches(request.arguments, key, m.args[key] as ArgMatchValue, rule.action === "allow")) return false;
    }
  }
  const window = rule.conditions?.time_of_day;
  if (window !== undefined && !inTimeWindow(window, now)) return false;
  return true;
}

function firstMatch(policy: Policy, request: ActionRequest, category: string, now: Date): PolicyRule | undefined {
  for (const rule of policy.rules) if (ruleMatches(rule, request, category, now)) return rule;
  return undefined;
}

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const;

/**
 * The id of the first rule (file order) that matches, or "default". A request's own category may make the
 * decision stricter, never looser: the scan runs under the category without it and under the one with it,
 * and the stricter action wins (the same action: the one without).
 */
export function referenceMatch(policy: Policy, request: ActionRequest, now: Date): string {
  const { category: own, risk_level: ownRisk, ...rest } = request;
  void ownRisk;
  const derived = firstMatch(policy, request, classifyAction(rest, policy.classify).category, now);
  if (own === undefined) return derived?.id ?? "default";
  const claimed = firstMatch(policy, request, classifyAction(request, policy.classify).category, now);
  const rank = (rule: PolicyRule | undefined): number => STRICTNESS[rule?.action ?? policy.default_action];
  const winner = rank(claimed) > rank(derived) ? claimed : derived;
  return winner?.id ?? "default";
}
