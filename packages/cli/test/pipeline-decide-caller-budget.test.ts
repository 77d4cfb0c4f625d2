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
import { DECISION_WORK_BUDGET, type ActionRequest, type Decision } from "@acp/core";
import type { CliContext } from "../src/context.js";
import { readConfigFile } from "../src/wiring/config-file.js";
import { configInUse } from "../src/wiring/config-in-use.js";
import { createPipelineDecide } from "../src/wiring/decide.js";
import { openHomeState } from "../src/wiring/home-state.js";
import { createProxyWiring } from "../src/wiring/proxy-wiring.js";
import { envFor, fixtureHome, tempRoot } from "./home-fixture.js";

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

describe("acp proxy's wiring: proxy.caller_budget sets the share", () => {
  const root = tempRoot("proxy-caller-budget");
  afterAll(root.cleanup);

  it("a share of one decision budget: one request exhausting it, and the agent is refused", async () => {
    const { home } = fixtureHome(root.dir);
    writeFileSync(join(home, "policy.yml"), POLICY);
    const file = join(home, "config.yml");
    writeFileSync(
      file,
      `version: "1"\nproxy:\n  caller_budget:\n    units: ${DECISION_WORK_BUDGET}\n    seconds: 60\n`,
    );
    const ctx: CliContext = {
      io: {
        stdout: { write: () => true },
        stderr: { write: () => true },
        readStdin: () => Promise.resolve(""),
        stdinIsTTY: false,
        env: envFor(home),
        cwd: root.dir,
        now: () => new Date("2026-03-02T10:00:00Z"),
      },
      exitCode: 0,
    };
    const wiring = createProxyWiring(ctx);
    try {
      const config = configInUse(readConfigFile(file, true));
      const decide = wiring.createDecide({ policyPath: join(home, "policy.yml"), home, config });
      const mallory = { sessionId: "s1", tokenAgent: "mallory" };
      expect(codes(await decide(HOSTILE, mallory))).toEqual(["decision_budget_exceeded"]);
      const refused = await decide(NORMAL, mallory);
      expect(codes(refused)).toEqual(["caller_budget_exhausted"]);
      expect(refused.reasons[0]?.message).toMatch(/\(8,388,608 work units per 60 s;.* try again in 61 s$/);
    } finally {
      await wiring.close();
    }
  });
});
