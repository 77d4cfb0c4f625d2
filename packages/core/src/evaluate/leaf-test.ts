/** The value side of an `args:` entry compiled: a test of one scalar argument value. */
import { isGlobPattern, spendWork, type GlobMatcher } from "../glob/index.js";
import type { ArgMatchValue } from "../policy/types.js";
import { agrees, slashedPattern } from "./allow-readings.js";
import { booleanWord, coercesTo } from "./coerced-scalars.js";
import { compileRuleGlob } from "./fast-glob.js";
import { leavingTest } from "./leaving-paths.js";
import type { LiteralSearch } from "./literal-search.js";
import { addressesIn, isAddressPattern } from "./mail-addresses.js";
import { quotedHomeAsWritten, startsWithHomeReference } from "./home-references.js";
import { formsTest, homePatterns, patternForms, tildeHomes, urlPatterns, withoutDotSlash } from "./pattern-forms.js";
import { allowReadingsOf, compatible, lowerOf, respellingsOf, unknownOf } from "./value-forms.js";

/** A predicate over one scalar argument value. */
export type LeafTest = (leaf: unknown) => boolean;

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
 * as `a@evil.com`); and a string glob meets a value whose reading is not known ({@link unknownOf}: three
 * decodings leave it still decoding), which no allow rule does.
 * Returns an error message when the value cannot be compiled. Each glob reads a value's literal text
 * through `search` (one pass over a long value for every rule of the policy) when one is given; the forms
 * of a value (lower case, normal form, NFKC) are made once a decision.
 */
export function compileLeafTest(expected: ArgMatchValue, lenient = false, search?: LiteralSearch): LeafTest | string {
  if (typeof expected === "string") {
    const glob = compileRuleGlob(expected, {}, search);
    if (!glob.ok) return glob.issues.map((i) => i.message).join("; ");
    // a glob starting with a home reference in double quotes (`"$HOME"/projects/**`) meets the value written
    // so, its quotes kept (a glob would drop them); an ask or deny rule's crossing glob still reads it as a glob does
    const quotedText = quotedHomeAsWritten(expected, isGlobPattern(expected));
    const quoted = quotedText === expected ? undefined : compileRuleGlob(quotedText, {}, search);
    const asWritten = quoted?.ok === true ? quoted.value : glob.value;
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
    // an allow rule's pattern written with `~` or a home's environment reference (`~/projects/**`,
    // `$HOME/projects/**`) also as every home it may mean (`/home/*/projects/**`, `/root/projects/**`), against
    // the homes a value written so is read as: `~/projects/x` agrees, and a pattern that does not name every
    // home (`*/**`) does not
    const homeText = slashedText ?? expected;
    const homes =
      lenient || !(homeText.startsWith("~") || startsWithHomeReference(homeText))
        ? []
        : tildeHomes(homeText, false).flatMap((form) => {
            const home = compileRuleGlob(form, {}, search);
            return home.ok ? [home.value] : [];
          });
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
    const otherForms = [
      slashedText,
      undottedText === expected ? undefined : undottedText,
      quotedText === expected ? undefined : quotedText,
    ].flatMap((form) => (form === undefined || form === "" ? [] : [form.toLowerCase()]));
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
            readings.every(
              (reading) =>
                agrees(reading, matches) ||
                (slashed !== undefined && agrees(reading, slashed)) ||
                homes.some((home) => agrees(reading, home)),
            )
          );
        }
        if (spelled(leaf, loose)) return true;
        // a pattern for an address meets each address the value holds (`Boss <a@evil.com>`, a list), in each
        // of its spellings too (`Boss <a@bücher.example>` for `*@xn--bcher-kva.example`)
        if (mailPattern && addressesIn(leaf).some((address) => spelled(address, loose))) return true;
        // and a value whose reading is not known, encoded deeper than is decoded (`%2525252e%2525252e`, `..`
        // to a fourth reader), may be any path once read: an ask or deny rule meets it, as no allow rule does
        return unknownOf(leaf);
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
