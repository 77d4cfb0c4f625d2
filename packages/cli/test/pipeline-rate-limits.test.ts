/** The pipelines `acp serve` builds: the live one spends rate limits; the simulator's and the edit re-check's do not. */
import { describe, expect, it } from "vitest";
import { parsePolicy } from "@acp/core";
import { buildPipeline, buildPipelineWith, type DecisionInputs } from "../src/decision/load.js";

const POLICY = `version: "1"
default_action: deny
rules:
  - id: mail
    match: { tool: send_email }
    action: allow
    rate_limit: "2/minute"
`;

function inputs(): DecisionInputs {
  const parsed = parsePolicy(POLICY, { file: "policy.yml" });
  if (!parsed.ok) throw new Error("policy");
  return { policy: parsed.value, policyFile: "policy.yml" };
}

describe("rate limits in the pipelines acp serve builds", () => {
  const call = { tool: "send_email", arguments: { to: "a@example.com" } };
  const now = new Date("2026-01-15T12:00:00Z");

  it("the live pipeline spends them: the third call in a minute is refused", async () => {
    const live = buildPipeline(inputs());
    const routes = [];
    for (let i = 0; i < 3; i++) routes.push((await live.decide(call, now)).route);
    expect(routes).toEqual(["accept", "accept", "refuse"]);
  });

  it("the simulator's never spends or checks them: any number of simulations give the rule's route", async () => {
    const simulation = buildPipelineWith(inputs(), { spendRateLimits: false });
    const routes = new Set<string>();
    for (let i = 0; i < 25; i++) routes.add((await simulation.decide(call, now)).route);
    expect([...routes]).toEqual(["accept"]);
  });
});
