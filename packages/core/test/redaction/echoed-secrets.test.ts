import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { NO_PATTERNS, REDACTED, redactSecrets, spellSecrets } from "../../src/index.js";

const SECRET = "sk-live/4f9a&Qz<7e1>";
const only = (value: unknown, secret = SECRET): unknown => redactSecrets(value, [secret], NO_PATTERNS);

describe("a vault value an upstream echoes in another spelling is still hidden", () => {
  it("as hex of its bytes, in lower and upper case", () => {
    const hex = Buffer.from(SECRET, "utf8").toString("hex");
    expect(only(`dump ${hex} end`)).toBe(`dump ${REDACTED} end`);
    expect(only(`DUMP ${hex.toUpperCase()}`)).toBe(`DUMP ${REDACTED}`);
  });

  it("a secret of fewer than 4 bytes has no hex spelling (its digits are too common)", () => {
    expect(spellSecrets(["abc"]).strings).not.toContain("616263");
    expect(spellSecrets(["abcd"]).strings).toContain("61626364");
  });

  it("in JSON as Go writes it (`<`, `>`, `&` as \\u003c…) and as PHP writes it (`/` as `\\/`)", () => {
    const go = JSON.stringify({ v: SECRET }).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
    const php = JSON.stringify({ v: SECRET }).replace(/\//g, "\\/");
    expect(only(go)).toBe(`{"v":"${REDACTED}"}`);
    expect(only(php)).toBe(`{"v":"${REDACTED}"}`);
  });

  it("in upper, lower or mixed case", () => {
    expect(only(`invalid key ${SECRET.toUpperCase()}`)).toBe(`invalid key ${REDACTED}`);
    expect(only(`invalid key ${SECRET.toLowerCase()}!`)).toBe(`invalid key ${REDACTED}!`);
    expect(only({ error: "Token ABCdef123XYZ rejected" }, "abcDEF123xyz")).toEqual({
      error: `Token ${REDACTED} rejected`,
    });
  });

  it("a text without the secret in any case is returned as it was (the same string)", () => {
    const text = "SK-LIVE/4F9A& something else";
    expect(only(text)).toBe(text);
  });
});

describe("a vault value cut across the items of an array is hidden", () => {
  it("across two MCP text parts: replaced where it starts, left out where it runs on", () => {
    const result = {
      content: [
        { type: "text", text: `key: ${SECRET.slice(0, 7)}` },
        { type: "text", text: `${SECRET.slice(7)} (end)` },
      ],
    };
    expect(only(result)).toEqual({
      content: [
        { type: "text", text: `key: ${REDACTED}` },
        { type: "text", text: " (end)" },
      ],
    });
  });

  it("across three short parts, each shorter than any spelling", () => {
    const parts = [SECRET.slice(0, 6), SECRET.slice(6, 12), SECRET.slice(12)];
    expect(only(parts.map((text) => ({ type: "text", text })))).toEqual([
      { type: "text", text: REDACTED },
      { type: "text", text: "" },
      { type: "text", text: "" },
    ]);
  });

  it("across the strings of an array, and the text of resource contents, other items kept in place", () => {
    expect(only({ parts: [SECRET.slice(0, 9), 42, SECRET.slice(9)] })).toEqual({ parts: [REDACTED, 42, ""] });
    const contents = [
      { uri: "file:///a", text: `TOKEN=${SECRET.slice(0, 10)}` },
      { uri: "file:///b", blob: "AAAA" },
      { uri: "file:///c", text: SECRET.slice(10) },
    ];
    expect(only({ contents })).toEqual({
      contents: [
        { uri: "file:///a", text: `TOKEN=${REDACTED}` },
        { uri: "file:///b", blob: "AAAA" },
        { uri: "file:///c", text: "" },
      ],
    });
  });

  it("across parts in another spelling (percent-encoded, hex)", () => {
    const url = `https://x.test/?k=${encodeURIComponent(SECRET)}`;
    expect(only([url.slice(0, 25), url.slice(25)])).toEqual([`https://x.test/?k=${REDACTED}`, ""]);
    const hex = Buffer.from(SECRET).toString("hex");
    expect(only([hex.slice(0, 5), hex.slice(5)])).toEqual([REDACTED, ""]);
  });

  it("an array whose items hold no secret between them is returned as it was (the same reference)", () => {
    const list = [{ type: "text", text: "sk-live" }, { type: "text", text: "/other" }, "plain"];
    expect(only(list)).toBe(list);
  });

  it("property: however a text holding the secret is cut into parts, the parts joined never hold it", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 }),
        fc.array(fc.nat({ max: 60 }), { maxLength: 5 }),
        (before, after, cutsAt) => {
          const text = `${before}${SECRET}${after}`;
          const cuts = [...new Set(cutsAt.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
          const pieces = [0, ...cuts].map((from, i) => text.slice(from, [...cuts, text.length][i]));
          const out = only(pieces.map((t) => ({ type: "text", text: t }))) as { text: string }[];
          expect(out.map((p) => p.text).join("")).not.toContain(SECRET);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("a vault value in the bytes of a base64 `blob` or `data` is hidden, the base64 kept valid", () => {
  const b64 = (text: string): string => Buffer.from(text, "latin1").toString("base64");
  const decoded = (value: unknown): string => Buffer.from(value as string, "base64").toString("latin1");
  const utf8 = Buffer.from(SECRET, "utf8").toString("latin1");

  it("a resource's blob: its bytes with the value replaced, everything else as it was", () => {
    for (const before of ["TOKEN=", "TOKEN=x", "TOKEN=xy"]) {
      const blob = b64(`${before}${utf8}\nOTHER=1\n`);
      const out = only({ contents: [{ uri: "file:///env", blob }] }) as { contents: { blob: string }[] };
      const shown = out.contents[0]?.blob as string;
      expect(shown).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
      expect(decoded(shown)).toBe(`${before}${REDACTED}\nOTHER=1\n`);
    }
  });

  it("an image's data, with bytes that are no text around the value", () => {
    const data = b64(`\x89PNG\r\n\x1a\n\x00\xff${utf8}\x00\x01`);
    const out = only({ content: [{ type: "image", mimeType: "image/png", data }] }) as {
      content: { data: string }[];
    };
    expect(decoded(out.content[0]?.data)).toBe(`\x89PNG\r\n\x1a\n\x00\xff${REDACTED}\x00\x01`);
  });

  it("a `data` that is no base64 (a log line) is redacted as text; a blob without the value is the same string", () => {
    expect(only({ data: `bad credential ${SECRET}` })).toEqual({ data: `bad credential ${REDACTED}` });
    const clean = { blob: b64("nothing to see here") };
    expect(only(clean)).toBe(clean);
  });
});
