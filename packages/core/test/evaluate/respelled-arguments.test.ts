/**
 * An ask or deny rule's argument glob meets the spellings a server reads as the value it names: a URL with
 * white space or controls at its ends (the WHATWG parser strips them), a path with escaped unreserved
 * characters, a `file:` URL, a trailing `/`, and a domain written in Unicode or in IDNA's ASCII form. Each
 * of these slipped past a deny rule before, and so did a home written with `~`, a URL without its scheme and a
 * path with `\` for a separator. An allow rule stays exact.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest } from "../../src/evaluate/arg-match.js";
import { unitsOf } from "./work-units.js";
import { readingCost } from "../../src/evaluate/fast-glob.js";

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

  it("meets a home written with `~`: the home of `~` may be any user's, that of `~name` is name's", () => {
    const alice = ruleOn("/home/alice/.ssh/**");
    for (const v of ["~/.ssh/id_rsa", "~alice/.ssh/id_rsa", "~//.ssh/./id_rsa", "~\\.ssh\\id_rsa", " ~/.ssh/id_rsa"]) {
      expect([v, alice(v)]).toEqual([v, true]);
    }
    // `~bob` is bob's home, not alice's; what is not under `.ssh` is not met
    expect([
      alice("~bob/.ssh/id_rsa"),
      alice("~/notes.txt"),
      alice("~/x/.ssh/id_rsa"),
      alice("/home/bob/.ssh/k"),
    ]).toEqual([false, false, false, false]);
    expect([ruleOn("/home/bob/.ssh/**")("~/../bob/.ssh/id_rsa"), ruleOn("/home/alice")("~")]).toEqual([true, true]);
    expect([ruleOn("/Users/*/.ssh/**")("~/.ssh/id_rsa"), ruleOn("/root/.ssh/**")("~/.ssh/id_rsa")]).toEqual([
      true,
      true,
    ]);
    expect(ruleOn("/root/.ssh/**")("~alice/.ssh/id_rsa")).toBe(false);
    // a pattern written with `~` meets every home it may mean
    const tilde = ruleOn("~/.ssh/**");
    expect([
      tilde("/home/alice/.ssh/id_rsa"),
      tilde("/Users/bob/.ssh/k"),
      tilde("/root/.ssh/k"),
      tilde("/srv/.ssh/k"),
    ]).toEqual([true, true, true, false]);
    expect([ruleOn("~alice/.ssh/**")("/home/alice/.ssh/k"), ruleOn("~alice/.ssh/**")("/home/bob/.ssh/k")]).toEqual([
      true,
      false,
    ]);
  });

  it("meets a URL written without its scheme, as a client completes it", () => {
    const evil = ruleOn("https://evil.example/**");
    for (const v of ["evil.example/x", "//evil.example/x", "EVIL.example/x", "evil.example", "u@evil.example:443/x"]) {
      expect([v, evil(v)]).toEqual([v, true]);
    }
    expect([evil("notevil.example/x"), evil("/evil.example/x"), evil("docs/evil.example")]).toEqual([
      false,
      false,
      false,
    ]);
    expect(ruleOn("http://localhost:3000/admin/**")("localhost:3000/admin/x")).toBe(true);
    // and a pattern written without a scheme, naming a host, meets the URLs on it
    const host = ruleOn("evil.example");
    for (const v of ["https://evil.example/admin", "HTTP://EVIL.example", "//evil.example/x", "evil.example/x"]) {
      expect([v, host(v)]).toEqual([v, true]);
    }
    expect([host("https://evil.example.other/x"), host("https://notevil.example/"), host("/evil.example")]).toEqual([
      false,
      false,
      false,
    ]);
    const paths = ruleOn("evil.example/admin/**");
    expect([
      paths("https://evil.example/admin/x"),
      paths("http://evil.example:80/admin/"),
      paths("https://evil.example/x"),
    ]).toEqual([true, true, false]);
    expect(ruleOn("https://evil.example")("//evil.example")).toBe(true);
  });

  it("meets a path with `\\` for a separator, as a tool on Windows or a naive join reads it", () => {
    const passwd = ruleOn("/etc/passwd");
    expect([
      passwd("/srv/files/..\\..\\etc\\passwd"),
      passwd("\\etc\\passwd"),
      passwd("/srv/..%5c..%5cetc/passwd"),
    ]).toEqual([true, true, true]);
    expect(ruleOn("../../etc/passwd")("..\\..\\etc\\passwd")).toBe(true);
    const ssh = ruleOn("C:/Users/alice/.ssh/**");
    expect([
      ssh("C:\\Users\\alice\\.ssh\\id_rsa"),
      ssh("c:\\users\\alice\\.SSH\\id_rsa"),
      ssh("~\\.ssh\\id_rsa"),
    ]).toEqual([true, true, true]);
    expect(passwd("/etc\\passwd.bak")).toBe(false);
    // and the value as written, white space at its ends kept, as well as trimmed (`\t/srv/x` is a relative
    // path whose first segment is a tab, to a tool that does not trim)
    expect(ruleOn("?*/**")("\t\\srv\\x")).toBe(true);
    expect(ruleOn("? /**")(" \\srv\\x")).toBe(false);
    expect(ruleOn(" /**")(" \\srv\\x")).toBe(true);
  });

  it("meets each address written in a value in each of its spellings, as a value of its own", () => {
    expect(ruleOn("*@ｃｏｒｐ.com")("Ann <ann@corp.com>")).toBe(true);
    expect(ruleOn("*@xn--bcher-kva.example")("Boss <a@bücher.example>")).toBe(true);
    expect(ruleOn("*@bücher.example")("me@corp.com, a@xn--bcher-kva.example")).toBe(true);
    expect(ruleOn("*@xn--bcher-kva.example")("Boss <a@bucher.example>")).toBe(false);
  });

  it("leaves an allow rule exact", () => {
    expect(ruleOn("/home/alice/.ssh/**", "allow")("~/.ssh/id_rsa")).toBe(false);
    expect(ruleOn("~/.ssh/**", "allow")("/home/alice/.ssh/id_rsa")).toBe(false);
    expect(ruleOn("https://good.example/**", "allow")("good.example/x")).toBe(false);
    expect(ruleOn("good.example/**", "allow")("https://good.example/x")).toBe(false);
    expect(ruleOn("/etc/passwd", "allow")("\\etc\\passwd")).toBe(false);
    expect(ruleOn("/srv/secret", "allow")("/srv/secret/")).toBe(false);
    expect(ruleOn("https://good.example/**", "allow")(" https://good.example/x")).toBe(false);
    expect(ruleOn("*@bücher.example", "allow")("a@xn--bcher-kva.example")).toBe(false);
  });
});

describe("the spellings a deny rule reads count against the decision's work budget", () => {
  it("charges the eight homes of a `~` path, the two URLs of a host and the `/` form of a `\\` path", () => {
    const test = compileLeafTest("/etc/passwd", true);
    if (typeof test === "string") throw new Error(test);
    const tail = "a".repeat(4000);
    const plain = unitsOf(test, `/x/${tail}`);
    // each spelling is made (written, normalised) and read again in lower case: two readings at least
    const reading = readingCost(`/x/${tail}`);
    expect(unitsOf(test, `~/${tail}`) - plain).toBeGreaterThanOrEqual(16 * reading);
    expect(unitsOf(test, `x.example/${tail}`) - unitsOf(test, `x_example/${tail}`)).toBeGreaterThanOrEqual(4 * reading);
    expect(unitsOf(test, `\\x\\${tail}`) - plain).toBeGreaterThanOrEqual(2 * reading);
  });
});
