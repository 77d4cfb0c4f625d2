import { describe, expect, it } from "vitest";
import type { NonceStore } from "@acp/core";

/** The shared suite every {@link NonceStore} passes: in-memory (core), SQLite and PostgreSQL (store). */
export function describeNonceStore(name: string, create: () => NonceStore | Promise<NonceStore>): void {
  describe(`nonce store: ${name}`, () => {
    it("spends a nonce once and refuses it the second time", async () => {
      const store = await create();
      expect(await store.spend("n_a", "cr_1", 2_000_000_000_000)).toBe(true);
      expect(await store.spend("n_a", "cr_1", 2_000_000_000_000)).toBe(false);
      expect(await store.spend("n_a", "cr_other", 2_000_000_000_000)).toBe(false);
    });

    it("keeps different nonces apart", async () => {
      const store = await create();
      const results = await Promise.all(["n_1", "n_2", "n_3"].map((n) => Promise.resolve(store.spend(n, "cr_x", 1))));
      expect(results).toEqual([true, true, true]);
    });

    it("lets exactly one of many concurrent spends of one nonce succeed", async () => {
      const store = await create();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => Promise.resolve(store.spend("n_race", "cr_r", 1))),
      );
      expect(results.filter((r) => r)).toHaveLength(1);
    });
  });
}
