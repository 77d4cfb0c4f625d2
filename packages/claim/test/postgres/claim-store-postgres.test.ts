import { createTestDatabase } from "../../../store/test/postgres/test-database.js";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox, openClaimPostgres, PostgresClaimStore } from "../../src/index.js";
import { DpopReplayCache, SharedDpopReplay } from "../../src/secrets/dpop.js";
import { claimStoreContract } from "../claim-store-contract.js";

// Each test gets its own database on the run's real PostgreSQL (the vitest globalSetup starts it).
claimStoreContract("PostgreSQL", async (box) => {
  const db = await createTestDatabase();
  const pg = await openClaimPostgres(db.url, { max: 10 });
  return {
    store: new PostgresClaimStore(pg, box),
    rows: async (table) =>
      Number(
        (await pg.query<{ n: string }>(table.startsWith("SELECT") ? table : `SELECT count(*) AS n FROM ${table}`))
          .rows[0]?.n,
      ),
    close: async () => {
      await pg.close();
      await db.drop();
    },
  };
});

describe("DPoP proofs across nodes on one PostgreSQL (§20.1)", () => {
  it("a proof accepted by node A is refused by node B, each with its own cache and pool", async () => {
    const db = await createTestDatabase();
    const box = createSecretBox(randomBytes(32));
    const pools = [await openClaimPostgres(db.url, { max: 2 }), await openClaimPostgres(db.url, { max: 2 })];
    try {
      const nodes = pools.map((pg) => {
        const store = new PostgresClaimStore(pg, box);
        return new SharedDpopReplay(new DpopReplayCache(), (id, until) =>
          store.spendProof(box.hash("dpop_proof", id), until),
        );
      });
      const now = Date.now();
      expect(await nodes[0]?.once("jkt:proof-1", now)).toBe(true);
      expect(await nodes[1]?.once("jkt:proof-1", now)).toBe(false);
      expect(await nodes[0]?.once("jkt:proof-1", now)).toBe(false);
      // at once on both: one wins
      const raced = await Promise.all(nodes.map((n) => n.once("jkt:proof-2", now)));
      expect(raced.filter(Boolean)).toHaveLength(1);
    } finally {
      for (const pg of pools) await pg.close();
      await db.drop();
    }
  });
});
