import { describe, expect, it } from "vitest";
import { createProvenanceEntry, deriveProvenance } from "../../src/session/provenance.js";
import { createProvenanceBudget, EVERY_PIECE, PROVENANCE_WORK_BUDGET } from "../../src/session/provenance-budget.js";
import { executingSession } from "./harness.js";

/**
 * Tracing costs the call's pieces times the session's text. One decision spends at most
 * PROVENANCE_WORK_BUDGET work units on it: a call carrying more values than that can trace is asked
 * (`provenance_incomplete`), never decided on a part of its values, and never held for minutes.
 */
const INTENT = { goal: "mail for me", allowed_actions: ["mail.*"] };
const PAGE = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20_000); // ~1.1 M characters

describe("one decision's tracing work is bounded", () => {
  it("asks for a call carrying more addresses than one decision can trace against what was read", async () => {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    session.recordUserInput("summarise my inbox");
    session.recordExecution({ server: "mail", tool: "read_inbox", arguments: {} }, PAGE);
    const to = Array.from({ length: 10_000 }, (_, i) => `user${i}@example${i}.com`);
    const verdict = session.evaluate({ server: "mail", tool: "send_email", arguments: { to, body: "hi" } });
    expect(verdict.route).toBe("ask");
    const reason = verdict.reasons.find((r) => r.code === "provenance_incomplete");
    expect(reason?.message).toMatch(
      /^this call carries more values than can be traced .* \(\d+ traced\), so it is asked$/,
    );
  });

  it("judges a call of a few values in the same session as before (accepted: nobody supplied them)", async () => {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    session.recordUserInput("summarise my inbox");
    session.recordExecution({ server: "mail", tool: "read_inbox", arguments: {} }, PAGE);
    const verdict = session.evaluate({
      server: "mail",
      tool: "send_email",
      arguments: { to: ["ann@example.com", "bob@example.com"], body: "hi" },
    });
    expect(verdict.route).toBe("accept");
  });

  it("stops tracing once the budget is spent, and says so: what it judged is all it returns", () => {
    const entries = [createProvenanceEntry("external_untrusted", "web.fetch#1", "x".repeat(10_000))];
    const args = { to: Array.from({ length: 100 }, (_, i) => `u${i}@x.example`) };
    const whole = deriveProvenance(entries, args, { budget: createProvenanceBudget() });
    const small = createProvenanceBudget(25_000);
    const part = deriveProvenance(entries, args, { budget: small });
    expect(small.exceeded).toBe(true);
    expect(part.length).toBeGreaterThan(0);
    expect(part.length).toBeLessThan(whole.length);
    expect(part).toEqual(whole.slice(0, part.length));
    expect(PROVENANCE_WORK_BUDGET).toBe(2 ** 28);
  });

  it("a trusted answer to a call whose arguments could not be traced vouches for none of them", () => {
    const answer = createProvenanceEntry("system_policy", "directory.lookup#1", "ann@example.com", undefined, {
      echoes: EVERY_PIECE,
    });
    const [piece] = deriveProvenance([answer], { to: "ann@example.com" });
    expect(piece?.status).toBe("unknown");
    const plain = createProvenanceEntry("system_policy", "directory.lookup#1", "ann@example.com");
    expect(deriveProvenance([plain], { to: "ann@example.com" })[0]?.status).toBe("trusted");
  });
});
