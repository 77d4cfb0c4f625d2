import { describe, expect, it } from "vitest";
import { MAX_KEPT_EVENTS, type SessionEvent } from "../../src/index.js";
import { executingSession } from "./harness.js";

describe("a long-lived session's event log", () => {
  it("keeps the recent events in memory while onEvent sees every one and seq keeps counting", async () => {
    const seen: SessionEvent[] = [];
    const { session } = await executingSession({
      settings: { require_plan: false },
      extra: { onEvent: (e) => void seen.push(e) },
    });
    const read = { server: "calendar", tool: "read_events", arguments: {} };
    const before = session.events.length;
    // every recorded result emits an event; go well past twice the bound
    const rounds = 2 * MAX_KEPT_EVENTS + 500;
    for (let i = 0; i < rounds; i++) session.recordToolResult("calendar", "read_events", `entry ${i}`);
    const kept = session.events;
    expect(kept.length).toBeGreaterThanOrEqual(MAX_KEPT_EVENTS);
    expect(kept.length).toBeLessThan(2 * MAX_KEPT_EVENTS);
    // every event reached the hook, numbered 1..n without a gap
    expect(seen.length).toBeGreaterThanOrEqual(before + rounds);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    // what is kept is the most recent run of them, in order
    const last = seen[seen.length - 1];
    expect(kept[kept.length - 1]).toBe(last);
    expect(kept.map((e) => e.seq)).toEqual(kept.map((_, i) => (last?.seq ?? 0) - kept.length + 1 + i));
    // and the session still judges as before
    expect(session.evaluate(read).route).toBe("accept");
  });
});
