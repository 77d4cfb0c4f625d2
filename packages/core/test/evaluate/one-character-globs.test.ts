/**
 * A glob's `?` and `[…]` take one character of a name. Folded, a character a person reads as one may be
 * several code units (`ｍ` and `m` fold to `rn`, an emoji is two, a flag four) and two may read as one
 * (`rn` as `m`), so an `ask` or `deny` rule's `?ove_file` or `[m]ove_file` missed `ｍove_file`,
 * `𝐦ove_file` and `rnove_file`. Its folded pattern now runs over the fold's reading units
 * (foldNameReadings): the rule meets every spelling a person reads as matching it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, foldName, matchPolicy } from "../../src/index.js";
import { CONFUSABLE_ASCII } from "../../src/request/confusables-table.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleFor(pattern: string, action: "deny" | "ask" | "allow" = "deny") {
  const policy = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { tool: ${JSON.stringify(pattern)} }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(policy));
  return (tool: string): boolean => matchPolicy(compiled, { tool, arguments: {} }, NOW).ruleId === "r";
}

const GRAPHEMES = new Intl.Segmenter("en", { granularity: "grapheme" });

describe("a deny or ask rule's `?` and `[…]` take what a person reads as one character", () => {
  it("meets a letter whose fold is two characters, and two characters read as one", () => {
    for (const pattern of ["?ove_file", "[m]ove_file", "[a-z]ove_file", "[!x]ove_file"]) {
      const denies = ruleFor(pattern);
      for (const tool of ["move_file", "ｍove_file", "𝐦ove_file", "rnove_file", "ᴍove_file"]) {
        expect([pattern, tool, denies(tool)]).toEqual([pattern, tool, true]);
      }
      expect([pattern, denies("xove_file")]).toEqual([pattern, pattern === "?ove_file" || pattern === "[a-z]ove_file"]);
    }
    const asks = ruleFor("file_v[0-9]", "ask");
    expect([asks("file_v０"), asks("file_v𝟎"), asks("file_vo")]).toEqual([true, true, true]);
    expect(ruleFor("[A-Z]elete")("Ｄelete")).toBe(true);
  });

  it("meets an emoji, a flag, a ligature or a digraph in a `?`", () => {
    const denies = ruleFor("?_file");
    for (const tool of ["🔥_file", "🇫🇷_file", "👍🏽_file", "ǆ_file", "ﬁ_file", "x_file"]) {
      expect([tool, denies(tool)]).toEqual([tool, true]);
    }
    expect(denies("xy_file")).toBe(false);
  });

  it("leaves an allow rule exact", () => {
    const allows = ruleFor("?ove_file", "allow");
    expect([allows("move_file"), allows("𝐦ove_file"), allows("rnove_file")]).toEqual([true, false, false]);
  });
});

/** Look-alikes of an ASCII character in its case: full width, mathematical bold, and the table's. */
function lookAlikesOf(c: string): string[] {
  const code = c.charCodeAt(0);
  const out = [c, String.fromCharCode(code + 0xfee0)];
  if (c >= "a" && c <= "z") out.push(String.fromCodePoint(0x1d41a + code - 0x61));
  if (c >= "A" && c <= "Z") out.push(String.fromCodePoint(0x1d400 + code - 0x41));
  if (c >= "0" && c <= "9") out.push(String.fromCodePoint(0x1d7ce + code - 0x30));
  const lower = c.toLowerCase() === c && c.toUpperCase() !== c;
  const upper = c.toUpperCase() === c && c.toLowerCase() !== c;
  for (let i = 0; i < CONFUSABLE_ASCII.length; i += 2) {
    const g = String.fromCodePoint(CONFUSABLE_ASCII[i] as number);
    if (CONFUSABLE_ASCII[i + 1] !== foldName(c) || g.charCodeAt(0) < 0x80) continue;
    const gLower = g.toLowerCase() === g && g.toUpperCase() !== g;
    const gUpper = g.toUpperCase() === g && g.toLowerCase() !== g;
    if ((lower && gLower) || (upper && gUpper) || (!lower && !upper)) out.push(g);
  }
  if (c === "m") out.push("rn");
  return out;
}

const BASE = [..."adelmornsx_01DM"];

/** A pattern for `c` that a person reads as meeting it. */
function slotFor(c: string): fc.Arbitrary<string> {
  const range =
    c >= "a" && c <= "z" ? "[a-z]" : c >= "A" && c <= "Z" ? "[A-Z]" : c >= "0" && c <= "9" ? "[0-9]" : `[${c}]`;
  const other = c === "q" ? "w" : "q";
  return fc.constantFrom(c, "?", `[${c}]`, `[${other}${c}]`, range, `[!${other}]`);
}

describe("property: a deny rule's `?` and `[…]` never miss a spelling a person reads as matching", () => {
  it("holds for patterns made of a name's characters, `?` and classes, against look-alike spellings", () => {
    const case_ = fc
      .array(fc.constantFrom(...BASE), { minLength: 1, maxLength: 8 })
      .chain((name) =>
        fc.tuple(
          fc.constant(name),
          fc.tuple(...name.map(slotFor)),
          fc.tuple(...name.map((c) => fc.constantFrom(...lookAlikesOf(c)))),
        ),
      );
    fc.assert(
      fc.property(case_, ([name, slots, spelling]) => {
        const pattern = slots.join("");
        const tool = spelling.join("");
        expect([name.join(""), pattern, tool, ruleFor(pattern)(tool)]).toEqual([name.join(""), pattern, tool, true]);
      }),
      { numRuns: 400 },
    );
  });

  it("holds for any one character a person reads in a `?`", () => {
    const odd = fc.constantFrom("🇫🇷", "👍🏽", "é", "ﬁ", "ǆ", "𝐦", "™", "⑴", "ｍ", "½", "👨‍👩‍👧", "각");
    const one = fc.oneof(fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }), odd).filter((g) => {
      const fold = foldName(g);
      return fold !== "" && !fold.includes("/") && [...GRAPHEMES.segment(`a${g}b`)].length === 3;
    });
    const denies = ruleFor("a?b_file");
    fc.assert(
      fc.property(one, (g) => {
        const tool = `a${g}b_file`;
        expect([tool, denies(tool)]).toEqual([tool, true]);
      }),
      { numRuns: 400 },
    );
  });
});
