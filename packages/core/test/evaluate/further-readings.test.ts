/**
 * Ways past a rule the readings of a value missed: an escape decoded twice (`%252e%252e`, a proxy then a
 * tool), a path segment's parameters (`..;`, as Tomcat reads it), full-width `．．／` (`../` in NFKC), a
 * Windows device path (`\\?\C:\…`), a pattern starting with `./` (picomatch drops it from the pattern
 * only), a Windows pattern with `\` and no glob. Ask and deny rules now meet each; allow rules need each
 * reading to agree. And the ends of a pattern compiled for the `..` check are charged to the decision.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest } from "../../src/evaluate/arg-match.js";
import { unitsOf } from "./work-units.js";
import {
  decodings,
  settles,
  structuralCompat,
  withoutDevicePrefix,
  withoutParameters,
} from "../../src/evaluate/normal-form.js";

const NOW = new Date("2026-03-02T10:00:00Z");

/** Whether a rule on `v` (then an ask default) decides the call `{v}`. */
function ruleOn(pattern: string, action: "deny" | "allow"): (v: string) => boolean {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v) => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

function expectAll(test: (v: string) => boolean, values: readonly string[], expected: boolean): void {
  for (const v of values) expect([v, test(v)]).toEqual([v, expected]);
}

describe("an escape decoded more than once", () => {
  it("is read decoded up to three times, each differing", () => {
    expect(decodings("%252e%252e")).toEqual(["%2e%2e", ".."]);
    expect(decodings("%2525252e")).toEqual(["%25252e", "%252e", "%2e"]);
    expect(decodings("/srv/x")).toEqual([]);
    expect(decodings("%zz")).toEqual([]);
  });

  it("meets a deny rule, and an allow rule does not allow what leaves its directory", () => {
    const values = [
      "/srv/files/%252e%252e/%252e%252e/etc/passwd",
      "/srv/files/..%252f..%252fetc/passwd",
      "/srv/files/%25252e%25252e/%25252e%25252e/etc/passwd",
    ];
    expectAll(ruleOn("/etc/passwd", "deny"), values, true);
    expectAll(ruleOn("/srv/files/**", "allow"), values, false);
    // still decoding after three decodings: what a longer chain reads is not known, so never allowed
    expectAll(ruleOn("/srv/files/**", "allow"), ["/srv/files/%2525252e%2525252e/x", "/srv/files/%252525252fx"], false);
    expect(settles("%2525252e")).toBe(false);
    expect([settles("%25252e"), settles("/srv/x"), settles("%252525zz")]).toEqual([true, true, true]);
    // a name that only holds a `%` once decoded stays allowed
    expectAll(ruleOn("/srv/files/**", "allow"), ["/srv/files/100%2525", "/srv/files/a%252fb"], true);
  });
});

describe("a path segment's parameters", () => {
  it("are dropped as Tomcat drops them", () => {
    expect(withoutParameters("/srv/files/..;/..;x=1/etc/passwd")).toBe("/srv/files/../../etc/passwd");
    expect(withoutParameters("C:\\a;b\\x")).toBe("C:\\a\\x");
    expect(withoutParameters("/srv/x")).toBeUndefined();
  });

  it("meet a deny rule, and an allow rule does not allow `..;`", () => {
    const values = [
      "/srv/files/..;/..;/etc/passwd",
      "/srv/files/..;x=1/..;/etc/passwd",
      "/srv/files/..%3b/..%3b/etc/passwd",
    ];
    expectAll(ruleOn("/etc/passwd", "deny"), values, true);
    expectAll(ruleOn("/srv/files/**", "allow"), values, false);
    expectAll(ruleOn("https://api.example/admin/**", "deny"), ["https://api.example/admin;jsessionid=1/users"], true);
    expectAll(ruleOn("/srv/files/**", "allow"), ["/srv/files/a;v=1/b.txt", "/srv/files/a;b"], true);
    expectAll(ruleOn("files/**", "allow"), ["files/..;/..;/etc/passwd"], false);
    expectAll(ruleOn("/srv/public/*.png", "allow"), ["/srv/public/secret.txt;.png"], false);
    // a command with `;` is not a path: an exact allow rule still names it
    expectAll(ruleOn("make; make install", "allow"), ["make; make install"], true);
  });
});

describe("full-width dots and slashes", () => {
  it("are read as NFKC writes them", () => {
    expect(structuralCompat("/srv/．．／x")).toBe("/srv/../x");
    expect(structuralCompat("/srv/ｆｉｌｅｓ/x")).toBeUndefined(); // no more structure: not a reading of an allow rule's
    expect(structuralCompat("/srv/x")).toBeUndefined();
  });

  it("meet a deny rule, and an allow rule does not allow what leaves its directory", () => {
    const values = [
      "/srv/files/．．／．．／etc/passwd",
      "/srv/files/．．/．．/etc/passwd",
      "/srv/files/．．＼．．＼etc＼passwd",
    ];
    expectAll(ruleOn("/etc/passwd", "deny"), values, true);
    expectAll(ruleOn("/srv/files/**", "allow"), values, false);
    expectAll(ruleOn("/srv/files/**", "allow"), ["/srv/files/ｒｅｐｏｒｔ.txt", "/srv/files/café"], true);
  });
});

describe("a Windows device path", () => {
  it("is read as the path it names", () => {
    expect(withoutDevicePrefix("//?/C:/Users/x")).toBe("C:/Users/x");
    expect(withoutDevicePrefix("//./C:/Users/x")).toBe("C:/Users/x");
    expect(withoutDevicePrefix("/??/C:/Users/x")).toBe("C:/Users/x");
    expect(withoutDevicePrefix("//?/UNC/server/share/x")).toBe("//server/share/x");
    expect(withoutDevicePrefix("/srv/x")).toBeUndefined();
  });

  it("meets a deny rule on the path", () => {
    expectAll(
      ruleOn("C:/Users/alice/.ssh/**", "deny"),
      [
        "\\\\?\\C:\\Users\\alice\\.ssh\\id_rsa",
        "\\\\.\\C:\\Users\\alice\\.ssh\\id_rsa",
        "\\??\\c:\\users\\alice\\.ssh\\id_rsa",
      ],
      true,
    );
    expectAll(ruleOn("//fileserver/share/**", "deny"), ["\\\\?\\UNC\\fileserver\\share\\x"], true);
  });
});

describe("a pattern starting with `./`", () => {
  it("allows a value starting with `./` as it allows the value without it", () => {
    const data = ruleOn("./data/**", "allow");
    expectAll(data, ["./data/x", "data/x", "././data/x", "./data/a/b.txt"], true);
    expectAll(data, ["./data/../secrets/x", "./data/..%2f..%2fx", "./other/x"], false);
    // `.//srv/x` is the relative `./srv/x`, never the absolute `/srv/x`
    expectAll(ruleOn(".//srv/**", "allow"), [".//srv/x"], false);
    expectAll(ruleOn("./data/x.txt", "allow"), ["./data/x.txt", "data/x.txt"], true);
  });

  it("meets a deny rule either way", () => {
    expectAll(ruleOn("./secrets/**", "deny"), ["./secrets/x", "secrets/x", "././secrets/x"], true);
    expectAll(ruleOn("./secrets/key", "deny"), ["./secrets/key", "secrets/key", "SECRETS/key"], true);
    expectAll(ruleOn("./secrets/key", "deny"), ["secrets/key2", "other/secrets/key"], false);
  });
});

describe("a Windows pattern with `\\` and no glob", () => {
  it("meets a deny rule's value with `/` or leaving its directory, as the glob written with `/` does", () => {
    const deny = ruleOn("C:\\Users\\alice\\secret.txt", "deny");
    expectAll(
      deny,
      [
        "C:\\Users\\alice\\secret.txt",
        "C:/Users/alice/secret.txt",
        "C:\\Users\\alice\\x\\..\\secret.txt",
        "c:\\users\\alice\\secret.txt",
        "..\\alice\\secret.txt",
      ],
      true,
    );
    expectAll(deny, ["C:\\Users\\alice\\other.txt", "C:/Users/bob/secret.txt"], false);
    // the glob, a literal `\` written `\\`, likewise
    expectAll(ruleOn("C:\\\\Users\\\\alice\\\\**", "deny"), ["C:/Users/alice/x", "C:\\Users\\alice\\x\\..\\y"], true);
  });

  it("allows what it names and nothing that leaves it", () => {
    const allow = ruleOn("C:\\Users\\alice\\secret.txt", "allow");
    expectAll(allow, ["C:\\Users\\alice\\secret.txt"], true);
    expectAll(allow, ["C:\\Users\\alice\\x\\..\\..\\bob\\secret.txt", "C:/Users/alice/other.txt"], false);
  });
});

describe("the work of these readings counts against the decision's budget", () => {
  it("charges the ends a pattern compiles for the `..` check in every decision that reads them", () => {
    const pattern = `/${Array.from({ length: 60 }, (_, i) => `s${i}`).join("/")}/**`;
    const test = compileLeafTest(pattern, true);
    if (typeof test === "string") throw new Error(test);
    const ends = 60 * 61 * 2; // more than the characters of the ends that hold a name, a few thousand
    const leaving = "../x";
    const first = unitsOf(test, leaving);
    expect(first).toBeGreaterThan(ends);
    expect(unitsOf(test, leaving)).toBe(first); // compiled once, charged the same in each decision
    expect(unitsOf(test, "x/y")).toBeLessThan(first - ends);
  });

  it("charges each further decoding and the NFKC form of a value", () => {
    const test = compileLeafTest("/etc/passwd", true);
    if (typeof test === "string") throw new Error(test);
    const plain = `/srv/${"a".repeat(3000)}`;
    const escaped = `/srv/${"%2541".repeat(600)}`;
    const wide = `/srv/${"ａ".repeat(3000)}`;
    expect(unitsOf(test, escaped) - unitsOf(test, plain)).toBeGreaterThan(3 * (escaped.length >> 2));
    expect(unitsOf(test, wide) - unitsOf(test, plain)).toBeGreaterThan(wide.length >> 2);
  });

  it("charges an allow rule's further decodings, and the one more that sees a value settle", () => {
    const test = compileLeafTest("/srv/**", false);
    if (typeof test === "string") throw new Error(test);
    const plain = `/srv/${"a".repeat(3000)}`;
    const escaped = `/srv/${"%2541".repeat(600)}`;
    expect([test(plain), test(escaped)]).toEqual([true, true]);
    expect(unitsOf(test, escaped) - unitsOf(test, plain)).toBeGreaterThan(4 * (escaped.length >> 2));
  });
});
