import { describe, expect, it } from "vitest";
import { createTokenProbe, type VerifyTraceEvent } from "../../src/index.js";
import { NOW } from "./core-executor.js";

const INTENT = { goal: "read my calendar", allowed_actions: ["calendar.read_events"] };

describe("createTokenProbe", () => {
  it("spends a token once and refuses its second use with token_reused", () => {
    const probe = createTokenProbe({ intent: INTENT, settings: { require_plan: false }, now: NOW });
    const events: VerifyTraceEvent[] = [
      { type: "user_input", text: "hello" },
      { type: "tool_call", server: "calendar", tool: "read_events", args: {} },
    ];
    expect(probe(events, [true])).toEqual({
      firstUse: true,
      secondUse: false,
      detail: "the second use was refused (token_reused)",
    });
  });

  it("reports a call the session will not issue a token for as a failed first use", () => {
    const probe = createTokenProbe({ intent: INTENT, settings: { require_plan: false }, now: NOW });
    const events: VerifyTraceEvent[] = [{ type: "tool_call", server: "mail", tool: "send_email", args: {} }];
    const result = probe(events, [true]);
    expect(result.firstUse).toBe(false);
    expect(result.secondUse).toBe(false);
    expect(result.detail).toMatch(/no authority token/);
  });
});
