/**
 * An `ask` or `deny` rule's pattern with a home after its first character (`*~/.ssh/*`, `cat ~/.ssh/*`, a `**`
 * before `/$HOME/.aws/**`) is read as every home it may mean, as one starting with a home is (`~/.ssh/*`). Before, such
 * a pattern met only a value with the home written the same way: a deny rule `*~/.ssh/*` let
 * `cat /root/.ssh/id_rsa` and `/home/alice/.ssh/id_rsa` through, and the `$HOME/.aws` pattern let `~/.aws/credentials` and
 * `/home/alice/.aws/credentials` through. An `allow` rule stays as narrow as before.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { homesWithinPattern } from "../../src/evaluate/home-references.js";
import { buildPolicy } from "./policy-builder.js";
import { referenceMatch } from "./reference-evaluator.js";

const NOW = new Date("2026-03-02T10:00:00Z");

function ruleOn(pattern: string, action: "deny" | "ask" | "allow" = "deny") {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v: string): boolean => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

const SSH_KEYS = [
  "cat /root/.ssh/id_rsa",
  "cat /home/alice/.ssh/id_rsa",
  "/home/alice/.ssh/id_rsa",
  "/root/.ssh/id_rsa",
  "/Users/bob/.ssh/id_ed25519",
  "C:/Users/bob/.ssh/id_rsa",
  "cat ~/.ssh/id_rsa",
  "cat $HOME/.ssh/id_rsa",
];
const AWS_FILES = [
  "/home/alice/.aws/credentials",
  "/root/.aws/credentials",
  "~/.aws/credentials",
  "$HOME/.aws/credentials",
  "cat ~/.aws/credentials",
  "cat $HOME/.aws/credentials",
];

describe("an ask or deny pattern with a home after its first character", () => {
  it("meets every home it may mean", () => {
    for (const action of ["deny", "ask"] as const) {
      for (const pattern of ["*~/.ssh/*", "*$HOME/.ssh/*", '*"$HOME"/.ssh/*', "*%USERPROFILE%/.ssh/*"]) {
        const meets = ruleOn(pattern, action);
        for (const v of SSH_KEYS) expect([pattern, v, meets(v)]).toEqual([pattern, v, true]);
      }
      for (const pattern of ["**/$HOME/.aws/**", "**/~/.aws/**", "*/${HOME}/.aws/*"]) {
        const meets = ruleOn(pattern, action);
        for (const v of AWS_FILES) expect([pattern, v, meets(v)]).toEqual([pattern, v, true]);
      }
    }
    // a command written with a home: the same command on any home
    const cat = ruleOn("cat ~/.ssh/*");
    expect(["cat /root/.ssh/id_rsa", "cat /home/alice/.ssh/id_rsa", "cat $HOME/.ssh/k"].map(cat)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it("names one user's homes for `~name`, and root's only for `~`, `~root` and a user's glob meeting root", () => {
    const alice = ruleOn("*~alice/.ssh/*");
    expect(["/home/alice/.ssh/k", "cat /Users/alice/.ssh/k", "/home/bob/.ssh/k", "/root/.ssh/k"].map(alice)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(ruleOn("*~root/.ssh/*")("cat /root/.ssh/k")).toBe(true);
    expect(ruleOn("*~r*/.ssh/*")("cat /var/root/.ssh/k")).toBe(true);
  });

  it("leaves other text alone: no home, a `~` inside a word, another variable", () => {
    for (const pattern of ["*backup~/x/*", "*$HOMEX/.ssh/*", "*x$HOME/.ssh/*"]) {
      expect([pattern, ruleOn(pattern)("/home/alice/x/y")]).toEqual([pattern, false]);
      expect([pattern, ruleOn(pattern)("/home/alice/.ssh/k")]).toEqual([pattern, false]);
    }
    expect(homesWithinPattern("*/.ssh/*", ["/home"], ["/root"], () => false)).toEqual([]);
    expect(homesWithinPattern("~/.ssh/*", ["/home"], ["/root"], () => false)).toEqual([]);
    expect(homesWithinPattern("**/$home/.aws/**", ["/home"], ["/root"], () => false)).toEqual([
      "**/home/*/.aws/**",
      "**/root/.aws/**",
    ]);
  });

  it("leaves an allow rule as narrow as before", () => {
    for (const pattern of ["*~/.ssh/*", "**/$HOME/.aws/**", "cat ~/.ssh/*"]) {
      const allows = ruleOn(pattern, "allow");
      for (const v of ["cat /root/.ssh/id_rsa", "/home/alice/.ssh/id_rsa", "/home/alice/.aws/credentials"]) {
        expect([pattern, v, allows(v)]).toEqual([pattern, v, false]);
      }
    }
  });

  it("is read so by the reference evaluator too", () => {
    const patterns = ["*~/.ssh/*", "**/$HOME/.aws/**", "cat ~/.ssh/*", "*~alice/.ssh/*", "*~r*/.ssh/*", "*backup~/x/*"];
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of [...SSH_KEYS, ...AWS_FILES, "/home/alice/x/y", "cat ~bob/.ssh/k"]) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, NOW).ruleId;
          expect([pattern, action, v, real]).toEqual([pattern, action, v, referenceMatch(policy, request, NOW)]);
        }
      }
    }
  });
});
