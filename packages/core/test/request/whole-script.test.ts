/**
 * Whole-script look-alikes (UTS #39 §4): a word written wholly in another script whose every letter passes
 * for a Latin one (`аррӏе`, all Cyrillic, reads as `apple`). `findLookAlike` finds a look-alike only inside a
 * word with Latin letters; these have none. Ordinary text of that script must not be taken for one.
 */
import { describe, expect, it } from "vitest";
import { findLookAlike, findWholeScriptLookAlike } from "../../src/index.js";

describe("findWholeScriptLookAlike", () => {
  it("finds a host label, a name or a word wholly in Cyrillic or Greek letters that pass for Latin ones", () => {
    // `аррӏе`: а р р ӏ е, U+0430 U+0440 U+0440 U+04CF U+0435
    expect(findWholeScriptLookAlike("\u0430\u0440\u0440\u04cf\u0435")).toEqual({
      word: "аррӏе",
      script: "Cyrillic",
      reads: "appie",
    });
    for (const text of ["ceo@аррӏе.com", "аррӏе.сом", "https://аррӏе.com/login", "write to аррӏе.сом today"]) {
      expect(findWholeScriptLookAlike(text), text).toMatchObject({ word: "аррӏе", script: "Cyrillic" });
    }
    expect(findWholeScriptLookAlike("раураӏ")).toEqual({ word: "раураӏ", script: "Cyrillic", reads: "paypai" });
    expect(findWholeScriptLookAlike("ѕсоре")).toMatchObject({ reads: "scope" });
    expect(findWholeScriptLookAlike("ΑΡΡΙΕ")).toEqual({ word: "ΑΡΡΙΕ", script: "Greek", reads: "apple" });
    // Cyrillic and Greek in one word: still every letter a look-alike
    expect(findWholeScriptLookAlike("аΡрӏе")).toMatchObject({ script: "several scripts", reads: "appie" });
    // in NFD (a mark on a look-alike is read past, as a person does)
    expect(findWholeScriptLookAlike("а\u0301ррӏе")).toMatchObject({ reads: "appie" });
  });

  it("leaves ordinary text of another script alone: a word with a letter that looks like no Latin one", () => {
    for (const text of [
      "Ирина",
      "получить_погоду",
      "берег", // б reads as the digit 6, no letter
      "Привет, мир",
      "ирина@почта.рф",
      "Ελληνικά",
      "Ջան",
    ]) {
      expect(findWholeScriptLookAlike(text), text).toBeUndefined();
    }
  });

  it("leaves prose alone: words all of look-alikes count only where joined as in an address, host or path", () => {
    // `на горе` ("on the mountain"): `горе` reads as `ropa`, but it is a word of a sentence
    expect(findWholeScriptLookAlike("Мы были на горе у реки")).toBeUndefined();
    expect(findWholeScriptLookAlike("горе. Конец")).toBeUndefined();
    expect(findWholeScriptLookAlike("он сказал: горе")).toBeUndefined();
  });

  it("leaves Latin words, a single letter and ASCII alone (a look-alike inside a Latin word is findLookAlike's)", () => {
    for (const text of ["ceo@apple.com", "zoë.café@corp.test", "х", "а.b", "ａｐｐｌｅ", "𝐚𝐩𝐩𝐥𝐞", "søk_filer", ""]) {
      expect(findWholeScriptLookAlike(text), text).toBeUndefined();
    }
    // `аpple` with one Cyrillic `а` is a Latin word with a look-alike inside: findLookAlike finds it
    expect(findWholeScriptLookAlike("\u0430pple")).toBeUndefined();
    expect(findLookAlike("\u0430pple")).toEqual({ char: "\u0430", reads: "a" });
  });
});
