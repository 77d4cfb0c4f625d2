/**
 * A value of several lines or over 4,096 characters (a file's content, a script, a long command) was not
 * decoded for an ask or deny rule: `*../*` missed `%2e%2e%2f` after a line break or inside a 5,000-character
 * value, and `~/.ssh/*` missed `%7E/.ssh/id_rsa` followed by a line break. Such a value is now read, whole,
 * with its escapes decoded up to three times (in NFKC where that spells more structure, `\` read as `/`),
 * charged to the decision's work budget; a value three decodings leave still decoding has no known reading
 * (deep-encoding.test.ts). An allow rule reads it as before.
 */
import { describe, expect, it } from "vitest";
import { assertPolicy, compilePolicy, matchPolicy } from "../../src/index.js";
import { compileLeafTest } from "../../src/evaluate/arg-match.js";
import { decodedText } from "../../src/evaluate/decoded-text.js";
import { buildPolicy } from "./policy-builder.js";
import { referenceMatch } from "./reference-evaluator.js";
import { unitsOf } from "./work-units.js";

const NOW = new Date("2026-03-02T10:00:00Z");
const PAD = "a".repeat(5000);

function ruleOn(pattern: string, action: "deny" | "allow" = "deny") {
  const text = `version: "1"\ndefault_action: ask\nrules:\n  - { id: r, match: { args: { v: ${JSON.stringify(pattern)} } }, action: ${action} }\n`;
  const compiled = compilePolicy(assertPolicy(text));
  return (v: string): boolean => matchPolicy(compiled, { tool: "t", arguments: { v } }, NOW).ruleId === "r";
}

/** `../` hidden in a long value or after a line break: escaped once to three times, in full width, with `\`. */
const HIDDEN_CLIMB = [
  `${PAD} cat %2e%2e%2f%2e%2e%2fetc/passwd`,
  "notes\n%2e%2e%2f%2e%2e%2fetc/passwd",
  "notes\n%252e%252e%252fetc/passwd",
  "notes\r\n%25252e%25252e%25252fetc/passwd",
  "notes\n..\\..\\etc\\passwd",
  "notes\n..%5c..%5cetc%5cpasswd",
  "notes\n．．／etc/passwd",
  "notes\n%EF%BC%8E%EF%BC%8E%EF%BC%8Fetc/passwd",
  "notes\n%EF%BC%85%32%65%EF%BC%85%32%65/etc/passwd",
];

describe("a value of several lines or over 4,096 characters", () => {
  it("is read by an ask or deny rule with its escapes decoded", () => {
    const denies = ruleOn("*../*");
    for (const v of HIDDEN_CLIMB) expect([v.slice(-40), denies(v)]).toEqual([v.slice(-40), true]);
    expect(ruleOn("*/etc/passwd*")(`${PAD}%2fetc%2fpasswd`)).toBe(true);
    // a pattern anchored at the start meets the decoded text as it would the text written so
    expect(ruleOn("~/.ssh/*")("%7E/.ssh/id_rsa\nnotes")).toBe(true);
    expect(ruleOn("~/.ssh/*")(`%7E/.ssh/id_rsa${PAD}`)).toBe(true);
    // and nothing is read into a text that has none of it
    for (const v of ["notes\n../ is written out", `${PAD} a%20b`, "notes\n%2e%2e without a slash"]) {
      expect([v.slice(-30), ruleOn("*/etc/passwd*")(v)]).toEqual([v.slice(-30), false]);
    }
    expect(ruleOn("*../*")(`notes\n%2e%2e-x`)).toBe(false);
  });

  it("is allowed by no allow rule more than before", () => {
    for (const v of HIDDEN_CLIMB) expect([v.slice(-40), ruleOn("notes*", "allow")(v)]).toEqual([v.slice(-40), false]);
  });

  it("has readings that differ from it only where it holds an escape, `\\` or a form NFKC spells more structure in", () => {
    expect(decodedText(`${PAD}\nplain text`).spellings).toEqual([]);
    expect(decodedText(`${PAD}\nwith ｒｅｐｏｒｔ`).spellings).toEqual([]);
    expect(decodedText("a\n%2e%2e%2f").spellings).toEqual(["a\n../"]);
    expect(decodedText("a\n..\\x").spellings).toEqual(["a\n../x"]);
    expect(decodedText("a\n%25252e").unknown).toBe(false);
    expect(decodedText("a\n%2525252e").unknown).toBe(true);
  });

  it("is read so by the reference evaluator too, under each action", () => {
    const patterns = ["*../*", "*/etc/passwd*", "~/.ssh/*", "/etc/**", "notes*", "**"];
    const values = [...HIDDEN_CLIMB, "%7E/.ssh/id_rsa\nnotes", "notes\n%2525252e", `${PAD} a%20b`];
    const now = new Date(0);
    for (const pattern of patterns) {
      for (const action of ["allow", "ask", "deny"] as const) {
        const policy = buildPolicy([{ id: "r", match: { args: { v: pattern } }, action }], "ask");
        const compiled = compilePolicy(policy);
        for (const v of values) {
          const request = { tool: "t", arguments: { v } };
          const real = matchPolicy(compiled, request, now).ruleId;
          expect([pattern, action, v.slice(-40), real]).toEqual([
            pattern,
            action,
            v.slice(-40),
            referenceMatch(policy, request, now),
          ]);
        }
      }
    }
  });

  it("charges its decodings to the decision's work budget, a megabyte of them within it", () => {
    const line = "const url = 'https://example.test/a%20b?q=%2Fx';\n";
    const escaped = line.repeat(Math.ceil(1_000_000 / line.length));
    const plain = escaped.replaceAll("%", "_");
    const deny = compileLeafTest("*../*", true);
    if (typeof deny === "string") throw new Error(deny);
    // one decoding, and the check that a second changes nothing, at least
    expect(unitsOf(deny, escaped)).toBeGreaterThan(unitsOf(deny, plain) + escaped.length / 4);
    // a policy of deny rules that read it decides it, not refusing it for its work
    const rules = ["*../*", "*rm -rf*", "/etc/**", "*BEGIN*PRIVATE KEY*", "~/.ssh/**"].map((pattern, i) => ({
      id: `r${i}`,
      match: { args: { v: pattern } },
      action: "deny" as const,
    }));
    const compiled = compilePolicy(buildPolicy(rules, "ask"));
    expect(matchPolicy(compiled, { tool: "t", arguments: { v: escaped } }, NOW).ruleId).toBe("default");
    expect(matchPolicy(compiled, { tool: "t", arguments: { v: `${escaped}%2e%2e%2f` } }, NOW).ruleId).toBe("r0");
  });
});
