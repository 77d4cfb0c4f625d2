/**
 * The literals of a policy's globs are searched for in a long argument in one pass for them all
 * (LiteralSearch, an Aho–Corasick automaton): its answer is exactly `includes`, and it reads a text once a
 * decision, however many rules ask.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LiteralSearch, SEARCH_ONCE_LENGTH } from "../../src/evaluate/literal-search.js";
import { spendWork, withWorkBudget } from "../../src/glob/index.js";

/** The units `work` spends (the least budget it fits in). */
function unitsOf(work: () => void): number {
  let low = 0;
  let high = 2 ** 24;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    try {
      withWorkBudget(mid, () => {
        work();
        spendWork(0);
      });
      high = mid;
    } catch {
      low = mid + 1;
    }
  }
  return low;
}

describe("LiteralSearch", () => {
  it("answers as includes does, for short and long texts and overlapping literals", () => {
    const letters = fc.constantFrom("a", "b", "c", " ", "é", "\n");
    const literal = fc
      .array(fc.constantFrom("a", "b", "c", " "), { minLength: 1, maxLength: 6 })
      .map((l) => l.join(""));
    const text = fc
      .tuple(fc.array(letters, { maxLength: 40 }), fc.nat(SEARCH_ONCE_LENGTH * 2), fc.array(letters, { maxLength: 40 }))
      .map(([head, fill, tail]) => head.join("") + "ab".repeat(fill >> 1) + tail.join(""));
    fc.assert(
      fc.property(
        fc.array(literal, { minLength: 1, maxLength: 12 }),
        fc.array(text, { maxLength: 4 }),
        (lits, texts) => {
          const search = new LiteralSearch();
          const ids = lits.map((l) => search.register(l));
          for (const t of texts) {
            lits.forEach((l, k) => expect([l, t, search.has(t, ids[k] as number)]).toEqual([l, t, t.includes(l)]));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("does not search for what is not ASCII or past its size, and registers a literal once", () => {
    const search = new LiteralSearch();
    expect(search.register("")).toBeUndefined();
    expect(search.register("été")).toBeUndefined();
    expect(search.register("abc")).toBe(0);
    expect(search.register("abc")).toBe(0);
    expect(search.register("x".repeat(10_000))).toBeUndefined();
  });

  it("finds a literal registered after a text was searched", () => {
    const search = new LiteralSearch();
    const text = `${"x".repeat(SEARCH_ONCE_LENGTH)}late`;
    expect(search.has(text, search.register("xx") as number)).toBe(true);
    expect(search.has(text, search.register("late") as number)).toBe(true);
  });

  it("reads a long text once in a decision for every literal, and again in the next", () => {
    const search = new LiteralSearch();
    const ids = ["BEGIN", "AKIA", "rm -rf", "ghp_"].map((l) => search.register(l) as number);
    const text = "a".repeat(1_000_000);
    const once = unitsOf(() => search.has(text, ids[0] as number));
    const all = unitsOf(() => {
      for (let round = 0; round < 5; round++) for (const id of ids) search.has(text, id);
    });
    expect(once).toBeGreaterThan(100_000); // a pass over a megabyte is charged
    expect(all).toBe(once); // within one budget the other 19 questions read nothing
    expect(unitsOf(() => search.has(text, ids[1] as number))).toBe(once); // a new budget reads it again
  });
});
