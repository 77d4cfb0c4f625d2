import { describe, expect, it } from "vitest";
import { createMemoryRateLimiter } from "../../src/evaluate/index.js";
import { describeRateLimiter } from "./rate-limiter.case.js";

describeRateLimiter("memory (exact)", () => createMemoryRateLimiter());
describeRateLimiter("memory (bucketed)", () => createMemoryRateLimiter({ exactUpTo: 0 }));

describe("memory rate limiter bounds", () => {
  const T0 = 1_000_000;

  it("refuses a new key when the key table is full of live windows, instead of evicting one", () => {
    const limiter = createMemoryRateLimiter({ maxKeys: 2 });
    expect(limiter.consume("a", 5, 1000, T0)).toMatchObject({ allowed: true });
    expect(limiter.consume("b", 5, 1000, T0)).toMatchObject({ allowed: true });
    expect(limiter.consume("c", 5, 1000, T0)).toMatchObject({ allowed: false, remaining: 0 });
    expect(limiter.consume("a", 5, 1000, T0 + 1)).toMatchObject({ allowed: true, remaining: 3 });
  });

  it("drops expired keys to make room", () => {
    const limiter = createMemoryRateLimiter({ maxKeys: 1 });
    expect(limiter.consume("a", 1, 1000, T0).allowed).toBe(true);
    expect(limiter.consume("b", 1, 1000, T0 + 1000).allowed).toBe(true);
  });

  it("counts a large limit in buckets without exceeding it", () => {
    const limiter = createMemoryRateLimiter({ exactUpTo: 10 });
    let allowed = 0;
    for (let i = 0; i < 500; i++) if (limiter.consume("big", 100, 60_000, T0 + i * 10).allowed) allowed++;
    expect(allowed).toBe(100);
  });

  it.each([
    ["exact", 5],
    ["bucketed", 2000],
  ])("lets no call past a spent %s limit when the clock steps back", (_, limit) => {
    // a clock set back (NTP, a node with skew) met buckets newer than `now`, which the bucketed count skipped:
    // a spent limit of 2,000 a minute let 2,000 more through two seconds "earlier"
    const limiter = createMemoryRateLimiter();
    const T = 1_700_000_000_000;
    for (let i = 0; i < limit; i++) expect(limiter.consume("k", limit, 60_000, T).allowed).toBe(true);
    for (const back of [1, 2_000, 59_000]) expect(limiter.consume("k", limit, 60_000, T - back).allowed).toBe(false);
    expect(limiter.consume("k", limit, 60_000, T + 30_000).allowed).toBe(false);
    expect(limiter.consume("k", limit, 60_000, T + 61_000).allowed).toBe(true);
  });
});
