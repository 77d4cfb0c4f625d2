import { describe, expect, it } from "vitest";
import { createMemoryNonceStore } from "../src/index.js";

describe("the in-memory nonce store", () => {
  it("holds at most its limit, forgetting the approvals that end first, and refuses what ended before them", () => {
    const store = createMemoryNonceStore({ maxNonces: 10 });
    for (let i = 0; i < 10; i++) expect(store.spend(`n_${i}`, `cr_${i}`, 1000 + i)).toBe(true);
    expect(store.forgottenThrough()).toBeUndefined();
    expect(store.spend("n_new", "cr_new", 2000)).toBe(true);
    expect(store.size).toBe(10);
    expect(store.forgottenThrough()).toBe(1000);
    // forgotten, but not spendable again: it cannot be told from a fresh spend
    expect(store.spend("n_0", "cr_0", 1000)).toBe(false);
    expect(store.spend("n_other", "cr_other", 1000)).toBe(false);
    expect(store.spend("n_1", "cr_1", 1001)).toBe(false); // still held
    for (let i = 0; i < 1000; i++) store.spend(`m_${i}`, `cr_m_${i}`, 3000 + i);
    expect(store.size).toBeLessThanOrEqual(10);
  });

  it("refuses, after a prune by a clock that ran ahead, the approvals it pruned", () => {
    const store = createMemoryNonceStore();
    expect(store.spend("n_a", "cr_a", 5000)).toBe(true);
    expect(store.prune(10_000_000)).toBe(1);
    expect(store.spend("n_a", "cr_a", 5000)).toBe(false);
    expect(store.forgottenThrough()).toBe(5000);
    expect(store.spend("n_b", "cr_b", 5001)).toBe(true);
  });
});
