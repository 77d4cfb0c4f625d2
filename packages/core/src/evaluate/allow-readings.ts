/**
 * What an `allow` rule's glob must also meet: the readings of a value a tool may take for it that lead
 * somewhere else than the text as written (`/srv/files/..%2f..%2fetc/passwd` is `/etc/passwd` to a server
 * that decodes after routing, `/srv/files/..\..\etc\passwd` to a tool that reads `\` as `/`). An allow
 * rule matches a value only when the value as written and every one of these match it: where the
 * readings disagree, the call falls through to the rules after it.
 */
import { isGlobPattern } from "../glob/index.js";
import { homeReferenceAsTilde, startsWithHomeReference } from "./home-references.js";
import {
  compatDecodings,
  decodeUnreserved,
  decodings,
  homePaths,
  normalizeValue,
  settles,
  structuralCompat,
  withoutParameters,
} from "./normal-form.js";

/**
 * What may make a value read otherwise than written: an escape, a `\`, a `.` or `..` segment, a run of
 * `/`, a scheme (a URL's normal form), white space or a control character at an end, a `;` (a path
 * segment's parameters), a character not in ASCII (whose NFKC form may be `.` or `/`); and a home at the
 * start, `~` or an environment reference ({@link startsWithHomeReference}). A value without any
 * (`/srv/files/report.txt`, `ann@corp.com`) has no other reading.
 */
const READ_OTHERWISE =
  // eslint-disable-next-line no-control-regex -- the C0 controls the WHATWG URL parser strips
  /%[0-9A-Fa-f]{2}|\\|\/\/|(?:^|\/)\.\.?(?:[/\\]|$)|^[A-Za-z][A-Za-z0-9+.-]*:|^[\x00-\x20]|[\x00-\x20]$|;|[\u0080-\uffff]/;
// eslint-disable-next-line no-control-regex -- the same controls
const EDGES = /^[\x00-\x20]+|[\x00-\x20]+$/g;
const ESCAPE = /%[0-9A-Fa-f]{2}/;
/** A URL's scheme: two characters at least, `C:` being a Windows drive (whose `#` is a file name's). */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/**
 * Where an allow rule reads a value without its path segments' parameters: a path or URL (starting with
 * `/`, `\`, `.`, `~`, a Windows drive or a scheme), or a value with a `.` or `..` segment that has them
 * (`files/..;/x`). Not other text with `;` (`make; make install`), which an exact allow rule names as it is.
 */
const PARAMETERS_READ = /^(?:[/\\.~]|[A-Za-z]:|[A-Za-z][A-Za-z0-9+.-]+:)|(?:^|[/\\])\.\.?;/;

/** Whether a value may be read otherwise than written ({@link allowReadings} is not empty only then). */
export function readOtherwise(text: string): boolean {
  return READ_OTHERWISE.test(text) || text.startsWith("~") || startsWithHomeReference(text);
}

/**
 * For a URL (a value with a scheme), its part before the query or fragment and the rest, which is where
 * a request goes no matter how it is decoded; a value without a scheme is all path.
 */
function splitQuery(text: string): [string, string] {
  if (!SCHEME.test(text)) return [text, ""];
  const end = text.search(/[?#]/);
  return end < 0 ? [text, ""] : [text.slice(0, end), text.slice(end)];
}

/** The forms a value's readings start from: it trimmed, and its NFKC form where that spells more structure (`．．／` is `../`). */
function readingBases(text: string): string[] {
  const trimmed = text.replace(EDGES, "");
  const compat = structuralCompat(trimmed);
  return compat === undefined ? [trimmed] : [trimmed, compat];
}

/**
 * Whether the reading of a value is not known: three decodings of it (trimmed, or its NFKC
 * form where that spells more structure; of a URL, its path: the query and fragment are not read), or
 * three decodings each read in NFKC where that spells more structure ({@link compatDecodings}), leave it
 * still decoding ({@link settles}: `/srv/%2525252e%2525252e/etc/passwd` is `/srv/%2e%2e/etc/passwd` after
 * three, `/etc/passwd` after four). No allow rule meets such a value ({@link allowReadings} is null), and
 * an ask or deny rule's string glob meets it whatever it names: what a fourth reader makes of it may be
 * any path. A value encoded once, twice or three times (`a%20b`, `%252e`) is read, never unknown.
 */
export function readingUnknown(text: string): boolean {
  if (!ESCAPE.test(text)) return false;
  for (const base of readingBases(text)) {
    if (!ESCAPE.test(base)) continue;
    const [path] = splitQuery(base);
    const decoded = decodings(path);
    if (!settles(path, decoded) || !normalisedDecodings(path, decoded).settled) return true;
  }
  return false;
}

/**
 * The decodings of a path as a chain of readers that each decode and then normalise read it, where one of
 * its plain `decoded` spells more structure in NFKC ({@link compatDecodings} with {@link structuralCompat}:
 * `%EF%BC%85%32%65` is `％2e`, `%2e`, then `.`); no forms, settled, where none does (the chain is the plain one).
 */
function normalisedDecodings(path: string, decoded: readonly string[]): { forms: string[]; settled: boolean } {
  if (!decoded.some((form) => structuralCompat(form) !== undefined)) return { forms: [], settled: true };
  return compatDecodings(path, structuralCompat);
}

/**
 * The readings of a value an `allow` rule's glob must meet too, each differing from the value: its normal
 * form ({@link normalizeValue}: `..` resolved, runs of `/` made one, a URL as the WHATWG parser reads it),
 * and that of the value trimmed of white space and controls at its ends, of its NFKC form where that
 * spells more of a path's structure ({@link structuralCompat}: `．．／` is `../`), with its unreserved
 * escapes decoded, with every escape decoded (`%2f` too; a URL's path only) once and again up to three
 * times ({@link decodings}: `%252e` is `%2e`, then `.`), and so from each decoding's NFKC form where that
 * spells more structure ({@link compatDecodings}: `%EF%BC%85%32%65` is `％2e`, `%2e`, then `.`), each also with `\` read as `/` and without its
 * path segments' parameters ({@link withoutParameters}: `..;` is `..` to Tomcat; a URL's path only; a
 * value that is a path or URL or has `..;`, not a command such as `make; make install`).
 * Null for a value still read otherwise after three decodings ({@link settles}: `%2525252e`), which no
 * allow rule meets. Empty for a value {@link readOtherwise} passes by. And for a value starting with a
 * home, `~`, `~name` or an environment reference (`~/x`, `$HOME/x`, `%USERPROFILE%\x`), each home it may be
 * (`/home/~/x`, `C:/Users/~/x`, `/root/x`, …; `/home/name/x` for `~name/x`): such a value has the shape of a
 * relative path, which a pattern for relative paths (`.ssh` after any first segment) meets as written, while the tool
 * reads it as an absolute one; a pattern written with `~` or the same reference is read as its homes too.
 * Not the other respellings that make a value another kind of thing (a host as a URL, IDNA): an allow rule
 * written for the one does not name the other.
 */
export function allowReadings(text: string): string[] | null {
  if (!readOtherwise(text)) return [];
  const out = new Set<string>();
  const add = (form: string): void => {
    out.add(normalizeValue(form) ?? form);
    const [path, query] = splitQuery(form);
    if (!path.includes("\\")) return;
    const slashed = path.replaceAll("\\", "/") + query;
    out.add(normalizeValue(slashed) ?? slashed);
  };
  const forms = [text];
  for (const base of readingBases(text)) {
    forms.push(base);
    if (!ESCAPE.test(base)) continue;
    const [path, query] = splitQuery(base);
    // decoded once, and again up to MAX_DECODINGS times (`%252e%252e` is `..` to a proxy and a tool)
    const decoded = decodings(path);
    if (!settles(path, decoded)) return null; // encoded deeper than is read: a longer chain's reading is not known
    forms.push(decodeUnreserved(path) + query);
    for (const form of decoded) {
      forms.push(form + query);
      // and in NFKC where that spells more structure, as a tool that decodes and then normalises reads it
      // (`%EF%BC%8E%EF%BC%8E%EF%BC%8F` is `．．／`, then `../`)
      const compat = structuralCompat(form);
      if (compat !== undefined) forms.push(compat + query);
    }
    // and decoded again from that NFKC form, within the same three decodings (`%EF%BC%85%32%65` is `％2e`,
    // `%2e` in NFKC, then `.`); still decoding after three: not known, as above
    const normalised = normalisedDecodings(path, decoded);
    if (!normalised.settled) return null;
    for (const form of normalised.forms) forms.push(form + query);
  }
  for (const form of forms) {
    add(form);
    // and without its path segments' parameters (`/srv/files/..;/etc/passwd`, as Tomcat reads it)
    const [path, query] = splitQuery(form);
    const bare = PARAMETERS_READ.test(form) ? withoutParameters(path) : undefined;
    if (bare !== undefined) add(bare + query);
  }
  // a value starting with `~` or `~name` (`~/.ssh/id_rsa`), or with a home's environment reference (`$HOME/x`,
  // `%USERPROFILE%\x`, `$env:USERPROFILE\x`) read as `~`, as every home it may be ({@link homePaths}): whose
  // home is not known, so only a pattern written with `~` or such a reference too (read as its homes) or
  // one meeting every home agrees
  for (const form of [...out, text]) for (const home of homePaths(homeReferenceAsTilde(form) ?? form)) out.add(home);
  out.delete(text);
  return [...out];
}

/**
 * Whether a reading agrees with an allow rule's glob: the glob meets it, or it without the trailing `/` a
 * URL's normal form adds (`https://api.example` is `https://api.example/`). Never in another case:
 * `/SRV` is not `/srv` on most file systems, so a URL's host written in upper case in an allow rule asks.
 */
export function agrees(reading: string, glob: (value: string) => boolean): boolean {
  return glob(reading) || (reading.length > 1 && reading.endsWith("/") && glob(reading.slice(0, -1)));
}

/**
 * An allow rule's pattern for a Windows path written with `\` (`C:\work\report.txt` as an exact name,
 * `C:\\work\\**` as a glob, `\\` a literal `\` there) with `/` for it, which the value's reading with `/`
 * for `\` is compared with too (`C:\work\x` is allowed by `C:\\work\\**`, `C:\work\..\..\x` is not);
 * undefined for a pattern without one.
 */
export function slashedPattern(pattern: string): string | undefined {
  const slashed = isGlobPattern(pattern) ? pattern.replaceAll("\\\\", "/") : pattern.replaceAll("\\", "/");
  return slashed === pattern ? undefined : slashed;
}
