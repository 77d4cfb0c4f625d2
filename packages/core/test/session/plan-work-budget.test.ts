import { describe, expect, it } from "vitest";
import { compileIntent, compilePlan, fitsPlanStep } from "../../src/index.js";
import { PLAN_WORK_BUDGET } from "../../src/session/evaluate-session.js";
import { executingSession } from "./harness.js";

/**
 * Fitting a call to the approved plan reads its arguments once per step, and a glob step runs the matcher
 * over them: a plan of costly globs (which a hostile agent writes and a person approves without reading
 * them) against a long argument held the proxy for minutes per call. One decision spends at most
 * PLAN_WORK_BUDGET work units on it; past that the call is not taken for a step (refused, or asked with
 * `off_plan: ask`), never accepted.
 */
const INTENT = { goal: "mail for me", allowed_actions: ["mail.*"] };
const COSTLY = { glob: `*${"a*".repeat(500)}zz` };

describe("fitting a call to the plan is bounded", () => {
  it("refuses a call whose arguments are too costly to check against the plan's constraints", async () => {
    const plan = { steps: [{ action: "mail.send_email", constraints: { body: COSTLY } }] };
    const { session } = await executingSession({ intent: INTENT, plan });
    const verdict = session.evaluate({
      server: "mail",
      tool: "send_email",
      arguments: { body: "a".repeat(20_000) },
    });
    expect(verdict.route).toBe("refuse");
    expect(verdict.reasons[0]?.code).toBe("plan_constraint_failed");
    expect(verdict.reasons[0]?.message).toMatch(/too costly to check against the approved plan's constraints/);
    expect(PLAN_WORK_BUDGET).toBe(2 ** 23);
  });

  it("asks instead with `off_plan: ask`", async () => {
    const plan = { steps: [{ action: "mail.send_email", constraints: { body: COSTLY } }] };
    const { session } = await executingSession({ intent: INTENT, plan, settings: { off_plan: "ask" } });
    const verdict = session.evaluate({ server: "mail", tool: "send_email", arguments: { body: "a".repeat(20_000) } });
    expect(verdict.route).toBe("ask");
  });

  it("still fits a call to a step after 998 others, and a long value to an exact constraint", async () => {
    const steps = Array.from({ length: 998 }, (_, i) => ({
      action: "mail.send_email",
      constraints: { to: { one_of: [`user${i}@corp.example`] }, body: { glob: "*" } },
    }));
    const long = "minutes of the meeting ".repeat(40_000);
    steps.push({
      action: "mail.send_email",
      constraints: { to: { one_of: ["ann@corp.example"] }, body: { glob: "*" } },
    });
    const plan = { steps: [...steps, { action: "mail.archive", constraints: { body: { exact: long } } }] };
    const { session } = await executingSession({ intent: INTENT, plan });
    const send = session.evaluate({
      server: "mail",
      tool: "send_email",
      arguments: { to: ["ann@corp.example"], body: "hello" },
    });
    expect([send.route, send.reasons[0]?.code]).toEqual(["accept", "session_ok"]);
    const archive = session.evaluate({ server: "mail", tool: "archive", arguments: { body: long } });
    expect(archive.route).toBe("accept");
  });
});

describe("checking a call against one step (an authority token's) is bounded", () => {
  it("does not fit a call too costly to check against the step", () => {
    const plan = { steps: [{ action: "mail.send_email", constraints: { body: COSTLY } }] };
    const intent = compileIntent(INTENT);
    if (!intent.ok) throw new Error("bad fixture");
    const compiled = compilePlan(plan, intent.value);
    if (!compiled.ok) throw new Error("bad fixture");
    const names = ["mail.send_email"];
    expect(fitsPlanStep(compiled.value, 0, names, { body: "a".repeat(20_000) })).toBe(false);
    expect(fitsPlanStep(compiled.value, 0, names, { body: `a${"a".repeat(600)}zz` })).toBe(true);
  });
});
