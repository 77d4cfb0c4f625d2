import { describe, expect, it } from "vitest";
import { parseTransitionRules } from "../../src/index.js";
import { executingSession } from "./harness.js";

const INTENT = { goal: "day", allowed_actions: ["calendar.*", "email.*", "notes.*"] };
const READ_CAL = { server: "calendar", tool: "read_events", arguments: {}, annotations: { readOnlyHint: true } };
const SEND = { server: "email", tool: "send", arguments: { to: "x" } };
const WRITE_NOTE = { server: "notes", tool: "write_note", arguments: { text: "x" } };

describe("transition rules (cross-tool escalation barriers)", () => {
  it("parses objects and `from -> to: action` strings, reading `confirm` as ask", () => {
    const result = parseTransitionRules({
      transitions: ["calendar.* -> email.send: deny", { from: "read", to: "write", action: "confirm", id: "r2w" }],
    });
    expect(result).toEqual({
      ok: true,
      value: [
        { id: "transition-1", from: "calendar.*", to: "email.send", action: "deny" },
        { id: "r2w", from: "read", to: "write", action: "ask" },
      ],
    });
  });

  const BAD: [string, unknown, string][] = [
    ["not a list", { transitions: "calendar -> email" }, "`transitions` must be a list"],
    [
      "no arrow",
      ["calendar.* email.send: deny"],
      'transitions[0]: expected `{from, to, action}` or `"from -> to: action"`',
    ],
    ["allow", [{ from: "read", to: "write", action: "allow" }], "transitions[0]: unknown action `allow`"],
    [
      "bad glob",
      [{ from: "[x", to: "write", action: "deny" }],
      "transitions[0].from: transitions.0.from[0]: invalid glob `[x`",
    ],
    [
      "unknown key",
      [{ from: "read", to: "write", action: "deny", when: "always" }],
      "transitions[0]: unknown field `when`",
    ],
    ["missing to", [{ from: "read", action: "deny" }], "transitions[0]: `to` must be a category or an action glob"],
  ];
  for (const [name, value, message] of BAD) {
    it(`refuses a bad rule (${name}) with a clear issue`, () => {
      const result = parseTransitionRules(value);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.issues[0]?.code).toBe("invalid_transition_rule");
        expect(result.issues[0]?.message.startsWith(message)).toBe(true);
      }
    });
  }

  it("refuses a session whose settings hold a bad rule", async () => {
    await expect(
      executingSession({ intent: INTENT, settings: { require_plan: false, transitions: [{ from: "read" }] } }),
    ).rejects.toMatchObject({
      code: "invalid_session_config",
    });
  });

  it("denies `calendar.* -> email.send` only after a calendar call was executed", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, transitions: ["calendar.* -> email.send: deny"] },
    });
    expect(session.evaluate(SEND).route).toBe("accept");
    session.recordExecution(READ_CAL);
    expect(session.evaluate(SEND)).toMatchObject({
      route: "refuse",
      rule: "transition-1",
      reasons: [{ code: "transition_denied" }],
    });
  });

  it("asks `read -> write` by category, and a deny rule beats an ask rule", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, transitions: ["read -> write: ask", "calendar.* -> notes.*: deny"] },
    });
    session.recordExecution(READ_CAL);
    const ask = session.evaluate({ server: "email", tool: "draft", arguments: {} });
    expect(ask).toMatchObject({ route: "ask", reasons: [{ code: "transition_ask" }] });
    const both = session.evaluate(WRITE_NOTE);
    expect(both.route).toBe("refuse");
    expect(both.reasons.map((r) => r.code)).toEqual(["transition_denied", "transition_ask"]);
  });

  it("does not count calls that were only judged, never executed", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, transitions: ["calendar.* -> email.send: deny"] },
    });
    session.evaluate(READ_CAL);
    expect(session.evaluate(SEND).route).toBe("accept");
  });
});
