import { Buffer } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRedactor, NO_PATTERNS, spellSecrets } from "@acp/core";
import { createTextStreamRedactor } from "../../src/guard/stream-text.js";

const SECRET = "tok_live_9f3k2";
const redact = createRedactor(NO_PATTERNS, { secrets: () => [SECRET] }) as (text: string) => string;

/** Every piece `pieces` gives, pushed one by one, then the end. */
function streamed(pieces: readonly string[], secrets: readonly string[] = [SECRET]): string[] {
  const text = createTextStreamRedactor(secrets, redact);
  return [...pieces.flatMap((piece) => text.push(piece)), ...text.end()];
}

/** `text` cut at `cuts` (positions, any order). */
function cutAt(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const cut of at) {
    pieces.push(text.slice(from, cut));
    from = cut;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe("createTextStreamRedactor: a secret split across pieces of a text does not get through", () => {
  it("replaces a secret in three pieces, and holds the start back until the next piece shows it", () => {
    const text = createTextStreamRedactor([SECRET], redact);
    expect(text.push(`token ${SECRET.slice(0, 4)}`)).toEqual([]);
    expect(text.push(SECRET.slice(4, 9))).toEqual([]);
    expect(text.push(`${SECRET.slice(9)} ok`)).toEqual(["token [REDACTED]", " ok"]);
    expect(text.end()).toEqual([]);
  });

  it("holds back the start of a secret in another case (an upstream that upper-cases it) and hides it whole", () => {
    const text = createTextStreamRedactor([SECRET], redact);
    expect(text.push(`TOKEN ${SECRET.slice(0, 6).toUpperCase()}`)).toEqual([]);
    expect(text.push(`${SECRET.slice(6).toUpperCase()} OK`)).toEqual(["TOKEN [REDACTED]", " OK"]);
    expect(text.end()).toEqual([]);
  });

  it("passes on a piece that only looked like the start of a secret, unchanged, once the next shows it is not", () => {
    const text = createTextStreamRedactor([SECRET], redact);
    expect(text.push("Found it")).toEqual([]); // `t` could begin `tok_live_…`
    expect(text.push("Done")).toEqual(["Found it", "Done"]);
  });

  it("keeps the pieces of a stream whose pieces are each the whole text so far", () => {
    const snapshots = ["Looking", "Looking up the account", `Looking up the account: key ${SECRET}`];
    expect(streamed(snapshots)).toEqual([
      "Looking",
      "Looking up the account",
      "Looking up the account: key [REDACTED]",
    ]);
  });

  it("masks the start of a secret in a piece that the next, the whole text so far, completes", () => {
    const start = `key: ${SECRET.slice(0, 7)}`;
    expect(streamed([start, `key: ${SECRET} ok`])).toEqual(["key: [REDACTED]", "key: [REDACTED] ok"]);
  });

  it("gives the last pieces at the end, with a secret that ends the stream replaced", () => {
    expect(streamed(["key: ", SECRET.slice(0, 6), SECRET.slice(6)])).toEqual(["key: ", "[REDACTED]"]);
    expect(streamed(["ends in t"])).toEqual(["ends in t"]);
  });

  it("hides the percent-encoded and base64 spellings split across pieces too", () => {
    const percent = encodeURIComponent(SECRET).replace(/_/g, "%5F");
    expect(streamed([`?k=${percent.slice(0, 5)}`, percent.slice(5, 7), `${percent.slice(7)}&x=1`]).join("")).toBe(
      "?k=[REDACTED]&x=1",
    );
    const base64 = Buffer.from(SECRET).toString("base64");
    expect(streamed([base64.slice(0, 3), base64.slice(3, 11), base64.slice(11)]).join("")).not.toContain(
      base64.slice(0, 8),
    );
  });

  it("property: however a text is cut, the pieces passed on never hold a secret, and one without stays as it was", () => {
    const alphabet = fc.constantFrom("t", "o", "k", "_", "l", "i", "v", "e", "9", "f", " ", "x", SECRET, "%5F");
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 30 }), fc.array(fc.nat(400), { maxLength: 12 }), (parts, cuts) => {
        const whole = parts.join("");
        const pieces = cutAt(whole, cuts);
        const out = streamed(pieces);
        const joined = out.join("");
        for (const spelling of spellSecrets([SECRET]).strings) expect(joined).not.toContain(spelling);
        expect(redact(joined)).toBe(joined);
        // a piece the next one begins with and goes on from is read as the whole text so far, and the
        // start of a secret at its end is masked (as in the snapshots below): only the others stay as they were
        const snapshots = pieces.some(
          (p, i) => p !== "" && (pieces[i + 1] ?? "").length > p.length && (pieces[i + 1] ?? "").startsWith(p),
        );
        if (redact(whole) !== whole) expect(joined).toContain("[REDACTED]");
        else if (!snapshots) expect(out).toEqual(pieces.filter((p) => p !== ""));
      }),
      { numRuns: 400 },
    );
  });

  it("property: pieces that are each the whole text so far never show a character of a secret", () => {
    const filler = fc.constantFrom("x", "y", "z", " ", ".", "\n");
    const chars = new Set(SECRET);
    fc.assert(
      fc.property(
        fc.array(filler, { maxLength: 12 }),
        fc.array(filler, { maxLength: 12 }),
        fc.array(fc.nat(60), { maxLength: 10 }),
        (before, after, cuts) => {
          const whole = `${before.join("")}${SECRET}${after.join("")}`;
          const ends = [...new Set([...cuts.map((c) => c % (whole.length + 1)), whole.length])].sort((a, b) => a - b);
          const snapshots = ends.map((end) => whole.slice(0, end)).filter((t) => t !== "");
          const out = streamed(snapshots);
          expect(out).toHaveLength(snapshots.length);
          for (const shown of out) {
            expect([...shown.replaceAll("[REDACTED]", "")].filter((c) => chars.has(c))).toEqual([]);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("masks the start of a secret in pieces that the next ones complete bit by bit", () => {
    const snapshots = ["key tok_l", "key tok_live_", `key ${SECRET}`, `key ${SECRET}.`];
    expect(streamed(snapshots)).toEqual(["key [REDACTED]", "key [REDACTED]", "key [REDACTED]", "key [REDACTED]."]);
  });

  it("without secrets passes every piece on at once", () => {
    const text = createTextStreamRedactor([], redact);
    expect(text.push("t")).toEqual(["t"]);
    expect(text.end()).toEqual([]);
  });
});
