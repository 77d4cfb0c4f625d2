import { describe, expect, it } from "vitest";
import { canonicalSha256Ref, compileIntent, compilePlan, createSession, fitPlan } from "../../src/index.js";
import { baseOptions, DAY_INTENT, executingSession, recordingHandler } from "./harness.js";

const intent = (() => {
  const r = compileIntent(DAY_INTENT);
  if (!r.ok) throw new Error("bad fixture");
  return r.value;
})();

const PLAN = {
  steps: [
    { action: "calendar.read_events", constraints: { day: { glob: "2026-03-*" } } },
    { action: "email.send", constraints: { to: { from_trusted: "recipients" } } },
  ],
};

const READ = { server: "calendar", tool: "read_events", arguments: { day: "2026-03-02" } };
const SEND_TEAM = { server: "email", tool: "send", arguments: { to: "team@example.com", body: "agenda" } };
const SEARCH = { server: "email", tool: "search", arguments: { query: "invoice" } };

describe("plan validation against the intent", () => {
  const BAD: [string, unknown, string][] = [
    ["not an object", [], "plan_schema_violation"],
    ["no steps", { steps: [] }, "plan_schema_violation"],
    ["unknown step field", { steps: [{ action: "email.send", tool: "x" }] }, "plan_schema_violation"],
    [
      "two constraint kinds",
      { steps: [{ action: "email.send", constraints: { to: { exact: 1, glob: "*" } } }] },
      "plan_schema_violation",
    ],
    ["step outside allowed", { steps: [{ action: "slack.post" }] }, "plan_step_not_allowed"],
    ["forbidden step", { steps: [{ action: "bank.transfer" }] }, "plan_step_forbidden"],
    ["glob step", { steps: [{ action: "calendar.*" }] }, "plan_step_pattern"],
    [
      "unknown trusted list",
      { steps: [{ action: "email.send", constraints: { to: { from_trusted: "accounts" } } }] },
      "unknown_trusted_list",
    ],
    [
      "bad constraint glob",
      { steps: [{ action: "email.send", constraints: { to: { glob: "[x" } } }] },
      "invalid_constraint",
    ],
    ["other intent version", { intent_version: 2, steps: [{ action: "email.send" }] }, "plan_intent_mismatch"],
  ];
  for (const [name, value, code] of BAD) {
    it(`refuses a malformed plan (${name}) with \`${code}\``, () => {
      const result = compilePlan(value, intent);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.issues.map((i) => i.code)).toContain(code);
    });
  }

  it("explains a constraint that is none of the four kinds", () => {
    const result = compilePlan({ steps: [{ action: "email.send", constraints: { to: { regex: ".*" } } }] }, intent);
    expect(!result.ok && result.issues.map((i) => i.message)).toEqual([
      "plan at `steps.0.constraints.to`: must be exactly one of `{exact}`, `{glob}`, `{one_of}` or `{from_trusted}`",
    ]);
  });

  it("hashes the plan as sha256 of its canonical JSON, bound to the intent version", () => {
    const result = compilePlan(PLAN, intent);
    expect(result.ok && result.value.hash).toBe(canonicalSha256Ref({ intent_version: 1, steps: PLAN.steps }));
  });

  it("matches constraints: exact, glob, one_of, from_trusted, element by element for arrays", () => {
    const plan = compilePlan(
      {
        steps: [
          { action: "email.send", constraints: { to: { from_trusted: "recipients" }, priority: { one_of: [1, 2] } } },
          { action: "calendar.read_events", constraints: { day: { exact: "2026-03-02" } } },
        ],
      },
      intent,
    );
    if (!plan.ok) throw new Error("fixture");
    const names = ["email.send"];
    expect(fitPlan(plan.value, names, { to: "TEAM@example.com", priority: 2 })).toEqual({ ok: true, step: 0 });
    expect(fitPlan(plan.value, names, { to: ["team@example.com"], priority: 1 })).toEqual({ ok: true, step: 0 });
    expect(fitPlan(plan.value, names, { to: ["team@example.com", "x@evil.example"], priority: 1 })).toMatchObject({
      ok: false,
      reason: "plan_constraint_failed",
      argument: "to",
    });
    expect(fitPlan(plan.value, names, { to: "team@example.com" })).toMatchObject({ ok: false, argument: "priority" });
    expect(fitPlan(plan.value, ["calendar.read_events"], { day: "2026-03-02" })).toEqual({ ok: true, step: 1 });
    expect(fitPlan(plan.value, ["calendar.read_events"], { day: "2026-03-03" })).toMatchObject({ ok: false });
    expect(fitPlan(plan.value, ["email.search"], {})).toEqual({ ok: false, reason: "not_in_plan" });
  });
});

describe("gap: plan mutation is detected — the plan is frozen, hashed and changes need confirmation", () => {
  it("keeps a private frozen copy: neither the caller's object nor the returned plan can change it", async () => {
    const input = structuredClone(PLAN);
    const { session } = await executingSession({ plan: input });
    const hash = session.planHash;
    input.steps.push({ action: "email.search", constraints: { to: { from_trusted: "recipients" } } });
    (input.steps[1] as { constraints: Record<string, unknown> }).constraints["to"] = { glob: "*" };
    const plan = session.plan;
    expect(plan?.steps).toHaveLength(2);
    expect(() => (((plan?.steps[1]?.constraints ?? {}) as Record<string, unknown>)["to"] = { glob: "*" })).toThrow(
      TypeError,
    );
    expect(session.planHash).toBe(hash);
    expect(session.evaluate(SEARCH).reasons[0]?.code).toBe("not_in_plan");
  });

  it("refuses an action the approved plan does not name, and a step whose constraints fail", async () => {
    const { session } = await executingSession({ plan: PLAN });
    expect(session.evaluate(READ).route).toBe("accept");
    expect(session.evaluate(SEND_TEAM).route).toBe("accept");
    expect(session.evaluate(SEARCH)).toMatchObject({ route: "refuse", reasons: [{ code: "not_in_plan" }] });
    const outsider = { ...SEND_TEAM, arguments: { to: "x@elsewhere.example", body: "hi" } };
    expect(session.evaluate(outsider).reasons[0]?.code).toBe("plan_constraint_failed");
  });

  it("asks instead of refusing off-plan actions when `off_plan: ask`", async () => {
    const { session } = await executingSession({ plan: PLAN, settings: { off_plan: "ask" } });
    expect(session.evaluate(SEARCH)).toMatchObject({ route: "ask", reasons: [{ code: "not_in_plan" }] });
  });

  it("is bounded by the intent alone when plans are optional and none was submitted", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    expect(session.evaluate(SEARCH).route).toBe("accept");
    expect(session.evaluate({ server: "slack", tool: "post", arguments: {} }).reasons[0]?.code).toBe(
      "intent_not_allowed",
    );
  });

  it("a plan change during execution goes back to plan_submitted, refuses actions and revokes tokens until approved", async () => {
    const handler = recordingHandler(true);
    const { session } = await executingSession({ plan: PLAN, extra: { escalation: handler } });
    const token = session.issueToken(READ);
    session.submitPlan({ steps: [...PLAN.steps, { action: "email.search" }] });
    expect(session.state).toBe("plan_submitted");
    expect(session.plan).toBeNull();
    expect(session.evaluate(READ).reasons[0]?.code).toBe("session_not_executing");
    await session.confirmPlan();
    expect(handler.questions.at(-1)).toMatchObject({ kind: "plan_approval" });
    expect(handler.questions.at(-1)?.text).toContain("3. `email.search`");
    session.start();
    expect(session.evaluate(SEARCH).route).toBe("accept");
    expect(session.authorize(token, READ)).toMatchObject({ ok: false, code: "token_revoked" });
  });

  it("cannot approve a plan with the confirmation for an earlier plan", async () => {
    const session = createSession(baseOptions());
    session.setIntent(DAY_INTENT);
    session.submitPlan(PLAN);
    const confirmation = await session.requestConfirmation({ kind: "plan_approval" });
    session.submitPlan({ steps: [{ action: "email.send" }] });
    expect(() => session.approvePlan(confirmation as never)).toThrow(
      expect.objectContaining({ code: "confirmation_invalid" }) as Error,
    );
    expect(session.state).toBe("plan_submitted");
  });

  it("refuses a malformed plan and keeps the approved one in force", async () => {
    const { session } = await executingSession({ plan: PLAN });
    const hash = session.planHash;
    expect(() => session.submitPlan({ steps: "all of them" })).toThrow(
      expect.objectContaining({ code: "invalid_plan" }) as Error,
    );
    expect(session.state).toBe("executing");
    expect(session.planHash).toBe(hash);
  });

  it("goes back to intent_set when a submitted plan is rejected", () => {
    const session = createSession(baseOptions());
    session.setIntent(DAY_INTENT);
    session.submitPlan(PLAN);
    session.rejectPlan("too broad");
    expect(session.state).toBe("intent_set");
    expect(session.proposedPlan).toBeNull();
  });
});
