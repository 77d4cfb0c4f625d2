import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  canonicalJson,
  canonicalSha256Ref,
  isSha256Ref,
  sha256Hex,
  sha256Ref,
  tryCanonicalJson,
} from "../src/canonical-json/index.js";

describe("canonical JSON (RFC 8785)", () => {
  it("matches the RFC 8785 section 3.2.2 example byte for byte", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code units as RFC 8785 section 3.2.3 shows", () => {
    const input = { "\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\ud83d\ude00": 5, "\u0080": 6, "\u00f6": 7 };
    expect(canonicalJson(input)).toBe('{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":3}');
  });

  it("writes -0 as 0 and drops no whitespace-insensitive meaning", () => {
    expect(canonicalJson({ b: -0, a: [1, { d: 1, c: 2 }] })).toBe('{"a":[1,{"c":2,"d":1}],"b":0}');
  });

  it("refuses values that are not plain JSON instead of coercing them", () => {
    const bad: unknown[] = [
      { a: undefined },
      { a: Number.NaN },
      { a: Infinity },
      { a: 1n },
      { a: () => 1 },
      new Date(0),
      { s: "\ud800" },
      { ["\udc00"]: 1 },
    ];
    for (const [i, value] of bad.entries()) {
      const r = tryCanonicalJson(value);
      expect(r.ok, `case ${i}`).toBe(false);
      if (!r.ok) expect(r.issues[0]?.code).toBe("not_canonical_json");
    }
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/not finite/);
  });

  it("refuses absurdly deep nesting without overflowing the stack", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const r = tryCanonicalJson(deep);
    expect(r.ok).toBe(false);
  });

  it("is a fixed point: parsing and re-canonicalizing gives the same text, whatever the key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        const reversed = JSON.parse(text, (_k, v: unknown) =>
          v !== null && typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).reverse())
            : v,
        ) as unknown;
        expect(canonicalJson(reversed)).toBe(text);
      }),
    );
  });
});

describe("sha256 references", () => {
  it("hashes the UTF-8 bytes and prefixes `sha256:`", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Ref(new TextEncoder().encode("abc"))).toBe(
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(canonicalSha256Ref({ b: 1, a: 2 })).toBe(sha256Ref('{"a":2,"b":1}'));
  });

  it("gives a Hash object's digest for any string and for a byte view at an offset", () => {
    const viaObject = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(sha256Hex(text)).toBe(viaObject(text));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array(), fc.nat(8), fc.nat(8), (bytes, start, cut) => {
        const padded = new Uint8Array(bytes.length + start + cut);
        padded.set(bytes, start);
        const view = padded.subarray(start, start + bytes.length);
        expect(sha256Hex(view)).toBe(viaObject(bytes));
      }),
    );
    // a lone surrogate is hashed as U+FFFD's UTF-8 bytes, as Hash#update does
    expect(sha256Hex("\ud800")).toBe(viaObject("\ufffd"));
  });

  it("accepts only the exact lowercase form", () => {
    const good = sha256Ref("x");
    expect(isSha256Ref(good)).toBe(true);
    expect(isSha256Ref(good.toUpperCase())).toBe(false);
    expect(isSha256Ref("sha256:" + good.slice(7).toUpperCase())).toBe(false);
    expect(isSha256Ref(good.slice(0, -1))).toBe(false);
    expect(isSha256Ref(good + "0")).toBe(false);
    expect(isSha256Ref(good.slice(7))).toBe(false);
    expect(isSha256Ref(42)).toBe(false);
  });
});
