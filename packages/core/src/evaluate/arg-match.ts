import { isGlobPattern, spendWork, workEpoch, type GlobMatcher } from "../glob/index.js";
import { agrees, allowReadings, readOtherwise, slashedPattern } from "./allow-readings.js";
import { keysReadAs } from "./arg-keys.js";
import { compileRuleGlob, readingCost } from "./fast-glob.js";
import type { LiteralSearch } from "./literal-search.js";
import {
  asciiDomains,
  MAX_DECODINGS,
  MAX_RESPELLED_LENGTH,
  respellings,
  ROOT_HOMES,
  SOME_USER,
  USER_HOME_ROOTS,
} from "./normal-form.js";
import type { ArgMatchValue } from "../policy/types.js";

/** A predicate over one scalar argument value. */
export type LeafTest = (leaf: unknown) => boolean;

/** One compiled `args:` entry. */
export interface CompiledArgMatch {
  /** The key as written (`to`, `options.recipient.domain`). */
  readonly key: string;
  readonly path: readonly string[];
  readonly test: LeafTest;
}

/** How deep arrays may nest inside the argument a rule looks at; deeper input is refused, never matched. */
export const MAX_ARRAY_NESTING = 32;

/** Strings servers commonly read as `true` / `false` (pydantic's lax mode, form fields), compared lowercased and trimmed. */
const TRUE_WORDS = new Set(["true", "1", "yes", "on", "t", "y"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off", "f", "n"]);

/** Printable ASCII and line breaks, which NFKC leaves as they are. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/**
 * The ideographic full stop, which NFKC keeps (and makes of the half-width one) but IDNA (UTS #46), the WHATWG
 * URL parser and punycode's `toASCII` (nodemailer) read as the dot between a domain's labels.
 */
const IDEOGRAPHIC_FULL_STOP = /\u3002/g;

/**
 * Characters no reader sees, which UTS #46 (IDNA, the WHATWG URL parser) drops from a domain: format
 * characters (zero-width space and joiners, the soft hyphen, bidi controls, tags) and variation selectors
 * (`a@evil\u200b.com` is `a@evil.com` there). The session runtime reads text the same way (`visibleText`).
 */
const INVISIBLE = /[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu;

/** The forms of one string argument value, each made when first asked for. */
interface Forms {
  lower?: string;
  respelled?: readonly string[];
  /** The readings an allow rule's glob must meet too ({@link allowReadings}). */
  read?: readonly string[] | null;
  compat?: string | null;
}

/** Values whose forms one decision keeps (a request with more strings than this makes them again). */
const MAX_KEPT_FORMS = 1024;

/**
 * The forms of the string argument values read in this decision, each made once for every rule that reads
 * it (and charged once: twenty rules over one megabyte of `content` lower-case it once), and made again,
 * and charged again, in the next decision ({@link workEpoch}).
 */
const kept = { epoch: -1, forms: new Map<string, Forms>() };

function formsOf(leaf: string): Forms {
  const epoch = workEpoch();
  if (kept.epoch !== epoch) {
    kept.epoch = epoch;
    kept.forms.clear();
  }
  let forms = kept.forms.get(leaf);
  if (forms === undefined) {
    forms = {};
    if (kept.forms.size < MAX_KEPT_FORMS) kept.forms.set(leaf, forms);
  }
  return forms;
}

/** `leaf` in lower case. */
function lowerOf(leaf: string): string {
  const f = formsOf(leaf);
  if (f.lower === undefined) {
    spendWork(readingCost(leaf));
    const lower = leaf.toLowerCase();
    f.lower = lower === leaf ? leaf : lower; // the same string: compared with it at once
  }
  return f.lower;
}

/** The other spellings of a path, URL or address ({@link respellings}: its normal form, trimmed, decoded, IDNA). */
function respellingsOf(leaf: string): readonly string[] {
  const f = formsOf(leaf);
  if (f.respelled === undefined) {
    spendWork(leaf.length >> 2); // a split and join, or a URL parse
    if (leaf.length <= MAX_RESPELLED_LENGTH) {
      spendWork(leaf.length >> 2); // trimmed, decoded, IDNA: a few more
      if (!PLAIN_ASCII.test(leaf)) spendWork(leaf.length >> 2); // and all that again for its NFKC form
      // decoded up to three times, and so is its NFKC form
      if (leaf.includes("%")) spendWork((PLAIN_ASCII.test(leaf) ? 1 : 2) * MAX_DECODINGS * (leaf.length >> 2));
    }
    f.respelled = respellings(leaf);
    // and each spelling made (a `~` path is eight, a URL without a scheme two): written, normalised, kept
    for (const spelling of f.respelled) spendWork(readingCost(spelling));
  }
  return f.respelled;
}

/**
 * The readings of a value an allow rule's glob must also meet ({@link allowReadings}: its normal form,
 * decoded, `\` read as `/`), made once a decision. A value with nothing to read otherwise (no escape,
 * `\`, `.` segment, `//` or scheme) costs one scan.
 */
function allowReadingsOf(leaf: string): readonly string[] | null {
  const f = formsOf(leaf);
  if (f.read === undefined) {
    spendWork(readingCost(leaf));
    if (!readOtherwise(leaf)) f.read = [];
    else {
      spendWork(leaf.length >> 1); // a split and join or a URL parse, trimmed, decoded: a few
      const bases = PLAIN_ASCII.test(leaf) ? 1 : 2; // the value, and its NFKC form
      if (bases === 2) spendWork(leaf.length >> 1); // the NFKC form, and all that again for it
      // each base decoded up to three times, and once more to see that it settles
      if (leaf.includes("%")) spendWork(bases * (MAX_DECODINGS + 1) * (leaf.length >> 2));
      f.read = allowReadings(leaf);
      for (const reading of f.read ?? []) spendWork(readingCost(reading));
    }
  }
  return f.read;
}

/**
 * The NFKC form of a non-ASCII string as IDNA reads a domain (`a@ｅｖｉｌ.com` is `a@evil.com`, and so are
 * `a@evil。com`, its ideographic full stop a dot there, and `a@evil\u200b.com`, its invisible characters
 * dropped), or null when it is `leaf` itself.
 */
function compatOf(leaf: string): string | null {
  const f = formsOf(leaf);
  if (f.compat === undefined) {
    spendWork(readingCost(leaf));
    if (PLAIN_ASCII.test(leaf)) f.compat = null;
    else {
      spendWork(leaf.length >> 2);
      const nfkc = leaf.normalize("NFKC").replace(IDEOGRAPHIC_FULL_STOP, ".").replace(INVISIBLE, "");
      f.compat = nfkc === leaf ? null : nfkc;
    }
  }
  return f.compat;
}

/**
 * Whether the NFKC form of a non-ASCII string ({@link compatOf}) meets the crossing glob, as written or in
 * any case: what IDNA makes of a mail domain and many servers of full-width text.
 */
function compatible(leaf: string, loose: (value: string) => boolean, inAnyCase: (value: string) => boolean): boolean {
  const nfkc = compatOf(leaf);
  return nfkc !== null && (loose(nfkc) || inAnyCase(nfkc));
}

/**
 * What ends a mail address written inside a longer value: white space, `<>,;:"'()[]`, `/` and another `@`
 * (`Boss <a@evil.com>`, `a@evil.com, me@corp.com`, `a@evil.com ` as a mail service reads them out).
 */
const ADDRESS_DELIMITER = /[\s<>,;:"'()[\]@/]/;

/** Whether a glob names a mail address (`*@evil.com`, `ann@corp.com`): it holds `@` and no `/` (a URL's user). */
export function isAddressPattern(pattern: string): boolean {
  return pattern.includes("@") && !pattern.includes("/");
}

/**
 * The mail addresses written in `leaf` when it is not one itself (`Boss <a@evil.com>` → `a@evil.com`), each
 * without a trailing dot (`a@evil.com.`, the root of DNS); empty for a value without `@` or that is one
 * address as it is. Linear: each character is read at most twice (the runs around each `@` stop at the next).
 */
export function addressesIn(leaf: string): string[] {
  if (!leaf.includes("@")) return [];
  spendWork(2 * readingCost(leaf));
  const out: string[] = [];
  for (let at = leaf.indexOf("@"); at !== -1; at = leaf.indexOf("@", at + 1)) {
    let start = at;
    while (start > 0 && !ADDRESS_DELIMITER.test(leaf[start - 1] as string)) start--;
    let end = at + 1;
    while (end < leaf.length && !ADDRESS_DELIMITER.test(leaf[end] as string)) end++;
    if (start === at || end === at + 1) continue;
    const address = leaf.slice(start, end).replace(/\.+$/, "");
    if (address !== leaf && address.length > at - start + 1) out.push(address);
  }
  return out;
}

/**
 * For a pattern not in ASCII: a test of a value (as written and in lower case) against the pattern's NFKC
 * form and the form with its domain names as IDNA writes them ({@link asciiDomains}), each in lower case,
 * `*` crossing `/`; undefined when neither differs from the pattern.
 */
function patternForms(expected: string, search: LiteralSearch | undefined): ((value: string) => boolean) | undefined {
  if (PLAIN_ASCII.test(expected)) return undefined;
  const nfkc = expected.normalize("NFKC");
  const forms = new Set([nfkc, asciiDomains(expected), asciiDomains(nfkc)].map((form) => form.toLowerCase()));
  forms.delete(expected.toLowerCase());
  return formsTest([...forms], search);
}

/** Whether a glob's brackets, braces and parentheses close within `text` (a segment of it, so no `/` inside them). */
function closes(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === "[" || char === "{" || char === "(") depth++;
    else if (char === "]" || char === "}" || char === ")") depth--;
    if (depth < 0) return false;
  }
  return depth === 0 && !text.includes("\\");
}

/**
 * The forms of a path pattern that meet the paths a value starting with `~` expands to (`homePaths`):
 * a pattern naming a user's home (`/home/alice/.ssh/**`) also with the stand-in user `~` for the user
 * (`/home/~/.ssh/**`), since the home of `~` is not known; and a pattern written with `~` (`~/.ssh/**`,
 * `~alice/.ssh/**`) also as every home it may mean (`/home/` any user `/.ssh/**`, `/root/.ssh/**`,
 * `/home/alice/.ssh/**`).
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
  const tilde = /^~([^/\\]*)(?=\/|$)/.exec(lower);
  if (tilde !== null) {
    const name = tilde[1] as string;
    const rest = lower.slice(tilde[0].length);
    if (closes(name))
      for (const root of USER_HOME_ROOTS) out.push(`${root.toLowerCase()}/${name === "" ? "*" : name}${rest}`);
    if (name === "" || name === "root") for (const home of ROOT_HOMES) out.push(`${home}${rest}`);
  }
  return out;
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
function formsTest(
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

/**
 * `text` without the `./` it starts with, however many (`././data/x` is `data/x`), each only where a name
 * follows (`.//etc/passwd` is the relative `./etc/passwd`, not `/etc/passwd`: it is kept as it is).
 */
function withoutDotSlash(text: string): string {
  let at = 0;
  while (text.startsWith("./", at) && text[at + 2] !== "/") at += 2;
  return at === 0 ? text : text.slice(at);
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
function leavingTest(pattern: string): ((value: string) => boolean) | undefined {
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

/** A number with `_` between digits (`1_000`, `-2_500.5`), as Python reads it. */
const DIGIT_GROUPS = /^[+-]?\d+(?:_\d+)*(?:\.\d+(?:_\d+)*)?$/;

/** The boolean a string pattern is one of the words for (`yes`, `On`, `n`), if it is. */
function booleanWord(pattern: string): boolean | undefined {
  const word = pattern.trim().toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : undefined;
}

/**
 * Whether a leaf a server may coerce is `expected` once coerced: a string holding the same number (`"1000"`,
 * `" 1e3 "`, `"1_000"`), for a boolean one of the words servers read as it (`"true"`, `"Yes"`, `"on"`, `"1"`) or the
 * number 1 / 0. Used by `ask` and `deny` rules only, where matching more is the safe side.
 */
function coercesTo(expected: number | boolean, leaf: unknown): boolean {
  if (typeof expected === "number") {
    if (typeof leaf !== "string" || leaf.trim() === "") return false;
    const text = leaf.trim();
    // Python's int() and float() (and so a Python server) read `1_000` as 1000 (PEP 515)
    return Number(text) === expected || (DIGIT_GROUPS.test(text) && Number(text.replace(/_/g, "")) === expected);
  }
  if (typeof leaf === "number") return leaf === (expected ? 1 : 0);
  return typeof leaf === "string" && (expected ? TRUE_WORDS : FALSE_WORDS).has(leaf.trim().toLowerCase());
}

/**
 * Compiles the value side of an `args:` entry. A string is an exact value or a glob; it meets a string
 * argument directly and a finite number or boolean argument by its JSON text (`"22"` matches `22`,
 * `"tr*"` matches `true`), never null or an object. A number, boolean or null matches the identical JSON
 * value (`22` does not match `"22"`) — and, with `lenient` (the test of an `ask` or `deny` rule), a number
 * or boolean also matches what a server would coerce to it ({@link coercesTo}): `force: true` in a deny
 * rule refuses `{"force": "true"}`, which a Python server reads as `True`, and a string that is one of those
 * words matches its boolean (`force: yes`, a string in YAML 1.2, refuses `{"force": true}`); a string glob's `*` also
 * crosses `/` and line breaks (`*rm -rf*` refuses `cd /tmp && rm -rf x`); and a string glob also
 * matches the normal form of a path or URL ({@link normalizeValue}): `/home/me/.ssh/**` refuses
 * `/home/me//.ssh/id_rsa`, `https://evil.example/**` refuses `https://EVIL.example:443/x`; and a string
 * glob meets a string in any case (both in lower case, `*` crossing `/`): `*@evil.com` refuses
 * `a@EVIL.COM` (a mail domain has no case), `/Users/me/.ssh/**` refuses `/Users/me/.SSH/id_rsa` (nor has
 * a path on macOS' or Windows' usual file systems); and in its NFKC form (`a@ｅｖｉｌ.com`, which IDNA reads
 * as `a@evil.com`).
 * Returns an error message when the value cannot be compiled. Each glob reads a value's literal text
 * through `search` (one pass over a long value for every rule of the policy) when one is given; the forms
 * of a value (lower case, normal form, NFKC) are made once a decision.
 */
export function compileLeafTest(expected: ArgMatchValue, lenient = false, search?: LiteralSearch): LeafTest | string {
  if (typeof expected === "string") {
    const glob = compileRuleGlob(expected, {}, search);
    if (!glob.ok) return glob.issues.map((i) => i.message).join("; ");
    const asWritten = glob.value;
    // a pattern starting with `./` (a path where the tool runs) and a value are compared both without their
    // leading `./` too: picomatch drops it from a glob only, so `./data/**` met `data/x`, never `./data/x`
    const undottedText = withoutDotSlash(expected);
    const undottedGlob =
      undottedText === expected || undottedText === "" ? undefined : compileRuleGlob(undottedText, {}, search);
    const undotted = undottedGlob?.ok === true ? undottedGlob.value : undefined;
    const matches =
      undotted === undefined
        ? asWritten
        : (value: string): boolean => asWritten(value) || undotted(withoutDotSlash(value));
    // a pattern for a Windows path written with `\` also with `/` (`C:\Users\alice` as `C:/Users/alice`): for
    // an allow rule, against the value's reading with `/`; for an ask or deny rule, as another form
    const slashedText = slashedPattern(expected);
    const slashedGlob = slashedText === undefined || lenient ? undefined : compileRuleGlob(slashedText, {}, search);
    const slashed = slashedGlob?.ok === true ? slashedGlob.value : undefined;
    // an ask or deny rule's `*` also crosses `/` and line breaks: `*rm -rf*` meets `rm -rf /home`
    const crossing = lenient ? compileRuleGlob(expected, { starCrossesSlash: true }, search) : undefined;
    const loose = crossing?.ok === true ? crossing.value : undefined;
    // and its `yes` / `on` (a boolean in YAML 1.1, a string in 1.2) also meets the boolean it meant
    const word = lenient ? booleanWord(expected) : undefined;
    // and it meets the value in any case (`*@evil.com` meets `a@EVIL.COM`, `/Users/me/.ssh/**` meets
    // `/Users/me/.SSH/id_rsa` on a case-insensitive file system): the crossing glob, in lower case
    const lowered = expected.toLowerCase();
    const mailPattern = isAddressPattern(expected);
    const caseless = lenient ? compileRuleGlob(lowered, { starCrossesSlash: true }, search) : undefined;
    // a pattern not in ASCII also as NFKC and IDNA write it, in lower case: `/srv/café/**` written in NFD
    // meets `/srv/café/x` in NFC, `*@bücher.example` meets `a@xn--bcher-kva.example`
    const idna = lenient ? patternForms(expected, search) : undefined;
    // a pattern naming a home also meets `~/…` (`/home/alice/.ssh/**` meets `~/.ssh/id_rsa`, read as
    // `/home/~/.ssh/id_rsa`), and a pattern written with `~` every home it may mean
    // and a pattern without a scheme naming a host meets the URLs on it (`evil.example/**` meets
    // `https://evil.example/x`)
    // and a pattern with `\` for a Windows path with `/` too, and one starting with `./` without it
    const otherForms = [slashedText, undottedText === expected ? undefined : undottedText].flatMap((form) =>
      form === undefined || form === "" ? [] : [form.toLowerCase()],
    );
    const home = lenient
      ? formsTest([...homePatterns(expected), ...urlPatterns(expected), ...otherForms], search)
      : undefined;
    // and a path pattern meets a relative path that leaves its directory and may be one it names
    // (`**/etc/passwd` and `/etc/passwd` meet `../../etc/passwd`, `C:\Users\alice\x` meets `..\alice\x`)
    const leaving = lenient ? leavingTest(slashedText ?? expected) : undefined;
    const anyCase = caseless?.ok === true ? caseless.value : undefined;
    const inAnyCase = (value: string): boolean => {
      if (anyCase === undefined) return false;
      const lower = lowerOf(value);
      if (lower === value && lowered === expected) return false; // the crossing glob has read it as it is
      return anyCase(lower);
    };
    /** Whether an ask or deny rule's glob meets a string in one of its spellings. */
    const spelled = (value: string, glob: GlobMatcher): boolean => {
      // the crossing glob first: where it holds (most often), the glob as written need not be run at all
      if (glob(value) || matches(value) || inAnyCase(value)) return true;
      if (home !== undefined && home(value)) return true;
      if (leaving !== undefined && leaving(value)) return true;
      for (const spelling of respellingsOf(value)) {
        if (glob(spelling) || matches(spelling) || inAnyCase(spelling)) return true;
        if (idna !== undefined && idna(spelling)) return true;
        if (home !== undefined && home(spelling)) return true;
        if (leaving !== undefined && leaving(spelling)) return true;
      }
      if (idna !== undefined && idna(value)) return true;
      if (compatible(value, glob, inAnyCase)) return true;
      return idna !== undefined && compatible(value, idna, idna);
    };
    // each glob counts what it reads against the decision's work budget (the matcher its own steps too)
    return (leaf) => {
      if (typeof leaf === "string") {
        spendWork(1);
        if (loose === undefined) {
          // an allow rule's address pattern meets a value only when it meets every address written in it:
          // `*@corp.com` does not allow `mark@attacker.example, bob@corp.com` (a mail service sends to both)
          if (!matches(leaf)) return false;
          if (mailPattern && !addressesIn(leaf).every((address) => matches(address))) return false;
          // and every reading a tool may take of it: `/srv/files/**` does not allow
          // `/srv/files/..%2f..%2fetc/passwd` nor `/srv/files/..\..\etc\passwd` (`/etc/passwd` once read)
          // (a value encoded deeper than is read, `%2525252e`, has no known reading: never allowed)
          const readings = allowReadingsOf(leaf);
          return (
            readings !== null &&
            readings.every((reading) => agrees(reading, matches) || (slashed !== undefined && agrees(reading, slashed)))
          );
        }
        if (spelled(leaf, loose)) return true;
        // a pattern for an address meets each address the value holds (`Boss <a@evil.com>`, a list), in each
        // of its spellings too (`Boss <a@bücher.example>` for `*@xn--bcher-kva.example`)
        return mailPattern && addressesIn(leaf).some((address) => spelled(address, loose));
      }
      if (typeof leaf === "number") return Number.isFinite(leaf) && matches(String(leaf));
      if (typeof leaf === "boolean") return matches(leaf ? "true" : "false") || leaf === word;
      return false;
    };
  }
  if (typeof expected === "number" && !Number.isFinite(expected)) return `non-finite number \`${String(expected)}\``;
  if (typeof expected === "number" || typeof expected === "boolean") {
    return lenient ? (leaf) => leaf === expected || coercesTo(expected, leaf) : (leaf) => leaf === expected;
  }
  if (expected === null) return (leaf) => leaf === null;
  return `unsupported value of type ${typeof expected} (expected a string, number, boolean or null)`;
}

/** Splits a dotted key into its path; returns undefined when a segment is empty (`a..b`, `.a`). */
export function splitArgPath(key: string): readonly string[] | undefined {
  const path = key.split(".");
  return path.every((segment) => segment.length > 0) ? path : undefined;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function quantify(items: readonly unknown[], every: boolean, visit: (item: unknown) => boolean): boolean {
  if (items.length === 0) return false;
  if (every) {
    for (const item of items) if (!visit(item)) return false;
    return true;
  }
  for (const item of items) if (visit(item)) return true;
  return false;
}

function resolve(value: unknown, arg: CompiledArgMatch, depth: number, every: boolean, nesting: number): boolean {
  spendWork(1); // every value visited counts against the decision's work budget
  if (Array.isArray(value)) {
    if (nesting >= MAX_ARRAY_NESTING) {
      throw new RangeError(`argument \`${arg.key}\` nests arrays deeper than ${MAX_ARRAY_NESTING} levels`);
    }
    return quantify(value, every, (item) => resolve(item, arg, depth, every, nesting + 1));
  }
  if (depth === arg.path.length) return arg.test(value);
  const segment = arg.path[depth] as string;
  if (!isPlainRecord(value)) return false;
  if (!every) {
    // an ask or deny rule: the key as written first, then every key a server may read as it (`Path`, `PATH`)
    if (Object.hasOwn(value, segment) && resolve(value[segment], arg, depth + 1, every, nesting)) return true;
    for (const key of keysReadAs(value, segment)) {
      if (key !== segment && resolve(value[key], arg, depth + 1, every, nesting)) return true;
    }
    return false;
  }
  // an allow rule: the key as written, and every key a server may read as it matches too (which one it reads
  // is not known: `{"path": "/tmp/x", "PATH": "/etc/passwd"}` is not allowed by `path: /tmp/**`)
  if (!Object.hasOwn(value, segment) || !resolve(value[segment], arg, depth + 1, every, nesting)) return false;
  for (const key of keysReadAs(value, segment)) {
    if (key !== segment && !resolve(value[key], arg, depth + 1, every, nesting)) return false;
  }
  return true;
}

/**
 * Whether the request arguments satisfy one `args:` entry. The dotted path walks own keys of nested
 * objects; a missing key never matches. Arrays met on the way or at the end are quantified, biased toward
 * security: with `every` (allow rules) each element must match, with `any` (ask and deny rules) one is
 * enough; an empty array never matches. Objects where a scalar is expected never match. Keys a server may
 * read as the one named ({@link keysReadAs}: `Path`, `PATH`, `ｐａｔｈ`, `filePath` for `file_path`) are
 * quantified the same way: any one of them for ask and deny rules, and for an allow rule the key as written
 * must be there and it and every such key must match. The keys of an object are indexed once a decision
 * (the work budget's epoch): call it inside a budget.
 */
export function matchArg(args: Readonly<Record<string, unknown>>, arg: CompiledArgMatch, every: boolean): boolean {
  return resolve(args, arg, 0, every, 0);
}
