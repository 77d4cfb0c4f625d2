// `**` never matches a `..` segment, so a deny rule on `**/etc/passwd` missed `../../etc/passwd` and one on
// `**/.ssh/**` missed `../alice/.ssh/id_rsa`: relative paths that leave their directory, which a tool run
// anywhere may resolve to the path the rule names. An ask or deny rule now reads such a path as any path
// ending in what follows its `..` segments; an allow rule does not.
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest, patternTails } from "../../src/evaluate/arg-match.js";
import { unitsOf } from "./work-units.js";
import { readingCost } from "../../src/evaluate/fast-glob.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleOn(pattern: string, action: "deny" | "allow" = "deny"): (v: string) => boolean {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v) => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

describe("a deny rule's path pattern meets a relative path that leaves its directory", () => {
  it("meets `../../etc/passwd` under `**/etc/passwd` and `/etc/passwd`, in each spelling", () => {
    for (const pattern of ["**/etc/passwd", "/etc/passwd"]) {
      const denies = ruleOn(pattern);
      for (const v of [
        "../../etc/passwd",
        "../../../../../../etc/passwd",
        "..\\..\\etc\\passwd",
        "a/../../etc/passwd",
        "..%2f..%2fetc%2fpasswd",
        "../../ETC/passwd",
      ]) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, true]);
      }
      for (const v of ["../../etc/passwd.bak", "../../etc/shadow", "etc/passwd2"]) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, false]);
      }
    }
  });

  it("meets `../alice/.ssh/id_rsa` under `**/.ssh/**` and a pattern naming a user's home", () => {
    for (const pattern of ["**/.ssh/**", "/home/*/.ssh/**", "/home/alice/.ssh/**"]) {
      const denies = ruleOn(pattern);
      for (const v of ["../alice/.ssh/id_rsa", "../../home/alice/.ssh/id_rsa", "../.ssh/id_rsa"]) {
        expect([pattern, v, denies(v)]).toEqual([pattern, v, true]);
      }
      expect([pattern, denies("../alice/notes.txt")]).toEqual([pattern, false]);
    }
  });

  it("needs a name the pattern holds: `../README.md` is not refused by `/srv/files/**`", () => {
    const files = ruleOn("/srv/files/**");
    expect([files("../README.md"), files("../files/x"), files("../srv/files/x")]).toEqual([false, true, true]);
    expect(patternTails("/srv/files/**")).toEqual(["srv/files/**", "files/**"]);
    expect(patternTails("**/.SSH/**")).toEqual(["**/.ssh/**", ".ssh/**"]);
    // a brace holding `/` or a `\\`: its segments are not its text between `/`
    expect([patternTails("/srv/{a,b/c}/x"), patternTails("/srv/a\\*/x")]).toEqual([[], []]);
  });

  it("leaves an allow rule as it was", () => {
    expect(ruleOn("**/etc/passwd", "allow")("../../etc/passwd")).toBe(false);
    expect(ruleOn("/srv/files/**", "allow")("../files/x")).toBe(false);
  });
});

describe("reading a path that leaves its directory counts against the decision's work budget", () => {
  it("charges what follows the `..` segments, read in lower case and by each end of the pattern", () => {
    const test = compileLeafTest("**/etc/passwd", true);
    if (typeof test === "string") throw new Error(test);
    const tail = "a/".repeat(2000);
    const reading = readingCost(`../${tail}`);
    expect(unitsOf(test, `../${tail}`) - unitsOf(test, `x/${tail}`)).toBeGreaterThanOrEqual(2 * reading);
  });
});
