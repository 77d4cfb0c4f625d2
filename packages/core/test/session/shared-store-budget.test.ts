import { describe, expect, it } from "vitest";
import { createSharedStoreBudget, tightestStoreBudget } from "../../src/index.js";
import { executingSession } from "./harness.js";

// Sessions of one process (an HTTP proxy serving many agents) share a bound on the provenance text they
// keep; past it a session stops keeping content (fail safe: consequential calls ask), and a session that
// ends gives its share back.
const INTENT = { goal: "day", allowed_actions: ["notes.*", "email.*"] };
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };
/** What each session's intent keeps (its goal, no identifiers): charged to the budget like any entry. */
const G = INTENT.goal.length;

describe("a provenance budget shared by the sessions of a process", () => {
  it("cuts what a session keeps once the sessions together hold the budget; consequential calls then ask", async () => {
    const storeBudget = createSharedStoreBudget(5_000);
    const a = (await executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }))
      .session;
    const b = (await executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }))
      .session;
    const used = storeBudget.used; // (the intents' own entries: 2 * G)
    expect(used).toBe(2 * G);
    a.recordToolResult("notes", "list_notes", "x".repeat(3_000));
    expect(storeBudget.used).toBe(used + 3_000);
    expect(b.evaluate(SEND).route).toBe("accept");
    b.recordToolResult("notes", "list_notes", "y".repeat(3_000));
    expect(storeBudget.used).toBe(5_000);
    const incomplete = b.events.find((e) => e.type === "provenance_incomplete");
    expect(incomplete?.message).toContain("the sessions of this process keep at most 5000 characters together");
    const verdict = b.evaluate(SEND);
    expect(verdict.route).toBe("ask");
    expect(verdict.reasons.map((r) => r.code)).toContain("provenance_incomplete");
    // the session that kept its content is untouched
    expect(a.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
    expect(a.evaluate(SEND).route).toBe("accept");
  });

  it("a session that ends gives its share back to the others", async () => {
    const storeBudget = createSharedStoreBudget(5_000);
    const a = (await executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }))
      .session;
    a.recordToolResult("notes", "list_notes", "x".repeat(4_000));
    const held = storeBudget.used;
    a.terminate("the agent disconnected");
    expect(storeBudget.used).toBe(0);
    expect(held).toBe(4_000 + G);
    const c = (await executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }))
      .session;
    c.recordToolResult("notes", "list_notes", "z".repeat(4_000));
    expect(c.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
    expect(c.evaluate(SEND).route).toBe("accept");
  });

  it("never lets the sessions together keep more than the budget (many sessions, many results)", async () => {
    const storeBudget = createSharedStoreBudget(20_000);
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () =>
        executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }),
      ),
    );
    for (let round = 0; round < 10; round++) {
      for (const { session } of sessions) {
        session.recordToolResult("notes", "list_notes", `${round} ${"n".repeat(700)}`);
        expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
      }
    }
    const kept = sessions.reduce(
      (sum, { session }) => sum + session.provenance.reduce((n, e) => n + e.text.length, 0),
      0,
    );
    expect(kept).toBe(storeBudget.used);
    expect(() => createSharedStoreBudget(-1)).toThrow(RangeError);
  });

  it("a share of a budget bounds its sessions, counts in the parent, and gives back to both", async () => {
    const process = createSharedStoreBudget(20_000);
    const bot = createSharedStoreBudget(5_000, { parent: process, holders: "the sessions of agent `ci_bot`" });
    const start = (storeBudget = bot) =>
      executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } });
    const a = (await start()).session;
    const b = (await start()).session;
    a.recordToolResult("notes", "list_notes", "x".repeat(4_000));
    expect([bot.used, process.used]).toEqual([4_000 + 2 * G, 4_000 + 2 * G]);
    b.recordToolResult("notes", "list_notes", "y".repeat(4_000));
    // the share is full: b kept 1,000 characters, and its sends ask
    expect([bot.used, process.used]).toEqual([5_000, 5_000]);
    expect(b.events.find((e) => e.type === "provenance_incomplete")?.message).toContain(
      "the sessions of agent `ci_bot` keep at most 5000 characters together",
    );
    expect(b.evaluate(SEND).route).toBe("ask");
    // a session outside the share still has the rest of the process's room
    const other = (await start(process)).session;
    other.recordToolResult("notes", "list_notes", "z".repeat(10_000));
    expect(other.events.some((e) => e.type === "provenance_incomplete")).toBe(false);
    expect(other.evaluate(SEND).route).toBe("accept");
    expect(process.used).toBe(15_000 + G);
    // the parent is the tighter one now for the share's sessions
    const fill = (await start(process)).session;
    fill.recordToolResult("notes", "list_notes", "w".repeat(6_000));
    a.terminate("the agent disconnected");
    expect([bot.used, process.used]).toEqual([1_000 - G, 16_000 - G]);
    expect(tightestStoreBudget(bot)).toEqual({ budget: bot, room: 4_000 + G });
    other.terminate("done");
    fill.terminate("done");
    b.terminate("done");
    expect([bot.used, process.used]).toEqual([0, 0]);
  });

  it("the tightest budget of a share chain is the one with the least room", () => {
    const process = createSharedStoreBudget(100);
    const share = createSharedStoreBudget(50, { parent: process });
    process.used = 80;
    expect(tightestStoreBudget(share)).toEqual({ budget: process, room: 20 });
    process.used = 10;
    share.used = 40;
    expect(tightestStoreBudget(share)).toEqual({ budget: share, room: 10 });
    process.used = 120; // (never negative room)
    expect(tightestStoreBudget(share).room).toBe(0);
  });
});
