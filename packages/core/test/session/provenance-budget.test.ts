import { describe, expect, it } from "vitest";
import { createProvenanceEntry, deriveProvenance } from "../../src/session/provenance.js";
import { createProvenanceBudget, EVERY_PIECE, PROVENANCE_WORK_BUDGET } from "../../src/session/provenance-budget.js";
import { executingSession } from "./harness.js";

/**
 * Tracing costs, for each piece of a call, the session's texts that could hold it (those with every word of it).
 * One decision spends at most PROVENANCE_WORK_BUDGET work units on it: a call carrying more values than that can
 * trace is asked (`provenance_incomplete`), never decided on a part of its values, and never held for minutes.
 */
const INTENT = { goal: "mail for me", allowed_actions: ["mail.*"] };
const LOREM = "lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(20_000); // ~1.1 M characters
/** A page with every word of the addresses below (`user7`, `example7`, `com`), but none of the addresses. */
const PAGE = `${Array.from({ length: 10_000 }, (_, i) => `user${i} at example${i} dot com.`).join(" ")} ${LOREM}`;

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
    const words = Array.from({ length: 100 }, (_, i) => `u${i} at x dot example`).join(", ");
    const entries = [createProvenanceEntry("external_untrusted", "web.fetch#1", `${words} ${"x ".repeat(5_000)}`)];
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

  it("a call's tracing work is what its values ask of the session, not the session's length", () => {
    const page = (i: number) => `note ${i}: lunch at noon, see https://intranet.example/notes/${i}`;
    const spent = (n: number, args: Record<string, unknown>): number => {
      const entries = Array.from({ length: n }, (_, i) =>
        createProvenanceEntry("external_untrusted", `r#${i}`, page(i)),
      );
      entries.unshift(createProvenanceEntry("user_input", "user#1", "mail ann@example.com the minutes"));
      const budget = createProvenanceBudget();
      deriveProvenance(entries, args, { budget });
      return PROVENANCE_WORK_BUDGET - budget.left;
    };
    const call = { to: "ann@example.com", subject: "minutes-7f3a", link: "https://docs.example/minutes" };
    // 10 entries or 20,000: the same work, since no new entry could hold the call's values
    expect(spent(20_000, call)).toBe(spent(10, call));
    // a value every entry could hold (`lunch`) is compared with each of them: that work is the session's
    expect(spent(20_000, { subject: "lunch" })).toBeGreaterThan((1_000 * spent(10, { subject: "lunch" })) / 10);
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
