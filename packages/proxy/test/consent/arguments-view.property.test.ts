import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argumentsView, elide, printable } from "../../src/consent/index.js";

/** What must never reach a person raw: controls, format and invisible characters, odd spaces, lone halves. */
const RAW = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\u00a0\u2000-\u200a\u3000]/u;
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Text made of the characters a disguise is made of (no backslash: an escape in the output is ours). */
const disguise = fc.string({
  unit: fc.constantFrom("a", "@", " ", "u", "0", "\u200b", "\u202e", "\u001b", "\u009b", "\ud83d", "\ude00", "😀", '"'),
  maxLength: 600,
});
/** Strings of any code unit (lone surrogates too), and disguises. */
const hostile = fc.oneof(fc.string({ unit: "binary", maxLength: 400 }), disguise);
const value = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    hostile,
    fc.integer(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 5 }),
    fc.dictionary(hostile, tie("v"), { maxKeys: 5 }),
  ),
})).v;

describe("the arguments a person is shown (property)", () => {
  it("never hold a raw control, invisible or lone-surrogate character, keep every line bounded, and count what they leave out", () => {
    fc.assert(
      fc.property(fc.dictionary(hostile, value, { maxKeys: 40 }), (parameters) => {
        const view = argumentsView(parameters, { maxValue: 120, maxLines: 10 });
        const last = view.lines.at(-1) ?? "";
        const counted = /^… and (\d+) more values? not shown \((\d+) in all\)$/.exec(last);
        const shown = counted === null ? view.lines : view.lines.slice(0, -1);
        expect(shown.length).toBeLessThanOrEqual(10);
        for (const line of view.lines) {
          expect(line).not.toMatch(RAW);
          expect(line).not.toMatch(LONE);
          // a path of at most 80 characters, ": ", a value of at most 120 (the mark's count may add digits)
          expect(line.length).toBeLessThanOrEqual(80 + 2 + 120 + 12);
        }
        if (counted !== null) expect(Number(counted[1]) + shown.length).toBe(Number(counted[2]));
      }),
      { numRuns: 300 },
    );
  });

  it("cut a long text to its start and its end, never inside an escape or a surrogate pair", () => {
    fc.assert(
      fc.property(disguise, fc.integer({ min: 40, max: 200 }), (text, max) => {
        const shown = elide(printable(text), max);
        expect(shown).not.toMatch(LONE);
        // an escape is whole or absent: every backslash is an escape's, followed by u and four hex digits
        expect(shown).not.toMatch(/\\(?!u[0-9a-f]{4})/);
        expect(shown.length).toBeLessThanOrEqual(max);
        if (printable(text).length <= max) expect(shown).toBe(printable(text));
        else expect(shown).toMatch(/…\[\d+ characters not shown\]…/);
      }),
      { numRuns: 500 },
    );
  });
});
