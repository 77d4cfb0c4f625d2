/**
 * An ask or deny rule's argument glob meets the spellings a server reads as the value it names: a URL with
 * white space or controls at its ends (the WHATWG parser strips them), a path with escaped unreserved
 * characters, a `file:` URL, a trailing `/`, and a domain written in Unicode or in IDNA's ASCII form. Each
 * of these slipped past a deny rule before. An allow rule stays exact.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleOn(pattern: string, action: "deny" | "allow" = "deny") {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v: string): boolean => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

describe("a deny rule's argument glob meets a respelled path, URL or domain", () => {
  it("meets a URL with white space or controls at its ends, as the WHATWG URL parser reads it", () => {
    const denies = ruleOn("https://evil.example/**");
    for (const v of [" https://evil.example/x", "\thttps://evil.example/x\n", "\u0000https://EVIL.example/x "]) {
      expect([v, denies(v)]).toEqual([v, true]);
    }
    expect(denies("https://good.example/x")).toBe(false);
  });

  it("meets a path with escaped unreserved characters, a file: URL and a trailing slash", () => {
    const passwd = ruleOn("/etc/passwd");
    for (const v of [
      "/etc/%70asswd",
      "/etc/%2e%2e/etc/passwd",
      "file:///etc/passwd",
      "file:///etc/%70asswd",
      "/etc/passwd ",
    ]) {
      expect([v, passwd(v)]).toEqual([v, true]);
    }
    // a server that decodes a path after routing reads `%2f` as `/`: fail towards matching
    expect([passwd("/srv/files/..%2f..%2fetc/passwd"), passwd("/etc%2Fpasswd"), passwd("/etc/%2Fpasswd")]).toEqual([
      true,
      true,
      true,
    ]);
    const admin = ruleOn("https://evil.example/admin/**");
    expect(admin("https://evil.example/public/..%2Fadmin/x")).toBe(true);
    const ssh = ruleOn("/home/me/.ssh/**");
    expect([ssh("/home/me/%2essh/id_rsa"), ssh("/home/me/%2Essh/id_rsa")]).toEqual([true, true]);
    const secret = ruleOn("/srv/secret");
    expect([secret("/srv/secret/"), secret("/srv//secret//"), secret("/srv/secrets/")]).toEqual([true, true, false]);
  });

  it("meets a domain in Unicode and in IDNA's ASCII form, whichever the pattern is written in", () => {
    const unicode = ruleOn("*@bücher.example");
    expect([
      unicode("a@xn--bcher-kva.example"),
      unicode("a@XN--BCHER-KVA.EXAMPLE"),
      unicode("a@bücher.example"),
    ]).toEqual([true, true, true]);
    expect(ruleOn("*bücher.example*")("https://xn--bcher-kva.example/x")).toBe(true);
    const ascii = ruleOn("*@xn--bcher-kva.example");
    expect([ascii("a@bücher.example"), ascii("a@BÜCHER.example"), ascii("a@bucher.example")]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("reads a pattern not in ASCII in its NFKC form too: written in NFD or in full width", () => {
    const nfd = ruleOn("/srv/cafe\u0301/**");
    expect([nfd("/srv/caf\u00e9/x"), nfd("/srv/cafe\u0301/x"), nfd("/srv/cafe/x")]).toEqual([true, true, false]);
    expect(ruleOn("*@ｅｖｉｌ.com")("a@evil.com")).toBe(true);
  });

  it("leaves an allow rule exact", () => {
    expect(ruleOn("/srv/secret", "allow")("/srv/secret/")).toBe(false);
    expect(ruleOn("https://good.example/**", "allow")(" https://good.example/x")).toBe(false);
    expect(ruleOn("*@bücher.example", "allow")("a@xn--bcher-kva.example")).toBe(false);
  });
});
