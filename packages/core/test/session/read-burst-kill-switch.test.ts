/**
 * The kill switch's `calls`: a burst of calls of any kind — reads too, "sudden email scanning" (APE notes,
 * mitigations §8: real-time anomaly detection, immediate suspension of tool access) — within the window suspends
 * the session. `consequential_calls` alone counted only writes, sends and payments: an agent reading every mail
 * of the inbox in a minute ran on.
 */
import { describe, expect, it } from "vitest";
import { parseSessionSettings } from "../../src/index.js";
import { executingSession } from "./harness.js";

const INTENT = { goal: "summarise my inbox", allowed_actions: ["mail.*"] };
const read = (id: number): { server: string; tool: string; arguments: { id: string }; annotations: object } => ({
  server: "mail",
  tool: "read_message",
  arguments: { id: `m${id}` },
  annotations: { readOnlyHint: true },
});

describe("the kill switch counts every call with `calls`", () => {
  it("suspends at the M-th read within the window and refuses every call until a person resumes", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, kill_switch: { calls: 3, window_seconds: 60 } },
    });
    session.recordExecution(read(1));
    session.recordExecution(read(2));
    expect(session.state).toBe("executing");
    session.recordExecution(read(3));
    expect(session.state).toBe("suspended");
    expect(session.evaluate(read(4))).toMatchObject({ route: "refuse", reasons: [{ code: "session_suspended" }] });
    await session.confirmResume();
    expect(session.evaluate(read(4)).route).toBe("accept");
  });

  it("suspends at the M-th read an authority token let through", async () => {
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, kill_switch: { calls: 2, window_seconds: 60 } },
    });
    const tokens = [read(1), read(2), read(3)].map((r) => session.issueToken(r));
    expect(session.authorize(tokens[0], read(1)).ok).toBe(true);
    expect(session.authorize(tokens[1], read(2)).ok).toBe(true);
    expect(session.state).toBe("suspended");
    expect(session.authorize(tokens[2], read(3))).toMatchObject({ ok: false, code: "token_revoked" });
  });

  it("does not count reads that left the window", async () => {
    const { session, clock } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false, kill_switch: { calls: 2, window_seconds: 60 } },
    });
    session.recordExecution(read(1));
    clock.advance(61_000);
    session.recordExecution(read(2));
    expect(session.state).toBe("executing");
  });

  it("takes `calls`, `consequential_calls` or both, and refuses neither, zero or an unknown key", () => {
    for (const ok of [
      { calls: 5, window_seconds: 60 },
      { consequential_calls: 2, calls: 50, window_seconds: 60 },
      { consequential_calls: 2, window_seconds: 60 },
    ]) {
      expect(parseSessionSettings({ kill_switch: ok })).toMatchObject({ ok: true, value: { kill_switch: ok } });
    }
    for (const bad of [
      { window_seconds: 60 },
      { calls: 0, window_seconds: 60 },
      { calls: 5, window_seconds: 60, reads: 5 },
    ]) {
      expect(parseSessionSettings({ kill_switch: bad })).toMatchObject({
        ok: false,
        issues: [{ path: ["kill_switch"] }],
      });
    }
  });
});
