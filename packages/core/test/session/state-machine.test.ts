import { describe, expect, it } from "vitest";
import {
  SESSION_STATES,
  SESSION_TRANSITIONS,
  createSession,
  isSessionError,
  nextSessionState,
  type Session,
} from "../../src/index.js";
import { baseOptions, DAY_INTENT } from "./harness.js";

const PLAN = { steps: [{ action: "calendar.read_events" }, { action: "email.send" }] };
const READ = { server: "calendar", tool: "read_events", arguments: { day: "2026-03-02" } };

function expectIllegal(fn: () => unknown, session: Session): void {
  const before = session.events.length;
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(isSessionError(thrown, "illegal_transition")).toBe(true);
  const recorded = session.events.slice(before);
  expect(recorded.some((e) => e.type === "illegal_transition" && e.code === "illegal_transition")).toBe(true);
}

describe("gap: the runtime state machine is enforced", () => {
  it("walks created → intent_set → plan_submitted → plan_approved → executing → completed, recording each move", async () => {
    const session = createSession(baseOptions());
    expect(session.state).toBe("created");
    session.setIntent(DAY_INTENT);
    expect(session.state).toBe("intent_set");
    session.submitPlan(PLAN);
    expect(session.state).toBe("plan_submitted");
    await session.confirmPlan();
    expect(session.state).toBe("plan_approved");
    session.start();
    expect(session.state).toBe("executing");
    session.complete();
    expect(session.state).toBe("completed");
    const moves = session.events.filter((e) => e.type === "state_changed").map((e) => e.message.split(":")[0]);
    expect(moves).toEqual([
      "created -> intent_set",
      "intent_set -> plan_submitted",
      "plan_submitted -> plan_approved",
      "plan_approved -> executing",
      "executing -> completed",
    ]);
  });

  it("refuses to submit a plan, approve, start or complete before an intent is set, with typed errors in the log", () => {
    const session = createSession(baseOptions());
    expectIllegal(() => session.submitPlan(PLAN), session);
    expectIllegal(() => session.start(), session);
    expectIllegal(() => session.complete(), session);
    expectIllegal(() => session.resume({} as never), session);
    expect(session.state).toBe("created");
  });

  it("refuses a second setIntent (an update must go through confirmation)", () => {
    const session = createSession(baseOptions());
    session.setIntent(DAY_INTENT);
    expectIllegal(() => session.setIntent({ ...DAY_INTENT, goal: "something else" }), session);
    expect(session.intent?.goal).toBe(DAY_INTENT.goal);
  });

  it("refuses to start without an approved plan when plans are required", () => {
    const session = createSession(baseOptions());
    session.setIntent(DAY_INTENT);
    expect(() => session.start()).toThrow(expect.objectContaining({ code: "plan_required" }) as Error);
    session.submitPlan(PLAN);
    expectIllegal(() => session.start(), session);
    expect(session.state).toBe("plan_submitted");
  });

  it("starts from the intent alone when plans are optional", () => {
    const session = createSession(baseOptions({ settings: { require_plan: false } }));
    session.setIntent(DAY_INTENT);
    session.start();
    expect(session.state).toBe("executing");
  });

  it("refuses every action, and every token, until the session is executing", async () => {
    const session = createSession(baseOptions());
    for (const step of ["created", "intent_set", "plan_submitted", "plan_approved"] as const) {
      expect(session.state).toBe(step);
      const verdict = session.evaluate(READ);
      expect(verdict.route).toBe("refuse");
      expect(verdict.reasons[0]?.code).toBe("session_not_executing");
      expect(() => session.issueToken(READ)).toThrow(expect.objectContaining({ code: "authority_refused" }) as Error);
      if (step === "created") session.setIntent(DAY_INTENT);
      if (step === "intent_set") session.submitPlan(PLAN);
      if (step === "plan_submitted") await session.confirmPlan();
    }
    session.start();
    expect(session.evaluate(READ).route).toBe("accept");
  });

  it("treats completed and terminated as final: nothing moves, every action is refused", async () => {
    for (const end of ["complete", "terminate"] as const) {
      const session = createSession(baseOptions());
      session.setIntent(DAY_INTENT);
      session.submitPlan(PLAN);
      await session.confirmPlan();
      session.start();
      session[end]();
      expect(session.evaluate(READ).reasons[0]?.code).toBe(
        end === "complete" ? "session_completed" : "session_terminated",
      );
      expectIllegal(() => session.start(), session);
      expectIllegal(() => session.terminate(), session);
      expectIllegal(() => session.submitPlan(PLAN), session);
    }
  });

  it("can be terminated from every live state", async () => {
    const reach: ((s: Session) => Promise<void> | void)[] = [
      () => undefined,
      (s) => void s.setIntent(DAY_INTENT),
      (s) => void s.submitPlan(PLAN),
      async (s) => void (await s.confirmPlan()),
      (s) => s.start(),
      (s) => s.suspend(),
    ];
    for (let n = 1; n <= reach.length; n++) {
      const session = createSession(baseOptions());
      for (const step of reach.slice(0, n)) await step(session);
      session.terminate();
      expect(session.state).toBe("terminated");
    }
  });

  it("has a transition table in which every state is reachable and only final states have no way out", () => {
    const reachable = new Set(["created"]);
    for (let changed = true; changed;) {
      changed = false;
      for (const t of SESSION_TRANSITIONS) {
        if (reachable.has(t.from) && !reachable.has(t.to)) {
          reachable.add(t.to);
          changed = true;
        }
      }
    }
    expect([...reachable].sort()).toEqual([...SESSION_STATES].sort());
    for (const state of SESSION_STATES) {
      const out = SESSION_TRANSITIONS.filter((t) => t.from === state).length;
      expect(out === 0).toBe(state === "completed" || state === "terminated");
    }
    expect(nextSessionState("executing", "submit_plan")).toBe("plan_submitted");
    expect(nextSessionState("created", "start")).toBeUndefined();
  });
});
