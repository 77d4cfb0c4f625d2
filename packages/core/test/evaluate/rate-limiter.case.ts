/**
 * The shared test suite every RateLimiter implementation runs (memory here; SQLite and PostgreSQL in the
 * store package): `describeRateLimiter("sqlite", () => createSqliteRateLimiter(db))`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/evaluate/index.js";

/** Makes a fresh limiter with no state (called once per test). */
export type RateLimiterFactory = () => RateLimiter | Promise<RateLimiter>;

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 2, 10, 12, 0, 0);

export function describeRateLimiter(name: string, factory: RateLimiterFactory): void {
  describe(`rate limiter contract: ${name}`, () => {
    it("allows `limit` calls in a window and refuses the next", async () => {
      const limiter = await factory();
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await limiter.consume("k", 3, MINUTE, T0 + i * 1000));
      expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false]);
      expect(outcomes.map((o) => o.remaining)).toEqual([2, 1, 0, 0]);
    });

    it("does not count refused calls", async () => {
      const limiter = await factory();
      await limiter.consume("k", 1, MINUTE, T0);
      for (let i = 1; i <= 5; i++) expect((await limiter.consume("k", 1, MINUTE, T0 + i)).allowed).toBe(false);
      expect((await limiter.consume("k", 1, MINUTE, T0 + 2 * MINUTE)).allowed).toBe(true);
    });

    it("reports when the window frees a slot, within one window of now", async () => {
      const limiter = await factory();
      await limiter.consume("k", 1, MINUTE, T0);
      const refused = await limiter.consume("k", 1, MINUTE, T0 + 10_000);
      expect(refused.allowed).toBe(false);
      expect(refused.resetAtMs).toBeGreaterThan(T0 + 10_000);
      expect(refused.resetAtMs).toBeLessThanOrEqual(T0 + 10_000 + MINUTE);
      expect((await limiter.consume("k", 1, MINUTE, refused.resetAtMs)).allowed).toBe(true);
    });

    it("slides: calls older than the window stop counting", async () => {
      const limiter = await factory();
      expect((await limiter.consume("k", 2, MINUTE, T0)).allowed).toBe(true);
      expect((await limiter.consume("k", 2, MINUTE, T0 + 40_000)).allowed).toBe(true);
      expect((await limiter.consume("k", 2, MINUTE, T0 + 50_000)).allowed).toBe(false);
      expect((await limiter.consume("k", 2, MINUTE, T0 + 2 * MINUTE)).allowed).toBe(true);
    });

    it("keeps keys apart", async () => {
      const limiter = await factory();
      expect((await limiter.consume("a", 1, MINUTE, T0)).allowed).toBe(true);
      expect((await limiter.consume("b", 1, MINUTE, T0)).allowed).toBe(true);
      expect((await limiter.consume("a", 1, MINUTE, T0 + 1)).allowed).toBe(false);
    });

    it("rejects a non-positive limit or window", async () => {
      const limiter = await factory();
      await expect(Promise.resolve().then(() => limiter.consume("k", 0, MINUTE, T0))).rejects.toThrow();
      await expect(Promise.resolve().then(() => limiter.consume("k", 1, 0, T0))).rejects.toThrow();
      await expect(Promise.resolve().then(() => limiter.consume("k", 1.5, MINUTE, T0))).rejects.toThrow();
    });

    it("never allows more than `limit` calls in any window", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 5 }),
          fc.array(fc.integer({ min: 0, max: 3 * MINUTE }), { minLength: 1, maxLength: 40 }),
          async (limit, offsets) => {
            const limiter = await factory();
            const times = [...offsets].sort((a, b) => a - b).map((o) => T0 + o);
            const allowed: number[] = [];
            for (const t of times) if ((await limiter.consume("p", limit, MINUTE, t)).allowed) allowed.push(t);
            for (const t of allowed) {
              const inWindow = allowed.filter((s) => s > t - MINUTE && s <= t).length;
              expect(inWindow).toBeLessThanOrEqual(limit);
            }
            expect(allowed.length).toBeGreaterThan(0);
          },
        ),
        { numRuns: 100 },
      );
    });
  });
}
