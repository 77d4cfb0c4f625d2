import { describe, expect, it } from "vitest";
import { executingSession } from "./harness.js";

// A pre-tool check names the call's category itself; the session judges a claimed consequential category
// as consequential (a caller may make a decision stricter), so what it judged so must spend the budget too.
const INTENT = { goal: "pay my bills", allowed_actions: ["bank.*"], budgets: { max_consequential_calls: 1 } };
const PAY = { server: "bank", tool: "get_balance", arguments: { account: "main" }, category: "financial" };

describe("a call judged consequential by the category it claims is counted so", () => {
  it("spends the consequential budget", async () => {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    expect(session.evaluate(PAY).route).toBe("accept");
    session.recordExecution(PAY);
    expect(session.evaluate(PAY)).toMatchObject({
      route: "refuse",
      reasons: [{ code: "consequential_budget_exhausted" }],
    });
  });

  it("counts towards the kill switch", async () => {
    const { session } = await executingSession({
      intent: { goal: "pay my bills", allowed_actions: ["bank.*"] },
      settings: { require_plan: false, kill_switch: { consequential_calls: 2, window_seconds: 60 } },
    });
    session.recordExecution(PAY);
    session.recordExecution(PAY);
    expect(session.state).toBe("suspended");
  });
});
