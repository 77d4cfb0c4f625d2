import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesOf } from "../../src/session/each-match.js";

const PATTERNS = [
  /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/gi,
  /\b\d{8,34}\b/g,
  /(?:^|\n|[.!?])[ \t]*(?:#{2,}\s*\(?|\[{1,2}|\(|<\|?)\s*(?:system|admin)\s*(?:\]{1,2}|\)|\|?>)/gi,
  /x*/g, // empty matches
  /(?:)/gu, // empty matches stepping over code points
  /\p{L}+/gu,
  /a|/g,
];

const text = fc.string({
  unit: fc.constantFrom(
    "a",
    "x",
    " ",
    "\n",
    ".",
    "1",
    "9",
    "w",
    "h",
    "t",
    "p",
    ":",
    "/",
    "#",
    "[",
    "]",
    "é",
    "😀",
    "\ud800",
    "S",
  ),
  maxLength: 60,
});

function viaMatchAll(pattern: RegExp, input: string): { index: number; match: string; groups: string[] }[] {
  return [...input.matchAll(pattern)].map((m) => ({ index: m.index, match: m[0], groups: [...m] }));
}

describe("matchesOf", () => {
  it("gives the matches matchAll gives, in order, and leaves lastIndex at 0", () => {
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), text, (pattern, input) => {
        const ours = matchesOf(pattern, input).map((m) => ({ index: m.index, match: m[0], groups: [...m] }));
        expect(ours).toEqual(viaMatchAll(pattern, input));
        expect(pattern.lastIndex).toBe(0);
      }),
      { numRuns: 3000 },
    );
  });

  it("starts from the beginning whatever lastIndex a pattern was left at", () => {
    const pattern = /\d+/g;
    pattern.lastIndex = 5;
    expect(matchesOf(pattern, "12 345 6").map((m) => m[0])).toEqual(["12", "345", "6"]);
  });

  it("refuses a pattern that is not global (matchAll throws too)", () => {
    expect(() => matchesOf(/a/, "aaa")).toThrow(/global/);
  });
});
