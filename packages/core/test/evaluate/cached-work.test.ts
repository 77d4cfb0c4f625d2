/**
 * The same request, policy and clock give the same decision (DESIGN: deterministic), and a decision's work
 * budget is counted the same way every time. The rule index caches the rules a (category, server, tool)
 * triple can meet; the work of finding them was drawn from the budget only on a cache miss, so a request
 * was refused as too costly to judge on a cold cache and accepted once another request with the same tool
 * had warmed it, and `policyWorkOf` told `acp serve` a different cost for the same decision.
 */
import { describe, expect, it } from "vitest";
import { compilePolicy, evaluatePolicy, policyWorkOf, type PolicyVerdict } from "../../src/evaluate/index.js";
import type { ActionRequest } from "../../src/request/index.js";
import { buildPolicy, type RuleSpec } from "./policy-builder.js";

const now = new Date("2026-03-02T10:00:00Z");
/** A 256-character name (the longest the pipeline takes) that no rule below matches. */
const tool = "a".repeat(256);

/** `count` deny rules whose tool globs the linear-time matcher runs over the whole name, then `tail`. */
function policyOf(count: number, tail: readonly RuleSpec[]) {
  const rules: RuleSpec[] = [];
  for (let i = 0; i < count; i++) {
    rules.push({ id: `t${i}`, match: { tool: `*[ab]*[ab]*[ab]*${"?".repeat(i % 40)}[c]*` }, action: "deny" });
  }
  return compilePolicy(buildPolicy([...rules, ...tail], "allow"));
}

function unitsOf(verdict: PolicyVerdict): number | undefined {
  return policyWorkOf({ verdicts: [verdict] })?.units;
}

function codes(verdict: PolicyVerdict): string[] {
  return verdict.reasons.map((r) => r.code);
}

describe("the work of a decision, cached candidates or not", () => {
  it("counts the same units for the same request every time", async () => {
    const policy = policyOf(10, []);
    const request: ActionRequest = { tool, arguments: {} };
    const first = await evaluatePolicy(policy, request, { now });
    const second = await evaluatePolicy(policy, request, { now });
    expect(second.route).toBe(first.route);
    expect(unitsOf(first)).toBeGreaterThan(10_000); // the tool globs were run over the name
    expect(unitsOf(second)).toBe(unitsOf(first));
  });

  it("refuses a request too costly to judge whether or not a cheaper one with its tool came first", async () => {
    const tail: RuleSpec[] = [{ id: "body", match: { args: { body: "*[x]*[y]*[z]*" } }, action: "deny" }];
    // the tool globs cost about half the budget, and so does reading `body`: together more than all of it
    const heavy: ActionRequest = { tool, arguments: { body: "x".repeat(360_000) } };
    const light: ActionRequest = { tool, arguments: {} };

    const cold = await evaluatePolicy(policyOf(300, tail), heavy, { now });
    expect(cold.route).toBe("refuse");
    expect(codes(cold)).toEqual(["decision_budget_exceeded"]);

    const warmed = policyOf(300, tail);
    expect((await evaluatePolicy(warmed, light, { now })).route).toBe("accept");
    const warm = await evaluatePolicy(warmed, heavy, { now });
    expect(warm.route).toBe("refuse");
    expect(codes(warm)).toEqual(["decision_budget_exceeded"]);
  });
});
