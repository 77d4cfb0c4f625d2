/**
 * A value encoded deeper than the evaluator decodes (three times): `/srv/%2525252e%2525252e/etc/passwd` is
 * `/srv/%2e%2e/etc/passwd` after three decodings and `/etc/passwd` to a fourth reader. Its reading is not
 * known, so an ask or deny rule's string glob meets it (as no allow rule does), where before a deny rule
 * for `/etc/passwd` missed it and the call fell through to the rules after it. A value encoded up to three
 * times is read as before, and never made to ask for its escapes alone. A value of several lines or over
 * 4,096 characters is read whole so too (decoded-text.test.ts).
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { readingUnknown } from "../../src/evaluate/allow-readings.js";

const NOW = new Date("2026-03-02T10:00:00Z");

/** The rule a value meets under `rules` (YAML flow mappings), or `default`. */
function decide(rules: string[], v: string, fallback = "allow"): string {
  const text = `version: "1"\ndefault_action: ${fallback}\nrules:\n${rules.map((r) => `  - ${r}\n`).join("")}`;
  return matchPolicy(compilePolicy(assertPolicy(text)), { tool: "t", arguments: { v } }, NOW).ruleId;
}

const denyOn = (pattern: string) => `{ id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: deny }`;

/** `.`, `/`, `\`, `%` and a letter, each encoded four times and more. */
const FOUR_DEEP = [
  "/srv/files/%2525252e%2525252e/%2525252e%2525252e/etc/passwd",
  "/srv/files/..%2525252f..%2525252fetc/passwd",
  "/srv/files/..%2525255c..%2525255cetc/passwd",
  "/srv/files/%252525252e%252525252e/%252525252e%252525252e/etc/passwd",
  "/srv/files/%25252525%32%65/x",
  "/etc/p%25252561sswd",
  " /srv/files/%2525252E%2525252E/x ",
  "https://api.example/files/%2525252e%2525252e/admin?q=1",
];

describe("a value encoded deeper than is decoded", () => {
  it("has no known reading; a value encoded at most three times has one", () => {
    for (const v of FOUR_DEEP) expect([v, readingUnknown(v)]).toEqual([v, true]);
    for (const v of [
      "/srv/a%20b",
      "https://api.example/search?q=a%20b",
      "/srv/files/%25252e%25252e/x",
      "/srv/100%25",
      "/srv/%zz%25zz",
      "/srv/%2525",
      // a URL's query is not read: redirect chains nest encoded URLs deeply there
      "https://l.example/r?u=https%252525253A%252525252F%252525252Fy.example",
    ]) {
      expect([v, readingUnknown(v)]).toEqual([v, false]);
    }
  });

  it("is met by a deny rule's string glob, whatever it names", () => {
    for (const pattern of ["/etc/passwd", "/etc/**", "**/passwd", "https://api.example/admin/**", "*@evil.com"]) {
      for (const v of FOUR_DEEP) expect([pattern, v, decide([denyOn(pattern)], v)]).toEqual([pattern, v, "r"]);
    }
  });

  it("is asked about under an ask rule, and allowed by no allow rule before it", () => {
    const v = FOUR_DEEP[0] as string;
    const rules = [
      `{ id: files, match: { args: { v: "/srv/files/**" } }, action: allow }`,
      `{ id: ask-etc, match: { args: { v: "/etc/**" } }, action: ask }`,
    ];
    expect(decide(rules, v)).toBe("ask-etc");
    expect(decide(rules, "/srv/files/report.txt")).toBe("files");
  });

  it("leaves a value encoded up to three times to its readings", () => {
    const rules = [denyOn("/etc/**")];
    for (const v of [
      "/srv/a%20b",
      "https://api.example/search?q=a%20b%2F",
      "/srv/files/%25252e%25252e/x",
      "https://l.example/r?u=https%252525253A%252525252F%252525252Fy.example",
      "notes\n/srv/files/%25252e%25252e/x",
      `/srv/${"a".repeat(4096)}/%25252e`,
    ]) {
      expect([v, decide(rules, v)]).toEqual([v, "default"]);
    }
    // three decodings read: `%25252e%25252e` is `..` to a third reader, and the deny rule meets that
    expect(decide(rules, "/srv/%25252e%25252e/etc/passwd")).toBe("r");
  });

  it("is met so in a value of several lines or over 4,096 characters, read whole, its query too", () => {
    // before, such a value was not decoded at all, and so never unknown: the deny rule missed it
    const rules = [denyOn("/etc/**")];
    for (const v of [
      "/srv/files/%2525252e\n/x",
      `/srv/${"a".repeat(4096)}/%2525252e`,
      "notes\nhttps://l.example/r?u=https%252525253A%252525252F",
    ]) {
      expect([v, decide(rules, v)]).toEqual([v, "r"]);
      expect([v, decide([`{ id: a, match: { args: { v: "**" } }, action: allow }`], v, "ask")]).toEqual([v, "default"]);
    }
  });

  it("is not met by a number or boolean pattern, which is compared as a value", () => {
    const rules = [`{ id: r, match: { args: { v: true } }, action: deny }`];
    expect(decide(rules, "%2525252e")).toBe("default");
  });
});

describe("a decoded value in NFKC", () => {
  // `%EF%BC%8E` is `．` (U+FF0E) and `%EF%BC%8F` is `／` (U+FF0F): `../` to a tool that decodes, then normalises
  const ESCAPED_FULL_WIDTH = [
    "/srv/files/%EF%BC%8E%EF%BC%8E/%EF%BC%8E%EF%BC%8E/etc/passwd",
    "/srv/files/%EF%BC%8E%EF%BC%8E%EF%BC%8F%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc/passwd",
    "/srv/files/%25EF%25BC%258E%25EF%25BC%258E/%25EF%25BC%258E%25EF%25BC%258E/etc/passwd",
  ];

  it("is read by a deny rule", () => {
    for (const v of ESCAPED_FULL_WIDTH) expect([v, decide([denyOn("/etc/passwd")], v)]).toEqual([v, "r"]);
    // a decoded letter in full width stays a name (`ｒｅｐｏｒｔ`), met in NFKC as before
    expect(decide([denyOn("/srv/report")], "/srv/%EF%BD%92eport")).toBe("r");
  });

  it("is a reading an allow rule must meet too", () => {
    const rules = [`{ id: files, match: { args: { v: "/srv/files/**" } }, action: allow }`];
    for (const v of ESCAPED_FULL_WIDTH) expect([v, decide(rules, v, "ask")]).toEqual([v, "default"]);
    // a decoded name in full width spells no more structure: still allowed
    expect(decide(rules, "/srv/files/%EF%BD%92eport.txt", "ask")).toBe("files");
  });
});

describe("an escape that a decoding's NFKC form makes", () => {
  // `%EF%BC%85` is `％` (U+FF05), `%2e` in NFKC once `%32%65` (`2e`) is decoded beside it: `.` to a reader
  // that decodes, normalises, then decodes again; `%２ｅ` (full-width digits) is `%2e` in NFKC too
  const DOT = "%EF%BC%85%32%65";
  const FOLLOWED = [
    `/srv/files/${DOT}${DOT}/${DOT}${DOT}/etc/passwd`,
    "/srv/files/%25%EF%BC%92%EF%BD%85%25%EF%BC%92%EF%BD%85/%25%EF%BC%92%EF%BD%85%25%EF%BC%92%EF%BD%85/etc/passwd",
    "/srv/files/%25EF%25BC%2585%2532%2565%25EF%25BC%2585%2532%2565/..%EF%BC%85%32%66etc/passwd",
    "/etc/p%EF%BC%85%36%31sswd",
    "/srv/files/%２ｅ%２ｅ/%２ｅ%２ｅ/etc/passwd",
  ];

  it("is decoded too, within three decodings", () => {
    for (const v of FOLLOWED) {
      expect([v, decide([denyOn("/etc/passwd")], v)]).toEqual([v, "r"]);
      expect([v, readingUnknown(v)]).toEqual([v, false]);
    }
  });

  it("is a reading an allow rule must meet too", () => {
    const rules = [`{ id: files, match: { args: { v: "/srv/files/**" } }, action: allow }`];
    for (const v of FOLLOWED.filter((f) => f.startsWith("/srv/files/"))) {
      expect([v, decide(rules, v, "ask")]).toEqual([v, "default"]);
    }
    // an escape of a letter made so is still a name under the directory: allowed
    expect(decide(rules, "/srv/files/%EF%BC%85%37%32eport.txt", "ask")).toBe("files");
  });

  it("counts each decoding against the three read: one more is a value whose reading is not known", () => {
    // `%2525EF…` is `%25EF…`, `%EF…`, `％2e` after three decodings, and `%2e` in NFKC still decodes
    const v = "/srv/files/%2525EF%2525BC%252585%252532%252565/x";
    expect(readingUnknown(v)).toBe(true);
    expect(decide([denyOn("/etc/passwd")], v)).toBe("r");
    const rules = [`{ id: files, match: { args: { v: "/srv/files/**" } }, action: allow }`];
    expect(decide(rules, v, "ask")).toBe("default");
  });
});
