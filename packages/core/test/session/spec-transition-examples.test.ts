/**
 * The transition rules the APE notes write, copied in as they stand: the mitigation table's `read → send`, the
 * RFC sketch's §3.2 E (`calendar.read → email.read: deny`, `read → write: confirm`) and the design's §5.5 YAML
 * (`action: require_confirmation`). Each parses, and each rule does what its words say.
 */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseTransitionRules } from "../../src/index.js";
import { executingSession } from "./harness.js";

const RFC_SKETCH = ["calendar.read → email.read: deny", "email.read → email.send: deny", "read → write: confirm"];

const DESIGN_YAML = `
rules:
  - from: calendar.read
    to: email.read
    action: deny

  - from: read
    to: write
    action: require_confirmation
`;

const READ_CAL = { server: "calendar", tool: "read", arguments: {}, annotations: { readOnlyHint: true } };
const READ_MAIL = { server: "email", tool: "read", arguments: {}, annotations: { readOnlyHint: true } };
const WRITE_NOTE = { server: "notes", tool: "write_note", arguments: { text: "agenda" } };
const INTENT = { goal: "prepare my day", allowed_actions: ["calendar.*", "email.*", "notes.*"] };

describe("the APE notes' transition rules", () => {
  it("parses the RFC sketch's rules, arrows as written", () => {
    const parsed = parseTransitionRules(RFC_SKETCH);
    expect(parsed.ok && parsed.value.map((r) => [r.from, r.to, r.action])).toEqual([
      ["calendar.read", "email.read", "deny"],
      ["email.read", "email.send", "deny"],
      ["read", "write", "ask"],
    ]);
  });

  it("parses the design's YAML, reading `require_confirmation` as ask", () => {
    const parsed = parseTransitionRules((parse(DESIGN_YAML) as { rules: unknown }).rules);
    expect(parsed.ok && parsed.value.map((r) => [r.from, r.to, r.action])).toEqual([
      ["calendar.read", "email.read", "deny"],
      ["read", "write", "ask"],
    ]);
  });

  it("denies reading mail after the calendar was read, and asks before a write after any read", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, transitions: (parse(DESIGN_YAML) as { rules: unknown }).rules },
    });
    expect(session.evaluate(READ_MAIL).route).toBe("accept");
    session.recordExecution(READ_CAL);
    expect(session.evaluate(READ_MAIL)).toMatchObject({ route: "refuse", reasons: [{ code: "transition_denied" }] });
    expect(session.evaluate(WRITE_NOTE)).toMatchObject({ route: "ask", reasons: [{ code: "transition_ask" }] });
  });
});
