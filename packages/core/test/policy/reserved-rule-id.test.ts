/**
 * A verdict names the default action as rule `default` (`policy:default` in a decision, the audit and a
 * decision case's expected `rule`). A rule whose id was `default` was named the same: a case written to
 * prove that no rule matched passed when that rule decided, and a reader of the audit could not tell which.
 */
import { describe, expect, it } from "vitest";
import { compilePolicy, evaluatePolicy, tryCompilePolicy } from "../../src/evaluate/index.js";
import { parsePolicy } from "../../src/policy/index.js";
import { buildPolicy } from "../evaluate/policy-builder.js";

describe("the rule id `default`", () => {
  it("is refused in a policy file, with where and why", () => {
    const result = parsePolicy(`version: "1"\ndefault_action: deny\nrules:\n  - id: default\n    action: allow\n`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ code: "invalid_rule_id", line: 4, column: 9 });
    expect(result.issues[0]?.message).toBe(
      "while reading rule `rule-1`: rule id `default` is reserved: verdicts name the default action `default`",
    );
  });

  it("is refused in a policy built in code", () => {
    const result = tryCompilePolicy(buildPolicy([{ id: "default", action: "allow" }], "deny"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.code, i.path])).toEqual([["invalid_rule_id", ["rules", 0, "id"]]]);
  });

  it("leaves ids that only start or end so, and the default action's own name in verdicts", async () => {
    expect(parsePolicy(`version: "1"\nrules:\n  - { id: default-mail, action: allow }\n`).ok).toBe(true);
    expect(parsePolicy(`version: "1"\nrules:\n  - { id: no-default, action: allow }\n`).ok).toBe(true);
    const policy = compilePolicy(buildPolicy([{ id: "reads", match: { tool: "read_*" }, action: "allow" }], "deny"));
    const verdict = await evaluatePolicy(policy, { tool: "send_x", arguments: {} }, { now: new Date(0) });
    expect(verdict).toMatchObject({ route: "refuse", rule: "default" });
  });
});
