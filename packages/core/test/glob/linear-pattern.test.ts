import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileLinearPattern, UnsupportedRegexError, withWorkBudget } from "../../src/glob/index.js";

/** Pieces of expressions whose matches V8 reports without backreferences or lookarounds. */
const ATOM = fc.constantFrom("a", "b", "A", ".", "[ab]", "[^a]", "\\w", "\\s", "\\d", "-", "(?:a|b)", "(?:ab|a)", "x");
const QUANT = fc.constantFrom("", "", "*", "+", "?", "*?", "+?", "??", "{1,2}", "{2}", "{0,2}?");
const ASSERT = fc.constantFrom("", "", "", "^", "$", "\\b", "\\B");
const piece = fc.tuple(ASSERT, ATOM, QUANT).map(([a, b, q]) => `${a}${b}${q}`);
const pattern = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 4 }).map((ps) => ps.join("")),
  fc
    .tuple(fc.array(piece, { minLength: 1, maxLength: 2 }), fc.array(piece, { minLength: 1, maxLength: 2 }))
    .map(([l, r]) => `(?:${l.join("")}|${r.join("")})${["", "*", "+?"][l.length % 3]}`),
);
const text = fc
  .array(fc.constantFrom("a", "b", "A", "B", "x", " ", "-", "1", "\n", "é", "É"), { maxLength: 12 })
  .map((cs) => cs.join(""));
const flags = fc.constantFrom("", "i", "m", "s", "im", "is", "ms");

const mark = (m: string): string => `<${m}>`;

describe("compileLinearPattern", () => {
  it("finds and replaces exactly the matches V8 finds, in linear time", () => {
    fc.assert(
      fc.property(pattern, flags, fc.array(text, { minLength: 1, maxLength: 6 }), (source, f, texts) => {
        let linear: ReturnType<typeof compileLinearPattern>;
        try {
          linear = compileLinearPattern(source, f);
        } catch (err) {
          // refused: a repetition of what can match nothing (tested below); anything else fails
          expect((err as Error).message).toMatch(/can match nothing/);
          return;
        }
        const native = new RegExp(source, `${f}g`);
        for (const t of texts) {
          expect([source, f, t, linear.replaceAll(t, mark)]).toEqual([source, f, t, t.replace(native, mark)]);
          native.lastIndex = 0;
          expect([source, f, t, linear.test(t)]).toEqual([source, f, t, native.test(t)]);
          native.lastIndex = 0;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("answers the classic ReDoS patterns on long input without backtracking", () => {
    const long = `${"a".repeat(50_000)}!`;
    for (const source of ["(a+)+$", "(?:a|aa)+$", "(a|b)*c", "^(\\w+\\s?)*$", "(.*a){12}"]) {
      const linear = compileLinearPattern(source.replace(/\((?!\?)/g, "(?:"));
      expect([source, linear.test(long)]).toEqual([source, source === "(.*a){12}"]);
      expect(linear.replaceAll("aab", mark)).toBe(
        "aab".replace(new RegExp(source.replace(/\((?!\?)/g, "(?:"), "g"), mark),
      );
    }
  });

  it("refuses backreferences, lookarounds and unknown flags, saying where", () => {
    const cases: [string, string, RegExp, number | undefined][] = [
      ["(a)\\1", "", /backreference `\\1`/, 3],
      ["(?<x>a)\\k<x>", "", /backreference `\\k`/, 7],
      ["a(?=b)", "", /lookahead `\(\?=`/, 1],
      ["a(?!b)", "", /lookahead `\(\?!`/, 1],
      ["(?<=a)b", "", /lookbehind `\(\?<=`/, 0],
      ["(?<!a)b", "", /lookbehind `\(\?<!`/, 0],
      ["\\p{L}", "", /escape `\\p`/, 0],
      ["a", "u", /flag `u`/, undefined],
      ["a", "y", /flag `y`/, undefined],
      ["x(?:a*)*", "", /can match nothing/, 7],
      ["(?:a?)+b", "", /can match nothing/, 6],
      ["(?:a*?)?", "", /can match nothing/, 7],
    ];
    for (const [source, f, message, index] of cases) {
      let error: unknown;
      try {
        compileLinearPattern(source, f);
      } catch (err) {
        error = err;
      }
      expect(error, source).toBeInstanceOf(UnsupportedRegexError);
      expect((error as Error).message, source).toMatch(message);
      expect((error as UnsupportedRegexError).index, source).toBe(index);
    }
    // a named group is a group
    expect(compileLinearPattern("(?<key>sk-)[a-z]+").replaceAll("x sk-abc", mark)).toBe("x <sk-abc>");
  });

  it("spends work units a caller's budget can bound", () => {
    const linear = compileLinearPattern("(?:a|aa)*[cd]");
    expect(() => withWorkBudget(1_000, () => linear.replaceAll("a".repeat(10_000), mark))).toThrow(/work units/);
  });
});
