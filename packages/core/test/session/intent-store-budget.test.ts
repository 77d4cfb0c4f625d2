import { describe, expect, it } from "vitest";
import { createSharedStoreBudget } from "../../src/index.js";
import { executingSession, expectAsked } from "./harness.js";

// The intent's own entries (its goal, each trusted value) were kept outside the store's budget: an intent of
// 64 keys of 1,000 values of 1,024 characters kept 64 million characters in every session of a process, and
// a process budget shared by many sessions never saw them. They are now charged as any other entry: past the
// room they are cut, the session's provenance is incomplete and consequential calls ask; an intent update
// gives the old intent's room back; a session that ends gives back all of it.
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };

/** An intent whose trusted values are `n` addresses (each one token besides its text). */
function intentOf(n: number, tag = "a") {
  return {
    goal: "send the agenda",
    allowed_actions: ["email.*"],
    trusted_values: {
      recipients: ["team@example.com", ...Array.from({ length: n }, (_, i) => `person${i}.${tag}@example.com`)],
    },
  };
}

describe("the intent's entries count in the session's store", () => {
  it("charges the intent to a shared budget and keeps the sessions within it", async () => {
    const storeBudget = createSharedStoreBudget(1_000_000);
    const { session } = await executingSession({
      intent: intentOf(100),
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const kept = session.provenance
      .filter((e) => e.source.startsWith("intent@"))
      .reduce((n, e) => n + e.text.length + [...e.tokens].reduce((m, t) => m + t.length, 0), 0);
    expect(kept).toBeGreaterThan(100 * 20);
    expect(storeBudget.used).toBe(kept);
    expect(session.evaluate(SEND).route).toBe("accept");
  });

  it("cuts an intent past the room: provenance is incomplete and consequential calls ask", async () => {
    const storeBudget = createSharedStoreBudget(5_000);
    const { session } = await executingSession({
      intent: intentOf(900),
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
    expect(storeBudget.used).toBeGreaterThan(4_000);
    const incomplete = session.events.find((e) => e.type === "provenance_incomplete");
    expect(incomplete?.message).toContain("intent@v1.trusted_values.recipients");
    expectAsked(session.evaluate(SEND), "provenance_incomplete");
  });

  it("gives the old intent's room back on an update, and all of it when the session ends", async () => {
    const storeBudget = createSharedStoreBudget(1_000_000);
    const { session } = await executingSession({
      intent: intentOf(200),
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const first = storeBudget.used;
    expect(first).toBeGreaterThan(200 * 20);
    for (const tag of ["b", "c", "d"]) await session.confirmIntentUpdate(intentOf(200, tag));
    expect(session.intent?.version).toBe(4);
    // each version as large as the first, one kept at a time
    expect(Math.abs(storeBudget.used - first)).toBeLessThan(1_000);
    expect(session.provenance.some((e) => e.source.startsWith("intent@v1."))).toBe(false);
    session.terminate("done");
    expect(storeBudget.used).toBe(0);
  });
});
