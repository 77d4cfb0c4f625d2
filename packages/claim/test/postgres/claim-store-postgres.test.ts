import { createTestDatabase } from "../../../store/test/postgres/test-database.js";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox, openClaimPostgres, PostgresClaimStore } from "../../src/index.js";
import { DpopReplayCache, SharedDpopReplay } from "../../src/secrets/dpop.js";
import { POSTGRES_PURGE } from "../../src/store/purge-sql.js";
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

describe("the sweep's purge on PostgreSQL", () => {
  it("can find its rows through indexes: spent challenges, expired or revoked credentials, ended sandboxes' metadata", async () => {
    const db = await createTestDatabase();
    const pg = await openClaimPostgres(db.url, { max: 1 });
    try {
      // an empty table is read whole whatever its indexes: forbid that, and the plan says which index serves
      const plans = await pg.transaction(async (c) => {
        await c.query("SET LOCAL enable_seqscan = off");
        const plan = async (sql: string): Promise<string> =>
          (await c.query<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, [1])).rows.map((r) => r["QUERY PLAN"]).join("\n");
        const out: string[] = [];
        for (const sql of [POSTGRES_PURGE.challenges, POSTGRES_PURGE.credentials, POSTGRES_PURGE.metadata]) {
          out.push(await plan(sql)); // one connection: one statement at a time
        }
        return out;
      });
      expect(plans[0]).toMatch(/claim_spent_challenges_expiry/);
      expect(plans[1]).toMatch(/claim_credentials_expiry/);
      expect(plans[1]).toMatch(/claim_credentials_revoked/);
      expect(plans[2]).toMatch(/claim_sandboxes_ended/);
      for (const p of plans) expect(p).not.toMatch(/Seq Scan/);
    } finally {
      await pg.close();
      await db.drop();
    }
  });
});
