import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { visibleText } from "../../src/session/value-tokens.js";

// visibleText skips NFKC and the invisible-character pass for ASCII text (the common case on every result);
// it must answer exactly what the two passes would, for any text.
const reference = (text: string): string =>
  text.normalize("NFKC").replace(/[\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu, "");

describe("visibleText", () => {
  it("equals NFKC without invisible characters, for ASCII and for any text (property)", () => {
    fc.assert(fc.property(fc.string({ unit: "binary-ascii" }), (text) => visibleText(text) === reference(text)));
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (text) => visibleText(text) === reference(text)));
    expect(visibleText("ｍａｒｋ\u200b＠evil.example")).toBe("mark@evil.example");
    expect(visibleText("plain ascii\u0007")).toBe("plain ascii\u0007");
  });
});
