import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readPlainYaml, STRUCTURE_YAML_OPTIONS } from "../../src/session/structured-content.js";

/** What the YAML parser gives the text (the only reading before the plain fast path existed). */
function parsed(text: string): unknown {
  return parseYaml(text, STRUCTURE_YAML_OPTIONS) as unknown;
}

// Pieces of text that tool results are made of, and every character YAML gives a meaning to.
const WORDS = ["Echo", "m123", "Bob", "Smith", "é", "Straße", "日本", "Name", "first_name", "x-id", "a"];
const SCALARS = ["0", "7", "007", "1.5", "1.", "1e3", "2E-2", "0x1F", "0o17", ".5", "-3", "+2", "12345678901234567890"];
const SPECIAL = ["true", "True", "FALSE", "null", "Null", "NULL", "~", "yes", "on", ".inf", ".nan", "<<"];
const MARKS = [..."-?:,[]{}#&*!|>'\"%@`~()/$_<=^;.+\\"].concat(["---", "...", "- ", "? ", "! ", "& ", "* "]);
const GAPS = [" ", "  ", ": ", ":", " #", "#", "\n", "\n\n", "\n  ", "\n- ", "\t", "\r\n", "\u00a0", "\u2028"];
const OTHER = ["http://x.example/y?q=1", "bob@mail.example", "DE89 3704 0044 0532 0130 00", "+1 (555) 010-0000"];

const piece = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 2, arbitrary: fc.constantFrom(...SCALARS) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL) },
  { weight: 3, arbitrary: fc.constantFrom(...MARKS) },
  { weight: 5, arbitrary: fc.constantFrom(...GAPS) },
  { weight: 1, arbitrary: fc.constantFrom(...OTHER) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const anyText = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join("").trim());

const valueText = fc.array(fc.oneof(fc.constantFrom(...WORDS, ...SCALARS, ...SPECIAL, ...OTHER), piece), {
  minLength: 1,
  maxLength: 4,
});
const keyLine = fc
  .tuple(fc.constantFrom(...WORDS, "Full name", "e-mail", "Due date"), fc.constantFrom(": ", ":  ", ":"), valueText)
  .map(([key, sep, value]) => `${key}${sep}${value.join(" ")}`);
const keyLines = fc
  .array(fc.oneof({ weight: 5, arbitrary: keyLine }, { weight: 1, arbitrary: fc.constant("") }), {
    minLength: 1,
    maxLength: 6,
  })
  .map((lines) => lines.join("\n").trim());
const proseLines = fc
  .array(fc.array(fc.constantFrom(...WORDS, ...SCALARS, ...SPECIAL, ...MARKS, " ", "  ", ""), { maxLength: 6 }), {
    minLength: 1,
    maxLength: 5,
  })
  .map((lines) =>
    lines
      .map((words) => words.join(" "))
      .join("\n")
      .trim(),
  );

describe("results read without the YAML parser", () => {
  it("reads the common shapes without the parser, to the parser's value", () => {
    for (const text of [
      "Echo: m123",
      "Hello world",
      "Name: Bob Smith\nEmail: bob@mail.example\nCount: 5",
      "Status: ok\n\nNext: https://x.example/a:b",
      "The meeting moved.\nIt is now on Friday.\n\nBring the slides.",
      "true",
      "count: 007",
    ]) {
      const plain = readPlainYaml(text);
      expect(plain, text).toBeDefined();
      expect(plain?.value, text).toStrictEqual(parsed(text));
    }
  });

  it("leaves what it does not read plainly to the parser", () => {
    for (const text of ["- a\n- b", "a: b: c", "a: [1, 2]", "key: # comment", "a:\n  b: c", "? x", "&a x", "'q'"]) {
      expect(readPlainYaml(text), text).toBeUndefined();
    }
  });

  it("gives exactly the parser's value whenever it reads a text (random text from YAML's own characters)", () => {
    const check = (text: string) => {
      const plain = readPlainYaml(text);
      if (plain !== undefined) expect(plain.value, JSON.stringify(text)).toStrictEqual(parsed(text));
    };
    fc.assert(fc.property(anyText, check), { numRuns: 4000 });
    fc.assert(fc.property(keyLines, check), { numRuns: 3000 });
    fc.assert(fc.property(proseLines, check), { numRuns: 3000 });
  });
});
