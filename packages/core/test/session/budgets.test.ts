import { describe, expect, it } from "vitest";
import { executingSession, recordingHandler } from "./harness.js";

const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };
const READ = { server: "calendar", tool: "read_events", arguments: {}, annotations: { readOnlyHint: true } };
const INTENT = {
  goal: "send the agenda to team@example.com",
  allowed_actions: ["calendar.*", "email.*"],
};

describe("budgets and the kill switch", () => {
  it("refuses past `max_calls`, `max_consequential_calls` and per-action caps", async () => {
    const { session } = await executingSession({
      intent: { ...INTENT, budgets: { max_calls: 4, max_consequential_calls: 2, per_action: { "calendar.*": 1 } } },
      settings: { require_plan: false },
    });
    session.recordExecution(READ);
    expect(session.evaluate(READ).reasons[0]?.code).toBe("action_budget_exhausted");
    session.recordExecution(SEND);
    session.recordExecution(SEND);
    expect(session.evaluate(SEND)).toMatchObject({
      route: "refuse",
      reasons: [{ code: "consequential_budget_exhausted" }],
    });
    expect(session.evaluate({ server: "email", tool: "list_folders", arguments: {} }).route).toBe("accept");
    session.recordExecution({ server: "email", tool: "list_folders", arguments: {} });
    expect(session.evaluate({ server: "email", tool: "list_folders", arguments: {} }).reasons[0]?.code).toBe(
      "budget_exhausted",
    );
  });

  it("starts the budgets afresh for a new intent version", async () => {
    const { session } = await executingSession({
      intent: { ...INTENT, budgets: { max_consequential_calls: 1 } },
      settings: { require_plan: false },
    });
    session.recordExecution(SEND);
    expect(session.evaluate(SEND).route).toBe("refuse");
    await session.confirmIntentUpdate({ ...INTENT, budgets: { max_consequential_calls: 1 } });
    session.start();
    expect(session.evaluate(SEND).route).toBe("accept");
  });

  it("suspends after N consequential calls within the window, refuses until a person resumes", async () => {
    const handler = recordingHandler(true);
    const { session, clock } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, kill_switch: { consequential_calls: 3, window_seconds: 60 } },
      extra: { escalation: handler },
    });
    session.recordExecution(SEND);
    clock.advance(61_000);
    session.recordExecution(SEND);
    session.recordExecution(SEND);
    expect(session.state).toBe("executing");
    session.recordExecution(SEND);
    expect(session.state).toBe("suspended");
    expect(session.evaluate(READ)).toMatchObject({ route: "refuse", reasons: [{ code: "session_suspended" }] });
    expect(() => session.issueToken(READ)).toThrow(expect.objectContaining({ code: "authority_refused" }) as Error);
    expect(() => session.recordExecution(SEND)).toThrow(
      expect.objectContaining({ code: "execution_not_permitted" }) as Error,
    );
    await session.confirmResume();
    expect(handler.questions.at(-1)?.kind).toBe("resume");
    expect(session.state).toBe("executing");
    session.recordExecution(SEND);
    expect(session.state).toBe("executing");
  });

  it("stays suspended when the person declines, and a resume confirmation cannot be used twice", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, kill_switch: { consequential_calls: 1, window_seconds: 60 } },
    });
    session.recordExecution(SEND);
    const confirmation = await session.requestConfirmation({ kind: "resume" });
    session.resume(confirmation as never);
    session.recordExecution(SEND);
    expect(session.state).toBe("suspended");
    expect(() => session.resume(confirmation as never)).toThrow(
      expect.objectContaining({ code: "confirmation_invalid" }) as Error,
    );
    expect(session.state).toBe("suspended");
  });

  it("refuses bad kill-switch settings", async () => {
    await expect(
      executingSession({ intent: INTENT, settings: { require_plan: false, kill_switch: { consequential_calls: 0 } } }),
    ).rejects.toMatchObject({ code: "invalid_session_config" });
  });
});
