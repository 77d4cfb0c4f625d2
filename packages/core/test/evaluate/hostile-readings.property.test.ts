/**
 * The real evaluator against the reference one on values built from the families a tool reads otherwise
 * than written, and patterns drawn from the same alphabet. A value is a path (a home written `~`, `~ann`,
 * `$HOME`, `"$HOME"`, `%USERPROFILE%`, at its start or after a word's start, `cat $HOME/`; a Windows drive
 * or device prefix; a URL; relative) of segments with
 * `.`, `..`, `..;`, parameters, separated by `/` or `\`; then a few of its characters are respelled: escaped
 * one to four levels deep, in full width, full width and escaped, or as an escape NFKC makes (`％2e`, and that
 * escaped: `%EF%BC%85%32%65`); white space at an end, or a line or 4,096 characters before it. The list of fixed values in
 * match-policy.property.test.ts samples each family once; here they are combined, so a regression in any
 * of them (a reading the real evaluator stops making, or makes where the reference does not) is met within
 * a few hundred runs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compilePolicy, matchPolicy } from "../../src/evaluate/index.js";
import { compileGlob } from "../../src/glob/index.js";
import type { ActionRequest } from "../../src/request/index.js";
import { buildPolicy } from "./policy-builder.js";
import { referenceMatch } from "./reference-evaluator.js";

/** Where a value starts: a home in each spelling, a drive, a device path, a URL, a relative path. */
const VALUE_STARTS = [
  "/",
  "",
  "~/",
  "~ann/",
  "~root/",
  "~",
  "$HOME/",
  '"$HOME"/',
  "${HOME}/",
  "'$HOME'/",
  "%USERPROFILE%/",
  "$env:USERPROFILE/",
  "C:/",
  "C:/Users/ann/",
  "//?/C:/",
  "//./C:/",
  "/??/C:/",
  "./",
  "../",
  "file:///",
  "https://api.corp/",
  "/home/ann/",
  "/root/",
  "/srv/",
  // a home inside a value, after a word's start (a command, an option)
  "cat $HOME/",
  "--key=${HOME}/",
  'cat "$HOME"/',
  'scp "%USERPROFILE%/',
  "cat ~/",
  "x=~ann/",
  "cat x$HOME/",
];
const SEGMENTS = [
  "srv",
  "a",
  "x",
  ".ssh",
  "id_rsa",
  "..",
  "..",
  ".",
  "..;",
  "a;v=1",
  "etc",
  "passwd",
  "~",
  "ann",
  "files",
];

/** How one character of a value is respelled. */
type Respelling = "escape" | "full-width" | "escaped full-width" | "nfkc escape" | "escaped nfkc escape";

function escape(char: string): string {
  return [...new TextEncoder().encode(char)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
}

/** `char` escaped `levels` times (`.` is `%2E`, `%252E`, `%25252E`, …). */
function escaped(char: string, levels: number): string {
  let out = escape(char);
  for (let i = 1; i < levels; i++) out = out.replaceAll("%", "%25");
  return out;
}

/** The full-width form of a printable ASCII character (`.` is `．`, `/` is `／`), which NFKC reads as it. */
function fullWidth(char: string): string {
  const code = char.charCodeAt(0);
  return code > 0x20 && code < 0x7f ? String.fromCharCode(code + 0xfee0) : char;
}

function respell(char: string, how: Respelling, levels: number): string {
  switch (how) {
    case "escape":
      return escaped(char, levels);
    case "full-width":
      return fullWidth(char);
    case "escaped full-width":
      return escaped(fullWidth(char), Math.min(levels, 3));
    case "nfkc escape":
      // `％2E`: a full-width `%` that NFKC makes an escape of
      return `％${escape(char).slice(1)}`;
    case "escaped nfkc escape":
      // `%EF%BC%85%32%45`: decoded, `％2E`; in NFKC, `%2E`; decoded again, `.`
      return `${escape("％")}${escape(escape(char).slice(1))}`;
  }
}

const respelling = fc.record({
  at: fc.nat(),
  // most often one of the characters that give a path its structure (`.`, `/`, `\`, `;`, `~`, `$`, `%`)
  structural: fc.constantFrom(true, true, true, false),
  how: fc.constantFrom<Respelling>("escape", "full-width", "escaped full-width", "nfkc escape", "escaped nfkc escape"),
  levels: fc.integer({ min: 1, max: 4 }),
});

/** A path before it is respelled: where it starts, and its segments, each with the separator before it. */
const skeleton = fc.tuple(
  fc.constantFrom(...VALUE_STARTS),
  fc.array(fc.tuple(fc.constantFrom(...SEGMENTS), fc.constantFrom("/", "/", "\\")), { minLength: 1, maxLength: 4 }),
);

/** A value from the hostile families: a path with a few characters respelled, `\` for `/`, white space at an end. */
function valueOf(
  [start, segments]: [string, [string, string][]],
  respellings: readonly { at: number; structural: boolean; how: Respelling; levels: number }[],
  edge: string,
  windows: boolean,
): string {
  const body = segments.map(([segment, separator], i) => (i === 0 ? segment : separator + segment)).join("");
  const plain = windows ? (start + body).replaceAll("/", "\\") : start + body;
  // each respelling replaces one character, the later first so the earlier positions hold
  const chars = [...plain];
  const structure = chars.flatMap((char, index) => (/[./\\;~$%]/.test(char) ? [index] : []));
  const at = new Map(
    respellings.map((r) => [
      r.structural && structure.length > 0
        ? (structure[r.at % structure.length] as number)
        : r.at % Math.max(chars.length, 1),
      r,
    ]),
  );
  for (const [index, r] of [...at.entries()].sort((a, b) => b[0] - a[0])) {
    const char = chars[index];
    if (char !== undefined) chars[index] = respell(char, r.how, r.levels);
  }
  return edge + chars.join("");
}

/** Where a pattern starts, from the same alphabet: homes in each spelling, relative-path globs, roots. */
const PATTERN_STARTS = [
  "/srv/",
  "/home/*/",
  "/home/ann/",
  "/root/",
  "C:/Users/*/",
  "~/",
  "~ann/",
  "$HOME/",
  '"$HOME"/',
  "%USERPROFILE%/",
  "",
  "*/",
  "?*/",
  "**/",
  "/etc/",
  "./",
  "*~/",
  "*/home/ann/",
  "*/home/*/",
  "*C:/Users/ann/",
  "*/root/",
];
const WHOLE_PATTERNS = ["**", "*", "/etc/passwd", "**/.ssh/**", "**/passwd", "C:\\\\Users\\\\*\\\\**", "~*/**"];

/**
 * A pattern for the same path: its start as the value's or another of the alphabet's, each segment kept
 * or written `*` or `?*`, the rest from some segment on written `**`; or a pattern of its own.
 */
function patternOf(
  [start, segments]: [string, [string, string][]],
  [sameStart, otherStart]: [boolean, string],
  globs: readonly number[],
  cut: number,
): string {
  const parts = segments.map(([segment], i) => ["", "*", "?*", ""][(globs[i] ?? 0) % 4] || segment);
  const kept = cut % (parts.length + 1);
  const body = kept === parts.length ? parts.join("/") : [...parts.slice(0, kept), "**"].join("/");
  return (sameStart ? start : otherStart) + body;
}

const hostileCase: fc.Arbitrary<[string, string]> = fc
  .tuple(
    skeleton,
    fc.array(respelling, { maxLength: 3 }),
    // white space at an end; or a line, or 4,096 characters, before it (a value no longer read as a path)
    fc.constantFrom("", "", "", " ", "\t", "notes\n", `${"a".repeat(4096)} `),
    fc.boolean(),
    fc.tuple(fc.boolean(), fc.constantFrom(...PATTERN_STARTS)),
    fc.array(fc.nat(7), { maxLength: 4 }),
    fc.nat(),
    fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...WHOLE_PATTERNS) }, { weight: 5, arbitrary: fc.constant(null) }),
  )
  .map(([path, respellings, edge, windows, start, globs, cut, whole]): [string, string] => [
    whole ?? patternOf(path, start, globs, cut),
    valueOf(path, respellings, edge, windows),
  ])
  .filter(([pattern]) => pattern !== "" && compileGlob(pattern).ok);

describe("the evaluator on values of the hostile families", () => {
  it("picks the same rule as the reference, for a pattern of the same alphabet under each action", () => {
    const now = new Date(0);
    fc.assert(
      fc.property(
        hostileCase,
        fc.constantFrom("allow" as const, "ask" as const, "deny" as const),
        ([pattern, value], action) => {
          const policy = buildPolicy([{ id: "r", match: { args: { p: pattern } }, action }], "ask");
          const r: ActionRequest = { tool: "t", arguments: { p: value } };
          expect([pattern, value, action, matchPolicy(compilePolicy(policy), r, now).ruleId]).toEqual([
            pattern,
            value,
            action,
            referenceMatch(policy, r, now),
          ]);
        },
      ),
      { numRuns: 800 },
    );
  }, 120_000); // the reference reads 4,096-character values naively
});
