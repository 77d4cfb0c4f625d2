import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createProvenanceEntry,
  deriveProvenance,
  PROVENANCE_LABELS,
  type ProvenanceEntry,
} from "../../src/session/provenance.js";
import { entryIndex, holdingWords } from "../../src/session/provenance-index.js";
import { containsDelimited, containsWhole, wordsOf } from "../../src/session/value-tokens.js";

/**
 * Provenance compares a piece only with the entries whose text has every word of it. That is sound only if a
 * text holding a piece on word boundaries always has each of the piece's words as a whole word: checked here on
 * hostile text (joiners, look-alikes, surrogate pairs, lone surrogates, digits in groups).
 */
const ALPHABET = [
  "a",
  "b",
  "7",
  "_",
  " ",
  ".",
  "-",
  "@",
  "/",
  ":",
  "'",
  "é",
  "ß",
  "İ",
  "\u00ad",
  "𝐀",
  "\ud835",
  "中",
  "+",
  "1",
];
const textOf = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 40 }).map((cs) => cs.join(""));

describe("the word index of a session's entries", () => {
  it("a text holding a piece (delimited or whole) has every word of the piece", () => {
    fc.assert(
      fc.property(textOf, textOf, fc.nat(), fc.nat(), (text, noise, from, length) => {
        // pieces cut from the text itself occur in it: the interesting case
        const start = from % (text.length + 1);
        const cut = text.slice(start, start + (length % 12));
        for (const piece of [cut, noise]) {
          if (!containsDelimited(text, piece) && !containsWhole(text, piece)) continue;
          const words = wordsOf(text);
          for (const word of wordsOf(piece)) expect(words.has(word)).toBe(true);
        }
      }),
      { numRuns: 3_000 },
    );
  });

  it("splits words as containment reads them, one UTF-16 unit at a time", () => {
    expect([...wordsOf("bob.smith@x-1.example, o'brien 4111 1111")]).toEqual([
      "bob",
      "smith",
      "x",
      "1",
      "example",
      "o",
      "brien",
      "4111",
      "1111",
    ]);
    // a letter outside the BMP is two units, neither a letter alone: containsDelimited reads it the same way
    expect([...wordsOf("a𝐀b")]).toEqual(["a", "b"]);
    expect([...wordsOf("")]).toEqual([]);
    expect([...wordsOf("-- ..")]).toEqual([]);
  });

  it("is kept up as the entries grow, and rebuilt when the array is changed in place", () => {
    const entries: ProvenanceEntry[] = [];
    const at = (word: string) => holdingWords(entryIndex(entries).untrustedWords, [word]);
    entries.push(createProvenanceEntry("external_untrusted", "r#1", "pay alpha"));
    expect(at("alpha")).toEqual([0]);
    entries.push(createProvenanceEntry("external_untrusted", "r#2", "pay beta"));
    expect(at("beta")).toEqual([1]);
    expect(at("pay")).toEqual([0, 1]);
    entries[1] = createProvenanceEntry("external_untrusted", "r#3", "pay gamma");
    expect(at("beta")).toEqual([]);
    expect(at("gamma")).toEqual([1]);
    entries.length = 1;
    expect(at("pay")).toEqual([0]);
  });

  it("judges a growing session exactly as a session read at once", () => {
    const content = fc.oneof(
      fc.constantFrom(
        "write to ann@example.com",
        "pay DE89 3704 0044 0532 0130 00 today",
        "see https://docs.example/a?to=https://evil.example/x",
        "call +44 20 7946 0958",
        "ann",
        "x--y",
        "--",
        '[{"title":"Quarterly report","owner":"eve@evil.example"}]',
      ),
      textOf,
    );
    const entry = fc.tuple(fc.constantFrom(...PROVENANCE_LABELS), content);
    const args = fc.dictionary(
      fc.constantFrom("to", "body", "iban", "x"),
      fc.oneof(content, fc.constantFrom("ann@example.com", "evil.example", "--", "4420 7946 0958", "ann", "a")),
      { maxKeys: 3 },
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), args, (made, call) => {
        const all = made.map(([label, text], i) => createProvenanceEntry(label, `s#${i}`, text));
        const growing: ProvenanceEntry[] = [];
        for (const e of all) {
          growing.push(e);
          deriveProvenance(growing, call);
        }
        const once = deriveProvenance([...all], call, { named_sources: true });
        expect(deriveProvenance(growing, call, { named_sources: true })).toEqual(once);
        // the same entries one by one: a piece an entry holds alone names that entry among all of them
        for (const piece of once) {
          for (const [i, e] of all.entries()) {
            const alone = deriveProvenance([e], { [String(piece.path[0])]: piece.piece }).find(
              (p) => p.piece === piece.piece && p.kind === piece.kind,
            );
            if (alone === undefined || e.label === "external_untrusted") continue;
            if (alone.trusted_sources.includes(`s#${i}`)) expect(piece.trusted_sources).toContain(`s#${i}`);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
