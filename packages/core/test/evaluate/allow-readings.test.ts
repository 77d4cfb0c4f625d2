/**
 * An allow rule's argument glob matched the text as written only, so `allow /srv/files/**` allowed
 * `/srv/files/..\..\etc\passwd` and `/srv/files/..%2f..%2fetc/passwd`, which a tool that reads `\` as
 * `/` or decodes `%2f` opens as `/etc/passwd`. Now the value and every reading a tool may take of it
 * (decoded, `\` as `/`, in normal form) must match; a value whose readings disagree falls through.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest } from "../../src/evaluate/arg-match.js";
import { unitsOf } from "./work-units.js";
import { readingCost } from "../../src/evaluate/fast-glob.js";

const NOW = new Date("2026-03-02T10:00:00Z");

/** Whether an allow rule on `v` (then an ask default) decides the call `{v}`. */
function allows(pattern: string): (v: string) => boolean {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: allow }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v) => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

describe("an allow rule's argument glob meets every reading of the value too", () => {
  it("does not allow a path that leaves the directory once `\\` is read as `/` or its escapes decoded", () => {
    const files = allows("/srv/files/**");
    for (const v of [
      "/srv/files/..\\..\\etc\\passwd",
      "/srv/files/..%2f..%2fetc/passwd",
      "/srv/files/..%2F..%2Fetc%2Fpasswd",
      "/srv/files/%2e%2e/%2e%2e/etc/passwd",
      "/srv/files/a/..%5c..%5c..%5cetc/passwd",
      "/srv/files/.. ",
    ]) {
      expect([v, files(v)]).toEqual([v, false]);
    }
    // the values it is written for, and readings that stay inside
    for (const v of [
      "/srv/files/report.txt",
      "/srv/files/a/b.txt",
      "/srv/files/a//b",
      "/srv/files/a%20b",
      "/srv/files",
    ]) {
      expect([v, files(v)]).toEqual([v, true]);
    }
    const windows = allows("C:/Users/alice/work/**");
    expect([windows("C:/Users/alice/work/x.txt"), windows("C:/Users/alice/work/..\\..\\bob\\.ssh\\id_rsa")]).toEqual([
      true,
      false,
    ]);
  });

  it("does not allow a URL whose host is another once the WHATWG parser reads it", () => {
    const corp = allows("https://*.corp.example/**");
    for (const v of [
      "https://x@evil.example#.corp.example/",
      "https://evil.example?.corp.example/",
      "https://evil.example\\.corp.example/",
    ]) {
      expect([v, corp(v)]).toEqual([v, false]);
    }
    for (const v of [
      "https://api.corp.example/v1/x",
      "https://api.corp.example",
      "https://api.corp.example/search?q=a%2Fb&r=c\\d",
      "https://api.corp.example/a//b",
      "https://api.corp.example/v1/..%2f..%2f..%2fx", // `/x` once decoded: the same host
    ]) {
      expect([v, corp(v)]).toEqual([v, true]);
    }
    const exact = allows("https://api.corp.example");
    expect(exact("https://api.corp.example")).toBe(true);
  });

  it("still allows a Windows path under a pattern written with `\\`, compared with `/` for it", () => {
    const glob = allows("C:\\\\work\\\\**"); // `\\` a literal `\` in a glob
    expect([glob("C:\\work\\x.txt"), glob("C:\\work\\a\\b.txt"), glob("C:\\work\\..\\..\\x")]).toEqual([
      true,
      true,
      false,
    ]);
    // `#` is a file name's on a drive, not a URL's fragment: what follows it is read with `/` too
    expect(glob("C:\\work\\a#b\\..\\..\\x")).toBe(false);
    const exact = allows("C:\\work\\report.txt");
    expect([exact("C:\\work\\report.txt"), exact("C:\\work\\other.txt")]).toEqual([true, false]);
  });

  it("lets the call fall through to the rules after it", () => {
    const policy = compilePolicy(
      assertPolicy(`version: "1"
default_action: allow
rules:
  - { id: files, match: { tool: read_file, args: { path: "/srv/files/**" } }, action: allow }
  - { id: elsewhere, match: { tool: read_file }, action: ask }
`),
    );
    const decide = (path: string): string | undefined =>
      matchPolicy(policy, { tool: "read_file", arguments: { path } }, NOW).ruleId;
    expect([decide("/srv/files/a.txt"), decide("/srv/files/..%2f..%2fetc/passwd")]).toEqual(["files", "elsewhere"]);
  });
});

describe("the readings an allow rule meets count against the decision's work budget", () => {
  it("charges each reading made, and a plain value one scan", () => {
    const test = compileLeafTest("/srv/files/**");
    if (typeof test === "string") throw new Error(test);
    const tail = "a".repeat(4000);
    const reading = readingCost(`/srv/files/${tail}`);
    const plain = unitsOf(test, `/srv/files/${tail}`);
    // the glob reads it twice (`dir/**`), the scan for what may read otherwise once
    expect(plain).toBeLessThanOrEqual(3 * reading + 4);
    // decoded and normalised: each reading made and read again
    expect(unitsOf(test, `/srv/files/%61${tail}`) - plain).toBeGreaterThanOrEqual(2 * reading);
    expect(unitsOf(test, `/srv/files/b\\${tail}`) - plain).toBeGreaterThanOrEqual(2 * reading);
  });
});
