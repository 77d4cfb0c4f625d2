import { describe, expect, it } from "vitest";
import { findTooManyNodes } from "../../src/policy/node-count.js";
import {
  formatIssue,
  MAX_ALIAS_COUNT,
  MAX_ALIAS_EXPANSION,
  MAX_ARG_PATTERN_WEIGHT,
  HOME_ARG_WEIGHT,
  MAX_POLICY_BYTES,
  MAX_POLICY_DEPTH,
  MAX_POLICY_VALUES,
  MAX_POLICY_RULES,
  parsePolicy,
  type Issue,
} from "@acp/core";

function issuesOf(text: string): readonly Issue[] {
  const result = parsePolicy(text);
  if (result.ok) throw new Error("expected issues, the policy is valid");
  return result.issues;
}

function codesOf(text: string): string[] {
  return issuesOf(text).map((issue) => issue.code);
}

describe("parsePolicy on absurd input: a clear issue, never a crash or a throw", () => {
  it("refuses a 50 MB policy before parsing it", () => {
    const issues = issuesOf(`version: "1"\n${"# padding\n".repeat(5 * 1024 * 1024)}`);
    expect(issues.map((i) => formatIssue(i, "policy.yml"))).toEqual([
      `policy.yml:1:1: policy is larger than ${MAX_POLICY_BYTES} bytes (10 MiB) (split it or remove unused rules)`,
    ]);
    expect(issues[0]?.code).toBe("policy_too_large");
  });

  it("counts UTF-8 bytes, not characters, against the size limit", () => {
    const text = `version: "1"\n# ${"é".repeat(MAX_POLICY_BYTES / 2 + 10)}\n`;
    expect(text.length).toBeLessThan(MAX_POLICY_BYTES);
    expect(codesOf(text)).toEqual(["policy_too_large"]);
  });

  it("refuses millions of values before building a syntax tree (10 MiB of `[1,1,…]` ran out of memory)", () => {
    const issues = issuesOf(`version: "1"\nx: [${"1,".repeat(5_000_000)}1]\n`);
    expect(issues.map((i) => [i.code, i.line])).toEqual([["too_many_values", 2]]);
    expect(issues[0]?.message).toBe(
      `the policy holds more than ${MAX_POLICY_VALUES} yaml values (keys, values, lists and mappings)`,
    );
    expect(codesOf(`version: "1"\nrules:\n${"  - {}\n".repeat(MAX_POLICY_VALUES / 2 + 1)}`)).toEqual([
      "too_many_values",
    ]);
  });

  it("places a nesting bomb the character scan finds on its own line (it was one line early)", () => {
    const issues = issuesOf(`version: "1"\nrules: x\nrules: ${"[".repeat(2_000)}`);
    expect(issues.map((i) => [i.code, i.line])).toEqual([["policy_too_deep", 3]]);
  });

  it("counts each scalar, key, list, mapping and list item as one value, at the place the limit is passed", () => {
    const text = `version: "1"\nx: [1, 'a', {b: |\n  c\n}]\n- y\n`;
    // version, "1", x, [, 1, 'a', {, b, the block scalar, -, y: 11
    expect(findTooManyNodes(text, 11)).toBeUndefined();
    expect(findTooManyNodes(text, 10)).toBe(text.indexOf("y"));
    expect(findTooManyNodes(text, 3)).toBe(text.indexOf("["));
  });

  it("refuses 10,000-deep flow nesting", () => {
    expect(codesOf(`version: "1"\nrules: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`)).toEqual(["policy_too_deep"]);
    expect(codesOf(`version: "1"\nrules: ${"{a: ".repeat(10_000)}`)).toEqual(["policy_too_deep"]);
    expect(codesOf("[".repeat(1_000_000))).toEqual(["policy_too_deep"]);
  });

  it("refuses 10,000-deep compact block nesting", () => {
    expect(codesOf(`${"- ".repeat(10_000)}x\n`)).toEqual(["policy_too_deep"]);
  });

  it("refuses indentation nesting past the depth limit with its place", () => {
    let text = 'version: "1"\nx:\n';
    for (let depth = 1; depth <= MAX_POLICY_DEPTH + 5; depth++) text += `${" ".repeat(depth)}k:\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => i.code)).toEqual(["policy_too_deep"]);
    expect(issues[0]?.message).toBe(`nesting deeper than ${MAX_POLICY_DEPTH} levels`);
    expect(issues[0]?.line).toBeGreaterThan(MAX_POLICY_DEPTH);
  });

  it("reads nesting within the depth limit as an ordinary problem", () => {
    const text = `version: "1"\nx: ${"[".repeat(MAX_POLICY_DEPTH - 2)}${"]".repeat(MAX_POLICY_DEPTH - 2)}\n`;
    expect(codesOf(text)).toEqual(["unknown_key"]);
  });

  it("refuses a billion-laughs alias bomb before reading it", () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${prev}`).join(",")}]`);
    }
    const text = `version: "1"\n${levels.join("\n")}\nrules: *j\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => i.code)).toEqual(["alias_expansion_too_large"]);
    expect(issues[0]?.message).toBe(`aliases stand for more than ${MAX_ALIAS_EXPANSION} values in all`);
  });

  it("refuses one anchored rule read again at each of many aliases (an alias bomb through the rule list)", () => {
    // 20,000 args read at each of 2,000 `*r`: 40 million values, which ran the process out of memory
    const args = Array.from({ length: 20_000 }, (_, i) => `k${i}: v`).join(", ");
    const text = `version: "1"\nrules:\n  - &r { action: deny, match: { args: { ${args} } } }\n${"  - *r\n".repeat(2_000)}`;
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.code, i.line])).toEqual([["alias_expansion_too_large", 4]]);
  });

  it("refuses aliases of a shared args mapping past the limit, and reads them within it", () => {
    const args = Array.from({ length: 99 }, (_, i) => `k${i}: v`).join(", ");
    const rules = (n: number): string =>
      `version: "1"\nx: &a { ${args} }\nrules:\n${"  - { action: deny, match: { args: *a } }\n".repeat(n)}`;
    // the mapping is 199 values (itself, 99 keys and 99 values): 50 aliases are 9,950, 51 are past 10,000
    expect(parsePolicy(rules(50)).ok === false && codesOf(rules(50))).toEqual(["unknown_key"]);
    expect(codesOf(rules(51))).toEqual(["alias_expansion_too_large"]);
  });

  it("refuses an alias inside the node its own anchor names", () => {
    const text = `version: "1"\nrules:\n  - &r { action: deny, match: *r }\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.code, i.line, i.column])).toEqual([["recursive_alias", 3, 31]]);
    expect(issues[0]?.message).toBe("alias `*r` is inside the node its own anchor `&r` names");
    expect(codesOf(`version: "1"\nrules: &l [ *l ]\n`)).toEqual(["recursive_alias"]);
  });

  it("reads a policy sharing a match block through aliases as if written out", () => {
    const text = `version: "1"\nrules:\n  - { id: a, action: deny, match: &m { tool: send_*, args: { to: "*@evil.example" } } }\n  - { id: b, action: ask, match: *m }\n`;
    const result = parsePolicy(text);
    expect(result.ok && result.value.rules.map((r) => [r.id, r.match])).toEqual([
      ["a", { tool: "send_*", args: { to: "*@evil.example" } }],
      ["b", { tool: "send_*", args: { to: "*@evil.example" } }],
    ]);
  });

  it("refuses more aliases than the limit", () => {
    const text = `version: "1"\nclassify:\n  - &e { tool: x, category: read }\n${"  - *e\n".repeat(MAX_ALIAS_COUNT + 1)}`;
    const issues = issuesOf(text);
    expect(issues.map((i) => i.code)).toEqual(["too_many_aliases"]);
    expect(issues[0]?.line).toBe(MAX_ALIAS_COUNT + 4);
  });

  it("refuses more rules than the limit", () => {
    const text = `version: "1"\nrules: [${"{},".repeat(MAX_POLICY_RULES)}{}]\n`;
    const issues = issuesOf(text);
    expect(issues.map((i) => [i.code, i.line, i.column])).toEqual([["too_many_rules", 2, 8]]);
    expect(issues[0]?.message).toBe(
      `\`rules\` holds ${MAX_POLICY_RULES + 1} entries, more than the limit of ${MAX_POLICY_RULES}`,
    );
  });

  it("refuses rules whose args values weigh more than the limit, a home pattern weighing more", () => {
    // 100,000 such rules (7 MB) ran the process out of memory when the policy was compiled
    const homes = (n: number): string =>
      `version: "1"\nrules:\n${Array.from({ length: n }, (_, i) => `  - { action: deny, match: { args: { path: "~/x${i}/**" } } }\n`).join("")}`;
    const atLimit = MAX_ARG_PATTERN_WEIGHT / HOME_ARG_WEIGHT;
    expect(parsePolicy(homes(atLimit)).ok).toBe(true);
    const issues = issuesOf(homes(atLimit + 1));
    expect(issues.map((i) => [i.code, i.line, i.column])).toEqual([["too_many_arg_patterns", 3, 3]]);
    expect(issues[0]?.message).toBe(
      `the rules' ${atLimit + 1} \`args\` values weigh ${MAX_ARG_PATTERN_WEIGHT + HOME_ARG_WEIGHT}, more than the limit of ${MAX_ARG_PATTERN_WEIGHT} (a value with \`~\`, \`$\` or \`%\` weighs ${HOME_ARG_WEIGHT}, another 1)`,
    );
    const plain = (n: number): string =>
      `version: "1"\nrules:\n  - action: deny\n    match:\n      args: { ${Array.from({ length: n }, (_, i) => `k${i}: "/srv/${i}/**"`).join(", ")} }\n`;
    expect(parsePolicy(plain(MAX_ARG_PATTERN_WEIGHT)).ok).toBe(true);
    expect(codesOf(plain(MAX_ARG_PATTERN_WEIGHT + 1))).toEqual(["too_many_arg_patterns"]);
  });

  it("returns an issue for input that is not a string at all", () => {
    const result = parsePolicy(42 as unknown as string);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]?.code).toBe("wrong_type");
  });

  it("survives control characters, lone surrogates and NUL bytes", () => {
    for (const text of ["\u0000", "version: \ud800\n", "\u001b[31mversion: 1", "version: '1'\n\t- x"]) {
      const result = parsePolicy(text);
      expect(result.ok).toBe(false);
    }
  });
});
