import { describe, expect, it } from "vitest";
import { createSharedStoreBudget } from "../../src/index.js";
import { createProvenanceEntry, keptChars } from "../../src/session/provenance.js";
import { executingSession, expectAsked } from "./harness.js";

// What an untrusted entry keeps besides its text — the aliases of its identifiers (look-alikes folded, tags
// off, numbers however grouped) — was not counted in the store: a result of many identifiers, each with an
// alias, held several times its text in memory while the store counted the text alone, so sessions sharing a
// budget could together keep far more than it. The store now counts the aliases too, and keeps none past its
// room: the entry then counts as cut and consequential calls ask.
const INTENT = { goal: "day", allowed_actions: ["notes.*", "email.*"] };
const SEND = { server: "email", tool: "send", arguments: { to: "team@example.com" } };

/** `n` addresses at look-alike domains (Cyrillic `а`): each has an alias form (its Latin spelling) besides its token. */
function lookalikes(n: number): string {
  return Array.from({ length: n }, (_, i) => `user${i}@\u0430ttacker${i}.example`).join(" ");
}

/** `n` account numbers with an amount glued on: each run is kept with its groups (`10000000.5`). */
function gluedNumbers(n: number): string {
  return Array.from({ length: n }, (_, i) => `${String(10_000_000 + i)} 5 x`).join(" ");
}

/** What an entry's tokens hold in memory (counted in the store too: token-store-budget.test.ts). */
function tokenSize(entry: { tokens: ReadonlySet<string> }): number {
  return [...entry.tokens].reduce((n, t) => n + t.length, 0);
}

/** What an entry's aliases hold in memory, counted from the aliases themselves. */
function aliasSize(entry: { aliases: { forms: ReadonlySet<string>; digits: string; runs: string } }): number {
  return (
    [...entry.aliases.forms].reduce((n, f) => n + f.length, 0) + entry.aliases.digits.length + entry.aliases.runs.length
  );
}

describe("the aliases of untrusted content count in the session's store", () => {
  it("counts an entry's aliases with its text", () => {
    const entry = createProvenanceEntry("external_untrusted", "mail.read#1", lookalikes(100));
    expect(entry.aliases.forms.size).toBeGreaterThan(100);
    expect(entry.aliases.chars).toBe(aliasSize(entry));
    expect(keptChars(entry)).toBe(entry.text.length + tokenSize(entry) + entry.aliases.chars);
    const numbers = createProvenanceEntry("external_untrusted", "mail.read#2", gluedNumbers(50));
    expect(numbers.aliases.chars).toBe(aliasSize(numbers));
    expect(numbers.aliases.runs.length).toBeGreaterThan(0);
    // a trusted entry has no aliases: its text and tokens alone
    const trusted = createProvenanceEntry("user_input", "user#1", lookalikes(10));
    expect(keptChars(trusted)).toBe(trusted.text.length + tokenSize(trusted));
  });

  it("charges the shared budget what the entry keeps, aliases included, and gives it all back", async () => {
    const storeBudget = createSharedStoreBudget(1_000_000);
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const before = storeBudget.used;
    const entry = session.recordToolResult("notes", "list_notes", lookalikes(200));
    expect(aliasSize(entry)).toBeGreaterThan(0);
    expect(storeBudget.used - before).toBe(entry.text.length + tokenSize(entry) + aliasSize(entry));
    session.terminate("done");
    expect(storeBudget.used).toBe(0);
  });

  it("keeps sessions sharing a budget within it when their results are all identifiers", async () => {
    const storeBudget = createSharedStoreBudget(60_000);
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () =>
        executingSession({ intent: INTENT, settings: { require_plan: false }, extra: { storeBudget } }),
      ),
    );
    for (let round = 0; round < 5; round++) {
      for (const { session } of sessions) {
        session.recordToolResult("notes", "list_notes", lookalikes(60));
        session.recordToolResult("notes", "list_notes", gluedNumbers(60));
        expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
      }
    }
    const kept = sessions.reduce(
      (sum, { session }) =>
        sum + session.provenance.reduce((n, e) => n + e.text.length + tokenSize(e) + aliasSize(e), 0),
      0,
    );
    expect(kept).toBe(storeBudget.used);
    expect(kept).toBeLessThanOrEqual(storeBudget.max);
  });

  it("keeps no alias past the room: the entry counts as cut and consequential calls ask", async () => {
    const text = lookalikes(100);
    const plain = createProvenanceEntry("external_untrusted", "mail.read#1", text);
    // room for the text and its tokens and not all of its aliases
    const storeBudget = createSharedStoreBudget(
      plain.text.length + tokenSize(plain) + Math.floor(aliasSize(plain) / 2),
    );
    const { session } = await executingSession({
      intent: INTENT,
      settings: { require_plan: false },
      extra: { storeBudget },
    });
    const entry = session.recordToolResult("notes", "list_notes", text);
    expect(entry.text).toBe(plain.text);
    expect(entry.tokens).toEqual(plain.tokens);
    expect(entry.aliases.cut).toBe(true);
    expect(entry.truncated).toBe(true);
    expect(storeBudget.used).toBeLessThanOrEqual(storeBudget.max);
    expectAsked(session.evaluate(SEND), "provenance_incomplete");
  });
});
