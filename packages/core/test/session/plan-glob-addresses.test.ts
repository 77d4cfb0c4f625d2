import { describe, expect, it } from "vitest";
import { compileIntent, compilePlan, fitPlan } from "../../src/index.js";

const INTENT = compileIntent({ goal: "mail my team", allowed_actions: ["email.send"] });
const PLAN = { steps: [{ action: "email.send", constraints: { to: { glob: "*@Corp.example" } } }] };

function fits(to: unknown): boolean {
  if (!INTENT.ok) throw new Error("intent");
  const plan = compilePlan(PLAN, INTENT.value);
  if (!plan.ok) throw new Error("plan");
  return fitPlan(plan.value, ["email.send"], { to }).ok;
}

describe("a glob constraint holds for every address written in the value", () => {
  it("refuses a second recipient hidden before the allowed domain", () => {
    expect(fits("mark@attacker.example, team@Corp.example")).toBe(false);
    expect(fits("mark@attacker.example;team@Corp.example")).toBe(false);
  });

  it("still fits one or several addresses of the allowed domain, in any case", () => {
    expect(fits("team@Corp.example")).toBe(true);
    expect(fits("Team <team@corp.example>, bob@Corp.example")).toBe(true);
    expect(fits(["team@Corp.example", "bob@Corp.example"])).toBe(true);
    expect(fits("a@Corp.example, b@Corp.example")).toBe(true);
  });
});
