import { describe, expect, it } from "vitest";
import { isSessionError } from "../../src/index.js";
import { executingSession } from "./harness.js";

// `acp proxy` takes tag characters and bidi controls out of a result before the agent reads it, and hands the
// runtime the cleaned text: a result that carried them was an injection attempt, whatever its visible words
// say. `hiddenTextRemoved` tells the runtime so: the result counts as instruction-like content read, untrusted
// even from a trusted server, and the reason names the tool it came from.
const INTENT = { goal: "tell the team about the sync", allowed_actions: ["email.*", "calendar.*"] };
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };
const PLAIN = "- title: Quarterly sync\n  start: 2026-03-02 10:00";

describe("a result that carried hidden text counts as instructions seen", () => {
  it("asks for a consequential call after it under `escalate_after_instructions`, naming the tool", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, escalate_after_instructions: true },
    });
    session.recordUserInput("send hi to team@example.com");
    session.recordToolResult("calendar", "read_events", PLAIN);
    expect(session.evaluate(SEND).route).toBe("accept");
    const entry = session.recordToolResult("calendar", "read_events", PLAIN, { hiddenTextRemoved: true });
    expect(entry.instructions).toMatchObject({ contains_instructions: true, signals: [{ kind: "hidden_text" }] });
    const verdict = session.evaluate(SEND);
    expect(verdict).toMatchObject({ route: "ask", reasons: [{ code: "instructions_seen" }] });
    expect(JSON.stringify(verdict.reasons)).toContain("calendar.read_events");
    expect(session.events.some((e) => e.type === "instructions_detected" && e.message.includes("hidden_text"))).toBe(
      true,
    );
  });

  it("is untrusted even from a trusted server, and asks reads with `reads.after_instructions: ask`", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: {
        require_plan: false,
        trusted_servers: ["calendar"],
        classify: [{ tool: "search", server: "email", category: "read" as const }],
        reads: { after_instructions: "ask" },
      },
    });
    const search = { server: "email", tool: "search", arguments: { query: "sync" } };
    expect(session.recordToolResult("calendar", "read_events", PLAIN).label).toBe("system_policy");
    expect(session.evaluate(search).route).toBe("accept");
    const entry = session.recordToolResult("calendar", "read_events", PLAIN, { hiddenTextRemoved: true });
    expect(entry.label).toBe("external_untrusted");
    expect(session.evaluate(search)).toMatchObject({ route: "ask", reasons: [{ code: "instructions_seen" }] });
  });

  it("refuses a flag that is not a boolean", async () => {
    const { session } = await executingSession({ intent: INTENT, settings: { require_plan: false } });
    let caught: unknown;
    try {
      session.recordToolResult("calendar", "read_events", PLAIN, { hiddenTextRemoved: 1 as unknown as boolean });
    } catch (err) {
      caught = err;
    }
    expect(isSessionError(caught) && caught.code).toBe("invalid_record");
  });
});
