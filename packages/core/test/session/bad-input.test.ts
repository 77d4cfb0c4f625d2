import { describe, expect, it } from "vitest";
import { createSession, parseSessionSettings } from "../../src/index.js";
import { baseOptions, DAY_INTENT, executingSession } from "./harness.js";

describe("bad input gets a clear error, a refusal, and changes nothing", () => {
  it("refuses malformed requests in the pipeline verdict instead of throwing", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    for (const bad of [
      null,
      "email.send",
      { tool: "" },
      { tool: "send", arguments: [] },
      { tool: "x", arguments: {}, extra: 1 },
    ]) {
      const verdict = session.evaluate(bad);
      expect(verdict).toMatchObject({ route: "refuse", reasons: [{ code: "invalid_record" }] });
    }
    expect(session.history).toEqual([]);
  });

  it("refuses to record malformed executions, tool results and oversized user input", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    const before = session.provenance.length;
    expect(() => session.recordExecution({ tool: 3 })).toThrow(
      expect.objectContaining({ code: "invalid_record" }) as Error,
    );
    expect(() => session.recordToolResult("", "read", "x")).toThrow(
      expect.objectContaining({ code: "invalid_record" }) as Error,
    );
    expect(() => session.recordToolResult("s", "t", "x", { trusted: "yes" as never })).toThrow(
      expect.objectContaining({ code: "invalid_record" }) as Error,
    );
    expect(() => session.recordUserInput("x".repeat(1_000_001))).toThrow(
      expect.objectContaining({ code: "invalid_record" }) as Error,
    );
    expect(() => session.recordUserInput(42 as never)).toThrow(
      expect.objectContaining({ code: "invalid_record" }) as Error,
    );
    expect(session.provenance.length).toBe(before);
    expect(session.history).toEqual([]);
  });

  it("refuses to record as executed a call the session refuses (an enforcement bypass)", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    const forbidden = { server: "bank", tool: "transfer", arguments: { to: "x" } };
    expect(() => session.recordExecution(forbidden)).toThrow(
      expect.objectContaining({ code: "execution_not_permitted" }) as Error,
    );
    expect(session.history).toEqual([]);
    expect(session.events.at(-1)).toMatchObject({ type: "execution_refused", code: "execution_not_permitted" });
  });

  it("refuses bad session options and settings with the issues", () => {
    const bad: unknown[] = [
      { off_plan: "maybe" },
      { require_plan: "yes" },
      { token_ttl_seconds: 0 },
      { trusted_servers: ["[x"] },
      { provenance: { track: ["ssn"] } },
      { classify: [{ tool: "x", category: "dangerous" }] },
      { unknown_key: true },
      "settings",
    ];
    for (const settings of bad) {
      const parsed = parseSessionSettings(settings);
      expect(parsed.ok, JSON.stringify(settings)).toBe(false);
      expect(() => createSession(baseOptions({ settings }))).toThrow(
        expect.objectContaining({ code: "invalid_session_config" }) as Error,
      );
    }
    expect(() => createSession({ ...baseOptions(), now: undefined as never })).toThrow(
      expect.objectContaining({ code: "invalid_session_config" }) as Error,
    );
    expect(() => createSession(baseOptions({ tenant: "a b" }))).toThrow(
      expect.objectContaining({ code: "invalid_session_config" }) as Error,
    );
  });

  it("refuses a clock that gives an invalid time", () => {
    expect(() => createSession(baseOptions({ now: () => new Date(Number.NaN) }))).toThrow(
      expect.objectContaining({
        code: "invalid_session_config",
        message: "the session clock gave an invalid time",
      }) as Error,
    );
  });

  it("keeps the intent when an update proposal is malformed", async () => {
    const { session } = await executingSession({ settings: { require_plan: false } });
    await expect(session.confirmIntentUpdate({ goal: "" })).rejects.toMatchObject({ code: "invalid_intent" });
    await expect(session.confirmIntentUpdate("widen everything")).rejects.toMatchObject({ code: "invalid_intent" });
    expect(session.intent).toMatchObject({ version: 1, goal: DAY_INTENT.goal });
    expect(session.state).toBe("executing");
  });
});
