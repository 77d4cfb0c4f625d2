/**
 * `acp proxy`'s decisions give each caller a share of the policy work, as `acp serve`'s do: the agent a
 * session's token names (`proxy.agent_tokens`), or every session without one together. An agent that has
 * spent its share on requests built to exhaust the work budget is refused unjudged
 * (`caller_budget_exhausted`), and the other agents' calls are judged as ever.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ActionRequest, Decision } from "@acp/core";
import { createPipelineDecide } from "../src/wiring/decide.js";
import { openHomeState } from "../src/wiring/home-state.js";

/** The glob has no literal run a string search answers alone: the body below costs the whole budget. */
const POLICY = `version: "1"
default_action: allow
rules:
  - { id: costly, match: { tool: send_email, args: { body: "*a*a*a*b0" } }, action: deny }
`;
const HOSTILE: ActionRequest = { tool: "send_email", arguments: { body: `b0${"a".repeat(999_998)}` } };
const NORMAL: ActionRequest = { tool: "read_file", arguments: { path: "/srv/notes.txt" } };

function codes(decision: Decision): string[] {
  return decision.reasons.map((r) => r.code);
}

describe("createPipelineDecide: each agent's share of the policy work", () => {
  const home = mkdtempSync(join(tmpdir(), "acp-decide-caller-budget-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, "policy.yml"), POLICY);

  it("refuses an agent unjudged once its requests have spent its share, and judges the others", async () => {
    const state = openHomeState(home);
    try {
      const decide = createPipelineDecide({
        state,
        policyPath: join(home, "policy.yml"),
        policyIsDefault: false,
        graph: {},
        now: () => new Date("2026-03-02T10:00:00Z"),
        log: () => undefined,
      });
      const hostile = { sessionId: "s1", tokenAgent: "mallory" };
      // the default share takes two requests that exhaust the budget (each charged twice the budget)
      for (let i = 0; i < 2; i++) expect(codes(await decide(HOSTILE, hostile))).toEqual(["decision_budget_exceeded"]);
      for (const request of [HOSTILE, NORMAL]) {
        const refused = await decide(request, hostile);
        expect([refused.route, codes(refused)]).toEqual(["refuse", ["caller_budget_exhausted"]]);
        expect(refused.reasons[0]?.message).toMatch(/^agent `mallory` has spent its share .* try again in \d+ s$/);
      }
      // another session of the same agent shares its share; another agent, and a session without one, do not
      expect(codes(await decide(NORMAL, { sessionId: "s2", tokenAgent: "mallory" }))).toEqual([
        "caller_budget_exhausted",
      ]);
      expect((await decide(NORMAL, { sessionId: "s3", tokenAgent: "alice" })).route).toBe("accept");
      expect((await decide(NORMAL, { sessionId: "s4" })).route).toBe("accept");
    } finally {
      state.close();
    }
  });
});
