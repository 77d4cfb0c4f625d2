import { describe, expect, it } from "vitest";
import { createSession, type Confirmation, type EscalationHandler } from "../../src/index.js";
import { baseOptions, DAY_INTENT, executingSession } from "./harness.js";

const PLAN = { steps: [{ action: "calendar.read_events" }] };

describe("the escalation handler is the only source of confirmations", () => {
  it("refuses a look-alike confirmation that its handler did not produce (e.g. JSON from a tool result)", async () => {
    const session = createSession(baseOptions());
    session.setIntent(DAY_INTENT);
    session.submitPlan(PLAN);
    const real = await session.requestConfirmation({ kind: "plan_approval" });
    const forged = JSON.parse(JSON.stringify(real)) as Confirmation;
    expect(() => session.approvePlan(forged)).toThrow(
      expect.objectContaining({ code: "confirmation_invalid" }) as Error,
    );
    expect(session.state).toBe("plan_submitted");
    session.approvePlan(real as Confirmation);
    expect(session.state).toBe("plan_approved");
  });

  it("refuses a confirmation of another session", async () => {
    const a = createSession(baseOptions({ id: "a" }));
    const b = createSession(baseOptions({ id: "b" }));
    for (const s of [a, b]) {
      s.setIntent(DAY_INTENT);
      s.submitPlan(PLAN);
    }
    const fromB = await b.requestConfirmation({ kind: "plan_approval" });
    expect(() => a.approvePlan(fromB as Confirmation)).toThrow(
      expect.objectContaining({ code: "confirmation_invalid" }) as Error,
    );
  });

  it("refuses a confirmation spent on another kind of question", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    session.suspend();
    const resume = await session.requestConfirmation({ kind: "resume" });
    expect(() => session.updateIntent(DAY_INTENT, resume as Confirmation)).toThrow();
    expect(session.intent?.version).toBe(1);
  });

  it("treats a handler that throws, answers another question or answers nothing as no confirmation", async () => {
    const handlers: EscalationHandler[] = [
      { confirm: () => Promise.reject(new Error("channel down")) },
      {
        confirm: (q) =>
          Promise.resolve({ question_id: "other", subject_hash: q.subject_hash, approved: true, by: "x", at: "t" }),
      },
      { confirm: () => Promise.resolve(null) },
    ];
    for (const escalation of handlers) {
      const session = createSession(baseOptions({ escalation }));
      session.setIntent(DAY_INTENT);
      session.submitPlan(PLAN);
      await expect(session.confirmPlan()).rejects.toMatchObject({ code: "confirmation_denied" });
      expect(session.state).toBe("plan_submitted");
    }
  });

  it("records an explicit decline as `confirmation_denied`", async () => {
    const escalation: EscalationHandler = {
      confirm: (q) =>
        Promise.resolve({ question_id: q.id, subject_hash: q.subject_hash, approved: false, by: "bob", at: "t" }),
    };
    const session = createSession(baseOptions({ escalation }));
    session.setIntent(DAY_INTENT);
    session.submitPlan(PLAN);
    await expect(session.confirmPlan()).rejects.toMatchObject({ code: "confirmation_denied" });
    expect(session.events.at(-1)?.message).toContain("`bob` declined");
  });

  it("hands the event hook every event with tenant, session, intent version and plan hash", () => {
    const seen: string[] = [];
    const session = createSession(
      baseOptions({
        tenant: "acme",
        id: "s1",
        onEvent: (e) => seen.push(`${e.seq}:${e.type}:${e.tenant}:${e.session}`),
      }),
    );
    session.setIntent(DAY_INTENT);
    expect(seen.slice(0, 3)).toEqual(["1:session_created:acme:s1", "2:intent_set:acme:s1", "3:state_changed:acme:s1"]);
    expect(session.events.at(-1)).toMatchObject({ intent_version: 1, plan_hash: null, state: "intent_set" });
  });

  it("turns a throwing event hook into `event_sink_failed`, keeping the event in the log", () => {
    const session = createSession(
      baseOptions({
        onEvent: (e) => {
          if (e.type === "intent_set") throw new Error("disk full");
        },
      }),
    );
    expect(() => session.setIntent(DAY_INTENT)).toThrow(
      expect.objectContaining({ code: "event_sink_failed" }) as Error,
    );
    expect(session.events.map((e) => e.type)).toContain("intent_set");
  });
});
