import { describe, expect, it } from "vitest";
import { createSharedStoreBudget } from "../../src/index.js";
import { createProvenanceEntry, keptChars } from "../../src/session/provenance.js";
import { executingSession, expectAsked } from "./harness.js";

// What an entry keeps besides its text — the `kind:value` of each identifier token, a link also as its host,
// a redirect's target once more — was not counted in the store: a result of links held about twice its text
// in memory while the store counted the text (and aliases) alone, so sessions sharing a budget kept far more
// than it. The store now counts the tokens too, and keeps none past its room: the entry then counts as cut
// and consequential calls ask (a token not kept is not traced to).
const INTENT = { goal: "day", allowed_actions: ["notes.*", "web.*", "email.*"] };
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };

/** `n` links, each a redirect to another host: four tokens each (two links, two hosts), more than its text. */
function links(n: number): string {
  return Array.from({ length: n }, (_, i) => `https://r${i}.example/r?to=https://x${i}.example/c`).join(" ");
}

/** What an entry holds in memory, counted from the entry itself. */
function heldChars(entry: {
  text: string;
  tokens: ReadonlySet<string>;
  aliases: { forms: ReadonlySet<string>; digits: string };
}): number {
  const sum = (set: ReadonlySet<string>): number => [...set].reduce((n, s) => n + s.length, 0);
  return entry.text.length + sum(entry.tokens) + sum(entry.aliases.forms) + entry.aliases.digits.length;
}

describe("the tokens of content count in the session's store", () => {
  it("counts an entry's tokens with its text, for trusted and untrusted content", () => {
    for (const label of ["external_untrusted", "user_input"] as const) {
      const entry = createProvenanceEntry(label, "src#1", links(50));
      expect(entry.tokens.size).toBe(200);
      expect(keptChars(entry)).toBe(heldChars(entry));
      expect(keptChars(entry)).toBeGreaterThan(2 * entry.text.length);
    }
  });

  it("keeps sessions sharing a budget within it when their results are all links", async () => {
    const storeBudget = createSharedStoreBudget(60_000);
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () =>
        executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }),
      ),
    );
    for (let round = 0; round < 5; round++) {
      for (const { session } of sessions) {
        session.recordToolResult("web", "get_webpage", links(60));
        expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
      }
    }
    const held = sessions.reduce(
      (sum, { session }) => sum + session.provenance.reduce((n, e) => n + heldChars(e), 0),
      0,
    );
    expect(held).toBe(storeBudget.used);
    expect(held).toBeLessThanOrEqual(storeBudget.max);
  });

  it("keeps no token past the room: the entry counts as cut and consequential calls ask", async () => {
    const text = links(100);
    const plain = createProvenanceEntry("external_untrusted", "web.get#1", text);
    // room for the text and half its tokens
    const storeBudget = createSharedStoreBudget(
      plain.text.length + Math.floor((keptChars(plain) - plain.text.length) / 2),
    );
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const entry = session.recordToolResult("web", "get_webpage", text);
    expect(entry.text).toBe(plain.text);
    expect(entry.tokens.size).toBeLessThan(plain.tokens.size);
    expect(entry.truncated).toBe(true);
    expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
    expectAsked(session.evaluate(SEND), "provenance_incomplete");
  });

  it("gives back what the entries kept, tokens included, when the session ends", async () => {
    const storeBudget = createSharedStoreBudget(1_000_000);
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const before = storeBudget.used; // (the intent's goal)
    const entry = session.recordToolResult("web", "get_webpage", links(30));
    expect(storeBudget.used - before).toBe(heldChars(entry));
    session.terminate("done");
    expect(storeBudget.used).toBe(0);
  });
});
